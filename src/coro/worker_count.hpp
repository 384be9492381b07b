// worker_count: a count that the workers of the rank's pool raise often and other threads read.
// Each worker adds to a slot of its own with a plain store, since a locked add waits for the
// thread's earlier stores (about 7 ns on every message's path here); other threads (the progress
// thread, which runs urgent messages and, on shared cores, handlers) share a locked count. A read
// sums the slots, from any thread. A process has one pool at a time (the running runtime's),
// so a worker's index names its slot.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "coro/worker_pool.hpp"

namespace prema::detail {

class worker_count {
  public:
    static constexpr int max_slots = 64;

    // Reads sum the slots of the first `workers` workers (at most max_slots); workers beyond
    // them share the locked count.
    explicit worker_count(int workers = max_slots) noexcept
        : used_(workers < max_slots ? (workers > 0 ? workers : 0) : max_slots) {}

    void add(std::uint64_t n) noexcept {
        const int i = worker_pool::current_index();
        if (i >= 0 && i < used_) {
            auto& slot = slots_[std::size_t(i)].n;
            slot.store(slot.load(std::memory_order_relaxed) + n, std::memory_order_release);
        } else {
            others_.fetch_add(n, std::memory_order_release);
        }
    }

    std::uint64_t load() const noexcept {
        std::uint64_t sum = others_.load(std::memory_order_acquire);
        for (int i = 0; i < used_; ++i)
            sum += slots_[std::size_t(i)].n.load(std::memory_order_acquire);
        return sum;
    }

  private:
    struct alignas(64) slot {
        std::atomic<std::uint64_t> n{0};
    };
    int used_;
    std::array<slot, max_slots> slots_;
    std::atomic<std::uint64_t> others_{0};
};

} // namespace prema::detail
