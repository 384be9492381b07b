/// @file
/// The Mobile Object Layer's user calls. Code talks to objects, never to ranks:
///
/// @code
///   auto mp = co_await prema::create<subdomain>(rank, args...);     // mobile_ptr<subdomain>
///   co_await prema::send(mp, prema::fn<&subdomain::refine>, 1e-3);  // wherever it lives now
///   double e = co_await prema::call(mp, prema::fn<&subdomain::error>);
///   co_await prema::migrate(mp, other_rank);
///   { auto g = co_await prema::acquire(mp, prema::exclusive); g->cells.clear(); }
///   co_await prema::destroy(mp);
///   auto me = prema::self(obj);  // in a handler of `obj`: its own mobile_ptr
/// @endcode
///
/// Messages from one rank to one object run in the order they were sent, even while the
/// object migrates. A message to a destroyed object or a pointer nobody created is an error:
/// prema::call rethrows it, a send reports it on the rank that finds it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "prema/coro/yield.hpp"
#include "prema/detail/objects/object_type.hpp"
#include "prema/objects/mobile_ptr.hpp"
#include "prema/objects/object_handler.hpp"
#include "prema/transport/call.hpp"
#include "prema/transport/send.hpp"

namespace prema {
namespace detail {

// cancelled: a request refused at its call (see object_request); it keeps its sender's
// sequence number and is dropped on admission. skip: numbers a sender took ahead and did not
// use (after_worker_item), `handler` of them from `seq` on; dropped on admission too.
enum class object_op : std::uint16_t { user, migrate, destroy, acquire, cancelled, skip };

// In front of every object message's arguments.
struct object_header {
    object_id id;
    std::uint64_t seq;     // per (origin rank, object, stream), from 0
    std::uint64_t handler; // object handler id (op user)
    std::int32_t origin;   // the rank that sent it
    std::uint16_t hops;    // forwards so far
    object_op op;
    // The sender's belief: the object reached the receiving rank with this move count (0: no
    // claim). A rank that has not installed that move yet holds the message until it does,
    // instead of bouncing it back while the object is in transit.
    std::uint64_t moves;
    // The epoch (quiescences decided) at which the origin started numbering its messages to
    // this object from 0 again: it does so after two epochs without a message to it, so that
    // both ends may forget the pair in between (docs/design/ordering-and-forwarding.md).
    std::uint64_t stream;
};
static_assert(sizeof(object_header) == 56);

// The transport handler that routes object messages.
std::uint64_t object_message_id() noexcept;

// Reserves room for the header at the start of `w`.
void begin_object_message(byte_writer& w);

// Checks the size of a message to `id` and that `id` is not null (usage_error); its header is
// filled in when it is sent (see object_request).
void check_object_message(object_id id, byte_writer& w);

// Registers a new object on this rank and names it.
object_id adopt_local_object(void* obj, const object_type& type);

// The id of the object at `object`, which lives here and is of the type `type_id` names;
// usage_error otherwise (objects/self.cpp).
object_id self_id(const void* object, std::uint64_t type_id, const char* type_name);

// This rank's best guess of where `id` lives (-1: destroyed), its forwards so far, and the
// object messages it ran on the worker that received them (objects/direct.cpp).
int where(object_id id);
std::uint64_t forward_count() noexcept;
std::uint64_t direct_run_count() noexcept;
// The object messages this rank received in runs (objects/runs.cpp).
std::uint64_t run_message_count() noexcept;

// This rank's directory: its entries, the objects living here among them, and the ordering
// entries (one per origin) that migrations from here have carried so far.
struct directory_counts {
    std::uint64_t entries, local, shipped_orders;
    std::uint64_t addresses; // objects prema::self can name: `local` of them once quiescent
};
directory_counts directory_census();

// Releases access taken by acquire().
void release_access(std::uint64_t record, access mode) noexcept;

template <class T, class... A> struct create_handler {
    object_id operator()(A... a) const {
        return adopt_local_object(new T(std::move(a)...), object_type_of<T>::value);
    }
};

// A message to `id` as the directory sees it now: its header, with the next sequence number
// from this rank, and the rank it goes to. Throws usage_error for a null pointer.
struct object_send_slot {
    object_header header;
    int dest;
};
object_send_slot next_object_message(object_id id, object_op op, std::uint64_t handler);
// Posts a message that holds `slot`'s place in the order and does nothing: for a message that
// took its sequence number and then failed to go.
void post_cancelled(const object_send_slot& slot) noexcept;
// The object layer's part after each of a worker's items and on its idle rounds (the runtime
// calls it): gives back the numbers the worker took ahead for its messages to one object and
// did not use (objects/directory.hpp, next_from_block), or posts the skip that holds their
// place; adds the worker's direct runs to the rank's count (objects/direct.cpp).
void after_worker_item() noexcept;

// Runs (src/objects/runs.cpp): a message to the object that the last item of the worker's
// open batch to its rank is a message to, from this rank, numbered right after it, joins that
// item instead of taking an item and a header of its own. Where its `bytes` of arguments go,
// or null when it cannot join.
struct object_run_place {
    std::byte* args = nullptr;
    batch_lane* lane = nullptr;
    std::uint32_t more = 0; // the messages after the first that the item carries already
};
object_run_place object_run_room(const object_send_slot& slot, std::size_t bytes) noexcept;
// The arguments written at `place.args`, `bytes` of them, join the run.
void join_object_run(const object_run_place& place, const object_send_slot& slot,
                     std::size_t bytes);

// The bytes of handler H's arguments if each travels as its raw bytes (their size is known
// before they are written), else not_bitwise.
inline constexpr std::size_t not_bitwise = ~std::size_t(0);
template <class... P> constexpr std::size_t bitwise_bytes(type_list<P...>) noexcept {
    if constexpr ((is_bitwise<P> && ...))
        return (std::size_t(0) + ... + sizeof(P));
    else
        return not_bitwise;
}

// The sequence number first, then the message straight where it goes (an open batch, usually).
// One that fails to go (its arguments too large, say) leaves a cancelled one in its place, or
// the object would hold every later message from this rank behind a number that never comes.
template <class H, class... A> void post_object_message(object_id id, A&&... args) {
    auto slot = next_object_message(id, object_op::user, object_handler_id<H>::value);
    try {
        constexpr std::size_t bytes = bitwise_bytes(typename object_traits<H>::args{});
        if constexpr (bytes != not_bitwise) {
            if (auto place = object_run_room(slot, bytes); place.args) {
                byte_writer w(place.args, bytes);
                write_object_args<H>(w, std::forward<A>(args)...);
                return join_object_run(place, slot, bytes);
            }
        }
        post_new(slot.dest, object_message_id(), 0, [&](byte_writer& w) {
            w.write(&slot.header, sizeof slot.header);
            write_object_args<H>(w, std::forward<A>(args)...);
        });
    } catch (...) {
        post_cancelled(slot);
        throw;
    }
}

template <class T> constexpr void check_mobile() {
    static_assert(is_mobile<T>, "prema: a mobile object type must be default constructible and "
                                "have `template <class Archive> void serialize(Archive&)` (or "
                                "cereal save/load functions) so that it can migrate");
}

// What an object request asks for: the object, the operation, the handler (op user), the
// access it needs and, for a migration, the destination rank.
struct object_target {
    object_id object;
    object_op op;
    std::uint64_t handler;
    access mode;
    int to = -1;
};

// What the request `t` names, for the report of a job that goes quiet while it waits.
std::string describe_object_request(const object_target& t, int dest);

// Puts migrate or destroy `t`, asked by the handler that holds `held`, at the head of the
// object's queue: it takes effect as soon as that handler has ended.
void run_after_handler(const held_access& held, const object_target& t);

// Throws the usage_error of a request that a handler holding `held` makes to its own object
// and that could never complete.
[[noreturn]] void refuse_own_object_request(const held_access& held, const object_target& t);

// A request to an object (call, migrate, destroy, acquire), awaited like a call. A handler's
// request to the object it holds cannot wait for its reply like others, since the object
// serves it only after the handler ends: migrate and destroy take effect once the handler has
// ended and the handler goes on at once; calls and acquires that need access the handler's
// own excludes throw usage_error; shared access asked from a shared handler is granted beside
// it. Either way the request's message still goes, as a no-op when it is not awaited.
//
// A request takes its place in this rank's order of messages to the object (its sequence number)
// when it is sent, that is when it is awaited (or dropped unawaited), not when it is made: a
// request made first and awaited after another one to the same object runs after that one,
// instead of holding it back forever (`auto a = call(mp, f); co_await call(mp, g); co_await a;`).
template <class R> class object_request : public call_awaiter<R> {
  public:
    template <class Write>
    object_request(object_target t, Write&& write)
        : call_awaiter<R>(object_message_id(),
                          [&](byte_writer& w) {
                              begin_object_message(w);
                              write(w);
                              check_object_message(t.object, w);
                              return -1; // see number()
                          }),
          target_(t) {
        this->describe = &describe_self;
    }
    object_request(object_request&&) noexcept = default;
    // Dropped unawaited: the base sends it, numbered now.
    ~object_request() {
        if (this->unsent())
            number();
    }

    // false: not suspended (a migrate or destroy from the object's own handler).
    template <class P> bool await_suspend(std::coroutine_handle<P> h) {
        number();
        if constexpr (std::is_base_of_v<access_context, P>) {
            if (auto* held = h.promise().holder; held && held->object == target_.object) {
                if (target_.op == object_op::migrate || target_.op == object_op::destroy) {
                    cancel();
                    run_after_handler(*held, target_);
                    return false;
                }
                if (held->mode == access::exclusive || target_.mode == access::exclusive) {
                    cancel();
                    refuse_own_object_request(*held, target_);
                }
            }
        }
        call_awaiter<R>::await_suspend(h);
        return true;
    }

  private:
    // The next sequence number from this rank and the object's best-guess rank, just before the
    // request is sent.
    void number() noexcept {
        auto slot = next_object_message(target_.object, target_.op, target_.handler);
        this->request().patch(0, &slot.header, sizeof slot.header);
        this->dest = slot.dest;
    }

    void cancel() {
        object_op cancelled = object_op::cancelled;
        this->request().patch(offsetof(object_header, op), &cancelled, sizeof cancelled);
        this->send_unawaited();
    }

    static std::string describe_self(const pending_call& p) {
        auto& self = static_cast<const object_request&>(p);
        return describe_object_request(self.target_, p.dest);
    }

    object_target target_;
};

} // namespace detail

/// Creates a T from `args` on `rank` and returns its mobile pointer.
template <class T, class... A> task<mobile_ptr<T>> create(int rank, A... args) {
    detail::check_mobile<T>();
    object_id id = co_await call(rank, detail::create_handler<T, std::decay_t<A>...>{}, args...);
    co_return mobile_ptr<T>(id);
}

/// This rank's best guess of the object's rank, from its directory (no messages): exact if
/// the object lives here, possibly stale otherwise; the home rank for an object this rank has
/// forgotten (a directory forgets what it has not used for two quiescences). -1 for an object
/// this rank knows was destroyed.
template <class T> int where(mobile_ptr<T> mp) {
    return detail::where(mp.id());
}

/// Creates a T here, without messages.
template <class T, class... A> mobile_ptr<T> make_mobile(A&&... args) {
    detail::check_mobile<T>();
    return mobile_ptr<T>(detail::adopt_local_object(new T(std::forward<A>(args)...),
                                                    detail::object_type_of<T>::value));
}

/// The mobile_ptr of `object`, a mobile object that lives on this rank: in a handler, the
/// object it was given, so that it can pass itself on (`prema::self(cell)`) without every
/// message carrying its pointer. Throws usage_error if `object` is not a mobile T living here
/// (a copy, say). A handler holds its object, so the answer stays true while the handler runs.
template <class T> mobile_ptr<T> self(const T& object) {
    return mobile_ptr<T>(detail::self_id(std::addressof(object),
                                         detail::object_type_of<T>::value.id, typeid(T).name()));
}

/// Runs `handler(object, args...)` where the object lives; ordered per sending rank.
template <class T, class H, class... A>
[[nodiscard]] send_awaiter send(mobile_ptr<T> mp, H, A&&... args) {
    detail::check_handler<H>();
    static_assert(std::is_same_v<typename detail::object_traits<H>::object, T>,
                  "prema: the handler's first parameter must be the pointed-to object type");
    detail::post_object_message<H>(mp.id(), std::forward<A>(args)...);
    return {};
}

/// As send, and returns the handler's result (or rethrows its exception).
template <class T, class H, class... A>
[[nodiscard]] detail::object_request<detail::call_result<H>> call(mobile_ptr<T> mp, H,
                                                                  A&&... args) {
    detail::check_handler<H>();
    static_assert(std::is_same_v<typename detail::object_traits<H>::object, T>,
                  "prema: the handler's first parameter must be the pointed-to object type");
    return {
        {mp.id(), detail::object_op::user, detail::object_handler_id<H>::value,
         detail::object_traits<H>::mode},
        [&](detail::byte_writer& w) { detail::write_object_args<H>(w, std::forward<A>(args)...); }};
}

/// Moves the object to `rank` once the handlers sent before this call have run; its pending
/// handlers go with it. Resumes when it is installed there; from a handler of the object
/// itself, at once (the object moves once that handler has ended). A later move queued behind
/// this one with only other ranks' messages between is taken as one with it: the object goes
/// straight to that move's rank (those messages run before it leaves), and this call resumes
/// once it is installed there.
template <class T> task<> migrate(mobile_ptr<T> mp, int rank) {
    detail::check_rank(rank);
    co_await detail::object_request<void>({mp.id(), detail::object_op::migrate, 0, exclusive, rank},
                                          [&](detail::byte_writer& w) {
                                              std::int32_t r = rank;
                                              w.write(&r, sizeof r);
                                          });
}

/// Destroys the object after the handlers sent before this call have run (from a handler of the
/// object itself: once that handler has ended; it resumes at once).
template <class T> task<> destroy(mobile_ptr<T> mp) {
    co_await detail::object_request<void>({mp.id(), detail::object_op::destroy, 0, exclusive},
                                          [](detail::byte_writer&) {});
}

/// Access to an object held by local code; released when the guard dies.
template <class T> class object_guard {
  public:
    /// Made by acquire(): `mode` access to `obj`, whose record the runtime knows as `record`.
    object_guard(T* obj, std::uint64_t record, access mode) noexcept
        : obj_(obj), record_(record), mode_(mode) {}
    /// Takes over `o`'s access; `o` then holds none.
    object_guard(object_guard&& o) noexcept
        : obj_(std::exchange(o.obj_, nullptr)), record_(o.record_), mode_(o.mode_) {}
    object_guard& operator=(object_guard&&) = delete;
    ~object_guard() {
        if (obj_)
            detail::release_access(record_, mode_);
    }
    /// The object; change it only under exclusive access.
    T* operator->() const noexcept { return obj_; }
    /// The object.
    T& operator*() const noexcept { return *obj_; }
    /// The object; nullptr once moved from.
    T* get() const noexcept { return obj_; }

  private:
    T* obj_;
    std::uint64_t record_;
    access mode_;
};

/// Brings the object to this rank (after the handlers sent before) and holds `mode` access
/// until the guard dies. Holding exclusive access to several objects: acquire in a fixed order.
/// From a handler of the object itself: usage_error unless both are shared.
template <class T> task<object_guard<T>> acquire(mobile_ptr<T> mp, access mode = exclusive) {
    // The reply names the object's local record; the object sits right after it (see
    // src/objects/object_record.hpp).
    std::pair<std::uint64_t, std::uint64_t> at =
        co_await detail::object_request<std::pair<std::uint64_t, std::uint64_t>>(
            {mp.id(), detail::object_op::acquire, 0, mode},
            [&](detail::byte_writer& w) { w.write(&mode, sizeof mode); });
    co_return object_guard<T>(reinterpret_cast<T*>(at.second), at.first, mode);
}

/// PREMA's multicast: brings every object to this rank, holds them all exclusively, runs
/// `handler(std::span<T* const> objects, args...)` here and returns its result.
template <class T, class H, class... A>
auto multicast(std::vector<mobile_ptr<T>> objects, H handler, A... args)
    -> task<std::remove_cvref_t<decltype(handler(std::span<T* const>{}, args...))>> {
    std::sort(objects.begin(), objects.end()); // one global order: no deadlock between callers
    objects.erase(std::unique(objects.begin(), objects.end()), objects.end());
    std::vector<object_guard<T>> guards;
    std::vector<T*> ptrs;
    for (auto mp : objects) {
        guards.push_back(co_await acquire(mp, exclusive));
        ptrs.push_back(guards.back().get());
    }
    co_return handler(std::span<T* const>(ptrs), args...);
}

} // namespace prema
