// prema::reduce and prema::gather over objects: exact results over 1,000 objects spread over
// the ranks while many of them migrate, gather's order, coroutine handlers, an empty list, and
// an error in the handler on one object reaching the caller as prema::remote_error.
#include <cstddef>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

struct cell {
    int index = 0;
    explicit cell(int i = 0) : index(i) {}
    int value() const { return index; }
    int host() const { return prema::rank(); }
    prema::task<long> later() const {
        co_await prema::yield();
        co_return long(index) * 2;
    }
    int fails_at_7() const {
        if (index == 7)
            throw std::runtime_error("cell 7 refuses");
        return index;
    }
    template <class Ar> void serialize(Ar& ar) { ar(index); }
};

constexpr std::size_t count = 1000;

prema::task<std::vector<prema::mobile_ptr<cell>>> make_cells() {
    co_return co_await prema::create_many<cell>(count, prema::placement::round_robin,
                                                [](std::size_t i) { return int(i); });
}

// Moves every third cell to another rank than the one it was on before, all at once.
prema::task<> shuffle(std::vector<prema::mobile_ptr<cell>> cells, std::size_t round) {
    std::vector<prema::task<>> moves;
    for (std::size_t i = 0; i < cells.size(); i += 3)
        moves.push_back(
            prema::migrate(cells[i], int((i + round + 1) % std::size_t(prema::ranks()))));
    co_await prema::when_all(std::move(moves));
}

} // namespace

TEST_CASE("reduce and gather over 1,000 objects that migrate meanwhile") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        check.done = prema::rank() != 0;
        if (check.done)
            co_return;
        auto cells = co_await make_cells();
        const long sum = long(count) * (count - 1) / 2;
        for (std::size_t round = 0; round < 3; ++round) {
            // The moves leave first: the reduce's guesses of where cells are go stale.
            auto [moved, total, all, twice] = co_await prema::when_all(
                shuffle(cells, round),
                prema::reduce(cells, prema::fn<&cell::value>, std::plus<long>{}),
                prema::gather(cells, prema::fn<&cell::value>),
                prema::reduce(cells, prema::fn<&cell::later>, std::plus<>{}));
            (void)moved;
            check(total == sum, "sum " + std::to_string(total));
            check(twice == 2 * sum, "coroutine handler sum " + std::to_string(twice));
            std::vector<int> expected(count);
            std::iota(expected.begin(), expected.end(), 0);
            check(all == expected, "gather order, round " + std::to_string(round));
        }
        // Round-robin homes, and the moved cells end up 3 ranks on from theirs.
        auto hosts = co_await prema::gather(cells, prema::fn<&cell::host>);
        std::size_t away = 0, n = std::size_t(prema::ranks());
        for (std::size_t i = 0; i < count; ++i)
            away += std::size_t(hosts[i]) != i % n;
        check(away == (n == 1 ? 0 : (count + 2) / 3), "cells moved: " + std::to_string(away));
        for (auto mp : cells)
            co_await prema::destroy(mp);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("gather order, an empty list, and a handler's error") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        check.done = prema::rank() != 0;
        if (check.done)
            co_return;
        auto cells = co_await make_cells();
        std::vector<prema::mobile_ptr<cell>> picked{cells[5], cells[2], cells[999], cells[5]};
        auto some = co_await prema::gather(picked, prema::fn<&cell::value>);
        check(some == std::vector<int>{5, 2, 999, 5}, "order of the list, repeats kept");

        auto none =
            co_await prema::gather(std::vector<prema::mobile_ptr<cell>>{}, prema::fn<&cell::value>);
        check(none.empty(), "gather of nothing");
        std::string what = "no exception";
        try {
            co_await prema::reduce(std::vector<prema::mobile_ptr<cell>>{}, prema::fn<&cell::value>,
                                   std::plus<>{});
        } catch (const prema::usage_error& e) {
            what = e.what();
        }
        check(what.find("no objects") != std::string::npos, "reduce of nothing: " + what);

        for (int g = 0; g < 2; ++g) {
            what = "no exception";
            try {
                if (g)
                    co_await prema::gather(cells, prema::fn<&cell::fails_at_7>);
                else
                    co_await prema::reduce(cells, prema::fn<&cell::fails_at_7>, std::plus<>{});
            } catch (const prema::remote_error& e) {
                what = e.what();
            }
            check(what.find("cell 7 refuses") != std::string::npos, "handler error: " + what);
        }
        check(co_await prema::reduce(cells, prema::fn<&cell::value>, std::plus<>{}) ==
                  int(count * (count - 1) / 2),
              "usable after the errors");
        for (auto mp : cells)
            co_await prema::destroy(mp);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}
