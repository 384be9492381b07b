/// @file
/// co_await prema::broadcast(handler, args...): runs the handler once on every rank, the caller
/// included. The message spreads along a binary tree rooted at the caller (floor(log2 P) steps,
/// two sends per rank);
/// the handler sees the arguments exactly as a send would deliver them.
#pragma once

#include <cstdint>
#include <utility>

#include "prema/transport/send.hpp"

namespace prema {
namespace detail {
// Posts the relay message that carries `inner` (a handler id and its payload) down the tree.
void start_broadcast(std::uint64_t inner, byte_writer& inner_payload);
} // namespace detail

/// Runs handler H with `args` once on every rank, this one included.
template <class H, class... A> [[nodiscard]] send_awaiter broadcast(H, A&&... args) {
    detail::check_handler<H>();
    detail::byte_writer w(nullptr, 0); // no inline area: the payload lands in w.heap()
    detail::write_handler_args<H>(w, std::forward<A>(args)...);
    detail::start_broadcast(detail::handler_id<H>::value, w);
    return {};
}

} // namespace prema
