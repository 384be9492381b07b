// Mobile objects when things go wrong: a migration that cannot pack its object, load() read
// while someone holds the object, a handler that awaits its own object, and a job that goes
// quiet with coroutines still waiting. Every TEST_CASE is collective; the runtime's log is
// captured through an extra spdlog sink so that the tests can check what it says.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "log_capture.hpp"
#include "test_support.hpp"

#include "base/log.hpp"

namespace {

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// What the runtime logs at warning level and above on this rank.
log_capture& captured() {
    return captured_log(spdlog::level::warn);
}

template <class T> T bcast_from_0(T v) {
    MPI_Bcast(&v, sizeof v, MPI_BYTE, 0, MPI_COMM_WORLD);
    return v;
}

int all_ranks_max(int v) {
    int out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

// ---------------------------------------------------------------------------------------------
// An object whose packing fails on demand (item 2)

std::atomic<bool> refuse_packing{false};

struct fragile {
    std::int64_t value = 0;
    std::vector<char> ballast;
    template <class Ar> void serialize(Ar& ar) {
        if (Ar::is_saving::value && refuse_packing.load())
            throw std::runtime_error("fragile refuses to be packed");
        ar(value, ballast);
    }
};

void add(fragile& f, std::int64_t n) {
    f.value += n;
}

std::int64_t value_of(const fragile& f) {
    return f.value;
}

prema::mobile_ptr<fragile> own_fragile; // this rank's, for the others to ask for

prema::mobile_ptr<fragile> which_fragile() {
    return own_fragile;
}

// What `co_await (...)` throws, as "<what>", or "no exception".
#define OUTCOME(var, ...)                                                                          \
    do {                                                                                           \
        var = "no exception";                                                                      \
        try {                                                                                      \
            co_await (__VA_ARGS__);                                                                \
        } catch (const std::exception& x) {                                                        \
            var = x.what();                                                                        \
        }                                                                                          \
    } while (0)

} // namespace

TEST_CASE("a migration that cannot pack its object leaves it in place, usable") {
    captured();
    prema::config cfg;
    cfg.workers = 2;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), n = prema::ranks(), next = (me + 1) % n;
        auto mp = own_fragile = co_await prema::create<fragile>(me);
        for (int i = 0; i < 5; ++i)
            co_await prema::send(mp, prema::fn<&add>, std::int64_t(1));
        refuse_packing = true;
        std::string w;
        OUTCOME(w, prema::migrate(mp, next));
        check(contains(w, "fragile refuses to be packed"), "migrate: " + w);
        check(prema::where(mp) == me, "the object left although its migration failed");
        for (int i = 0; i < 5; ++i)
            co_await prema::send(mp, prema::fn<&add>, std::int64_t(1));
        check(co_await prema::call(mp, prema::fn<&value_of>) == 10,
              "messages before or after the failed migration were lost");
        co_await prema::quiescence(); // every rank has stopped migrating its own object

        // An acquire from another rank ships the object to the caller: that fails the same way.
        auto theirs = co_await prema::call(next, prema::fn<&which_fragile>);
        OUTCOME(w, prema::acquire(theirs, prema::exclusive));
        check(contains(w, "fragile refuses to be packed"), "acquire: " + w);
        co_await prema::quiescence();

        // Queued behind a guard, the migration runs when the guard dies (release_access,
        // noexcept): its caller gets the error there too.
        std::string behind_guard = "never ran";
        {
            auto g = co_await prema::acquire(mp);
            prema::spawn(
                [](prema::mobile_ptr<fragile> o, int to, std::string& out) -> prema::task<> {
                    OUTCOME(out, prema::migrate(o, to));
                }(mp, next, behind_guard));
            co_await prema::quiescence(); // the request waits behind the guard
        }
        co_await prema::quiescence();
        check(contains(behind_guard, "fragile refuses to be packed"),
              "migrate behind a guard: " + behind_guard);
        check(co_await prema::call(mp, prema::fn<&value_of>) == 10, "value after the guard");

        refuse_packing = false;
        co_await prema::migrate(mp, next);
        check(co_await prema::call(mp, prema::fn<&value_of>) == 10, "value after the migration");
        check(prema::where(mp) == next, "the object did not move once it could be packed");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(captured().take() == "");
}

