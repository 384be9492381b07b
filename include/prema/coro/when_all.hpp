/// @file
/// co_await prema::when_all(a, b, ...) / prema::when_all(std::move(vector)): awaits several
/// operations at once.
///
/// @code
///   auto [x, y] = co_await prema::when_all(prema::call(p, prema::fn<&obj::x>),
///                                          prema::call(q, prema::fn<&obj::y>));
///   std::vector<double> e = co_await prema::when_all(std::move(calls)); // input order
/// @endcode
///
/// Accepts any awaitable: prema::task<T>, what prema::call returns (for a rank or an object),
/// prema::create / migrate / destroy, another when_all. when_all takes ownership of them (pass
/// rvalues: std::move a task) and wraps each in a small coroutine; nothing runs until the result
/// of when_all is awaited. Then each is started, in input order, on the awaiting thread, and runs
/// up to its first suspension (a call's request leaves then), so all are in flight before any is
/// waited for; the object access of the awaiting handler is handed to each, as to an awaited task.
///
/// Results: the variadic form gives a std::tuple in argument order, with prema::void_value for
/// an operation that gives nothing (as cppcoro does); the vector form a std::vector<T> in input
/// order, or nothing for void operations.
///
/// Errors: the awaiting coroutine goes on only once every operation has finished, failed or not;
/// then the error of the first failed operation in input order (not the first to fail in time) is
/// rethrown, and the other results and errors are dropped.
///
/// The awaiting coroutine resumes on the thread that finishes the last operation (symmetric
/// transfer, no queueing), or goes on without suspending if all finished while they were started.
/// Nothing blocks: an atomic count of unfinished operations decides who is last.
///
/// No when_any: prema cannot cancel an operation, so the losers would have to go on owned by
/// nobody, their results dropped; spawn() them instead if that is what is meant.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/coro/task.hpp"

namespace prema {

// Stands for the result of an operation that gives nothing in when_all's tuple.
struct void_value {};

namespace detail {

template <class A>
concept awaitable = requires(A&& a) {
    awaiter_of(std::forward<A>(a)).await_resume();
};

// What co_await gives for an A, held by value.
template <class A>
using await_result_t = std::decay_t<decltype(awaiter_of(std::declval<A>()).await_resume())>;

// Lives in the awaiting coroutine's frame while it waits. It starts at the count of operations
// plus one for the awaiting coroutine itself, so that operations that finish while the others
// are still being started cannot resume it before it has suspended.
struct when_all_counter {
    std::atomic<std::size_t> remaining{0};
    std::coroutine_handle<> awaiting;

