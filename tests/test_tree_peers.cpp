// Which ranks a rank meets in PREMA's collectives (issue 27: a rank's memory does not depend on
// the job's size). MPI makes its per-peer state when a rank first talks to a peer (Open MPI: the
// pages of the peer's shared-memory segment, about 50 KB each), so a rank that meets
// ceil(log2 P) peers holds more as the job grows. all_reduce, broadcast, create_many, gather,
// reduce, the quiescence waves, the barrier between phases and the drain at the end now all
// travel PREMA's tree (prema/detail/transport/tree.hpp), rooted at rank 0 here: each rank sends
// only to its parent and its two children, and calls no MPI collective. Before, all_reduce and
// broadcast were binomial trees (rank 0 sent to 1, 2, 4 and 8 of 16 ranks) and the waves and
// the barrier were MPI_Iallreduce and MPI_Barrier.
//
// The test sees the runtime's MPI calls through the MPI profiling interface: this executable
// defines the MPI functions below, which note the call and go on to PMPI_*.
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/detail/transport/tree.hpp>
#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

std::atomic<bool> watching{false};
std::mutex seen_mutex;
std::set<int> sent_to;                // ranks of PREMA's communicators (duplicates of the world)
std::vector<std::string> collectives; // MPI collectives called while watching

void note_send(int dest) {
    if (!watching.load(std::memory_order_relaxed))
        return;
    std::lock_guard lock(seen_mutex);
    sent_to.insert(dest);
}
void note_collective(const char* name) {
    if (!watching.load(std::memory_order_relaxed))
        return;
    std::lock_guard lock(seen_mutex);
    collectives.emplace_back(name);
}

} // namespace

extern "C" {
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
    note_send(dest);
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    note_send(dest);
    return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Iallreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
    note_collective("MPI_Iallreduce");
    return PMPI_Iallreduce(in, out, count, type, op, comm, request);
}
int MPI_Allreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
    note_collective("MPI_Allreduce");
    return PMPI_Allreduce(in, out, count, type, op, comm);
}
int MPI_Barrier(MPI_Comm comm) {
    note_collective("MPI_Barrier");
    return PMPI_Barrier(comm);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
    note_collective("MPI_Ibarrier");
    return PMPI_Ibarrier(comm, request);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    note_collective("MPI_Bcast");
    return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Gather(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
               MPI_Datatype out_type, int root, MPI_Comm comm) {
    note_collective("MPI_Gather");
    return PMPI_Gather(in, in_count, in_type, out, out_count, out_type, root, comm);
}
}

namespace {

struct cell {
    int value = 0;
    template <class Ar> void serialize(Ar& ar) { ar(value); }
};
int value_of(const cell& c) {
    return c.value;
}

std::atomic<int> arrived{0};
void arrive(int) {
    arrived.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

TEST_CASE("collectives, quiescence and phases: a rank sends only to its tree neighbours and "
          "calls no MPI collective") {
    const int rank = world_rank(), size = world_size();
    long gathered = -1, reduced = -1;
    {
        prema::runtime rt(MPI_COMM_WORLD); // its start-up's MPI collectives are not watched
        watching = true;
        std::vector<prema::mobile_ptr<cell>> cells;
        CHECK(rt.run([&]() -> prema::task<> {
            CHECK(co_await prema::all_reduce(1, std::plus<>{}) == size);
            if (prema::rank() == 0) {
                co_await prema::broadcast(prema::fn<&arrive>, 1);
                cells = co_await prema::create_many<cell>(
                    std::size_t(size), prema::placement::round_robin,
                    [](std::size_t i) { return cell{int(i)}; });
                auto values = co_await prema::gather(cells, prema::fn<&value_of>);
                gathered = long(values.size());
                reduced = co_await prema::reduce(cells, prema::fn<&value_of>, std::plus<>{});
            }
            co_await prema::quiescence();
        }) == 0);
        // A second phase: the barrier between them.
        CHECK(rt.run([]() -> prema::task<> { co_await prema::all_reduce(1, std::plus<>{}); }) == 0);
    } // the drain at the end
    watching = false;
    CHECK(arrived.load() == 1);
    if (rank == 0) {
        CHECK(gathered == size);
        CHECK(reduced == long(size) * (size - 1) / 2);
    }

    std::set<int> neighbours;
    const prema::detail::tree_place place{std::size_t(rank), std::size_t(size)};
    if (place.parent != prema::detail::tree_place::no_parent)
        neighbours.insert(int(place.parent));
    for (const auto& child : place.children())
        neighbours.insert(int(child.begin));
    std::string others;
    for (int r : sent_to)
        if (r != rank && !neighbours.count(r))
            others += " " + std::to_string(r);
    CHECK_MESSAGE(others.empty(), "rank ", rank, " of ", size,
                  " sent to ranks outside its "
                  "tree neighbours:",
                  others);
    std::string called;
    for (auto& c : collectives)
        called += " " + c;
    CHECK_MESSAGE(collectives.empty(), "rank ", rank, " called MPI collectives:", called);
}
