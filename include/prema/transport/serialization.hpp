// How handler arguments become bytes and back.
//
// Trivially copyable types travel as their bytes. Everything else goes through cereal with a
// binary archive that writes straight into the message buffer (no iostreams): std::string,
// std::vector, std::map, ... (include the matching <cereal/types/...> header or
// <prema/prema.hpp>), and any type with a `template <class Ar> void serialize(Ar&)` member.
// Decoding never reads past the received bytes; a short or garbled payload throws wire_error.
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

#include "prema/error.hpp"
#include "prema/transport/byte_vector.hpp"

namespace prema::detail {

// Appends bytes to a fixed inline area; on overflow moves everything to a heap buffer, which
// then travels split-phase.
class byte_writer {
  public:
    byte_writer(std::byte* inline_area, std::size_t capacity) noexcept
        : inline_(inline_area), capacity_(capacity) {}

    void write(const void* p, std::size_t n) {
        if (!spilled_ && size_ + n <= capacity_) {
            if (n)
                std::memcpy(inline_ + size_, p, n);
        } else {
            if (!spilled_) {
                heap_.reserve(std::max(2 * capacity_, size_ + n));
                heap_.assign(inline_, inline_ + size_);
                spilled_ = true;
            }
            // resize leaves the new bytes uninitialised (byte_vector); memcpy is the one copy.
            std::size_t at = heap_.size();
            heap_.resize(at + n);
            if (n)
                std::memcpy(heap_.data() + at, p, n);
        }
        size_ += n;
    }

    // Overwrites bytes already written (a header reserved before the body was known).
    void patch(std::size_t offset, const void* p, std::size_t n) noexcept {
        std::memcpy((spilled_ ? heap_.data() : inline_) + offset, p, n);
    }

    std::size_t size() const noexcept { return size_; }
    bool spilled() const noexcept { return spilled_; }
    const std::byte* inline_area() const noexcept { return inline_; }
    byte_vector& heap() noexcept { return heap_; }

  private:
    std::byte* inline_;
    std::size_t capacity_;
    std::size_t size_ = 0;
    bool spilled_ = false;
    byte_vector heap_;
};

// Reads bytes from a received payload, refusing to read past its end.
class byte_reader {
  public:
    explicit byte_reader(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

    void read(void* p, std::size_t n) {
        if (n > remaining())
            throw wire_error("truncated payload: needs " + std::to_string(n) + " more bytes, " +
                             std::to_string(remaining()) + " left");
        if (n)
            std::memcpy(p, bytes_.data() + offset_, n);
        offset_ += n;
    }

    std::size_t remaining() const noexcept { return bytes_.size() - offset_; }
    std::span<const std::byte> rest() const noexcept { return bytes_.subspan(offset_); }

  private:
    std::span<const std::byte> bytes_;
    std::size_t offset_ = 0;
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
        if (n > r.remaining() / sizeof(E))
            throw wire_error("garbled payload: container of " + std::to_string(n) +
                             " elements in " + std::to_string(r.remaining()) + " bytes");
        T v;
        v.resize(n);
        r.read(v.data(), n * sizeof(E));
        return v;
    } else {
        T v{};
        input_archive ar(r);
        ar(v);
        return v;
    }
}

// Writes `args` as the values of `Params` (converting where the types differ).
template <class... Params, class... Args> void write_args(byte_writer& w, Args&&... args) {
    static_assert(sizeof...(Params) == sizeof...(Args),
                  "prema: wrong number of arguments for this handler");
    (write_value<Params>(w, static_cast<const Params&>(std::forward<Args>(args))), ...);
}

// Reads values of `Params` in order; braced initialisation fixes the order left to right.
template <class... Params> std::tuple<Params...> read_args(byte_reader& r) {
    return std::tuple<Params...>{read_value<Params>(r)...};
}

} // namespace prema::detail

CEREAL_REGISTER_ARCHIVE(prema::detail::output_archive)
CEREAL_REGISTER_ARCHIVE(prema::detail::input_archive)
CEREAL_SETUP_ARCHIVE_TRAITS(prema::detail::input_archive, prema::detail::output_archive)
