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
/// in one handler. A placement that names no rank, or more objects than their ids can come
/// back in one message (--prema-max-message-bytes), throws usage_error before anything is sent.
/// If a constructor throws, the first failure in rank order is rethrown once every rank has
/// answered; the objects that were built stay (their pointers are not returned).
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
#include "prema/objects/objects.hpp"
#include "prema/runtime.hpp"

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
    std::vector<std::size_t> rank_of(n);
    std::vector<std::vector<args>> batches(p);
    for (std::size_t i = 0; i < n; ++i) {
        rank_of[i] = detail::place(placement, i, n, p);
        batches[rank_of[i]].push_back(args(make_args(i)));
    }
    for (auto& batch : batches) // before any call is made: a call made is a call sent
        detail::check_create_batch(batch.size());
    using call_t = decltype(call(0, detail::create_batch_handler<T, args>{}, batches[0]));
    std::vector<call_t> calls;
    std::vector<std::size_t> reply_of(p); // the rank's place among the calls
    for (std::size_t r = 0; r < p; ++r) {
        if (batches[r].empty())
            continue;
        reply_of[r] = calls.size();
        calls.push_back(
            call(int(r), detail::create_batch_handler<T, args>{}, std::move(batches[r])));
    }
    std::vector<std::vector<object_id>> ids = co_await when_all(std::move(calls));
    std::vector<mobile_ptr<T>> out;
    out.reserve(n);
    std::vector<std::size_t> taken(p);
    for (std::size_t r : rank_of)
        out.emplace_back(ids[reply_of[r]][taken[r]++]);
    co_return out;
}

} // namespace prema
