// Zero-copy large payloads (include/prema/detail/transport/bulk.hpp): a large vector argument goes
// to MPI from the sender's vector and is received into the vector its handler gets; put and get
// move large buffers between the users' memory. Every TEST_CASE is collective; ranks 0 and 1
// do the talking. The process-wide counters of bulk_stats() tell copies from moves.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mpi.h>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

using prema::detail::bulk_stats;

struct mode {
    const char* name;
    prema::progress_mode progress;
};
constexpr mode modes[] = {{"dedicated", prema::progress_mode::dedicated},
                          {"inline", prema::progress_mode::inline_}};

prema::config make_config(const mode& m) {
    prema::config c;
    c.progress = m.progress;
    return c;
}

struct counts {
    std::uint64_t sent_moved, sent_copied, sent_borrowed, received_moved, received_copied;
    static counts now() {
        auto& s = bulk_stats();
        return {s.sent_moved.load(), s.sent_copied.load(), s.sent_borrowed.load(),
                s.received_moved.load(), s.received_copied.load()};
    }
    counts operator-(const counts& o) const {
        return {sent_moved - o.sent_moved, sent_copied - o.sent_copied,
                sent_borrowed - o.sent_borrowed, received_moved - o.received_moved,
                received_copied - o.received_copied};
    }
};

double value(std::size_t i, int seed) {
    return double(i) * 0.5 + seed * 1e7;
}

std::vector<double> make(std::size_t n, int seed) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = value(i, seed);
    return v;
}

bool holds(const std::vector<double>& v, std::size_t n, int seed) {
    if (v.size() != n)
        return false;
    for (std::size_t i = 0; i < n; ++i)
        if (v[i] != value(i, seed))
            return false;
    return true;
}

constexpr std::size_t big = 1 << 17; // doubles: 1 MiB, above the default eager size

std::atomic<int> wrong{0}, ran{0};

// The handler's vector is the buffer MPI received into.
bool same_buffer(std::vector<double> v, int seed) {
    ran.fetch_add(1);
    return v.data() == bulk_stats().last_receive.load() && holds(v, big, seed);
}

prema::task<bool> same_buffer_task(std::vector<double> v, int seed) {
    co_await prema::yield();
    ran.fetch_add(1);
    co_return v.data() == bulk_stats().last_receive.load() && holds(v, big, seed);
}

bool same_buffer_ref(const std::vector<double>& v, int seed) {
    ran.fetch_add(1);
    return v.data() == bulk_stats().last_receive.load() && holds(v, big, seed);
}

const void* sent_from = nullptr;
void same_as_sent(std::vector<double> v) {
    ran.fetch_add(1);
    if (v.data() != sent_from || !holds(v, big, 7))
        wrong.fetch_add(1);
}

void expect(std::vector<double> v, int seed) {
    ran.fetch_add(1);
    if (!holds(v, big, seed))
        wrong.fetch_add(1);
}

} // namespace

TEST_CASE("a handler's vector is the buffer its payload was received into") {
    const int me = world_rank();
    for (const auto& m : modes) {
        INFO("mode: ", m.name);
        checker chk;
        ran = 0;
        auto before = counts::now();
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        int rc = rt.run([&]() -> prema::task<> {
            if (me == 0)
                for (int i = 0; i < 3; ++i) {
                    // One at a time: last_receive is the latest receive posted.
                    chk(co_await prema::call(1, prema::fn<&same_buffer>, make(big, i), i),
                        "by value: another buffer");
                    chk(co_await prema::call(1, prema::fn<&same_buffer_task>, make(big, i), i),
                        "coroutine: another buffer");
                    chk(co_await prema::call(1, prema::fn<&same_buffer_ref>, make(big, i), i),
                        "const&: another buffer");
                }
            chk.done = true;
        });
        CHECK(rc == 0);
        report(chk);
        auto d = counts::now() - before;
        if (me == 0) {
            CHECK(d.sent_moved == 9);
            CHECK(d.sent_copied == 0);
        } else if (me == 1) {
            CHECK(ran == 9);
            CHECK(d.received_moved == 9);
            CHECK(d.received_copied == 0);
        }
    }
}

