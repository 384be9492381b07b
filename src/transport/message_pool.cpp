#include "transport/message_pool.hpp"

#include <algorithm>
#include <new>

#include "base/log.hpp"

namespace prema::detail {

struct message_pool::thread_cache {
    static constexpr int capacity = 32; // per class
    message_pool* owner = nullptr;
    std::array<int, max_classes> count{};
    message* items[max_classes][capacity];
    // Wire bytes this thread took minus those it gave back (it may give back what another
    // took): written by this thread alone, so a store, not a locked add; read by
    // bytes_in_use().
    std::atomic<std::int64_t> in_use{0};

    void add_in_use(std::int64_t bytes) noexcept {
        in_use.store(in_use.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
    }

    // Gives everything back to the owner's shared lists (thread exit, or a new owner).
    void detach() noexcept {
        if (!owner)
            return;
        {
            std::lock_guard lock(owner->caches_mutex_);
            std::erase(owner->caches_, this);
            owner->in_use_detached_.fetch_add(in_use.exchange(0), std::memory_order_relaxed);
        }
        for (std::size_t c = 0; c < max_classes; ++c)
            while (count[c] > 0)
                owner->release_shared(items[c][--count[c]]);
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

message_pool::message_pool(std::size_t eager_bytes, std::size_t preallocate, std::size_t keep_bytes)
    : eager_(eager_bytes), next_report_(2 * std::max<std::size_t>(preallocate, 1)) {
    for (std::size_t wire = smallest_class_bytes; wire < wire_bytes() && classes_ + 1 < max_classes;
         wire *= 4)
        wire_[classes_++] = wire;
    wire_[classes_++] = wire_bytes();
    for (std::size_t c = 0; c < classes_; ++c)
        inline_capacity_[c] = wire_[c] - sizeof(wire_header);
    keep_bytes_ = std::max(keep_bytes, preallocate * wire_[0]);
    // Large payload buffers are allocated and freed per message. The pool leaves malloc's
    // settings to the host program (a library must not change them): glibc raises its mmap
    // threshold by itself once such a buffer is freed, so a stream of large messages stops
    // paying a fresh mapping for each after the first.
    for (std::size_t i = 0; i < preallocate; ++i)
        release_shared(allocate(0));
}

message_pool::~message_pool() {
    {
        std::lock_guard lock(caches_mutex_);
        for (auto* c : caches_) {
            for (std::size_t k = 0; k < max_classes; ++k)
                while (c->count[k] > 0)
                    free(c->items[k][--c->count[k]]);
            c->owner = nullptr;
        }
        caches_.clear();
    }
    for (auto& list : free_) {
        message* m;
        while (list.try_dequeue(m))
            free(m);
    }
    if (auto left = live_.load())
        log().error("message pool: {} buffer(s) never came back", left);
}

message* message_pool::allocate(std::size_t c) {
    void* raw = ::operator new (sizeof(message) + wire_[c], std::align_val_t{alignof(message)});
    auto live = live_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (auto report = next_report_.load(std::memory_order_relaxed);
        live >= report && next_report_.compare_exchange_strong(report, 2 * report))
        log().debug("message pool grew to {} buffers", live);
    auto* m = new (raw) message;
    m->size_class = std::uint8_t(c);
    m->capacity = std::uint32_t(wire_[c]);
    return m;
}

void message_pool::free(message* m) noexcept {
    m->~message();
    ::operator delete (m, std::align_val_t{alignof(message)});
    live_.fetch_sub(1, std::memory_order_relaxed);
}

message* message_pool::acquire_class(std::size_t c) {
    message* m;
    auto* cache = my_cache();
    if (cache->count[c] > 0)
        m = cache->items[c][--cache->count[c]];
    else if (free_[c].try_dequeue(m))
        free_bytes_.fetch_sub(wire_[c], std::memory_order_relaxed);
    else
        m = allocate(c);
    cache->add_in_use(std::int64_t(m->capacity));
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
    m->next = nullptr;
    m->split.reset(); // a split-phase payload's memory goes back to its pool now
    auto* cache = my_cache();
    cache->add_in_use(-std::int64_t(m->capacity));
    if (int& n = cache->count[m->size_class]; n < thread_cache::capacity) {
        cache->items[m->size_class][n++] = m;
        return;
    }
    release_shared(m);
}

void message_pool::release_shared(message* m) noexcept {
    if (free_bytes_.load(std::memory_order_relaxed) + m->capacity > keep_bytes_)
        return free(m);
    free_bytes_.fetch_add(m->capacity, std::memory_order_relaxed);
    free_[m->size_class].enqueue(m);
}

std::int64_t message_pool::bytes_in_use() noexcept {
    std::lock_guard lock(caches_mutex_);
    std::int64_t sum = in_use_detached_.load(std::memory_order_relaxed);
    for (auto* c : caches_)
        sum += c->in_use.load(std::memory_order_relaxed);
    return sum;
}

} // namespace prema::detail
