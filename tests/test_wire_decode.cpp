// The wire decoders without MPI traffic: the fuzzer's seed corpus (fuzz/corpus), every
// truncation of every seed, and hand-made malformed inputs, through the same pure functions
// that the progress engine and the handlers use (see fuzz/wire_targets.hpp). Malformed input
// must give wire_error (or a rejection reason), never a crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "wire_targets.hpp"

namespace {

using namespace prema_fuzz;
using bytes = std::vector<std::uint8_t>;

bytes seed(const std::string& name) {
    for (auto& [n, b] : seed_inputs())
        if (n == name)
            return b;
    FAIL("no seed " << name);
    return {};
}

std::span<const std::byte> body(const bytes& b) {
    return {reinterpret_cast<const std::byte*>(b.data()) + 1, b.size() - 1};
}

std::string header_error(wire_header h, int count, int source) {
    prema::config cfg;
    cfg.max_message_bytes = 1000;
    return check_header(h, count, source, cfg);
}

} // namespace

TEST_CASE("the seed corpus decodes") {
    auto seeds = seed_inputs();
    CHECK(seeds.size() >= std::size_t(target_count));
    // Not a structured binding: CAPTURE captures in a lambda, which clang 14 cannot do for
    // structured bindings.
    for (auto& seed : seeds) {
        auto& b = seed.second;
        CAPTURE(seed.first);
        CHECK(run_wire_input(b.data(), b.size()));
    }
    int files = 0;
    for (auto& f : std::filesystem::directory_iterator(PREMA_FUZZ_CORPUS)) {
        std::ifstream in(f.path(), std::ios::binary);
        bytes b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        CAPTURE(f.path().string());
        // Decoded or refused, never a crash (the corpus may predate a wire format change).
        CHECK_NOTHROW(run_wire_input(b.data(), b.size()));
        ++files;
    }
    CHECK(files == int(seeds.size()));
}

TEST_CASE("every truncation and one-byte corruption of a seed is refused or decoded, never a "
          "crash") {
    for (auto& seed : seed_inputs()) { // not a structured binding: see above
        auto& b = seed.second;
        CAPTURE(seed.first);
        for (std::size_t n = 0; n < b.size(); ++n)
            CHECK_NOTHROW(run_wire_input(b.data(), n));
        for (std::size_t i = 1; i < b.size(); ++i) {
            auto c = b;
            c[i] ^= 0xff;
            CHECK_NOTHROW(run_wire_input(c.data(), c.size()));
        }
    }
}

TEST_CASE("check_header says what is wrong") {
    wire_header good{wire_magic, 0, 1, 0, 5, 2, 0};
    int count = int(sizeof(wire_header)) + 5;
    CHECK(header_error(good, count, 2).empty());
    CHECK(header_error(good, 12, 2) == "truncated header: 12 bytes, a header has 40");
    CHECK(header_error(good, -1, 2).starts_with("truncated header"));
    auto h = good;
    h.magic = 0x1234;
    CHECK(header_error(h, count, 2) == "garbled header: magic 0x1234 is not PREMA's 0x50524d31");
    CHECK(header_error(good, count, 3) == "garbled header: claims to come from rank 2");
    h = good;
    h.payload_bytes = 1001;
    CHECK(header_error(h, count, 2) ==
          "payload of 1001 bytes is above --prema-max-message-bytes=1000");
    CHECK(header_error(good, count + 1, 2) == "garbled header: says 5 payload bytes, carries 6");
    h = good;
    h.flags = flag_split;
    h.payload_tag = 1;
    CHECK(header_error(h, int(sizeof h), 2) == "garbled split-phase header");
    h.payload_tag = wire_first_payload_tag;
    CHECK(header_error(h, int(sizeof h), 2).empty());
    CHECK(header_error(h, count, 2) == "garbled split-phase header");
    // A bulk: split-phase, with the arguments inline; both count against the maximum.
    h.flags = flag_split | flag_bulk;
    h.payload_bytes = 995;
    CHECK(header_error(h, count, 2).empty());
    CHECK(header_error(h, count + 1, 2) ==
          "payload of 1001 bytes is above --prema-max-message-bytes=1000");
    h.payload_bytes = 0;
    CHECK(header_error(h, count, 2) == "garbled header: an empty bulk");
    h.payload_bytes = 995;
    h.flags = flag_bulk;
    CHECK(header_error(h, count, 2) == "garbled header: a bulk is always split-phase");
}

