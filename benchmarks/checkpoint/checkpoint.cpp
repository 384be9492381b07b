// Checkpoint time and throughput: prema::checkpoint (io_uring) of S MiB of mobile-object state
// per rank, beside plain blocking pwrite + fsync of the same number of bytes, in the same run.
//
//   mpirun -np 2 ./checkpoint [--sizes 64,128,256,512,1024] [--objects 64] [--repeat 2]
//                             [--dir DIR] [--json FILE]          (--help lists every option)
//
// Per size, each rank holds --objects mobile objects of S / objects bytes each (pseudo-random
// words). Then, --repeat times, alternating:
//  - blocking: every rank writes a buffer of the same size as its checkpoint file (its objects'
//    bytes plus the records' framing, as last_checkpoint_stats() reports) to DIR/blocking-R.bin
//    with pwrite in 1 MiB chunks and fsync, between two barriers, on the main thread;
//  - checkpoint: every rank's entry coroutine times `co_await prema::checkpoint(DIR, root)`:
//    quiescence, packing the objects, checksums, io_uring writes (up to 64 chunks of 1 MiB in
//    flight), fsync, the manifest (write, fsync, rename, fsync of the directories) and the
//    agreement rounds.
// A time is the slowest rank's; the table shows the fastest repetition of each and the
// throughput per rank (file bytes / time): blocking write + fsync; the io_uring part of the
// checkpoint (prema::last_checkpoint_stats().write_s: packing the objects while their bytes are
// written, up to the rank file's fsync); and the whole checkpoint() call. Ratios are over the
// blocking time (below 1: faster). Files are removed after every run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <mpi.h>
#include <prema/prema.hpp>

#include "../../examples/common/cli.hpp"
#include "../../examples/common/json.hpp"

namespace {

namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

struct chunk {
    std::vector<std::uint64_t> words;
    template <class Ar> void serialize(Ar& ar) { ar(words); }
};

struct root {
    std::vector<prema::mobile_ptr<chunk>> chunks;
    template <class Ar> void serialize(Ar& ar) { ar(chunks); }
};

int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

double slowest(double mine) {
    double max = 0;
    MPI_Allreduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

// pwrite in 1 MiB chunks and fsync; seconds, slowest rank.
double blocking_write(const std::string& path, const std::vector<std::byte>& bytes) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clk::now();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        throw std::runtime_error(path + ": " + std::strerror(errno));
    constexpr std::size_t step = std::size_t{1} << 20;
    for (std::size_t at = 0; at < bytes.size();) {
        auto n = ::pwrite(fd, bytes.data() + at, std::min(step, bytes.size() - at), off_t(at));
        if (n <= 0)
            throw std::runtime_error(path + ": write: " + std::strerror(errno));
        at += std::size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0)
        throw std::runtime_error(path + ": fsync: " + std::strerror(errno));
    double s = std::chrono::duration<double>(clk::now() - t0).count();
    return slowest(s);
}

// Empties `dir` (rank 0) and commits the deletions (fsync of the directory), so that freeing
// gigabytes is not charged to the next measurement's fsync; collective.
void remove_all_in(const std::string& dir) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
        for (auto& e : fs::directory_iterator(dir))
            fs::remove_all(e.path());
        int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            ::fsync(fd);
            ::close(fd);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

std::vector<int> parse_sizes(const std::string& list) {
    std::vector<int> sizes;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        char* end = nullptr;
        long v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end || v < 1 || v > 65536)
            throw prema::usage_error("--sizes: '" + item + "' is not a size in MiB (1..65536)");
        sizes.push_back(int(v));
    }
    return sizes;
}

} // namespace

