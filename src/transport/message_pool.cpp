#include "transport/message_pool.hpp"

#include <algorithm>
#include <malloc.h>
#include <new>

#include "runtime/log.hpp"

namespace prema::detail {

struct message_pool::thread_cache {
    static constexpr int capacity = 32;
    message_pool* owner = nullptr;
    int count = 0;
    message* items[capacity];

    // Gives everything back to the owner's shared list (thread exit, or a new owner).
    void detach() noexcept {
        if (!owner)
            return;
        {
            std::lock_guard lock(owner->caches_mutex_);
            std::erase(owner->caches_, this);
        }
        while (count > 0)
            owner->release_shared(items[--count]);
        owner = nullptr;
    }
    ~thread_cache() { detach(); }
};

namespace {
thread_local message_pool::thread_cache cache;
// &cache once this thread has used it. A thread_local with a destructor is reached through an
// initialisation check on every access (about 30 instructions); a plain pointer is one load.
thread_local message_pool::thread_cache* cache_seen = nullptr;
} // namespace

message_pool::thread_cache* message_pool::my_cache() noexcept {
    if (auto* c = cache_seen; c && c->owner == this) [[likely]]
        return c;
    auto* c = &cache;
    cache_seen = c;
    if (c->owner == this)
        return c;
    c->detach(); // buffers of an earlier runtime's pool, still alive
    std::lock_guard lock(caches_mutex_);
    caches_.push_back(c);
    c->owner = this;
    return c;
}

message_pool::message_pool(std::size_t eager_bytes, std::size_t preallocate, std::size_t keep)
    : eager_(eager_bytes), keep_(std::max(keep, preallocate)),
      next_report_(2 * std::max<std::size_t>(preallocate, 1)) {
    // Large buffers the pools (bulk.hpp) cannot supply, and the vectors handlers keep, are
    // allocated and freed per message. By default glibc maps buffers above 128 KiB anew each
    // time and returns them to the OS, so every megabyte message paid hundreds of page faults;
    // keep such buffers in the heap instead.
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    for (std::size_t i = 0; i < preallocate; ++i)
        release_shared(allocate());
}

message_pool::~message_pool() {
    {
        std::lock_guard lock(caches_mutex_);
        for (auto* c : caches_) {
            while (c->count > 0)
                free(c->items[--c->count]);
            c->owner = nullptr;
        }
        caches_.clear();
    }
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
    if (auto* c = my_cache(); c->count > 0)
        m = c->items[--c->count];
    else if (free_.try_dequeue(m))
        free_count_.fetch_sub(1, std::memory_order_relaxed);
    else
        m = allocate();
    m->header().flags = 0;
    return m;
}

void message_pool::release(message* m) noexcept {
    m->peer = -1;
    m->raw_bytes = -1;
    m->logical = 1;
    m->flow_bytes = 0;
    m->flow_queued = false;
    m->inline_bytes = 0;
    m->split.reset(); // a split-phase payload's memory goes back to its pool now
    if (auto* c = my_cache(); c->count < thread_cache::capacity) {
        c->items[c->count++] = m;
        return;
    }
    release_shared(m);
}

void message_pool::release_shared(message* m) noexcept {
    if (free_count_.load(std::memory_order_relaxed) >= keep_)
        return free(m);
    free_count_.fetch_add(1, std::memory_order_relaxed);
    free_.enqueue(m);
}

} // namespace prema::detail
