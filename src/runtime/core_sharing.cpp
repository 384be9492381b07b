#include "core_sharing.hpp"

#include <sched.h>
#include <thread>

namespace prema::detail {

core_sharing detect_core_sharing(MPI_Comm comm) {
    core_sharing s;
    cpu_set_t cpus;
    s.node_cores = int(std::thread::hardware_concurrency());
    s.own_cores = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : s.node_cores;
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &s.node_ranks);
    MPI_Comm_free(&node);
    return s;
}

progress_mode resolve_progress(const core_sharing& cores, int workers) noexcept {
    return cores.shared(workers + 1) ? progress_mode::inline_ : progress_mode::dedicated;
}

std::string describe_progress(progress_mode requested, progress_mode resolved) {
    if (requested == progress_mode::automatic && resolved != requested)
        return "auto -> " + to_string(resolved);
    return to_string(resolved);
}

} // namespace prema::detail
