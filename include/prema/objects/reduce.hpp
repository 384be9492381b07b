/// @file
/// co_await prema::gather(objects, handler) / prema::reduce(objects, handler, op): runs an
/// object handler on each of many objects, wherever they live, and brings the results back.
///
/// @code
///   std::vector<double> e = co_await prema::gather(parts, prema::fn<&part::error>); // in order
///   double total = co_await prema::reduce(parts, prema::fn<&part::error>, std::plus<>{});
/// @endcode
///
/// One request per rank, not one message per object, and spread along a tree of ranks: the
/// caller groups `objects` by where it believes they live (prema::where), then the caller and
/// the ranks that have objects form a binary tree (rank_tree.hpp), the caller at its root.
/// Each rank forwards to its children the lists of their subtrees, calls the handler on each of
/// its own objects through the ordinary object path (prema::call), all at once, and answers its
/// parent with one message: its values and its subtree's in list order (gather), or their op-fold
/// (reduce). A rank thus sends and receives at most 6 of these messages, and the tree is
/// floor(log2 k) deep for k ranks involved. An object living where it was believed runs locally;
/// one that has moved away meanwhile is followed along its forwarding pointers. Each object is thus
/// called exactly once, however it migrates.
///
/// Results: gather gives a std::vector in the order of `objects` (a pointer listed twice is
/// called twice). reduce folds each rank's list left to right, then, at each rank of the tree,
/// its own fold followed by its children's in order: the ranks in the order caller first, then
/// the others ascending, with op associative (gather, then fold, for a placement-independent
/// order). reduce over no objects throws prema::usage_error, since op has no identity to give.
///
/// The handler: an object handler without arguments returning a value (a coroutine handler's
/// co_return value counts); op: (R, R) -> R without captures. The calls come from the ranks the
/// objects were believed to be on, so they are not ordered after messages the caller sent to the
/// objects before (await those first). An error in the handler on any object or in op is
/// rethrown to the caller as prema::remote_error (the first in the order above, once all
/// finished).
///
/// The caller resumes on the worker that receives the last answer (see when_all).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/coro/task.hpp"
#include "prema/coro/when_all.hpp"
#include "prema/detail/objects/rank_tree.hpp"
#include "prema/error.hpp"
#include "prema/objects/objects.hpp"
#include "prema/transport/all_reduce.hpp"
#include "prema/transport/rank.hpp"

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

// A rank's part of the tree: `lists[0]` its own objects, the rest those of the ranks
// `ranks[1..]` of its subtree, in tree order (rank_tree.hpp).
template <class T> struct subtree {
    std::vector<int> ranks;
    std::vector<std::vector<mobile_ptr<T>>> lists;
};

// Sends each child of this rank in `tree` its subtree's part, through request(rank, ranks,
// lists); the requests in child order.
template <class T, class Request> auto request_children(subtree<T>& tree, Request request) {
    std::vector<decltype(request(0, std::vector<int>{}, std::vector<std::vector<mobile_ptr<T>>>{}))>
        out;
    for (auto run : subtrees(tree.ranks.size()))
        out.push_back(
            request(tree.ranks[run.first], take_run(tree.ranks, run), take_run(tree.lists, run)));
    return out;
}

// The handlers the tree's requests run: this rank's values (or fold), then its children's.
template <class T, class H> struct gather_on_subtree {
    task<std::vector<gathered_t<H>>>
    operator()(std::vector<int> ranks, std::vector<std::vector<mobile_ptr<T>>> lists) const {
        subtree<T> tree{std::move(ranks), std::move(lists)};
        auto below = request_children(tree, [](int r, auto rs, auto ls) {
            return call(r, gather_on_subtree{}, std::move(rs), std::move(ls));
        });
        auto [mine, theirs] = co_await when_all(call_each<T, H>(std::move(tree.lists[0])),
                                                when_all(std::move(below)));
        for (auto& part : theirs)
            mine.insert(mine.end(), std::make_move_iterator(part.begin()),
                        std::make_move_iterator(part.end()));
        co_return std::move(mine);
    }
};
template <class T, class H, class Op> struct reduce_on_subtree {
    task<gathered_t<H>> operator()(std::vector<int> ranks,
                                   std::vector<std::vector<mobile_ptr<T>>> lists) const {
        subtree<T> tree{std::move(ranks), std::move(lists)};
        auto below = request_children(tree, [](int r, auto rs, auto ls) {
            return call(r, reduce_on_subtree{}, std::move(rs), std::move(ls));
        });
        auto [mine, theirs] = co_await when_all(call_each<T, H>(std::move(tree.lists[0])),
                                                when_all(std::move(below)));
        std::vector<gathered_t<H>> partials;
        partials.reserve(1 + theirs.size());
        if (!mine.empty())
            partials.push_back(fold<Op>(mine));
        for (auto& p : theirs)
            partials.push_back(std::move(p));
        co_return fold<Op>(partials);
    }
};

// `objects` grouped by the rank this rank believes each lives on (rank_tree.hpp). A destroyed
// object goes to this rank, whose call of it then fails as any call of it would.
template <class T> rank_groups group_objects(const std::vector<mobile_ptr<T>>& objects) {
    const int me = prema::rank();
    std::vector<int> rank_of(objects.size());
    for (std::size_t i = 0; i < objects.size(); ++i) {
        int r = prema::where(objects[i]);
        rank_of[i] = r < 0 ? me : r;
    }
    return group_by_rank(rank_of, me, prema::ranks());
}

// The tree's root part: each entry's objects, in tree order.
template <class T>
subtree<T> root_of(const std::vector<mobile_ptr<T>>& objects, const rank_groups& groups) {
    subtree<T> t{groups.ranks, std::vector<std::vector<mobile_ptr<T>>>(groups.ranks.size())};
    for (std::size_t g = 0; g < groups.ranks.size(); ++g) {
        t.lists[g].reserve(groups.size(g));
        for (std::size_t k = groups.starts[g]; k < groups.starts[g + 1]; ++k)
            t.lists[g].push_back(objects[groups.order[k]]);
    }
    return t;
}

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
    const auto groups = detail::group_objects(objects);
    auto root = detail::root_of(objects, groups);
    auto values =
        co_await detail::gather_on_subtree<T, H>{}(std::move(root.ranks), std::move(root.lists));
    // `values` lists the objects in tree order.
    std::vector<std::optional<R>> placed(objects.size());
    for (std::size_t k = 0; k < values.size(); ++k)
        placed[groups.order[k]].emplace(std::move(values[k]));
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
    auto root = detail::root_of(objects, detail::group_objects(objects));
    co_return co_await detail::reduce_on_subtree<T, H, Op>{}(std::move(root.ranks),
                                                             std::move(root.lists));
}

} // namespace prema