TEST_CASE("send(rank, h, std::move(v)) sends v itself, send(rank, h, v) a copy made at once") {
    const int me = world_rank();
    for (const auto& m : modes) {
        INFO("mode: ", m.name);
        checker chk;
        ran = wrong = 0;
        auto before = counts::now();
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        int rc = rt.run([&]() -> prema::task<> {
            // To this rank: the handler gets the very vector that was sent.
            auto v = make(big, 7);
            sent_from = v.data();
            co_await prema::send(me, prema::fn<&same_as_sent>, std::move(v));
            chk(v.empty(), "the moved-from vector still holds its elements");
            if (me == 0) {
                auto w = make(big, 1);
                co_await prema::send(1, prema::fn<&expect>, w, 1);
                w = make(big, 2); // changed as soon as send returns
                co_await prema::send(1, prema::fn<&expect>, std::span<const double>(w), 2);
                w = make(big, 0);
                const auto c = make(big, 3);
                co_await prema::send(1, prema::fn<&expect>, std::move(c), 3); // const: copied
            }
            chk.done = true;
        });
        CHECK(rc == 0);
        report(chk);
        CHECK(wrong == 0);
        auto d = counts::now() - before;
        CHECK(d.sent_moved == 1);
        CHECK(d.sent_copied == (me == 0 ? 3 : 0));
        CHECK(ran == (me == 1 ? 4 : 1));
    }
}

namespace {
std::uint64_t element(std::size_t i) {
    return i * 0x9e3779b97f4a7c15ull;
}

std::atomic<std::uint64_t> received_sum{0}, received_count{0};
void sum_all(std::vector<std::uint64_t> v) {
    received_count = v.size();
    received_sum = std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}
} // namespace

TEST_CASE("a 64 MiB payload arrives intact") {
    constexpr std::size_t n = (std::size_t{64} << 20) / sizeof(std::uint64_t);
    const int me = world_rank();
    std::uint64_t want = 0;
    for (std::size_t i = 0; i < n; ++i)
        want += element(i);
    received_sum = received_count = 0;
    prema::runtime rt(MPI_COMM_WORLD);
    int rc = rt.run([&]() -> prema::task<> {
        if (me == 0) {
            std::vector<std::uint64_t> v(n);
            for (std::size_t i = 0; i < n; ++i)
                v[i] = element(i);
            co_await prema::send(1, prema::fn<&sum_all>, std::move(v));
        }
    });
    CHECK(rc == 0);
    if (me == 1) {
        CHECK(received_count == n);
        CHECK(received_sum == want);
    }
}

namespace {
std::string text(std::size_t n) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = char('a' + i % 26);
    return s;
}

// The first large vector<double> is the bulk; the other arguments travel inline.
void around(int a, std::vector<double> v, std::string s, std::vector<double> small,
            std::vector<int> ints) {
    ran.fetch_add(1);
    if (a != 42 || !holds(v, big, 4) || s != "between" || small != std::vector<double>{1, 2} ||
        ints != std::vector<int>{3, 4, 5})
        wrong.fetch_add(1);
}

// Arguments that do not fit inline beside the bulk: it goes back among them.
void folded(std::vector<double> a, std::string s, std::vector<double> b) {
    ran.fetch_add(1);
    if (!holds(a, big, 5) || s != text(20000) || !holds(b, big, 6))
        wrong.fetch_add(1);
}

std::vector<double> produce(int seed) {
    return make(big, seed);
}
} // namespace

TEST_CASE("arguments beside the bulk, arguments too large for it, and a large result") {
    const int me = world_rank();
    for (const auto& m : modes) {
        INFO("mode: ", m.name);
        checker chk;
        ran = wrong = 0;
        auto before = counts::now();
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        int rc = rt.run([&]() -> prema::task<> {
            if (me == 0) {
                std::vector<double> small{1, 2}; // (g++ cannot keep an initializer_list
                std::vector<int> ints{3, 4, 5};  // across co_await)
                co_await prema::send(1, prema::fn<&around>, 42, make(big, 4),
                                     std::string("between"), small, ints);
                co_await prema::send(1, prema::fn<&folded>, make(big, 5), text(20000),
                                     make(big, 6));
                auto r = co_await prema::call(1, prema::fn<&produce>, 9);
                chk(holds(r, big, 9), "the result differs");
            }
            chk.done = true;
        });
        CHECK(rc == 0);
        report(chk);
        CHECK(wrong == 0);
        auto d = counts::now() - before;
        if (me == 0)
            CHECK(d.received_moved == 1); // the result
        if (me == 1) {
            CHECK(ran == 2);
            CHECK(d.sent_moved == 1);     // the result
            CHECK(d.received_moved == 1); // `around`'s; `folded` had none left
        }
    }
}

namespace {
std::vector<double> region;
} // namespace

