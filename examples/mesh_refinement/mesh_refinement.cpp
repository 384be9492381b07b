// PREMA's flagship application at this machine's scale: parallel constrained Delaunay mesh
// refinement of an over-decomposed 2-D domain whose subdomains refine coupled to each other,
// with static placement against each policy.
//
//   mpirun --oversubscribe -np 4 ./mesh_refinement --all [--vtk mesh.vtk] [--json FILE]
//   mpirun --oversubscribe -np 4 ./mesh_refinement --all --adapt-steps 20 --change 0.1
//   (--help lists every option; --prema-* runtime options apply to every run)
//
// The domain (domain.hpp) is the unit square with rectangular holes, cut into a grid of
// subdomains (default 16 per worker), each a mobile object (subdomain.hpp) refined by CGAL's
// Delaunay mesher (refinement.hpp). Shared sides start with their end points only; a
// subdomain that splits one sends the point to the neighbour, which inserts it and refines
// again (a cascade). The sizing field shrinks elements sharply near a curve in the bottom of
// the square, and a band of subdomains (the front, adaptivity.hpp) asks for finer elements
// than its neighbours, so refinement costs differ by 1000x between subdomains and the
// neighbours of the front must grade down to its sides. Refinement goes step by step (--steps
// Steiner points) with a yield point between steps.
//
// One run per policy, each on a fresh prema::runtime in this process (`none` first, the static
// baseline):
//   phase 1 (balancing off): every rank creates its block of subdomains (rows from the bottom:
//     the block placement of a geometric decomposition) and the names are all-gathered;
//   phase 2 (measured): balancing on (not for none), barrier, every rank sends its subdomains
//     their refine message (--rotate: then moves them round the ranks while splits fly);
//     makespan = barrier to global quiescence, max over ranks. There is no other
//     synchronisation: the run ends when no split is in flight.
//     --adapt-steps S: then S more steps, each its own barrier-to-quiescence phase, in which a
//     front of fine subdomains (adaptivity.hpp) moves on and every subdomain relaxes a field
//     over its mesh (--solve-sweeps), so that load moves a little every step.
//   phase 3: rank 0 fetches every subdomain's summary (and mesh, for --vtk) and destroys it.
//
// Checks (checks.hpp; a failure makes the exit status 1): conforming sides, bit for bit; the
// angle bound; no inverted triangle; the domain's area; every split delivered. Which vertices
// the sides get depends on the order splits arrive, so the meshes may differ between runs:
// their sizes are printed, not compared.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include <mpi.h>

#include <prema/prema.hpp>

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "../common/placement.hpp"
#include "../common/policies.hpp"
#include "../common/progress.hpp"
#include "../common/stopwatch.hpp"
#include "adaptivity.hpp"
#include "checks.hpp"
#include "domain.hpp"
#include "subdomain.hpp"
#include "vtk_writer.hpp"

namespace {

using namespace mesh_refinement;
using clk = std::chrono::steady_clock;

struct options {
    example::policy_choice policies;
    int subdomains = 0; // 0: per_worker x workers x ranks
    int per_worker = 16;
    double hmin = 1e-4, hmax = 0.05, grade = 0.1, min_angle = 20.7;
    std::string estimate = "sizing";
    int steps = 32;
    int rotate = 0;
    int adapt_steps = 0;
    double change = 0.1, fine = 0.004;
    int solve_sweeps = 200;
    std::string lb_loads;
    int repeat = 1;
    std::string vtk, json;
    std::vector<std::string> args; // main()'s, --prema-* included