TEST_CASE("malformed arguments give wire_error") {
    // A bool byte other than 0 or 1 (found by the fuzzer: undefined behaviour before the fix).
    auto b = seed("args_ints");
    b.back() = 64;
    CHECK_THROWS_AS((decode_args<int, std::uint8_t, double, std::int64_t, bool>(body(b))),
                    prema::wire_error);
    // Same inside a serialize() member.
    b = seed("args_struct");
    auto s = body(b);
    byte_reader r(s);
    auto p = read_value<point>(r);
    CHECK(p.flag);
    auto flag_at = s.size() - r.remaining() - 1;
    b[1 + flag_at] = 2;
    CHECK_THROWS_WITH_AS((decode_args<point, std::vector<point>, int>(body(b))),
                         "garbled payload: bool of value 2", prema::wire_error);
    // A string claiming 2^60 bytes must not allocate.
    b = {t_args_string};
    std::uint64_t huge = std::uint64_t(1) << 60;
    b.resize(1 + 8);
    std::memcpy(b.data() + 1, &huge, 8);
    CHECK_THROWS_AS((decode_args<std::string, std::string>(body(b))), prema::wire_error);
    // Bytes left over.
    b = seed("args_map");
    b.push_back(0);
    CHECK_THROWS_WITH_AS((decode_args<std::map<int, std::string>>(body(b))),
                         "payload has 1 bytes more than the handler's parameters",
                         prema::wire_error);
}

TEST_CASE("a bulk that does not match its arguments gives wire_error") {
    auto good = seed("args_bulk");
    CHECK(run_wire_input(good.data(), good.size()));
    auto decode = [](bytes b) {
        return decode_args_with_bulk<int, std::vector<double>, std::string>(body(b));
    };
    // The bulk one byte short of the marked count's elements.
    auto b = good;
    b[1] -= 1;
    b.erase(b.begin() + 9);
    CHECK_THROWS_WITH_AS(decode(b),
                         "garbled payload: a vector of 3 elements of 8 bytes in a split-phase "
                         "payload of 23 bytes",
                         prema::wire_error);
    // A marked count without a bulk, and a bulk nobody takes.
    b = {t_args_bulk, 0, 0, 0, 0, 0, 0, 0, 0};
    b.insert(b.end(), good.begin() + 1 + 8 + 24, good.end());
    CHECK_THROWS_AS(decode(b), prema::wire_error);
    b = good;
    std::uint64_t count = 3;
    std::memcpy(b.data() + 1 + 8 + 24 + 4, &count, 8); // unmarked: the elements are missing
    CHECK_THROWS_AS(decode(b), prema::wire_error);
    byte_vector extra(8);
    bulk_buffer bulk;
    bulk.hold(std::move(extra));
    auto plain = seed("args_ints");
    byte_reader r(body(plain), &bulk);
    read_args<int, std::uint8_t, double, std::int64_t, bool>(r);
    CHECK_THROWS_WITH_AS(r.expect_end(), "no parameter takes the split-phase payload of 8 bytes",
                         prema::wire_error);
}

