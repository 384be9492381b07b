// prema-model: predicts the makespan of a load-balanced PREMA run before running it (issue 8),
// with the breakdown of the slowest rank's time, and recommends objects per worker, quantum and
// neighbourhood size. The model is in src/lb/model/; this file reads options and prints.
//
//   prema-model --csv weights.csv --machine machine.txt [--policy LIST] [--recommend]
//   mpirun -np 2 prema-model --calibrate machine.txt
//   (--help lists every option; --prema-* runtime options describe the run being predicted)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <prema/config.hpp>
#include <prema/error.hpp>

#include <mpi.h>

#include "../../examples/common/cli.hpp"
#include "../../examples/common/json.hpp"
#include "../../examples/common/policies.hpp"
#include "calibrate.hpp"
#include "lb/model/fit.hpp"
#include "lb/model/machine.hpp"
#include "lb/model/predict.hpp"
#include "lb/model/recommend.hpp"
#include "lb/model/workload.hpp"

namespace {

namespace model = prema::model;
using prema::usage_error;

const char* description =
    "Predicts the makespan of a PREMA run with implicit load balancing (the slowest rank's\n"
    "finishing time) and where that rank's last worker spent it, for each policy; with\n"
    "--recommend, scans objects per worker, quantum and neighbourhood size. The workload is\n"
    "--csv FILE or --weights with --ranks. The runtime's options describe the run: --prema-\n"
    "workers, --prema-quantum-us, --prema-lb-period-us, --prema-lb-neighbours, --prema-progress,\n"
    "--prema-lb (the policy). Only --calibrate needs mpirun (-np 2); the model runs on rank 0.";

// "1,2,3" -> {1, 2, 3}, each checked like a single value of `name`.
template <class T>
std::vector<T> parse_list(const std::string& name, const std::string& v, T lo, T hi) {
    std::vector<T> out;
    for (std::size_t from = 0; from <= v.size();) {
        auto comma = std::min(v.find(',', from), v.size());
        std::string item = v.substr(from, comma - from);
        char* end = nullptr;
        double x = std::strtod(item.c_str(), &end);
        if (item.empty() || *end || !(x >= double(lo) && x <= double(hi)) ||
            (std::is_integral_v<T> && x != std::floor(x)))
            throw usage_error(
                fmt::format("{}: '{}' in '{}' is not a number in {}..{}", name, item, v, lo, hi));
        out.push_back(T(x));
        from = comma + 1;
    }
    return out;
}

struct options {
    std::string csv, column = "weight_s", declared_column = "declared_s", machine, calibrate, json,
                     method = "rounds";
    std::string weights, policy, scan_objects, scan_quanta, scan_neighbours;
    int ranks = 0, objects_per_worker = 0, replications = 16, seed = 1;
    double yield_every_us = 0, messages_per_object = 0, message_bytes = 0, object_bytes = 64;
    bool recommend = false;
    bool lb_given = false; // --prema-lb (or PREMA_LB) was given

