// prema::all_reduce: sums and maxima of ints and doubles, the same bits on every rank and in
// the documented tree order; several in a row and several in flight at once; a non-commutative
// op (string concatenation) that shows the order; an element-wise vector sum through a lambda;
// an error in op reaching every rank; calls of different T or op meeting; a phase left with a
// call open; the busiest rank's messages per call.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"
#include "transport/observe.hpp"

namespace {

// Values whose sum depends on the order it is taken in: 1e16 swallows a 1 added to it alone.
double value_of(int rank) {
    return rank % 2 ? 1.0 : 1e16 + 1.5 * rank;
}

template <class T, class Op> T fold_ranks(int n, T (*of)(int), Op op) {
    T acc = of(0);
    for (int r = 1; r < n; ++r)
        acc = op(acc, of(r));
    return acc;
}

// The order all_reduce.hpp documents: rank r folds its own value, then its children r + 1,
// r + 2, r + 4, ... below `limit` (its lowest set bit), each standing for its own subtree.
template <class T, class Op> T tree_fold(int r, int limit, int n, T (*of)(int), Op op) {
    T acc = of(r);
    for (int step = 1; step < limit && r + step < n; step *= 2)
        acc = op(acc, tree_fold(r + step, step, n, of, op));
    return acc;
}
template <class T, class Op> T tree_fold(int n, T (*of)(int), Op op) {
    return tree_fold(0, int(std::bit_ceil(unsigned(n))), n, of, op);
}

bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

int int_of(int rank) {
    return 3 * rank - 5;
}

} // namespace

