// message_pool: preallocated fixed-size message buffers shared by all threads of a rank.
//
// The free list is a moodycamel queue, which keeps a sub-queue per producing thread, so
// threads that release and acquire mostly touch their own cache lines. When the pool runs dry
// it grows rather than block; the growth is logged once per doubling.
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
    message_pool(std::size_t eager_bytes, std::size_t preallocate);
    ~message_pool();
    message_pool(const message_pool&) = delete;
    message_pool& operator=(const message_pool&) = delete;

    message* acquire();
    void release(message* m) noexcept;

    std::size_t eager_bytes() const noexcept { return eager_; }
    // Bytes of the wire buffer: header plus eager payload.
    std::size_t wire_bytes() const noexcept { return sizeof(wire_header) + eager_; }

  private:
    message* allocate();

    std::size_t eager_;
    moodycamel::ConcurrentQueue<message*> free_;
    std::mutex grow_mutex_;
    std::vector<message*> all_;
    std::size_t next_report_;
};

} // namespace prema::detail
