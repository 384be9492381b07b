/// @file
/// co_await prema::send(rank, handler, args...): one-sided remote handler invocation.
///
/// The arguments are serialized before send() returns, so the caller may reuse them at once,
/// except that a large std::vector passed as an rvalue is taken over and sent from its own
/// memory (see bulk.hpp). co_await then is a yield point (it suspends if the quantum has
/// expired) and applies back-pressure: while this rank has more than
/// --prema-max-outstanding-bytes queued for the network (messages waiting for the receiver's
/// credit included), the sending coroutine suspends until that drains (the worker runs other
/// work meanwhile). It
/// resumes on a worker thread. Nothing comes back: an exception in the handler is logged on the
/// target rank.
#pragma once

#include <coroutine>
#include <utility>

#include "prema/coro/yield.hpp"
#include "prema/transport/handler.hpp"

namespace prema {
namespace detail {

// Whether senders must wait for the network to drain (src/transport/flow_control.hpp).
bool sends_held_slow() noexcept;
inline bool sends_held() noexcept {
    if (auto* o = tls_outbox) [[likely]]
        return o->senders_held->load(std::memory_order_relaxed);
    return sends_held_slow();
}
// Suspends `h` until then; false if the wait is already over.
bool hold_sender(std::coroutine_handle<> h);

} // namespace detail

/// What send() and broadcast() return: co_await it for the yield point and the back-pressure
/// (see the file's description); the message is already on its way.
struct send_awaiter {
    bool await_ready() const noexcept {
        return !detail::quantum_expired_now_and_then() && !detail::sends_held();
    }
    bool await_suspend(std::coroutine_handle<> h) const {
        if (detail::hold_sender(h))
            return true;
        if (!detail::quantum_expired())
            return false;
        detail::requeue_yielded(h);
        return true;
    }
    void await_resume() const noexcept {}
};

/// Runs handler H with `args` on `rank`, one-sided (see the file's description).
template <class H, class... A> [[nodiscard]] send_awaiter send(int rank, H, A&&... args) {
    detail::check_handler<H>();
    detail::check_rank(rank);
    detail::post_new(rank, detail::handler_id<H>::value, 0, [&](detail::byte_writer& w) {
        detail::write_handler_args<H>(w, std::forward<A>(args)...);
    });
    return {};
}

} // namespace prema