int main(int argc, char** argv) {
    std::string sizes_arg = "64,128,256,512,1024", dir = "checkpoint_bench.tmp", json_path;
    int objects = 64, repeat = 2;
    example::cli cli("checkpoint",
                     "prema::checkpoint (io_uring) of S MiB of mobile objects per rank against "
                     "blocking pwrite + fsync\nof the same bytes, in the same run.");
    cli.add("--sizes", "LIST", "object state per rank, MiB, comma-separated", sizes_arg);
    cli.add("--objects", "N", "mobile objects per rank", objects, 1, 1 << 20);
    cli.add("--repeat", "N", "runs of each method per size, alternating; the fastest counts",
            repeat, 1, 100);
    cli.add("--dir", "DIR", "scratch directory (on the file system to measure)", dir);
    cli.add("--json", "FILE", "also write the figures as JSON", json_path);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) {
        auto sizes = parse_sizes(sizes_arg);
        int me = 0, ranks = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        if (me == 0) {
            fs::create_directories(dir);
            std::printf("checkpoint: %d ranks, %d objects per rank, best of %d, in %s\n", ranks,
                        objects, repeat, fs::absolute(dir).c_str());
            std::printf("%9s %11s %8s | %11s %8s %6s | %11s %8s %6s\n", "MiB/rank", "blocking s",
                        "MiB/s", "uring wr s", "MiB/s", "ratio", "ckpt s", "MiB/s", "ratio");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        std::vector<example::json> rows;
        for (int mib : sizes) {
            std::size_t words = (std::size_t(mib) << 20) / 8 / std::size_t(objects);
            prema::runtime rt(MPI_COMM_WORLD, cfg);
            root r;
            if (rt.run([&]() -> prema::task<> {
                    for (int i = 0; i < objects; ++i) {
                        chunk c;
                        c.words.resize(words);
                        std::uint64_t x = std::uint64_t(me) << 32 | std::uint64_t(i);
                        for (auto& w : c.words) // splitmix64: incompressible, cheap
                            w = (x += 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
                        r.chunks.push_back(prema::make_mobile<chunk>(std::move(c)));
                    }
                    co_return;
                }) != 0)
                throw std::runtime_error("creating the objects failed");
            // The checkpoint file holds the objects plus framing: write as many bytes blocking.
            std::size_t file_bytes = 0;
            double best_blocking = 1e300, best_prema = 1e300, best_write = 1e300;
            auto measure_checkpoint = [&] {
                double t = 0;
                if (rt.run([&]() -> prema::task<> {
                        co_await prema::quiescence();
                        auto t0 = clk::now();
                        co_await prema::checkpoint(dir, r);
                        t = std::chrono::duration<double>(clk::now() - t0).count();
                    }) != 0)
                    throw std::runtime_error("the checkpoint failed");
                best_prema = std::min(best_prema, slowest(t));
                best_write = std::min(best_write, slowest(prema::last_checkpoint_stats().write_s));
                file_bytes = prema::last_checkpoint_stats().bytes;
                remove_all_in(dir);
            };
            auto measure_blocking = [&] {
                std::vector<std::byte> bytes(file_bytes, std::byte{0x5a});
                auto path = dir + "/blocking-" + std::to_string(me) + ".bin";
                best_blocking = std::min(best_blocking, blocking_write(path, bytes));
                remove_all_in(dir);
            };
            measure_checkpoint(); // also sizes the blocking files like the checkpoint's
            measure_blocking();
            // Alternating which goes first, so that neither always follows the other's cleanup.
            for (int rep = 1; rep < repeat; ++rep) {
                if (rep % 2) {
                    measure_blocking();
                    measure_checkpoint();
                } else {
                    measure_checkpoint();
                    measure_blocking();
                }
            }
            if (me == 0) {
                double mb = double(file_bytes) / double(1 << 20);
                std::printf("%9d %11.3f %8.0f | %11.3f %8.0f %6.2f | %11.3f %8.0f %6.2f\n", mib,
                            best_blocking, mb / best_blocking, best_write, mb / best_write,
                            best_write / best_blocking, best_prema, mb / best_prema,
                            best_prema / best_blocking);
                std::fflush(stdout);
                example::json row;
                row.set("mib_per_rank", mib).set("file_bytes", (long long)file_bytes);
                row.set("blocking_s", best_blocking).set("prema_s", best_prema);
                row.set("uring_write_s", best_write);
                row.set("uring_write_over_blocking", best_write / best_blocking);
                row.set("blocking_mib_s", mb / best_blocking).set("prema_mib_s", mb / best_prema);
                row.set("prema_over_blocking", best_prema / best_blocking);
                rows.push_back(row);
            }
        }
        if (me == 0)
            fs::remove_all(dir);
        if (me == 0 && !json_path.empty()) {
            example::json out;
            out.set("ranks", ranks).set("objects_per_rank", objects).set("repeat", repeat);
            out.set("sizes", rows);
            if (!out.write(json_path))
                return 1;
        }
        return 0;
    });
}
