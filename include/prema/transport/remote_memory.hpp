/// @file
/// DMCS-style put and get of contiguous buffers on another rank.
///
/// A remote_ptr<T> names memory on one rank; make one with prema::remote(p) on the owning rank
/// and send it anywhere. `co_await put(dst, src)` returns once the bytes are in place on
/// dst.rank; `co_await get(src, dst)` once they are in `dst` here. The remote side runs no user
/// code: system handlers move the bytes.
///
/// Up to --prema-eager-bytes travel inside the request or reply. Larger ones go to MPI from
/// where they lie and are received where they belong, with no copy on either side: MPI reads
/// the source while the transfer is in flight and writes the destination as it arrives, possibly
/// before handlers sent earlier to that rank have run. So both buffers must stay valid, and the
/// source unchanged, until the put or get returns (on the remote rank as well: nothing tells it
/// when that is).
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "prema/transport/call.hpp"

namespace prema {

int rank() noexcept;

/// Memory of T on one rank, as other ranks name it for put and get.
template <class T> struct remote_ptr {
    int rank = -1;             ///< the rank that owns the memory
    std::uint64_t address = 0; ///< its address there

    /// The local pointer; only meaningful on `rank`.
    T* local() const noexcept { return reinterpret_cast<T*>(address); }
    /// The pointer n elements further on the same rank.
    remote_ptr operator+(std::ptrdiff_t n) const noexcept {
        return {rank, address + std::uint64_t(n * std::ptrdiff_t(sizeof(T)))};
    }
};

/// Names the local memory at `p` for other ranks; it must stay valid while they use it.
template <class T> remote_ptr<T> remote(T* p) noexcept {
    return {rank(), reinterpret_cast<std::uint64_t>(p)};
}

namespace detail {
// [u64 address][u64 bytes][the bytes, as write_in_place writes them]: replies when they are in
// place.
std::uint64_t put_handler_id() noexcept;
// [u64 address][u64 bytes]: replies with the bytes, as write_in_place writes them.
std::uint64_t get_handler_id() noexcept;
} // namespace detail

/// Copies `src` to `dst` on dst.rank; returns once the bytes are in place there. `src` must stay
/// valid and unchanged until then.
template <class T> task<> put(remote_ptr<T> dst, std::span<const T> src) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "prema::put copies bytes: T must be trivially copyable");
    detail::check_rank(dst.rank);
    co_await detail::call_awaiter<void>(detail::put_handler_id(), [&](detail::byte_writer& w) {
        std::uint64_t head[2] = {dst.address, src.size_bytes()};
        w.write(head, sizeof head);
        detail::write_in_place(w, std::as_bytes(src));
        return dst.rank;
    });
}

/// Copies dst.size() elements from `src` on src.rank into `dst`; returns once they are here.
/// `dst` must stay valid until then.
template <class T> task<> get(remote_ptr<T> src, std::span<std::remove_const_t<T>> dst) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "prema::get copies bytes: T must be trivially copyable");
    detail::check_rank(src.rank);
    auto request =
        detail::call_awaiter<void>(detail::get_handler_id(), [&](detail::byte_writer& w) {
            std::uint64_t head[2] = {src.address, dst.size_bytes()};
            w.write(head, sizeof head);
            return src.rank;
        });
    request.land_in(std::as_writable_bytes(dst));
    co_await request;
}

} // namespace prema
