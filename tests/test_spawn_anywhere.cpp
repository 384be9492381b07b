// prema::spawn_anywhere and prema::lb::demand over MPI: a rank that refused a thief sees it as
// demand and places its next task there; a tree of tasks spawned on one rank spreads over the
// others, each task runs exactly once, and quiescence ends the phase only after the last one.
// Every TEST_CASE is collective.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

void spin_for(std::chrono::microseconds d) {
    auto until = clock_type::now() + d;
    while (clock_type::now() < until) {
    }
}

std::int64_t sum_over_ranks(std::int64_t v) {
    std::int64_t sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

prema::config balanced() {
    prema::config cfg;
    cfg.lb = "work_stealing";
    cfg.lb_period_us = 200;
    return cfg;
}

// --- one task, placed on demand -------------------------------------------------------------

std::atomic<int> ran_here{0};

void note_run() {
    ran_here.fetch_add(1);
}

// Rank 0 stays busy in its entry until some rank has asked it for work in vain, then for `hold`
// longer, then spawns one task: it must go to such a rank. What rank 0 saw last is returned
// through `seen`.
prema::task<> place_on_demand(int& seen, std::chrono::milliseconds hold) {
    if (prema::rank() != 0)
        co_return;
    seen = prema::lb::demand();
    const auto give_up = clock_type::now() + std::chrono::seconds(10);
    while (seen == 0 && clock_type::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        co_await prema::yield_point();
        seen = prema::lb::demand();
    }
    const auto held = clock_type::now() + hold;
    while (clock_type::now() < held) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        co_await prema::yield_point();
    }
    seen = prema::lb::demand();
    prema::spawn_anywhere(prema::fn<&note_run>);
}

// Runs place_on_demand on a fresh runtime and checks that the one task ran off rank 0.
void check_placed_on_demand(const prema::config& cfg, std::chrono::milliseconds hold) {
    ran_here = 0;
    int seen = -1;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(rt.run([&] { return place_on_demand(seen, hold); }) == 0);
    const auto placed = prema::lb::current_stats().tasks_placed;
    if (world_rank() == 0) {
        CHECK(seen > 0);
        CHECK(placed == 1);
        CHECK(ran_here == 0);
    }
    CHECK(sum_over_ranks(ran_here) == 1);
}

// --- a tree of tasks ------------------------------------------------------------------------

constexpr int tree_size = 1023;
std::vector<std::atomic<int>> runs(tree_size);

// About 200 us per task; each spawns its two children.
void grow(int id) {
    runs[std::size_t(id)].fetch_add(1);
    spin_for(std::chrono::microseconds(200));
    for (int child : {2 * id + 1, 2 * id + 2})
        if (child < tree_size)
            prema::spawn_anywhere(prema::fn<&grow>, child);
}

std::int64_t local_runs() {
    std::int64_t n = 0;
    for (auto& r : runs)
        n += r.load();
    return n;
}

} // namespace

TEST_CASE("demand: a rank that refused a thief sees it, and spawn_anywhere places a task there") {
    if (world_size() < 2)
        return;
    check_placed_on_demand(balanced(), std::chrono::milliseconds(0));
}

// A quiet lifeline thief asks nothing more: its standing lifeline request must keep it counted
// as demand past the lapse of a refused ask (8 periods, 8 ms here; rank 0 holds 50 ms).
TEST_CASE("lifeline: a quiet thief stays demand for as long as its lifeline request stands") {
    if (world_size() < 2)
        return;
    prema::config cfg;
    cfg.lb = "lifeline";
    cfg.lb_period_us = 1000;
    check_placed_on_demand(cfg, std::chrono::milliseconds(50));
}

TEST_CASE("without a policy nobody asks: demand stays 0 and tasks run where spawned") {
    ran_here = 0;
    int demand_seen = -1;
    prema::runtime rt(MPI_COMM_WORLD, prema::config{});
    CHECK(rt.run([&]() -> prema::task<> {
        for (int i = 0; i < 10; ++i)
            prema::spawn_anywhere([] { note_run(); });
        co_await prema::quiescence();
        demand_seen = prema::lb::demand();
    }) == 0);
    CHECK(demand_seen == 0);
    CHECK(ran_here == 10);
    CHECK(prema::lb::current_stats().tasks_placed == 0);
}

TEST_CASE("a tree of tasks spawned on one rank spreads, runs each task once, and quiescence is "
          "exact") {
    for (auto& r : runs)
        r = 0;
    const auto cfg = balanced();
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    std::int64_t total_at_quiescence = -1;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() == 0)
            prema::spawn_anywhere(prema::fn<&grow>, 0);
        co_await prema::quiescence();
        total_at_quiescence = co_await prema::all_reduce(local_runs(), std::plus<>{});
    }) == 0);
    CHECK(total_at_quiescence == tree_size);

    std::vector<int> mine(tree_size), all(tree_size);
    for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = runs[i].load();
    MPI_Allreduce(mine.data(), all.data(), tree_size, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int wrong = 0;
    for (int n : all)
        wrong += n != 1;
    CHECK(wrong == 0);

    const auto stats = prema::lb::current_stats();
    const auto elsewhere = sum_over_ranks(world_rank() == 0 ? 0 : local_runs());
    const auto placed = sum_over_ranks(std::int64_t(stats.tasks_placed));
    const auto moved = sum_over_ranks(std::int64_t(stats.migrations_out));
    if (world_rank() == 0)
        MESSAGE(world_size() << " ranks: " << elsewhere << " of " << tree_size
                             << " tasks ran off rank 0; " << placed << " placed on demand, "
                             << moved << " moved unstarted by the policy");
    if (world_size() > 1) {
        CHECK(elsewhere > 0);
        CHECK(placed + moved > 0);
    }
}
