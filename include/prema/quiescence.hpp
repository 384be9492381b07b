/// @file
/// co_await prema::quiescence(): collective; resumes once every rank has reached this point and
/// the job is otherwise quiescent (no handler queued or running, no message in flight).
/// Resumes on a worker thread.
#pragma once

#include <coroutine>

namespace prema {
namespace detail {
void add_quiescence_waiter(std::coroutine_handle<> h);
}

/// What prema::quiescence() returns: co_await it.
struct quiescence_awaiter {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { detail::add_quiescence_waiter(h); }
    void await_resume() const noexcept {}
};

/// Collective: resumes once every rank has reached this point and the job is otherwise
/// quiescent (see the file's description).
[[nodiscard]] inline quiescence_awaiter quiescence() noexcept {
    return {};
}

} // namespace prema
