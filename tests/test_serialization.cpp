// Handler-argument encoding: write_args / read_args round trips through byte_writer /
// byte_reader, inline vs spilled buffers, and rejection of truncated or garbled payloads.
#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <prema/detail/transport/copy_bytes.hpp>
#include <prema/error.hpp>
#include <prema/transport/serialization.hpp>

// ---- allocation tracking: the largest single allocation while `tracking` is on ------------------
// The replacement operator new/delete below pair malloc with free; GCC cannot see that the
// replaced operator delete matches the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<bool> tracking{false};
std::atomic<std::size_t> largest_allocation{0};
} // namespace

void* operator new(std::size_t n) {
    if (tracking.load(std::memory_order_relaxed)) {
        std::size_t cur = largest_allocation.load(std::memory_order_relaxed);
        while (n > cur && !largest_allocation.compare_exchange_weak(cur, n)) {
        }
    }
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}

namespace {

using prema::detail::byte_reader;
using prema::detail::byte_writer;
using prema::detail::read_args;
using prema::detail::write_args;

struct pod {
    int a;
    double b;
    char c[3];
    bool operator==(const pod&) const = default;
};

struct record {
    std::string name;
    std::vector<int> values;
    std::map<std::string, double> attrs;
    template <class Ar> void serialize(Ar& ar) { ar(name, values, attrs); }
    bool operator==(const record&) const = default;
};

struct nested {
    record r;
    std::vector<record> many;
    std::uint16_t tag = 0;
    template <class Ar> void serialize(Ar& ar) { ar(r, many, tag); }
    bool operator==(const nested&) const = default;
};

// A mobile object's typical state: a vector of plain structs, which have no serialize().
struct cells {
    std::vector<pod> parts;
    std::uint32_t step = 0;
    template <class Ar> void serialize(Ar& ar) { ar(parts, step); }
    bool operator==(const cells&) const = default;
};

// Encodes `args` as `Params...` into a buffer with `capacity` inline bytes; returns the bytes.
template <class... Params, class... Args>
std::vector<std::byte> encode(std::size_t capacity, bool* spilled, Args&&... args) {
    std::vector<std::byte> inline_area(capacity);
    byte_writer w(inline_area.data(), capacity);
    write_args<Params...>(w, std::forward<Args>(args)...);
    if (spilled)
        *spilled = w.spilled();
    if (w.spilled()) {
        CHECK(w.heap().size() == w.size());
        return std::vector<std::byte>(w.heap().begin(), w.heap().end());
    }
    return std::vector<std::byte>(inline_area.begin(), inline_area.begin() + w.size());
}

// Round trip with a large inline area, checks the reader consumed every byte.
template <class... Params> std::tuple<Params...> round_trip(const Params&... args) {
    auto bytes = encode<Params...>(1 << 16, nullptr, args...);
    byte_reader r{std::span<const std::byte>(bytes)};
    auto out = read_args<Params...>(r);
    CHECK(r.remaining() == 0);
    return out;
}

// Every strict prefix of `bytes` must fail to decode as `Params...` with wire_error.
template <class... Params> void check_every_prefix_throws(const std::vector<std::byte>& bytes) {
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        CAPTURE(n);
        byte_reader r{std::span<const std::byte>(bytes.data(), n)};
        CHECK_THROWS_AS(read_args<Params...>(r), prema::wire_error);
    }
}

record sample_record() {
    return record{"sample", {1, -2, 3, 1 << 30}, {{"alpha", 0.5}, {"beta", -1e300}, {"", 0.0}}};
}

} // namespace

// ---- compile-time -------------------------------------------------------------------------------

static_assert(!prema::detail::is_sendable<int*>);
static_assert(!prema::detail::is_sendable<const char*>);
static_assert(prema::detail::is_sendable<std::string>);
static_assert(prema::detail::is_sendable<int>);
static_assert(prema::detail::is_sendable<pod>);
static_assert(prema::detail::is_sendable<record>);
static_assert(prema::detail::is_sendable<std::vector<std::string>>);
static_assert(prema::detail::is_sendable<std::map<int, std::vector<double>>>);
static_assert(prema::detail::is_bitwise<pod>);
static_assert(!prema::detail::is_bitwise<std::string>);

