/// @file
/// Handlers: what one rank asks another to run.
///
/// A handler is a lambda without captures, or prema::fn<&function>. Its parameters say what the
/// message carries; its result (a value, or a task<T> for a coroutine handler) is what
/// prema::call returns. The handler's type names it: the id is a hash of the mangled type name,
/// registered before main() on every rank of the same binary, so no registration call and no
/// ordering rule exist. A message naming an id this binary does not know is refused with an error.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "prema/coro/spawn.hpp"
#include "prema/coro/task.hpp"
#include "prema/detail/transport/message.hpp"
#include "prema/detail/transport/outbox.hpp"
#include "prema/transport/serialization.hpp"

namespace prema {

/// A function as a handler; use it through prema::fn.
template <auto F> struct fn_t;
/// Wraps a free function as a handler: prema::send(rank, prema::fn<&f>, args...).
template <class R, class... A, R (*F)(A...)> struct fn_t<F> {
    /// Calls the function.
    R operator()(A... a) const { return F(std::forward<A>(a)...); }
};
/// Member functions become object handlers: prema::send(mp, prema::fn<&T::method>, args...);
/// a const member function asks for shared access, any other for exclusive access.
template <class C, class R, class... A, R (C::*F)(A...)> struct fn_t<F> {
    /// Calls the member function on the object, with exclusive access.
    R operator()(C& self, A... a) const { return (self.*F)(std::forward<A>(a)...); }
};
/// A const member function: an object handler with shared access.
template <class C, class R, class... A, R (C::*F)(A...) const> struct fn_t<F> {
    /// Calls the member function on the object, with shared access.
    R operator()(const C& self, A... a) const { return (self.*F)(std::forward<A>(a)...); }
};
/// The handler that runs function (or member function) F: prema::fn<&f>, prema::fn<&T::m>.
template <auto F> inline constexpr fn_t<F> fn{};

namespace detail {

// A received message as handlers see it. `payload` is valid only until the invoker returns;
// `bulk`, if any, is the message's bulk, which the invoker may take.
struct incoming {
    int source;
    std::uint64_t token;
    std::span<const std::byte> payload;
    bulk_buffer* bulk = nullptr;
    // The messages of its batch that run after it, on this thread and with nothing in between
    // (null outside a batch): a handler may look ahead at them and, if `may_take`, run some of
    // them itself, taking them with take_next: the batch then goes on after them.
    batch_reader* rest = nullptr;
    // False while each message must pass the transport on its own (--prema-stats and
    // --prema-trace note every message as it runs).
    bool may_take = false;
    // The messages after the first that `payload` carries (batch_item::more): nonzero only for
    // a handler registered as taking runs, which decodes them.
    std::uint32_t more = 0;

