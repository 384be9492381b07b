// PREMA's synthetic load-balancing benchmark (issue 4): static placement against each policy.
//
//   mpirun --oversubscribe -np 8 ./lb_synthetic [--policy NAME | --all] [--json FILE]
//   mpirun --oversubscribe -np 4 ./lb_synthetic --preemption [--json FILE]
//   (--help lists every option; --prema-* runtime options apply to every run)
//
// Workload. N = objects-per-worker x workers x ranks mobile objects, each with ONE work item.
// --shape step (default): a fraction (--heavy-fraction, 0.2) of them is heavy: --heavy-factor
// (2.5) times the light weight (--light-ms, 50). --shape linear: weights grow linearly from the
// light weight to --ratio (2) times it across the objects in rank order (rank 0's first object
// is the lightest, the last rank's last object the heaviest). Work is either sleeping
// (--work=sleep: std::this_thread::sleep_until in chunks of --chunk-us, so that many ranks can
// share 2 cores without the machine's size distorting the schedule) or spinning (--work=spin: a
// busy loop that consumes the item's weight in THREAD CPU time, in steps of 50 us). Between chunks
// the handler passes a co_await prema::yield_point(), so the runtime can serve messages when the
// quantum expires. An item is finished when the time spent inside its chunks reaches its weight (a
// sleep that overshoots is counted, not repeated), so an item occupies its worker for its weight.
//
// One run: a fresh prema::runtime with cfg.lb = the policy.
//   Phase 1 (balancing off): rank 0 creates every object and migrates object i to rank
//     i % ranks (static round robin). Heavy objects are clustered on the first ranks
//     (default: the first H objects in rank order are heavy) or spread with --scatter (the first
//     H objects in round-robin order, i.e. H / ranks per rank). The object ids are then
//     broadcast to every rank with MPI_Bcast. (Linear shapes ignore --scatter.)
//   Phase 2: lb::enable_balancing(true) on every rank (not for `none`), MPI_Barrier, t0; every
//     rank sends its own objects their work item (the owner's sends are local); rt.run()
//     returns at global quiescence. makespan = max over ranks of (return time - t0).
//     --enable-after-send: each rank turns balancing on inside phase 2, after its own sends.
// The policy `none` runs the same workload first (the static baseline), in the same process.
// --declared-error X makes each object's load() wrong by a fixed factor in [1/X, X];
// --warmup N runs N items of a tenth of the weight per object between the phases (balancing
// off), so that the runtime has measured every object: with --prema-lb-load measured or hybrid
// the policy then weighs pending items by what their objects took, declared by load() alone.
//
// Measured (every figure is for phase 2 only):
//   busy      per worker: wall time inside the items' chunks, attributed to the worker thread
//             that ran the chunk (prema::detail::worker_pool::current_index()).
//   overhead  time a worker was not running a chunk although a handler was runnable on its rank:
//             an item delivered or installed there and not yet started, or an item suspended
//             at a yield point and not yet resumed. It is computed exactly (no sampling) from a
//             per-rank event log, sweeping over time:
//                 overhead_rank = integral over [t0, t0 + makespan] of
//                                 min(workers not in a chunk, runnable handlers not in a chunk)
//             and summed over ranks. It covers dispatching the item, the scheduler, the queue
//             wait behind system work, resuming after a yield, serving policy messages while
//             work waits, and a migration's serialisation on the sending rank (the object is
//             runnable there until the runtime packs it).
//   idle      the rest: workers x makespan - busy - overhead, summed over workers. Time with
//             no handler to run on the rank: before work is stolen, while an object is in
//             transit to this rank, and the tail up to global quiescence.
//   transit   sum over migrations of (installed on the receiver - packed on the sender); part of
//             idle, shown separately (same-host clocks).
//   overhead% = overhead / (total workers x makespan): the share of worker time lost to the
//             runtime while there was work to do.
//   lower bound = max(total nominal work / total workers, largest item); efficiency = lower
//             bound / makespan.
//   migrations, policy messages: migrations in the measured phase, where only the policy
//             moves objects (lb::stats.migrations_out), and policy messages, summed over ranks; max
//             answer wait: the longest any rank's policy waited for a reply
//             (lb::stats.max_answer_wait_s), max over ranks.
// Every run also checks that every item ran exactly once (the run fails otherwise).
//
// --preemption: items of 0.5 s spin work (light; heavy 1.25 s) clustered, 4 objects per
// worker unless given, --prema-progress inline (in dedicated mode the progress thread serves
// policy messages whatever the workers do), run twice with the policy: with the configured
// quantum (--prema-quantum-us, 1000) and with yield points disabled (quantum 0). Reports the
// longest wait of a requester for an answer in each.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <mpi.h>

#include <prema/lb/scheduler.hpp>
#include <prema/prema.hpp>

#include "../../examples/common/cli.hpp"
#include "../../examples/common/policies.hpp"
#include "../../examples/common/progress.hpp"
#include "../../examples/common/stopwatch.hpp"
#include "coro/worker_pool.hpp" // the calling thread's worker index (benchmark-only peek)

