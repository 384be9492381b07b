// worker_count: a count that workers raise on the path of every message and that one thread
// reads now and then.
//
// Each worker of the runtime's pool raises a slot of its own, on its own cache line, with a
// plain load and store: one writer per slot, so no locked instruction (about 5 ns each on the
// path of a message) and no line shared between workers. Threads off the pool, and workers
// past the slots, add atomically to a shared slot. A process runs one runtime, so one pool, at
// a time, and a pool's workers are joined before the next one starts: a slot never has two
// writers at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "coro/worker_pool.hpp"

namespace prema::detail {

class worker_count {
  public:
    // Slots for workers 0 .. slots - 1: a reader sums them all, so no more than will be used.
    explicit worker_count(int slots) : slot_count_(slots), slots_(new slot[std::size_t(slots)]) {}

    void add(std::uint64_t n = 1) noexcept {
        const int i = worker_pool::current_index();
        if (i >= 0 && i < slot_count_) [[likely]] {
            auto& c = slots_[std::size_t(i)].n;
            c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_release);
        } else {
            others_.n.fetch_add(n, std::memory_order_release);
        }
    }
    // Every slot only grows, so the sum lies between the counts when the read began and ended.
    std::uint64_t load() const noexcept {
        std::uint64_t sum = others_.n.load(std::memory_order_acquire);
        for (int i = 0; i < slot_count_; ++i)
            sum += slots_[std::size_t(i)].n.load(std::memory_order_acquire);
        return sum;
    }

  private:
    struct alignas(64) slot {
        std::atomic<std::uint64_t> n{0};
    };
    int slot_count_;
    std::unique_ptr<slot[]> slots_;
    slot others_;
};

} // namespace prema::detail
