/// @file
/// Bulk payloads: a large std::vector<T> argument of raw-bytes elements travels as its message's
/// split-phase payload, sent by MPI from the vector's own memory and received into a vector
/// that the handler then gets by move, so neither side copies it. The arguments' bytes hold
/// its count, marked with bulk_bit, where its elements would have been.
///
/// Buffers go round through per-type pools: a vector whose send completed, or that a handler
/// left unclaimed (a const& parameter), becomes the next receive buffer of its type. A fresh
/// std::vector<T> of n elements writes n zeros first (std::allocator value-initialises), which
/// costs about as much as the transfer itself, and a fresh large allocation faults its pages in.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/detail/transport/byte_vector.hpp"

namespace prema::detail {

inline constexpr std::uint64_t bulk_bit = std::uint64_t{1} << 63;

// The vectors that can travel as a bulk: raw-bytes elements, and the standard allocator, so
// that a receive buffer can become the handler's parameter itself.
template <class V> inline constexpr bool is_bulk_vector = false;
template <class T>
inline constexpr bool is_bulk_vector<std::vector<T>> =
    std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> && !std::is_same_v<T, bool>;

// The element type of the vectors among a handler's parameters that may travel as its bulk:
// the first bulk vector's (void if none). The receiver picks the type of its buffer before it
// reads the arguments, so vectors of other element types stay inline.
template <class... P> struct bulk_element { using type = void; };
template <class P, class... R> struct bulk_element<P, R...> : bulk_element<R...> {};
template <class T, class... R>
requires is_bulk_vector<std::vector<T>>
struct bulk_element<std::vector<T>, R...> {
    using type = T;
};

// Whether parameter type P may travel as the bulk of a handler whose bulk element type is E.
template <class P, class E> inline constexpr bool travels_as_bulk = false;
template <class T> inline constexpr bool travels_as_bulk<std::vector<T>, T> = true;

// Test hooks: what the bulk paths did on this process.
struct bulk_counters {
    std::atomic<std::uint64_t> sent_moved{0};       // sent from the caller's own vector
    std::atomic<std::uint64_t> sent_copied{0};      // copied once at send (lvalues, spans)
    std::atomic<std::uint64_t> sent_borrowed{0};    // sent from memory the caller keeps (put/get)
    std::atomic<std::uint64_t> received_moved{0};   // receive buffer handed over as it is
    std::atomic<std::uint64_t> received_copied{0};  // copied out of a receive buffer
    std::atomic<const void*> last_receive{nullptr}; // the latest split-phase receive buffer
};
bulk_counters& bulk_stats() noexcept;

// Pools register here once; the runtime empties them all when it ends.
void register_pool(void (*clear)() noexcept);
void clear_pools() noexcept;

// Spare vectors of one type, shared by the threads of a process.
template <class V> class vector_pool {
    using E = typename V::value_type;

  public:
    static vector_pool& get() {
        // Never destroyed: a buffer released during static destruction still finds its pool.
        static vector_pool& p = *new vector_pool;
        return p;
    }

    // A vector of n elements. A pooled one at least n long is shortened for free; a shorter
    // one, like a fresh one, value-initialises what it grows by (no cost for byte_vector).
    V take(std::size_t n) {
        V v = pick(n, [](const V& c) { return c.size(); });
        v.resize(n);
        return v;
    }

    // An empty vector with room for n elements, to fill by assign() without writing zeros.
    V take_room(std::size_t n) {
        V v = pick(n, [](const V& c) { return c.capacity(); });
        v.clear();
        v.reserve(n);
        return v;
    }

    void give(V&& v) noexcept {
        std::size_t bytes = v.capacity() * sizeof(E);
        if (bytes < min_bytes || bytes > max_bytes)
            return; // small ones are cheap to allocate
        std::lock_guard lock(mutex_);
        if (free_.size() == max_buffers) {
            // Keep the larger buffers: those are the ones that fault pages in.
            auto smallest = std::min_element(free_.begin(), free_.end(), by_capacity);
            if (smallest->capacity() >= v.capacity())
                return;
            bytes_ -= smallest->capacity() * sizeof(E);
            free_.erase(smallest);
        }
        if (bytes_ + bytes > max_bytes)
            return;
        bytes_ += bytes;
        free_.push_back(std::move(v));
    }

    static void clear() noexcept {
        std::vector<V> gone;
        auto& p = get();
        std::lock_guard lock(p.mutex_);
        gone.swap(p.free_);
        p.free_.reserve(max_buffers);
        p.bytes_ = 0;
    }

  private:
    static constexpr std::size_t min_bytes = 4096, max_buffers = 16,
                                 max_bytes = std::size_t{256} << 20;

    vector_pool() {
        free_.reserve(max_buffers); // give() never allocates
        register_pool(&clear);
    }

    static bool by_capacity(const V& a, const V& b) { return a.capacity() < b.capacity(); }

    // The pooled vector whose `extent` is the smallest at least n, else the one whose capacity
    // is the largest at least n, else a new one. Of equals, the one given last: it may still be
    // in cache (a ping-pong then receives into the vector it just sent, as MPI programs do).
    template <class Extent> V pick(std::size_t n, Extent extent) {
        if (n * sizeof(E) < min_bytes)
            return V();
        std::lock_guard lock(mutex_);
        auto best = free_.rend();
        for (auto it = free_.rbegin(); it != free_.rend(); ++it)
            if (extent(*it) >= n && (best == free_.rend() || extent(*it) < extent(*best)))
                best = it;
        if (best == free_.rend())
            for (auto it = free_.rbegin(); it != free_.rend(); ++it)
                if (it->capacity() >= n && (best == free_.rend() || by_capacity(*best, *it)))
                    best = it;
        if (best == free_.rend())
            return V();
        V v = std::move(*best);
        bytes_ -= v.capacity() * sizeof(E);
        free_.erase(std::next(best).base());
        return v;
    }

    std::mutex mutex_;
    std::vector<V> free_;
    std::size_t bytes_ = 0;
};

// The bytes of a split-phase payload: a vector it owns (back to its pool when the message is
// done with it), or memory it borrows from a caller who keeps it valid (put/get buffers).
class bulk_buffer {
  public:
    bulk_buffer() noexcept = default;
    bulk_buffer(bulk_buffer&& o) noexcept { steal(o); }
    bulk_buffer& operator=(bulk_buffer&& o) noexcept {
        if (this != &o) {
            reset();
            steal(o);
        }
        return *this;
    }
    ~bulk_buffer() { reset(); }

