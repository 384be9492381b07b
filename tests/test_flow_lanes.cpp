// The transport's state per destination costs memory per rank this rank exchanges messages
// with, not per rank of the job (issue 27: a rank's memory at rest does not depend on P).
// Before, flow_control held two lanes of about 48 bytes for every rank of the job (9.6 MB at
// 100,000 ranks), and each worker's batch_set a 32-byte lane and a 4-byte slot for every rank
// (3.6 MB per worker at 100,000 ranks).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <new>

#include <doctest/doctest.h>

#include "engine_support.hpp"
#include "transport/aggregator.hpp"
#include "transport/flow_control.hpp"

// ---- live heap bytes, counted by malloc's usable size at both ends -----------------------------
// The replacement operator new/delete below pair malloc with free; GCC cannot see that the
// replaced operator delete matches the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {
std::atomic<std::int64_t> live{0};
} // namespace

void* operator new(std::size_t n) {
    if (void* p = std::malloc(n ? n : 1)) {
        live.fetch_add(std::int64_t(malloc_usable_size(p)), std::memory_order_relaxed);
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    if (p)
        live.fetch_sub(std::int64_t(malloc_usable_size(p)), std::memory_order_relaxed);
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    operator delete(p);
}

namespace {

using prema::detail::flow_control;

std::int64_t live_bytes() {
    return live.load(std::memory_order_relaxed);
}

} // namespace

TEST_CASE("flow control: a rank never exchanged with costs a 4-byte slot") {
    constexpr int ranks = 100000;
    constexpr std::uint64_t budget = std::uint64_t{32} << 20, cost = 1000;
    const auto start = live_bytes();
    flow_control fc(ranks, budget, 33000);
    const auto idle = live_bytes() - start;
    MESSAGE("flow_control at " << ranks << " ranks, none exchanged with: " << idle << " bytes");
    CHECK(idle <= 4 * std::int64_t(ranks) + 4096); // the slots, and the empty queues

    // Sending to three ranks and hearing from one more makes lanes for those four only, each
    // starting with the base window.
    for (int dest : {1, 5000, ranks - 1})
        CHECK(fc.take(dest, cost));
    fc.matched(42, cost);
    CHECK(live_bytes() - start - idle < 4096);
    CHECK(fc.charged(5000) == cost);
    CHECK(fc.charged(2) == 0);
    CHECK(fc.matched_total() == cost);
    std::uint64_t sent = cost;
    while (fc.take(5000, cost))
        sent += cost;
    CHECK(sent + cost > fc.base_window());
    CHECK(sent <= fc.base_window());
    CHECK(fc.exposure_bound() == fc.base_window() * ranks + budget / 2 + 33000);
}

TEST_CASE("flow control: a new sender's base window is renewed unasked") {
    flow_control fc(64, std::uint64_t{32} << 20, 33000);
    const std::uint64_t base = fc.base_window(), cost = base / 4;
    for (int i = 0; i < 3; ++i)
        fc.matched(63, cost);
    REQUIRE(fc.grants_due());
    int to = -1;
    std::uint64_t limit = 0;
    fc.send_grants([&](int source, std::uint64_t l) {
        to = source;
        limit = l;
    });
    CHECK(to == 63);
    CHECK(limit == 3 * cost + base);
    CHECK_FALSE(fc.grants_due());
}

TEST_CASE("batch lanes: a rank a worker never sent to costs an eighth of a byte") {
    using namespace prema::detail;
    constexpr int ranks = 100000;
    prema::config cfg;
    message_pool messages(cfg.eager_bytes, 64);
    // The set's batches never leave (the destructor gives them back): the engine is only its
    // constructor's argument.
    progress_engine engine(MPI_COMM_SELF, cfg, messages,
                           self_engine_hooks(messages, [] { return true; }));
    const auto start = live_bytes();
    {
        batch_set batches(messages, engine, ranks, 0, cfg.aggregate_bytes);
        const auto idle = live_bytes() - start;
        MESSAGE("batch_set at " << ranks << " ranks, no batch open: " << idle << " bytes");
        CHECK(idle <= ranks / 8 + 4096);
        CHECK(std::int64_t(batches.lane_bytes()) <= idle);

        // Batches to three far-apart ranks make three chunks of lanes; the buffers come from
        // the pool's preallocated ones.
        for (int dest : {1, 5000, ranks - 1}) {
            std::size_t room = 0;
            CHECK(batches.begin(dest, room) != nullptr);
            CHECK(room >= batch_min_room);
            CHECK(batches.open(dest));
        }
        CHECK_FALSE(batches.open(2));
        CHECK_FALSE(batches.open(ranks - 2 - int(lane_chunk)));
        CHECK(batches.open_count() == 3);
        CHECK(batches.lane_bytes() == (ranks + lane_chunk - 1) / lane_chunk * sizeof(batch_lane*) +
                                          3 * lane_chunk * sizeof(batch_lane));
        CHECK(live_bytes() - start - idle <=
              std::int64_t(3 * lane_chunk * sizeof(batch_lane)) + 1024);
    }
    CHECK(live_bytes() - start <= 0);
}
