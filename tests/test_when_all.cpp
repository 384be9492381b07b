// prema::when_all: results in input order for tasks, rank calls and object calls, void
// placeholders, the first error in input order once all have finished, the empty cases,
// nesting, the object access handed to the operations, and operations really in flight at once
// (one that can finish only after another has run; 64 calls that take a fraction of the time of
// 64 sequential ones).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

int twice(int x) {
    return 2 * x;
}

int fail_on_odd(int x) {
    if (x % 2)
        throw std::runtime_error("odd " + std::to_string(x));
    return x;
}

prema::task<int> value(int x) {
    co_return x;
}

std::atomic<int> finished{0};

// Finishes after a round trip to the next rank, then throws if asked to.
prema::task<int> late(int x, bool fail) {
    int r = co_await prema::call((prema::rank() + 1) % prema::ranks(), prema::fn<&twice>, x);
    finished.fetch_add(1);
    if (fail)
        throw std::runtime_error("late " + std::to_string(x));
    co_return r;
}

prema::task<> fail_now(int x) {
    finished.fetch_add(1);
    throw std::runtime_error("early " + std::to_string(x));
    co_return;
}

struct item {
    int index = 0;
    explicit item(int i = 0) : index(i) {}
    template <class Ar> void serialize(Ar& ar) { ar(index); }
};

int index_of(const item& it) {
    return it.index;
}

int rank_of(const item&) {
    return prema::rank();
}

std::string name_of(const item& it, std::string prefix) {
    return prefix + std::to_string(it.index);
}

// Runs with exclusive access to its object, and awaits a call to another object beside one to
// itself: the latter, refused, must fail rather than wait for this handler to end.
prema::task<std::string> call_self_and_other(item&, prema::mobile_ptr<item> self,
                                             prema::mobile_ptr<item> other) {
    try {
        co_await prema::when_all(prema::call(other, prema::fn<&index_of>),
                                 prema::call(self, prema::fn<&index_of>));
    } catch (const prema::usage_error& e) {
        co_return e.what();
    }
    co_return "no exception";
}

// The first can end only once the second has run: awaited one after the other, they never end.
std::atomic<bool> released{false};
prema::task<int> wait_for_release() {
    while (!released.load())
        co_await prema::yield();
    co_return 1;
}
int release() {
    released.store(true);
    return 2;
}

void sleep_1ms(const item&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

} // namespace

