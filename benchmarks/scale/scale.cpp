// How PREMA's collectives and its busiest rank grow with the number of ranks: one run per P
// (benchmarks/run_scale.sh runs P = 8 ... 256, oversubscribed), one row per operation:
//
//   {"ranks":P,"op":"all_reduce","busiest_msgs":M,"busiest_bytes":B,"rss_kb":K,
//    "rss_after_mpi_init_kb":K0,"heap_kb":H,"anon_kb":A,"anon_after_mpi_init_kb":A0,
//    "file_kb":F,"shmem_kb":S}
//
// busiest: the rank that handled (sent plus received) the most handler messages during the
// operation; its messages and their wire bytes per call (incast: in all), its peak RSS after the
// operation (VmHWM; the operations run in the order below, the incast last since it is the
// heaviest; the peak counts from the start of the runtime, VmHWM being reset there), its RSS
// right after MPI_Init (MPI's own state, not PREMA's; the figures are gathered after the last
// operation, so that the benchmark's own MPI traffic adds nothing before) and its peak C++ heap
// after the operation (heap_count.hpp: PREMA's own memory, without the state MPI makes after
// MPI_Init). The RSS counts pages of three kinds, told apart by anon_kb, file_kb and shmem_kb (the
// busiest rank's RssAnon, RssFile and RssShmem after the operation, as they are then, not their
// peaks): anonymous memory (the heaps and stacks of PREMA and MPI), file-backed pages (the code of
// PREMA, MPI and the C++ library, faulted in as it first runs and shared by every rank of a node)
// and shared memory (MPI's shared-memory transport: its segments and the pages of its peers'
// segments this rank has touched). Only the first is a rank's own memory. Counts only, no times:
// the counts are exact on a loaded machine, times are not.
//
// Operations, each in a phase of its own, --calls times (create_many once):
//   all_reduce   every rank: co_await all_reduce(double, plus)
//   broadcast    rank 0: broadcast of a handler taking an int, then quiescence
//   gather       rank 0: gather over --objects-per-rank objects on every rank (each rank calls
//                its objects through the object path: 2 messages to itself per object)
//   create_many  rank 0: create_many of --objects-per-rank objects per rank
//   quiescence   every rank: co_await quiescence() (its waves are not handler messages)
//   incast       every rank but 0 sends --incast-messages small messages to rank 0
// Runs with inline progress and one worker per rank, whatever the options say, so that P
// ranks fit on a few cores. --check fails the run if the busiest rank's messages per
// all_reduce, broadcast or gather exceed 2 * ceil(log2 P) + 4.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include <prema/prema.hpp>

#include "../../examples/common/cli.hpp"
#include "heap_count.hpp"
#include "transport/observe.hpp"

namespace {

struct options {
    int calls = 20;
    int incast_messages = 100000;
    int objects_per_rank = 1;
    std::string json;
    bool check = false;
};

// A field of /proc/self/status in KiB: the peak (VmHWM) or current (VmRSS) resident set, or a
// part of the current one (RssAnon, RssFile, RssShmem).
long status_kb(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string key = std::string(field) + ":";
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0)
            return std::stol(line.substr(key.size()));
    return 0;
}

struct cell {
    int value = 0;
    template <class Ar> void serialize(Ar& ar) { ar(value); }
};
int value_of(const cell& c) {
    return c.value;
}

std::atomic<long> g_arrived{0};
void arrive(int) {
    g_arrived.fetch_add(1, std::memory_order_relaxed);
}

struct row {
    std::string op;
    long long msgs = 0, bytes = 0, rss_kb = 0, rss_init_kb = 0, heap_kb = 0;
    long long anon_kb = 0, anon_init_kb = 0, file_kb = 0, shmem_kb = 0;
};

// This process's resident memory: all of it after MPI_Init, and its anonymous part.
struct resident {
    long rss_kb = 0, anon_kb = 0;
};

// A rank's figures of one operation, in row order from msgs to shmem_kb.
constexpr std::size_t fields = 9;
using figures = std::array<long long, fields>;

// Resets the peak RSS (VmHWM) to the current RSS, where Linux allows it (4.0 and later).
void reset_peak_rss() {
    std::ofstream("/proc/self/clear_refs") << "5";
}

