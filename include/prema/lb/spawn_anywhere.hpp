/// @file
/// prema::spawn_anywhere: a task with no object of its own, which the load balancer places and
/// moves like an object's handler (Charm++'s seed balancing, for tasks).
///
/// The task is a small mobile object holding its arguments, with one pending handler that runs
/// the function and then destroys it. It goes to a rank that asked this one for work it could
/// not give (prema::lb::demand), or stays here; until it starts, the policy may move it like any
/// object whose handler has not started. It counts for quiescence from the call until the
/// function has returned (a coroutine: until it has finished), and runs exactly once.
#pragma once

#include <tuple>
#include <utility>

#include <cereal/types/tuple.hpp>

#include "prema/objects/objects.hpp"
#include "prema/transport/rank.hpp"
#include "prema/transport/send.hpp"

namespace prema {
namespace detail {

// Where a new task goes: a rank that waits for work from this one (charged with the task), or
// this rank (src/lb/balancer.cpp).
int task_rank();

template <class H, class Params> struct task_seed;
template <class H, class... P> struct task_seed<H, type_list<P...>> {
    std::tuple<P...> args;

    task_seed() = default;
    explicit task_seed(std::tuple<P...> a) : args(std::move(a)) {}
    template <class Ar> void serialize(Ar& ar) { ar(args); }

    // The seed's only handler: it is gone once the task has ended (destroy() takes effect then),
    // also if the task throws.
    static task<> run(task_seed& seed) {
        co_await prema::destroy(prema::self(seed));
        if constexpr (unwrap_task<handler_result<H>>::is_task)
            co_await std::apply(H{}, std::move(seed.args));
        else
            std::apply(H{}, std::move(seed.args));
    }

    // Makes the seed here and queues its handler: the task from then on is an object with a
    // pending handler, which a policy may move.
    static void plant(P... args) {
        auto mp = prema::make_mobile<task_seed>(std::tuple<P...>(std::move(args)...));
        (void)prema::send(mp, prema::fn<&task_seed::run>);
    }
};

} // namespace detail

/// Runs `handler(args...)` once, on this rank or another: on a rank that asked this one for work
/// it could not give if there is one (each such rank takes as many tasks as it asked objects),
/// else here, where the load balancer may still move it before it starts. `handler` is
/// prema::fn<&function> or a lambda without captures; it may be a coroutine (`prema::task<>`),
/// and its result is dropped. The arguments travel as a message's do and must also be default
/// constructible (the task migrates as a mobile object). An exception that escapes the handler
/// is reported like a handler's. Any thread of a running runtime.
///
///     prema::spawn_anywhere(prema::fn<&search>, subproblem, depth + 1);
template <class H, class... A> void spawn_anywhere(H, A&&... args) {
    detail::check_handler<H>();
    using params = typename detail::callable_traits<H>::params;
    using seed = detail::task_seed<H, params>;
    static_assert(detail::is_mobile<seed>,
                  "prema::spawn_anywhere: every argument type must be default constructible and "
                  "serializable (the task moves as a mobile object)");
    const int to = detail::task_rank();
    if (to == rank())
        seed::plant(std::forward<A>(args)...);
    else
        (void)send(to, fn<&seed::plant>, std::forward<A>(args)...);
}

} // namespace prema
