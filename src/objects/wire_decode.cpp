// The object layer's wire decoders (see wire_decode.hpp). No MPI, no runtime state: the
// fuzzer and the unit tests call them directly.
#include "objects/wire_decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

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

move_waiter read_waiter(byte_reader& r) {
    move_waiter w;
    r.read(&w.origin, sizeof w.origin);
    r.read(&w.token, sizeof w.token);
    return w;
}

} // namespace

std::optional<move_request> decode_move(std::span<const std::byte> args) {
    move_request m;
    if (args.size() < sizeof m.dest || (args.size() - sizeof m.dest) % move_waiter_bytes != 0)
        return std::nullopt;
    byte_reader r(args);
    r.read(&m.dest, sizeof m.dest);
    m.merged.resize(r.remaining() / move_waiter_bytes);
    for (auto& w : m.merged)
        w = read_waiter(r);
    return m;
}

void append_move_waiter(byte_vector& args, const move_waiter& w) {
    auto at = args.size();
    args.resize(at + move_waiter_bytes);
    std::memcpy(args.data() + at, &w.origin, sizeof w.origin);
    std::memcpy(args.data() + at + sizeof w.origin, &w.token, sizeof w.token);
}

object_message_view view_object_message(std::span<const std::byte> payload) {
    byte_reader r(payload);
    object_message_view v;
    r.read(&v.header, sizeof v.header);
    v.args = r.rest();
    return v;
}

object_run_reader::object_run_reader(std::span<const std::byte> payload, std::uint32_t count)
    : left_(count) {
    if (payload.size() < sizeof first_)
        throw wire_error(
            fmt::format("object run: {} bytes, shorter than its header", payload.size()));
    std::memcpy(&first_, payload.data(), sizeof first_);
    if (first_.op != object_op::user || first_.hops != 0)
        throw wire_error("object run: its header is not a first-hand user message");
    rest_ = payload.subspan(sizeof first_);
    // Every entry checked before any message runs, as a batch is.
    auto entries = rest_;
    for (std::uint32_t i = 0; i < count; ++i) {
        object_run_entry e;
        if (entries.size() < sizeof e)
            throw wire_error(
                fmt::format("object run: message {} of {} starts past the end", i, count));
        std::memcpy(&e, entries.data(), sizeof e);
        entries = entries.subspan(sizeof e);
        const std::size_t padded = i + 1 < count ? batch_padded(e.bytes) : e.bytes;
        if (padded > entries.size())
            throw wire_error(fmt::format("object run: message {} of {} says {} bytes, {} left", i,
                                         count, e.bytes, entries.size()));
        entries = entries.subspan(padded);
    }
    if (!entries.empty())
        throw wire_error(
            fmt::format("object run: {} bytes after its {} messages", entries.size(), count));
}

bool object_run_reader::next(object_header& h, std::span<const std::byte>& args) noexcept {
    if (left_ == 0)
        return false;
    object_run_entry e;
    std::memcpy(&e, rest_.data(), sizeof e);
    h = first_;
    h.seq += read_;
    h.handler = e.handler;
    args = rest_.subspan(sizeof e, e.bytes);
    rest_ = rest_.subspan(std::min(rest_.size(), sizeof e + batch_padded(e.bytes)));
    ++read_;
    --left_;
    return true;
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
    std::uint32_t waiters = 0;
    r.read(&waiters, sizeof waiters);
    if (waiters > r.remaining() / move_waiter_bytes)
        throw wire_error(fmt::format("migration of object <{}:{}> names {} waiters, more than "
                                     "its payload holds",
                                     rec->id.creator, rec->id.serial, waiters));
    d.waiters.resize(waiters);
    for (auto& w : d.waiters)
        w = read_waiter(r);
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