    void add_to(example::cli& cli, int argc, char** argv) {
        args.assign(argv, argv + argc);
        policies.add_to(cli, argc, argv);
        cli.add("--subdomains", "N", "subdomains in all (default: --per-worker x workers x ranks)",
                subdomains, 1, 1 << 20);
        cli.add("--per-worker", "N", "subdomains per worker when --subdomains is not given",
                per_worker, 1, 1 << 16);
        cli.add("--hmin", "H", "element size on the curve", hmin, 1e-7, 1.0);
        cli.add("--hmax", "H", "element size far from it", hmax, 1e-7, 1.0);
        cli.add("--grade", "G", "growth of the size with the distance to the curve", grade, 1e-3,
                100.0);
        cli.add("--min-angle", "DEG", "angle bound of the refinement (at most 20.7: guaranteed)",
                min_angle, 1.0, 20.7);
        cli.add("--estimate",
                "what a subdomain's load() tells the balancer: triangles expected from the sizing "
                "field, or 1 for every subdomain",
                estimate, {"sizing", "unit"});
        cli.add("--steps", "K", "Steiner points inserted between yield points", steps, 1, 1 << 20);
        cli.add("--rotate", "R",
                "after sending the refine messages, move every subdomain to the next rank R times "
                "while splits are in flight (tests migration)",
                rotate, 0, 100);
        cli.add("--adapt-steps", "S",
                "multi-step adaptivity: after the first refinement, S steps in which a front of "
                "fine subdomains moves on",
                adapt_steps, 0, 1000);
        cli.add("--change", "F",
                "fraction of the subdomains refined per adaptive step (as many are coarsened)",
                change, 0.0, 1.0);
        cli.add("--fine", "H", "element size inside the moving front", fine, 1e-7, 1.0);
        cli.add("--solve-sweeps", "K",
                "relaxation sweeps over each subdomain's mesh per adaptive step", solve_sweeps, 0,
                1 << 16);
        cli.add("--lb-loads", "LIST",
                "run each policy once per load mode of the list (declared,measured,hybrid), "
                "passing --prema-lb-load MODE to its runtime",
                lb_loads);
        cli.add("--repeat", "N",
                "run the whole sequence N times; each policy shows its fastest run (the least "
                "disturbed by other work on the machine)",
                repeat, 1, 100);
        cli.add("--vtk", "FILE",
                "write the final mesh (legacy VTK; cell fields: subdomain and, per run, the rank "
                "that owns it at the end; split messages per side in a side file FILE.sides); "
                "plot_mesh.py draws it",
                vtk);
        cli.add("--json", "FILE", "also write the figures as JSON", json);
        cli.check([this] {
            if (hmin > hmax)
                throw prema::usage_error("--hmin " + std::to_string(hmin) +
                                         " is larger than --hmax " + std::to_string(hmax));
        });
    }
};

const char* description =
    "Parallel constrained Delaunay refinement (CGAL) of a square with holes, over-decomposed\n"
    "into mobile subdomains placed in row blocks that refine coupled through split messages\n"
    "on their shared sides; each policy run is shown beside the same refinement under static\n"
    "placement (policy none). Progress goes to stderr every 2 s.";

// ---------------------------------------------------------------------------------------------
// One run

struct run_result {
    std::string policy;
    double makespan = 0;      // the first refinement
    std::vector<double> step; // each adaptive step
    double cpu = 0;           // CPU time of all ranks' processes during the measured phases
    std::vector<double> busy; // per worker, rank-major
    std::uint64_t migrations = 0;
    std::vector<summary> subdomains;
    std::vector<triangle_mesh> meshes; // with --vtk, last run only
    bool ok = true;

