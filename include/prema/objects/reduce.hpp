/// @file
/// co_await prema::gather(objects, handler) / prema::reduce(objects, handler, op): runs an
/// object handler on each of many objects, wherever they live, and brings the results back.
///
/// @code
///   std::vector<double> e = co_await prema::gather(parts, prema::fn<&part::error>); // in order
///   double total = co_await prema::reduce(parts, prema::fn<&part::error>, std::plus<>{});
/// @endcode
///
/// One request per rank, not one message per object: the caller groups `objects` by where it
/// believes they live (prema::where) and sends each such rank the list of its objects. That rank
/// calls the handler on each of them through the ordinary object path (prema::call), all at
/// once: an object living there runs locally; one that has moved away meanwhile is followed
/// along its forwarding pointers. Each object is thus called exactly once, however it migrates.
/// The rank answers with one message: the values in list order (gather), or their op-fold in
/// list order (reduce).
///
/// Results: gather gives a std::vector in the order of `objects` (a pointer listed twice is
/// called twice). reduce folds each rank's list left to right, then the ranks' partial results
/// in ascending rank order, on the caller; the order thus depends on where the caller believed
/// the objects were (gather, then fold, for a placement-independent order). reduce over no
/// objects throws prema::usage_error, since op has no identity to give.
///
/// The handler: an object handler without arguments returning a value (a coroutine handler's
/// co_return value counts); op: (R, R) -> R without captures. The calls come from the ranks the
/// objects were believed to be on, so they are not ordered after messages the caller sent to the
/// objects before (await those first). An error in the handler on any object or in op is
/// rethrown to the caller as prema::remote_error (the first in rank order, once all finished).
///
/// The caller resumes on the worker that receives the last rank's answer (see when_all).
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/coro/task.hpp"
#include "prema/coro/when_all.hpp"
#include "prema/error.hpp"
#include "prema/objects/objects.hpp"
#include "prema/runtime.hpp"
#include "prema/transport/all_reduce.hpp"

namespace prema {
namespace detail {

template <class H> using gathered_t = call_result<H>;

// Runs H on every object, all in flight at once; the results in list order.
template <class T, class H>
task<std::vector<gathered_t<H>>> call_each(std::vector<mobile_ptr<T>> objects) {
    std::vector<object_request<gathered_t<H>>> calls;
    calls.reserve(objects.size());
    for (auto mp : objects)
        calls.push_back(prema::call(mp, H{}));
    co_return co_await when_all(std::move(calls));
}

// The handlers the per-rank requests run.
template <class T, class H> struct gather_on_rank {
    task<std::vector<gathered_t<H>>> operator()(std::vector<mobile_ptr<T>> objects) const {
        return call_each<T, H>(std::move(objects));
    }
};
template <class T, class H, class Op> struct reduce_on_rank {
    task<gathered_t<H>> operator()(std::vector<mobile_ptr<T>> objects) const {
        auto values = co_await call_each<T, H>(std::move(objects));
        co_return fold<Op>(values);
    }
};

// `objects` by the rank this rank believes each lives on: for rank r, its objects and their
// positions in `objects`, in list order. A destroyed object goes to this rank, whose call of
// it then fails as any call of it would.
template <class T> struct by_rank {
    std::vector<std::vector<mobile_ptr<T>>> objects;
    std::vector<std::vector<std::size_t>> positions;

    explicit by_rank(const std::vector<mobile_ptr<T>>& all)
        : objects(std::size_t(prema::ranks())), positions(std::size_t(prema::ranks())) {
        for (std::size_t i = 0; i < all.size(); ++i) {
            int r = prema::where(all[i]);
            auto at = std::size_t(r < 0 ? prema::rank() : r);
            objects[at].push_back(all[i]);
            positions[at].push_back(i);
        }
    }

    // One request per rank that has objects, in ascending rank order, each made by
    // request(rank, its objects).
    template <class Request> auto requests(Request request) {
        std::vector<decltype(request(0, std::vector<mobile_ptr<T>>{}))> out;
        for (std::size_t r = 0; r < objects.size(); ++r)
            if (!objects[r].empty())
                out.push_back(request(int(r), std::move(objects[r])));
        return out;
    }
};

template <class T, class H> constexpr void check_object_handler() {
    check_handler<H>();
    static_assert(std::is_same_v<typename object_traits<H>::object, T>,
                  "prema: the handler's first parameter must be the pointed-to object type");
    static_assert(!std::is_void_v<gathered_t<H>>,
                  "prema::gather/reduce: the handler must return a value");
}

} // namespace detail

/// The handler's result for each object, in the order of `objects` (see the top of this file).
template <class T, class H>
task<std::vector<detail::gathered_t<H>>> gather(std::vector<mobile_ptr<T>> objects, H) {
    detail::check_object_handler<T, H>();
    using R = detail::gathered_t<H>;
    detail::by_rank<T> groups(objects);
    auto parts = co_await when_all(groups.requests([](int r, std::vector<mobile_ptr<T>> list) {
        return call(r, detail::gather_on_rank<T, H>{}, std::move(list));
    }));
    std::vector<std::optional<R>> placed(objects.size());
    std::size_t part = 0;
    for (auto& at : groups.positions) {
        if (at.empty())
            continue;
        for (std::size_t i = 0; i < at.size(); ++i)
            placed[at[i]].emplace(std::move(parts[part][i]));
        ++part;
    }
    std::vector<R> out;
    out.reserve(placed.size());
    for (auto& v : placed)
        out.push_back(std::move(*v));
    co_return out;
}

/// op over the handler's results for all `objects` (see the top of this file).
template <class T, class H, class Op>
task<detail::gathered_t<H>> reduce(std::vector<mobile_ptr<T>> objects, H, Op) {
    detail::check_object_handler<T, H>();
    detail::check_op<Op>();
    if (objects.empty())
        throw usage_error("prema::reduce over no objects: op has no identity to give");
    detail::by_rank<T> groups(objects);
    auto partials = co_await when_all(groups.requests([](int r, std::vector<mobile_ptr<T>> list) {
        return call(r, detail::reduce_on_rank<T, H, Op>{}, std::move(list));
    }));
    co_return detail::fold<Op>(partials);
}

} // namespace prema
