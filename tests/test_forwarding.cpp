// Forwarding chains of 1..8 hops deliver, and the lazy directory update collapses them: the
// next message from the same sender goes straight to the object.
#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

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

std::uint64_t forwards_everywhere() {
    std::uint64_t mine = prema::detail::forward_count(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return all;
}
} // namespace

TEST_CASE("forwarding chains collapse to direct sends") {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    prema::runtime rt(MPI_COMM_WORLD);
    for (int hops = 1; hops <= std::min(8, size - 2); ++hops) {
        CAPTURE(hops);
        prema::mobile_ptr<item> mp;
        // The object walks 0 -> 1 -> ... -> hops+1, each move made by the rank holding it, so
        // rank 0 still believes it is on rank 1 and every rank on the way points one further.
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() != 0)
                co_return;
            mp = prema::make_mobile<item>();
            for (int r = 0; r <= hops; ++r)
                co_await prema::call(r, prema::fn<&move_on>, mp, r + 1);
            CHECK(prema::where(mp) == 1);
        }) == 0);
        auto before = forwards_everywhere();
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() == 0)
                CHECK(co_await prema::call(mp, prema::fn<&get>) == 7);
        }) == 0);
        auto first = forwards_everywhere();
        CHECK(first - before == std::uint64_t(hops));
        CHECK(rt.run([&]() -> prema::task<> {
            if (prema::rank() != 0)
                co_return;
            CHECK(prema::where(mp) == hops + 1);
            CHECK(co_await prema::call(mp, prema::fn<&get>) == 7);
        }) == 0);
        CHECK(forwards_everywhere() == first);
    }
}
