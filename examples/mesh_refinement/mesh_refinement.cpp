// PREMA's flagship application at this machine's scale: parallel constrained Delaunay mesh
// refinement of an over-decomposed 2-D domain, with static placement against each policy.
//
//   mpirun --oversubscribe -np 4 ./mesh_refinement --all [--vtk mesh.vtk] [--json FILE]
//   (--help lists every option; --prema-* runtime options apply to every run)
//
// The domain (domain.hpp) is the unit square with rectangular holes, cut into a grid of
// subdomains (default 16 per worker), each a mobile object. A subdomain is refined on its own
// by CGAL's Delaunay mesher (refinement.hpp) with its boundary as constraints, so subdomains
// never talk to each other (as in the PREMA CDT3D study); the sizing field shrinks elements
// sharply near a curve in the bottom of the square, so refinement costs differ by 1000x
// between subdomains. Refinement goes step by step (--steps Steiner points) with a yield point
// between steps, so that the runtime serves messages and balancing traffic during long ones.
//
// One run per policy, each on a fresh prema::runtime in this process (`none` first, the static
// baseline):
//   phase 1 (balancing off): every rank creates its block of subdomains (rows from the bottom:
//     the block placement of a geometric decomposition) and the names are all-gathered;
//   phase 2 (measured): balancing on (not for none), barrier, every rank sends its subdomains
//     their refine message; makespan = barrier to global quiescence, max over ranks;
//   phase 3: rank 0 fetches every subdomain's summary (and mesh, for --vtk) and destroys it.
//
// Load: a subdomain's load() is what the balancer weighs its pending refinement by:
// --estimate sizing (default) is the triangle count expected from the sizing field (what an
// application knows before meshing; it misses what refinement adds near boundaries and the
// thin layers around the curve); --estimate unit makes every subdomain weigh 1, the balancer
// then knows nothing and must still win.
//
// Checks (a failure makes the exit status 1): no triangle has an angle below --min-angle (the
// angles are recomputed from the points), none is inverted, the triangles' area is the
// domain's, and every run produced the same meshes (digest of coordinates and connectivity per
// subdomain). The printed digest lets runs on different rank counts be compared (run.sh and
// the ctest do).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include <prema/prema.hpp>

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "../common/placement.hpp"
#include "../common/policies.hpp"
#include "../common/progress.hpp"
#include "../common/stopwatch.hpp"
#include "domain.hpp"
#include "mesh_quality.hpp"
#include "refinement.hpp"
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
    int repeat = 1;
    std::string vtk, json;

    void add_to(example::cli& cli, int argc, char** argv) {
        policies.add_to(cli, argc, argv);
        cli.add("--subdomains", "N",
                "subdomains in all (default: --per-worker x workers x ranks); the meshes depend on "
                "N and the sizes only, not on ranks or policy",
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
        cli.add("--repeat", "N",
                "run the whole sequence N times; each policy shows its fastest run (the least "
                "disturbed by other work on the machine)",
                repeat, 1, 100);
        cli.add("--vtk", "FILE",
                "write the final mesh (legacy VTK; cell fields: subdomain and, per run, the rank "
                "that refined it); plot_mesh.py draws it",
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
    "into mobile subdomains placed in row blocks; each policy run is shown beside the same\n"
    "refinement under static placement (policy none). Progress goes to stderr every 2 s.";

// ---------------------------------------------------------------------------------------------
// What the handlers use. Set before a runtime starts and read-only while it runs.

const domain* g_domain = nullptr;
double g_min_angle = 20.7;
int g_steps = 32;

// Refinement time per worker thread of this rank during phase 2, and subdomains done here.
struct busy_clock {
    std::mutex mutex;
    std::map<std::thread::id, double> seconds;
    int refined = 0;

    void add(clk::time_point since, bool finished) {
        double s = std::chrono::duration<double>(clk::now() - since).count();
        std::lock_guard lock(mutex);
        seconds[std::this_thread::get_id()] += s;
        refined += finished;
    }
    int done() {
        std::lock_guard lock(mutex);
        return refined;
    }
} g_busy;

// A subdomain: its index names its cell in the domain; the mesh appears when it is refined.
struct subdomain {
    int index = -1;
    double estimate = 1; // what load() reports
    triangle_mesh mesh;
    int refined_by = -1;
    std::uint64_t steiner = 0;

    double load() const { return estimate; }
    template <class Ar> void serialize(Ar& ar) { ar(index, estimate, mesh, refined_by, steiner); }
};

// The refinement: exclusive access; passes a yield point every g_steps Steiner points.
prema::task<> refine(subdomain& s) {
    auto since = clk::now();
    refinement r(*g_domain, s.index, g_min_angle);
    while (!r.step(g_steps)) {
        auto y = prema::yield_point();
        if (!y.ready) { // the quantum expired: the worker serves queued messages first
            g_busy.add(since, false);
            co_await y;
            since = clk::now();
        }
    }
    s.mesh = r.mesh();
    s.steiner = r.points_inserted();
    s.refined_by = prema::rank();
    g_busy.add(since, true);
}

// What rank 0 collects about each subdomain (trivially copyable: travels as bytes).
struct summary {
    int refined_by = -1;
    std::uint64_t steiner = 0;
    mesh_quality quality;
};

summary summarize(const subdomain& s) {
    return {s.refined_by, s.steiner, assess(s.mesh, g_min_angle)};
}

triangle_mesh mesh_of(const subdomain& s) {
    return s.mesh;
}

// ---------------------------------------------------------------------------------------------
// One run

struct run_result {
    std::string policy;
    double makespan = 0;
    double cpu = 0;           // CPU time of all ranks' processes during phase 2
    std::vector<double> busy; // per worker, rank-major
    std::uint64_t migrations = 0;
    std::vector<summary> subdomains;
    std::vector<triangle_mesh> meshes; // with --vtk, last run only
    bool ok = true;

    double busy_min() const { return *std::min_element(busy.begin(), busy.end()); }
    double busy_max() const { return *std::max_element(busy.begin(), busy.end()); }
    double busy_avg() const {
        return std::accumulate(busy.begin(), busy.end(), 0.0) / double(busy.size());
    }
};

run_result run_once(const options& o, prema::config cfg, const std::string& policy,
                    bool keep_meshes) {
    int me = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int n = g_domain->subdomains();
    cfg.lb = policy;
    run_result res;
    res.policy = policy;
    prema::runtime rt(MPI_COMM_WORLD, cfg);

    // Phase 1: block placement, rows from the bottom; names all-gathered.
    auto first = [&](int r) { return example::first_item(r, p, n); };
    std::vector<prema::mobile_ptr<subdomain>> all(static_cast<std::size_t>(n));
    res.ok &= rt.run([&]() -> prema::task<> {
        for (int i = first(me); i < first(me + 1); ++i) {
            double estimate = o.estimate == "unit" ? 1 : g_domain->expected_triangles(i);
            all[std::size_t(i)] = prema::make_mobile<subdomain>(subdomain{i, estimate, {}, -1, 0});
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

    // Phase 2: the measured refinement.
    {
        std::lock_guard lock(g_busy.mutex);
        g_busy.seconds.clear();
        g_busy.refined = 0;
    }
    auto before = prema::lb::current_stats();
    if (me == 0)
        std::fprintf(stderr, "[%s] refining %d subdomains\n", policy.c_str(), n);
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clk::now();
    double cpu0 = example::stopwatch::process_cpu_s(), span = 0;
    {
        example::ticker tick(me == 0, "  [" + policy + "]", [] {
            return std::to_string(g_busy.done()) + " subdomains refined on rank 0";
        });
        res.ok &= rt.run([&]() -> prema::task<> {
            for (int i = first(me); i < first(me + 1); ++i)
                co_await prema::send(all[std::size_t(i)], prema::fn<&refine>);
        }) == 0;
        span = std::chrono::duration<double>(clk::now() - t0).count();
    }
    double cpu = example::stopwatch::process_cpu_s() - cpu0;
    MPI_Reduce(&cpu, &res.cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    prema::lb::enable_balancing(false);
    auto after = prema::lb::current_stats();
    MPI_Allreduce(&span, &res.makespan, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
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
        std::fprintf(stderr, "[%s] done in %.3f s on %.2f cores; collecting %d subdomains%s\n",
                     policy.c_str(), res.makespan, res.cpu / res.makespan, n,
                     keep_meshes ? " and their meshes" : "");
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
// Checks and output (rank 0)

struct totals {
    std::uint64_t triangles = 0, points = 0, below = 0, inverted = 0, steiner = 0;
    double min_angle = 180, area = 0;
    std::uint64_t digest = 0xcbf29ce484222325ull;
    int unrefined = 0;
    double min_tri = 0, max_tri = 0;     // per subdomain
    double min_ratio = 0, max_ratio = 0; // triangles / estimate over refined subdomains
};

totals sum_up(const run_result& r, const domain& d) {
    totals t;
    bool first = true;
    for (std::size_t i = 0; i < r.subdomains.size(); ++i) {
        const summary& s = r.subdomains[i];
        const mesh_quality& q = s.quality;
        t.triangles += q.triangles, t.points += q.points, t.below += q.below_bound;
        t.inverted += q.inverted, t.steiner += s.steiner, t.area += q.area;
        t.min_angle = std::min(t.min_angle, q.min_angle_deg);
        t.digest = mesh_refinement::fnv1a(t.digest, q.digest);
        t.unrefined += s.refined_by < 0;
        double est = d.expected_triangles(int(i)), ratio = est > 0 ? double(q.triangles) / est : 0;
        if (first)
            t.min_tri = t.max_tri = double(q.triangles), t.min_ratio = t.max_ratio = ratio;
        t.min_tri = std::min(t.min_tri, double(q.triangles));
        t.max_tri = std::max(t.max_tri, double(q.triangles));
        if (q.triangles > 0) {
            t.min_ratio = std::min(t.min_ratio, ratio);
            t.max_ratio = std::max(t.max_ratio, ratio);
        }
        first = false;
    }
    return t;
}

// Whether two runs made the same mesh in every subdomain (rank 0 holds the summaries).
bool same_meshes(const run_result& a, const run_result& b) {
    return std::equal(
        a.subdomains.begin(), a.subdomains.end(), b.subdomains.begin(), b.subdomains.end(),
        [](const summary& x, const summary& y) { return x.quality.digest == y.quality.digest; });
}

// Rank 0: verifies the runs and prints their figures; returns whether every check passed.
bool report(const options& o, const prema::config& cfg, const domain& d,
            const std::vector<run_result>& runs) {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const run_result& base = runs.front();
    totals t = sum_up(base, d);
    std::printf("\nPREMA mesh refinement: %d ranks x %d worker(s), %s progress, quantum %llu us\n",
                p, cfg.workers, prema::to_string(cfg.progress).c_str(),
                (unsigned long long)cfg.quantum_us);
    std::printf("%d subdomains (%d x %d, block placement by rows), hmin %g, hmax %g, grade %g, "
                "angle bound %.4g deg, load estimate %s, %d Steiner points per step\n\n",
                d.subdomains(), d.columns(), d.rows(), o.hmin, o.hmax, o.grade, o.min_angle,
                o.estimate.c_str(), o.steps);
    std::printf("%-15s %9s %8s %7s %6s | %-23s | %5s %10s %8s\n", "policy", "makespan", "vs none",
                "speedup", "cores", "refine/worker min avg max", "migr", "triangles", "check");
    bool ok = true;
    for (const auto& r : runs) {
        totals rt = sum_up(r, d);
        bool same = rt.digest == t.digest && rt.triangles == t.triangles;
        bool good = r.ok && same && rt.below == 0 && rt.inverted == 0 && rt.unrefined == 0 &&
                    std::abs(rt.area - d.area()) <= 1e-9 * d.area();
        ok &= good;
        std::printf("%-15s %8.3fs %+7.1f%% %6.2fx %6.2f | %6.3f %6.3f %6.3f s    | %5llu %10llu "
                    "%8s\n",
                    r.policy.c_str(), r.makespan, 100 * (r.makespan / base.makespan - 1),
                    base.makespan / r.makespan, r.cpu / r.makespan, r.busy_min(), r.busy_avg(),
                    r.busy_max(), (unsigned long long)r.migrations,
                    (unsigned long long)rt.triangles, good ? "ok" : "FAILED");
    }
    std::printf("\nmesh: %llu triangles, %llu points (%llu Steiner), digest %016llx\n",
                (unsigned long long)t.triangles, (unsigned long long)t.points,
                (unsigned long long)t.steiner, (unsigned long long)t.digest);
    std::printf("per subdomain: %.0f to %.0f triangles (%.0fx); triangles / estimate: %.2f to "
                "%.2f\n",
                t.min_tri, t.max_tri, t.min_tri > 0 ? t.max_tri / t.min_tri : 0.0, t.min_ratio,
                t.max_ratio);
    std::printf("quality: smallest angle %.3f deg, %llu below the bound %.4g, %llu inverted; "
                "area %.12f (domain %.12f)\n",
                t.min_angle, (unsigned long long)t.below, o.min_angle,
                (unsigned long long)t.inverted, t.area, d.area());
    if (runs.size() > 1) {
        auto best = std::min_element(runs.begin() + 1, runs.end(),
                                     [](auto& a, auto& b) { return a.makespan < b.makespan; });
        double cut = 1 - best->makespan / base.makespan;
        std::printf("best: %s, %.1f%% %s than none (target: 30%% faster on 4+ ranks: %s)\n",
                    best->policy.c_str(), 100 * std::abs(cut), cut >= 0 ? "faster" : "slower",
                    cut >= 0.3 ? "met" : "NOT met");
    }
    std::printf("cores: CPU time of all ranks during the refinement / makespan (what the machine "
                "gave the job;\nbelow the ranks' count when other work shares the cores)\n");
    std::printf("identical meshes in every run: %s\n", ok ? "yes, all checks passed" : "NO");
    return ok;
}

bool write_json(const std::string& path, const options& o, const prema::config& cfg,
                const domain& d, const std::vector<run_result>& runs, bool ok) {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    totals t = sum_up(runs.front(), d);
    example::json out;
    out.set("ranks", p).set("workers", cfg.workers).set("subdomains", d.subdomains());
    out.set("hmin", o.hmin).set("hmax", o.hmax).set("grade", o.grade);
    out.set("min_angle_deg", o.min_angle).set("estimate", o.estimate).set("steps", o.steps);
    out.set("triangles", (long long)t.triangles).set("points", (long long)t.points);
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", (unsigned long long)t.digest);
    out.set("digest", digest).set("smallest_angle_deg", t.min_angle);
    out.set("below_bound", (long long)t.below).set("area", t.area).set("ok", ok);
    std::vector<example::json> list;
    for (const auto& r : runs) {
        example::json j;
        j.set("policy", r.policy).set("makespan_s", r.makespan);
        j.set("improvement", 1 - r.makespan / runs.front().makespan).set("cpu_s", r.cpu);
        j.set("migrations", (long long)r.migrations).set("refine_min_s", r.busy_min());
        j.set("refine_avg_s", r.busy_avg()).set("refine_max_s", r.busy_max());
        j.set("per_worker_refine_s", r.busy);
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
    g_domain = &d;
    g_min_angle = o.min_angle;
    g_steps = o.steps;

    std::vector<std::string> names{"none"};
    for (auto& name : o.policies.resolve(cfg.lb, "work_stealing"))
        if (name != "none")
            names.push_back(name);
    // With --repeat, the sequence runs again and each policy keeps its fastest run (the one the
    // rest of the machine disturbed least); every run is checked.
    std::vector<run_result> runs(names.size());
    bool all_ok = true;
    for (int rep = 0; rep < o.repeat; ++rep)
        for (std::size_t i = 0; i < names.size(); ++i) {
            bool last = rep + 1 == o.repeat && i + 1 == names.size();
            run_result r = run_once(o, cfg, names[i], !o.vtk.empty() && last);
            all_ok &= r.ok && (rep == 0 || same_meshes(runs[i], r));
            auto meshes = std::move(r.meshes);
            if (rep == 0 || r.makespan < runs[i].makespan)
                runs[i] = std::move(r);
            if (!meshes.empty())
                runs[i].meshes = std::move(meshes);
        }
    if (me != 0)
        return all_ok ? 0 : 1;

    bool ok = report(o, cfg, d, runs) && all_ok;
    if (!o.vtk.empty()) {
        std::vector<subdomain_field> fields;
        for (const auto& r : runs) {
            subdomain_field f{"rank_" + r.policy, {}};
            for (const auto& s : r.subdomains)
                f.value.push_back(s.refined_by);
            fields.push_back(std::move(f));
        }
        write_vtk(o.vtk, runs.back().meshes, fields);
        std::printf("wrote %s\n", o.vtk.c_str());
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
