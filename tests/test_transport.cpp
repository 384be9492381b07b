// Multi-rank tests of the transport: send, call, put/get, broadcast, split-phase payloads and
// quiescence. Every TEST_CASE is collective: all ranks run it, in the same order, and each
// builds its own runtime(s) on MPI_COMM_WORLD. Handlers record what they see in global atomics,
// which are checked after run() returns (and summed across ranks with MPI_Allreduce).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mpi.h>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

struct mode {
    const char* name;
    prema::progress_mode progress;
    int workers;
};

// Both progress modes with one worker, and with two (handlers in parallel; in inline mode the
// two workers take turns driving MPI).
constexpr mode all_modes[] = {
    {"dedicated, 1 worker", prema::progress_mode::dedicated, 1},
    {"inline, 1 worker", prema::progress_mode::inline_, 1},
    {"dedicated, 2 workers", prema::progress_mode::dedicated, 2},
    {"inline, 2 workers", prema::progress_mode::inline_, 2},
};

prema::config make_config(const mode& m) {
    prema::config c;
    c.progress = m.progress;
    c.workers = m.workers;
    return c;
}

long long sum_over_ranks(long long v) {
    long long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

// A byte pattern that does not repeat with a short period; `seed` tells payloads apart.
char pattern_byte(std::size_t i, std::size_t seed) {
    return char((i * 131 + (i >> 8) * 7 + seed * 17) & 0xff);
}

template <class C> C make_pattern(std::size_t n, std::size_t seed) {
    C c(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        c[i] = pattern_byte(i, seed);
    return c;
}

template <class C> bool has_pattern(const C& c, std::size_t n, std::size_t seed) {
    if (c.size() != n)
        return false;
    for (std::size_t i = 0; i < n; ++i)
        if (c[i] != pattern_byte(i, seed))
            return false;
    return true;
}

int random_rank() {
    thread_local std::minstd_rand gen(std::random_device{}() ^ unsigned(prema::rank() * 7919));
    return std::uniform_int_distribution<int>(0, prema::ranks() - 1)(gen);
}

constexpr int max_ranks = 16;

// ---------------------------------------------------------------------------------------------
// send

constexpr int send_n = 1000;
std::atomic<int> seen[max_ranks][send_n];
std::atomic<long long> send_count{0}, send_sum{0}, send_bad{0};

void on_numbered(int src, int seq) {
    if (src < 0 || src >= max_ranks || seq < 0 || seq >= send_n) {
        send_bad.fetch_add(1);
        return;
    }
    seen[src][seq].fetch_add(1);
    send_count.fetch_add(1);
    send_sum.fetch_add(seq);
}

} // namespace

TEST_CASE("send: every rank sends 1000 numbered messages to every other rank") {
    const int me = world_rank(), p = world_size();
    REQUIRE(p <= max_ranks);
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        for (auto& row : seen)
            for (auto& s : row)
                s.store(0);
        send_count = 0;
        send_sum = 0;
        send_bad = 0;
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                for (int i = 0; i < send_n; ++i)
                    for (int d = 0; d < p; ++d)
                        if (d != me)
                            co_await prema::send(d, prema::fn<&on_numbered>, me, i);
                chk.done = true;
            });
        }
        CHECK(rc == 0);
        report(chk);
        CHECK(send_bad == 0);
        CHECK(send_count == (long long)(p - 1) * send_n);
        CHECK(send_sum == (long long)(p - 1) * send_n * (send_n - 1) / 2);
        int wrong = 0;
        for (int s = 0; s < p; ++s)
            for (int i = 0; i < send_n; ++i)
                wrong += seen[s][i].load() != (s == me ? 0 : 1);
        CHECK(wrong == 0);
        CHECK(sum_over_ranks(send_count) == (long long)p * (p - 1) * send_n);
    }
}

// ---------------------------------------------------------------------------------------------
// call

