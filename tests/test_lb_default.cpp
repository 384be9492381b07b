// Naming a policy (--prema-lb) balances from the start, without enable_balancing(true);
// enable_balancing(false) holds it off, and left on to the end it makes rank 0 warn once at
// shutdown. Every TEST_CASE is collective; the runtime's log is captured at warning level.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "log_capture.hpp"
#include "test_support.hpp"

namespace {

struct job {
    int runs = 0;
    template <class Ar> void serialize(Ar& ar) { ar(runs); }
};

// About 2 ms, with yield points so that the policy's messages are served in between.
prema::task<> work(job& j) {
    ++j.runs;
    for (int i = 0; i < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        co_await prema::yield_point();
    }
}

std::uint64_t sum_over_ranks(std::uint64_t v) {
    std::uint64_t sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

// Rank 0 creates `objects` objects and sends each `items` work items: all the work starts there.
prema::task<> overload_rank_0(int objects, int items) {
    if (prema::rank() != 0)
        co_return;
    std::vector<prema::mobile_ptr<job>> all;
    for (int i = 0; i < objects; ++i)
        all.push_back(prema::make_mobile<job>());
    for (int k = 0; k < items; ++k)
        for (auto mp : all)
            co_await prema::send(mp, prema::fn<&work>);
}

// About 200 us of work without a yield point.
void short_work(job& j) {
    ++j.runs;
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    while (std::chrono::steady_clock::now() < until) {
    }
}

const std::string never_balanced = "never balanced";

// Runs `phases` in one runtime under `policy`, then returns how many times rank 0's log said
// that the policy never balanced (on the other ranks: 0), counted once the runtime is gone.
int warnings_after(const std::string& policy,
                   const std::vector<std::function<prema::task<>()>>& phases) {
    auto& log = captured_log(spdlog::level::warn);
    log.take();
    {
        prema::config cfg;
        cfg.lb = policy;
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        for (auto& phase : phases)
            CHECK(rt.run(phase) == 0);
    }
    auto text = log.take();
    int n = 0;
    for (auto at = text.find(never_balanced); at != std::string::npos;
         at = text.find(never_balanced, at + 1))
        ++n;
    return n;
}

prema::task<> hold_off() {
    prema::lb::enable_balancing(false);
    co_return;
}
prema::task<> let_go() {
    prema::lb::enable_balancing(true);
    co_return;
}
prema::task<> nothing() {
    co_return;
}

} // namespace

TEST_CASE("a named policy moves objects off an overloaded rank without enable_balancing") {
    captured_log(spdlog::level::warn); // installed before any runtime logs
    if (world_size() < 2)
        return;
    prema::config cfg;
    cfg.lb = "work_stealing";
    cfg.lb_period_us = 200;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(rt.run([] { return overload_rank_0(8 * world_size(), 4); }) == 0);
    auto stats = prema::lb::current_stats();
    auto out = sum_over_ranks(stats.migrations_out), in = sum_over_ranks(stats.migrations_in);
    CHECK(out > 0);
    CHECK(out == in);
}

TEST_CASE("a busy rank answers steal requests between short items, not a quantum later") {
    // Inline progress, one worker: rank 0's worker is the only thread that could answer a steal.
    // It runs 400 items of 200 us back to back (80 ms), with a quantum longer than all of them:
    // it must still serve the network between items, or the idle ranks get nothing.
    if (world_size() < 2)
        return;
    prema::config cfg;
    cfg.lb = "work_stealing";
    cfg.lb_period_us = 200;
    cfg.progress = prema::progress_mode::inline_;
    cfg.quantum_us = 10'000'000;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(rt.run([]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        std::vector<prema::mobile_ptr<job>> all;
        for (int i = 0; i < 40; ++i)
            all.push_back(prema::make_mobile<job>());
        for (int k = 0; k < 10; ++k)
            for (auto mp : all)
                co_await prema::send(mp, prema::fn<&short_work>);
    }) == 0);
    auto in = sum_over_ranks(prema::rank() == 0 ? 0 : prema::lb::current_stats().migrations_in);
    CHECK(in > 0);
}

