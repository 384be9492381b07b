/// @file
/// How handler arguments become bytes and back.
///
/// Trivially copyable types travel as their bytes. Everything else goes through cereal with a
/// binary archive that writes straight into the message buffer (no iostreams): std::string,
/// std::vector, std::map, ... (include the matching <cereal/types/...> header or
/// <prema/prema.hpp>), and any type with a `template <class Ar> void serialize(Ar&)` member.
/// A std::vector of trivially copyable elements is one copy of its bytes wherever it appears,
/// also as a member of such a type (a mobile object's state when it migrates or is checkpointed).
/// Decoding never reads past the received bytes; a short or garbled payload throws wire_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <cereal/cereal.hpp>
#include <cereal/types/array.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/tuple.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include "prema/detail/transport/bulk.hpp"
#include "prema/detail/transport/byte_vector.hpp"
#include "prema/detail/transport/copy_bytes.hpp"
#include "prema/error.hpp"

namespace prema::detail {

// Appends bytes to a fixed inline area; on overflow moves everything to a heap buffer, which
// then travels split-phase. A large vector argument can leave the stream instead and travel as
// the message's bulk (bulk.hpp).
class byte_writer {
  public:
    // `bulk_from`: a vector of at least this many bytes becomes the bulk (0: none does).
    byte_writer(std::byte* inline_area, std::size_t capacity, std::size_t bulk_from = 0) noexcept
        : inline_(inline_area), capacity_(capacity), bulk_from_(bulk_from) {}
    byte_writer(byte_writer&&) noexcept = default;
    byte_writer& operator=(byte_writer&&) noexcept = default;
    ~byte_writer() {
        if (heap_.capacity()) [[unlikely]]
            recycle_heap();
    }

    // Small enough to be inlined into every argument's serialization, where `n` is known.
    void write(const void* p, std::size_t n) {
        if (!spilled_ && size_ + n <= capacity_) [[likely]] {
            if (n)
                copy_bytes(inline_ + size_, p, n);
            size_ += n;
            return;
        }
        write_spilled(p, n);
    }

    // Overwrites bytes already written (a header reserved before the body was known).
    void patch(std::size_t offset, const void* p, std::size_t n) noexcept {
        std::memcpy((spilled_ ? heap_.data() : inline_) + offset, p, n);
    }

    // Where the stream goes when it outgrows its area, before a heap buffer: grow(context,
    // need, kept, capacity) returns an area of `capacity` >= need bytes holding the first
    // `kept` bytes of the current one (which becomes the grower's), or nullptr for the heap.
    using grow_fn = std::byte* (*)(void* context, std::size_t need, std::size_t kept,
                                   std::size_t& capacity);
    void grow_with(grow_fn grow, void* context) noexcept {
        grow_ = grow;
        grow_context_ = context;
    }

    std::size_t size() const noexcept { return size_; }
    bool spilled() const noexcept { return spilled_; }
    byte_vector& heap() noexcept { return heap_; }
    const std::byte* data() const noexcept { return spilled_ ? heap_.data() : inline_; }

    bool takes_bulk(std::size_t bytes) const noexcept {
        return bulk_from_ != 0 && bytes >= bulk_from_ && !bulk_;
    }
    // The count of the vector that becomes the bulk, marked; its bytes go to bulk().
    void write_bulk_count(std::uint64_t n) {
        bulk_at_ = size_;
        n |= bulk_bit;
        write(&n, sizeof n);
    }
    bulk_buffer& bulk() noexcept { return bulk_; }
    const bulk_buffer& bulk() const noexcept { return bulk_; }