namespace {

std::atomic<long long> void_sum{0};

// A coroutine handler that calls the next rank: returns the ranks it visited, this one first.
prema::task<std::vector<int>> chain(int hops) {
    if (hops == 0)
        co_return std::vector<int>{prema::rank()};
    auto rest =
        co_await prema::call((prema::rank() + 1) % prema::ranks(), prema::fn<&chain>, hops - 1);
    rest.insert(rest.begin(), prema::rank());
    co_return rest;
}

// The same, but the last hop throws; the error travels back through every hop.
prema::task<int> failing_chain(int hops) {
    if (hops == 0)
        throw std::logic_error("deep failure at rank " + std::to_string(prema::rank()));
    int r = co_await prema::call((prema::rank() + 1) % prema::ranks(), prema::fn<&failing_chain>,
                                 hops - 1);
    co_return r + 1;
}

prema::task<std::string> greet(std::string who) {
    co_await prema::yield();
    co_return "hello " + who + " from " + std::to_string(prema::rank());
}

prema::task<> coro_void(int x) {
    co_await prema::yield();
    void_sum.fetch_add(x);
}

// Runs `t` and returns what() of the remote_error it throws (or a note that it did not).
template <class T> prema::task<std::string> remote_what(T t, int expect_rank, checker& chk) {
    try {
        co_await std::move(t);
    } catch (const prema::remote_error& e) {
        chk(e.rank() == expect_rank, "remote_error::rank() is " + std::to_string(e.rank()) +
                                         ", expected " + std::to_string(expect_rank));
        co_return std::string(e.what()) + " [type " + e.type() + "]";
    } catch (const std::exception& e) {
        co_return std::string("wrong exception: ") + e.what();
    }
    co_return "no exception";
}

// Turns a call awaiter (not movable) into a task; the awaiter lives until the full expression
// that holds it ends, which covers the co_await of the task.
template <class A> prema::task<> await_it(A&& a) {
    co_await a;
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("call: values, void, nested coroutine handlers, exceptions") {
    const int me = world_rank(), p = world_size();
    const int right = (me + 1) % p;
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        void_sum = 0;
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                // Plain values.
                int i = co_await prema::call(
                    right, [](int x) { return x * 2 + prema::rank(); }, 21);
                chk(i == 42 + right, "int call returned " + std::to_string(i));
                int self = co_await prema::call(
                    me, [](int x) { return x - prema::rank(); }, 100);
                chk(self == 100 - me, "call to self returned " + std::to_string(self));
                std::string s = co_await prema::call(
                    right, [](std::string t) { return t + " @" + std::to_string(prema::rank()); },
                    "from " + std::to_string(me));
                chk(s == "from " + std::to_string(me) + " @" + std::to_string(right),
                    "string call returned '" + s + "'");
                std::vector<double> in(1000);
                for (std::size_t k = 0; k < in.size(); ++k)
                    in[k] = double(k) * 0.5 + me;
                auto out = co_await prema::call(
                    right,
                    [](std::vector<double> v) {
                        for (auto& x : v)
                            x = 2 * x + prema::rank();
                        return v;
                    },
                    in);
                bool same = out.size() == in.size();
                for (std::size_t k = 0; same && k < in.size(); ++k)
                    same = out[k] == 2 * in[k] + right;
                chk(same, "vector<double> call returned wrong values");
                auto empty = co_await prema::call(
                    right, [](std::vector<double> v) { return v; }, std::vector<double>{});
                chk(empty.empty(), "empty vector came back non-empty");

                // Void handlers: the call returns once the handler has run on `right`, which
                // only this rank calls, so its counter holds exactly this contribution.
                co_await prema::call(
                    right, [](int x) { void_sum.fetch_add(x); }, me + 1);
                long long got = co_await prema::call(right, [] { return void_sum.load(); });
                chk(got == me + 1, "void call: counter is " + std::to_string(got));
                co_await prema::call(right, prema::fn<&coro_void>, 1000);
                got = co_await prema::call(right, [] { return void_sum.load(); });
                chk(got == me + 1001, "coroutine void call: counter is " + std::to_string(got));

                // Coroutine handlers, nested calls two times around the ring.
                auto greeting = co_await prema::call(right, prema::fn<&greet>, std::string("x"));
                chk(greeting == "hello x from " + std::to_string(right),
                    "greet returned '" + greeting + "'");
                auto path = co_await prema::call(right, prema::fn<&chain>, 2 * p);
                bool path_ok = path.size() == std::size_t(2 * p + 1);
                for (std::size_t k = 0; path_ok && k < path.size(); ++k)
                    path_ok = path[k] == (right + int(k)) % p;
                chk(path_ok, "nested call path has " + std::to_string(path.size()) + " hops");

                // Exceptions come back as remote_error naming the rank and the message.
                auto w = co_await remote_what(await_it(prema::call(
                                                  right,
                                                  [](int x) -> int {
                                                      if (x > 0)
                                                          throw std::runtime_error(
                                                              "boom " + std::to_string(x));
                                                      return x;
                                                  },
                                                  42)),
                                              right, chk);
                chk(contains(w, "boom 42") && contains(w, "rank " + std::to_string(right)) &&
                        contains(w, "runtime_error"),
                    "plain handler error: " + w);
                w = co_await remote_what(
                    await_it(prema::call(
                        right, [](int) { throw std::out_of_range("void oops"); }, 1)),
                    right, chk);
                chk(contains(w, "void oops") && contains(w, "out_of_range"),
                    "void handler error: " + w);
                w = co_await remote_what(await_it(prema::call(
                                             right, [](int) -> int { throw 7; }, 1)),
                                         right, chk);
                chk(contains(w, "rank " + std::to_string(right)) && contains(w, "[type int]"),
                    "non-standard exception: " + w);
                const int hops = p + 1;
                w = co_await remote_what(
                    await_it(prema::call(right, prema::fn<&failing_chain>, hops)), right, chk);
                chk(contains(w, "deep failure at rank " + std::to_string((right + hops) % p)),
                    "nested coroutine error: " + w);
                // The runtime still works after all of that.
                int again = co_await prema::call(
                    right, [](int x) { return x + 1; }, 1);
                chk(again == 2, "call after errors returned " + std::to_string(again));
                chk.done = true;
            });
        }
        CHECK(rc == 0); // errors that reach the caller are not failures of the receiving rank
        report(chk);
    }
}