TEST_CASE("malformed migration payloads give wire_error") {
    auto b = seed("install");
    auto d = decode_install(body(b));
    REQUIRE(d.record->object);
    REQUIRE(d.waiters.size() == 1);
    CHECK(d.waiters[0].origin == 0);
    CHECK(d.waiters[0].token == 99);
    CHECK(d.record->ready.size() == 3);
    CHECK(d.record->early.size() == 1);
    CHECK(d.record->ready.back().bulk.size() == 24); // an entry that had a bulk
    CHECK(d.record->history.seconds == 0.02);
    CHECK(d.record->history.ratio == 0.5);
    CHECK(d.record->history.runs == 4);
    auto* obj = static_cast<fuzz_object*>(d.record->object);
    CHECK(obj->names.at(1) == "x");
    d.record->type->destroy(d.record->object);

    auto unknown = b;
    unknown[1 + sizeof(prema::object_id)] ^= 1; // the type id
    CHECK_THROWS_AS(decode_install(body(unknown)), prema::wire_error);

    // More waiters than the payload could hold (after id, type, moves).
    const std::size_t waiters_at = 1 + 16 + 8 + 8;
    auto many = b;
    std::uint32_t waiters = 1u << 30;
    std::memcpy(many.data() + waiters_at, &waiters, 4);
    CHECK_THROWS_WITH_AS(decode_install(body(many)), doctest::Contains("waiters"),
                         prema::wire_error);

    // A measured load that no rank could have measured (after the one waiter's origin, token).
    const std::size_t history_at = waiters_at + 4 + 4 + 8;
    for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity()}) {
        CAPTURE(bad);
        auto garbled = b;
        std::memcpy(garbled.data() + history_at, &bad, 8);
        CHECK_THROWS_WITH_AS(decode_install(body(garbled)), doctest::Contains("measured load"),
                             prema::wire_error);
        garbled = b;
        std::memcpy(garbled.data() + history_at + 8, &bad, 8);
        CHECK_THROWS_WITH_AS(decode_install(body(garbled)), doctest::Contains("measured load"),
                             prema::wire_error);
    }

    // The first early entry's payload length: id, type, moves, waiters, measured load (seconds,
    // ratio, runs), two expected.
    std::size_t at =
        history_at + 8 + 8 + 4 + 4 + 2 * 28 + 4 + sizeof(prema::detail::object_header) + 8;
    auto longer = b;
    std::uint64_t n = std::uint64_t(1) << 62;
    std::memcpy(longer.data() + at, &n, 8);
    CHECK_THROWS_WITH_AS(decode_install(body(longer)),
                         doctest::Contains("migration payload: entry of"), prema::wire_error);
}

TEST_CASE("a migrate entry's arguments: a rank, then whole (origin, token) pairs") {
    using prema::detail::append_move_waiter;
    using prema::detail::decode_move;
    byte_vector args(4);
    std::int32_t dest = 3;
    std::memcpy(args.data(), &dest, 4);
    auto m = decode_move(args);
    REQUIRE(m);
    CHECK(m->dest == 3);
    CHECK(m->merged.empty());
    append_move_waiter(args, {2, 77});
    append_move_waiter(args, {5, 0});
    m = decode_move(args);
    REQUIRE(m);
    REQUIRE(m->merged.size() == 2);
    CHECK(m->merged[0].origin == 2);
    CHECK(m->merged[0].token == 77);
    CHECK(m->merged[1].origin == 5);
    args.pop_back(); // a torn pair
    CHECK_FALSE(decode_move(args));
    CHECK_FALSE(decode_move(std::span<const std::byte>(args.data(), 3)));
}

TEST_CASE("malformed relays, replies and object messages give wire_error") {
    auto b = seed("relay");
    auto p = decode_relay(body(b), fuzz_ranks);
    CHECK(p.root == 2);
    CHECK(p.inner == 77);
    CHECK_THROWS_WITH_AS(decode_relay(body(b), 2), "broadcast relay names root rank 2",
                         prema::wire_error);

    b = seed("reply_error");
    b.pop_back();
    CHECK_FALSE(run_wire_input(b.data(), b.size()));
    b = seed("reply_error");
    CHECK(run_wire_input(b.data(), b.size()));

    bytes m = {t_object_message, 1, 2, 3};
    CHECK_THROWS_AS(decode_object_message(body(m), 0), prema::wire_error);
}

