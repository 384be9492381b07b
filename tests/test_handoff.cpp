// Dedicated progress on cores of its own: a spinning worker polls MPI itself, so that a message
// for it is received and run by it and its reply sent by it, with no hand-off to or from the
// progress thread (progress_engine::share_polling). One rank, one worker, its affinity widened to
// every core of the machine (two threads on a 2-core machine: cores of their own), messages to
// itself through MPI (--prema-loopback mpi). The MPI profiling interface tells which thread
// started each send (this binary's MPI_Isend and MPI_Issend wrap PMPI's).
#include <doctest/doctest.h>

#include <atomic>
#include <mpi.h>
#include <sched.h>
#include <thread>
#include <vector>

#include <prema/prema.hpp>

namespace {
std::thread::id progress_thread;
std::atomic<long> sends_by_progress{0}, sends_by_workers{0};

void count_send() {
    (std::this_thread::get_id() == progress_thread ? sends_by_progress : sends_by_workers)
        .fetch_add(1, std::memory_order_relaxed);
}
} // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
    count_send();
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, MPI_Request* request) {
    count_send();
    return PMPI_Issend(buf, count, type, dest, tag, comm, request);
}

namespace {

constexpr int hops = 2000;
std::atomic<int> hops_run{0};
std::vector<int> order;

// A chain: each hop sends the next to this rank, as a ping-pong between two ranks would.
prema::task<> hop(int i) {
    hops_run.fetch_add(1, std::memory_order_relaxed);
    order.push_back(i);
    if (i + 1 < hops)
        co_await prema::send(prema::rank(), prema::fn<&hop>, i + 1);
}

// Runs the chain with dedicated progress and the given spin time; true if it ran in order.
bool run_chain(std::uint64_t spin_us) {
    prema::config cfg;
    cfg.progress = prema::progress_mode::dedicated;
    cfg.workers = 1;
    cfg.spin_us = spin_us;
    cfg.loopback_mpi = true;
    hops_run = 0;
    order.clear();
    sends_by_progress = 0;
    sends_by_workers = 0;
    progress_thread = std::this_thread::get_id(); // run() makes the calling thread the poller
    prema::runtime rt(MPI_COMM_SELF, cfg);
    CHECK(rt.run([]() -> prema::task<> {
        co_await prema::send(prema::rank(), prema::fn<&hop>, 0);
    }) == 0);
    bool in_order = int(order.size()) == hops;
    for (int i = 0; in_order && i < hops; ++i)
        in_order = order[std::size_t(i)] == i;
    return in_order && hops_run.load() == hops;
}

} // namespace

TEST_CASE("dedicated progress on cores of its own: an idle worker sends and receives itself") {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    cpu_set_t bound, all;
    sched_getaffinity(0, sizeof bound, &bound);
    CPU_ZERO(&all);
    for (unsigned c = 0; c < std::thread::hardware_concurrency(); ++c)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    if (world != 1 || std::thread::hardware_concurrency() < 2) {
        MESSAGE("needs one rank and two cores: skipped");
        sched_setaffinity(0, sizeof bound, &bound);
        return;
    }
    // Spinning: the worker starts (nearly) every send; without (as on shared cores) the
    // progress thread starts them all.
    CHECK(run_chain(1000));
    MESSAGE("spinning: " << sends_by_workers.load() << " sends by the worker, "
                         << sends_by_progress.load() << " by the progress thread");
    CHECK(sends_by_workers.load() >= hops / 2);
    CHECK(run_chain(0));
    MESSAGE("not spinning: " << sends_by_workers.load() << " sends by the worker, "
                             << sends_by_progress.load() << " by the progress thread");
    CHECK(sends_by_workers.load() == 0);
    CHECK(sends_by_progress.load() >= hops);
    sched_setaffinity(0, sizeof bound, &bound);
}
