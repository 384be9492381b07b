/// @file
/// Cooperative preemption.
///
/// A worker starts a time slice each time it resumes a coroutine. `co_await yield_point()` costs
/// one timestamp read while the slice is younger than the quantum (--prema-quantum-us); once it
/// is older, the coroutine goes to the back of its worker's queue so that queued work (messages,
/// load-balancing traffic) runs first, and later resumes on whichever worker takes it.
/// `co_await yield()` always does so. A quantum of 0 disables yield points (they never suspend).
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

// Queues `h` on the current worker (or on the pool, from a thread that is not a worker).
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

/// Suspends only if the current slice has outlived the quantum.
inline yield_awaiter yield_point() noexcept {
    return {!detail::quantum_expired()};
}

} // namespace prema
