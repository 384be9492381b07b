#include "transport/message_pool.hpp"

#include <algorithm>
#include <malloc.h>
#include <new>

#include "runtime/log.hpp"

namespace prema::detail {

message_pool::message_pool(std::size_t eager_bytes, std::size_t preallocate, std::size_t keep)
    : eager_(eager_bytes), keep_(std::max(keep, preallocate)),
      next_report_(2 * std::max<std::size_t>(preallocate, 1)) {
    // Split-phase payloads are allocated and freed per message. By default glibc maps buffers
    // above 128 KiB anew each time and returns them to the OS, so every megabyte message paid
    // hundreds of page faults; keep such buffers in the heap instead.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    for (std::size_t i = 0; i < preallocate; ++i)
        release(allocate());
}

message_pool::~message_pool() {
    message* m;
    while (free_.try_dequeue(m))
        free(m);
    if (auto left = live_.load())
        log().error("message pool: {} buffer(s) never came back", left);
}

message* message_pool::allocate() {
    void* raw = ::operator new (sizeof(message) + wire_bytes(), std::align_val_t{alignof(message)});
    auto live = live_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (auto report = next_report_.load(std::memory_order_relaxed);
        live >= report && next_report_.compare_exchange_strong(report, 2 * report))
        log().debug("message pool grew to {} buffers", live);
    return new (raw) message;
}

void message_pool::free(message* m) noexcept {
    m->~message();
    ::operator delete (m, std::align_val_t{alignof(message)});
    live_.fetch_sub(1, std::memory_order_relaxed);
}

message* message_pool::acquire() {
    message* m;
    if (free_.try_dequeue(m))
        free_count_.fetch_sub(1, std::memory_order_relaxed);
    else
        m = allocate();
    m->header().flags = 0;
    return m;
}

void message_pool::release(message* m) noexcept {
    if (free_count_.load(std::memory_order_relaxed) >= keep_)
        return free(m);
    m->peer = -1;
    m->raw_bytes = -1;
    m->logical = 1;
    m->flow_bytes = 0;
    byte_vector().swap(m->large); // a split-phase payload's memory goes back now
    free_count_.fetch_add(1, std::memory_order_relaxed);
    free_.enqueue(m);
}

} // namespace prema::detail