// Ask when dry: each rank's only worker runs one 300 ms handler; the balancing period is 5 s, so
// that no periodic tick can fall near the handler's end. Once the handler ends, the policy must
// be asked to balance at once (where a receiver-initiated policy sends its steal request), not
// at the next period, seconds later. A probe policy notes when dist_balance() is first called
// after the handler ended.
namespace {
using steady = std::chrono::steady_clock;
std::atomic<steady::rep> dry_at{0}, balanced_after_dry{0};

class dry_probe final : public prema::lb::scheduler {
    void dist_balance() override {
        if (dry_at == 0)
            return;
        steady::rep none = 0;
        balanced_after_dry.compare_exchange_strong(none, steady::now().time_since_epoch().count());
    }
};

void long_work(job& j) {
    ++j.runs;
    auto until = steady::now() + std::chrono::milliseconds(300);
    while (steady::now() < until) {
    }
    dry_at = steady::now().time_since_epoch().count();
}
} // namespace

TEST_CASE("a rank that runs dry balances at once, not at its next period") {
    prema::lb::register_policy("dry_probe", [] { return std::make_unique<dry_probe>(); });
    dry_at = 0;
    balanced_after_dry = 0;
    prema::config cfg;
    cfg.lb = "dry_probe";
    cfg.lb_period_us = 5'000'000;
    cfg.workers = 1;
    cfg.progress = prema::progress_mode::dedicated; // ticks go on while the worker is busy
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(rt.run([]() -> prema::task<> {
        (void)prema::send(prema::make_mobile<job>(), prema::fn<&long_work>);
        co_return;
    }) == 0);
    // The phase ends at quiescence, found by the wave that the same sweep runs after its tick:
    // a rank that waited for its next period would not balance in this phase at all.
    REQUIRE(dry_at != 0);
    const auto gap = steady::duration(balanced_after_dry - dry_at);
    const double ms = std::chrono::duration<double, std::milli>(gap).count();
    MESSAGE("rank " << world_rank() << " balanced " << ms << " ms after running dry; "
                    << prema::lb::current_stats().dry_ticks << " tick(s) ahead of the period");
    CHECK(balanced_after_dry != 0);
    CHECK(ms < 50);
    CHECK(prema::lb::current_stats().dry_ticks == 1);
}

// Steal latency: rank 0's only worker runs one 10 ms handler that passes a yield point every
// few microseconds, under inline progress and the default quantum (1 ms), so it is the only
// thread that could answer. Rank 1's probe policy asks rank 0 every 200 us, as a thief sends
// steal requests; rank 0's answers at once, saying whether the long handler was running. An
// answer that waited for the quantum to run out would take up to 1 ms; served from the yield
// points it takes about 50 us (the workers' busy poll interval) plus the network.
namespace {
std::atomic<bool> long_running{false};
struct probe_message {
    std::uint32_t seq = 0;
    std::uint8_t answer = 0; // 0: a request, 1: its answer
    std::uint8_t during = 0; // in an answer: the long handler was running
};
constexpr std::uint32_t max_probes = 400;
std::vector<steady::time_point> asked_at(max_probes);
std::vector<double> waits_during_ms; // rank 1: waits for answers given while the handler ran

class steal_probe final : public prema::lb::scheduler {
    std::uint32_t next_ = 0;
    void dist_balance() override {
        auto now = steady::now();
        if (prema::rank() != 1 || next_ == max_probes ||
            (next_ > 0 && now - asked_at[next_ - 1] < std::chrono::microseconds(200)))
            return;
        asked_at[next_] = now;
        send_to(0, probe_message{next_++, 0, 0});
    }
    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<probe_message>(bytes);
        if (!m.answer) {
            send_to(from, probe_message{m.seq, 1, std::uint8_t(long_running.load())});
        } else if (m.during) {
            std::chrono::duration<double, std::milli> wait = steady::now() - asked_at[m.seq];
            waits_during_ms.push_back(wait.count());
        }
    }
};

prema::task<> long_with_yield_points(job& j) {
    ++j.runs;
    long_running = true;
    auto until = steady::now() + std::chrono::milliseconds(10);
    while (steady::now() < until)
        co_await prema::yield_point();
    long_running = false;
}
} // namespace

TEST_CASE("a steal request to a rank whose only worker runs a long handler is answered from its "
          "yield points, not a quantum later") {
    if (world_size() != 2)
        return;
    prema::lb::register_policy("steal_probe", [] { return std::make_unique<steal_probe>(); });
    waits_during_ms.clear();
    prema::config cfg;
    cfg.lb = "steal_probe";
    cfg.lb_period_us = 100;
    cfg.workers = 1;
    cfg.progress = prema::progress_mode::inline_;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    REQUIRE(cfg.quantum_us == 1000); // the default quantum: 1 ms
    CHECK(rt.run([]() -> prema::task<> {
        if (prema::rank() == 0)
            co_await prema::send(prema::make_mobile<job>(), prema::fn<&long_with_yield_points>);
    }) == 0);
    if (world_rank() != 1)
        return;
    std::sort(waits_during_ms.begin(), waits_during_ms.end());
    REQUIRE(waits_during_ms.size() >= 10); // about 10 ms / 200 us, less the network's share
    const double median = waits_during_ms[waits_during_ms.size() / 2];
    MESSAGE(waits_during_ms.size() << " requests answered while the handler ran; median wait "
                                   << median << " ms, longest " << waits_during_ms.back() << " ms");
    CHECK(median < 0.2);
}