    // The stream has outgrown the inline part of a message, so the bulk cannot travel beside
    // it: its bytes go back after their count, as if they had never left.
    void fold_bulk() {
        constexpr std::size_t count = sizeof(std::uint64_t);
        std::size_t head = bulk_at_ + count, bulk = bulk_.size();
        byte_vector all = vector_pool<byte_vector>::get().take(size_ + bulk);
        copy_bytes(all.data(), data(), head);
        copy_bytes(all.data() + head, bulk_.data(), bulk);
        copy_bytes(all.data() + head + bulk, data() + head, size_ - head);
        std::uint64_t n;
        std::memcpy(&n, all.data() + bulk_at_, count);
        n &= ~bulk_bit;
        std::memcpy(all.data() + bulk_at_, &n, count);
        std::swap(heap_, all);
        if (all.capacity())
            vector_pool<byte_vector>::get().give(std::move(all));
        size_ += bulk;
        spilled_ = true;
        bulk_.reset();
    }

    // Moves the stream into `area` of `capacity` bytes (at least size()): the inline part of
    // the message that carries the bulk.
    void relocate(std::byte* area, std::size_t capacity) noexcept {
        if (size_ && data() != area)
            copy_bytes(area, data(), size_);
        if (spilled_) {
            vector_pool<byte_vector>::get().give(std::move(heap_));
            heap_ = byte_vector();
            spilled_ = false;
        }
        inline_ = area;
        capacity_ = capacity;
    }

  private:
    [[gnu::noinline]] void recycle_heap() noexcept {
        vector_pool<byte_vector>::get().give(std::move(heap_));
    }
    [[gnu::noinline]] void write_spilled(const void* p, std::size_t n) {
        if (!spilled_ && grow_) {
            std::size_t capacity = 0;
            if (std::byte* area = grow_(grow_context_, size_ + n, size_, capacity)) {
                inline_ = area;
                capacity_ = capacity;
                copy_bytes(inline_ + size_, p, n);
                size_ += n;
                return;
            }
        }
        if (!spilled_) {
            // A heap buffer given in advance (heap()) is kept if it is large enough.
            std::size_t room = std::max(2 * capacity_, size_ + n);
            if (heap_.capacity() < room)
                heap_ = vector_pool<byte_vector>::get().take_room(room);
            heap_.assign(inline_, inline_ + size_);
            spilled_ = true;
        }
        // resize leaves the new bytes uninitialised (byte_vector); memcpy is the one copy.
        std::size_t at = heap_.size();
        heap_.resize(at + n);
        if (n)
            copy_bytes(heap_.data() + at, p, n);
        size_ += n;
    }

    std::byte* inline_;
    std::size_t capacity_;
    std::size_t bulk_from_;
    std::size_t size_ = 0;
    bool spilled_ = false;
    byte_vector heap_;
    bulk_buffer bulk_;
    std::size_t bulk_at_ = 0; // where the bulk's count lies in the stream
    grow_fn grow_ = nullptr;
    void* grow_context_ = nullptr;
};

// Reads bytes from a received payload, refusing to read past its end. `bulk`: the message's
// bulk, which a marked vector count takes.
class byte_reader {
  public:
    explicit byte_reader(std::span<const std::byte> bytes, bulk_buffer* bulk = nullptr) noexcept
        : bytes_(bytes), bulk_(bulk) {}

    void read(void* p, std::size_t n) {
        if (auto bytes = take(n); n)
            copy_bytes(p, bytes.data(), n);
    }

    // The next n bytes, in place.
    std::span<const std::byte> take(std::size_t n) {
        if (n > remaining()) [[unlikely]]
            truncated(n);
        auto taken = bytes_.subspan(offset_, n);
        offset_ += n;
        return taken;
    }

    std::size_t remaining() const noexcept { return bytes_.size() - offset_; }
    std::span<const std::byte> rest() const noexcept { return bytes_.subspan(offset_); }

    bulk_buffer* bulk() const noexcept { return bulk_; }

    template <class T> std::vector<T> take_bulk(std::uint64_t count) {
        if (!bulk_ || !*bulk_)
            throw wire_error("garbled payload: a vector of " + std::to_string(count) +
                             " elements marked as the split-phase payload, but there is none");
        if (count != bulk_->size() / sizeof(T) || bulk_->size() % sizeof(T) != 0)
            throw wire_error("garbled payload: a vector of " + std::to_string(count) +
                             " elements of " + std::to_string(sizeof(T)) +
                             " bytes in a split-phase payload of " + std::to_string(bulk_->size()) +
                             " bytes");
        return bulk_->take<T>();
    }