namespace {

// A batch's payload: the prefix, then each item and its payload padded to 8 bytes.
struct batch_builder {
    std::vector<std::byte> b;
    explicit batch_builder(std::uint32_t count) {
        batch_prefix p{count, 0};
        put(&p, sizeof p);
    }
    void put(const void* p, std::size_t n) {
        b.resize(b.size() + n);
        std::memcpy(b.data() + b.size() - n, p, n);
    }
    void item(std::uint64_t token, std::uint32_t bytes, std::uint32_t more) {
        batch_item i{9, token, bytes, more};
        put(&i, sizeof i);
        b.resize(b.size() + batch_padded(bytes));
    }
    std::string check(std::uint32_t& count) const { return check_batch(b, count); }
};

} // namespace

TEST_CASE("check_batch counts a run's messages and refuses runs that do not add up") {
    std::uint32_t count = 0;
    batch_builder ok(5);
    ok.item(0, 12, 0);
    ok.item(0, 40, 3); // a run: 4 messages
    CHECK(ok.check(count).empty());
    CHECK(count == 5);

    batch_builder fewer(4); // the prefix counts the items, not the run's messages
    fewer.item(0, 12, 0);
    fewer.item(0, 40, 3);
    CHECK(fewer.check(count) == "garbled batch: more than the 4 messages its prefix says");
    CHECK(count == 0);

    batch_builder more(9);
    more.item(0, 12, 0);
    more.item(0, 40, 3);
    CHECK(more.check(count) == "truncated batch: it ends after 5 of its 9 messages");

    batch_builder token(4);
    token.item(77, 40, 3);
    CHECK(token.check(count) == "garbled batch: item 0 is a run of 4 messages with a token");

    batch_builder huge(2);
    huge.item(0, 8, 0xffffffffu);
    huge.item(0, 8, 0);
    CHECK(huge.check(count) == "garbled batch: more than the 2 messages its prefix says");
}

TEST_CASE("an object run decodes into numbered messages, and a garbled one gives wire_error") {
    auto b = seed("object_run");
    auto run_bytes = body(b).subspan(1);
    object_run_reader run(run_bytes, 3);
    object_header h;
    std::span<const std::byte> args;
    std::vector<std::uint64_t> seqs, handlers;
    std::vector<std::size_t> sizes;
    while (run.next(h, args)) {
        seqs.push_back(h.seq);
        handlers.push_back(h.handler);
        sizes.push_back(args.size());
        CHECK(h.id == prema::object_id{1, 0, 4});
    }
    CHECK(seqs == std::vector<std::uint64_t>{10, 11, 12});
    CHECK(handlers == std::vector<std::uint64_t>{55, 56, 57});
    CHECK(sizes == std::vector<std::size_t>{sizeof(double), sizeof(int), 0});

    CHECK_THROWS_WITH_AS(object_run_reader(run_bytes, 4),
                         "object run: message 3 of 4 starts past the end", prema::wire_error);
    CHECK_THROWS_WITH_AS(object_run_reader(run_bytes, 2),
                         "object run: 20 bytes after its 2 messages", prema::wire_error);
    CHECK_THROWS_WITH_AS(object_run_reader(run_bytes.first(100), 3),
                         "object run: message 1 of 3 says 4 bytes, 4 left", prema::wire_error);
    CHECK_THROWS_AS(object_run_reader(run_bytes.first(20), 3), prema::wire_error);
    std::vector<std::byte> forwarded(run_bytes.begin(), run_bytes.end());
    std::uint16_t hops = 1;
    std::memcpy(forwarded.data() + offsetof(object_header, hops), &hops, sizeof hops);
    CHECK_THROWS_WITH_AS(object_run_reader(forwarded, 3),
                         "object run: its header is not a first-hand user message",
                         prema::wire_error);
}