// Many concurrent calls, to self and to the right, from spawned tasks: replies race with the
// caller's own return from await_suspend when several workers run.
namespace {
std::atomic<long long> spawned_sum{0};
}

TEST_CASE("call: many concurrent calls from spawned tasks, including to self") {
    const int me = world_rank(), p = world_size();
    const int right = (me + 1) % p;
    constexpr int tasks = 16, calls_per_task = 100;
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        spawned_sum = 0;
        checker chk;
        std::atomic<int> wrong{0};
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                for (int t = 0; t < tasks; ++t)
                    prema::spawn(
                        [](int t, int me, int right, std::atomic<int>* wrong) -> prema::task<> {
                            for (int k = 0; k < calls_per_task; ++k) {
                                int dest = (t + k) % 2 ? me : right;
                                int v = co_await prema::call(
                                    dest, [](int x) { return x + prema::rank(); }, k);
                                if (v != k + dest)
                                    wrong->fetch_add(1);
                                spawned_sum.fetch_add(1);
                            }
                        }(t, me, right, &wrong));
                chk.done = true;
                co_return;
            });
        }
        CHECK(rc == 0);
        report(chk);
        CHECK(wrong == 0);
        CHECK(spawned_sum == tasks * calls_per_task);
    }
}

// ---------------------------------------------------------------------------------------------
// put / get

namespace {
constexpr std::size_t half = 65536; // doubles: 512 KiB, split-phase
std::vector<double> region;

double owner_value(int rank, std::size_t i) {
    return rank * 1e6 + double(i);
}
double writer_value(int rank, std::size_t i) {
    return -(rank * 1e6 + double(i) * 0.25);
}
} // namespace