class bench {
  public:
    bench(const options& o, const prema::config& cfg, resident at_init)
        : o_(o), rt_(MPI_COMM_WORLD, cfg), at_init_(at_init) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        prema::detail::count_messages(true);
    }

    // Runs `entry` as a phase and notes this rank's figures, per call (`per` calls). They are
    // gathered after the last operation: MPI's collectives would reach peers of their own.
    void measure(const std::string& op, long per, std::function<prema::task<>()> entry) {
        auto before = prema::detail::counted_messages();
        if (rt_.run(std::move(entry)) != 0)
            failed_ = true;
        auto after = prema::detail::counted_messages();
        mine_.push_back({(long long)(after.sent + after.received - before.sent - before.received),
                         (long long)(after.bytes_sent + after.bytes_received - before.bytes_sent -
                                     before.bytes_received),
                         status_kb("VmHWM"), at_init_.rss_kb, scale_bench::heap_peak_bytes() / 1024,
                         status_kb("RssAnon"), at_init_.anon_kb, status_kb("RssFile"),
                         status_kb("RssShmem")});
        ops_.push_back({op, per});
    }

    // Each operation's row: the figures of its busiest rank.
    std::vector<row> busiest_rows() const {
        const std::size_t ops = mine_.size(), size = std::size_t(size_);
        std::vector<figures> all(rank_ == 0 ? ops * size : 0);
        MPI_Gather(mine_.data(), int(ops * fields), MPI_LONG_LONG, all.data(), int(ops * fields),
                   MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        std::vector<row> rows;
        for (std::size_t k = 0; k < ops && rank_ == 0; ++k) {
            std::size_t busiest = 0;
            for (std::size_t r = 1; r < size; ++r)
                if (all[r * ops + k][0] > all[busiest * ops + k][0])
                    busiest = r;
            const figures& b = all[busiest * ops + k];
            const long long per = ops_[k].per;
            rows.push_back({ops_[k].name, (b[0] + per - 1) / per, (b[1] + per - 1) / per, b[2],
                            b[3], b[4], b[5], b[6], b[7], b[8]});
        }
        return rows;
    }

    int run_all() {
        const int n = size_, calls = o_.calls, objects = o_.objects_per_rank * n;
        measure("all_reduce", calls, [&]() -> prema::task<> {
            for (int i = 0; i < calls; ++i)
                co_await prema::all_reduce(double(prema::rank()), std::plus<>{});
        });
        measure("broadcast", calls, [&]() -> prema::task<> {
            if (prema::rank() == 0)
                for (int i = 0; i < calls; ++i)
                    co_await prema::broadcast(prema::fn<&arrive>, i);
            co_await prema::quiescence();
        });
        std::vector<prema::mobile_ptr<cell>> cells;
        bool cells_ok = true;
        measure("create_many", 1, [&]() -> prema::task<> {
            if (prema::rank() == 0)
                cells = co_await prema::create_many<cell>(
                    std::size_t(objects), prema::placement::round_robin,
                    [](std::size_t i) { return cell{int(i)}; });
        });
        measure("gather", calls, [&]() -> prema::task<> {
            if (prema::rank() != 0)
                co_return;
            for (int i = 0; i < calls; ++i) {
                auto values = co_await prema::gather(cells, prema::fn<&value_of>);
                for (std::size_t k = 0; k < values.size(); ++k)
                    cells_ok = cells_ok && values[k] == int(k);
            }
        });
        measure("quiescence", calls, [&]() -> prema::task<> {
            for (int i = 0; i < calls; ++i)
                co_await prema::quiescence();
        });
        g_arrived = 0;
        const int flood = o_.incast_messages;
        measure("incast", 1, [&]() -> prema::task<> {
            if (prema::rank() != 0)
                for (int i = 0; i < flood; ++i)
                    co_await prema::send(0, prema::fn<&arrive>, i);
        });
        const long expected = long(n - 1) * flood;
        bool ok = !failed_ && (rank_ != 0 || (cells_ok && g_arrived.load() == expected));
        if (rank_ == 0 && !ok)
            std::fprintf(stderr,
                         "scale: a phase failed, or rank 0 got %ld messages (expected %ld), "
                         "or a gathered value was wrong\n",
                         g_arrived.load(), expected);
        return report(ok);
    }

  private:
    int report(bool ok) {
        int all_ok = ok;
        MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        const auto rows = busiest_rows();
        if (rank_ != 0)
            return all_ok ? 0 : 1;
        const long long bound = 2 * std::bit_width(unsigned(size_ - 1)) + 4;
        std::printf("%6s %-12s %14s %14s %10s %16s %8s %8s %15s %8s %8s\n", "ranks", "op",
                    "busiest_msgs", "busiest_bytes", "rss_kb", "rss_after_init_kb", "heap_kb",
                    "anon_kb", "anon_after_init", "file_kb", "shmem_kb");
        std::string lines;
        for (auto& r : rows) {
            std::printf("%6d %-12s %14lld %14lld %10lld %16lld %8lld %8lld %15lld %8lld %8lld\n",
                        size_, r.op.c_str(), r.msgs, r.bytes, r.rss_kb, r.rss_init_kb, r.heap_kb,
                        r.anon_kb, r.anon_init_kb, r.file_kb, r.shmem_kb);
            lines += "{\"ranks\":" + std::to_string(size_) + ",\"op\":\"" + r.op +
                     "\",\"busiest_msgs\":" + std::to_string(r.msgs) +
                     ",\"busiest_bytes\":" + std::to_string(r.bytes) +
                     ",\"rss_kb\":" + std::to_string(r.rss_kb) +
                     ",\"rss_after_mpi_init_kb\":" + std::to_string(r.rss_init_kb) +
                     ",\"heap_kb\":" + std::to_string(r.heap_kb) +
                     ",\"anon_kb\":" + std::to_string(r.anon_kb) +
                     ",\"anon_after_mpi_init_kb\":" + std::to_string(r.anon_init_kb) +
                     ",\"file_kb\":" + std::to_string(r.file_kb) +
                     ",\"shmem_kb\":" + std::to_string(r.shmem_kb) + "}\n";
            bool collective = r.op == "all_reduce" || r.op == "broadcast" || r.op == "gather";
            if (o_.check && collective && r.msgs > bound) {
                std::fprintf(stderr,
                             "scale: %s: the busiest rank handled %lld messages per call, "
                             "more than 2 * ceil(log2 %d) + 4 = %lld\n",
                             r.op.c_str(), r.msgs, size_, bound);
                all_ok = false;
            }
        }
        if (!o_.json.empty()) {
            std::ofstream out(o_.json);
            out << lines;
            if (!out) {
                std::fprintf(stderr, "scale: cannot write %s\n", o_.json.c_str());
                all_ok = false;
            }
        }
        return all_ok ? 0 : 1;
    }

    const options& o_;
    prema::runtime rt_;
    resident at_init_;
    int rank_ = 0, size_ = 1;
    bool failed_ = false;
    struct op_name {
        std::string name;
        long per = 1;
    };
    std::vector<op_name> ops_;
    std::vector<figures> mine_; // by operation
};

} // namespace

int main(int argc, char** argv) {
    options o;
    example::cli cli("scale", "messages and memory of the busiest rank per collective, at this "
                              "job's number of ranks (inline progress, one worker per rank)");
    cli.add("--calls", "N", "calls of each collective", o.calls, 1, 1'000'000);
    cli.add("--incast-messages", "N", "messages each rank but 0 sends to rank 0", o.incast_messages,
            0, 100'000'000);
    cli.add("--objects-per-rank", "N", "objects per rank for gather and create_many",
            o.objects_per_rank, 1, 1'000'000);
    cli.add("--json", "FILE", "write one JSON row per operation (JSON Lines)", o.json);
    cli.add_flag("--check",
                 "fail if a collective's busiest rank exceeds 2 ceil(log2 P) + 4 "
                 "messages per call",
                 o.check);
    return example::main(argc, argv, cli, [&](const prema::config& given) {
        // MPI is initialised, no runtime yet.
        const resident at_init{status_kb("VmRSS"), status_kb("RssAnon")};
        reset_peak_rss();
        prema::config cfg = given;
        cfg.progress = prema::progress_mode::inline_;
        cfg.workers = 1;
        bench b(o, cfg, at_init);
        return b.run_all();
    });
}
