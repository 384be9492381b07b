/// @file
/// co_await prema::all_reduce(value, op): collective over the ranks; every rank contributes
/// `value` and every rank gets op(...op(op(v0, v1), v2)..., vP-1), vr being rank r's value.
///
/// @code
///   double total = co_await prema::all_reduce(local, std::plus<>{});
///   auto sums = co_await prema::all_reduce(counts, [](std::vector<int> a, std::vector<int> b) {
///       for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
///       return a;
///   });
/// @endcode
///
/// T: anything prema can send (trivially copyable, or serializable; see serialization.hpp).
/// op: a (T, T) -> T handler-like callable without captures (std::plus<>{}, a lambda), since the
/// combining runs on rank 0: it gets the values in rank order there, once, so the result is
/// bit-identical on every rank and from run to run (for floating point too).
///
/// Calls are matched by order: the n-th all_reduce called on one rank meets the n-th called on
/// every other rank, counted when all_reduce() is called (not when awaited), so several may be in
/// flight at once, from several coroutines, as long as every rank starts them in the same order
/// with the same T and op. A rank that never makes its n-th call leaves the others waiting: the
/// job goes quiet and reports the calls still awaited.
///
/// Nothing blocks and no thread calls MPI: each rank's value goes to rank 0 as an ordinary prema
/// call (counted for quiescence), which answers every rank once all have arrived (2 message
/// latencies, P messages each way at rank 0). The caller resumes on the worker that receives the
/// answer. If op throws, every rank gets the error as prema::remote_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <iterator>
#include <mutex>
#include <optional>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "prema/runtime.hpp"
#include "prema/transport/call.hpp"

namespace prema {
namespace detail {

// Numbers this rank's all_reduce calls, from 0.
std::uint64_t next_all_reduce_seq() noexcept;

template <class Op> constexpr void check_op() {
    static_assert(std::is_empty_v<Op> && std::is_default_constructible_v<Op>,
                  "prema: a combining op must be a callable without captures (std::plus<>{}, a "
                  "lambda); it runs on another rank");
}

// op over `values` left to right; `values` is not empty.
template <class Op, class T> T fold(std::vector<T>& values) {
    T acc = std::move(values.front());
    for (auto it = std::next(values.begin()); it != values.end(); ++it)
        acc = Op{}(std::move(acc), std::move(*it));
    return acc;
}

// Rank 0's side: holds each call's values and the tokens of its waiting ranks until the last
// rank's value arrives. A plain handler, not a coroutine: nothing waits on rank 0's workers.
template <class T, class Op> struct all_reduce_root {
    struct round {
        std::vector<std::optional<T>> values; // by rank
        std::vector<std::pair<int, std::uint64_t>> waiters;
    };

    static inline std::mutex mutex;
    static inline std::unordered_map<std::uint64_t, round> rounds; // by sequence number

    static void on_value(const incoming& in) {
        byte_reader r(in.payload, in.bulk);
        auto [seq, value] = read_args<std::uint64_t, T>(r);
        r.expect_end();
        std::unique_lock lock(mutex);
        round& rd = rounds[seq];
        rd.values.resize(std::size_t(ranks()));
        rd.values.at(std::size_t(in.source)).emplace(std::move(value));
        rd.waiters.emplace_back(in.source, in.token);
        if (rd.waiters.size() < rd.values.size())
            return;
        round done = std::move(rd);
        rounds.erase(seq);
        lock.unlock();
        answer(done);
    }

    static void answer(round& done) {
        try {
            std::vector<T> values;
            values.reserve(done.values.size());
            for (auto& v : done.values)
                values.push_back(std::move(*v));
            const T result = fold<Op>(values);
            for (auto [rank, token] : done.waiters)
                reply_value(rank, token, result);
        } catch (...) {
            for (auto [rank, token] : done.waiters)
                reply_error(rank, token, handler_name(id), std::current_exception());
        }
    }

    static inline const std::uint64_t id = register_handler(
        typeid(all_reduce_root).name(), &on_value, bulk_receiver(type_list<std::uint64_t, T>{}));
};

} // namespace detail

/// See the top of this file.
template <class T, class Op>
[[nodiscard]] detail::call_awaiter<std::decay_t<T>> all_reduce(T&& value, Op) {
    using V = std::decay_t<T>;
    detail::check_op<Op>();
    static_assert(std::is_convertible_v<std::invoke_result_t<Op, V, V>, V>,
                  "prema::all_reduce: op must take two values and return one");
    return {detail::all_reduce_root<V, Op>::id, [&](detail::byte_writer& w) {
                detail::write_args<std::uint64_t, V>(w, detail::next_all_reduce_seq(),
                                                     std::forward<T>(value));
                return 0;
            }};
}

} // namespace prema