TEST_CASE("put/get of a vector<double> region on another rank") {
    const int me = world_rank(), p = world_size();
    const int right = (me + 1) % p, left = (me + p - 1) % p;
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        // Each rank's region: the first half is written by its left neighbour with put, the
        // second half holds the owner's values, which the left neighbour reads with get.
        region.assign(2 * half, 0.0);
        for (std::size_t i = half; i < 2 * half; ++i)
            region[i] = owner_value(me, i);
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                prema::remote_ptr<double> rp =
                    co_await prema::call(right, [] { return prema::remote(region.data()); });
                chk(rp.rank == right, "remote() names rank " + std::to_string(rp.rank));
                std::vector<double> mine(half);
                for (std::size_t i = 0; i < half; ++i)
                    mine[i] = writer_value(me, i);
                co_await prema::put(rp, std::span<const double>(mine));
                std::vector<double> back(half, 0.0);
                co_await prema::get(rp, std::span<double>(back));
                chk(back == mine, "get after put returned other values");
                std::vector<double> theirs(half, 0.0);
                co_await prema::get(rp + std::ptrdiff_t(half), std::span<double>(theirs));
                bool ok = true;
                for (std::size_t i = 0; ok && i < half; ++i)
                    ok = theirs[i] == owner_value(right, half + i);
                chk(ok, "get of the owner's half returned other values");
                // Small pieces, and nothing at all.
                std::vector<double> three{1.5, 2.5, 3.5};
                co_await prema::put(rp + std::ptrdiff_t(half + 5), std::span<const double>(three));
                std::vector<double> seven(7, 0.0);
                co_await prema::get(rp + std::ptrdiff_t(half + 3), std::span<double>(seven));
                std::vector<double> want{
                    owner_value(right, half + 3), owner_value(right, half + 4), 1.5, 2.5, 3.5,
                    owner_value(right, half + 8), owner_value(right, half + 9)};
                chk(seven == want, "small put/get mismatch");
                co_await prema::put(rp, std::span<const double>());
                co_await prema::get(rp, std::span<double>());
                chk.done = true;
            });
        }
        CHECK(rc == 0);
        report(chk);
        bool first_ok = true, second_ok = true;
        for (std::size_t i = 0; i < half; ++i)
            first_ok &= region[i] == writer_value(left, i);
        for (std::size_t i = half; i < 2 * half; ++i) {
            double want =
                i >= half + 5 && i < half + 8 ? 1.5 + double(i - half - 5) : owner_value(me, i);
            second_ok &= region[i] == want;
        }
        CHECK(first_ok);
        CHECK(second_ok);
    }
}

// ---------------------------------------------------------------------------------------------
// broadcast

namespace {
std::atomic<int> bcast_hits[max_ranks], bcast_big_hits[max_ranks];
std::atomic<int> bcast_bad{0}, bcast_nested{0};

prema::task<> nested_outer() {
    // Runs on every rank, which then broadcasts again: P broadcasts of the inner handler.
    co_await prema::broadcast([] { bcast_nested.fetch_add(1); });
}
} // namespace

TEST_CASE("broadcast reaches every rank exactly once") {
    const int me = world_rank(), p = world_size();
    constexpr std::size_t big = 20000; // split-phase at the default eager size
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        for (int r = 0; r < max_ranks; ++r) {
            bcast_hits[r] = 0;
            bcast_big_hits[r] = 0;
        }
        bcast_bad = 0;
        bcast_nested = 0;
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                co_await prema::broadcast(
                    [](int root, std::string s) {
                        if (root < 0 || root >= max_ranks || s != "hi from " + std::to_string(root))
                            bcast_bad.fetch_add(1);
                        else
                            bcast_hits[root].fetch_add(1);
                    },
                    me, "hi from " + std::to_string(me));
                co_await prema::broadcast(
                    [](int root, std::vector<char> v) {
                        if (root < 0 || root >= max_ranks || !has_pattern(v, big, root))
                            bcast_bad.fetch_add(1);
                        else
                            bcast_big_hits[root].fetch_add(1);
                    },
                    me, make_pattern<std::vector<char>>(big, me));
                if (me == 0)
                    co_await prema::broadcast(prema::fn<&nested_outer>);
                chk.done = true;
            });
        }
        CHECK(rc == 0);
        report(chk);
        CHECK(bcast_bad == 0);
        int wrong = 0;
        for (int r = 0; r < max_ranks; ++r) {
            wrong += bcast_hits[r] != (r < p ? 1 : 0);
            wrong += bcast_big_hits[r] != (r < p ? 1 : 0);
        }
        CHECK(wrong == 0);
        CHECK(bcast_nested == p);
        CHECK(sum_over_ranks(bcast_hits[0]) == p);
    }
}