TEST_SUITE("serialization") {

    TEST_CASE("round trip: arithmetic values and trivially copyable structs") {
        auto [i, d, c, u, b] = round_trip<int, double, char, std::uint64_t, bool>(
            -123456, 3.25, 'z', std::uint64_t(0xdeadbeefcafef00dULL), true);
        CHECK(i == -123456);
        CHECK(d == 3.25);
        CHECK(c == 'z');
        CHECK(u == 0xdeadbeefcafef00dULL);
        CHECK(b);

        pod p{7, -0.125, {'a', 'b', 'c'}};
        auto [q] = round_trip<pod>(p);
        CHECK(q == p);

        // Bitwise values take exactly their size.
        auto bytes = encode<int, pod>(256, nullptr, 1, p);
        CHECK(bytes.size() == sizeof(int) + sizeof(pod));
    }

    TEST_CASE("round trip: converting arguments to the handler's parameter types") {
        auto bytes = encode<double, std::string, long>(256, nullptr, 3, "text", short(-5));
        byte_reader r{std::span<const std::byte>(bytes)};
        auto [d, s, l] = read_args<double, std::string, long>(r);
        CHECK(d == 3.0);
        CHECK(s == "text");
        CHECK(l == -5);
    }

    TEST_CASE("round trip: strings, vectors, maps") {
        std::string empty, text = "hello, world", big(100000, 'q');
        big[500] = '\0'; // embedded NUL survives
        auto [e, t, g] = round_trip<std::string, std::string, std::string>(empty, text, big);
        CHECK(e.empty());
        CHECK(t == text);
        CHECK(g == big);

        std::vector<double> vd{1.5, -2.5, 1e-300, 0.0};
        std::vector<std::string> vs{"a", "", "ccc", std::string(3000, 'x')};
        std::map<std::string, int> m{{"one", 1}, {"two", 2}, {"three", 3}};
        std::map<int, std::vector<double>> mv{{1, {1.0}}, {-7, {}}, {9, {2.0, 3.0}}};
        auto [vd2, vs2, m2, mv2, ev] =
            round_trip<std::vector<double>, std::vector<std::string>, std::map<std::string, int>,
                       std::map<int, std::vector<double>>, std::vector<int>>(vd, vs, m, mv, {});
        CHECK(vd2 == vd);
        CHECK(vs2 == vs);
        CHECK(m2 == m);
        CHECK(mv2 == mv);
        CHECK(ev.empty());
    }

    TEST_CASE("round trip: user types with a serialize member") {
        auto rec = sample_record();
        nested n{rec, {rec, record{}, record{"x", {}, {}}}, 0xbeef};
        auto [r2, n2, tail] = round_trip<record, nested, int>(rec, n, 99);
        CHECK(r2 == rec);
        CHECK(n2 == n);
        CHECK(tail == 99);
    }

    TEST_CASE("a serialized type's vector of plain structs travels as one copy of its bytes") {
        cells c{{pod{1, 2.5, {'a', 'b', 'c'}}, pod{-3, 0.25, {'x', 'y', 'z'}}}, 7};
        auto bytes = encode<cells>(1 << 16, nullptr, c);
        // A count, the elements' bytes as they are in memory (padding too), then the step.
        REQUIRE(bytes.size() == sizeof(std::uint64_t) + 2 * sizeof(pod) + sizeof(std::uint32_t));
        CHECK(std::memcmp(bytes.data() + sizeof(std::uint64_t), c.parts.data(), 2 * sizeof(pod)) ==
              0);
        auto [back] = round_trip<cells>(c);
        CHECK(back == c);
        SUBCASE("a garbled count throws wire_error without allocating") {
            std::uint64_t garbled = std::uint64_t{1} << 40;
            std::memcpy(bytes.data(), &garbled, sizeof garbled);
            byte_reader r{std::span<const std::byte>(bytes)};
            largest_allocation = 0;
            tracking = true;
            CHECK_THROWS_AS(read_args<cells>(r), prema::wire_error);
            tracking = false;
            CHECK(largest_allocation.load() < 4096);
        }
    }

    TEST_CASE("byte_writer: stays inline up to capacity, spills beyond with identical content") {
        SUBCASE("exact fit does not spill; one more byte does") {
            std::byte area[8];
            byte_writer w(area, sizeof area);
            std::uint64_t v = 0x0102030405060708ULL;
            w.write(&v, sizeof v);
            CHECK_FALSE(w.spilled());
            CHECK(w.size() == 8);
            CHECK(std::memcmp(area, &v, 8) == 0);
            w.write(nullptr, 0);
            CHECK_FALSE(w.spilled());
            std::uint8_t extra = 0xAB;
            w.write(&extra, 1);
            CHECK(w.spilled());
            CHECK(w.size() == 9);
            REQUIRE(w.heap().size() == 9);
            CHECK(std::memcmp(w.heap().data(), &v, 8) == 0);
            CHECK(w.heap()[8] == std::byte{0xAB});
            // Once spilled, small writes keep going to the heap.
            w.write(&extra, 1);
            CHECK(w.heap().size() == 10);
            CHECK(w.size() == 10);
        }
        SUBCASE("zero capacity spills on the first byte") {
            byte_writer w(nullptr, 0);
            w.write(nullptr, 0);
            CHECK_FALSE(w.spilled());
            int x = 5;
            w.write(&x, sizeof x);
            CHECK(w.spilled());
            CHECK(w.heap().size() == sizeof x);
        }
        SUBCASE("encoded payloads are identical inline and spilled") {
            auto rec = sample_record();
            std::vector<double> vd(1000);
            for (std::size_t i = 0; i < vd.size(); ++i)
                vd[i] = double(i) * 0.5;
            bool spilled_big = true, spilled_small = false;
            auto inline_bytes =
                encode<int, record, std::vector<double>>(1 << 16, &spilled_big, 42, rec, vd);
            auto spilled_bytes =
                encode<int, record, std::vector<double>>(64, &spilled_small, 42, rec, vd);
            CHECK_FALSE(spilled_big);
            CHECK(spilled_small);
            CHECK(inline_bytes == spilled_bytes);
            byte_reader r{std::span<const std::byte>(spilled_bytes)};
            auto [i, rec2, vd2] = read_args<int, record, std::vector<double>>(r);
            CHECK(i == 42);
            CHECK(rec2 == rec);
            CHECK(vd2 == vd);
        }
    }

    TEST_CASE("byte_reader refuses to read past the end") {
        std::byte data[4]{};
        byte_reader r{std::span<const std::byte>(data, 4)};
        std::uint16_t h;
        r.read(&h, 2);
        CHECK(r.remaining() == 2);
        std::uint32_t w;
        CHECK_THROWS_AS(r.read(&w, 4), prema::wire_error);
        r.read(&h, 2);
        CHECK(r.remaining() == 0);
        CHECK_THROWS_AS(r.read(&h, 1), prema::wire_error);
        r.read(nullptr, 0);
    }

    TEST_CASE("a truncated payload throws wire_error, whatever the cut") {
        SUBCASE("bitwise") {
            check_every_prefix_throws<int, double>(encode<int, double>(64, nullptr, 1, 2.0));
        }
        SUBCASE("string") {
            check_every_prefix_throws<std::string>(
                encode<std::string>(64, nullptr, std::string("truncate me")));
        }
        SUBCASE("vector<double>") {
            check_every_prefix_throws<std::vector<double>>(
                encode<std::vector<double>>(64, nullptr, std::vector<double>{1, 2, 3, 4}));
        }
        SUBCASE("vector<string> and map") {
            check_every_prefix_throws<std::vector<std::string>, std::map<std::string, int>>(
                encode<std::vector<std::string>, std::map<std::string, int>>(
                    64, nullptr, std::vector<std::string>{"ab", "", "cde"},
                    std::map<std::string, int>{{"k", 1}, {"l", 2}}));
        }
        SUBCASE("user struct") {
            check_every_prefix_throws<record>(encode<record>(64, nullptr, sample_record()));
        }
    }

    TEST_CASE("a garbled container length throws wire_error without allocating") {
        auto bytes = encode<std::vector<double>>(256, nullptr, std::vector<double>{1.0, 2.0, 3.0});
        // cereal writes the element count first, as a 64-bit size tag.
        REQUIRE(bytes.size() == sizeof(std::uint64_t) + 3 * sizeof(double));
        for (std::uint64_t garbled :
             {~std::uint64_t{0}, std::uint64_t{1} << 62, std::uint64_t{1} << 40,
              std::uint64_t{64} << 20, std::uint64_t{4}}) {
            CAPTURE(garbled);
            std::memcpy(bytes.data(), &garbled, sizeof garbled);
            byte_reader r{std::span<const std::byte>(bytes)};
            largest_allocation = 0;
            tracking = true;
            CHECK_THROWS_AS(read_args<std::vector<double>>(r), prema::wire_error);
            tracking = false;
            CHECK(largest_allocation.load() < 4096);
        }
        SUBCASE("string length") {
            auto sb = encode<std::string>(256, nullptr, std::string("abc"));
            std::uint64_t garbled = std::uint64_t{1} << 33;
            std::memcpy(sb.data(), &garbled, sizeof garbled);
            byte_reader r{std::span<const std::byte>(sb)};
            largest_allocation = 0;
            tracking = true;
            CHECK_THROWS_AS(read_args<std::string>(r), prema::wire_error);
            tracking = false;
            CHECK(largest_allocation.load() < 4096);
        }
        SUBCASE("element count of a vector of strings") {
            auto vb =
                encode<std::vector<std::string>>(256, nullptr, std::vector<std::string>{"a", "b"});
            std::uint64_t garbled = std::uint64_t{1} << 28;
            std::memcpy(vb.data(), &garbled, sizeof garbled);
            byte_reader r{std::span<const std::byte>(vb)};
            largest_allocation = 0;
            tracking = true;
            CHECK_THROWS_AS(read_args<std::vector<std::string>>(r), prema::wire_error);
            tracking = false;
            CHECK(largest_allocation.load() < 4096);
        }
    }

    // post_new's writer grows into bigger message buffers (grow_message) instead of spilling to the
    // heap, so that a payload is copied once on its way; a grower that declines leaves the spill.
    TEST_CASE("a writer with a grower moves its bytes to bigger areas instead of spilling") {
        struct areas {
            std::vector<std::vector<std::byte>> made;
            std::size_t limit = 0; // the grower declines needs above it
            static std::byte* grow(void* context, std::size_t need, std::size_t kept,
                                   std::size_t& capacity) {
                auto& self = *static_cast<areas*>(context);
                if (need > self.limit)
                    return nullptr;
                auto& last = self.made.back();
                std::vector<std::byte> bigger(std::max(need, 2 * last.size()));
                std::memcpy(bigger.data(), last.data(), kept);
                self.made.push_back(std::move(bigger));
                capacity = self.made.back().size();
                return self.made.back().data();
            }
        };
        std::vector<double> values(1000);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = double(i) / 3;
        const std::string name = "a name that does not fit sixteen bytes";
        for (std::size_t limit : {std::size_t{1} << 20, std::size_t{100}}) {
            CAPTURE(limit);
            areas a;
            a.limit = limit;
            a.made.emplace_back(16);
            byte_writer w(a.made.back().data(), 16);
            w.grow_with(&areas::grow, &a);
            write_args<std::string, std::vector<double>>(w, name, values);
            const bool grew = limit > w.size();
            CHECK(w.spilled() == !grew);
            if (grew) { // the stream lies in the last area, whole
                CHECK(a.made.size() > 1);
                CHECK(w.data() == a.made.back().data());
            }
            byte_reader r{std::span<const std::byte>(w.data(), w.size())};
            auto [n, v] = read_args<std::string, std::vector<double>>(r);
            CHECK(n == name);
            CHECK(v == values);
        }
    }

    // copy_bytes takes another way for 2 KiB or more when the destination lies 1 to 63 bytes past
    // the source within a page (copy_bytes.hpp): the bytes must come out as memcpy's would, at
    // every length around its 64-byte steps and every distance in and around that window.
    TEST_CASE("copy_bytes copies what memcpy copies, in the window and out of it") {
        using prema::detail::copy_bytes;
        using prema::detail::slow_for_memcpy;
        constexpr std::size_t page = 4096;
        std::vector<std::byte> area(6 * page + 2 * 40000);
        auto* base = area.data() + (page - reinterpret_cast<std::uintptr_t>(area.data()) % page);
        std::byte* src = base + 128;
        for (std::size_t i = 0; i < 40000; ++i)
            src[i] = std::byte(i * 131 + (i >> 8));
        std::size_t window_cases = 0;
#if defined(__x86_64__)
        constexpr bool window_exists = true;
#else
        constexpr bool window_exists = false; // no `rep movsb`: copy_bytes is memcpy
#endif
        for (std::size_t n :
             {0, 1, 63, 64, 65, 127, 2047, 2048, 2049, 2111, 4096, 8191, 8192, 8193, 39999}) {
            for (std::size_t ahead : {0, 1, 8, 16, 31, 32, 63, 64, 65, 100, 2048, 4095}) {
                CAPTURE(n);
                CAPTURE(ahead);
                // The destination starts `ahead` bytes past the source's offset in a later page.
                std::byte* dst = src + 40000 + (page - 40000 % page) + ahead;
                std::memset(dst - 8, 0x5a, n + 16);
                CHECK(slow_for_memcpy(dst, src, n) ==
                      (window_exists && n >= 2048 && ahead >= 1 && ahead < 64));
                window_cases += slow_for_memcpy(dst, src, n);
                copy_bytes(dst, src, n);
                CHECK(std::memcmp(dst, src, n) == 0);
                for (int k = 1; k <= 8; ++k) { // nothing written around it
                    CHECK(dst[-k] == std::byte{0x5a});
                    CHECK(dst[n + std::size_t(k) - 1] == std::byte{0x5a});
                }
            }
        }
        // Six distances in the window, eight lengths of 2 KiB or more.
        CHECK(window_cases == (window_exists ? 8 * 6 : 0));
    }

    // A byte vector decoded into a block that memcpy would crawl to: whichever way its bytes take
    // (copy_bytes or the vector's own copy), they arrive whole, for strings too.
    TEST_CASE("byte vectors and strings of 2 KiB and more decode whole wherever they land") {
        std::vector<char> payload(9000);
        for (std::size_t i = 0; i < payload.size(); ++i)
            payload[i] = char(i * 7 + 3);
        const std::string text(payload.begin(), payload.end());
        // Decoded from 64 offsets in the buffer, so that some land in the window whatever the heap
        // hands out.
        auto bytes = encode<std::vector<char>, std::string>(1 << 16, nullptr, payload, text);
        std::vector<std::byte> shifted(bytes.size() + 64);
        for (std::size_t at = 0; at < 64; ++at) {
            CAPTURE(at);
            std::memcpy(shifted.data() + at, bytes.data(), bytes.size());
            byte_reader r{std::span<const std::byte>(shifted.data() + at, bytes.size())};
            auto [v, t] = read_args<std::vector<char>, std::string>(r);
            CHECK(v == payload);
            CHECK(t == text);
            CHECK(r.remaining() == 0);
        }
    }

} // TEST_SUITE("serialization")
