// The remote side of put and get (include/prema/transport/remote_memory.hpp): large bytes are
// received straight into the put's destination and sent straight from the get's source.
#include <cstring>
#include <exception>

#include "prema/transport/remote_memory.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {

struct request {
    std::uint64_t address, bytes;
};

request read_request(byte_reader& r) {
    request q;
    r.read(&q, sizeof q);
    return q;
}

// Runs one request; its failure goes back to the caller, who would otherwise wait forever.
template <class F> void serve(const incoming& in, const char* what, F&& f) noexcept {
    try {
        f();
    } catch (...) {
        if (in.token)
            reply_error(in.source, in.token, what, std::current_exception());
        else
            report_detached_error(what, std::current_exception());
    }
}

void on_put(const incoming& in) {
    serve(in, "prema::put", [&] {
        byte_reader r(in.payload, in.bulk);
        auto q = read_request(r);
        read_in_place(r, {reinterpret_cast<std::byte*>(q.address), q.bytes});
        r.expect_end();
        if (in.token)
            reply_void(in.source, in.token);
    });
}

void receive_put(const incoming& in, std::size_t bytes, bulk_buffer& out) {
    request q;
    if (in.payload.size() >= sizeof q) {
        std::memcpy(&q, in.payload.data(), sizeof q);
        if (q.bytes == bytes)
            out.borrow(reinterpret_cast<void*>(q.address), bytes);
    }
}

void on_get(const incoming& in) {
    serve(in, "prema::get", [&] {
        byte_reader r(in.payload);
        auto q = read_request(r);
        r.expect_end();
        post_new(in.source, reply_handler_id(), in.token, [&](byte_writer& w) {
            std::uint8_t ok = 0;
            w.write(&ok, 1);
            write_in_place(w, {reinterpret_cast<const std::byte*>(q.address), q.bytes});
        });
    });
}

const std::uint64_t put_id = register_handler("prema::put", &on_put, &receive_put);
const std::uint64_t get_id = register_handler("prema::get", &on_get);

} // namespace

std::uint64_t put_handler_id() noexcept {
    return put_id;
}

std::uint64_t get_handler_id() noexcept {
    return get_id;
}

} // namespace prema::detail
