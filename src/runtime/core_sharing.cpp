#include "core_sharing.hpp"

#include <algorithm>
#include <cstdint>

#include <pthread.h>
#include <sched.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "transport/tree_blocking.hpp"

namespace prema::detail {

namespace {
using mask_words = std::vector<std::uint64_t>;

// The words of an affinity mask that can hold a CPU of this node: the same number on every rank
// of the node (a whole cpu_set_t is 128 bytes, 32 KB for a node of 256 ranks).
mask_words node_words(const cpu_set_t& cpus) {
    constexpr std::size_t bits = 64, most = sizeof(cpu_set_t) * 8 / bits;
    const long configured = sysconf(_SC_NPROCESSORS_CONF);
    const std::size_t n =
        std::clamp<std::size_t>((std::size_t(std::max(configured, 1L)) + bits - 1) / bits, 1, most);
    mask_words w(n);
    for (std::size_t c = 0; c < n * bits; ++c)
        if (CPU_ISSET(c, &cpus))
            w[c / bits] |= std::uint64_t(1) << (c % bits);
    return w;
}
} // namespace

core_sharing detect_core_sharing(MPI_Comm node) {
    core_sharing s;
    cpu_set_t cpus;
    s.node_cores = int(std::thread::hardware_concurrency());
    if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) {
        CPU_ZERO(&cpus);
        for (int c = 0; c < s.node_cores; ++c)
            CPU_SET(c, &cpus);
    }
    s.own_cores = CPU_COUNT(&cpus);
    int me = 0;
    MPI_Comm_size(node, &s.node_ranks);
    MPI_Comm_rank(node, &me);
    const mask_words words = node_words(cpus);
    const std::size_t n = words.size();
    const mask_words all = tree_allgather(node, words);
    int same = 0, before_me = 0;
    for (int r = 0; r < s.node_ranks; ++r) {
        const std::uint64_t* theirs = &all[std::size_t(r) * n];
        bool equal = true, common = false;
        for (std::size_t i = 0; i < n; ++i) {
            equal &= theirs[i] == words[i];
            common |= (theirs[i] & words[i]) != 0;
        }
        if (equal) {
            ++same;
            before_me += r < me;
        } else if (common) {
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