TEST_CASE("an object larger than --prema-max-message-bytes does not migrate, and says why") {
    captured();
    prema::config cfg;
    cfg.max_message_bytes = 64 * 1024;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), next = (me + 1) % prema::ranks();
        auto mp = prema::make_mobile<fragile>();
        {
            auto g = co_await prema::acquire(mp);
            g->ballast.resize(256 * 1024);
        }
        std::string w;
        OUTCOME(w, prema::migrate(mp, next));
        check(contains(w, "--prema-max-message-bytes"), "migrate: " + w);
        check(prema::where(mp) == me, "the object left although it is too big to travel");
        co_await prema::send(mp, prema::fn<&add>, std::int64_t(3));
        check(co_await prema::call(mp, prema::fn<&value_of>) == 3, "the object stopped working");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(captured().take() == "");
}

namespace {
std::atomic<int> slow_runs{0};
void slow_add(fragile& f, std::int64_t n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    f.value += n;
    slow_runs.fetch_add(1);
}
} // namespace

TEST_CASE("the balancer skips an object it cannot pack and logs it") {
    constexpr int objects = 16, messages = 4;
    captured();
    prema::config cfg;
    cfg.lb = "work_stealing";
    cfg.lb_period_us = 200;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    std::vector<prema::mobile_ptr<fragile>> mine;
    refuse_packing = true;
    checker check;
    int rc = rt.run([&]() -> prema::task<> { // balancing is on: a policy is named
        if (prema::rank() == 0) {
            for (int i = 0; i < objects; ++i)
                mine.push_back(prema::make_mobile<fragile>());
            for (int k = 0; k < messages; ++k)
                for (auto mp : mine)
                    co_await prema::send(mp, prema::fn<&slow_add>, std::int64_t(1));
        }
        co_await prema::quiescence();
        for (auto mp : mine)
            check(prema::where(mp) == 0, "an object moved although it cannot be packed");
        check.done = true;
    });
    refuse_packing = false;
    CHECK(rc == 0);
    report(check);
    auto log = captured().take();
    if (prema::rank() == 0) {
        CHECK(slow_runs.load() == objects * messages);
        CHECK_MESSAGE(contains(log, "fragile refuses to be packed"), log);
    }
    CHECK(all_ranks_max(int(contains(log, "load balancing"))) == 1);
}

// ---------------------------------------------------------------------------------------------
// load() is never read while someone holds the object exclusively (item 3)

namespace {
std::atomic<bool> guard_held{false};
std::atomic<int> loads_while_held{0}, notices{0};

struct weighed {
    int value = 0;
    double load() const {
        if (guard_held.load())
            loads_while_held.fetch_add(1);
        return 1.0 + value % 3;
    }
    template <class Ar> void serialize(Ar& ar) { ar(value); }
};

void bump(weighed& w) {
    ++w.value;
}

int weighed_value(const weighed& w) {
    return w.value;
}

void notice() {
    notices.fetch_add(1);
}

prema::task<> send_bumps(prema::mobile_ptr<weighed> mp, int count) {
    for (int i = 0; i < count; ++i)
        co_await prema::send(mp, prema::fn<&bump>);
    co_await prema::send(0, prema::fn<&notice>);
}
} // namespace

TEST_CASE("load() is not read while a guard holds the object") {
    constexpr int bumps = 20;
    prema::config cfg;
    cfg.workers = 2;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    prema::mobile_ptr<weighed> mp;
    rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            mp = prema::make_mobile<weighed>();
        co_return;
    });
    mp = bcast_from_0(mp);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0) {
            auto g = co_await prema::acquire(mp);
            guard_held = true;
            g->value += 1000;
            // Messages arrive, on both workers, while the guard is held.
            for (int r = 0; r < prema::ranks(); ++r)
                co_await prema::send(r, prema::fn<&send_bumps>, mp, bumps);
            for (int spins = 0; spins < 100000 && notices.load() < prema::ranks(); ++spins)
                co_await prema::yield();
            for (int spins = 0; spins < 200 && loads_while_held.load() == 0; ++spins)
                co_await prema::yield();
            guard_held = false;
        }
        co_await prema::quiescence();
        if (prema::rank() == 0)
            check(co_await prema::call(mp, prema::fn<&weighed_value>) ==
                      1000 + bumps * prema::ranks(),
                  "messages were lost");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(loads_while_held.load() == 0);
}

