/// @file
/// prema::spawn: start a task<> detached on this rank's worker pool.
///
/// The runtime owns the task from then on; it runs on a worker thread, and an exception that
/// escapes it is logged with the rank (and counted, so that run() reports failure). Spawned
/// tasks count as work for quiescence detection while they are queued or running.
#pragma once

#include <coroutine>
#include <exception>
#include <string_view>

#include "prema/coro/task.hpp"
#include "prema/coro/yield.hpp"

namespace prema {
namespace detail {

// Logs an exception that escaped detached work; `what` names the work (a handler name).
void report_detached_error(std::string_view what, std::exception_ptr e) noexcept;

// A fire-and-forget coroutine frame; frees itself at completion.
struct detached {
    struct promise_type : pooled_frame, access_context {
        detached get_return_object() noexcept {
            return {std::coroutine_handle<promise_type>::from_promise(*this)};
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        void unhandled_exception() const noexcept { std::terminate(); }
    };
    std::coroutine_handle<promise_type> handle;
};

inline detached run_detached(task<> t, std::string_view what) {
    try {
        co_await std::move(t);
    } catch (...) {
        report_detached_error(what, std::current_exception());
    }
}

} // namespace detail

/// Queues `t` on the worker pool. Resumes (starts) on a worker thread. Throws usage_error
/// (and drops `t`) if no runtime is running in this process.
inline void spawn(task<> t, std::string_view what = "spawned task") {
    auto h = detail::run_detached(std::move(t), what).handle;
    try {
        detail::reschedule(h);
    } catch (...) {
        h.destroy();
        throw;
    }
}

} // namespace prema