    // True for the last arrival. acq_rel: the last one sees every result written before.
    bool arrive() noexcept { return remaining.fetch_sub(1, std::memory_order_acq_rel) == 1; }
};

template <class T> class when_all_task;

// A task's promise (result, exception, object access) that, at its end, counts itself out
// instead of resuming a continuation.
template <class T> struct when_all_promise : task_promise<T> {
    when_all_counter* counter = nullptr;

    struct arrival {
        bool await_ready() const noexcept { return false; }
        std::coroutine_handle<>
        await_suspend(std::coroutine_handle<when_all_promise> h) const noexcept {
            // Not last: the frame may be destroyed by the awaiting side from here on.
            when_all_counter* c = h.promise().counter;
            return c->arrive() ? c->awaiting : std::noop_coroutine();
        }
        void await_resume() const noexcept {}
    };

    when_all_task<T> get_return_object() noexcept {
        return when_all_task<T>{std::coroutine_handle<when_all_promise>::from_promise(*this)};
    }
    arrival final_suspend() const noexcept { return {}; }
};

// Owns the frame of one operation's coroutine; its when_all_awaitable owns it in turn.
template <class T> class when_all_task {
  public:
    using promise_type = when_all_promise<T>;

    explicit when_all_task(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    when_all_task(when_all_task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    when_all_task& operator=(when_all_task&&) = delete;
    ~when_all_task() {
        if (h_)
            h_.destroy();
    }

    void start(when_all_counter& counter, const access_context& access) noexcept {
        h_.promise().counter = &counter;
        static_cast<access_context&>(h_.promise()) = access;
        h_.resume();
    }

    T take() { return h_.promise().take(); }
    auto take_non_void() {
        if constexpr (std::is_void_v<T>) {
            take();
            return void_value{};
        } else {
            return take();
        }
    }

  private:
    std::coroutine_handle<promise_type> h_;
};

template <class A> when_all_task<await_result_t<A>> make_when_all_task(A awaitable) {
    co_return co_await std::move(awaitable);
}

template <class... T> std::size_t size_of(const std::tuple<when_all_task<T>...>&) noexcept {
    return sizeof...(T);
}
template <class T> std::size_t size_of(const std::vector<when_all_task<T>>& v) noexcept {
    return v.size();
}

template <class... T, class F> void each(std::tuple<when_all_task<T>...>& t, F f) {
    std::apply([&](auto&... x) { (f(x), ...); }, t);
}
template <class T, class F> void each(std::vector<when_all_task<T>>& v, F f) {
    for (auto& x : v)
        f(x);
}

// Braced initialisation takes the results left to right: the first failure in input order.
template <class... T> auto collect(std::tuple<when_all_task<T>...>& t) {
    return std::apply(
        [](auto&... x) { return std::tuple<decltype(x.take_non_void())...>{x.take_non_void()...}; },
        t);
}
template <class T> auto collect(std::vector<when_all_task<T>>& v) {
    if constexpr (std::is_void_v<T>) {
        for (auto& x : v)
            x.take();
    } else {
        std::vector<T> out;
        out.reserve(v.size());
        for (auto& x : v)
            out.push_back(x.take());
        return out;
    }
}

// Awaited once; holds the operations' frames until it dies.
template <class Tasks> class [[nodiscard]] when_all_awaitable {
  public:
    explicit when_all_awaitable(Tasks tasks) noexcept : tasks_(std::move(tasks)) {}
    when_all_awaitable(when_all_awaitable&& o) noexcept : tasks_(std::move(o.tasks_)) {}
    when_all_awaitable& operator=(when_all_awaitable&&) = delete;

    bool await_ready() const noexcept { return false; }

    // Nothing may touch *this after the last arrive(): the awaiting coroutine may be running.
    template <class P> bool await_suspend(std::coroutine_handle<P> h) noexcept {
        access_context access;
        if constexpr (std::is_base_of_v<access_context, P>)
            access = h.promise();
        counter_.awaiting = h;
        counter_.remaining.store(size_of(tasks_) + 1, std::memory_order_relaxed);
        each(tasks_, [&](auto& t) { t.start(counter_, access); });
        return !counter_.arrive();
    }

    auto await_resume() { return collect(tasks_); }

  private:
    Tasks tasks_;
    when_all_counter counter_;
};

} // namespace detail

/// All of `awaitables` at once; a std::tuple of their results (see the top of this file).
template <detail::awaitable... A> auto when_all(A&&... awaitables) {
    static_assert((std::is_constructible_v<std::remove_cvref_t<A>, A&&> && ...),
                  "prema::when_all takes its awaitables over: pass rvalues (std::move a task)");
    using tasks = std::tuple<detail::when_all_task<detail::await_result_t<A>>...>;
    return detail::when_all_awaitable<tasks>(
        tasks{detail::make_when_all_task<std::remove_cvref_t<A>>(std::forward<A>(awaitables))...});
}

/// All of `awaitables` at once; a std::vector of their results in input order, or nothing.
template <detail::awaitable A> auto when_all(std::vector<A> awaitables) {
    using op = detail::when_all_task<detail::await_result_t<A>>;
    std::vector<op> tasks;
    tasks.reserve(awaitables.size());
    for (auto& a : awaitables)
        tasks.push_back(detail::make_when_all_task(std::move(a)));
    return detail::when_all_awaitable<std::vector<op>>(std::move(tasks));
}

} // namespace prema
