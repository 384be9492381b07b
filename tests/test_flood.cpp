// Floods: unfenced co_await prema::send loops, one rank to another and all to all, must deliver
// every message exactly once and keep each rank's peak resident memory bounded (back-pressure,
// src/transport/flow_control.hpp). Without it, 20 million 16-byte messages grew the receiver
// by the whole stream (about 800 MB of batches and MPI's unexpected messages).
//
// PREMA_TEST_FLOOD_MESSAGES sets the messages per sender (sanitizer builds use fewer).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>
#include <sys/resource.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

constexpr long peak_rss_limit_mib = 256;

long messages_per_sender() {
    const char* v = std::getenv("PREMA_TEST_FLOOD_MESSAGES");
    return v ? std::atol(v) : 20'000'000;
}

// One bit per (sender, index): set twice is a duplicate, left clear is a loss.
struct ledger {
    std::vector<std::vector<std::uint64_t>> bits;
    std::atomic<long> received{0}, duplicates{0};
    void reset(int senders, long per_sender) {
        bits.assign(std::size_t(senders),
                    std::vector<std::uint64_t>(std::size_t(per_sender + 63) / 64));
        received = 0;
        duplicates = 0;
    }
    long marked(int sender) const {
        long set = 0;
        for (auto w : bits[std::size_t(sender)])
            set += __builtin_popcountll(w);
        return set;
    }
} book;

struct note {
    std::int32_t from;
    std::int32_t pad;
    std::int64_t index;
};
static_assert(sizeof(note) == 16);

// One worker per rank: the handlers of one rank never run concurrently.
void mark(note n) {
    auto& word = book.bits[std::size_t(n.from)][std::size_t(n.index / 64)];
    auto bit = std::uint64_t{1} << (n.index % 64);
    book.duplicates += (word & bit) != 0;
    word |= bit;
    ++book.received;
}

long peak_rss_mib() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024;
}

prema::config one_worker() {
    prema::config cfg = prema::config::from_env();
    cfg.workers = 1;
    return cfg;
}

// This rank got indices 0..per_sender-1 exactly once from each rank `from(s)` says sent.
template <class From> void check_received(long per_sender, From from) {
    long expected = 0;
    for (int s = 0; s < world_size(); ++s) {
        long want = from(s) ? per_sender : 0;
        CAPTURE(s);
        CHECK(book.marked(s) == want);
        expected += want;
    }
    CHECK(book.received.load() == expected);
    CHECK(book.duplicates.load() == 0);
    long peak = peak_rss_mib();
    CAPTURE(peak);
    MESSAGE("peak RSS MiB: " << peak);
    CHECK(peak < peak_rss_limit_mib);
}

} // namespace

TEST_CASE("one rank floods another: exactly once, bounded memory") {
    const long n = messages_per_sender();
    const int me = world_rank();
    book.reset(world_size(), n);
    prema::runtime rt(MPI_COMM_WORLD, one_worker());
    CHECK(rt.run([&]() -> prema::task<> {
        if (me == 0)
            for (long i = 0; i < n; ++i)
                co_await prema::send(1, prema::fn<&mark>, note{0, 0, i});
    }) == 0);
    check_received(n, [&](int s) { return me == 1 && s == 0; });
}

TEST_CASE("every rank floods every other: exactly once, bounded memory") {
    const int p = world_size(), me = world_rank();
    const long n = messages_per_sender() / (p > 2 ? 8 : 1);
    book.reset(p, messages_per_sender());
    prema::runtime rt(MPI_COMM_WORLD, one_worker());
    CHECK(rt.run([&]() -> prema::task<> {
        for (long i = 0; i < n; ++i)
            for (int k = 1; k < p; ++k)
                co_await prema::send((me + k) % p, prema::fn<&mark>, note{me, 0, i});
    }) == 0);
    check_received(n, [&](int s) { return s != me; });
}
