// tree_sum: a non-blocking sum of four counters over every rank, along PREMA's tree
// (prema/detail/transport/tree.hpp): each rank adds its children's sums to its own, in child
// order, and sends the total to its parent; rank 0's total comes back down the same tree.
// The termination waves, the barrier that starts a phase and the drain at the end use it instead
// of MPI's collectives, whose own trees (recursive doubling, Bruck) reach ceil(log2 P) other
// ranks: here a rank meets its parent and two children, whatever the job's size, and so does MPI's
// per-peer state (Charm++'s quiescence detection travels a spanning tree of its own likewise).
//
// Collective like MPI_Iallreduce: every rank starts the same sums in the same order. Its
// messages travel on the communicator given, with a tag that no other receive on it may match
// (the progress engine's own communicator: a communicator of the sums' own would cost one more
// of MPI's collectives at start-up). Runs on the MPI thread only.
#pragma once

#include <array>
#include <cstdint>

#include <mpi.h>

namespace prema::detail {

class tree_sum {
  public:
    using values = std::array<std::uint64_t, 4>;

    // Not collective: sums travel on `comm` with `tag`, which must outlive this.
    tree_sum(MPI_Comm comm, int tag);
    // Finishes a sum in flight (collective: every rank stops after the same one).
    ~tree_sum();
    tree_sum(const tree_sum&) = delete;
    tree_sum& operator=(const tree_sum&) = delete;

    // Joins the next sum with this rank's values. None may be in flight.
    void start(const values& mine);
    // Moves the sum on: call it often while one is in flight (the progress engine does on
    // every poll), since a rank forwards its subtree's sum and rank 0's total only from here.
    // True once the sum is complete here (the total known and this rank's sends done), until
    // take().
    bool test();
    // From start() to take().
    bool in_flight() const noexcept { return stage_ != stage::idle; }
    // The total of a complete sum, which ends it.
    values take() noexcept {
        stage_ = stage::idle;
        return total_;
    }

    // Finishes a sum in flight, then start(mine) and test() until complete, calling
    // `between()` after each test; the total.
    template <class F> values run(const values& mine, F&& between) {
        while (in_flight() && !test())
            ;
        start(mine);
        while (!test())
            between();
        return take();
    }

  private:
    enum class stage { idle, from_children, from_parent, to_children, complete };
    // Whether every request in [first, first + n) is complete.
    bool complete(int first, int n);

    MPI_Comm comm_ = MPI_COMM_NULL;
    int tag_ = 0;
    int parent_ = -1;
    std::array<int, 2> children_{};
    int child_count_ = 0;
    stage stage_ = stage::idle;
    values mine_{}, total_{};
    std::array<values, 2> from_child_{};
    // [0, 2): receives from the children, then sends to them; [2]: the send to the parent;
    // [3]: the receive from it.
    std::array<MPI_Request, 4> requests_{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                         MPI_REQUEST_NULL};
};

} // namespace prema::detail