    template <class V> void hold(V&& v) noexcept {
        static_assert(!std::is_reference_v<V> && sizeof(V) <= sizeof(storage_) &&
                      alignof(V) <= alignof(holder));
        reset();
        V* held = ::new (static_cast<void*>(storage_)) V(std::move(v));
        ops_ = &ops_of<V>;
        data_ = reinterpret_cast<std::byte*>(held->data());
        bytes_ = held->size() * sizeof(typename V::value_type);
    }

    void borrow(void* p, std::size_t bytes) noexcept {
        reset();
        data_ = static_cast<std::byte*>(p);
        bytes_ = bytes;
    }

    std::byte* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return bytes_; }
    explicit operator bool() const noexcept { return bytes_ != 0; }
    bool borrowed() const noexcept { return bytes_ != 0 && !ops_; }

    // The bytes as a vector: the held vector itself when it is a std::vector<T>, else a copy.
    template <class T> std::vector<T> take() {
        using V = std::vector<T>;
        V v;
        if (ops_ == &ops_of<V>) {
            v = std::move(*std::launder(reinterpret_cast<V*>(storage_)));
            bulk_stats().received_moved.fetch_add(1, std::memory_order_relaxed);
        } else {
            v = vector_pool<V>::get().take(bytes_ / sizeof(T));
            std::memcpy(static_cast<void*>(v.data()), data_, v.size() * sizeof(T));
            bulk_stats().received_copied.fetch_add(1, std::memory_order_relaxed);
        }
        reset();
        return v;
    }

    void reset() noexcept {
        if (ops_)
            ops_->recycle(storage_);
        ops_ = nullptr;
        data_ = nullptr;
        bytes_ = 0;
    }

  private:
    struct ops {
        void (*move)(void* from, void* to) noexcept;
        void (*recycle)(void* held) noexcept; // back to the pool, and destroyed
    };
    template <class V>
    static constexpr ops ops_of = {
        [](void* from, void* to) noexcept {
            V* f = std::launder(static_cast<V*>(from));
            ::new (to) V(std::move(*f));
            f->~V();
        },
        [](void* held) noexcept {
            V* v = std::launder(static_cast<V*>(held));
            vector_pool<V>::get().give(std::move(*v));
            v->~V();
        },
    };
    using holder = std::vector<std::byte>; // every std::vector is laid out alike

    void steal(bulk_buffer& o) noexcept {
        if (o.ops_)
            o.ops_->move(o.storage_, storage_);
        ops_ = std::exchange(o.ops_, nullptr);
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }

    alignas(holder) std::byte storage_[sizeof(holder)];
    const ops* ops_ = nullptr; // null: nothing held
    std::byte* data_ = nullptr;
    std::size_t bytes_ = 0;
};

// The pooled receive buffer for a bulk of `bytes` whose elements are T (none if they do not
// divide it: the arguments then fail to decode).
template <class T> void hold_pooled(std::size_t bytes, bulk_buffer& out) {
    if (bytes % sizeof(T) == 0)
        out.hold(vector_pool<std::vector<T>>::get().take(bytes / sizeof(T)));
}

// Gives the large vectors a finished handler left in its arguments (const& parameters; moved
// ones are empty) to their pools.
template <class Tuple> void recycle_arguments(Tuple& args) noexcept {
    std::apply(
        [](auto&... a) {
            (
                [](auto& x) {
                    using V = std::remove_cvref_t<decltype(x)>;
                    if constexpr (is_bulk_vector<V>)
                        vector_pool<V>::get().give(std::move(x));
                }(a),
                ...);
        },
        args);
}

} // namespace prema::detail