TEST_CASE("all_reduce of ints and doubles: tree order, the same bits everywhere") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), n = prema::ranks();
        int isum = co_await prema::all_reduce(int_of(me), std::plus<>{});
        check(isum == fold_ranks(n, &int_of, std::plus<>{}), "int sum " + std::to_string(isum));
        int imax =
            co_await prema::all_reduce(int_of(me), [](int a, int b) { return std::max(a, b); });
        check(imax == int_of(n - 1), "int max " + std::to_string(imax));
        double dsum = co_await prema::all_reduce(value_of(me), std::plus<>{});
        check(same_bits(dsum, tree_fold(n, &value_of, std::plus<>{})), "double sum bits");
        // Every rank has rank 0's bits.
        double bits = co_await prema::all_reduce(dsum, [](double a, double b) {
            if (!same_bits(a, b))
                throw std::runtime_error("ranks disagree");
            return a;
        });
        check(same_bits(bits, dsum), "every rank has the same bits");
        double dmax = co_await prema::all_reduce(-value_of(me),
                                                 [](double a, double b) { return std::max(a, b); });
        check(dmax == (n > 1 ? -1.0 : -value_of(0)), "double max " + std::to_string(dmax));

        std::string order = co_await prema::all_reduce(
            std::to_string(me), [](std::string a, std::string b) { return a + "," + b; });
        std::string expected = "0";
        for (int r = 1; r < n; ++r)
            expected.append(",").append(std::to_string(r)); // not "," + ...: GCC 12's -O3 warns
        check(order == expected, "rank order " + order);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("all_reduce several in a row and in flight at once, vectors through a lambda") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), n = prema::ranks();
        for (int i = 0; i < 20; ++i) {
            int s = co_await prema::all_reduce(i + me, std::plus<>{});
            check(s == n * i + n * (n - 1) / 2, "round " + std::to_string(i));
        }
        // Started together, matched by the order of the calls, not of their answers.
        auto [a, b, c] = co_await prema::when_all(prema::all_reduce(1, std::plus<>{}),
                                                  prema::all_reduce(me, std::plus<>{}),
                                                  prema::all_reduce(10 * me, std::plus<>{}));
        check(a == n && b == n * (n - 1) / 2 && c == 5 * n * (n - 1), "in flight at once");

        std::vector<int> mine(1000);
        for (int i = 0; i < 1000; ++i)
            mine[std::size_t(i)] = i * (me + 1);
        auto sum = co_await prema::all_reduce(mine, [](std::vector<int> x, std::vector<int> y) {
            for (std::size_t i = 0; i < x.size(); ++i)
                x[i] += y[i];
            return x;
        });
        bool ok = sum.size() == 1000;
        for (int i = 0; ok && i < 1000; ++i)
            ok = sum[std::size_t(i)] == i * n * (n + 1) / 2;
        check(ok, "element-wise vector sum");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("an error in all_reduce's op reaches every rank") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        std::string what = "no exception";
        try {
            co_await prema::all_reduce(prema::rank(), [](int, int) -> int {
                throw std::runtime_error("no combining today");
            });
        } catch (const prema::remote_error& e) {
            what = e.what();
        }
        bool one = prema::ranks() == 1; // op never runs on a single value
        check(one ? what == "no exception" : what.find("no combining today") != std::string::npos,
              "error: " + what);
        check(co_await prema::all_reduce(1, std::plus<>{}) == prema::ranks(), "usable after");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("all_reduce calls of different T or op fail on every rank, naming both") {
    if (world_size() < 2)
        return;
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), n = prema::ranks();
        std::string what = "no exception";
        try {
            if (me == n - 1)
                co_await prema::all_reduce(double(me), std::plus<>{});
            else
                co_await prema::all_reduce(me, std::plus<>{});
        } catch (const prema::remote_error& e) {
            what = e.what();
        }
        check(what.find("all_reduce(double, std::plus<void>) on rank " + std::to_string(n - 1)) !=
                      std::string::npos &&
                  what.find("all_reduce(int, std::plus<void>) on rank") != std::string::npos,
              "mismatch error: " + what);
        // The count stays matched: the next call works.
        check(co_await prema::all_reduce(1, std::plus<>{}) == n, "usable after");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("a phase that leaves an all_reduce open is reported, and the next phase matches") {
    if (world_size() < 2)
        return;
    prema::runtime rt(MPI_COMM_WORLD);
    const int me = world_rank(), n = world_size();
    // Every rank but the last starts a call it does not await: the phase ends with it open.
    int rc = rt.run([&]() -> prema::task<> {
        if (me != n - 1)
            (void)prema::all_reduce(me, std::plus<>{});
        co_return;
    });
    int failed = rc != 0, failures = 0;
    MPI_Allreduce(&failed, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_MESSAGE(failures > 0, "the open call was not reported");
    checker check;
    rc = rt.run([&]() -> prema::task<> {
        int sum = co_await prema::all_reduce(me, std::plus<>{});
        check(sum == n * (n - 1) / 2, "sum in the next phase: " + std::to_string(sum));
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("the busiest rank handles at most 2 ceil(log2 P) + 4 messages per all_reduce") {
    const int n = world_size();
    constexpr int calls = 10;
    prema::runtime rt(MPI_COMM_WORLD);
    prema::detail::count_messages(true);
    std::uint64_t handled = 0;
    int rc = rt.run([&]() -> prema::task<> {
        auto before = prema::detail::counted_messages();
        for (int i = 0; i < calls; ++i)
            co_await prema::all_reduce(std::vector<double>(64, i), [](auto a, auto b) {
                for (std::size_t k = 0; k < a.size(); ++k)
                    a[k] += b[k];
                return a;
            });
        auto after = prema::detail::counted_messages();
        handled = after.sent + after.received - before.sent - before.received;
    });
    prema::detail::count_messages(false);
    CHECK(rc == 0);
    std::uint64_t busiest = 0;
    MPI_Allreduce(&handled, &busiest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    const int log2p = std::bit_width(unsigned(n - 1)); // ceil(log2 n)
    MESSAGE("ranks ", n, ": busiest rank handled ", busiest, " messages in ", calls, " calls");
    CHECK(busiest <= std::uint64_t(calls * (2 * log2p + 4)));
    // Every rank: its (at most two) children's values up, its fold up and the result down, the
    // result to its children: 6 at most, whatever the number of ranks.
    CHECK(busiest <= std::uint64_t(calls * 6));
    if (world_rank() == 0) // the root: its children's values up, the result down
        CHECK(handled == std::uint64_t(calls * 2 * std::min(n - 1, 2)));
}
