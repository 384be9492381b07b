// DMCS-style put and get of contiguous buffers on another rank.
//
// A remote_ptr<T> names memory on one rank; make one with prema::remote(p) on the owning rank
// and send it anywhere. `co_await put(dst, src)` returns once the bytes are in place on
// dst.rank; `co_await get(src, dst)` once they are in `dst` here. Buffers must stay valid until
// then. The remote side runs no user code: the bytes are copied by a system handler.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "prema/transport/call.hpp"

namespace prema {

int rank() noexcept;

template <class T> struct remote_ptr {
    int rank = -1;
    std::uint64_t address = 0;

    // The local pointer; only meaningful on `rank`.
    T* local() const noexcept { return reinterpret_cast<T*>(address); }
    remote_ptr operator+(std::ptrdiff_t n) const noexcept {
        return {rank, address + std::uint64_t(n * std::ptrdiff_t(sizeof(T)))};
    }
};

template <class T> remote_ptr<T> remote(T* p) noexcept {
    return {rank(), reinterpret_cast<std::uint64_t>(p)};
}

namespace detail {
using raw_bytes = std::vector<unsigned char>;

inline void put_bytes(std::uint64_t address, raw_bytes bytes) {
    // An empty put has bytes.data() == nullptr: memcpy from a null pointer is undefined even
    // for 0 bytes (UBSan: "null pointer passed as argument 2").
    if (!bytes.empty())
        std::memcpy(reinterpret_cast<void*>(address), bytes.data(), bytes.size());
}
inline raw_bytes get_bytes(std::uint64_t address, std::uint64_t n) {
    auto p = reinterpret_cast<const unsigned char*>(address);
    return raw_bytes(p, p + n);
}
} // namespace detail

template <class T> task<> put(remote_ptr<T> dst, std::span<const T> src) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "prema::put copies bytes: T must be trivially copyable");
    auto p = reinterpret_cast<const unsigned char*>(src.data());
    co_await call(dst.rank, fn<&detail::put_bytes>, dst.address,
                  detail::raw_bytes(p, p + src.size_bytes()));
}

template <class T> task<> get(remote_ptr<T> src, std::span<std::remove_const_t<T>> dst) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "prema::get copies bytes: T must be trivially copyable");
    auto bytes = co_await call(src.rank, fn<&detail::get_bytes>, src.address,
                               std::uint64_t(dst.size_bytes()));
    if (!bytes.empty()) // an empty get may have null pointers on both sides (UB in memcpy)
        std::memcpy(dst.data(), bytes.data(), bytes.size());
}

} // namespace prema