// ---------------------------------------------------------------------------------------------
// split-phase payloads

namespace {
std::atomic<int> payload_ok{0}, payload_bad{0};
std::atomic<long long> payload_bytes{0};

void on_payload(std::vector<char> v) {
    if (has_pattern(v, v.size(), v.size()))
        payload_ok.fetch_add(1);
    else
        payload_bad.fetch_add(1);
    payload_bytes.fetch_add((long long)v.size());
}

std::string echo(std::string s) {
    return s;
}

// Sends each size to the right with send, and echoes it through a call; checks the content.
prema::task<> exchange_payloads(const std::vector<std::size_t>& sizes, int right, checker& chk) {
    for (auto n : sizes)
        co_await prema::send(right, prema::fn<&on_payload>, make_pattern<std::vector<char>>(n, n));
    for (auto n : sizes) {
        auto back = co_await prema::call(right, prema::fn<&echo>, make_pattern<std::string>(n, n));
        chk(has_pattern(back, n, n), "echo of " + std::to_string(n) + " bytes came back as " +
                                         std::to_string(back.size()) + " other bytes");
    }
}
} // namespace

TEST_CASE("split-phase payloads around the eager threshold and of 64 MiB") {
    const int me = world_rank(), p = world_size();
    const int right = (me + 1) % p;
    (void)me;
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        auto cfg = make_config(m);
        const std::size_t e = cfg.eager_bytes;
        // A vector or string travels as an 8-byte length and its bytes; a reply adds a status
        // byte. Request sizes e-2 .. e+1 and reply sizes e-1 .. e+2 around the threshold.
        std::vector<std::size_t> sizes{0, e - 10, e - 9, e - 8, e - 7};
        // 64 MiB is not cheap on a small machine (every rank sends one and echoes one): once,
        // with dedicated progress and one worker.
        if (m.workers == 1 && m.progress == prema::progress_mode::dedicated)
            sizes.push_back(std::size_t{64} << 20);
        long long total = 0;
        for (auto n : sizes)
            total += (long long)n;
        payload_ok = 0;
        payload_bad = 0;
        payload_bytes = 0;
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, cfg);
            rc = rt.run([&]() -> prema::task<> {
                co_await exchange_payloads(sizes, right, chk);
                chk.done = true;
            });
        }
        CHECK(rc == 0);
        report(chk);
        CHECK(payload_bad == 0);
        CHECK(payload_ok == int(sizes.size()));
        CHECK(payload_bytes == total);
    }
}

