#include "core_sharing.hpp"

#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

namespace prema::detail {

core_sharing detect_core_sharing(MPI_Comm comm) {
    core_sharing s;
    cpu_set_t cpus;
    s.node_cores = int(std::thread::hardware_concurrency());
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) {
        CPU_ZERO(&cpus);
        for (int c = 0; c < s.node_cores; ++c)
            CPU_SET(c, &cpus);
    }
    s.own_cores = CPU_COUNT(&cpus);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int me = 0;
    MPI_Comm_size(node, &s.node_ranks);
    MPI_Comm_rank(node, &me);
    std::vector<cpu_set_t> masks(std::size_t(s.node_ranks));
    MPI_Allgather(&cpus, int(sizeof cpus), MPI_BYTE, masks.data(), int(sizeof cpus), MPI_BYTE,
                  node);
    MPI_Comm_free(&node);
    int same = 0, before_me = 0;
    for (int r = 0; r < s.node_ranks; ++r) {
        cpu_set_t common;
        CPU_AND(&common, &cpus, &masks[std::size_t(r)]);
        if (CPU_EQUAL(&masks[std::size_t(r)], &cpus)) {
            ++same;
            before_me += r < me;
        } else if (CPU_COUNT(&common) > 0) {
            return s; // overlapping masks: no share of its own
        }
    }
    std::vector<int> mine;
    for (int c = 0; c < CPU_SETSIZE && int(mine.size()) < s.own_cores; ++c)
        if (CPU_ISSET(c, &cpus))
            mine.push_back(c);
    const std::size_t each = mine.size() / std::size_t(same);
    s.share.assign(mine.begin() + std::ptrdiff_t(each * std::size_t(before_me)),
                   mine.begin() + std::ptrdiff_t(each * std::size_t(before_me + 1)));
    return s;
}

std::vector<int> pin_plan(const core_sharing& cores, int threads) {
    if (cores.shared(threads) || int(cores.share.size()) < threads)
        return {};
    return {cores.share.begin(), cores.share.begin() + threads};
}

thread_pin::thread_pin(int cpu) {
    if (cpu < 0 || pthread_getaffinity_np(pthread_self(), sizeof before_, &before_) != 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
}

thread_pin::~thread_pin() {
    if (pinned_)
        pthread_setaffinity_np(pthread_self(), sizeof before_, &before_);
}

progress_mode resolve_progress(const core_sharing& cores, int workers) noexcept {
    return cores.shared(workers + 1) ? progress_mode::inline_ : progress_mode::dedicated;
}

std::uint64_t idle_spin_us(const core_sharing& cores, int threads,
                           std::uint64_t configured) noexcept {
    return cores.shared(threads) ? 0 : configured;
}

std::string describe_progress(progress_mode requested, progress_mode resolved) {
    if (requested == progress_mode::automatic && resolved != requested)
        return "auto -> " + to_string(resolved);
    return to_string(resolved);
}

} // namespace prema::detail
