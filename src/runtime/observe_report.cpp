#include "runtime/observe_report.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/log.hpp"
#include "objects/measured_load.hpp"
#include "prema/objects/objects.hpp"
#include "runtime/core_sharing.hpp"
#include "runtime/gather_parts.hpp"
#include "runtime/runtime_state.hpp"
#include "transport/observe.hpp"
#include "transport/tree_blocking.hpp"

namespace prema::detail {

namespace {

std::uint64_t g_forwards_at_start = 0;

constexpr int n_fields = 14;

void print_stats(const std::vector<double>& all, int size, int workers, const std::string& progress,
                 const std::string& load) {
    std::string t = fmt::format("prema stats ({} ranks, {} worker(s) per rank, progress {}; "
                                "lb-load {}; times in ms, overhead = workers x wall - busy - idle, "
                                "measured = object handlers' running time, timed = how many)\n",
                                size, workers, progress, load);
    t += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>7} {:>7} {:>10} "
                     "{:>10} {:>10} {:>10} {:>10}\n",
                     "rank", "handlers", "obj-hndlrs", "msgs-sent", "msgs-recv", "bytes-sent",
                     "bytes-recv", "forwards", "mig-in", "mig-out", "busy", "idle", "overhead",
                     "measured", "timed");
    std::vector<double> total(n_fields, 0);
    auto row = [&](const std::string& label, const double* v) {
        t += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>7} {:>7} "
                         "{:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10}\n",
                         label, std::uint64_t(v[0]), std::uint64_t(v[1]), std::uint64_t(v[2]),
                         std::uint64_t(v[3]), std::uint64_t(v[4]), std::uint64_t(v[5]),
                         std::uint64_t(v[6]), std::uint64_t(v[7]), std::uint64_t(v[8]), v[9] / 1e3,
                         v[10] / 1e3, v[11] / 1e3, v[12] / 1e3, std::uint64_t(v[13]));
    };
    for (int r = 0; r < size; ++r) {
        const double* v = &all[std::size_t(r * n_fields)];
        row(std::to_string(r), v);
        for (int i = 0; i < n_fields; ++i)
            total[std::size_t(i)] += v[i];
    }
    row("all", total.data());
    std::fputs(t.c_str(), stdout);
    std::fflush(stdout);
}

} // namespace

void observe_start(runtime_state& st, unsigned flags) {
    // The flags are the job's: a rank without the options takes part in the gathers at the end.
    observe_begin(flags, st.cfg.workers);
    if (!flags)
        return;
    g_forwards_at_start = forward_count();
    tree_min(st.comm, {}); // a barrier, before the progress engine uses the communicator
    observe_restart_clock();
}

void observe_finish(runtime_state& st) {
    unsigned flags = observe_end();
    if (!flags)
        return;
    if (flags & observe_stats) {
        std::uint64_t busy = 0, idle = 0;
        if (st.workers)
            st.workers->time_totals(busy, idle);
        // The overhead is a small difference of large sums: taken in ticks, it owes nothing to
        // the rate calibrated over a few ms, whose error used to swamp (and clamp) it.
        double tpu = ticks_per_us();
        double busy_us = double(busy) / tpu, idle_us = double(idle) / tpu;
        auto& c = observed_counters();
        auto worker_ticks = std::int64_t(c.wall_ticks.load()) * st.cfg.workers;
        double overhead_us = double(worker_ticks - std::int64_t(busy) - std::int64_t(idle)) / tpu;
        const auto measured = measured_so_far();
        std::vector<double> mine = {double(c.handlers.load()),
                                    double(c.object_handlers.load()),
                                    double(c.sent.load()),
                                    double(c.received.load()),
                                    double(c.bytes_sent.load()),
                                    double(c.bytes_received.load()),
                                    double(forward_count() - g_forwards_at_start),
                                    double(c.migrations_in.load()),
                                    double(c.migrations_out.load()),
                                    busy_us,
                                    idle_us,
                                    overhead_us,
                                    measured.seconds * 1e6,
                                    double(measured.runs)};
        std::vector<double> all(std::size_t(n_fields * st.size));
        MPI_Gather(mine.data(), n_fields, MPI_DOUBLE, all.data(), n_fields, MPI_DOUBLE, 0, st.comm);
        if (st.rank == 0)
            print_stats(all, st.size, st.cfg.workers,
                        describe_progress(st.requested_progress, st.cfg.progress),
                        to_string(st.cfg.lb_load));
    }
    if (flags & observe_trace) {
        // Rank 0 writes each rank's events as they arrive, one rank's at a time.
        std::FILE* f = nullptr;
        std::string path = st.cfg.trace.empty() ? "prema-trace.json" : st.cfg.trace;
        if (st.rank == 0 && !(f = std::fopen(path.c_str(), "w")))
            log().error("--prema-trace: cannot write {}", path);
        bool first = true;
        if (f)
            std::fputs("[\n", f);
        gather_parts(st.comm, take_trace_events(st.rank), [&](int, std::string_view part) {
            if (!f || part.empty())
                return;
            if (!first)
                std::fputs(",\n", f);
            std::fwrite(part.data(), 1, part.size(), f);
            first = false;
        });
        if (f) {
            std::fputs("\n]\n", f);
            std::fclose(f);
        }
    }
}

} // namespace prema::detail