    double total() const { return std::accumulate(step.begin(), step.end(), makespan); }
    double busy_min() const { return *std::min_element(busy.begin(), busy.end()); }
    double busy_max() const { return *std::max_element(busy.begin(), busy.end()); }
    double busy_avg() const {
        return std::accumulate(busy.begin(), busy.end(), 0.0) / double(busy.size());
    }
};

// Sets what the handlers read for step `step` (0: the first refinement).
void set_step(const options& o, const domain& d, int step) {
    int n = d.subdomains();
    moving_front front(n, o.change, o.fine, o.hmax);
    g_context.front = front;
    g_context.cap.assign(std::size_t(n), o.hmax);
    g_context.estimate.assign(std::size_t(n), 1.0);
    for (int i = 0; i < n; ++i) {
        g_context.cap[std::size_t(i)] = front.cap(i, step);
        if (o.estimate == "sizing")
            // Whole numbers: the balancers add and subtract loads, and sums of integers stay
            // exact (fractions left heat_diffusion a rank load of -1e-10 to reject).
            g_context.estimate[std::size_t(i)] =
                std::max(1.0, std::round(d.expected_triangles(i, g_context.cap[std::size_t(i)]) *
                                         (step > 0 ? 1 + o.solve_sweeps / 10.0 : 1)));
    }
    g_context.solve_sweeps = step > 0 ? o.solve_sweeps : 0;
    g_context.step = step;
}

// A run of the table: a policy, under a runtime configuration, named by `label`.
struct run_spec {
    std::string label, policy;
    prema::config cfg;
};

// `cfg` as main() got it, with `--prema-lb-load mode` added to the command line.
prema::config with_lb_load(const options& o, const std::string& mode) {
    std::vector<std::string> args = o.args;
    args.insert(args.end(), {"--prema-lb-load", mode});
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = int(args.size());
    try {
        return prema::config::from_args(argc, argv.data());
    } catch (const prema::usage_error& e) {
        throw prema::usage_error(std::string("--lb-loads needs a runtime with --prema-lb-load: ") +
                                 e.what());
    }
}

// Static placement first, then each policy (once per --lb-loads mode).
std::vector<run_spec> table_runs(const options& o, const prema::config& cfg) {
    std::vector<run_spec> runs{{"none", "none", cfg}};
    std::vector<std::string> modes;
    for (std::size_t at = 0; at < o.lb_loads.size();) {
        std::size_t comma = std::min(o.lb_loads.find(',', at), o.lb_loads.size());
        modes.push_back(o.lb_loads.substr(at, comma - at));
        at = comma + 1;
    }
    for (auto& name : o.policies.resolve(cfg.lb, "work_stealing")) {
        if (name == "none")
            continue;
        if (modes.empty())
            runs.push_back({name, name, cfg});
        for (auto& mode : modes)
            runs.push_back({name + "/" + mode, name, with_lb_load(o, mode)});
    }
    return runs;
}

run_result run_once(const options& o, const run_spec& spec, const domain& d, bool keep_meshes) {
    const std::string& policy = spec.label;
    prema::config cfg = spec.cfg;
    int me = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int n = d.subdomains();
    cfg.lb = spec.policy;
    run_result res;
    res.policy = policy;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    set_step(o, d, 0);

    // Phase 1: block placement, rows from the bottom; names all-gathered.
    auto first = [&](int r) { return example::first_item(r, p, n); };
    auto& all = g_context.names;
    all.assign(std::size_t(n), {});
    res.ok &= rt.run([&]() -> prema::task<> {
        for (int i = first(me); i < first(me + 1); ++i) {
            subdomain s;
            s.index = i;
            s.cap = g_context.cap[std::size_t(i)];
            all[std::size_t(i)] = prema::make_mobile<subdomain>(std::move(s));
        }
        co_return;
    }) == 0;
    std::vector<int> bytes(static_cast<std::size_t>(p)), offsets(static_cast<std::size_t>(p));
    constexpr int ptr_bytes = sizeof(prema::mobile_ptr<subdomain>);
    for (int r = 0; r < p; ++r) {
        bytes[std::size_t(r)] = (first(r + 1) - first(r)) * ptr_bytes;
        offsets[std::size_t(r)] = first(r) * ptr_bytes;
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), bytes.data(), offsets.data(),
                   MPI_BYTE, MPI_COMM_WORLD);

