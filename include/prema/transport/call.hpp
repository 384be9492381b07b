/// @file
/// co_await prema::call(rank, handler, args...): runs the handler on `rank` and returns its
/// result (for a coroutine handler, its co_return value), or rethrows its exception as
/// prema::remote_error. The caller resumes on the worker that receives the reply.
#pragma once

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "prema/detail/transport/copy_bytes.hpp"
#include "prema/transport/handler.hpp"

namespace prema {
namespace detail {

// A call waiting for its reply; the reply handler finds it by token. The rest says what it
// awaits, for the report of a job that goes quiet while it still waits.
struct pending_call {
    std::coroutine_handle<> waiter;
    void (*complete)(pending_call* self, int source, byte_reader& reply) = nullptr;
    std::uint64_t handler = 0;           // of the request
    int dest = -1;                       // where the request went
    const held_access* caller = nullptr; // the object handler that waits, if one does
    // Names the request when its handler id cannot (object requests); null: a rank's handler.
    std::string (*describe)(const pending_call& self) = nullptr;
    // Where a result that travels as a bulk is received (see bulk_receiver_fn).
    void (*receive_bulk)(pending_call* self, std::size_t bytes, bulk_buffer& out) = nullptr;
};

std::uint64_t add_pending_call(pending_call* call);

// Decodes the exception part of an error reply.
std::exception_ptr read_remote_error(int source, byte_reader& r);

// The bytes of a put or get: [u64 count][bytes] inline, or, from bulk_from bytes on, a bulk
// sent from where they lie, so the caller must keep them valid until its put or get completes.
inline void write_in_place(byte_writer& w, std::span<const std::byte> bytes) {
    std::uint64_t n = bytes.size();
    if (!w.takes_bulk(n)) {
        w.write(&n, sizeof n);
        return w.write(bytes.data(), n);
    }
    w.write_bulk_count(n);
    // Only read: MPI sends from it.
    w.bulk().borrow(const_cast<std::byte*>(bytes.data()), n);
    bulk_stats().sent_borrowed.fetch_add(1, std::memory_order_relaxed);
}

// Reads what write_in_place wrote into `dst`, which must be as long. A bulk received there
// already (see bulk_receiver_fn) is not copied.
inline void read_in_place(byte_reader& r, std::span<std::byte> dst) {
    std::uint64_t n = 0;
    r.read(&n, sizeof n);
    bulk_buffer* bulk = r.bulk();
    bool in_bulk = n & bulk_bit;
    n &= ~bulk_bit;
    if (n != dst.size() || (in_bulk && (!bulk || bulk->size() != n)))
        throw wire_error("garbled payload: " + std::to_string(n) + " bytes for a buffer of " +
                         std::to_string(dst.size()));
    if (!in_bulk)
        return r.read(dst.data(), n);
    if (bulk->data() != dst.data())
        detail::copy_bytes(dst.data(), bulk->data(), n);
    else
        bulk_stats().received_moved.fetch_add(1, std::memory_order_relaxed);
    bulk->reset();
}

// Decodes a reply: a status byte, then the value into `value` (an optional<R>, unused for
// void) or the remote exception into `error`. Throws wire_error when garbled.
template <class R, class Value>
void read_reply(int source, byte_reader& r, std::exception_ptr& error, Value& value) {
    std::uint8_t status = 1;
    r.read(&status, 1);
    if (status != 0)
        error = read_remote_error(source, r);
    else if constexpr (!std::is_void_v<R>)
        value.emplace(read_value<R>(r));
}

// The request is serialized when the awaiter is made, into the awaiter (a small request) or
// a heap buffer of its size, and takes a message buffer when it leaves, that is when it is
// awaited: a rank holding many calls not yet awaited (when_all over N calls) holds N requests'
// bytes, not N message buffers. A call that is never awaited is still delivered (as a send,
// its result dropped), so that object sequence numbers have no gaps.
template <class R> class call_awaiter : protected pending_call {
  public:
    // `write(w)` fills the payload and returns the destination rank.
    template <class Write>
    call_awaiter(std::uint64_t id, Write&& write)
        : writer_(inline_, std::min(sizeof inline_, eager_capacity()), eager_capacity()) {
        handler = id;
        dest = write(writer_);
        check_payload(handler, writer_);
        complete = &on_reply;
        if constexpr (is_bulk_vector<R>)
            receive_bulk = [](pending_call*, std::size_t bytes, bulk_buffer& out) {
                hold_pooled<typename R::value_type>(bytes, out);
            };
    }
    // Movable until awaited (into a std::vector for when_all, say); once awaited, the reply
    // finds it by address.
    call_awaiter(call_awaiter&& o) noexcept
        : pending_call(o), unsent_(std::exchange(o.unsent_, false)), writer_(std::move(o.writer_)),
          error_(std::move(o.error_)), value_(std::move(o.value_)), landing_(o.landing_) {
        if (!writer_.spilled())
            writer_.relocate(inline_, std::min(sizeof inline_, eager_capacity()));
    }
    call_awaiter& operator=(call_awaiter&&) = delete;
    ~call_awaiter() {
        if (unsent_)
            send_unawaited();
    }

    bool await_ready() const noexcept { return false; }

    // Nothing may touch *this once post() returns: the reply can resume the caller at once.
    template <class P> void await_suspend(std::coroutine_handle<P> h) {
        waiter = h;
        if constexpr (std::is_base_of_v<access_context, P>)
            caller = h.promise().holder;
        unsent_ = false;
        post(nullptr, dest, handler, add_pending_call(this), writer_);
    }

    R await_resume() {
        if (error_)
            std::rethrow_exception(error_);
        if constexpr (!std::is_void_v<R>)
            return std::move(*value_);
    }

    // get(): the reply carries raw bytes (see read_in_place) for `dst`; a large one is received
    // straight into it.
    void land_in(std::span<std::byte> dst) noexcept requires std::is_void_v<R> {
        landing_ = dst;
        receive_bulk = [](pending_call* p, std::size_t bytes, bulk_buffer& out) {
            auto& dst = *static_cast<call_awaiter*>(p)->landing_;
            if (dst.size() == bytes)
                out.borrow(dst.data(), bytes);
        };
    }

  protected:
    // The request as written, before it is sent.
    byte_writer& request() noexcept { return writer_; }
    // Not sent yet: neither awaited nor sent unawaited.
    bool unsent() const noexcept { return unsent_; }

    // Sends the request without a token: it runs, and nobody waits for its reply.
    void send_unawaited() {
        unsent_ = false;
        post(nullptr, dest, handler, 0, writer_);
    }

  private:
    static void on_reply(pending_call* p, int source, byte_reader& r) {
        auto* self = static_cast<call_awaiter*>(p);
        try {
            read_reply<R>(source, r, self->error_, self->value_);
            if constexpr (std::is_void_v<R>)
                if (self->landing_ && !self->error_)
                    read_in_place(r, *self->landing_);
        } catch (...) {
            self->error_ = std::current_exception();
        }
    }

    struct empty {};
    // Most requests fit here; a larger one (or one above the eager size, which must travel
    // split-phase) spills into a heap buffer of its size.
    static constexpr std::size_t inline_bytes = 96;
    alignas(8) std::byte inline_[inline_bytes];
    bool unsent_ = true;
    byte_writer writer_;
    std::exception_ptr error_;
    [[no_unique_address]] std::conditional_t<std::is_void_v<R>, empty, std::optional<R>> value_;
    [[no_unique_address]] std::conditional_t<std::is_void_v<R>, std::optional<std::span<std::byte>>,
                                             empty>
        landing_;
};

} // namespace detail

/// Runs handler H with `args` on `rank`; co_await gives its result (see the file's description).
template <class H, class... A>
[[nodiscard]] detail::call_awaiter<detail::call_result<H>> call(int rank, H, A&&... args) {
    detail::check_handler<H>();
    detail::check_rank(rank);
    return {detail::handler_id<H>::value, [&](detail::byte_writer& w) {
                detail::write_handler_args<H>(w, std::forward<A>(args)...);
                return rank;
            }};
}

} // namespace prema
