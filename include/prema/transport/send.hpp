// co_await prema::send(rank, handler, args...): one-sided remote handler invocation.
//
// The arguments are serialized before send() returns, so the caller may reuse them at once,
// except that a large std::vector passed as an rvalue is taken over and sent from its own
// memory (see bulk.hpp); co_await then only serves as a yield point (it suspends if the quantum
// has expired). Nothing comes back: an exception in the handler is logged on the target rank.
#pragma once

#include <utility>

#include "prema/coro/yield.hpp"
#include "prema/transport/handler.hpp"

namespace prema {

template <class H, class... A> [[nodiscard]] yield_awaiter send(int rank, H, A&&... args) {
    detail::check_handler<H>();
    detail::check_rank(rank);
    detail::post_new(rank, detail::handler_id<H>::value, 0, [&](detail::byte_writer& w) {
        detail::write_handler_args<H>(w, std::forward<A>(args)...);
    });
    return yield_point();
}

} // namespace prema