namespace {

using clk = std::chrono::steady_clock;

double now_s() {
    return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------------------------------------
// Options

enum class work_kind { sleep, spin };

struct options {
    example::policy_choice policies;
    bool preemption = false;
    int objects_per_worker = -1; // -1: 10, or 4 with --preemption
    double heavy_fraction = 0.2;
    double heavy_factor = 2.5;
    std::string shape = "step";
    double ratio = 2;     // linear shape: heaviest / lightest
    double light_ms = -1; // -1: 50, or 500 with --preemption
    bool scatter = false;
    bool trace = false;
    bool enable_after_send = false;
    std::string work_option; // empty: sleep, or spin with --preemption
    int work = 0;            // work_kind, from work_option
    int chunk_us = 1000;
    std::string json;
    std::string csv;           // per-object weights and measured times of the static run
    double declared_error = 1; // load() is off by a factor up to this, either way
    int warmup = 0;            // items of a tenth of the weight before phase 2

    // Declares the options; the defaults that depend on --preemption are settled by a check.
    void add_to(example::cli& cli, int argc, char** argv) {
        policies.add_to(cli, argc, argv);
        cli.add("--objects-per-worker", "N", "objects per worker (default 10; 4 with --preemption)",
                objects_per_worker, 1, 100000);
        cli.add("--heavy-fraction", "F", "share of heavy objects", heavy_fraction, 0.0, 1.0);
        cli.add("--heavy-factor", "X", "heavy weight / light weight", heavy_factor, 0.001, 1e6);
        cli.add("--shape",
                "step: heavy and light objects; linear: weights grow linearly across the objects "
                "in rank order, from the light weight to --ratio times it",
                shape, {"step", "linear"});
        cli.add("--ratio", "X", "linear shape: heaviest / lightest weight", ratio, 1.0, 1e6);
        cli.add("--light-ms", "MS", "light item's work in ms (default 50; 500 with --preemption)",
                light_ms, 0.0, 1e7);
        cli.add_flag("--scatter", "spread heavy objects evenly over the ranks (default: clustered)",
                     scatter);
        cli.add("--work",
                "sleep in chunks, or spin (thread CPU time) with yield points (default sleep; spin "
                "with --preemption)",
                work_option, {"sleep", "spin"});
        cli.add("--chunk-us", "US", "sleep chunk between yield points", chunk_us, 1, 10'000'000);
        cli.add_flag("--preemption",
                     "the preemption run: inline progress, spin work, with the configured "
                     "--prema-quantum-us and with yield points disabled (quantum 0); reports the "
                     "longest wait for a policy answer",
                     preemption);
        cli.add_flag("--enable-after-send",
                     "each rank turns balancing on in phase 2 once it has sent its own items "
                     "(default: on every rank before phase 2 starts, so a rank whose entry has not "
                     "run yet may look idle to the policy)",
                     enable_after_send);
        cli.add("--json", "FILE", "also write the results as JSON", json);
        cli.add("--csv", "FILE",
                "write every object's home rank, nominal weight and measured time in the static "
                "run as CSV: object,rank,weight_s,measured_s,declared_s (what prema-model --csv "
                "reads)",
                csv);
        cli.add("--declared-error", "X",
                "each object's load() declares its weight times a factor between 1/X and X "
                "(log-uniform, fixed per object): an application's wrong estimate, which "
                "--prema-lb-load measured or hybrid can correct once objects have run (--warmup)",
                declared_error, 1.0, 1e6);
        cli.add("--warmup", "N",
                "before phase 2, each object runs N items of a tenth of its weight where it was "
                "placed (balancing off), so that the runtime has measured it",
                warmup, 0, 1000);
        cli.add_flag("--trace",
                     "print every rank's phase-2 events (item sent, object packed / installed, "
                     "item finished) to stderr, in seconds since t0",
                     trace);
        cli.check([this] {
            if (policies.all && preemption)
                throw prema::usage_error("--all and --preemption exclude each other");
            if (preemption && policies.policy.find(',') != std::string::npos)
                throw prema::usage_error("--preemption runs one policy, not a list");
            if (objects_per_worker < 0)
                objects_per_worker = preemption ? 4 : 10;
            if (light_ms < 0)
                light_ms = preemption ? 500 : 50;
            if (work_option.empty())
                work_option = preemption ? "spin" : "sleep";
            work = int(work_option == "spin" ? work_kind::spin : work_kind::sleep);
        });
    }
};

const char* description =
    "PREMA's synthetic load-balancing benchmark: objects created on rank 0, dispersed round\n"
    "robin (heavy ones clustered on the first ranks), one work item each; every policy run is\n"
    "shown beside the same workload under static placement (policy none, measured once).\n"
    "--prema-lb none alone runs only the static baseline.\n"
    "\n"
    "Definitions (see the top of lb_synthetic.cpp): busy = time inside work chunks per worker;\n"
    "overhead = worker time not in a chunk while a handler was runnable on the rank (exact,\n"
    "from an event log); idle = the rest of workers x makespan. Progress goes to stderr.";

const char* work_name(const options& o) {
    return work_kind(o.work) == work_kind::sleep ? "sleep" : "spin";
}

// ---------------------------------------------------------------------------------------------
// The workload

struct layout {
    int ranks = 1, workers = 1, objects = 0, heavy = 0;
    double light_s = 0, heavy_s = 0;
    std::vector<double> weights; // seconds, by object index

    layout(const options& o, int p, int w)
        : ranks(p), workers(w), objects(o.objects_per_worker * w * p),
          heavy(o.shape == "step" ? int(std::lround(o.heavy_fraction * objects)) : 0),
          light_s(o.light_ms * 1e-3), heavy_s(o.light_ms * 1e-3 * o.heavy_factor),
          scatter(o.scatter) {
        weights.resize(std::size_t(objects));
        for (int i = 0; i < objects; ++i)
            weights[std::size_t(i)] = o.shape == "linear"
                                          ? light_s * (1 + (o.ratio - 1) * double(rank_order(i)) /
                                                               double(std::max(objects - 1, 1)))
                                      : is_heavy(i) ? heavy_s
                                                    : light_s;
    }

    int home(int i) const { return i % ranks; }
    // Position of object i when the objects are listed rank by rank, each rank's in send order.
    int rank_order(int i) const { return home(i) * (objects / ranks) + i / ranks; }
    bool is_heavy(int i) const {
        if (scatter)
            return i < heavy;         // the first H in round-robin order: H / ranks per rank
        return rank_order(i) < heavy; // the first H in rank order
    }
    double weight_s(int i) const { return weights[std::size_t(i)]; }
    double total_s() const { return std::accumulate(weights.begin(), weights.end(), 0.0); }
    double largest_s() const {
        return weights.empty() ? 0.0 : *std::max_element(weights.begin(), weights.end());
    }
    double lower_bound_s() const {
        return std::max(total_s() / double(ranks * workers), largest_s());
    }
    // Static makespan if every item took exactly its weight: the most loaded worker of the
    // most loaded rank with items dealt to workers in order (an estimate for progress output).
    double static_estimate_s() const {
        double worst = 0;
        for (int r = 0; r < ranks; ++r) {
            std::vector<double> w(std::size_t(workers), 0.0);
            for (int i = r; i < objects; i += ranks)
                *std::min_element(w.begin(), w.end()) += weight_s(i);
            worst = std::max(worst, *std::max_element(w.begin(), w.end()));
        }
        return worst;
    }

    bool scatter;
};

// What this process records during phase 2. One mutex: events arrive in time order.
enum class ev : std::uint8_t {
    avail,  // the owner sends the item (the handler becomes runnable here shortly)
    arrive, // the object is installed here by a migration, with its pending item
    depart, // the object is packed here for a migration
    begin,  // a chunk starts (the handler is running)
    end,    // a chunk ends at a yield point that suspends (the handler is runnable again)
    done,   // the last chunk ends: the item is finished
};

struct event {
    double t;
    int object;
    ev kind;
};

struct recorder {
    std::mutex mutex;
    bool on = false;
    std::vector<event> events;
    std::vector<double> busy; // per worker of this rank
    std::vector<int> runs;    // per object: items finished on this rank
    std::vector<double> item; // per object: time inside its chunks on this rank
    double last_done = 0;

    void reset(int workers, int objects) {
        std::lock_guard lock(mutex);
        events.clear();
        events.reserve(1 << 16);
        busy.assign(std::size_t(workers), 0.0);
        runs.assign(std::size_t(objects), 0);
        item.assign(std::size_t(objects), 0.0);
        last_done = 0;
    }

    double log(int object, ev kind) {
        std::lock_guard lock(mutex);
        double t = now_s();
        if (on)
            events.push_back({t, object, kind});
        return t;
    }

    // A chunk ran on `worker` from `since`; `final`: the item is finished.
    void chunk_done(int object, int worker, double since, bool final) {
        std::lock_guard lock(mutex);
        double t = now_s();
        if (!on)
            return;
        events.push_back({t, object, final ? ev::done : ev::end});
        busy[std::size_t(std::clamp(worker, 0, int(busy.size()) - 1))] += t - since;
        item[std::size_t(object)] += t - since;
        if (final) {
            ++runs[std::size_t(object)];
            last_done = std::max(last_done, t);
        }
    }
} rec;

work_kind g_work = work_kind::sleep;
double g_chunk_s = 1e-3;
constexpr double spin_step_s = 50e-6;
std::atomic<int> g_items_done{0};

// A mobile object with one work item. load() tells the balancer what its pending item weighs:
// its weight, or with --declared-error a wrong estimate of it.
struct item {
    int idx = -1;
    double weight_ms = 0;
    int runs = 0;
    double declared_ms = 0;

    double load() const { return declared_ms; }

    template <class Ar> void serialize(Ar& ar) {
        if constexpr (Ar::is_saving::value)
            rec.log(idx, ev::depart);
        ar(idx, weight_ms, runs, declared_ms);
        if constexpr (Ar::is_loading::value)
            rec.log(idx, ev::arrive);
    }
};

// Does up to `remaining` seconds of work; returns how much it did.
double work_step(double remaining) {
    if (g_work == work_kind::sleep) {
        auto t = clk::now();
        auto len = std::chrono::duration<double>(std::min(g_chunk_s, remaining));
        std::this_thread::sleep_until(t + std::chrono::duration_cast<clk::duration>(len));
        return std::chrono::duration<double>(clk::now() - t).count();
    }
    double c0 = example::stopwatch::thread_cpu_s(), target = std::min(spin_step_s, remaining),
           used = 0;
    volatile double sink = 1;
    do {
        for (int k = 0; k < 256; ++k)
            sink = sink * 1.0000001 + 1e-9;
        used = example::stopwatch::thread_cpu_s() - c0;
    } while (used < target);
    return used;
}

// The work item: exclusive access to the object (first parameter T&).
prema::task<> run_item(item& it) {
    int worker = prema::detail::worker_pool::current_index();
    double since = rec.log(it.idx, ev::begin);
    double remaining = it.weight_ms * 1e-3;
    while (true) {
        remaining -= work_step(remaining);
        if (remaining <= 0)
            break;
        auto y = prema::yield_point();
        if (!y.ready) { // the quantum has expired: this suspends, the worker is free
            rec.chunk_done(it.idx, worker, since, false);
            co_await y;
            worker = prema::detail::worker_pool::current_index();
            since = rec.log(it.idx, ev::begin);
        }
    }
    ++it.runs;
    rec.chunk_done(it.idx, worker, since, true);
    g_items_done.fetch_add(1, std::memory_order_relaxed);
}

// --warmup: a tenth of the item's work, unrecorded, so that the runtime measures the object.
prema::task<> warm_up(item& it) {
    double remaining = it.weight_ms * 1e-4;
    while ((remaining -= work_step(remaining)) > 0)
        co_await prema::yield_point();
}

// The factor object i's load() is off by: X^u, u in [-1, 1] from a fixed hash of i, so that
// every run (and every policy) sees the same wrong estimates.
double declared_factor(int i, double x) {
    std::uint32_t h = std::uint32_t(i) * 2654435761u;
    h ^= h >> 16;
    double u = double(h % 2001) / 1000.0 - 1.0;
    return std::pow(x, u);
}

// Overhead of one rank over [t0, t1]: see the top of the file.
double rank_overhead(const std::vector<event>& events, int workers, double t0, double t1) {
    int running = 0, runnable = 0;
    double prev = t0, overhead = 0;
    auto advance = [&](double t) {
        t = std::clamp(t, t0, t1);
        if (t > prev)
            overhead += double(std::min(workers - running, runnable)) * (t - prev);
        prev = std::max(prev, t);
    };
    for (const auto& e : events) {
        advance(e.t);
        switch (e.kind) {
        case ev::avail:
        case ev::arrive:
            ++runnable;
            break;
        case ev::depart:
            --runnable;
            break;
        case ev::begin:
            --runnable, ++running;
            break;
        case ev::end:
            --running, ++runnable;
            break;
        case ev::done:
            --running;
            break;
        }
    }
    advance(t1);
    return overhead;
}

// --trace: the events that show where objects went and when items ended.
void print_trace(const std::vector<event>& events, const std::string& label, int me, double t0) {
    std::string out;
    char line[160];
    for (const auto& e : events) {
        const char* what = e.kind == ev::avail    ? "sent"
                           : e.kind == ev::arrive ? "installed"
                           : e.kind == ev::depart ? "packed"
                           : e.kind == ev::done   ? "finished"
                                                  : nullptr;
        if (!what)
            continue;
        std::snprintf(line, sizeof line, "trace [%s] %.6f rank %d object %d %s\n", label.c_str(),
                      e.t - t0, me, e.object, what);
        out += line;
    }
    std::fputs(out.c_str(), stderr);
}

// ---------------------------------------------------------------------------------------------
// One run: phase 1 (placement) and phase 2 (the measured work), on a fresh runtime.

struct run_result {
    std::string policy;
    std::uint64_t quantum_us = 0;
    std::string progress;
    double makespan = 0, work_span = 0; // to quiescence / to the last item's end
    std::vector<double> busy;           // per worker, rank-major
    std::vector<double> item;           // per object: time inside its chunks (rank 0 only)
    double overhead = 0, idle = 0, transit = 0;
    std::uint64_t migrations = 0, messages = 0, arrivals = 0;
    double max_wait = 0;
    int bad_objects = 0; // items not run exactly once
    bool ok = true;

    double busy_sum() const { return std::accumulate(busy.begin(), busy.end(), 0.0); }
    double busy_min() const { return *std::min_element(busy.begin(), busy.end()); }
    double busy_max() const { return *std::max_element(busy.begin(), busy.end()); }
    double busy_avg() const { return busy_sum() / double(busy.size()); }
    double overhead_fraction() const { return overhead / (double(busy.size()) * makespan); }
};

run_result run_once(const options& o, prema::config cfg, const std::string& policy,
                    const std::string& label) {
    int me = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    cfg.lb = policy;
    const layout lay(o, p, cfg.workers);
    const int w = cfg.workers, n = lay.objects;
    run_result res;
    res.policy = policy;
    res.quantum_us = cfg.quantum_us;
    res.progress = prema::to_string(cfg.progress);

    prema::runtime rt(MPI_COMM_WORLD, cfg);
    prema::lb::enable_balancing(false); // phase 2 turns it on (before or after the sends)

    // Phase 1: rank 0 creates everything and deals it out round robin; nothing balances yet.
    if (me == 0)
        std::fprintf(stderr, "[%s] phase 1: rank 0 creates %d objects and disperses them\n",
                     label.c_str(), n);
    std::vector<prema::mobile_ptr<item>> all(static_cast<std::size_t>(n));
    res.ok &= rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        for (int i = 0; i < n; ++i) {
            const double ms = lay.weight_s(i) * 1e3;
            all[std::size_t(i)] =
                prema::make_mobile<item>(item{i, ms, 0, ms * declared_factor(i, o.declared_error)});
            if (lay.home(i) != 0)
                prema::spawn(prema::migrate(all[std::size_t(i)], lay.home(i)));
        }
    }) == 0;
    MPI_Bcast(all.data(), int(all.size() * sizeof(all[0])), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (o.warmup > 0) {
        if (me == 0)
            std::fprintf(stderr, "[%s] warm-up: %d item(s) of a tenth of the weight per object\n",
                         label.c_str(), o.warmup);
        res.ok &= rt.run([&]() -> prema::task<> {
            for (int k = 0; k < o.warmup; ++k)
                for (int i = prema::rank(); i < n; i += lay.ranks)
                    co_await prema::send(all[std::size_t(i)], prema::fn<&warm_up>);
        }) == 0;
    }
    auto before = prema::lb::current_stats();

    // Phase 2: the measured work.
    rec.reset(w, n);
    {
        std::lock_guard lock(rec.mutex);
        rec.on = true;
    }
    g_items_done.store(0);
    bool balance = policy != "none";
    if (balance && !o.enable_after_send)
        prema::lb::enable_balancing(true);
    if (me == 0)
        std::fprintf(stderr, "[%s] phase 2: %d items (%s, %s), expected static makespan %.2f s\n",
                     label.c_str(), n, work_name(o), o.scatter ? "scattered" : "clustered",
                     lay.static_estimate_s());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s(), t_end = 0;
    {
        example::ticker tick(me == 0, "  [" + label + "]", [] {
            return std::to_string(g_items_done.load()) + " items finished on rank 0";
        });
        res.ok &= rt.run([&]() -> prema::task<> {
            int r = prema::rank();
            for (int i = r; i < n; i += lay.ranks) {
                rec.log(i, ev::avail);
                co_await prema::send(all[std::size_t(i)], prema::fn<&run_item>);
            }
            if (balance && o.enable_after_send)
                prema::lb::enable_balancing(true);
        }) == 0;
        t_end = now_s(); // before the ticker's thread is joined
    }
    {
        std::lock_guard lock(rec.mutex);
        rec.on = false;
    }
    prema::lb::enable_balancing(false);
    auto after = prema::lb::current_stats();

    // Per-rank figures, then reductions to rank 0.
    double span = t_end - t0, last = rec.last_done > 0 ? rec.last_done - t0 : 0;
    if (o.trace)
        print_trace(rec.events, label, me, t0);
    double makespan = 0, work_span = 0;
    MPI_Allreduce(&span, &makespan, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&last, &work_span, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double local[3] = {rank_overhead(rec.events, w, t0, t0 + makespan), 0, 0}, sums[3] = {};
    for (auto& e : rec.events) {
        if (e.kind == ev::arrive)
            local[1] += e.t - t0, local[2] += 1;
        else if (e.kind == ev::depart)
            local[1] -= e.t - t0;
    }
    MPI_Reduce(local, sums, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    std::uint64_t counts[2] = {after.migrations_out - before.migrations_out,
                               after.messages - before.messages},
                  count_sums[2] = {};
    MPI_Reduce(counts, count_sums, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&after.max_answer_wait_s, &res.max_wait, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    std::vector<int> runs(std::size_t(n), 0);
    MPI_Reduce(rec.runs.data(), runs.data(), n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    res.item.assign(std::size_t(n), 0.0);
    MPI_Reduce(rec.item.data(), res.item.data(), n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    res.busy.assign(std::size_t(w * p), 0.0);
    MPI_Gather(rec.busy.data(), w, MPI_DOUBLE, res.busy.data(), w, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int ok = res.ok, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    res.ok = all_ok != 0;
    res.makespan = makespan;
    res.work_span = work_span;
    res.overhead = sums[0];
    res.transit = sums[1];
    res.arrivals = std::uint64_t(sums[2]);
    res.migrations = count_sums[0];
    res.messages = count_sums[1];
    if (me == 0) {
        res.idle = double(w * p) * makespan - res.busy_sum() - res.overhead;
        for (int c : runs)
            res.bad_objects += c != 1;
        if (res.bad_objects)
            res.ok = false;
        std::fprintf(stderr,
                     "[%s] done: makespan %.3f s, %llu migrations, %d item(s) not run exactly "
                     "once\n",
                     label.c_str(), res.makespan, (unsigned long long)res.migrations,
                     res.bad_objects);
    }
    return res;
}

// ---------------------------------------------------------------------------------------------
// Output

void print_header(const options& o, const layout& lay, const prema::config& cfg) {
    std::printf("PREMA synthetic load-balancing benchmark: %d ranks x %d worker(s), %s progress, "
                "quantum %llu us, lb period %llu us\n",
                lay.ranks, lay.workers, prema::to_string(cfg.progress).c_str(),
                (unsigned long long)cfg.quantum_us, (unsigned long long)cfg.lb_period_us);
    if (o.shape == "linear")
        std::printf("%d objects (%d per worker), weights linear in rank order from 1 to %.3g x; "
                    "lightest item ",
                    lay.objects, o.objects_per_worker, o.ratio);
    else
        std::printf("%d objects (%d per worker), %d heavy (%.3g x) %s on the first ranks; light "
                    "item ",
                    lay.objects, o.objects_per_worker, lay.heavy, o.heavy_factor,
                    o.scatter ? "scattered, not clustered," : "clustered");
    std::printf("%.1f ms of %s work (chunks of %ld us)%s\n", o.light_ms, work_name(o),
                work_kind(o.work) == work_kind::sleep ? o.chunk_us : 50L,
                work_kind(o.work) == work_kind::spin ? " [thread CPU time]" : "");
    std::printf("lb-load %s; load() off by up to %.3g x either way; %d warm-up item(s) per "
                "object\n",
                prema::to_string(cfg.lb_load).c_str(), o.declared_error, o.warmup);
    std::printf("balancing turned on %s\n", o.enable_after_send
                                                ? "by each rank once it has sent its items"
                                                : "on every rank before phase 2 starts");
    std::printf("total work %.3f s, lower bound max(total / %d workers, largest item %.3f s) = "
                "%.3f s\n\n",
                lay.total_s(), lay.ranks * lay.workers, lay.largest_s(), lay.lower_bound_s());
}

void print_table(const std::vector<run_result>& runs, const run_result& base, double lower) {
    std::printf("%-15s %9s %7s %8s %6s %6s | %7s %7s %7s | %9s %6s %8s %8s | %5s %6s %8s\n",
                "policy", "makespan", "last", "vs none", "eff", "speedup", "busy", "min", "max",
                "overhead", "%", "idle", "transit", "migr", "msgs", "max wait");
    std::printf("%-15s %9s %7s %8s %6s %6s | %7s %7s %7s | %9s %6s %8s %8s | %5s %6s %8s\n", "",
                "s", "item s", "", "", "", "avg s", "s", "s", "w-s", "", "w-s", "s", "", "", "ms");
    auto row = [&](const run_result& r) {
        double cut = 1 - r.makespan / base.makespan;
        std::printf("%-15s %9.3f %7.3f %+7.1f%% %5.1f%% %5.2fx | %7.3f %7.3f %7.3f | %9.4f %5.2f%% "
                    "%8.3f %8.4f | %5llu %6llu %8.2f%s\n",
                    r.policy.c_str(), r.makespan, r.work_span, -100 * cut, 100 * lower / r.makespan,
                    base.makespan / r.makespan, r.busy_avg(), r.busy_min(), r.busy_max(),
                    r.overhead, 100 * r.overhead_fraction(), r.idle, r.transit,
                    (unsigned long long)r.migrations, (unsigned long long)r.messages,
                    r.max_wait * 1e3, r.ok ? "" : "  FAILED");
    };
    row(base);
    for (auto& r : runs)
        if (r.policy != "none")
            row(r);
    std::printf("\nmakespan: barrier to global quiescence (max over ranks); last item: barrier to "
                "the end of the last item;\n'vs none': makespan change against static placement "
                "(negative = faster); eff = lower bound / makespan;\noverhead and idle in "
                "worker-seconds over all "
                "workers, %% = overhead / (workers x makespan); transit is part of idle.\n");
}

void print_targets(const std::vector<run_result>& runs, const run_result& base, double lower) {
    std::vector<const run_result*> policies;
    for (auto& r : runs)
        if (r.policy != "none")
            policies.push_back(&r);
    if (policies.empty())
        return;
    std::printf("\nTargets (issue 4):\n");
    for (auto* r : policies) {
        double cut = 1 - r->makespan / base.makespan;
        std::printf("  %-15s >=25%% faster than none: %s (%.1f%% shorter)   overhead < 1%%: %s "
                    "(%.2f%%)\n",
                    r->policy.c_str(), cut >= 0.25 ? "yes" : "NO ", 100 * cut,
                    r->overhead_fraction() < 0.01 ? "yes" : "NO ", 100 * r->overhead_fraction());
    }
    auto best = *std::min_element(policies.begin(), policies.end(),
                                  [](auto* a, auto* b) { return a->makespan < b->makespan; });
    std::printf("  best: %s, %.3f s = %.3f x lower bound: within 10%%: %s\n", best->policy.c_str(),
                best->makespan, best->makespan / lower,
                best->makespan <= 1.10 * lower ? "yes" : "NO");
}

void json_list(std::FILE* f, const std::vector<double>& v) {
    std::fprintf(f, "[");
    for (std::size_t i = 0; i < v.size(); ++i)
        std::fprintf(f, "%s%.6f", i ? ", " : "", v[i]);
    std::fprintf(f, "]");
}

void json_run(std::FILE* f, const run_result& r, const run_result& base, const layout& lay,
              const options& o, const char* indent) {
    std::fprintf(f, "%s{\"policy\": \"%s\", \"ranks\": %d, \"workers\": %d, ", indent,
                 r.policy.c_str(), lay.ranks, lay.workers);
    std::fprintf(f,
                 "\"makespan_s\": %.6f, \"lower_bound_s\": %.6f, \"static_makespan_s\": %.6f, "
                 "\"migrations\": %llu, \"overhead_s\": %.6f,\n%s \"per_worker_busy_s\": ",
                 r.makespan, lay.lower_bound_s(), base.makespan, (unsigned long long)r.migrations,
                 r.overhead, indent);
    json_list(f, r.busy);
    std::fprintf(f, ",\n%s \"static_per_worker_busy_s\": ", indent);
    json_list(f, base.busy);
    std::fprintf(f,
                 ",\n%s \"efficiency\": %.4f, \"work_span_s\": %.6f, \"overhead_fraction\": %.6f, "
                 "\"idle_s\": %.6f, \"transit_s\": %.6f, \"policy_messages\": %llu, "
                 "\"max_answer_wait_s\": %.6f, \"static_overhead_s\": %.6f,\n%s \"objects\": %d, "
                 "\"heavy\": %d, \"light_ms\": %.3f, \"heavy_factor\": %.3f, \"work\": \"%s\", "
                 "\"shape\": \"%s\", \"ratio\": %.3f, \"placement\": \"%s\", \"balancing_on\": "
                 "\"%s\", \"progress\": \"%s\", "
                 "\"quantum_us\": %llu, \"ok\": %s}",
                 indent, lay.lower_bound_s() / r.makespan, r.work_span, r.overhead_fraction(),
                 r.idle, r.transit, (unsigned long long)r.messages, r.max_wait, base.overhead,
                 indent, lay.objects, lay.heavy, o.light_ms, o.heavy_factor, work_name(o),
                 o.shape.c_str(), o.ratio, o.scatter ? "scattered" : "clustered",
                 o.enable_after_send ? "after_send" : "before_phase", r.progress.c_str(),
                 (unsigned long long)r.quantum_us, r.ok ? "true" : "false");
}

// --csv: the static run's objects, the format prema-model reads (declared_s: what load() said,
// for prema-model --prema-lb-load declared).
bool write_csv(const std::string& path, const run_result& base, const layout& lay,
               const options& o) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(("lb_synthetic: cannot write " + path).c_str());
        return false;
    }
    std::fprintf(f, "object,rank,weight_s,measured_s,declared_s\n");
    for (int i = 0; i < lay.objects; ++i)
        std::fprintf(f, "%d,%d,%.6f,%.6f,%.6f\n", i, lay.home(i), lay.weight_s(i),
                     base.item[std::size_t(i)],
                     lay.weight_s(i) * declared_factor(i, o.declared_error));
    std::fclose(f);
    return true;
}

bool write_json(const std::string& path, const std::vector<run_result>& runs,
                const run_result& base, const layout& lay, const options& o) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(("lb_synthetic: cannot write " + path).c_str());
        return false;
    }
    if (!o.policies.all && runs.size() == 1) {
        json_run(f, runs.front(), base, lay, o, "");
        std::fprintf(f, "\n");
    } else {
        std::fprintf(f, "{\"runs\": [\n");
        for (std::size_t i = 0; i < runs.size(); ++i) {
            json_run(f, runs[i], base, lay, o, "  ");
            std::fprintf(f, "%s\n", i + 1 < runs.size() ? "," : "");
        }
        std::fprintf(f, "]}\n");
    }
    std::fclose(f);
    return true;
}

// ---------------------------------------------------------------------------------------------

int main_balance(const options& o, const prema::config& base_cfg, int me, int p) {
    layout lay(o, p, base_cfg.workers);
    auto policies = o.policies.resolve(base_cfg.lb, "work_stealing");
    if (me == 0)
        print_header(o, lay, base_cfg);

    bool ok = true;
    run_result base = run_once(o, base_cfg, "none", "none");
    ok &= base.ok;
    std::vector<run_result> runs;
    for (auto& name : policies) {
        if (name == "none")
            runs.push_back(base);
        else
            runs.push_back(run_once(o, base_cfg, name, name));
        ok &= runs.back().ok;
    }
    if (me != 0)
        return ok ? 0 : 1;
    print_table(runs, base, lay.lower_bound_s());
    print_targets(runs, base, lay.lower_bound_s());
    if (!o.json.empty() && write_json(o.json, runs, base, lay, o))
        std::printf("wrote %s\n", o.json.c_str());
    if (!o.csv.empty() && write_csv(o.csv, base, lay, o))
        std::printf("wrote %s\n", o.csv.c_str());
    if (!ok)
        std::fprintf(stderr, "lb_synthetic: a run failed (see above)\n");
    return ok ? 0 : 1;
}

int main_preemption(const options& o, prema::config cfg, int me, int p) {
    std::string policy = o.policies.resolve(cfg.lb, "work_stealing").front();
    cfg.progress = prema::progress_mode::inline_;
    std::uint64_t quantum = cfg.quantum_us ? cfg.quantum_us : 1000;
    layout lay(o, p, cfg.workers);
    if (me == 0) {
        if (p != 4)
            std::fprintf(stderr,
                         "lb_synthetic: the preemption run is specified for 4 ranks "
                         "(mpirun -np 4); running on %d\n",
                         p);
        std::printf("Preemption run: policy %s, yield points on (quantum %llu us) and off "
                    "(quantum 0)\n",
                    policy.c_str(), (unsigned long long)quantum);
        prema::config shown = cfg;
        shown.quantum_us = quantum;
        print_header(o, lay, shown);
    }
    std::vector<run_result> runs;
    bool ok = true;
    for (std::uint64_t q : {quantum, std::uint64_t(0)}) {
        cfg.quantum_us = q;
        runs.push_back(run_once(o, cfg, policy, policy + ", quantum " + std::to_string(q)));
        ok &= runs.back().ok;
    }
    if (me != 0)
        return ok ? 0 : 1;
    // On one host, spin work cannot finish before total CPU work / min(workers, cores).
    int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    double wall_bound =
        std::max(lay.total_s() / double(std::min(lay.ranks * lay.workers, cores)), lay.largest_s());
    std::printf("%-12s %12s %9s %6s %10s | %16s\n", "yield points", "quantum us", "makespan",
                "migr", "messages", "max answer wait");
    for (auto& r : runs)
        std::printf("%-12s %12llu %8.3fs %6llu %10llu | %13.2f ms%s\n", r.quantum_us ? "on" : "off",
                    (unsigned long long)r.quantum_us, r.makespan, (unsigned long long)r.migrations,
                    (unsigned long long)r.messages, r.max_wait * 1e3, r.ok ? "" : "  FAILED");
    std::printf("\nmax answer wait: the longest time any rank's policy waited for the reply to a "
                "request (lb::stats),\nmax over ranks. Work is thread CPU time; with %d ranks on "
                "%d core(s) of this host the makespan\ncannot be below %.3f s (total work / "
                "min(workers, cores)).\n",
                lay.ranks, cores, wall_bound);
    if (!o.json.empty()) {
        std::FILE* f = std::fopen(o.json.c_str(), "w");
        if (!f) {
            std::perror(("lb_synthetic: cannot write " + o.json).c_str());
            return 1;
        }
        std::fprintf(f,
                     "{\"mode\": \"preemption\", \"policy\": \"%s\", \"ranks\": %d, \"workers\": "
                     "%d, \"progress\": \"inline\", \"work\": \"%s\", \"light_ms\": %.3f, "
                     "\"heavy_factor\": %.3f, \"objects\": %d, \"heavy\": %d, \"lower_bound_s\": "
                     "%.6f,\n \"runs\": [\n",
                     policy.c_str(), lay.ranks, lay.workers, work_name(o), o.light_ms,
                     o.heavy_factor, lay.objects, lay.heavy, lay.lower_bound_s());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            auto& r = runs[i];
            std::fprintf(f,
                         "  {\"yield_points\": %s, \"quantum_us\": %llu, \"max_answer_wait_s\": "
                         "%.6f, \"makespan_s\": %.6f, \"migrations\": %llu, \"policy_messages\": "
                         "%llu, \"overhead_s\": %.6f, \"per_worker_busy_s\": ",
                         r.quantum_us ? "true" : "false", (unsigned long long)r.quantum_us,
                         r.max_wait, r.makespan, (unsigned long long)r.migrations,
                         (unsigned long long)r.messages, r.overhead);
            json_list(f, r.busy);
            std::fprintf(f, "}%s\n", i + 1 < runs.size() ? "," : "");
        }
        std::fprintf(f, "]}\n");
        std::fclose(f);
        std::printf("wrote %s\n", o.json.c_str());
    }
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    options o;
    example::cli cli("lb_synthetic", description);
    o.add_to(cli, argc, argv);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) {
        int me = 0, p = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &p);
        g_work = work_kind(o.work);
        g_chunk_s = double(o.chunk_us) * 1e-6;
        return o.preemption ? main_preemption(o, cfg, me, p) : main_balance(o, cfg, me, p);
    });
}
