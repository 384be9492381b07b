// prema::create_many: where each placement puts the objects, pointers in index order, objects
// that answer calls, one batch per rank, and the refusals (a placement that names no rank, more
// objects than fit, none at all).
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

struct item {
    int index = -1;
    std::string label;
    item() = default;
    explicit item(int i, std::string l = "") : index(i), label(std::move(l)) {}
    template <class Ar> void serialize(Ar& ar) { ar(index, label); }
};

// Where the object lives and what it was built from.
std::tuple<int, int, std::string> describe(const item& it) {
    return {prema::rank(), it.index, it.label};
}

// Calls every object; checks that object i was built from i, on the rank `expected(i)` names.
template <class F>
prema::task<bool> all_in_place(const std::vector<prema::mobile_ptr<item>>& items, F expected,
                               const std::string& label) {
    std::vector<decltype(prema::call(items[0], prema::fn<&describe>))> calls;
    for (auto mp : items)
        calls.push_back(prema::call(mp, prema::fn<&describe>));
    auto got = co_await prema::when_all(std::move(calls));
    bool ok = got.size() == items.size();
    for (std::size_t i = 0; ok && i < got.size(); ++i)
        ok = got[i] == std::tuple(expected(i), int(i), label);
    co_return ok;
}

prema::task<> destroy_all(const std::vector<prema::mobile_ptr<item>>& items) {
    std::vector<prema::task<>> gone;
    for (auto mp : items)
        gone.push_back(prema::destroy(mp));
    co_await prema::when_all(std::move(gone));
}

std::uint64_t sum_over_ranks(std::uint64_t v) {
    std::uint64_t sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

int as_int(std::size_t i) {
    return int(i);
}

} // namespace

TEST_CASE("create_many places objects by block, round robin or function, in index order") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const auto p = std::size_t(prema::ranks());
        const std::size_t n = 10 + std::size_t(prema::rank()); // not a multiple of the rank count

        auto blocks = co_await prema::create_many<item>(n, prema::placement::block, as_int);
        check(co_await all_in_place(
                  blocks, [&](std::size_t i) { return int(i * p / n); }, ""),
              "block");
        // Contiguous and as even as can be: sizes differ by one at most.
        std::vector<int> sizes(p);
        for (std::size_t i = 0; i < n; ++i)
            ++sizes[i * p / n];
        check(*std::max_element(sizes.begin(), sizes.end()) -
                      *std::min_element(sizes.begin(), sizes.end()) <=
                  1,
              "uneven blocks");

        auto dealt = co_await prema::create_many<item>(n, prema::placement::round_robin, as_int);
        check(co_await all_in_place(
                  dealt, [&](std::size_t i) { return int(i % p); }, ""),
              "round robin");

        // A function, and a tuple of constructor arguments.
        auto last = co_await prema::create_many<item>(
            n, [p](std::size_t) { return int(p) - 1; },
            [](std::size_t i) { return std::tuple(int(i), std::string("tuple")); });
        check(co_await all_in_place(
                  last, [&](std::size_t) { return int(p) - 1; }, "tuple"),
              "function placement");

        auto none = co_await prema::create_many<item>(0, prema::placement::block, as_int);
        check(none.empty(), "no objects");

        co_await destroy_all(blocks);
        co_await destroy_all(dealt);
        co_await destroy_all(last);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("create_many sends one batch to each rank that gets objects") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    const int p = world_size();
    // Rank 0 creates 3 objects per rank, round robin; then one object by block (rank 0 only).
    auto before = prema::detail::create_batch_count();
    int rc = rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0) {
            auto items = co_await prema::create_many<item>(std::size_t(3 * p),
                                                           prema::placement::round_robin, as_int);
            check(co_await all_in_place(
                      items, [&](std::size_t i) { return int(i % std::size_t(p)); }, ""),
                  "round robin");
            co_await destroy_all(items);
        }
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(prema::detail::create_batch_count() - before == 1);

    before = prema::detail::create_batch_count();
    rc = rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            co_await destroy_all(
                co_await prema::create_many<item>(1, prema::placement::block, as_int));
    });
    CHECK(rc == 0);
    CHECK(prema::detail::create_batch_count() - before == (world_rank() == 0 ? 1u : 0u));
}

TEST_CASE("create_many refuses a placement that names no rank, and too many objects") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    auto before = prema::detail::create_batch_count();
    int rc = rt.run([&]() -> prema::task<> {
        const int p = prema::ranks();
        std::string what = "no exception";
        try {
            co_await prema::create_many<item>(
                8, [p](std::size_t i) { return i == 5 ? p : 0; }, as_int);
        } catch (const prema::usage_error& e) {
            what = e.what();
        }
        check(what.find("placement function put object 5 on rank " + std::to_string(p)) !=
                  std::string::npos,
              "out of range: " + what);

        what = "no exception";
        try {
            co_await prema::create_many<item>(std::size_t(-1), prema::placement::block, as_int);
        } catch (const prema::usage_error& e) {
            what = e.what();
        }
        check(what.find("objects on one rank") != std::string::npos, "huge n: " + what);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(sum_over_ranks(prema::detail::create_batch_count() - before) == 0); // nothing was sent
}