// ---------------------------------------------------------------------------------------------
// A handler that awaits its own object (item 4)

namespace {
struct walker {
    int visits = 0;
    template <class Ar> void serialize(Ar& ar) { ar(visits); }
};

prema::task<int> move_self(walker& w, prema::mobile_ptr<walker> self, int to) {
    ++w.visits;
    co_await prema::migrate(self, to); // takes effect once this handler has ended
    ++w.visits;
    co_return prema::rank();
}

prema::task<> end_self(walker& w, prema::mobile_ptr<walker> self) {
    co_await prema::destroy(self); // as well: once this handler has ended
    ++w.visits;
}

int rank_of(const walker&) {
    return prema::rank();
}

int visits_of(const walker& w) {
    return w.visits;
}

// A task the handler awaits: it runs with the handler's access, so it is refused the same way.
prema::task<int> count_visits(prema::mobile_ptr<walker> self) {
    co_return co_await prema::call(self, prema::fn<&visits_of>);
}

prema::task<std::string> call_self(walker&, prema::mobile_ptr<walker> self) {
    try {
        co_await count_visits(self);
    } catch (const prema::usage_error& e) {
        co_return e.what();
    }
    co_return "no exception";
}

prema::task<std::string> acquire_self(walker&, prema::mobile_ptr<walker> self) {
    try {
        auto g = co_await prema::acquire(self, prema::shared);
    } catch (const prema::usage_error& e) {
        co_return e.what();
    }
    co_return "no exception";
}

prema::task<std::string> acquire_self_exclusively(const walker&, prema::mobile_ptr<walker> self) {
    try {
        auto g = co_await prema::acquire(self, prema::exclusive);
    } catch (const prema::usage_error& e) {
        co_return e.what();
    }
    co_return "no exception";
}

// Shared access asked from a shared handler is granted beside it.
prema::task<int> read_self(const walker&, prema::mobile_ptr<walker> self) {
    auto g = co_await prema::acquire(self, prema::shared);
    co_return co_await prema::call(self, prema::fn<&visits_of>) + g->visits;
}
} // namespace

namespace {
struct ledger {
    std::vector<int> entries;
    template <class Ar> void serialize(Ar& ar) { ar(entries); }
};

int enter(ledger& l, int v) {
    l.entries.push_back(v);
    return int(l.entries.size());
}
} // namespace

TEST_CASE("a call made first and awaited after a later one to the same object runs after it") {
    // The request is numbered when it is sent (awaited), not when it is made: numbered at
    // creation, the object held the second call behind the first, which its caller sends only
    // after the second call's reply, and the job went quiet with the entry waiting.
    captured();
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), next = (me + 1) % prema::ranks();
        auto mp = co_await prema::create<ledger>(next);
        auto first = prema::call(mp, prema::fn<&enter>, 1);
        int second = co_await prema::call(mp, prema::fn<&enter>, 2);
        int later = co_await first;
        check(second == 1 && later == 2, "the call awaited second did not run second");
        // Made and never awaited: it still runs, in its place in the order of sending.
        { auto dropped = prema::call(mp, prema::fn<&enter>, 3); }
        check(co_await prema::call(mp, prema::fn<&enter>, 4) == 4, "the dropped call did not run");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(captured().take() == "");
}

TEST_CASE("a handler that migrates its own object moves it once the handler has ended") {
    captured();
    prema::runtime rt(MPI_COMM_WORLD);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        const int me = prema::rank(), next = (me + 1) % prema::ranks();
        auto mp = co_await prema::create<walker>(me);
        int ran_on = co_await prema::call(mp, prema::fn<&move_self>, mp, next);
        check(ran_on == me, "the handler did not finish where it started");
        check(co_await prema::call(mp, prema::fn<&rank_of>) == next, "the object did not move");
        check(co_await prema::call(mp, prema::fn<&visits_of>) == 2, "the handler did not end");
        // Requested by a send: the object moves all the same.
        co_await prema::send(mp, prema::fn<&move_self>, mp, me);
        check(co_await prema::call(mp, prema::fn<&rank_of>) == me, "the object did not come back");
        co_await prema::call(mp, prema::fn<&end_self>, mp);
        std::string w;
        OUTCOME(w, prema::call(mp, prema::fn<&visits_of>));
        check(contains(w, "destroyed"), "after the handler that destroyed it: " + w);
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(captured().take() == "");
}

