// prema::call's bookkeeping: outstanding calls by token, the reply handler, and how an
// exception travels back (handler name, type name and what(); the type itself cannot).
#include <fmt/format.h>

#include "prema/transport/call.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {

void on_reply(const incoming& in) {
    auto& st = state();
    pending_call* call = nullptr;
    {
        std::lock_guard lock(st.calls_mutex);
        if (auto it = st.calls.find(in.token); it != st.calls.end()) {
            call = it->second;
            st.calls.erase(it);
        }
    }
    if (!call) {
        report_error(
            fmt::format("reply from rank {} for unknown call token {}", in.source, in.token));
        return;
    }
    byte_reader r(in.payload, in.bulk);
    call->complete(call, in.source, r);
    call->waiter.resume(); // on this worker; `call` may be gone once this returns
}

// The call stays pending until its reply is dispatched, after the payload has arrived.
void receive_reply_bulk(const incoming& in, std::size_t bytes, bulk_buffer& out) {
    auto& st = state();
    std::lock_guard lock(st.calls_mutex);
    if (auto it = st.calls.find(in.token); it != st.calls.end() && it->second->receive_bulk)
        it->second->receive_bulk(it->second, bytes, out);
}

const std::uint64_t reply_id = register_handler("prema::reply", &on_reply, &receive_reply_bulk);

} // namespace

std::uint64_t reply_handler_id() noexcept {
    return reply_id;
}

std::uint64_t add_pending_call(pending_call* call) {
    auto& st = state();
    std::lock_guard lock(st.calls_mutex);
    std::uint64_t token = st.next_token++;
    st.calls.emplace(token, call);
    return token;
}

void reply_error(int dest, std::uint64_t token, std::string_view handler,
                 std::exception_ptr e) noexcept {
    std::string type, what;
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        type = current_exception_type();
        what = x.what();
    } catch (...) {
        type = current_exception_type();
    }
    try {
        post_new(dest, reply_id, token, [&](byte_writer& w) {
            std::uint8_t failed = 1;
            w.write(&failed, 1);
            write_value(w, std::string(handler));
            write_value(w, type);
            write_value(w, what);
        });
    } catch (const std::exception& x) {
        report_error(fmt::format("could not send the error of handler {} back to rank {}: {}",
                                 handler, dest, x.what()));
    }
}

std::exception_ptr read_remote_error(int source, byte_reader& r) {
    auto handler = read_value<std::string>(r);
    auto type = read_value<std::string>(r);
    auto what = read_value<std::string>(r);
    return std::make_exception_ptr(remote_error(source, handler, type, what));
}

} // namespace prema::detail
