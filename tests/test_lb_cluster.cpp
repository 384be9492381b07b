// Every load-balancing policy on a real job: all objects start on rank 0, every rank sends each
// of them numbered work items, and the policy spreads the objects while they work. Each item
// must run exactly once, in order per sender; every policy but `none` must move objects and
// run work on more than one rank.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/lb/scheduler.hpp>
#include <prema/prema.hpp>

namespace {

constexpr int objects = 64, items = 3;

struct job {
    std::vector<std::vector<std::int64_t>> seen; // per sender: item numbers, as they ran
    std::uint64_t ran_on = 0;                    // bit r: an item ran on rank r
    template <class Ar> void serialize(Ar& ar) { ar(seen, ran_on); }
};

// About 2 ms of work, with yield points so that balancing messages are served in between.
prema::task<> work(job& j, int from, std::int64_t n) {
    if (j.seen.empty())
        j.seen.resize(std::size_t(prema::ranks()));
    j.seen[std::size_t(from)].push_back(n);
    j.ran_on |= std::uint64_t{1} << prema::rank();
    for (int i = 0; i < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        co_await prema::yield_point();
    }
}

// {items run, items missing, duplicated or out of order, ranks the items ran on}.
std::tuple<std::int64_t, std::int64_t, std::uint64_t> report(const job& j) {
    std::int64_t count = 0, bad = 0;
    for (int from = 0; from < prema::ranks(); ++from) {
        static const std::vector<std::int64_t> nothing;
        auto& s = j.seen.empty() ? nothing : j.seen[std::size_t(from)];
        count += std::int64_t(s.size());
        bad += s.size() != std::size_t(items);
        for (std::size_t k = 0; k < s.size(); ++k)
            bad += s[k] != std::int64_t(k);
    }
    return {count, bad, j.ran_on};
}

std::uint64_t sum_over_ranks(std::uint64_t v) {
    std::uint64_t sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

} // namespace

TEST_CASE("every policy runs every item exactly once, in order, and spreads the work") {
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    prema::config cfg;
    cfg.lb_period_us = 500;
    // policy_names() needs no runtime and lists the same names in the same order everywhere.
    for (auto mode : {prema::progress_mode::dedicated, prema::progress_mode::inline_})
        for (const auto& name : prema::lb::policy_names()) {
            CAPTURE(name);
            CAPTURE(prema::to_string(mode));
            cfg.lb = name;
            cfg.progress = mode;
            // Two workers and a progress thread, or one worker that also drives MPI.
            cfg.workers = mode == prema::progress_mode::dedicated ? 2 : 1;
            prema::runtime rt(MPI_COMM_WORLD, cfg);

            // Phase 1: every object on rank 0 (nothing to balance: no work yet).
            std::vector<prema::mobile_ptr<job>> all(objects);
            CHECK(rt.run([&]() -> prema::task<> {
                if (prema::rank() == 0)
                    for (auto& mp : all)
                        mp = prema::make_mobile<job>();
                co_return;
            }) == 0);
            MPI_Bcast(all.data(), int(all.size() * sizeof all[0]), MPI_BYTE, 0, MPI_COMM_WORLD);

            // Phase 2: every rank sends every object `items` numbered items; the policy balances.
            auto start = std::chrono::steady_clock::now();
            CHECK(rt.run([&]() -> prema::task<> {
                for (std::int64_t k = 0; k < items; ++k)
                    for (auto mp : all)
                        co_await prema::send(mp, prema::fn<&work>, prema::rank(), k);
            }) == 0);
            double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            auto stats = prema::lb::current_stats();
            auto migrations = sum_over_ranks(stats.migrations_out);
            auto arrived = sum_over_ranks(stats.migrations_in);
            auto messages = sum_over_ranks(stats.messages);

            // Phase 3: balancing off, rank 0 checks every object.
            std::int64_t count = 0, bad = 0;
            std::uint64_t ran_on = 0;
            CHECK(rt.run([&]() -> prema::task<> {
                prema::lb::enable_balancing(false);
                if (prema::rank() != 0)
                    co_return;
                for (auto mp : all) {
                    auto [n, wrong, where] = co_await prema::call(mp, prema::fn<&report>);
                    count += n;
                    bad += wrong;
                    ran_on |= where;
                }
            }) == 0);
            if (me != 0)
                continue;
            int ranks_used = __builtin_popcountll(ran_on);
            MESSAGE(name << ", " << prema::to_string(mode) << " progress: " << seconds << " s, "
                         << migrations << " migrations (" << arrived << " in), " << messages
                         << " policy messages, work ran on " << ranks_used << " of " << size
                         << " ranks");
            CHECK(count == std::int64_t(objects) * items * size);
            CHECK(bad == 0);
            CHECK(arrived == migrations); // every object that left was installed somewhere
            if (name == "none" || size == 1) {
                CHECK(migrations == 0);
                CHECK(ranks_used == 1);
            } else {
                CHECK(migrations > 0);
                CHECK(ranks_used > 1);
            }
        }
}

namespace {

// An object whose destructor is slow: ship() destroys the local copy after posting it, so the
// shipping worker is still inside ship() when the object comes back.
struct slow_to_destroy {
    int value = 7;
    ~slow_to_destroy() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }
    template <class Ar> void serialize(Ar& ar) { ar(value); }
};

void hold(slow_to_destroy&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}
int value_of(const slow_to_destroy& s) {
    return s.value;
}

} // namespace