    // Throws wire_error unless the arguments took every byte, and the bulk if there is one.
    void expect_end() const {
        if (remaining() != 0 || (bulk_ && *bulk_)) [[unlikely]]
            left_over();
    }

  private:
    [[noreturn, gnu::noinline]] void left_over() const {
        if (remaining() != 0)
            throw wire_error("payload has " + std::to_string(remaining()) +
                             " bytes more than the handler's parameters");
        throw wire_error("no parameter takes the split-phase payload of " +
                         std::to_string(bulk_->size()) + " bytes");
    }
    [[noreturn, gnu::noinline]] void truncated(std::size_t n) const {
        throw wire_error("truncated payload: needs " + std::to_string(n) + " more bytes, " +
                         std::to_string(remaining()) + " left");
    }

    std::span<const std::byte> bytes_;
    std::size_t offset_ = 0;
    bulk_buffer* bulk_;
};

class output_archive
    : public cereal::OutputArchive<output_archive, cereal::AllowEmptyClassElision> {
  public:
    explicit output_archive(byte_writer& w)
        : cereal::OutputArchive<output_archive, cereal::AllowEmptyClassElision>(this), w_(w) {}
    void saveBinary(const void* p, std::size_t n) { w_.write(p, n); }

  private:
    byte_writer& w_;
};

class input_archive : public cereal::InputArchive<input_archive, cereal::AllowEmptyClassElision> {
  public:
    explicit input_archive(byte_reader& r)
        : cereal::InputArchive<input_archive, cereal::AllowEmptyClassElision>(this), r_(r) {}
    void loadBinary(void* p, std::size_t n) { r_.read(p, n); }
    std::size_t remaining() const noexcept { return r_.remaining(); }
    bool load_bool();

  private:
    byte_reader& r_;
};

template <class T>
std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_SAVE_FUNCTION_NAME(output_archive& ar,
                                                                    const T& t) {
    ar.saveBinary(std::addressof(t), sizeof(t));
}
// A bool travels as one byte, 0 or 1; any other byte would be undefined behaviour once loaded.
inline bool read_bool(byte_reader& r) {
    static_assert(sizeof(bool) == 1);
    std::uint8_t b = 0;
    r.read(&b, 1);
    if (b > 1)
        throw wire_error("garbled payload: bool of value " + std::to_string(b));
    return b == 1;
}
inline bool input_archive::load_bool() {
    return read_bool(r_);
}

template <class T>
std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, T& t) {
    if constexpr (std::is_same_v<T, bool>)
        t = ar.load_bool();
    else
        ar.loadBinary(std::addressof(t), sizeof(t));
}
template <class Archive, class T>
CEREAL_ARCHIVE_RESTRICT(input_archive, output_archive)
CEREAL_SERIALIZE_FUNCTION_NAME(Archive& ar, cereal::NameValuePair<T>& t) {
    ar(t.value);
}
template <class T> void CEREAL_SAVE_FUNCTION_NAME(output_archive& ar, const cereal::SizeTag<T>& t) {
    ar(t.size);
}
// A garbled container length must not allocate gigabytes before the read fails.
template <class T> void CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, cereal::SizeTag<T>& t) {
    ar(t.size);
    if (std::uint64_t(t.size) > ar.remaining())
        throw wire_error("garbled payload: container of " + std::to_string(std::uint64_t(t.size)) +
                         " elements in " + std::to_string(ar.remaining()) + " bytes");
}
template <class T>
void CEREAL_SAVE_FUNCTION_NAME(output_archive& ar, const cereal::BinaryData<T>& bd) {
    ar.saveBinary(bd.data, std::size_t(bd.size));
}
template <class T> void CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, cereal::BinaryData<T>& bd) {
    ar.loadBinary(bd.data, std::size_t(bd.size));
}