    std::span<const std::byte> rest_of_batch() const noexcept {
        return rest ? rest->rest() : std::span<const std::byte>{};
    }
    bool more_in_batch() const noexcept { return !rest_of_batch().empty(); }
    // Whether the next message of its batch is for `handler` too: a handler may keep what it
    // set up for that one.
    bool next_in_batch_for(std::uint64_t handler) const noexcept {
        batch_item next;
        std::span<const std::byte> payload;
        return batch_reader(rest_of_batch()).next(next, payload) && next.handler == handler;
    }
    // The batch's next message, taken to run by the caller (a handler of the same kind that
    // has checked it, as check_batch accepted its layout); false if none or not allowed.
    bool take_next(batch_item& item, std::span<const std::byte>& payload) const noexcept {
        return may_take && rest->next(item, payload);
    }
};

using invoker_fn = void (*)(const incoming&);
// Called on the thread that polls MPI when a message's header (with its inline arguments, not
// `bulk`) has arrived: puts into `out` the buffer to receive its bulk of `bytes` into, or
// nothing (then a pooled byte buffer is used).
using bulk_receiver_fn = void (*)(const incoming& in, std::size_t bytes, bulk_buffer& out);

struct handler_entry {
    std::uint64_t id;
    std::string name; // demangled, for error messages
    invoker_fn invoke;
    bulk_receiver_fn receive_bulk;
    bool takes_runs; // its batch items may carry runs (batch_item::more)
};

// Registers before main(); `key` is stable across ranks of one binary. Returns the id.
std::uint64_t register_handler(const char* key, invoker_fn invoke,
                               bulk_receiver_fn receive_bulk = nullptr, bool takes_runs = false);
const handler_entry* find_handler(std::uint64_t id) noexcept;
const std::string& handler_name(std::uint64_t id) noexcept;

// Replies to a call: a status byte (0: value follows, 1: exception follows), then the value.
std::uint64_t reply_handler_id() noexcept;
void reply_error(int dest, std::uint64_t token, std::string_view handler,
                 std::exception_ptr e) noexcept;

// FNV-1a: the same on every rank and every run, unlike std::hash.
std::uint64_t stable_hash(std::string_view s) noexcept;
template <class T> void reply_value(int dest, std::uint64_t token, T&& value) {
    using V = std::remove_cvref_t<T>;
    post_new(dest, reply_handler_id(), token, [&](byte_writer& w) {
        std::uint8_t ok = 0;
        w.write(&ok, 1);
        write_arg<V, is_bulk_vector<V>>(w, std::forward<T>(value));
    });
}
inline void reply_void(int dest, std::uint64_t token) {
    post_new(dest, reply_handler_id(), token, [](byte_writer& w) {
        std::uint8_t ok = 0;
        w.write(&ok, 1);
    });
}

template <class... T> struct type_list {};

/// @cond internal (Doxygen takes this specialisation chain for a recursive class)
template <class F> struct callable_traits : callable_traits<decltype(&F::operator())> {};
template <class C, class R, class... A> struct callable_traits<R (C::*)(A...) const> {
    using result = R;
    using params = type_list<std::decay_t<A>...>;
    using raw_params = type_list<A...>;
};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (C::*)(A...) const> {};
/// @endcond

template <class T> struct unwrap_task {
    using type = T;
    static constexpr bool is_task = false;
};
template <class T> struct unwrap_task<task<T>> {
    using type = T;
    static constexpr bool is_task = true;
};

template <class H> using handler_result = typename callable_traits<H>::result;
// What prema::call on this handler returns.
template <class H> using call_result = typename unwrap_task<handler_result<H>>::type;

template <class H> constexpr void check_handler() {
    static_assert(std::is_empty_v<H> && std::is_default_constructible_v<H>,
                  "prema: a handler must be a lambda without captures or prema::fn<&function>; "
                  "captured state cannot travel to another rank, pass it as an argument");
}

template <class H> void invoke(const incoming& in);

template <class T> void receive_bulk_of(const incoming&, std::size_t bytes, bulk_buffer& out) {
    hold_pooled<T>(bytes, out);
}

// How a handler with parameters P... receives its bulk: into a pooled vector of the type that
// its parameter takes by move.
template <class... P> constexpr bulk_receiver_fn bulk_receiver(type_list<P...>) {
    using T = typename bulk_element<P...>::type;
    if constexpr (std::is_void_v<T>)
        return nullptr;
    else
        return &receive_bulk_of<T>;
}

template <class H> struct handler_id {
    static inline const std::uint64_t value = register_handler(
        typeid(H).name(), &invoke<H>, bulk_receiver(typename callable_traits<H>::params{}));
};

template <class H>
inline constexpr bool params_by_value =
    std::is_same_v<typename callable_traits<H>::raw_params, typename callable_traits<H>::params>;

template <class H> void end_of_sent_task(std::uint64_t, std::exception_ptr failure) noexcept {
    if (failure)
        report_detached_error(handler_name(handler_id<H>::value), failure);
}

// Runs a coroutine handler detached; its frame owns the decoded arguments.
template <class H, class Tuple>
detached run_task_handler(Tuple args, int source, std::uint64_t token) {
    using R = call_result<H>;
    try {
        if constexpr (std::is_void_v<R>) {
            co_await std::apply(H{}, std::move(args));
            recycle_arguments(args);
            if (token)
                reply_void(source, token);
        } else {
            R r = co_await std::apply(H{}, std::move(args));
            recycle_arguments(args);
            if (token)
                reply_value(source, token, std::move(r));
        }
    } catch (...) {
        if (token)
            reply_error(source, token, handler_name(handler_id<H>::value),
                        std::current_exception());
        else
            report_detached_error(handler_name(handler_id<H>::value), std::current_exception());
    }
}

template <class H, class... P> void invoke(const incoming& in, type_list<P...>) {
    using R = handler_result<H>;
    try {
        byte_reader r(in.payload, in.bulk);
        auto args = read_args<P...>(r);
        r.expect_end();
        if constexpr (unwrap_task<R>::is_task) {
            // Both resume right here, on this worker, up to the handler's first suspension. A
            // send to a handler whose frame owns its arguments (all by value) needs no
            // coroutine around the handler's own.
            if constexpr (std::is_void_v<call_result<H>> && params_by_value<H>) {
                if (!in.token)
                    return std::apply(H{}, std::move(args)).start_detached(&end_of_sent_task<H>, 0);
            }
            run_task_handler<H>(std::move(args), in.source, in.token).handle.resume();
        } else if constexpr (std::is_void_v<R>) {
            std::apply(H{}, std::move(args));
            recycle_arguments(args);
            if (in.token)
                reply_void(in.source, in.token);
        } else {
            R result = std::apply(H{}, std::move(args));
            recycle_arguments(args);
            if (in.token)
                reply_value(in.source, in.token, std::move(result));
        }
    } catch (...) {
        if (in.token)
            reply_error(in.source, in.token, handler_name(handler_id<H>::value),
                        std::current_exception());
        else
            report_detached_error(handler_name(handler_id<H>::value), std::current_exception());
    }
}

template <class H> void invoke(const incoming& in) {
    invoke<H>(in, typename callable_traits<H>::params{});
}

// Writes `args` as the parameter types `P...`.
template <class... P, class... A> void write_as(type_list<P...>, byte_writer& w, A&&... args) {
    write_args<P...>(w, std::forward<A>(args)...);
}

// Writes `args` as handler H's parameters.
template <class H, class... A> void write_handler_args(byte_writer& w, A&&... args) {
    write_as(typename callable_traits<H>::params{}, w, std::forward<A>(args)...);
}

} // namespace detail
} // namespace prema