// Regression: ship() posts the object and only then records where it went. If the object came
// straight back and was installed here in between, that late record overwrote the newer one
// and messages bounced between the two ranks until they failed: set_remote now keeps the
// entry with the higher move count.
TEST_CASE("an object that bounces straight back stays reachable") {
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return;
    prema::config cfg;
    cfg.workers = 2; // one worker sits in ship(), the other installs the object when it returns
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    prema::mobile_ptr<slow_to_destroy> mp;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            mp = prema::make_mobile<slow_to_destroy>();
        co_return;
    }) == 0);
    MPI_Bcast(&mp, sizeof mp, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        co_await prema::send(mp, prema::fn<&hold>); // both migrations queue behind this
        // Requested in this order (when_all starts them in input order): two spawned tasks
        // could start on two workers in either order, and 0 then 1 leaves the object on 1.
        co_await prema::when_all(prema::migrate(mp, 1), prema::migrate(mp, 0));
    }) == 0);
    int where = -1, value = -1;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        where = prema::where(mp);
        try {
            value = co_await prema::call(mp, prema::fn<&value_of>);
        } catch (const prema::remote_error& e) {
            MESSAGE(std::string(e.what()));
        }
    }) == 0);
    if (me == 0) {
        CHECK(where == 0);
        CHECK(value == 7);
    }
}

namespace {

// How long `chatter` talks after its first call.
constexpr auto chat_for = std::chrono::seconds(5);

// A policy that never settles: on every call it messages the next rank, for chat_for.
struct chatter final : prema::lb::scheduler {
    void dist_balance() override {
        auto now = std::chrono::steady_clock::now();
        if (first == std::chrono::steady_clock::time_point{})
            first = now;
        if (now - first < chat_for)
            send_to((rank() + 1) % ranks(), std::uint8_t{1});
    }
    std::chrono::steady_clock::time_point first{};
};

} // namespace

// Regression: the progress engine polled quiescence waves only on sweeps where nothing else
// moved. Policy messages are not work, but a policy that sends one on every sweep (a period of
// 1 us here; heat_diffusion on a loaded node came close) moved something on every sweep, so a
// job whose work had ended did not end until the chatter stopped.
TEST_CASE("a policy's endless messages do not keep a finished phase from ending") {
    prema::lb::register_policy("test_chatter", [] { return std::make_unique<chatter>(); });
    for (auto mode : {prema::progress_mode::dedicated, prema::progress_mode::inline_}) {
        CAPTURE(prema::to_string(mode));
        prema::config cfg;
        cfg.lb = "test_chatter";
        cfg.lb_period_us = 1;
        cfg.progress = mode;
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        auto start = std::chrono::steady_clock::now();
        CHECK(rt.run([]() -> prema::task<> { co_return; }) == 0);
        CHECK(std::chrono::steady_clock::now() - start < chat_for / 2);
    }
}
