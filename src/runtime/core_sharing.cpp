#include "core_sharing.hpp"

#include <sched.h>
#include <thread>

namespace prema::detail {

core_sharing detect_core_sharing(MPI_Comm comm, int threads_per_rank) {
    core_sharing s;
    s.threads_per_rank = threads_per_rank;
    cpu_set_t cpus;
    s.node_cores = int(std::thread::hardware_concurrency());
    s.own_cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : s.node_cores;
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &s.node_ranks);
    MPI_Comm_free(&node);
    return s;
}

} // namespace prema::detail
