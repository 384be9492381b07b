// The object layer's wire decoders (see wire_decode.hpp). No MPI, no runtime state: the
// fuzzer and the unit tests call them directly.
#include "objects/wire_decode.hpp"

#include <cmath>

#include <fmt/format.h>

#include "prema/error.hpp"

namespace prema::detail {

namespace {

object_entry read_entry(byte_reader& r) {
    object_entry e;
    r.read(&e.header, sizeof e.header);
    r.read(&e.token, sizeof e.token);
    std::uint64_t n = 0;
    r.read(&n, sizeof n);
    bool has_bulk = n & bulk_bit;
    n &= ~bulk_bit;
    if (n > r.remaining())
        throw wire_error("migration payload: entry of " + std::to_string(n) + " bytes truncated");
    e.payload.resize(n);
    r.read(e.payload.data(), n);
    if (has_bulk) {
        r.read(&n, sizeof n);
        if (n == 0 || n > r.remaining())
            throw wire_error("migration payload: bulk of " + std::to_string(n) +
                             " bytes truncated");
        byte_vector bulk = vector_pool<byte_vector>::get().take(n);
        r.read(bulk.data(), n);
        e.bulk.hold(std::move(bulk));
    }
    return e;
}

} // namespace

object_message_view view_object_message(std::span<const std::byte> payload) {
    byte_reader r(payload);
    object_message_view v;
    r.read(&v.header, sizeof v.header);
    v.args = r.rest();
    return v;
}

object_entry decode_object_message(std::span<const std::byte> payload, std::uint64_t token) {
    auto v = view_object_message(payload);
    return object_entry{v.header, token, byte_vector(v.args.begin(), v.args.end()), {}};
}

decoded_install decode_install(std::span<const std::byte> payload) {
    byte_reader r(payload);
    auto rec = std::make_shared<object_record>();
    std::uint64_t type_id = 0;
    decoded_install d;
    r.read(&rec->id, sizeof rec->id);
    r.read(&type_id, sizeof type_id);
    r.read(&rec->moves, sizeof rec->moves);
    r.read(&d.reply_to, sizeof d.reply_to);
    r.read(&d.token, sizeof d.token);
    auto& h = rec->history;
    r.read(&h.seconds, sizeof h.seconds);
    r.read(&h.ratio, sizeof h.ratio);
    r.read(&h.runs, sizeof h.runs);
    if (!(std::isfinite(h.seconds) && h.seconds >= 0 && std::isfinite(h.ratio) && h.ratio >= 0))
        throw wire_error(fmt::format("migration of object <{}:{}> carries a measured load of {} s "
                                     "per handler, ratio {}",
                                     rec->id.creator, rec->id.serial, h.seconds, h.ratio));
    rec->type = find_object_type(type_id);
    if (!rec->type)
        throw wire_error(fmt::format("migration of {} names unknown type id {:#x}",
                                     fmt::format("object <{}:{}>", rec->id.creator, rec->id.serial),
                                     type_id));
    std::uint32_t n = 0;
    r.read(&n, sizeof n);
    for (std::uint32_t i = 0; i < n; ++i) {
        std::int32_t origin = 0;
        origin_order o;
        r.read(&origin, sizeof origin);
        r.read(&o.stream, sizeof o.stream);
        r.read(&o.next, sizeof o.next);
        r.read(&o.seen, sizeof o.seen);
        rec->expected[origin] = o;
    }
    r.read(&n, sizeof n);
    for (std::uint32_t i = 0; i < n; ++i) {
        auto e = read_entry(r);
        rec->early.emplace(std::pair(e.header.origin, e.header.seq), std::move(e));
    }
    r.read(&n, sizeof n);
    for (std::uint32_t i = 0; i < n; ++i)
        rec->ready.push_back(read_entry(r));
    rec->object = rec->type->load(r);
    d.record = std::move(rec);
    return d;
}

} // namespace prema::detail
