/// @file
/// Cooperative preemption.
///
/// A worker starts a time slice each time it resumes a coroutine. `co_await yield_point()` costs
/// one timestamp read while the slice is younger than the quantum (--prema-quantum-us); once it
/// is older, the coroutine goes to the back of its worker's queue so that queued work (messages,
/// load-balancing traffic) runs first, and later resumes on whichever worker takes it. With
/// inline progress a yield point also polls the network every 50 us without suspending, so that
/// a steal request to a rank whose workers are all busy is answered within that time, not a
/// quantum later (the balancer serves it from the queue of unstarted work).
/// `co_await yield()` always does so. A quantum of 0 disables yield points (they never suspend).
/// `should_yield()` asks a yield point's question without suspending.
#pragma once

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace prema {
namespace detail {

// Monotonic ticks: the TSC where there is one (a few ns to read), else steady_clock in ns.
inline std::uint64_t now_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return std::chrono::steady_clock::now().time_since_epoch().count();
#endif
}

// Tick at which the running slice expires; set by the worker loop, never by user code.
inline thread_local std::uint64_t slice_deadline = std::numeric_limits<std::uint64_t>::max();

inline bool quantum_expired() noexcept {
    return now_ticks() >= slice_deadline;
}

// Inline progress: tick at which a worker inside a long item serves the network from its next
// yield point (the rank's workers are its only pollers: a steal request waits for no quantum).
// Set by the worker loop for each item; the maximum elsewhere.
inline thread_local std::uint64_t poll_deadline = std::numeric_limits<std::uint64_t>::max();

// Serves the network, once poll_deadline has passed, and sets the next poll_deadline. Defined in
// src/coro/worker_pool.cpp.
void poll_at_yield_point(std::uint64_t now);

// For code that runs many times a quantum, such as a loop of sends: reading the clock costs
// about as much as the rest of a batched send, so it looks every 32nd call (a few
// microseconds late at most).
inline thread_local std::uint32_t calls_until_clock = 0;
inline bool quantum_expired_now_and_then() noexcept {
    if (calls_until_clock-- != 0)
        return false;
    calls_until_clock = 31;
    return quantum_expired();
}

// Queues `h` on the current worker (or on the rank's pool, from a thread that is not a
// worker). Throws usage_error if no runtime is running. Both are defined in src/coro/yield.cpp.
void reschedule(std::coroutine_handle<> h);

// Queues a coroutine that yielded behind everything already queued on this worker (messages
// included), so that a long handler cannot starve them.
void requeue_yielded(std::coroutine_handle<> h);

} // namespace detail

/// The awaitable behind yield() and yield_point(); resumes on a worker thread.
struct yield_awaiter {
    bool ready; ///< true: no suspension (the quantum has not expired)
    bool await_ready() const noexcept { return ready; }
    void await_suspend(std::coroutine_handle<> h) const { detail::requeue_yielded(h); }
    void await_resume() const noexcept {}
};

/// Suspends unconditionally, letting everything queued on this worker run first.
inline yield_awaiter yield() noexcept {
    return {false};
}

/// True once the current slice has outlived the quantum: where yield_point() would suspend.
/// With inline progress it serves the network as yield_point() does. For a handler that would
/// rather end than suspend: one that holds work the balancer could move once it is a message
/// again (a bag of tasks that sends itself the rest; docs/guide/fine-grained-dynamic-work.md).
inline bool should_yield() {
    const std::uint64_t now = detail::now_ticks();
    if (now >= detail::poll_deadline) [[unlikely]]
        detail::poll_at_yield_point(now);
    return now >= detail::slice_deadline;
}

/// Suspends only if the current slice has outlived the quantum. With inline progress it also
/// serves the network every 50 us or so, on this thread, without suspending.
inline yield_awaiter yield_point() {
    return {!should_yield()};
}

} // namespace prema