TEST_CASE("tiny eager sizes: nearly every message goes split-phase") {
    const int me = world_rank(), p = world_size();
    const int right = (me + 1) % p;
    std::vector<std::size_t> sizes;
    for (std::size_t n = 0; n <= 200; ++n)
        sizes.push_back(n);
    sizes.push_back(100000);
    long long total = 0;
    for (auto n : sizes)
        total += (long long)n;
    for (std::size_t eager : {std::size_t{0}, std::size_t{64}}) {
        for (const auto& m : all_modes) {
            const std::string mode_name = m.name;
            INFO("mode: ", mode_name, ", eager_bytes ", eager);
            auto cfg = make_config(m);
            cfg.eager_bytes = eager;
            payload_ok = 0;
            payload_bad = 0;
            payload_bytes = 0;
            for (auto& h : bcast_hits)
                h = 0;
            checker chk;
            int rc = -1;
            {
                prema::runtime rt(MPI_COMM_WORLD, cfg);
                rc = rt.run([&]() -> prema::task<> {
                    co_await exchange_payloads(sizes, right, chk);
                    auto path = co_await prema::call(right, prema::fn<&chain>, p);
                    chk(path.size() == std::size_t(p + 1), "nested call path is wrong");
                    co_await prema::broadcast(
                        [](int root) {
                            if (root >= 0 && root < max_ranks)
                                bcast_hits[root].fetch_add(1);
                        },
                        me);
                    chk.done = true;
                });
            }
            CHECK(rc == 0);
            report(chk);
            CHECK(payload_bad == 0);
            CHECK(payload_ok == int(sizes.size()));
            CHECK(payload_bytes == total);
            int wrong = 0;
            for (int r = 0; r < p; ++r)
                wrong += bcast_hits[r] != 1;
            CHECK(wrong == 0);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// quiescence

namespace {
constexpr int initial_per_rank = 10, ttl = 50;
std::atomic<long long> hops[3];

void hop_plain(int phase, int t);

// Each hop counts itself and forwards to a random rank until the TTL runs out: a message that
// starts with TTL t makes exactly t + 1 hops. Coroutine and plain handlers alternate.
prema::task<> hop_task(int phase, int t) {
    hops[phase].fetch_add(1);
    if (t > 0)
        co_await prema::send(random_rank(), prema::fn<&hop_plain>, phase, t - 1);
}

void hop_plain(int phase, int t) {
    hops[phase].fetch_add(1);
    if (t > 0)
        (void)prema::send(random_rank(), prema::fn<&hop_task>, phase, t - 1);
}

prema::task<> start_cascade(int phase, int t) {
    for (int i = 0; i < initial_per_rank; ++i)
        co_await prema::send(random_rank(), prema::fn<&hop_task>, phase, t);
}

prema::task<long long> global_hops(int phase) {
    long long total = 0;
    for (int r = 0; r < prema::ranks(); ++r)
        total += co_await prema::call(
            r, [](int ph) { return hops[ph].load(); }, phase);
    co_return total;
}
} // namespace

// ---------------------------------------------------------------------------------------------
// Aggregation: a message of 1 KiB or more is not held back in its sender's batch

namespace {
std::atomic<bool> big_echoed{false};

void on_echoed() {
    big_echoed = true;
}

void on_big(std::vector<char> v) {
    if (v.size() == 2048)
        (void)prema::send(0, prema::fn<&on_echoed>);
}
} // namespace

TEST_CASE("a message of 1 KiB or more leaves while its sender still runs") {
    // Rank 0's entry sends 2 KiB to rank 1 and then computes without suspending: the reply can
    // only come (to rank 0's second worker) if the message left before the entry ends.
    prema::config cfg;
    cfg.progress = prema::progress_mode::dedicated;
    cfg.workers = 2;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    big_echoed = false;
    bool in_time = false;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0 && prema::ranks() > 1) {
            co_await prema::send(1, prema::fn<&on_big>, std::vector<char>(2048, 'x'));
            auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!big_echoed && std::chrono::steady_clock::now() < until)
                std::this_thread::yield();
            in_time = big_echoed;
        }
    }) == 0);
    if (prema::rank() == 0 && prema::ranks() > 1)
        CHECK(in_time);
}

namespace {
std::atomic<bool> small_echoed{false};

void on_small_echoed() {
    small_echoed = true;
}

void on_small() {
    (void)prema::send(0, prema::fn<&on_small_echoed>);
}
} // namespace

TEST_CASE("a small message leaves its batch within the aggregation time while its sender runs") {
    // Rank 0's entry sends 8 bytes to rank 1 and then yields, never idle and never sending
    // again, until the reply comes: only the age of its batch (--prema-aggregate-us, seen by
    // the progress engine's periodic work) can make the message leave before the entry ends.
    for (const auto& m : {all_modes[0], all_modes[1]}) {
        CAPTURE(m.name);
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        small_echoed = false;
        bool in_time = false;
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() == 0 && prema::ranks() > 1) {
                co_await prema::send(1, prema::fn<&on_small>);
                auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (!small_echoed && std::chrono::steady_clock::now() < until)
                    co_await prema::yield();
                in_time = small_echoed;
            }
        }) == 0);
        if (prema::rank() == 0 && prema::ranks() > 1)
            CHECK(in_time);
    }
}