    void add_to(example::cli& cli) {
        cli.add("--csv", "FILE",
                "per-object weights: a header naming 'rank' and the weight column, rows of a rank "
                "in the order it starts them (lb_synthetic --csv writes "
                "object,rank,weight_s,measured_s,declared_s)",
                csv);
        cli.add("--column", "NAME", "the weight column of --csv", column);
        cli.add("--declared-column", "NAME",
                "with --prema-lb-load declared: the column of --csv the policies weigh objects by "
                "(their load(), in seconds; with measured or hybrid they weigh what the objects "
                "take, the weight column)",
                declared_column);
        cli.add("--weights", "S,S,...", "weights in seconds, dealt round robin over --ranks",
                weights);
        cli.add("--ranks", "P", "ranks, with --weights", ranks, 1, 1'000'000);
        cli.add("--objects-per-worker", "K",
                "first cut every rank's work into K objects per worker (0: as given)",
                objects_per_worker, 0, 1'000'000);
        cli.add("--machine", "FILE", "machine costs measured by --calibrate (default: all 0)",
                machine);
        cli.add("--calibrate", "FILE", "measure the machine costs (mpirun -np 2) into FILE",
                calibrate);
        cli.add("--policy", "LIST",
                "policies to predict: none, work_stealing, diffusion (default: --prema-lb if "
                "given, else all three)",
                policy);
        cli.add("--method",
                "rounds: the round model; thesis: Barker's closed form on the two-class fit; both",
                method, {"rounds", "thesis", "both"});
        cli.add("--yield-every-us", "US", "work the application does between yield points",
                yield_every_us, 0.0, 1e12);
        cli.add("--messages-per-object", "N", "application messages each object sends",
                messages_per_object, 0.0, 1e9);
        cli.add("--message-bytes", "B", "their size", message_bytes, 0.0, 1e12);
        cli.add("--object-bytes", "B", "a migrating object's packed size", object_bytes, 0.0, 1e12);
        cli.add("--replications", "R", "random victim choices averaged over R runs", replications,
                1, 100000);
        cli.add("--seed", "S", "of the random choices", seed, 0, 1'000'000'000);
        cli.add_flag("--recommend",
                     "scan objects per worker, quanta and (diffusion) neighbourhoods for every "
                     "policy and print the best point",
                     recommend);
        cli.add("--scan-objects", "LIST", "objects per worker to scan (default 1,2,4,...,64)",
                scan_objects);
        cli.add("--scan-quantum-us", "LIST", "quanta to scan (default 100,250,...,10000)",
                scan_quanta);
        cli.add("--scan-neighbours", "LIST", "neighbourhoods to scan (default 1,2,4,8,16)",
                scan_neighbours);
        cli.add("--json", "FILE", "also write the figures as JSON", json);
        cli.check([this] {
            if (calibrate.empty() && csv.empty() == weights.empty())
                throw usage_error("give the workload with --csv FILE or --weights LIST (one)");
            if (!weights.empty() && !ranks)
                throw usage_error("--weights needs --ranks");
        });
    }

    model::settings run(const prema::config& cfg) const {
        model::settings s;
        s.quantum_s = double(cfg.quantum_us) * 1e-6;
        s.period_s = double(cfg.lb_period_us) * 1e-6;
        s.neighbours = cfg.lb_neighbours;
        s.inline_progress = cfg.progress == prema::progress_mode::inline_;
        s.yield_every_s = yield_every_us * 1e-6;
        s.messages_per_object = messages_per_object;
        s.message_bytes = message_bytes;
        s.object_bytes = object_bytes;
        s.replications = replications;
        s.seed = unsigned(seed);
        return s;
    }

    std::vector<model::policy> policies(const prema::config& cfg) const {
        std::vector<model::policy> out;
        for (std::size_t from = 0; from < policy.size();) {
            auto comma = std::min(policy.find(',', from), policy.size());
            out.push_back(model::parse_policy(policy.substr(from, comma - from)));
            from = comma + 1;
        }
        if (out.empty() && lb_given)
            out.push_back(model::parse_policy(cfg.lb));
        if (out.empty())
            out = {model::policy::none, model::policy::work_stealing, model::policy::diffusion};
        return out;
    }

    model::scan_grid grid() const {
        model::scan_grid g;
        if (!scan_objects.empty())
            g.objects_per_worker = parse_list<int>("--scan-objects", scan_objects, 1, 100000);
        if (!scan_quanta.empty()) {
            g.quanta_s.clear();
            for (double q : parse_list<double>("--scan-quantum-us", scan_quanta, 0, 1e12))
                g.quanta_s.push_back(q * 1e-6);
        }
        if (!scan_neighbours.empty())
            g.neighbours = parse_list<int>("--scan-neighbours", scan_neighbours, 1, 100000);
        return g;
    }
};

model::workload load_workload(const options& o, int workers, prema::load_mode lb_load) {
    model::workload w;
    if (!o.csv.empty()) {
        std::ifstream in(o.csv);
        if (!in)
            throw usage_error("--csv " + o.csv + ": cannot open");
        // Measured and hybrid loads are what the objects took (once they have run): the weights.
        w = model::read_csv(in, o.column, workers, o.csv,
                            lb_load == prema::load_mode::declared ? o.declared_column : "");
        if (o.ranks && o.ranks != w.ranks)
            throw usage_error(
                fmt::format("--ranks {} but {} has objects on {} ranks", o.ranks, o.csv, w.ranks));
    } else {
        w = model::round_robin(parse_list<double>("--weights", o.weights, 0, 1e9), o.ranks,
                               workers);
    }
    return o.objects_per_worker ? model::regranulate(w, o.objects_per_worker) : w;
}

model::machine load_machine(const options& o) {
    if (o.machine.empty())
        return {};
    std::ifstream in(o.machine);
    if (!in)
        throw usage_error("--machine " + o.machine + ": cannot open");
    return model::read_machine(in, o.machine);
}

struct row {
    std::string policy, method;
    model::prediction p;
};

void print_breakdown_header() {
    std::printf("%-14s %-7s %9s %9s %9s %5s %6s %7s | %8s %8s %8s %8s %8s %8s %8s\n", "policy",
                "method", "makespan", "min", "max", "rank", "migr", "lb msgs", "compute", "app msg",
                "lb msg", "migrate", "decide", "yield", "other");
    std::printf("%-14s %-7s %9s %9s %9s %5s %6s %7s | %8s %8s %8s %8s %8s %8s %8s\n", "", "", "s",
                "s", "s", "", "", "", "s", "s", "s", "s", "s", "s", "s");
}

void print_row(const row& r) {
    auto& b = r.p.slowest;
    std::printf("%-14s %-7s %9.4f %9.4f %9.4f %5d %6.1f %7.0f | %8.4f %8.4f %8.4f %8.4f %8.5f "
                "%8.4f %8.4f\n",
                r.policy.c_str(), r.method.c_str(), r.p.makespan_s, r.p.min_s, r.p.max_s,
                r.p.slowest_rank, r.p.migrations, r.p.lb_messages, b.compute, b.app_messages,
                b.lb_messages, b.migrations, b.decisions, b.preemption, b.other);
}

example::json json_prediction(const std::string& policy, const std::string& method,
                              const model::prediction& p) {
    auto& b = p.slowest;
    example::json breakdown;
    breakdown.set("compute_s", b.compute)
        .set("app_messages_s", b.app_messages)
        .set("lb_messages_s", b.lb_messages)
        .set("migrations_s", b.migrations)
        .set("decisions_s", b.decisions)
        .set("preemption_s", b.preemption)
        .set("other_s", b.other);
    example::json j;
    j.set("policy", policy)
        .set("method", method)
        .set("makespan_s", p.makespan_s)
        .set("min_s", p.min_s)
        .set("max_s", p.max_s)
        .set("slowest_rank", p.slowest_rank)
        .set("migrations", p.migrations)
        .set("lb_messages", p.lb_messages)
        .set("breakdown", breakdown);
    return j;
}

int model_main(const options& o, const prema::config& cfg) {
    const auto run = o.run(cfg);
    const auto policies = o.policies(cfg);
    const auto grid = o.grid();
    auto w = load_workload(o, cfg.workers, cfg.lb_load);
    auto m = load_machine(o);
    auto f = model::fit_two_classes(w.all_weights());
    std::printf("PREMA load-balancing model: %d ranks x %d worker(s), %zu objects, %.4f s of work "
                "(%.4f s per worker)\n",
                w.ranks, w.workers, w.objects(), w.total_s(),
                w.total_s() / double(w.ranks * w.workers));
    std::printf("two-class fit: %zu light of %.4f s [%.4f..%.4f], %zu heavy of %.4f s "
                "[%.4f..%.4f], squared error %.3g s^2\n",
                f.gamma, f.light_s, f.light_min, f.light_max, f.objects - f.gamma, f.heavy_s,
                f.heavy_min, f.heavy_max, f.error);
    std::printf("machine%s: start-up %.2f us, %.3f ns/B, migration %.1f us, yield %.2f us, "
                "decision %.2f us, quiescence %.1f us\n",
                o.machine.empty() ? " (no --machine: ideal)" : (" " + o.machine).c_str(),
                m.startup_s * 1e6, m.per_byte_s * 1e9, m.migrate_s * 1e6, m.poll_s * 1e6,
                m.decision_s * 1e6, m.quiescence_s * 1e6);
    std::printf("run: %s progress, quantum %.0f us, yield points every %.0f us of work, lb period "
                "%.0f us, %d neighbours, %.3g messages of %.0f B per object, objects of %.0f B\n\n",
                run.inline_progress ? "inline" : "dedicated", run.quantum_s * 1e6,
                run.yield_every_s * 1e6, run.period_s * 1e6, run.neighbours,
                run.messages_per_object, run.message_bytes, run.object_bytes);

    std::vector<row> rows;
    for (auto pol : policies) {
        auto s = run;
        s.policy = pol;
        if (o.method != "thesis")
            rows.push_back({to_string(pol), "rounds", model::predict(w, m, s)});
        if (o.method != "rounds")
            rows.push_back({to_string(pol), "thesis", model::predict_thesis(w, m, s)});
    }
    print_breakdown_header();
    for (auto& r : rows)
        print_row(r);
    std::printf("\nmakespan: mean over %d replications (min, max: their spread); rank: the slowest "
                "rank; the breakdown\nis that rank's last worker's time (it adds up to the "
                "makespan).\n",
                run.replications);

    std::vector<example::json> recs;
    if (o.recommend) {
        std::printf(
            "\nRecommendation (scan of %zu objects-per-worker x %zu quanta x neighbourhoods, "
            "round model):\n",
            grid.objects_per_worker.size(), grid.quanta_s.size());
        for (auto pol : policies) {
            auto s = run;
            s.policy = pol;
            auto all = model::scan(w, m, s, grid);
            auto& b = model::best(all);
            std::string hood =
                pol == model::policy::diffusion ? fmt::format(", {} neighbours", b.neighbours) : "";
            std::printf("  %-14s %3d objects per worker, quantum %6.0f us%s: %.4f s\n",
                        to_string(pol).c_str(), b.objects_per_worker, b.quantum_s * 1e6,
                        hood.c_str(), b.p.makespan_s);
            std::vector<example::json> scanned;
            for (auto& c : all) {
                example::json j;
                j.set("objects_per_worker", c.objects_per_worker)
                    .set("quantum_us", c.quantum_s * 1e6)
                    .set("neighbours", c.neighbours)
                    .set("makespan_s", c.p.makespan_s);
                scanned.push_back(j);
            }
            example::json j;
            j.set("policy", to_string(pol))
                .set("objects_per_worker", b.objects_per_worker)
                .set("quantum_us", b.quantum_s * 1e6)
                .set("neighbours", b.neighbours)
                .set("makespan_s", b.p.makespan_s)
                .set("scanned", scanned);
            recs.push_back(j);
        }
    }

    if (!o.json.empty()) {
        std::vector<example::json> predictions;
        for (auto& r : rows)
            predictions.push_back(json_prediction(r.policy, r.method, r.p));
        example::json out;
        out.set("ranks", w.ranks)
            .set("workers", w.workers)
            .set("objects", (long long)w.objects())
            .set("total_work_s", w.total_s())
            .set("light_objects", (long long)f.gamma)
            .set("light_s", f.light_s)
            .set("heavy_objects", (long long)(f.objects - f.gamma))
            .set("heavy_s", f.heavy_s)
            .set("predictions", predictions)
            .set("recommendations", recs);
        if (!out.write(o.json))
            return 1;
        std::printf("wrote %s\n", o.json.c_str());
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    example::cli cli("prema-model", description);
    o.lb_given = example::lb_option_given(argc, argv);
    o.add_to(cli);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) {
        if (!o.calibrate.empty())
            return prema::model::calibrate(cfg, o.calibrate);
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        try {
            return rank == 0 ? model_main(o, cfg) : 0;
        } catch (const usage_error& e) { // bad input files: a message, not an abort
            std::fprintf(stderr, "prema-model: %s\n", e.what());
            return 2;
        }
    });
}
