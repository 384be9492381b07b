/// @file
/// Object handlers: code that runs where a mobile object lives, with access to it.
///
/// An object handler is a handler (a lambda without captures, or prema::fn<&T::method>) whose
/// first parameter is the object: `T&` asks for exclusive access, `const T&` for shared access.
/// Exclusive handlers on one object never overlap; shared ones may run together on several
/// workers; a handler keeps its access while suspended in co_await.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "prema/coro/task.hpp"
#include "prema/objects/mobile_ptr.hpp"
#include "prema/transport/handler.hpp"

namespace prema {

/// What a handler or guard holds on an object: shared access runs beside other shared access,
/// exclusive access alone.
enum class access : std::uint8_t { shared, exclusive };
inline constexpr access shared = access::shared;       ///< prema::shared, for acquire()
inline constexpr access exclusive = access::exclusive; ///< prema::exclusive, for acquire()

namespace detail {

// What a running object handler holds: the object, its access, and the handler's id (an object
// handler id) to name it by. Lives in the handler's frame while it runs (see access_context).
struct held_access {
    object_id object;
    access mode;
    std::uint64_t handler;
};

// A queued object message as its handler sees it; `payload` and `bulk` live until the task
// finishes.
struct object_call {
    void* object;
    int origin;          // the rank that sent it
    std::uint64_t token; // nonzero: origin awaits a reply
    std::span<const std::byte> payload;
    bulk_buffer* bulk;
};

// Runs one object message: decodes the arguments, runs the handler, replies if asked. A plain
// handler runs to its end in an object_runner. A coroutine handler is the task an
// object_invoker returns: the invoker decodes the arguments (reads `payload`, takes `bulk`)
// before it returns, so the message need not outlive it, and the task owns them. An error goes
// to the caller if one awaits a reply, else it is thrown (by the runner, the invoker if the
// arguments are malformed, or the task). An invoker that replied with an error returns no task.
// The runner takes the call by reference: passed by value, the struct was copied with loads
// wider than the stores that had just built it, which wait for those stores (in a flood of
// object messages, the receiver's costliest instruction).
using object_runner = void (*)(const object_call& call);
using object_invoker = task<> (*)(object_call call);

struct object_handler_entry {
    std::uint64_t id;
    std::string name;
    object_runner run;     // a plain handler, else null
    object_invoker invoke; // a coroutine handler, else null
    access mode;
    bulk_receiver_fn receive_bulk;
};

std::uint64_t register_object_handler(const char* key, object_runner run, object_invoker invoke,
                                      access mode, bulk_receiver_fn receive_bulk);
const object_handler_entry* find_object_handler(std::uint64_t id) noexcept;

template <class Params> struct object_params;
template <class H> struct object_traits : object_params<typename callable_traits<H>::raw_params> {};
template <class Self, class... A> struct object_params<type_list<Self, A...>> {
    static_assert(std::is_lvalue_reference_v<Self>,
                  "prema: an object handler's first parameter must be T& (exclusive access) or "
                  "const T& (shared access)");
    using object = std::remove_cvref_t<Self>;
    using args = type_list<std::decay_t<A>...>;
    static constexpr bool args_by_value = (std::is_same_v<A, std::decay_t<A>> && ...);
    static constexpr access mode =
        std::is_const_v<std::remove_reference_t<Self>> ? access::shared : access::exclusive;
};

template <class H> struct object_handler_id;

template <class H, class Args> decltype(auto) run_on_object(const object_call& c, Args& args) {
    using Obj = typename object_traits<H>::object;
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
        return H{}(*static_cast<Obj*>(c.object), std::get<I>(std::move(args))...);
    }
    (std::make_index_sequence<std::tuple_size_v<Args>>{});
}

template <class H> void reply_object_error(const object_call& c) {
    if (!c.token)
        throw;
    reply_error(c.origin, c.token, find_object_handler(object_handler_id<H>::value)->name,
                std::current_exception());
}

// After the handler: its arguments go back to their pools, and a caller gets the result.
template <class Args, class... V> void object_done(const object_call& c, Args& args, V&&... v) {
    recycle_arguments(args);
    if (!c.token)
        return;
    if constexpr (sizeof...(V) == 0)
        reply_void(c.origin, c.token);
    else
        reply_value(c.origin, c.token, std::forward<V>(v)...);
}

template <class H, class... P> void object_run(const object_call& c, type_list<P...>) {
    byte_reader r(c.payload, c.bulk);
    try {
        auto args = read_args<P...>(r);
        r.expect_end();
        if constexpr (std::is_void_v<call_result<H>>) {
            run_on_object<H>(c, args);
            object_done(c, args);
        } else {
            object_done(c, args, run_on_object<H>(c, args));
        }
    } catch (...) {
        reply_object_error<H>(c);
    }
}

// A coroutine handler's run once its arguments are decoded; `c` names no payload any more.
template <class H, class Args> task<> object_task(object_call c, Args args) {
    try {
        if constexpr (std::is_void_v<call_result<H>>) {
            co_await run_on_object<H>(c, args);
            object_done(c, args);
        } else {
            object_done(c, args, co_await run_on_object<H>(c, args));
        }
    } catch (...) {
        reply_object_error<H>(c);
    }
}

template <class H, class... P> task<> object_invoke(object_call c, type_list<P...>) {
    try {
        byte_reader r(c.payload, c.bulk);
        auto args = read_args<P...>(r);
        r.expect_end();
        // A handler whose frame owns its arguments and that nobody awaits needs no coroutine
        // around its own: its task is the one to run.
        if constexpr (std::is_void_v<call_result<H>> && object_traits<H>::args_by_value) {
            if (!c.token)
                return run_on_object<H>(c, args);
        }
        c.payload = {};
        c.bulk = nullptr;
        return object_task<H>(c, std::move(args));
    } catch (...) {
        reply_object_error<H>(c);
        return {};
    }
}

template <class H> struct object_handler_id {
    static constexpr bool is_task = unwrap_task<handler_result<H>>::is_task;
    static object_runner runner() {
        if constexpr (is_task)
            return nullptr;
        else
            return
                [](const object_call& c) { object_run<H>(c, typename object_traits<H>::args{}); };
    }
    static object_invoker invoker() {
        if constexpr (is_task)
            return [](object_call c) {
                return object_invoke<H>(c, typename object_traits<H>::args{});
            };
        else
            return nullptr;
    }
    static inline const std::uint64_t value =
        register_object_handler(typeid(H).name(), runner(), invoker(), object_traits<H>::mode,
                                bulk_receiver(typename object_traits<H>::args{}));
};

// Writes `args` as object handler H's parameters after the object.
template <class H, class... A> void write_object_args(byte_writer& w, A&&... args) {
    write_as(typename object_traits<H>::args{}, w, std::forward<A>(args)...);
}

} // namespace detail
} // namespace prema