// Types that travel as raw bytes.
template <class T>
inline constexpr bool is_bitwise = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>;

// Vectors of raw-bytes elements and strings travel as a 64-bit count and the elements' bytes
// (cereal's layout for them), written and read without building a cereal archive, which costs
// more than the copy for the small payloads most messages carry.
template <class T> inline constexpr bool is_contiguous_bitwise = false;
template <class T, class A>
inline constexpr bool is_contiguous_bitwise<std::vector<T, A>> =
    is_bitwise<T> && !std::is_same_v<T, bool>;
template <class C, class Tr, class A>
inline constexpr bool is_contiguous_bitwise<std::basic_string<C, Tr, A>> = is_bitwise<C>;

// Inside a serialized type (a mobile object's members, say), such a vector of structs travels
// as one copy of its bytes too, as it does as an argument: cereal would write its elements one
// by one, and could not write a struct without a serialize() at all. Arithmetic elements keep
// cereal's own overload, which does the same. The layout is cereal's: a count, then the bytes.
template <class T, class A>
std::enable_if_t<is_bitwise<T> && !std::is_arithmetic_v<T>>
CEREAL_SAVE_FUNCTION_NAME(output_archive& ar, const std::vector<T, A>& v) {
    ar(cereal::make_size_tag(static_cast<cereal::size_type>(v.size())));
    ar.saveBinary(v.data(), v.size() * sizeof(T));
}
template <class T, class A>
std::enable_if_t<is_bitwise<T> && !std::is_arithmetic_v<T>>
CEREAL_LOAD_FUNCTION_NAME(input_archive& ar, std::vector<T, A>& v) {
    cereal::size_type n = 0;
    ar(cereal::make_size_tag(n));
    if (n > ar.remaining() / sizeof(T))
        throw wire_error("garbled payload: vector of " + std::to_string(std::uint64_t(n)) +
                         " elements of " + std::to_string(sizeof(T)) + " bytes in " +
                         std::to_string(ar.remaining()) + " bytes");
    v.resize(std::size_t(n));
    ar.loadBinary(v.data(), v.size() * sizeof(T));
}

// Element types that may read the payload's bytes in place (the aliasing rule's exceptions).
template <class E>
inline constexpr bool may_alias_bytes =
    std::is_same_v<E, char> || std::is_same_v<E, unsigned char> || std::is_same_v<E, std::byte>;

// Pointers are excluded explicitly: cereal declares a serialize() for raw pointers (whose body
// is a static_assert), so its traits call them serializable.
template <class T>
inline constexpr bool is_sendable =
    !std::is_pointer_v<T> && (is_bitwise<T> || is_contiguous_bitwise<T> ||
                              (cereal::traits::is_output_serializable<T, output_archive>::value &&
                               cereal::traits::is_input_serializable<T, input_archive>::value &&
                               std::is_default_constructible_v<T>));

template <class T> void write_value(byte_writer& w, const T& v) {
    static_assert(is_sendable<T>,
                  "prema: this argument type cannot be sent to another rank. Make it trivially "
                  "copyable (and not a pointer), a standard container of sendable types, or give "
                  "it a member `template <class Archive> void serialize(Archive& ar)`.");
    if constexpr (is_bitwise<T>) {
        w.write(std::addressof(v), sizeof(T));
    } else if constexpr (is_contiguous_bitwise<T>) {
        std::uint64_t n = v.size();
        w.write(&n, sizeof n);
        w.write(v.data(), n * sizeof(typename T::value_type));
    } else {
        output_archive ar(w);
        ar(v);
    }
}