    // Phase 2: the measured refinement, then the adaptive steps.
    g_busy.clear();
    auto before = prema::lb::current_stats();
    double cpu0 = example::stopwatch::process_cpu_s();
    for (int step = 0; step <= o.adapt_steps; ++step) {
        set_step(o, d, step);
        if (me == 0 && step == 0)
            std::fprintf(stderr, "[%s] refining %d subdomains\n", policy.c_str(), n);
        MPI_Barrier(MPI_COMM_WORLD);
        auto t0 = clk::now();
        {
            example::ticker tick(me == 0, "  [" + policy + "]", [] {
                return std::to_string(g_busy.done()) + " refinements on rank 0";
            });
            res.ok &= rt.run([&]() -> prema::task<> {
                for (int i = first(me); i < first(me + 1); ++i)
                    co_await prema::send(all[std::size_t(i)], prema::fn<&refine>);
                // Forced migrations while the refinements run and splits fly: each move waits
                // for the handlers sent before it, and the splits sent meanwhile follow.
                for (int round = 1; round <= o.rotate; ++round)
                    for (int i = first(me); i < first(me + 1); ++i)
                        co_await prema::migrate(all[std::size_t(i)], (me + round) % p);
            }) == 0;
        }
        double span = std::chrono::duration<double>(clk::now() - t0).count(), longest = 0;
        MPI_Allreduce(&span, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (step == 0)
            res.makespan = longest;
        else
            res.step.push_back(longest);
    }
    double cpu = example::stopwatch::process_cpu_s() - cpu0;
    MPI_Reduce(&cpu, &res.cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    prema::lb::enable_balancing(false);
    auto after = prema::lb::current_stats();
    std::uint64_t migrations = after.migrations_out - before.migrations_out;
    MPI_Reduce(&migrations, &res.migrations, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    std::vector<double> mine(static_cast<std::size_t>(cfg.workers), 0.0);
    {
        std::lock_guard lock(g_busy.mutex);
        std::size_t w = 0;
        for (auto& [thread, s] : g_busy.seconds)
            mine[std::min(w++, mine.size() - 1)] += s; // a worker is one thread
    }
    res.busy.assign(std::size_t(cfg.workers * p), 0.0);
    MPI_Gather(mine.data(), cfg.workers, MPI_DOUBLE, res.busy.data(), cfg.workers, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);

    // Phase 3: rank 0 collects and cleans up.
    if (me == 0)
        std::fprintf(stderr, "[%s] done in %.3f s; collecting %d subdomains%s\n", policy.c_str(),
                     res.total(), n, keep_meshes ? " and their meshes" : "");
    res.ok &= rt.run([&]() -> prema::task<> {
        if (me != 0)
            co_return;
        std::vector<decltype(prema::call(all[0], prema::fn<&summarize>))> summaries;
        std::vector<decltype(prema::call(all[0], prema::fn<&mesh_of>))> meshes;
        std::vector<prema::task<>> destroys;
        for (auto sd : all) {
            summaries.push_back(prema::call(sd, prema::fn<&summarize>));
            if (keep_meshes)
                meshes.push_back(prema::call(sd, prema::fn<&mesh_of>));
            destroys.push_back(prema::destroy(sd));
        }
        res.subdomains = co_await prema::when_all(std::move(summaries));
        res.meshes = co_await prema::when_all(std::move(meshes));
        co_await prema::when_all(std::move(destroys));
    }) == 0;
    int ok = res.ok, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    res.ok = all_ok != 0;
    return res;
}

// ---------------------------------------------------------------------------------------------
// Output (rank 0)

// Prints the table and returns whether every check passed.
bool report(const options& o, const prema::config& cfg, const domain& d,
            const std::vector<run_result>& runs) {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const run_result& base = runs.front();
    bool multi = o.adapt_steps > 0;
    std::printf("\nPREMA mesh refinement: %d ranks x %d worker(s), %s progress, quantum %llu us\n",
                p, cfg.workers, prema::to_string(cfg.progress).c_str(),
                (unsigned long long)cfg.quantum_us);
    std::printf("%d subdomains (%d x %d, block placement by rows), hmin %g, hmax %g, grade %g, "
                "angle bound %.4g deg, load estimate %s, %d Steiner points per step\n",
                d.subdomains(), d.columns(), d.rows(), o.hmin, o.hmax, o.grade, o.min_angle,
                o.estimate.c_str(), o.steps);
    if (multi) {
        moving_front front(d.subdomains(), o.change, o.fine, o.hmax);
        std::printf("multi-step: %d adaptive steps, front of %d subdomains (element size %g) "
                    "moving %d per step: %.1f%% of the subdomains refined and as many "
                    "coarsened per step; %d relaxation sweeps per step\n",
                    o.adapt_steps, front.width, o.fine, front.shift,
                    100.0 * front.shift / d.subdomains(), o.solve_sweeps);
    }
    std::printf("\n%-15s %9s %8s %7s %6s | %-23s | %5s %14s %8s %5s %10s %7s\n", "policy",
                multi ? "total" : "makespan", "vs none", "speedup", "cores",
                "busy/worker min avg max", "migr", "rebuilt (s)", "splits", "depth", "triangles",
                "check");
    bool ok = true;
    for (const auto& r : runs) {
        totals t = sum_up(r.subdomains, d);
        bool good = r.ok && t.ok(d);
        ok &= good;
        std::printf("%-15s %8.3fs %+7.1f%% %6.2fx %6.2f | %6.3f %6.3f %6.3f s    | %5llu "
                    "%5d (%5.2fs) %8llu %5d %10llu %7s\n",
                    r.policy.c_str(), r.total(), 100 * (r.total() / base.total() - 1),
                    base.total() / r.total(), r.cpu / r.total(), r.busy_min(), r.busy_avg(),
                    r.busy_max(), (unsigned long long)r.migrations, t.rebuilds, t.rebuild_s,
                    (unsigned long long)t.splits_sent, t.max_depth, (unsigned long long)t.triangles,
                    good ? "ok" : "FAILED");
    }
    if (multi) {
        std::printf("\n%-15s %9s %9s %9s %9s\n", "policy", "first", "step avg", "step max",
                    "steps");
        for (const auto& r : runs)
            std::printf("%-15s %8.3fs %8.3fs %8.3fs %8.3fs\n", r.policy.c_str(), r.makespan,
                        (r.total() - r.makespan) / double(r.step.size()),
                        *std::max_element(r.step.begin(), r.step.end()), r.total() - r.makespan);
    }
    totals t = sum_up(base.subdomains, d);
    std::printf("\nmesh (none): %llu triangles, %llu points (%llu Steiner)\n",
                (unsigned long long)t.triangles, (unsigned long long)t.points,
                (unsigned long long)t.steiner);
    std::printf("coupling (none): %d of %d shared sides conforming, %llu vertices on them; "
                "%llu split messages (%llu received, %llu inserted: the others crossed a split "
                "of the same point), cascade depth %d; %d subdomains unrefined\n",
                t.shared_sides - t.nonconforming, t.shared_sides,
                (unsigned long long)t.side_vertices, (unsigned long long)t.splits_sent,
                (unsigned long long)t.splits_received, (unsigned long long)t.splits_inserted,
                t.max_depth, t.unrefined);
    std::printf("quality (none): smallest angle %.3f deg, %llu below the bound %.4g, %llu "
                "inverted; area %.12f (domain %.12f)\n",
                t.min_angle, (unsigned long long)t.below, o.min_angle,
                (unsigned long long)t.inverted, t.area, d.area());
    if (runs.size() > 1) {
        auto best = std::min_element(runs.begin() + 1, runs.end(),
                                     [](auto& a, auto& b) { return a.total() < b.total(); });
        double cut = 1 - best->total() / base.total();
        std::printf("best: %s, %.1f%% %s than none\n", best->policy.c_str(), 100 * std::abs(cut),
                    cut >= 0 ? "faster" : "slower");
    }
    std::printf("cores: CPU time of all ranks during the measured phases / their time (below the "
                "ranks' count\nwhen other work shares the cores)\n");
    // A line that every rank count must print alike (the ctest compares it): whether the
    // checks passed, and whether the coupling did its work (the counts themselves depend on
    // the order in which splits arrive).
    std::printf("checks: %s; split messages: %s, cascades: %s\n",
                ok ? "conforming, angle bound, orientation, area, splits delivered: ok" : "FAILED",
                t.splits_sent > 0 ? "yes" : "no", t.max_depth >= 2 ? "yes" : "no");
    return ok;
}

bool write_json(const std::string& path, const options& o, const prema::config& cfg,
                const domain& d, const std::vector<run_result>& runs, bool ok) {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    example::json out;
    out.set("ranks", p).set("workers", cfg.workers).set("subdomains", d.subdomains());
    out.set("hmin", o.hmin).set("hmax", o.hmax).set("grade", o.grade);
    out.set("min_angle_deg", o.min_angle).set("estimate", o.estimate).set("steps", o.steps);
    out.set("adapt_steps", o.adapt_steps).set("change", o.change).set("fine", o.fine);
    out.set("solve_sweeps", o.solve_sweeps).set("ok", ok);
    std::vector<example::json> list;
    for (const auto& r : runs) {
        totals t = sum_up(r.subdomains, d);
        example::json j;
        j.set("policy", r.policy).set("makespan_s", r.makespan).set("total_s", r.total());
        j.set("step_s", r.step);
        j.set("improvement", 1 - r.total() / runs.front().total()).set("cpu_s", r.cpu);
        j.set("migrations", (long long)r.migrations).set("busy_min_s", r.busy_min());
        j.set("busy_avg_s", r.busy_avg()).set("busy_max_s", r.busy_max());
        j.set("per_worker_busy_s", r.busy);
        j.set("triangles", (long long)t.triangles).set("points", (long long)t.points);
        j.set("side_vertices", (long long)t.side_vertices);
        j.set("splits_sent", (long long)t.splits_sent);
        j.set("splits_inserted", (long long)t.splits_inserted).set("cascade_depth", t.max_depth);
        j.set("smallest_angle_deg", t.min_angle).set("area", t.area).set("ok", t.ok(d));
        list.push_back(j);
    }
    out.set("runs", list);
    return out.write(path);
}

int program(const options& o, const prema::config& cfg) {
    int me = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int n = o.subdomains > 0 ? o.subdomains : o.per_worker * cfg.workers * p;
    domain d(n, o.hmin, o.hmax, o.grade);
    g_context.d = &d;
    g_context.min_angle = o.min_angle;
    g_context.steps = o.steps;

    std::vector<run_spec> specs = table_runs(o, cfg);
    // With --repeat, the sequence runs again and each policy keeps its fastest run (the one the
    // rest of the machine disturbed least); every run is checked.
    std::vector<run_result> runs(specs.size());
    bool all_ok = true;
    for (int rep = 0; rep < o.repeat; ++rep)
        for (std::size_t i = 0; i < specs.size(); ++i) {
            bool last = rep + 1 == o.repeat && i + 1 == specs.size();
            run_result r = run_once(o, specs[i], d, !o.vtk.empty() && last);
            all_ok &= r.ok && (me != 0 || sum_up(r.subdomains, d).ok(d));
            auto meshes = std::move(r.meshes);
            if (rep == 0 || r.total() < runs[i].total())
                runs[i] = std::move(r);
            if (!meshes.empty())
                runs[i].meshes = std::move(meshes);
        }
    if (me != 0)
        return all_ok ? 0 : 1;

    bool ok = report(o, cfg, d, runs) && all_ok;
    if (!o.vtk.empty()) {
        const run_result& last = runs.back();
        subdomain_field owner{"rank_" + last.policy, {}};
        std::vector<std::array<std::uint64_t, 4>> splits;
        for (const auto& s : last.subdomains) {
            owner.value.push_back(s.owner);
            splits.push_back(s.splits_sent);
        }
        write_vtk(o.vtk, last.meshes, {owner});
        write_side_splits(o.vtk + ".sides", d, splits);
        std::printf("wrote %s and %s.sides\n", o.vtk.c_str(), o.vtk.c_str());
    }
    if (!o.json.empty()) {
        if (write_json(o.json, o, cfg, d, runs, ok))
            std::printf("wrote %s\n", o.json.c_str());
        else
            ok = false;
    }
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    example::cli cli("mesh_refinement", description);
    o.add_to(cli, argc, argv);
    return example::main(argc, argv, cli,
                         [&](const prema::config& cfg) { return program(o, cfg); });
}