TEST_CASE("put and get move large buffers between the users' memory") {
    const int me = world_rank();
    for (const auto& m : modes) {
        INFO("mode: ", m.name);
        checker chk;
        region.assign(2 * big, 0.0);
        auto before = counts::now();
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        int rc = rt.run([&]() -> prema::task<> {
            if (me == 0) {
                auto rp = co_await prema::call(1, [] { return prema::remote(region.data()); });
                auto src = make(big, 11);
                co_await prema::put(rp, std::span<const double>(src));
                std::vector<double> back(big);
                co_await prema::get(rp, std::span<double>(back));
                chk(back == src, "get after put returned other values");
                // Unaligned and odd-sized, across the two halves.
                std::span<const double> part(src.data() + 3, big - 5);
                co_await prema::put(rp + std::ptrdiff_t(big), part);
                std::vector<double> two(big - 5);
                co_await prema::get(rp + std::ptrdiff_t(big), std::span<double>(two));
                chk(std::equal(two.begin(), two.end(), part.begin()), "odd get differs");
            }
            chk.done = true;
        });
        CHECK(rc == 0);
        report(chk);
        auto d = counts::now() - before;
        if (me == 0) {
            CHECK(d.sent_borrowed == 2);  // the puts
            CHECK(d.received_moved == 2); // the gets, received into `back` and `two`
        } else if (me == 1) {
            CHECK(d.sent_borrowed == 2);  // the gets' replies, from `region`
            CHECK(d.received_moved == 2); // the puts, received into `region`
            CHECK(holds(std::vector<double>(region.begin(), region.begin() + big), big, 11));
        }
    }
}

namespace {
struct store {
    std::vector<std::int64_t> next; // per sender: the sequence number expected next
    std::int64_t received = 0, disorder = 0, damaged = 0;
    template <class Ar> void serialize(Ar& ar) { ar(next, received, disorder, damaged); }
};

void keep(store& s, int from, std::int64_t seq, std::vector<double> v) {
    if (s.next.empty())
        s.next.assign(std::size_t(prema::ranks()), 0);
    s.disorder += seq != s.next[std::size_t(from)];
    s.next[std::size_t(from)] = seq + 1;
    s.damaged += !holds(v, v.size(), int(seq));
    ++s.received;
}

std::vector<std::int64_t> tally(const store& s) {
    return {s.received, s.disorder, s.damaged};
}

std::vector<double> echo(const store&, std::vector<double> v) {
    return v;
}
} // namespace

TEST_CASE("object messages carry bulks, also through migrations and forwards") {
    constexpr int messages = 12;
    constexpr std::size_t n = 4096; // doubles: 32 KiB, bulk but not too slow oversubscribed
    const int me = world_rank();
    prema::config cfg;
    cfg.workers = 2;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    std::vector<prema::object_id> ids(4);
    rt.run([&]() -> prema::task<> {
        if (me == 0)
            for (auto& id : ids)
                id = prema::make_mobile<store>().id();
        co_return;
    });
    MPI_Bcast(ids.data(), int(ids.size() * sizeof(prema::object_id)), MPI_BYTE, 0, MPI_COMM_WORLD);
    auto before = counts::now();
    checker chk;
    int rc = rt.run([&]() -> prema::task<> {
        std::mt19937 rng(unsigned(me) * 31u + 5u);
        for (std::int64_t k = 0; k < messages; ++k)
            for (auto id : ids) {
                prema::mobile_ptr<store> mp(id);
                co_await prema::send(mp, prema::fn<&keep>, me, k, make(n, int(k)));
                if (rng() % 3 == 0)
                    prema::spawn(prema::migrate(mp, int(rng() % unsigned(prema::ranks()))));
            }
        auto back =
            co_await prema::call(prema::mobile_ptr<store>(ids[0]), prema::fn<&echo>, make(n, 3));
        chk(holds(back, n, 3), "echo differs");
        chk.done = true;
    });
    CHECK(rc == 0);
    report(chk);
    std::vector<std::vector<std::int64_t>> tallies;
    rt.run([&]() -> prema::task<> {
        if (me == 0)
            for (auto id : ids)
                tallies.push_back(
                    co_await prema::call(prema::mobile_ptr<store>(id), prema::fn<&tally>));
    });
    for (auto& t : tallies) {
        CHECK(t[0] == std::int64_t(world_size()) * messages);
        CHECK(t[1] == 0);
        CHECK(t[2] == 0);
    }
    auto d = counts::now() - before;
    std::uint64_t mine[2] = {d.received_moved, d.received_copied}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    // Copied: a bulk that travelled inside a migration (it is not the handler's type there).
    MESSAGE("bulks received in place: " << all[0] << ", copied: " << all[1]);
    // Every rank: its messages, and its echo's request and reply.
    CHECK(all[0] + all[1] == std::uint64_t(world_size()) * (messages * ids.size() + 2));
}

TEST_CASE("a bulk above --prema-max-message-bytes is refused at send") {
    prema::config cfg;
    cfg.max_message_bytes = 1 << 20;
    bool refused = false;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    int rc = rt.run([&]() -> prema::task<> {
        try {
            co_await prema::send((world_rank() + 1) % world_size(), prema::fn<&expect>,
                                 make(big + 1, 0), 0);
        } catch (const prema::usage_error& e) {
            refused =
                std::string(e.what()).find("above --prema-max-message-bytes") != std::string::npos;
        }
    });
    CHECK(rc == 0);
    CHECK(refused);
}
