// The wire decoders as fuzz targets, shared by the libFuzzer harness (wire_fuzz.cpp), the seed
// corpus generator (make_corpus.cpp) and the unit test (tests/test_wire_decode.cpp). Nothing
// here needs MPI or a running runtime.
//
// An input is one selector byte (modulo target_count) followed by the bytes of that target.
// run_wire_input() returns true when the decoder accepted the bytes and false when it refused
// them with wire_error; any other exception, crash or sanitizer report is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <prema/prema.hpp>

#include "objects/wire_decode.hpp"
#include "prema/transport/call.hpp"
#include "transport/wire_check.hpp"

namespace prema_fuzz {

using namespace prema::detail;

// A user type with a serialize() member, as handlers take them.
struct point {
    int x = 0;
    std::string label;
    std::vector<std::int64_t> values;
    bool flag = false;
    template <class Ar> void serialize(Ar& ar) { ar(x, label, values, flag); }
};

// A registered mobile object type for the migration payload.
struct fuzz_object {
    std::vector<double> data;
    std::map<int, std::string> names;
    template <class Ar> void serialize(Ar& ar) { ar(data, names); }
};

inline const prema::detail::object_type& fuzz_object_type() {
    return object_type_of<fuzz_object>::value;
}

enum target : std::uint8_t {
    t_header,
    t_args_ints,
    t_args_string,
    t_args_vector,
    t_args_map,
    t_args_struct,
    t_install,
    t_relay,
    t_reply,
    t_object_message,
    t_args_bulk,
    t_object_run,
    target_count
};

inline constexpr int fuzz_ranks = 4;

// The arguments of a handler: read_args and the "no bytes left over" check of invoke().
template <class... P> bool decode_args(std::span<const std::byte> bytes) {
    byte_reader r(bytes);
    auto args = read_args<P...>(r);
    (void)args;
    if (r.remaining() != 0)
        throw prema::wire_error("payload has " + std::to_string(r.remaining()) +
                                " bytes more than the handler's parameters");
    return true;
}

// [u64 n][a bulk of n bytes][the arguments]: what a bulk message's handler reads.
template <class... P> bool decode_args_with_bulk(std::span<const std::byte> d) {
    byte_reader split(d);
    std::uint64_t n = 0;
    split.read(&n, sizeof n);
    if (n > split.remaining())
        return false;
    byte_vector bytes(split.rest().begin(), split.rest().begin() + std::ptrdiff_t(n));
    bulk_buffer bulk;
    bulk.hold(std::move(bytes));
    byte_reader r(split.rest().subspan(n), &bulk);
    auto args = read_args<P...>(r);
    (void)args;
    r.expect_end();
    return true;
}

inline bool run_target(target t, std::span<const std::byte> d) {
    switch (t) {
    case t_header: {
        // [source rank byte][received bytes: the header, then inline payload]
        if (d.empty())
            return false;
        int source = int(std::uint8_t(d[0])) % fuzz_ranks;
        auto wire = d.subspan(1);
        wire_header h{};
        std::memcpy(&h, wire.data(), std::min(wire.size(), sizeof h));
        prema::config cfg;
        cfg.max_message_bytes = 1 << 20;
        auto why = check_header(h, int(wire.size()), source, cfg);
        if (!why.empty())
            return false;
        // What the progress engine relies on once a header passes.
        std::size_t inline_bytes = wire.size() - sizeof h;
        if (h.payload_bytes + ((h.flags & flag_bulk) ? inline_bytes : 0) > cfg.max_message_bytes)
            std::abort();
        if (!(h.flags & flag_split) && h.payload_bytes != inline_bytes)
            std::abort();
        if ((h.flags & flag_split) &&
            ((!(h.flags & flag_bulk) && inline_bytes != 0) || h.payload_tag < 2))
            std::abort();
        if ((h.flags & flag_bulk) && (!(h.flags & flag_split) || h.payload_bytes == 0))
            std::abort();
        return true;
    }
    case t_args_ints:
        return decode_args<int, std::uint8_t, double, std::int64_t, bool>(d);
    case t_args_string:
        return decode_args<std::string, std::string>(d);
    case t_args_vector:
        return decode_args<std::vector<double>, std::vector<std::string>>(d);
    case t_args_map:
        return decode_args<std::map<int, std::string>>(d);
    case t_args_struct:
        return decode_args<point, std::vector<point>, int>(d);
    case t_install: {
        auto in = decode_install(d);
        auto& rec = *in.record;
        if (rec.type != &fuzz_object_type() || !rec.object)
            std::abort();
        rec.type->destroy(rec.object);
        return true;
    }
    case t_relay: {
        auto p = decode_relay(d, fuzz_ranks);
        if (p.root < 0 || p.root >= fuzz_ranks || p.body.size() + 12 != d.size())
            std::abort();
        return true;
    }
    case t_reply: {
        byte_reader r(d);
        std::exception_ptr error;
        std::optional<std::map<int, std::string>> value;
        read_reply<std::map<int, std::string>>(1, r, error, value);
        if (bool(error) == value.has_value())
            std::abort();
        return true;
    }
    case t_object_message: {
        auto e = decode_object_message(d, 7);
        if (e.token != 7 || e.payload.size() + sizeof(prema::detail::object_header) != d.size())
            std::abort();
        return true;
    }
    case t_args_bulk:
        return decode_args_with_bulk<int, std::vector<double>, std::string>(d);
    case t_object_run: {
        // [messages - 1][the run]
        if (d.empty())
            return false;
        const std::uint32_t count = std::uint32_t(std::uint8_t(d[0])) + 1;
        auto payload = d.subspan(1);
        prema::detail::object_run_reader run(payload, count);
        prema::detail::object_header first, h;
        std::span<const std::byte> args;
        std::memcpy(&first, payload.data(), sizeof first);
        for (std::uint64_t i = 0; run.next(h, args); ++i)
            if (h.seq != first.seq + i || h.id != first.id || args.data() < payload.data() ||
                args.data() + args.size() > payload.data() + payload.size())
                std::abort();
        return true;
    }
    default:
        return false;
    }
}

inline bool run_wire_input(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return false;
    auto t = target(data[0] % target_count);
    std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
    try {
        return run_target(t, rest);
    } catch (const prema::wire_error&) {
        return false;
    }
}

// Valid encodings of every target, named for the corpus files.
inline std::vector<std::pair<std::string, std::vector<std::uint8_t>>> seed_inputs() {
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> seeds;
    auto add = [&](std::string name, target t, auto&& fill) {
        byte_writer w(nullptr, 0);
        std::uint8_t sel = t;
        w.write(&sel, 1);
        fill(w);
        auto& h = w.heap();
        auto* b = reinterpret_cast<const std::uint8_t*>(h.data());
        seeds.emplace_back(std::move(name), std::vector<std::uint8_t>(b, b + w.size()));
    };
    auto header = [](std::uint32_t flags, std::uint64_t payload, std::int32_t source,
                     std::int32_t tag) {
        return wire_header{wire_magic, flags, 42, 0, payload, source, tag};
    };
    add("header_inline", t_header, [&](byte_writer& w) {
        std::uint8_t src = 1;
        w.write(&src, 1);
        auto h = header(0, 5, 1, 0);
        w.write(&h, sizeof h);
        w.write("hello", 5);
    });
    add("header_split", t_header, [&](byte_writer& w) {
        std::uint8_t src = 2;
        w.write(&src, 1);
        auto h = header(flag_split, 100000, 2, 7);
        w.write(&h, sizeof h);
    });
    add("header_bulk", t_header, [&](byte_writer& w) {
        std::uint8_t src = 3;
        w.write(&src, 1);
        auto h = header(flag_split | flag_bulk, 65536, 3, 9);
        w.write(&h, sizeof h);
        write_args<int>(w, 12); // the arguments beside the bulk
    });
    add("args_ints", t_args_ints, [](byte_writer& w) {
        write_args<int, std::uint8_t, double, std::int64_t, bool>(w, -3, std::uint8_t(9), 2.5,
                                                                  std::int64_t(1) << 40, true);
    });
    add("args_string", t_args_string, [](byte_writer& w) {
        write_args<std::string, std::string>(w, std::string("prema"), std::string());
    });
    add("args_vector", t_args_vector, [](byte_writer& w) {
        write_args<std::vector<double>, std::vector<std::string>>(
            w, std::vector<double>{1, 2, 3}, std::vector<std::string>{"a", "bc"});
    });
    add("args_map", t_args_map, [](byte_writer& w) {
        write_args<std::map<int, std::string>>(w,
                                               std::map<int, std::string>{{1, "one"}, {2, "two"}});
    });
    add("args_struct", t_args_struct, [](byte_writer& w) {
        point p{5, "p", {1, -1}, true};
        write_args<point, std::vector<point>, int>(w, p, std::vector<point>{p, point{}}, 11);
    });
    add("install", t_install, [](byte_writer& w) {
        prema::object_id id{1, 0, 17};
        std::uint64_t type = fuzz_object_type().id, moves = 3, token = 99;
        std::int32_t reply_to = 0;
        std::uint32_t waiters = 1;
        w.write(&id, sizeof id);
        w.write(&type, sizeof type);
        w.write(&moves, sizeof moves);
        w.write(&waiters, sizeof waiters);
        w.write(&reply_to, sizeof reply_to);
        w.write(&token, sizeof token);
        double seconds = 0.02, ratio = 0.5; // measured load: 20 ms per handler, 40 ms declared
        std::uint32_t runs = 4;
        w.write(&seconds, sizeof seconds);
        w.write(&ratio, sizeof ratio);
        w.write(&runs, sizeof runs);
        std::uint32_t n = 2;
        w.write(&n, sizeof n);
        for (std::int32_t origin = 0; origin < 2; ++origin) {
            std::uint64_t stream = 0, seq = 5 + std::uint64_t(origin), seen = 1;
            w.write(&origin, sizeof origin);
            w.write(&stream, sizeof stream);
            w.write(&seq, sizeof seq);
            w.write(&seen, sizeof seen);
        }
        auto bytes = [&](std::uint64_t len) {
            for (std::uint64_t i = 0; i < len; ++i) {
                std::uint8_t b = std::uint8_t(i);
                w.write(&b, 1);
            }
        };
        auto entry = [&](std::uint64_t seq, std::uint64_t len, std::uint64_t bulk = 0) {
            prema::detail::object_header oh{};
            oh.id = id;
            oh.seq = seq;
            oh.handler = 1234;
            oh.origin = 1;
            std::uint64_t tok = 0, n = len | (bulk ? bulk_bit : 0);
            w.write(&oh, sizeof oh);
            w.write(&tok, sizeof tok);
            w.write(&n, sizeof n);
            bytes(len);
            if (bulk) {
                w.write(&bulk, sizeof bulk);
                bytes(bulk);
            }
        };
        n = 1;
        w.write(&n, sizeof n);
        entry(9, 3);
        n = 3;
        w.write(&n, sizeof n);
        entry(5, 0);
        entry(6, 8);
        entry(7, 8, 24);
        fuzz_object obj{{1.5, 2.5}, {{1, "x"}}};
        fuzz_object_type().save(&obj, w);
    });
    add("relay", t_relay, [](byte_writer& w) {
        std::int32_t root = 2;
        std::uint64_t inner = 77;
        w.write(&root, sizeof root);
        w.write(&inner, sizeof inner);
        write_args<int, std::string>(w, 1, std::string("body"));
    });
    add("reply_value", t_reply, [](byte_writer& w) {
        std::uint8_t ok = 0;
        w.write(&ok, 1);
        write_value(w, std::map<int, std::string>{{3, "three"}});
    });
    add("reply_error", t_reply, [](byte_writer& w) {
        std::uint8_t failed = 1;
        w.write(&failed, 1);
        write_value(w, std::string("handler"));
        write_value(w, std::string("std::runtime_error"));
        write_value(w, std::string("boom"));
    });
    add("args_bulk", t_args_bulk, [](byte_writer& w) {
        std::vector<double> v{0.5, 1.5, 2.5};
        std::uint64_t n = v.size() * sizeof(double);
        w.write(&n, sizeof n);
        w.write(v.data(), n);
        int i = 7;
        w.write(&i, sizeof i);
        w.write_bulk_count(v.size());
        write_value(w, std::string("after"));
    });
    add("object_message", t_object_message, [](byte_writer& w) {
        prema::detail::object_header oh{};
        oh.id = prema::object_id{0, 0, 3};
        oh.handler = 55;
        w.write(&oh, sizeof oh);
        write_args<double>(w, 4.0);
    });
    // Three messages: a double, an int (padded), nothing.
    add("object_run", t_object_run, [](byte_writer& w) {
        std::uint8_t more = 2;
        w.write(&more, 1);
        prema::detail::object_header oh{};
        oh.id = prema::object_id{1, 0, 4};
        oh.seq = 10;
        w.write(&oh, sizeof oh);
        prema::detail::object_run_entry e{55, sizeof(double), 0};
        w.write(&e, sizeof e);
        write_args<double>(w, 4.0);
        e = {56, sizeof(int), 0};
        w.write(&e, sizeof e);
        write_args<int>(w, 9);
        const std::uint32_t pad = 0;
        w.write(&pad, sizeof pad);
        e = {57, 0, 0};
        w.write(&e, sizeof e);
    });
    return seeds;
}

} // namespace prema_fuzz
