// message_pool: pooled message buffers in size classes, shared by all threads of a rank.
//
// A message holds a buffer sized to what it carries: the classes grow by 4x from 256 bytes of
// wire buffer (header included) to the eager size, and acquire() takes the smallest that fits.
// So a message pending somewhere (a batch, a queue, a call) costs its own size, not the eager
// size: a rank that has something for many destinations or objects at once holds memory in
// proportion to what it has to say (docs/design/flow-control.md).
//
// Each class's free list is a moodycamel queue, which keeps a sub-queue per producing thread,
// so threads that release and acquire mostly touch their own cache lines. When a class runs
// dry the pool allocates rather than block (growth is logged once per doubling); buffers
// released while the free lists already hold `keep_bytes` go back to the heap, so that a burst
// does not pin its peak memory for the rest of the run. In front of the queues, each thread
// keeps a few buffers of each class of its own (a plain array): a worker that takes a buffer
// for a message and gives one back when the previous message went out touches no shared
// state. The pool empties those caches when it is destroyed, after the runtime has joined its
// threads.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <concurrentqueue.h>

#include "prema/detail/transport/message.hpp"

namespace prema::detail {

class message_pool {
  public:
    static constexpr std::size_t smallest_class_bytes = 256, max_classes = 8;

    // `preallocate`: buffers of the smallest class made at once. `keep_bytes`: most bytes of
    // free buffers kept (at least the preallocated ones).
    message_pool(std::size_t eager_bytes, std::size_t preallocate, std::size_t keep_bytes = 0);
    ~message_pool();
    message_pool(const message_pool&) = delete;
    message_pool& operator=(const message_pool&) = delete;

    // A buffer with room for at least `payload_bytes` inline (the largest if that is more
    // than eager_bytes()).
    message* acquire(std::size_t payload_bytes = 0) {
        return acquire_class(class_for(payload_bytes));
    }
    // A buffer with room for the largest message (a receive).
    message* acquire_full() { return acquire_class(classes_ - 1); }
    // Wire bytes of the buffer acquire(payload_bytes) would give.
    std::size_t wire_bytes_for(std::size_t payload_bytes) const noexcept {
        return wire_[class_for(payload_bytes)];
    }
    void release(message* m) noexcept;

    std::size_t eager_bytes() const noexcept { return eager_; }
    // Bytes of the largest wire buffer: header plus eager payload.
    std::size_t wire_bytes() const noexcept { return sizeof(wire_header) + eager_; }
    // Buffers that exist now, free or in use.
    std::size_t live() const noexcept { return live_.load(std::memory_order_relaxed); }
    // Wire bytes of the buffers taken and not given back (tests). Any thread; exact while no
    // other thread acquires or releases.
    std::int64_t bytes_in_use() noexcept;

    struct thread_cache;

  private:
    std::size_t class_for(std::size_t payload_bytes) const noexcept {
        std::size_t c = 0;
        while (payload_bytes > inline_capacity_[c] && c + 1 < classes_)
            [[unlikely]]++ c;
        return c;
    }
    message* acquire_class(std::size_t c);
    message* allocate(std::size_t c);
    void free(message* m) noexcept;
    void release_shared(message* m) noexcept;
    thread_cache* my_cache() noexcept;

    std::size_t eager_;
    std::size_t classes_ = 0;
    std::array<std::size_t, max_classes> wire_{}, inline_capacity_{};
    std::size_t keep_bytes_;
    std::array<moodycamel::ConcurrentQueue<message*>, max_classes> free_;
    std::atomic<std::size_t> free_bytes_{0}, live_{0};
    std::atomic<std::size_t> next_report_;
    std::atomic<std::int64_t> in_use_detached_{0}; // of thread caches gone
    std::mutex caches_mutex_;
    std::vector<thread_cache*> caches_; // threads holding buffers of this pool
};

} // namespace prema::detail
