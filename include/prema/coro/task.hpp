/// @file
/// prema::task<T>: a lazy, move-only coroutine that produces a T.
///
/// Nothing runs until the task is co_awaited. The awaiting coroutine resumes on the thread that
/// completed the task, through symmetric transfer, so chains of any depth use constant stack.
/// An exception escaping the task body is rethrown from co_await. The task owns its frame and
/// destroys it when the task object dies.
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <utility>
#include <variant>

#include "prema/detail/coro/busy_meter.hpp"
#include "prema/detail/coro/frame_allocator.hpp"

namespace prema {

/// A lazy coroutine producing a T (see the file's description).
template <class T = void> class task;

namespace detail {

struct held_access; // prema/objects/object_handler.hpp

// The object access a coroutine runs under: an object handler's, handed down to every task it
// awaits (not to spawned ones, which do not hold it), so that a request from inside the handler
// can tell that it targets the object the handler holds and would wait for itself. `meter`
// goes with it: the handler's running time, when it is measured (busy_meter.hpp).
struct access_context {
    const held_access* holder = nullptr;
    busy_meter* meter = nullptr;
};

template <class T> inline constexpr bool is_task = false;
template <class T> inline constexpr bool is_task<task<T>> = true;

// What ends a task that nobody awaits (start_detached): it gets the task's failure, if any,
// once the frame is gone.
using detached_end_fn = void (*)(std::uint64_t context, std::exception_ptr failure) noexcept;

struct task_promise_base : pooled_frame, access_context {
    std::coroutine_handle<> continuation = std::noop_coroutine();
    detached_end_fn detached_end = nullptr;
    std::uint64_t detached_context = 0;

    struct final_awaiter {
        bool await_ready() const noexcept { return false; }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) const noexcept {
            auto& p = h.promise();
            if (!p.detached_end)
                return p.continuation;
            auto end = p.detached_end;
            auto context = p.detached_context;
            auto failure = p.failure();
            h.destroy();
            end(context, std::move(failure));
            return std::noop_coroutine();
        }
        void await_resume() const noexcept {}
    };

    std::suspend_always initial_suspend() const noexcept { return {}; }
    final_awaiter final_suspend() const noexcept { return {}; }

    // An awaited task runs on as part of this stretch (it shares the meter); anything else may
    // suspend, which the meter must see (busy_meter.hpp).
    template <class A> decltype(auto) await_transform(A&& a) {
        if constexpr (is_task<std::remove_cvref_t<A>>)
            return std::forward<A>(a);
        else
            return metered_awaiter<decltype(awaiter_of(std::forward<A>(a)))>{
                awaiter_of(std::forward<A>(a)), meter};
    }
};

template <class T> struct task_promise : task_promise_base {
    std::variant<std::monostate, T, std::exception_ptr> result;

    task<T> get_return_object() noexcept;
    void unhandled_exception() noexcept { result.template emplace<2>(std::current_exception()); }
    template <class U> void return_value(U&& v) { result.template emplace<1>(std::forward<U>(v)); }

    std::exception_ptr failure() const noexcept {
        return result.index() == 2 ? std::get<2>(result) : nullptr;
    }
    T take() {
        if (result.index() == 2)
            std::rethrow_exception(std::get<2>(result));
        return std::move(std::get<1>(result));
    }
};

template <> struct task_promise<void> : task_promise_base {
    std::exception_ptr error;

    task<void> get_return_object() noexcept;
    void unhandled_exception() noexcept { error = std::current_exception(); }
    void return_void() const noexcept {}

    std::exception_ptr failure() const noexcept { return error; }
    void take() const {
        if (error)
            std::rethrow_exception(error);
    }
};

} // namespace detail

/// A lazy, move-only coroutine that produces a T: nothing runs until it is co_awaited, and the
/// awaiting coroutine resumes on the thread that completed it.
template <class T> class [[nodiscard]] task {
  public:
    using promise_type =
        detail::task_promise<T>; ///< what makes a function returning task a coroutine
    using value_type = T;        ///< what co_await gives

    /// No coroutine (valid() is false).
    task() noexcept = default;
    /// Owns the frame `h` (the promise's get_return_object makes tasks this way).
    explicit task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    /// Takes over `o`'s frame; `o` is left without one.
    task(task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    /// Destroys this task's frame and takes over `o`'s.
    task& operator=(task&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    task(const task&) = delete;
    task& operator=(const task&) = delete;
    ~task() { reset(); }

    /// True while the task owns a coroutine frame.
    bool valid() const noexcept { return bool(h_); }
    /// True once the coroutine has finished (or when there is none).
    bool done() const noexcept { return !h_ || h_.done(); }

    /// Starts the task and resumes the awaiter with its result (or rethrows its exception).
    auto operator co_await() && noexcept { return awaiter{h_}; }
    /// The same for a task kept in a variable; the task still owns its frame afterwards.
    auto operator co_await() & noexcept { return awaiter{h_}; }

    /// Releases ownership of the frame (used by the runtime to start detached tasks).
    std::coroutine_handle<promise_type> release() noexcept { return std::exchange(h_, {}); }

    /// Runs the task on this thread up to its first suspension, owned by nobody: it resumes
    /// wherever what it awaits completes, destroys its own frame at its end and hands `end` its
    /// failure. Cheaper than a detached coroutine around it (one frame, one resumption). `access`:
    /// what it runs under, as if a coroutine holding it awaited it.
    void start_detached(detail::detached_end_fn end, std::uint64_t context,
                        detail::access_context access = {}) && {
        auto h = release();
        h.promise().detached_end = end;
        h.promise().detached_context = context;
        static_cast<detail::access_context&>(h.promise()) = access;
        h.resume();
    }

  private:
    struct awaiter {
        std::coroutine_handle<promise_type> h;
        bool await_ready() const noexcept { return !h || h.done(); }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> awaiting) noexcept {
            h.promise().continuation = awaiting;
            if constexpr (std::is_base_of_v<detail::access_context, P>)
                static_cast<detail::access_context&>(h.promise()) = awaiting.promise();
            return h;
        }
        T await_resume() { return h.promise().take(); }
    };

    void reset() noexcept {
        if (h_)
            h_.destroy();
        h_ = {};
    }

    std::coroutine_handle<promise_type> h_;
};

namespace detail {
template <class T> task<T> task_promise<T>::get_return_object() noexcept {
    return task<T>{std::coroutine_handle<task_promise<T>>::from_promise(*this)};
}
inline task<void> task_promise<void>::get_return_object() noexcept {
    return task<void>{std::coroutine_handle<task_promise<void>>::from_promise(*this)};
}
} // namespace detail

} // namespace prema
