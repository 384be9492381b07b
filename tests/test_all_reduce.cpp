// prema::all_reduce: sums and maxima of ints and doubles, the same bits on every rank and in
// rank order; several in a row and several in flight at once; a non-commutative op (string
// concatenation) that shows the order; an element-wise vector sum through a lambda; an error in
// op reaching every rank.
#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

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

bool same_bits(double a, double b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

int int_of(int rank) {
    return 3 * rank - 5;
}

} // namespace

TEST_CASE("all_reduce of ints and doubles: rank order, the same bits everywhere") {
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
        check(same_bits(dsum, fold_ranks(n, &value_of, std::plus<>{})), "double sum bits");
        double dmax = co_await prema::all_reduce(-value_of(me),
                                                 [](double a, double b) { return std::max(a, b); });
        check(dmax == (n > 1 ? -1.0 : -value_of(0)), "double max " + std::to_string(dmax));

        std::string order = co_await prema::all_reduce(
            std::to_string(me), [](std::string a, std::string b) { return a + "," + b; });
        std::string expected = "0";
        for (int r = 1; r < n; ++r)
            expected += "," + std::to_string(r);
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
