/// @file
/// co_await prema::create_many<T>(n, placement, make_args): creates n objects, spread over the
/// ranks, with one message per rank that gets any (not one per object).
///
/// @code
///   auto cells = co_await prema::create_many<cell>(1024, prema::placement::block,
///                                                  [](std::size_t i) { return int(i); });
///   auto parts = co_await prema::create_many<part>(
///       64, [](std::size_t i) { return int(i % 3); },
///       [&](std::size_t i) { return std::tuple(int(i), names[i]); });
/// @endcode
///
/// Placement: prema::placement::block (contiguous runs of indices per rank, as even as they can
/// be, rank 0 first), prema::placement::round_robin (index i on rank i % ranks), or a function
/// int(std::size_t i) that names object i's rank.
///
/// make_args(i) gives the constructor arguments of object i: a std::tuple is unpacked into
/// them, anything else is the one argument (wrap a tuple that is itself the argument in another
/// tuple). It runs here, in index order; the arguments travel by value.
///
/// Returns the objects' pointers in index order. Each rank builds its objects, in index order,
/// in one handler. The batches spread along a binary tree of the ranks that get objects, the
/// caller at its root (rank_tree.hpp): each rank passes its (at most two) children their
/// subtrees' batches and answers its parent with its subtree's ids, so the caller sends two
/// requests to reach k ranks and holds as many messages, not k. A placement that names no rank, or
/// more objects than their ids can come back in one message (--prema-max-message-bytes), throws
/// usage_error before anything is sent. If a constructor throws, the first failure in rank order is
/// rethrown once every rank has answered; the objects that were built stay (their pointers are not
/// returned).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/coro/task.hpp"
#include "prema/coro/when_all.hpp"
#include "prema/detail/objects/rank_tree.hpp"
#include "prema/objects/objects.hpp"
#include "prema/transport/rank.hpp"

namespace prema {

/// Where create_many puts its objects, besides a function int(std::size_t i).
namespace placement {
struct block_t {};       ///< the type of placement::block
struct round_robin_t {}; ///< the type of placement::round_robin
/// Contiguous runs of indices per rank, as even as they can be, rank 0 first.
inline constexpr block_t block{};
/// Index i on rank i % ranks.
inline constexpr round_robin_t round_robin{};
} // namespace placement

namespace detail {

// Throws usage_error if the ids of `objects` created on one rank cannot come back in one reply.
void check_create_batch(std::size_t objects);

// Throws usage_error if the placement function put object `index` on `rank`, which is no rank.
void check_placement(int rank, std::size_t index);

// Batches of objects created on this rank so far (for tests: one per create_many and rank).
void count_create_batch() noexcept;
std::uint64_t create_batch_count() noexcept;

template <class X> struct arg_tuple { using type = std::tuple<std::decay_t<X>>; };
template <class... E> struct arg_tuple<std::tuple<E...>> {
    using type = std::tuple<std::decay_t<E>...>;
};
// The constructor arguments that make_args's result stands for, held by value.
template <class X> using arg_tuple_t = typename arg_tuple<std::remove_cvref_t<X>>::type;

template <class T, class Args> struct create_batch_handler;
template <class T, class... A> struct create_batch_handler<T, std::tuple<A...>> {
    std::vector<object_id> operator()(std::vector<std::tuple<A...>> batch) const {
        count_create_batch();
        std::vector<object_id> ids;
        ids.reserve(batch.size());
        for (auto& args : batch)
            ids.push_back(std::apply(create_handler<T, A...>{}, std::move(args)));
        return ids;
    }
};

template <class T, class Args> task<std::vector<object_id>> create_here(std::vector<Args> batch) {
    if (batch.empty()) // the caller, when it gets no objects
        co_return std::vector<object_id>{};
    co_return create_batch_handler<T, Args>{}(std::move(batch));
}

// `batches[i]` for rank `ranks[i]`, this rank first (rank_tree.hpp): the subtree's ids in that
// order. The children's requests leave before this rank builds its own objects.
template <class T, class Args> struct create_on_subtree {
    task<std::vector<object_id>> operator()(std::vector<int> ranks,
                                            std::vector<std::vector<Args>> batches) const {
        using request = decltype(call(0, create_on_subtree{}, ranks, batches));
        std::vector<request> below;
        for (auto run : subtrees(ranks.size()))
            below.push_back(call(ranks[run.first], create_on_subtree{}, take_run(ranks, run),
                                 take_run(batches, run)));
        auto [theirs, ids] = co_await when_all(when_all(std::move(below)),
                                               create_here<T, Args>(std::move(batches[0])));
        for (auto& part : theirs)
            ids.insert(ids.end(), part.begin(), part.end());
        co_return std::move(ids);
    }
};

inline std::size_t place(placement::block_t, std::size_t i, std::size_t n, std::size_t ranks) {
    return i * ranks / n;
}
inline std::size_t place(placement::round_robin_t, std::size_t i, std::size_t, std::size_t ranks) {
    return i % ranks;
}
template <std::invocable<std::size_t> F>
std::size_t place(F& f, std::size_t i, std::size_t, std::size_t) {
    int r = f(i);
    check_placement(r, i);
    return std::size_t(r);
}

} // namespace detail

/// Creates n objects of T spread over the ranks as `placement` says, object i constructed from
/// make_args(i); gives their pointers in index order (see the file's description).
template <class T, class Placement, class MakeArgs>
task<std::vector<mobile_ptr<T>>> create_many(std::size_t n, Placement placement,
                                             MakeArgs make_args) {
    detail::check_mobile<T>();
    using args = detail::arg_tuple_t<std::invoke_result_t<MakeArgs&, std::size_t>>;
    const auto p = std::size_t(ranks());
    // The busiest rank gets at least n / p objects: this turns a huge n away before the loop.
    detail::check_create_batch(n / p);
    const int me = rank();
    std::vector<int> rank_of(n);
    for (std::size_t i = 0; i < n; ++i)
        rank_of[i] = int(detail::place(placement, i, n, p));
    // The tree: this rank first, then every rank that gets objects, ascending.
    const auto groups = detail::group_by_rank(rank_of, me, int(p));
    // Before any call is made (a call made is a call sent): the largest reply, a child's subtree.
    for (auto run : detail::subtrees(groups.ranks.size()))
        detail::check_create_batch(groups.starts[run.second] - groups.starts[run.first]);
    std::vector<std::vector<args>> tree(groups.ranks.size());
    for (std::size_t g = 0; g < tree.size(); ++g)
        tree[g].reserve(groups.size(g));
    for (std::size_t i = 0; i < n; ++i) // in index order, as a rank builds its objects
        tree[groups.entry_of(rank_of[i])].push_back(args(make_args(i)));
    std::vector<object_id> ids =
        co_await detail::create_on_subtree<T, args>{}(groups.ranks, std::move(tree));
    // `ids` lists the objects in tree order.
    std::vector<mobile_ptr<T>> out(n);
    for (std::size_t k = 0; k < ids.size(); ++k)
        out[groups.order[k]] = mobile_ptr<T>(ids[k]);
    co_return out;
}

} // namespace prema