TEST_CASE("a handler that calls or acquires the object it holds gets usage_error") {
    captured();
    prema::config cfg;
    cfg.workers = 2;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    checker check;
    int rc = rt.run([&]() -> prema::task<> {
        auto mp = co_await prema::create<walker>((prema::rank() + 1) % prema::ranks());
        std::string w = co_await prema::call(mp, prema::fn<&call_self>, mp);
        auto object = fmt::format("object <{}:{}>", mp.creator(), mp.id().serial);
        check(contains(w, object) && contains(w, "call_self") && contains(w, "exclusive"),
              "call from an exclusive handler: " + w);
        w = co_await prema::call(mp, prema::fn<&acquire_self>, mp);
        check(contains(w, object) && contains(w, "acquire_self"), "acquire: " + w);
        w = co_await prema::call(mp, prema::fn<&acquire_self_exclusively>, mp);
        check(contains(w, object) && contains(w, "acquire_self_exclusively"),
              "exclusive acquire from a shared handler: " + w);
        check(co_await prema::call(mp, prema::fn<&read_self>, mp) == 0,
              "shared access from a shared handler");
        // The refused requests left no gap in this rank's sequence to the object.
        co_await prema::send(mp, prema::fn<&move_self>, mp, prema::rank());
        check(co_await prema::call(mp, prema::fn<&visits_of>) == 2,
              "a message after the refused requests did not run");
        check(co_await prema::call(mp, prema::fn<&rank_of>) == prema::rank(),
              "the object did not move to this rank");
        check.done = true;
    });
    CHECK(rc == 0);
    report(check);
    CHECK(captured().take() == "");
}

// ---------------------------------------------------------------------------------------------
// A job that goes quiet while coroutines still wait names what they wait for (item 4)

namespace {
std::optional<prema::object_guard<walker>> held;
std::atomic<int> answered{0};

// Shared handlers, so that both run (and wait) side by side on one object.
prema::task<> ask_held(const walker&, prema::mobile_ptr<walker> other) {
    co_await prema::call(other, prema::fn<&visits_of>);
    answered.fetch_add(1);
}

prema::task<> grab_held(const walker&, prema::mobile_ptr<walker> other) {
    auto g = co_await prema::acquire(other, prema::exclusive);
    ++g->visits;
    answered.fetch_add(1);
}
} // namespace

TEST_CASE("a quiescent job with handlers still waiting names what each awaits") {
    captured();
    prema::runtime rt(MPI_COMM_WORLD);
    prema::mobile_ptr<walker> blocked;
    rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            blocked = prema::make_mobile<walker>();
        co_return;
    });
    blocked = bcast_from_0(blocked);
    const int me = prema::rank();
    prema::mobile_ptr<walker> mine;
    // Rank 0 holds `blocked` beyond the phase; every rank's object asks for it, rank 0's
    // also acquires it: the phase ends quiescent with those handlers suspended.
    int rc = rt.run([&]() -> prema::task<> {
        mine = prema::make_mobile<walker>();
        if (me == 0)
            held.emplace(co_await prema::acquire(blocked));
        co_await prema::quiescence();
        co_await prema::send(mine, prema::fn<&ask_held>, blocked);
        if (me == 0)
            co_await prema::send(mine, prema::fn<&grab_held>, blocked);
    });
    auto log = captured().take();
    CHECK(rc == 1);
    auto object = fmt::format("object <{}:{}>", blocked.creator(), blocked.id().serial);
    auto waiter = fmt::format("object <{}:{}>", mine.creator(), mine.id().serial);
    bool names_call = contains(log, "ask_held") && contains(log, waiter) &&
                      contains(log, "visits_of") && contains(log, object) &&
                      contains(log, "rank 0");
    CHECK_MESSAGE(names_call, log);
    if (me == 0) {
        bool names_acquire = contains(log, "grab_held") && contains(log, "acquire");
        CHECK_MESSAGE(names_acquire, log);
    }
    // Released, the waiting handlers run to their end.
    rc = rt.run([&]() -> prema::task<> {
        if (me == 0)
            held.reset();
        co_return;
    });
    CHECK(rc == 0);
    CHECK(answered.load() == (me == 0 ? 2 : 1));
    CHECK(captured().take() == "");
}
