#include "transport/message_pool.hpp"

#include <malloc.h>
#include <new>

#include "runtime/log.hpp"

namespace prema::detail {

message_pool::message_pool(std::size_t eager_bytes, std::size_t preallocate)
    : eager_(eager_bytes), next_report_(2 * std::max<std::size_t>(preallocate, 1)) {
    // Large buffers the pools (bulk.hpp) cannot supply, and the vectors handlers keep, are
    // allocated and freed per message. By default glibc maps buffers above 128 KiB anew each
    // time and returns them to the OS, so every megabyte message paid hundreds of page faults;
    // keep such buffers in the heap instead.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    for (std::size_t i = 0; i < preallocate; ++i)
        free_.enqueue(allocate());
}

message_pool::~message_pool() {
    for (message* m : all_) {
        m->~message();
        ::operator delete (m, std::align_val_t{alignof(message)});
    }
}

message* message_pool::allocate() {
    void* raw = ::operator new (sizeof(message) + wire_bytes(), std::align_val_t{alignof(message)});
    auto* m = new (raw) message;
    std::lock_guard lock(grow_mutex_);
    all_.push_back(m);
    if (all_.size() == next_report_) {
        log().debug("message pool grew to {} buffers", all_.size());
        next_report_ *= 2;
    }
    return m;
}

message* message_pool::acquire() {
    message* m;
    if (!free_.try_dequeue(m))
        m = allocate();
    m->header().flags = 0;
    return m;
}

void message_pool::release(message* m) noexcept {
    m->peer = -1;
    m->raw_bytes = -1;
    m->logical = 1;
    m->inline_bytes = 0;
    m->split.reset(); // a split-phase payload's memory goes back to its pool now
    free_.enqueue(m);
}

} // namespace prema::detail
