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
// Its start-up exchanges what it must along the tree too (the node's names and CPU masks, the
// ranks' agreement on options) and makes its two communicators with MPI_Comm_create_group,
// which agrees on their context along a binary tree of its own. It made two node communicators
// (MPI_Comm_split_type), two duplicates, four MPI_Allreduce and an MPI_Allgather of 128-byte
// masks: Open MPI's recursive doubling reached log2 P partners, about 44 KB of shared memory
// each, and a rank's memory above MPI_Init grew by 28% from 8 to 256 ranks, mostly so.
//
// The test sees the runtime's MPI calls through the MPI profiling interface: this executable
// defines the MPI functions below, which note the call and go on to PMPI_*.
#include <atomic>
#include <cstddef>
#include <cstdint>
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
#include "transport/tree_blocking.hpp"

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
int MPI_Allgather(const void* in, int in_count, MPI_Datatype in_type, void* out, int out_count,
                  MPI_Datatype out_type, MPI_Comm comm) {
    int bytes = 0;
    PMPI_Type_size(in_type, &bytes);
    note_collective(("MPI_Allgather of " + std::to_string(in_count * bytes) + " B").c_str());
    return PMPI_Allgather(in, in_count, in_type, out, out_count, out_type, comm);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* dup) {
    note_collective("MPI_Comm_dup");
    return PMPI_Comm_dup(comm, dup);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* part) {
    note_collective("MPI_Comm_split");
    return PMPI_Comm_split(comm, color, key, part);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* part) {
    note_collective("MPI_Comm_split_type");
    return PMPI_Comm_split_type(comm, type, key, info, part);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* part) {
    note_collective("MPI_Comm_create_group");
    return PMPI_Comm_create_group(comm, group, tag, part);
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

// The ranks `rank` may meet: its parent and children in the tree over `size` ranks.
std::set<int> tree_neighbours(int rank, int size) {
    std::set<int> near;
    const prema::detail::tree_place place{std::size_t(rank), std::size_t(size)};
    if (place.parent != prema::detail::tree_place::no_parent)
        near.insert(int(place.parent));
    for (const auto& child : place.children())
        near.insert(int(child.begin));
    return near;
}

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

    const std::set<int> neighbours = tree_neighbours(rank, size);
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

TEST_CASE("start-up: its communicators made with MPI_Comm_create_group, what the ranks "
          "exchange along the tree") {
    const int rank = world_rank(), size = world_size();
    // With --prema-stats the ranks also start their clocks together (a barrier, along the tree
    // too), and rank 0 gathers every rank's row of the table at the end (MPI_Gather).
    for (bool stats : {false, true}) {
        INFO("--prema-stats: ", stats);
        collectives.clear();
        sent_to.clear();
        watching = true;
        {
            prema::config cfg;
            cfg.stats = stats;
            prema::runtime rt(MPI_COMM_WORLD, cfg);
            CHECK(rt.run([]() -> prema::task<> { co_return; }) == 0);
        }
        watching = false;
        std::vector<std::string> expected{"MPI_Comm_create_group", "MPI_Comm_create_group"};
        if (stats)
            expected.emplace_back("MPI_Gather");
        std::string called;
        for (auto& c : collectives)
            called += " [" + c + "]";
        CHECK_MESSAGE(collectives == expected, "rank ", rank, " called:", called);
        // One node here: the node communicator's ranks are the world's.
        std::string others;
        for (int r : sent_to)
            if (r != rank && !tree_neighbours(rank, size).count(r))
                others += " " + std::to_string(r);
        CHECK_MESSAGE(others.empty(), "rank ", rank, " of ", size, " sent to", others);
    }
}

TEST_CASE("tree_allgather and tree_min: every rank's block in rank order, every value's least") {
    const int rank = world_rank(), size = world_size();
    for (std::size_t words : {1, 3}) {
        std::vector<std::uint64_t> mine(words);
        for (std::size_t i = 0; i < words; ++i)
            mine[i] = std::uint64_t(rank) * 1000 + i;
        const auto all = prema::detail::tree_allgather(MPI_COMM_WORLD, mine);
        REQUIRE(all.size() == words * std::size_t(size));
        for (std::size_t r = 0; r < std::size_t(size); ++r)
            for (std::size_t i = 0; i < words; ++i)
                CHECK(all[r * words + i] == r * 1000 + i);
        // Each value's least is another rank's: the last rank's first, the first rank's second.
        std::vector<std::uint64_t> values{std::uint64_t(size - rank), std::uint64_t(rank + 7)};
        prema::detail::tree_min(MPI_COMM_WORLD, values);
        CHECK(values == std::vector<std::uint64_t>{1, 7});
    }
}