// ...but at most once per period: rank 0's one object is hit `volleys` times, each hit answered
// through the next rank, so that rank 0 runs dry after every hit (busy 1 ms, then idle until the
// answer is back), hundreds of times within a few periods of 100 ms. Each dry spell may not
// bring a balancing tick of its own.
namespace {
constexpr int volleys = 200;

void volley(job& j, int left);

void bounce(prema::mobile_ptr<job> ball, int left) {
    (void)prema::send(ball, prema::fn<&volley>, left);
}

void volley(job& j, int left) {
    ++j.runs;
    auto until = steady::now() + std::chrono::milliseconds(1);
    while (steady::now() < until) {
    }
    if (left > 0)
        (void)prema::send((prema::rank() + 1) % prema::ranks(), prema::fn<&bounce>, prema::self(j),
                          left - 1);
}
} // namespace

TEST_CASE("a rank that runs dry again and again balances ahead of its period once per period") {
    prema::lb::register_policy("dry_probe", [] { return std::make_unique<dry_probe>(); });
    prema::config cfg;
    cfg.lb = "dry_probe";
    cfg.lb_period_us = 100'000;
    cfg.workers = 1;
    cfg.progress = prema::progress_mode::dedicated;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    const auto start = steady::now();
    CHECK(rt.run([]() -> prema::task<> {
        if (prema::rank() == 0)
            (void)prema::send(prema::make_mobile<job>(), prema::fn<&volley>, volleys);
        co_return;
    }) == 0);
    const double periods = std::chrono::duration<double>(steady::now() - start).count() / 0.1;
    const auto early = prema::lb::current_stats().dry_ticks;
    MESSAGE("rank " << world_rank() << ": " << early << " tick(s) ahead of the period in "
                    << periods << " periods");
    if (world_rank() == 0)
        CHECK(early >= 1);
    CHECK(double(early) <= periods + 1);
}

// The lifeline policy over MPI: idle ranks ask, go quiet, and are pushed work along their
// lifelines; every object moved arrives once, and quiescence still ends the phase although
// quiet ranks leave lifeline requests open at the end.
TEST_CASE("lifeline moves objects off an overloaded rank and the job finishes") {
    if (world_size() < 2)
        return;
    prema::config cfg;
    cfg.lb = "lifeline";
    cfg.lb_period_us = 200;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    for (int phase = 0; phase < 2; ++phase) { // the second starts with lifelines still open
        CAPTURE(phase);
        const auto before = prema::lb::current_stats();
        CHECK(rt.run([] { return overload_rank_0(8 * world_size(), 4); }) == 0);
        const auto after = prema::lb::current_stats();
        auto out = sum_over_ranks(after.migrations_out - before.migrations_out);
        auto in = sum_over_ranks(after.migrations_in - before.migrations_in);
        auto messages = sum_over_ranks(after.messages - before.messages);
        if (world_rank() == 0)
            MESSAGE("lifeline, " << world_size() << " ranks, phase " << phase << ": " << out
                                 << " objects moved, " << messages << " policy messages");
        CHECK(out > 0);
        CHECK(out == in);
    }
}

TEST_CASE("enable_balancing(false) left on to the end: rank 0 warns once at shutdown") {
    const int expected = world_rank() == 0 ? 1 : 0;
    SUBCASE("held off in the only phase") {
        CHECK(warnings_after("work_stealing", {hold_off}) == expected);
    }
    SUBCASE("held off for a placement phase, never let go") {
        CHECK(warnings_after("diffusion", {hold_off, nothing, nothing}) == expected);
    }
    SUBCASE("held off, then on, then off again: it did balance") {
        CHECK(warnings_after("work_stealing", {hold_off, let_go, hold_off}) == 0);
    }
    SUBCASE("a phase ended balancing, then held off to check placement") {
        CHECK(warnings_after("work_stealing", {nothing, hold_off}) == 0);
    }
    SUBCASE("never held off") {
        CHECK(warnings_after("work_stealing", {nothing}) == 0);
    }
    SUBCASE("no policy named") {
        CHECK(warnings_after("none", {hold_off}) == 0);
    }
}