namespace {
std::atomic<bool> lone_echoed{false}, lone_in_time{false};

void on_lone_echo() {
    lone_echoed = true;
}

void on_lone_ping() {
    (void)prema::send(0, prema::fn<&on_lone_echo>);
}

// Rank 0's only work: sends one message, then computes without suspending until the echo comes
// (to rank 0's other worker). Had the message joined a batch, it would wait for this to end.
void lone_sender() {
    (void)prema::send(1, prema::fn<&on_lone_ping>);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!lone_echoed && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    lone_in_time = lone_echoed.load();
}

// Rank 1, asked by rank 0's entry: sends rank 0 its only work.
void start_lone() {
    (void)prema::send(0, prema::fn<&lone_sender>);
}
} // namespace

TEST_CASE("a handler that is its rank's only work sends its first message at once") {
    // Inline with two workers: the other worker polls and runs the echo. (Dedicated progress on
    // shared cores may run the handler on the progress thread, which then could not receive.)
    prema::runtime rt(MPI_COMM_WORLD, make_config(all_modes[3]));
    lone_echoed = false;
    lone_in_time = false;
    // Rank 0 starts the exchange, so that its entry is over before lone_sender arrives: the
    // entry's message waits in a batch until the entry's item has ended. Started from rank 1,
    // lone_sender could find rank 0's entry still queued (CI's TSan run on 4 ranks did).
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            co_await prema::send(1, prema::fn<&start_lone>);
    }) == 0);
    if (prema::rank() == 0)
        CHECK(lone_in_time);
}

namespace {
std::chrono::steady_clock::time_point marked, pinged;

void mark() {
    marked = std::chrono::steady_clock::now();
}

void on_ping_before_quiescence() {
    pinged = std::chrono::steady_clock::now();
}

// Runs on rank 0's only worker after the entry suspends, and keeps it for a second.
void hold_the_worker() {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
}
} // namespace

TEST_CASE("co_await quiescence() sends the waiter's batches before the items queued behind it") {
    // Rank 0's entry queues an item that holds its worker for a second, sends 8 bytes to rank 1
    // and awaits quiescence: the message must reach rank 1 well before that second is over
    // (rank 1 times both: the last `mark` that arrived, then the message).
    prema::runtime rt(MPI_COMM_WORLD, make_config(all_modes[1]));
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0) {
            co_await prema::call(1, prema::fn<&mark>);
            // Resumed by the call's reply as the rank's only work, this coroutine's first message
            // leaves on its own: this one, so that the next joins a batch.
            co_await prema::send(1, prema::fn<&mark>);
            co_await prema::send(0, prema::fn<&hold_the_worker>);
            co_await prema::send(1, prema::fn<&on_ping_before_quiescence>);
        }
        co_await prema::quiescence();
    }) == 0);
    if (prema::rank() == 1)
        CHECK(pinged - marked < std::chrono::milliseconds(500));
}

// ---------------------------------------------------------------------------------------------
// Inline progress: a worker that never goes idle still receives

namespace {
std::atomic<bool> release_seen{false}, waiter_released{false};

void on_release() {
    release_seen = true;
}

void on_waiting() {
    (void)prema::send(1, prema::fn<&on_release>);
}

// Yields until the release comes, so its worker is never idle: it receives only because it polls
// once it has been busy for a quantum. Rank 0 sends the release when it hears this handler
// started, so the release is a message of its own, not part of the batch that started it.
prema::task<> wait_for_release() {
    co_await prema::send(0, prema::fn<&on_waiting>);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!release_seen && std::chrono::steady_clock::now() < until)
        co_await prema::yield();
    waiter_released = release_seen.load();
}
} // namespace

