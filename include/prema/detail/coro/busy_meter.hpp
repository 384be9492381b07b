/// @file
/// busy_meter: the running time of a coroutine object handler, for --prema-lb-load.
///
/// A coroutine handler holds its object while it is suspended (awaiting a reply, yielding), but
/// only the stretches in which it runs are work a balancer should weigh. Every co_await in a task
/// goes through task_promise_base::await_transform, which wraps the awaiter in a metered_awaiter:
/// on suspension it adds the stretch since the coroutine last started or resumed on this thread to
/// the handler's meter, on resumption it starts a new stretch. The meter reaches every task the
/// handler awaits (and when_all's operations) with the object access (access_context), so their
/// stretches count too; spawned tasks do not hold the object and are not counted.
///
/// Cost: with no meter (nothing measured, or a coroutine that is not an object handler's) a
/// suspension and a resumption test one pointer each; a co_await that does not suspend (a yield
/// point within its quantum, an awaited task) costs nothing more. Measured, each suspension reads
/// the clock once and adds to an atomic (when_all's operations may run on several workers at once),
/// each resumption reads it once. The stretch of a when_all operation that ends the when_all is
/// not counted: its awaiting coroutine resumes on that thread and starts a stretch of its own.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <utility>

#include "prema/coro/yield.hpp"

namespace prema::detail {

struct busy_meter {
    std::atomic<std::uint64_t> ticks{0}; // now_ticks() units
};

// now_ticks() when the measured coroutine running on this thread last started or resumed. Only
// measured coroutines read it, and each sets it before it runs, so a stale value is never used.
inline thread_local std::uint64_t stretch_start = 0;

// Ends the running stretch on this thread: what ran from here on belongs to a new one.
inline void pause_meter(busy_meter& m) noexcept {
    const std::uint64_t now = now_ticks();
    m.ticks.fetch_add(now - stretch_start, std::memory_order_relaxed);
    stretch_start = now;
}

// What `co_await a` awaits: a's operator co_await (member or free), else a itself.
template <class A> decltype(auto) awaiter_of(A&& a) {
    if constexpr (requires { std::forward<A>(a).operator co_await(); })
        return std::forward<A>(a).operator co_await();
    else if constexpr (requires { operator co_await(std::forward<A>(a)); })
        return operator co_await(std::forward<A>(a));
    else
        return std::forward<A>(a);
}

// Aw: the awaiter, by value or by reference (it lives as long as the co_await expression).
// Only a co_await that suspended starts a new stretch: one that did not (a yield point within its
// quantum, a send with room in its batch) is part of the running stretch, whose time must count.
template <class Aw> struct metered_awaiter {
    Aw inner;
    busy_meter* meter;
    bool suspended = false;

    bool await_ready() { return inner.await_ready(); }
    template <class P> decltype(auto) await_suspend(std::coroutine_handle<P> h) {
        if (meter) {
            pause_meter(*meter);
            suspended = true;
        }
        return inner.await_suspend(h);
    }
    decltype(auto) await_resume() {
        if (suspended)
            stretch_start = now_ticks();
        return inner.await_resume();
    }
};

} // namespace prema::detail
