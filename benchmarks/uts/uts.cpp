// The Unbalanced Tree Search benchmark (UTS; Olivier et al., LCPC 2006) on PREMA: counts the
// nodes of one of the benchmark's published trees with its work in mobile "bags" that the load
// balancer moves (bag.hpp), and compares the time with a plain sequential loop over the same
// node code, which rank 0 times first in the same job.
//
//   mpirun -np P ./uts --tree T1|T3|T1L|T3L|... [--json FILE] [--repeat N] [--loop-on-every-rank]
//   (--help lists every option; --prema-* runtime options apply to the parallel search)
//
// Prints the count (nodes, leaves, depth), the parallel time and rate, the bags the balancer
// moved, and the parallel efficiency, sequential time / (ranks x parallel time); on one rank
// that is the runtime's overhead over the loop. --loop-on-every-rank also times the loop on
// every rank at once and the efficiency against that: the cores of a machine may slow each
// other down when all are busy (shared caches, memory bandwidth, a virtual machine's host), and
// the parallel search pays that too. The policy is --prema-lb, or lifeline where the runtime's
// default is none. Exit status 1 if any count differs from the tree's published size (the
// loop's, the loops' on every rank or the search's): the benchmark never reports a wrong tree.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>
#include <prema/prema.hpp>

#include "../../examples/common/cli.hpp"
#include "../../examples/common/json.hpp"
#include "../../examples/common/policies.hpp"
#include "../../examples/common/stopwatch.hpp"
#include "bag.hpp"
#include "sample_trees.hpp"

namespace {

struct options {
    std::string tree = "T1";
    int chunk = 1024;
    int reserve = -1; // -1: workers + 3
    int repeat = 1;
    bool loop_everywhere = false;
    std::string give_on_demand = "off";
    std::string json;
    bool lb_given = false;

    void add_to(example::cli& cli, int argc, char** argv) {
        std::vector<std::string> names;
        for (const auto& t : uts::sample_trees())
            names.push_back(t.name);
        cli.add("--tree",
                "the tree to count (T1..T5: about 4 M nodes, T1L, T2L, T3L: about 100 M; "
                "T1XS, T3XS: a quarter of a million, for tests)",
                tree, names);
        cli.add("--chunk", "N",
                "nodes a bag expands between two looks at the quantum (and the network); a "
                "bag queues itself again once its quantum is over",
                chunk, 1, 1 << 30);
        cli.add("--reserve", "N",
                "bags a rank keeps queued, splitting its running bag when it has fewer: what "
                "idle ranks can take (default: workers + 3; work_stealing gives a bag only "
                "while more wait than the rank has idle workers)",
                reserve, 1, 1 << 20);
        cli.add("--give-on-demand",
                "on: while another rank waits for work this rank could not give "
                "(prema::lb::demand), each chunk ends by handing it the oldest eighth of its bag "
                "as a task placed there (prema::spawn_anywhere); off: idle ranks get bags only by "
                "asking",
                give_on_demand, {"on", "off"});
        cli.add("--repeat", "N",
                "run N rounds of the sequential loop then the parallel search (a core's speed "
                "drifts: each round's two see about the same) and keep the fastest of each",
                repeat, 1, 1000);
        cli.add_flag("--loop-on-every-rank",
                     "also time the sequential loop on every rank at once, and the efficiency "
                     "against it: how much of the shortfall is the machine's cores slowing each "
                     "other down, not the runtime",
                     loop_everywhere);
        cli.add("--json", "FILE", "also write the results as JSON", json);
        lb_given = example::lb_option_given(argc, argv);
    }
};

const char* description =
    "Unbalanced Tree Search: counts a published UTS tree with the work in mobile bags of\n"
    "unexpanded nodes that the load balancer moves, and compares the time with a sequential loop\n"
    "over the same node code (rank 0, same job). Fails if a count differs from the published one.";

// Says on stderr if `got` is not the tree's size.
bool report_count(const char* what, const uts::tally& got, const uts::sample_tree& t) {
    if (got == t.expected)
        return true;
    std::fprintf(stderr,
                 "uts: WRONG COUNT: %s counted %llu nodes, %llu leaves, depth %d; tree %s has "
                 "%llu nodes, %llu leaves, depth %d (%s)\n",
                 what, (unsigned long long)got.nodes, (unsigned long long)got.leaves,
                 got.max_height, t.name, (unsigned long long)t.expected.nodes,
                 (unsigned long long)t.expected.leaves, t.expected.max_height, t.note);
    return false;
}

// A barrier that does not spin: the other ranks sleep while rank 0 times its loop, instead of
// taking a core from it on a machine with fewer cores than ranks.
void wait_for_rank_0() {
    MPI_Request done;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    for (int finished = 0; MPI_Test(&done, &finished, MPI_STATUS_IGNORE), !finished;)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

struct sequential_run {
    double seconds = -1, cpu_s = -1; // rank 0's; -1 elsewhere and before the first run
    bool right = true;               // on every rank

    // Keeps the faster of the two; wrong if either was.
    void keep_faster(const sequential_run& r) {
        if (r.seconds >= 0 && (seconds < 0 || r.seconds < seconds))
            seconds = r.seconds, cpu_s = r.cpu_s;
        right = right && r.right;
    }
};

// One sequential search on rank 0.
sequential_run time_sequential(const uts::tree& shape, const uts::sample_tree& t) {
    sequential_run run;
    int right = 1, rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        double t0 = prema::wtime(), cpu0 = example::stopwatch::thread_cpu_s();
        uts::tally got = shape.search();
        run.seconds = prema::wtime() - t0;
        run.cpu_s = example::stopwatch::thread_cpu_s() - cpu0;
        right = report_count("the sequential loop", got, t);
    }
    wait_for_rank_0();
    MPI_Bcast(&right, 1, MPI_INT, 0, MPI_COMM_WORLD);
    run.right = right != 0;
    return run;
}

// The sequential loop on every rank at once, each over its own copy of the tree: on rank 0 the
// mean of the ranks' times and the slowest rank's (-1 elsewhere); and whether every count was
// right.
struct everywhere_run {
    double mean_seconds = -1, slowest_seconds = -1;
    bool right = true;