TEST_CASE("inline: a handler that yields until a message comes receives it") {
    prema::config cfg;
    cfg.progress = prema::progress_mode::inline_;
    cfg.workers = 1;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    release_seen = false;
    waiter_released = false;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0 && prema::ranks() > 1)
            co_await prema::send(1, prema::fn<&wait_for_release>);
    }) == 0);
    if (prema::rank() == 1)
        CHECK(waiter_released);
}

TEST_CASE("quiescence: run() returns only after every cascading hop") {
    const int p = world_size();
    const long long expected = (long long)p * initial_per_rank * (ttl + 1);
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        prema::runtime rt(MPI_COMM_WORLD, make_config(m));
        // Two runs on one runtime: nothing of the first may leak into the second.
        for (int round = 0; round < 2; ++round) {
            INFO("run ", round);
            hops[0] = 0;
            int rc = rt.run([&]() -> prema::task<> { co_await start_cascade(0, ttl); });
            CHECK(rc == 0);
            CHECK(sum_over_ranks(hops[0]) == expected);
        }
    }
}

TEST_CASE("quiescence: co_await quiescence() separates two phases") {
    const int p = world_size();
    const long long expected1 = (long long)p * initial_per_rank * (ttl + 1);
    const long long expected2 = (long long)p * initial_per_rank * (ttl / 2 + 1);
    for (const auto& m : all_modes) {
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        for (auto& h : hops)
            h = 0;
        checker chk;
        int rc = -1;
        {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            rc = rt.run([&]() -> prema::task<> {
                co_await start_cascade(1, ttl);
                co_await prema::quiescence();
                // Every phase-1 hop on every rank has happened; phase 2 does not touch them.
                long long seen1 = co_await global_hops(1);
                chk(seen1 == expected1, "after the first quiescence, " + std::to_string(seen1) +
                                            " phase-1 hops of " + std::to_string(expected1));
                co_await start_cascade(2, ttl / 2);
                co_await prema::quiescence();
                long long seen2 = co_await global_hops(2);
                chk(seen2 == expected2, "after the second quiescence, " + std::to_string(seen2) +
                                            " phase-2 hops of " + std::to_string(expected2));
                // Quiescence with nothing to wait for, several times in a row.
                for (int k = 0; k < 3; ++k)
                    co_await prema::quiescence();
                seen1 = co_await global_hops(1);
                chk(seen1 == expected1, "phase-1 count changed to " + std::to_string(seen1));
                chk.done = true;
            });
        }
        CHECK(rc == 0);
        report(chk);
        CHECK(sum_over_ranks(hops[1]) == expected1);
        CHECK(sum_over_ranks(hops[2]) == expected2);
    }
}

// ---------------------------------------------------------------------------------------------
// Many short phases

namespace {
std::atomic<int> short_hits{0};
void short_hit(int) {
    short_hits.fetch_add(1);
}
} // namespace

// Regression: with two workers in inline mode, a worker could poll right after the decision
// that ended a phase and start a termination wave nobody else would join; the runtime's
// destructor then waited for it forever (seen within a few hundred runtimes at 4 ranks).
TEST_CASE("many short runtimes and phases end cleanly") {
    const int me = world_rank(), p = world_size();
    constexpr int runtimes = 200, phases = 3;
    for (const auto& m : all_modes) {
        if (m.workers < 2)
            continue;
        const std::string mode_name = m.name;
        INFO("mode: ", mode_name);
        short_hits = 0;
        int failed_runs = 0;
        for (int k = 0; k < runtimes; ++k) {
            prema::runtime rt(MPI_COMM_WORLD, make_config(m));
            for (int ph = 0; ph < phases; ++ph)
                failed_runs += rt.run([&]() -> prema::task<> {
                    co_await prema::send((me + 1) % p, prema::fn<&short_hit>, k);
                }) != 0;
        }
        CHECK(failed_runs == 0);
        CHECK(short_hits == runtimes * phases);
    }
}
