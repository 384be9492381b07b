// --prema-loopback: messages to the sender's own rank go to a worker's queue (direct, the
// default) or through MPI and the progress engine like any other (mpi). The test counts the
// sends a rank starts to itself through the MPI profiling interface (this binary's MPI_Isend and
// MPI_Issend wrap PMPI_Isend and PMPI_Issend), so it sees which way the messages went.
#include <doctest/doctest.h>

#include <atomic>
#include <mpi.h>
#include <vector>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {
std::atomic<long> isends_to_self{0};

void count_send(int dest, MPI_Comm comm) {
    int me = -1;
    PMPI_Comm_rank(comm, &me);
    if (dest == me)
        isends_to_self.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
    count_send(dest, comm);
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                          MPI_Comm comm, MPI_Request* request) {
    count_send(dest, comm);
    return PMPI_Issend(buf, count, type, dest, tag, comm, request);
}

namespace {

constexpr int messages = 500;
std::vector<int> seen; // what rank's own messages carried, in the order they ran (one worker)

void record(int i) {
    seen.push_back(i);
}

// Sends `messages` numbered messages to its own rank; returns its MPI_Isends to itself.
long run_loopback(prema::progress_mode mode, bool through_mpi) {
    prema::config cfg;
    cfg.progress = mode;
    cfg.workers = 1;
    cfg.loopback_mpi = through_mpi;
    seen.clear();
    isends_to_self.store(0);
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(rt.run([]() -> prema::task<> {
        for (int i = 0; i < messages; ++i)
            co_await prema::send(prema::rank(), prema::fn<&record>, i);
    }) == 0);
    return isends_to_self.load();
}

} // namespace

TEST_CASE("messages to the own rank: direct by default, through MPI with --prema-loopback mpi, "
          "in order either way") {
    for (auto mode : {prema::progress_mode::dedicated, prema::progress_mode::inline_}) {
        CAPTURE(prema::to_string(mode));
        for (bool through_mpi : {false, true}) {
            CAPTURE(through_mpi);
            long isends = run_loopback(mode, through_mpi);
            REQUIRE(seen.size() == std::size_t(messages));
            for (int i = 0; i < messages; ++i)
                CHECK(seen[std::size_t(i)] == i);
            if (through_mpi)
                CHECK(isends >= messages);
            else
                CHECK(isends == 0);
        }
    }
}