template <class T> T read_value(byte_reader& r) {
    if constexpr (std::is_same_v<T, bool>) {
        return read_bool(r);
    } else if constexpr (is_bitwise<T>) {
        alignas(T) std::byte raw[sizeof(T)];
        r.read(raw, sizeof(T));
        T v;
        std::memcpy(static_cast<void*>(std::addressof(v)), raw, sizeof(T));
        return v;
    } else if constexpr (is_contiguous_bitwise<T>) {
        using E = typename T::value_type;
        std::uint64_t n = 0;
        r.read(&n, sizeof n);
        if constexpr (is_bulk_vector<T>)
            if (n & bulk_bit)
                return r.take_bulk<E>(n & ~bulk_bit);
        if (n > r.remaining() / sizeof(E))
            throw wire_error("garbled payload: container of " + std::to_string(n) +
                             " elements in " + std::to_string(r.remaining()) + " bytes");
        if constexpr (may_alias_bytes<E> && std::is_constructible_v<T, const E*, const E*>) {
            // Bytes and characters: built from the payload, not zero-filled and then copied,
            // unless the block they get is where memcpy would crawl (copy_bytes.hpp).
            const auto* from = reinterpret_cast<const E*>(r.take(n).data());
            T v;
            v.reserve(n);
            if (slow_for_memcpy(v.data(), from, n)) [[unlikely]] {
                v.resize(n);
                copy_bytes(v.data(), from, n);
            } else {
                v.assign(from, from + n);
            }
            return v;
        } else {
            T v;
            v.resize(n);
            r.read(v.data(), n * sizeof(E));
            return v;
        }
    } else {
        T v{};
        input_archive ar(r);
        ar(v);
        return v;
    }
}

template <class P, class A> inline constexpr bool is_elements_of = std::is_same_v<A, P>;
template <class T, std::size_t N>
inline constexpr bool is_elements_of<std::vector<T>, std::span<T, N>> = true;
template <class T, std::size_t N>
inline constexpr bool is_elements_of<std::vector<T>, std::span<const T, N>> = true;

// Writes `a` as a value of P (converting if the types differ). `Bulk`: a large enough vector
// (or span, for a vector parameter) becomes the message's bulk. An rvalue vector then goes to
// MPI from its own memory, the message keeping it until the send completes; an lvalue or a span
// is copied once, since the caller may change it as soon as send returns.
template <class P, bool Bulk, class A> void write_arg(byte_writer& w, A&& a) {
    using D = std::remove_cvref_t<A>;
    if constexpr (is_bulk_vector<P> && is_elements_of<P, D>) {
        using E = typename P::value_type;
        std::uint64_t n = a.size();
        if (Bulk && w.takes_bulk(n * sizeof(E))) {
            w.write_bulk_count(n);
            if constexpr (std::is_same_v<D, P> && !std::is_reference_v<A> && !std::is_const_v<A>) {
                w.bulk().hold(std::move(a));
                bulk_stats().sent_moved.fetch_add(1, std::memory_order_relaxed);
            } else {
                P copy = vector_pool<P>::get().take_room(n);
                copy.assign(a.data(), a.data() + n);
                w.bulk().hold(std::move(copy));
                bulk_stats().sent_copied.fetch_add(1, std::memory_order_relaxed);
            }
            return;
        }
        w.write(&n, sizeof n);
        w.write(a.data(), n * sizeof(E));
    } else {
        write_value<P>(w, static_cast<const P&>(std::forward<A>(a)));
    }
}

// Writes `args` as the values of `Params`.
template <class... Params, class... Args> void write_args(byte_writer& w, Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args),
                  "prema: wrong number of arguments for this handler");
    using bulk = typename bulk_element<Params...>::type;
    (write_arg<Params, travels_as_bulk<Params, bulk>>(w, std::forward<Args>(args)), ...);
}

// Reads values of `Params` in order; braced initialisation fixes the order left to right.
template <class... Params> std::tuple<Params...> read_args(byte_reader& r) {
    return std::tuple<Params...>{read_value<Params>(r)...};
}

} // namespace prema::detail

CEREAL_REGISTER_ARCHIVE(prema::detail::output_archive)
CEREAL_REGISTER_ARCHIVE(prema::detail::input_archive)
CEREAL_SETUP_ARCHIVE_TRAITS(prema::detail::input_archive, prema::detail::output_archive)
