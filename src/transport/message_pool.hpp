// message_pool: preallocated fixed-size message buffers shared by all threads of a rank.
//
// The free list is a moodycamel queue, which keeps a sub-queue per producing thread, so
// threads that release and acquire mostly touch their own cache lines. When the pool runs dry
// it grows rather than block (the growth is logged once per doubling); buffers released while
// the free list already holds `keep` go back to the heap, so that a burst does not pin its peak
// memory for the rest of the run. In front of the queue, each thread keeps a few buffers of its
// own (a plain array): a worker that takes a buffer for a message and gives one back when the
// previous message went out touches no shared state. The pool empties those caches when it is
// destroyed, after the runtime has joined its threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include <concurrentqueue.h>

#include "prema/transport/message.hpp"

namespace prema::detail {

class message_pool {
  public:
    // `keep`: most free buffers kept (at least `preallocate`).
    message_pool(std::size_t eager_bytes, std::size_t preallocate, std::size_t keep = 0);
    ~message_pool();
    message_pool(const message_pool&) = delete;
    message_pool& operator=(const message_pool&) = delete;

    message* acquire();
    void release(message* m) noexcept;

    std::size_t eager_bytes() const noexcept { return eager_; }
    // Bytes of the wire buffer: header plus eager payload.
    std::size_t wire_bytes() const noexcept { return sizeof(wire_header) + eager_; }
    // Buffers that exist now, free or in use.
    std::size_t live() const noexcept { return live_.load(std::memory_order_relaxed); }

    struct thread_cache;

  private:
    message* allocate();
    void free(message* m) noexcept;
    void release_shared(message* m) noexcept;
    thread_cache* my_cache() noexcept;

    std::size_t eager_;
    std::size_t keep_;
    moodycamel::ConcurrentQueue<message*> free_;
    std::atomic<std::size_t> free_count_{0}, live_{0};
    std::atomic<std::size_t> next_report_;
    std::mutex caches_mutex_;
    std::vector<thread_cache*> caches_; // threads holding buffers of this pool
};

} // namespace prema::detail
