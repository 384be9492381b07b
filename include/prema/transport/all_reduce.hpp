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
/// op: a (T, T) -> T callable without captures (std::plus<>{}, a lambda), since it runs on other
/// ranks. op must be associative; it need not be commutative.
///
/// Fold order: the values combine up a binary tree rooted at rank 0 in which every subtree
/// holds a contiguous range of ranks (a rank heading the ranks [r, e) has as children the heads
/// of the two halves of [r + 1, e), the first half the larger: prema/detail/transport/tree.hpp).
/// Each rank folds its own value, then its children's partial results in that order, and sends
/// the fold to its parent; rank 0's fold is the result, which goes back down the same tree as the
/// bytes rank 0 wrote. The shape depends on the number of ranks only, so every rank gets the
/// same bits, in every run, for floating point too. A rank handles at most 6 messages per call
/// (2 from its children, 1 to its parent and back, 2 to its children) and meets at most three
/// other ranks, whatever the job's size.
///
/// Matching: calls are matched by order within a phase (one runtime::run): the n-th all_reduce
/// called on one rank meets the n-th called on every other rank, counted when all_reduce() is
/// called (not when awaited), so several may be in flight at once, from several coroutines, as
/// long as every rank starts them in the same order. The count starts again at every phase, so a
/// phase that went wrong leaves the next one unaffected. Each value travels with the identity of
/// its call (T and op): calls that meet with different T or op fail on every rank with a
/// remote_error naming both (the ranks, T and op of each side). A rank that skips a call of the
/// same T and op cannot be told from the others by its values: its later calls pair with the
/// others' earlier ones, and the phase ends with calls still awaited; the report of a job that
/// goes quiet names every all_reduce still open on each rank and the ranks it waits for.
///
/// Nothing blocks and no thread calls MPI: the values travel as ordinary prema messages (counted
/// for quiescence). A call that is never awaited still contributes its value. The caller resumes
/// on the worker that receives the result (or does not suspend if it is there already). If op
/// throws, or a value does not decode, every rank gets the error as prema::remote_error, naming
/// the rank it happened on.
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "prema/detail/transport/byte_vector.hpp"
#include "prema/transport/serialization.hpp"

namespace prema {
namespace detail {

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

// What an all_reduce call is, for matching it with the other ranks' calls: (T, op).
struct all_reduce_kind {
    std::uint64_t id; // stable_hash of the two mangled names
    const char* type; // mangled typeid(T).name()
    const char* op;   // mangled typeid(Op).name()
    // op over the encoded values `parts` (at least one), in order; the result encoded. Throws
    // what op throws, or wire_error for bytes that do not decode as T.
    byte_vector (*fold)(std::span<const byte_vector> parts);
};
all_reduce_kind make_all_reduce_kind(const char* type, const char* op,
                                     byte_vector (*fold)(std::span<const byte_vector>));

template <class T> byte_vector encode_value(const T& value) {
    byte_writer w(nullptr, 0); // no inline area: every byte lands in w.heap()
    write_value(w, value);
    return std::move(w.heap());
}
template <class T> T decode_value(std::span<const std::byte> bytes) {
    byte_reader r(bytes);
    T value = read_value<T>(r);
    r.expect_end();
    return value;
}

template <class T, class Op> struct all_reduce_kind_of {
    static byte_vector fold(std::span<const byte_vector> parts) {
        T acc = decode_value<T>(parts.front());
        for (auto it = std::next(parts.begin()); it != parts.end(); ++it)
            acc = Op{}(std::move(acc), decode_value<T>(*it));
        return encode_value(acc);
    }
    static inline const all_reduce_kind value =
        make_all_reduce_kind(typeid(T).name(), typeid(Op).name(), &fold);
};

// Where this rank's call waits for its result: shared by the awaiter and the round, since the
// result may come before, while or (never awaited) instead of the wait.
class all_reduce_slot {
  public:
    // The result's bytes, or the error every rank gets. Resumes the waiter, if one waits, here.
    void complete(std::span<const std::byte> result, std::exception_ptr error);
    bool done() const;
    // Registers `h`; false if the result is here already (then `h` goes on at once).
    bool wait(std::coroutine_handle<> h);
    std::exception_ptr error() const noexcept { return error_; }
    std::span<const std::byte> result() const noexcept { return result_; }

  private:
    mutable std::mutex mutex_;
    bool done_ = false;
    std::coroutine_handle<> waiter_;
    byte_vector result_;
    std::exception_ptr error_;
};

// Contributes this rank's `value` (encoded) to its next all_reduce of this phase.
std::shared_ptr<all_reduce_slot> start_all_reduce(const all_reduce_kind& kind, byte_vector value);

// Called by the runtime: at the start of a phase (the call count starts at 0, what the last
// phase left open is dropped), and when the job has gone quiet (a line for each open call).
void reset_all_reduces();
std::vector<std::string> describe_open_all_reduces();

template <class T> class [[nodiscard]] all_reduce_awaiter {
  public:
    explicit all_reduce_awaiter(std::shared_ptr<all_reduce_slot> slot) : slot_(std::move(slot)) {}
    bool await_ready() const { return slot_->done(); }
    bool await_suspend(std::coroutine_handle<> h) { return slot_->wait(h); }
    T await_resume() const {
        if (auto e = slot_->error())
            std::rethrow_exception(e);
        return decode_value<T>(slot_->result());
    }

  private:
    std::shared_ptr<all_reduce_slot> slot_;
};

} // namespace detail

/// See the top of this file.
template <class T, class Op>
[[nodiscard]] detail::all_reduce_awaiter<std::decay_t<T>> all_reduce(T&& value, Op) {
    using V = std::decay_t<T>;
    detail::check_op<Op>();
    static_assert(std::is_convertible_v<std::invoke_result_t<Op, V, V>, V>,
                  "prema::all_reduce: op must take two values and return one");
    return detail::all_reduce_awaiter<V>(detail::start_all_reduce(
        detail::all_reduce_kind_of<V, Op>::value, detail::encode_value<V>(value)));
}

} // namespace prema