TEST_CASE("when_all of tasks, rank calls and object calls, in input order") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), n = prema::ranks(), next = (me + 1) % n;

        auto [a, v, b] = co_await prema::when_all(value(1), prema::yield(), value(2));
        static_assert(std::is_same_v<decltype(v), prema::void_value>);
        check(a == 1 && b == 2, "tasks");

        std::vector<prema::task<int>> tasks;
        for (int i = 0; i < 10; ++i)
            tasks.push_back(value(i));
        auto values = co_await prema::when_all(std::move(tasks));
        check(values == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "vector of tasks");

        std::vector<decltype(prema::call(0, prema::fn<&twice>, 0))> calls;
        for (int i = 0; i < 20; ++i)
            calls.push_back(prema::call(i % n, prema::fn<&twice>, i));
        auto doubled = co_await prema::when_all(std::move(calls));
        bool in_order = doubled.size() == 20;
        for (int i = 0; in_order && i < 20; ++i)
            in_order = doubled[std::size_t(i)] == 2 * i;
        check(in_order, "vector of rank calls");

        std::vector<prema::task<prema::mobile_ptr<item>>> creations;
        for (int i = 0; i < 12; ++i)
            creations.push_back(prema::create<item>(i % n, i));
        auto items = co_await prema::when_all(std::move(creations));
        std::vector<decltype(prema::call(items[0], prema::fn<&name_of>, ""))> names;
        for (auto mp : items)
            names.push_back(prema::call(mp, prema::fn<&name_of>, "item "));
        auto got = co_await prema::when_all(std::move(names));
        check(got.size() == 12 && got[0] == "item 0" && got[11] == "item 11", "object calls");

        // Mixed: a void object call, a rank call, a task, a void task.
        std::vector<prema::task<>> migrations;
        for (auto mp : items)
            migrations.push_back(prema::migrate(mp, next));
        auto [m, t, x, s] = co_await prema::when_all(
            prema::when_all(std::move(migrations)), prema::call(next, prema::fn<&twice>, 21),
            value(7), prema::call(items[5], prema::fn<&sleep_1ms>));
        static_assert(std::is_same_v<decltype(m), prema::void_value>);
        static_assert(std::is_same_v<decltype(s), prema::void_value>);
        check(t == 42 && x == 7, "mixed");
        std::vector<decltype(prema::call(items[0], prema::fn<&rank_of>))> ranks;
        for (auto mp : items)
            ranks.push_back(prema::call(mp, prema::fn<&rank_of>));
        auto where = co_await prema::when_all(std::move(ranks));
        check(std::count(where.begin(), where.end(), next) == 12, "the migrations");

        for (auto mp : items)
            co_await prema::destroy(mp);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("when_all waits for every operation, then rethrows the first error in input order") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int n = prema::ranks();
        finished.store(0);
        // "late 1" fails after "early 2" in time, but comes first in input order.
        std::string what = "no exception";
        try {
            co_await prema::when_all(late(0, false), late(1, true), fail_now(2), late(3, false),
                                     late(4, true));
        } catch (const std::runtime_error& e) {
            what = e.what();
        }
        check(what == "late 1", "variadic: " + what);
        check(finished.load() == 5, "not all finished: " + std::to_string(finished.load()));

        std::vector<decltype(prema::call(0, prema::fn<&fail_on_odd>, 0))> calls;
        for (int i = 0; i < 8; ++i)
            calls.push_back(prema::call((i + 1) % n, prema::fn<&fail_on_odd>, i + 2));
        what = "no exception";
        try {
            co_await prema::when_all(std::move(calls));
        } catch (const prema::remote_error& e) {
            what = e.what();
        }
        check(contains(what, "odd 3") && !contains(what, "odd 5"), "vector: " + what);
        // Still usable after errors.
        check(co_await prema::call(0, prema::fn<&twice>, 4) == 8, "after the errors");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("when_all of nothing, and nested") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int n = prema::ranks();
        auto none = co_await prema::when_all(std::vector<prema::task<int>>{});
        check(none.empty(), "empty vector of int tasks");
        co_await prema::when_all(std::vector<prema::task<>>{});
        std::tuple<> nothing = co_await prema::when_all();
        (void)nothing;

        std::vector<prema::task<int>> inner;
        for (int i = 0; i < 5; ++i)
            inner.push_back(value(i));
        auto [pair, vec] = co_await prema::when_all(
            prema::when_all(value(1), prema::call(n - 1, prema::fn<&twice>, 3)),
            prema::when_all(std::move(inner)));
        check(std::get<0>(pair) == 1 && std::get<1>(pair) == 6, "nested tuple");
        check(vec == std::vector<int>{0, 1, 2, 3, 4}, "nested vector");

        // An awaitable made first and awaited later, moved in between.
        auto pending = prema::when_all(value(3), value(4));
        auto moved = std::move(pending);
        auto [c, d] = co_await std::move(moved);
        check(c == 3 && d == 4, "moved before awaiting");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("when_all hands the awaiting handler's object access to its operations") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), next = (me + 1) % prema::ranks();
        auto self = co_await prema::create<item>(next, 1);
        auto other = co_await prema::create<item>(me, 2);
        std::string w = co_await prema::call(self, prema::fn<&call_self_and_other>, self, other);
        check(contains(w, "call_self_and_other") && contains(w, "exclusive"), "refusal: " + w);
        co_await prema::destroy(self);
        co_await prema::destroy(other);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("when_all starts every operation before it waits for any") {
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0) {
            check.done = true;
            co_return;
        }
        const int last = prema::ranks() - 1;
        released.store(false);
        auto [a, b] = co_await prema::when_all(prema::call(last, prema::fn<&wait_for_release>),
                                               prema::call(last, prema::fn<&release>));
        check(a == 1 && b == 2, "results");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
}

TEST_CASE("64 calls through when_all take a fraction of the time of 64 in a row") {
    constexpr int objects = 64, tries = 3;
    prema::config cfg;
    cfg.workers = 8; // the handlers sleep: 8 of them at once on the target rank
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    checker check;
    double sequential = 1e9, concurrent = 1e9;
    int rc = rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0) {
            check.done = true;
            co_return;
        }
        const int target = prema::ranks() - 1;
        std::vector<prema::task<prema::mobile_ptr<item>>> creations;
        for (int i = 0; i < objects; ++i)
            creations.push_back(prema::create<item>(target, i));
        auto items = co_await prema::when_all(std::move(creations));
        using clock = std::chrono::steady_clock;
        // The best of a few tries each: a loaded machine may stall either one now and then.
        for (int t = 0; t < tries; ++t) {
            auto start = clock::now();
            for (auto mp : items)
                co_await prema::call(mp, prema::fn<&sleep_1ms>);
            auto middle = clock::now();
            std::vector<decltype(prema::call(items[0], prema::fn<&sleep_1ms>))> calls;
            for (auto mp : items)
                calls.push_back(prema::call(mp, prema::fn<&sleep_1ms>));
            co_await prema::when_all(std::move(calls));
            auto end = clock::now();
            sequential =
                std::min(sequential, std::chrono::duration<double>(middle - start).count());
            concurrent = std::min(concurrent, std::chrono::duration<double>(end - middle).count());
        }
        for (auto mp : items)
            co_await prema::destroy(mp);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    if (world_rank() == 0) {
        MESSAGE("64 calls of 1 ms: sequential " << sequential * 1e3 << " ms, when_all "
                                                << concurrent * 1e3 << " ms, ratio "
                                                << concurrent / sequential);
        CHECK(sequential > 0.064);
        CHECK(concurrent < 0.5 * sequential);
    }
}
