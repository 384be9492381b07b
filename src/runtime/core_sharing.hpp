// Whether this rank's threads have to share cores with each other or with the other ranks of
// the node. Threads that busy-wait on a shared core steal the cycles of the thread they wait
// for (a yielding but runnable thread still gets its fair share under CFS), so the idle
// back-off of workers and of the progress thread skips spinning and goes to sleep early then.
#pragma once

#include <mpi.h>

namespace prema::detail {

struct core_sharing {
    int own_cores = 0;  // cores this process may run on (its affinity mask)
    int node_cores = 0; // cores of the node
    int node_ranks = 0; // ranks of `comm` on this node
    int threads_per_rank = 0;
    bool shared() const noexcept {
        return threads_per_rank > own_cores || node_ranks * threads_per_rank > node_cores;
    }
};

// Collective over `comm`; call on the thread that drives MPI.
core_sharing detect_core_sharing(MPI_Comm comm, int threads_per_rank);

} // namespace prema::detail
