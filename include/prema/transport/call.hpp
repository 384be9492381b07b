// co_await prema::call(rank, handler, args...): runs the handler on `rank` and returns its
// result (for a coroutine handler, its co_return value), or rethrows its exception as
// prema::remote_error. The caller resumes on the worker that receives the reply.
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

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
};

std::uint64_t add_pending_call(pending_call* call);

// Decodes the exception part of an error reply.
std::exception_ptr read_remote_error(int source, byte_reader& r);

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

// The request is serialized when the awaiter is made. A call that is never awaited is still
// delivered (as a send, its result dropped), so that object sequence numbers have no gaps.
template <class R> class call_awaiter : protected pending_call {
  public:
    // `write(w)` fills the payload and returns the destination rank.
    template <class Write>
    call_awaiter(std::uint64_t id, Write&& write)
        : msg_(acquire_message()), writer_(msg_->inline_data(), eager_capacity()) {
        handler = id;
        try {
            dest = write(writer_);
            check_payload(handler, writer_);
        } catch (...) {
            release_message(msg_);
            throw;
        }
        complete = &on_reply;
    }
    call_awaiter(call_awaiter&& o) noexcept = delete;
    ~call_awaiter() {
        if (msg_)
            post(msg_, dest, handler, 0, writer_);
    }

    bool await_ready() const noexcept { return false; }

    // Nothing may touch *this once post() returns: the reply can resume the caller at once.
    template <class P> void await_suspend(std::coroutine_handle<P> h) {
        waiter = h;
        if constexpr (std::is_base_of_v<access_context, P>)
            caller = h.promise().holder;
        post(std::exchange(msg_, nullptr), dest, handler, add_pending_call(this), writer_);
    }

    R await_resume() {
        if (error_)
            std::rethrow_exception(error_);
        if constexpr (!std::is_void_v<R>)
            return std::move(*value_);
    }

  protected:
    // The request as written, before it is sent.
    byte_writer& request() noexcept { return writer_; }

    // Sends the request without a token: it runs, and nobody waits for its reply.
    void send_unawaited() { post(std::exchange(msg_, nullptr), dest, handler, 0, writer_); }

  private:
    static void on_reply(pending_call* p, int source, byte_reader& r) {
        auto* self = static_cast<call_awaiter*>(p);
        try {
            read_reply<R>(source, r, self->error_, self->value_);
        } catch (...) {
            self->error_ = std::current_exception();
        }
    }

    struct empty {};
    message* msg_;
    byte_writer writer_;
    std::exception_ptr error_;
    [[no_unique_address]] std::conditional_t<std::is_void_v<R>, empty, std::optional<R>> value_;
};

} // namespace detail

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
