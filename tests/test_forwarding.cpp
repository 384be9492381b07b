// Routing to objects that moved: every install tells the object's home, a stale sender's
// message reaches the object through at most its old host, the next one and the home, and the
// lazy directory update then makes the sender's next message go straight to the object. Run on
// 10 ranks, and on 72, where an object touring every rank made the home's message exceed the
// old 64-forward limit: it was dropped and every later message from the home waited forever.
#include <doctest/doctest.h>
#include <mpi.h>

#include <type_traits>

#include <prema/prema.hpp>

#include "ledger.hpp"
#include "test_support.hpp"

namespace {
struct item {
    int value = 7;
    template <class Ar> void serialize(Ar& ar) { ar(value); }
};
int get(const item& i) {
    return i.value;
}

prema::task<> move_on(prema::mobile_ptr<item> mp, int next) {
    co_await prema::migrate(mp, next);
}

// Walks `mp` from rank 0 through ranks 1..last, each move made by the rank holding it, so that
// each rank on the way points one further (rank 0 and the others learn nothing from it).
prema::task<> tour(prema::mobile_ptr<item> mp, int last) {
    for (int r = 0; r < last; ++r)
        co_await prema::call(r, prema::fn<&move_on>, mp, r + 1);
}

// Every rank gets rank 0's pointer (the directories learn nothing from it).
template <class T> void share(prema::mobile_ptr<T>& mp) {
    static_assert(std::is_trivially_copyable_v<prema::mobile_ptr<T>>);
    MPI_Bcast(&mp, int(sizeof mp), MPI_BYTE, 0, MPI_COMM_WORLD);
}

prema::config one_inline_worker() {
    prema::config cfg = prema::config::from_env(); // the ctest variants set PREMA_*
    cfg.progress = prema::progress_mode::inline_;
    cfg.workers = 1;
    return cfg;
}
} // namespace

TEST_CASE("a stale sender reaches a moved object in at most three forwards, then directly") {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    prema::runtime rt(MPI_COMM_WORLD, one_inline_worker());
    for (int hops = 1; hops <= std::min(8, size - 2); ++hops) {
        CAPTURE(hops);
        prema::mobile_ptr<item> mp;
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() != 0)
                co_return;
            mp = prema::make_mobile<item>();
            co_await tour(mp, hops + 1);
        }) == 0);
        share(mp);
        // The home heard of every install.
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() == 0)
                CHECK(prema::where(mp) == hops + 1);
            co_return;
        }) == 0);
        auto before = forwards_everywhere();
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() == 0)
                CHECK(co_await prema::call(mp, prema::fn<&get>) == 7);
        }) == 0);
        CHECK(forwards_everywhere() == before);
        // Rank 1 still points at rank 2: 2 -> 3 -> home -> hops + 1 (2 -> 3 when hops is 2).
        before = forwards_everywhere();
        CHECK(rt.run([&mp]() -> prema::task<> {
            if (prema::rank() == 1)
                CHECK(co_await prema::call(mp, prema::fn<&get>) == 7);
        }) == 0);
        auto first = forwards_everywhere();
        CHECK(first - before == std::uint64_t(hops == 1 ? 0 : hops == 2 ? 1 : 3));
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() != 1)
                co_return;
            CHECK(prema::where(mp) == hops + 1);
            CHECK(co_await prema::call(mp, prema::fn<&get>) == 7);
        }) == 0);
        CHECK(forwards_everywhere() == first);
    }
}

namespace {
using test_ledger::ledger;
using test_ledger::note;
using test_ledger::totals;
prema::task<> pass_on(prema::mobile_ptr<ledger> mp, int next) {
    co_await prema::migrate(mp, next);
}
} // namespace

TEST_CASE("messages to an object that toured every rank arrive exactly once and in order") {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    prema::runtime rt(MPI_COMM_WORLD, one_inline_worker());
    constexpr long per_sender = 20;
    prema::mobile_ptr<ledger> mp;
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        mp = prema::make_mobile<ledger>();
        for (int r = 0; r < size - 1; ++r)
            co_await prema::call(r, prema::fn<&pass_on>, mp, r + 1);
    }) == 0);
    share(mp);

    // The home alone: its directory is exact, so no forward at all.
    auto before = forwards_everywhere();
    CHECK(rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        for (long i = 0; i < per_sender; ++i)
            co_await prema::send(mp, prema::fn<&note>, 0, i);
        auto t = co_await prema::call(mp, prema::fn<&totals>);
        CHECK(t == std::vector<long>{per_sender, 0});
    }) == 0);
    CHECK(forwards_everywhere() == before);

    // Every other rank at once, each pointing one rank further along the tour (rank 0 sends
    // again, from where it left off).
    before = forwards_everywhere();
    CHECK(rt.run([&]() -> prema::task<> {
        long first = prema::rank() == 0 ? per_sender : 0;
        for (long i = first; i < first + per_sender; ++i)
            co_await prema::send(mp, prema::fn<&note>, prema::rank(), i);
        co_await prema::quiescence();
        if (prema::rank() == 0) {
            auto t = co_await prema::call(mp, prema::fn<&totals>);
            CHECK(t == std::vector<long>{per_sender * (size + 1), 0});
        }
    }) == 0);
    // Short routes: at most three forwards per message (stale host, next host, home); a chain
    // along the tour would average size / 2.
    auto forwards = forwards_everywhere() - before;
    CHECK(forwards <= std::uint64_t(3 * per_sender * size));
}