    // Keeps the one with the lower mean; wrong if either was.
    void keep_faster(const everywhere_run& r) {
        if (r.mean_seconds >= 0 && (mean_seconds < 0 || r.mean_seconds < mean_seconds))
            mean_seconds = r.mean_seconds, slowest_seconds = r.slowest_seconds;
        right = right && r.right;
    }
};

everywhere_run time_loop_everywhere(const uts::tree& shape, const uts::sample_tree& t) {
    int ranks = 1, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = prema::wtime();
    uts::tally got = shape.search();
    const double mine = prema::wtime() - t0;
    double sum = 0, slowest = 0;
    int right = report_count("the loop on every rank", got, t), all_right = 0;
    MPI_Allreduce(&right, &all_right, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    everywhere_run run;
    run.right = all_right != 0;
    if (rank == 0)
        run.mean_seconds = sum / ranks, run.slowest_seconds = slowest;
    return run;
}

struct parallel_run {
    double seconds = 0;
    double cpu_s = 0; // CPU time of every rank's process (all its threads) during the search
    uts::tally total;
    unsigned long long migrations = 0;
    unsigned long long policy_messages = 0;              // summed over the ranks
    unsigned long long given = 0;                        // bags handed to waiting ranks, summed
    unsigned long long fewest_nodes = 0, most_nodes = 0; // the ranks' own counts
    double longest_answer_wait_s = 0; // of any rank's policy for a reply (to a steal)
};

// One parallel search on a fresh runtime; the time is rank 0's, from the moment every rank
// is in the phase to the job's quiescence.
parallel_run search_parallel(const prema::config& cfg, const std::string& policy,
                             const uts::bag_settings& settings) {
    parallel_run run;
    uts::prepare(settings);
    run.migrations = example::run_under_policy(cfg, policy, [&]() -> prema::task<> {
        co_await prema::all_reduce(0, std::plus<>{}); // every rank is here
        double t0 = prema::wtime(), cpu0 = example::stopwatch::process_cpu_s();
        if (prema::rank() == 0)
            uts::plant_root();
        co_await prema::quiescence();
        run.seconds = prema::wtime() - t0;
        run.cpu_s =
            co_await prema::all_reduce(example::stopwatch::process_cpu_s() - cpu0, std::plus<>{});
        run.total = co_await prema::all_reduce(uts::local_tally(), [](uts::tally a, uts::tally b) {
            a.add(b);
            return a;
        });
        const auto mine = uts::local_tally().nodes;
        run.fewest_nodes = co_await prema::all_reduce(
            (unsigned long long)mine, [](auto a, auto b) { return std::min(a, b); });
        run.most_nodes = co_await prema::all_reduce((unsigned long long)mine,
                                                    [](auto a, auto b) { return std::max(a, b); });
        run.given =
            co_await prema::all_reduce((unsigned long long)uts::local_given(), std::plus<>{});
        prema::lb::stats lb = prema::lb::current_stats();
        run.policy_messages =
            co_await prema::all_reduce((unsigned long long)lb.messages, std::plus<>{});
        run.longest_answer_wait_s = co_await prema::all_reduce(
            lb.max_answer_wait_s, [](double a, double b) { return std::max(a, b); });
    });
    return run;
}

int run(const options& o, const prema::config& cfg) {
    const uts::sample_tree& t = uts::find_sample_tree(o.tree);
    const uts::tree shape(t.params);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    // The benchmark is about balancing: without a policy only rank 0 would work. lifeline
    // beat work_stealing on T1 and tied on T3 on 2 ranks (docs/performance/uts.md).
    std::string policy = o.lb_given || cfg.lb != "none" ? cfg.lb : "lifeline";
    const int reserve = o.reserve > 0 ? o.reserve : cfg.workers + 3;
    if (rank == 0)
        std::printf("uts: %s, %s; %d rank(s) x %d worker(s), policy %s, chunks of %d nodes, %d "
                    "bag(s) in reserve\n",
                    t.name, t.params.describe().c_str(), ranks, cfg.workers, policy.c_str(),
                    o.chunk, reserve);

    // Rounds of the loop (and the loops on every rank) and the search, one after the other,
    // keeping the fastest of each: on a virtual machine a core's speed may drift by several
    // percent from minute to minute, and the parts of one round see about the same speed.
    sequential_run seq;
    everywhere_run everywhere;
    parallel_run best;
    bool par_right = true;
    for (int i = 0; i < o.repeat; ++i) {
        const sequential_run loop = time_sequential(shape, t);
        seq.keep_faster(loop);
        if (o.loop_everywhere)
            everywhere.keep_faster(time_loop_everywhere(shape, t));
        parallel_run r = search_parallel(
            cfg, policy, {&shape, std::uint64_t(o.chunk), reserve, o.give_on_demand == "on"});
        par_right &= r.total == t.expected; // every rank has the total: all decide alike
        if (rank == 0)
            report_count("the parallel search", r.total, t);
        if (i == 0 || r.seconds < best.seconds)
            best = r;
        if (rank == 0 && o.repeat > 1)
            std::printf("round %d of %d: loop %.3f s, search %.3f s\n", i + 1, o.repeat,
                        loop.seconds, r.seconds);
    }
    if (!seq.right || !par_right || !everywhere.right)
        return 1;

    if (rank != 0)
        return 0;
    std::printf("sequential loop (rank 0): %.3f s, %.2f M nodes/s, %.3f s of CPU time\n",
                seq.seconds, double(t.expected.nodes) / seq.seconds * 1e-6, seq.cpu_s);
    if (o.loop_everywhere)
        std::printf("the loop on every rank at once: %.3f s on average, %.3f s the slowest "
                    "(%+.1f%% against the loop alone)\n",
                    everywhere.mean_seconds, everywhere.slowest_seconds,
                    (everywhere.mean_seconds / seq.seconds - 1) * 100);
    double efficiency = seq.seconds / (ranks * best.seconds);
    std::printf("count: %llu nodes, %llu leaves, depth %d (%s)\n",
                (unsigned long long)best.total.nodes, (unsigned long long)best.total.leaves,
                best.total.max_height, t.note);
    std::printf("parallel: %.3f s, %.2f M nodes/s, %llu bag(s) moved, %.3f s of CPU time (all "
                "ranks, %+.1f%% against the loop's)\n",
                best.seconds, double(best.total.nodes) / best.seconds * 1e-6, best.migrations,
                best.cpu_s, (best.cpu_s / seq.cpu_s - 1) * 100);
    if (ranks > 1) {
        std::printf("balancing: %llu policy message(s), longest wait for an answer %.3f ms, "
                    "%llu bag(s) given on demand\n",
                    best.policy_messages, best.longest_answer_wait_s * 1e3, best.given);
        std::printf("per rank: %llu to %llu nodes\n", best.fewest_nodes, best.most_nodes);
    }
    if (ranks == 1)
        std::printf("overhead: %+.1f%% against the sequential loop\n",
                    (best.seconds / seq.seconds - 1) * 100);
    std::printf("efficiency: %.1f%% (sequential loop / (%d x parallel))\n", efficiency * 100,
                ranks);
    const double loaded_efficiency =
        o.loop_everywhere ? everywhere.mean_seconds / (ranks * best.seconds) : 0;
    if (o.loop_everywhere)
        std::printf("efficiency against the loop on every rank at once: %.1f%% (its mean / (%d x "
                    "parallel))\n",
                    loaded_efficiency * 100, ranks);
    if (!o.json.empty()) {
        example::json out;
        out.set("tree", t.name)
            .set("ranks", ranks)
            .set("nodes", (long long)best.total.nodes)
            .set("seconds", best.seconds)
            .set("nodes_per_s", double(best.total.nodes) / best.seconds)
            .set("efficiency", efficiency)
            .set("sequential_seconds", seq.seconds)
            .set("sequential_cpu_s", seq.cpu_s)
            .set("cpu_s", best.cpu_s)
            .set("leaves", (long long)best.total.leaves)
            .set("depth", best.total.max_height)
            .set("workers", cfg.workers)
            .set("policy", policy)
            .set("chunk", o.chunk)
            .set("reserve", reserve)
            .set("repeat", o.repeat)
            .set("migrations", (long long)best.migrations)
            .set("policy_messages", (long long)best.policy_messages)
            .set("give_on_demand", o.give_on_demand)
            .set("given_on_demand", (long long)best.given)
            .set("fewest_nodes_per_rank", (long long)best.fewest_nodes)
            .set("most_nodes_per_rank", (long long)best.most_nodes)
            .set("longest_answer_wait_s", best.longest_answer_wait_s);
        if (o.loop_everywhere)
            out.set("every_rank_loop_seconds", everywhere.mean_seconds)
                .set("every_rank_loop_slowest_seconds", everywhere.slowest_seconds)
                .set("efficiency_against_every_rank_loop", loaded_efficiency);
        if (!out.write(o.json))
            return 1;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    example::cli cli("uts", description);
    o.add_to(cli, argc, argv);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) { return run(o, cfg); });
}
