// The tree that PREMA's collectives spread along (tree.hpp): every subtree a contiguous run, at
// most two children, floor(log2 n) deep. And the list that gather, reduce and create_many build
// it over: its entries come from the items' ranks in tree order (the caller first, then
// ascending), each rank's items in item order, and nothing in it grows with the job's size.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <prema/detail/objects/rank_tree.hpp>

using prema::detail::group_by_rank;
using prema::detail::tree_children;
using prema::detail::tree_place;
using prema::detail::tree_run;

TEST_CASE("tree: contiguous subtrees, at most two children, floor(log2 n) deep, for 1 to 1100 "
          "entries") {
    for (std::size_t n = 1; n <= 1100; ++n) {
        bool good = true; // one check per n: millions of assertions are slow under sanitizers
        std::vector<std::size_t> depth(n, 0);
        std::size_t deepest = 0;
        for (std::size_t i = 0; i < n; ++i) {
            tree_place p(i, n);
            good &= p.run.begin == i && p.run.end <= n;
            good &= (i == 0) == (p.parent == tree_place::no_parent);
            if (i > 0) {
                good &= p.parent < i;
                depth[i] = depth[p.parent] + 1;
                deepest = std::max(deepest, depth[i]);
            }
            auto kids = p.children();
            good &= kids.count <= 2;
            // The children's runs tile the rest of the entry's run, in order.
            std::size_t at = i + 1;
            for (const tree_run& c : kids) {
                tree_place child(c.begin, n);
                good &=
                    c.begin == at && c.size() > 0 && child.parent == i && child.run.end == c.end;
                at = c.end;
            }
            good &= at == p.run.end;
            if (kids.count == 2) // the first half the larger
                good &= kids.runs[0].size() >= kids.runs[1].size();
        }
        CHECK_MESSAGE(good, "tree over ", n, " entries");
        CHECK(deepest == std::size_t(std::bit_width(n)) - 1); // floor(log2 n)
    }
}

TEST_CASE("rank tree: items grouped by rank, the caller first, then ascending") {
    const std::vector<int> rank_of{7, 3, 7, 99999, 3, 5};
    const auto g = group_by_rank(rank_of, 5, 100000);
    CHECK(g.ranks == std::vector<int>{5, 3, 7, 99999});
    CHECK(g.starts == std::vector<std::size_t>{0, 1, 3, 5, 6});
    CHECK(g.order == std::vector<std::size_t>{5, 1, 4, 0, 2, 3});
    for (std::size_t e = 0; e < g.ranks.size(); ++e)
        CHECK(g.entry_of(g.ranks[e]) == e);
    CHECK(g.size(1) == 2);
}

TEST_CASE("rank tree: the caller heads the tree without items of its own") {
    const auto g = group_by_rank(std::vector<int>{9, 4, 9}, 2, 10);
    CHECK(g.ranks == std::vector<int>{2, 4, 9});
    CHECK(g.starts == std::vector<std::size_t>{0, 0, 1, 3});
    CHECK(g.order == std::vector<std::size_t>{1, 0, 2});
    CHECK(g.size(0) == 0);
    const auto none = group_by_rank(std::vector<int>{}, 0, 1);
    CHECK(none.ranks == std::vector<int>{0});
    CHECK(none.starts == std::vector<std::size_t>{0, 0});
}

TEST_CASE("rank tree: a few items at a million ranks make a few entries") {
    // The caller's lists used to be indexed by rank: 2 x 24 bytes for every rank of the job
    // however few held items (4.8 MB and two loops over 100,000 ranks for a gather over ten
    // objects).
    constexpr int ranks = 1000000;
    std::vector<int> rank_of;
    for (int i = 0; i < 10; ++i)
        rank_of.push_back((i * 100003) % ranks);
    const auto g = group_by_rank(rank_of, ranks - 1, ranks);
    CHECK(g.ranks.size() == 11);
    CHECK(g.starts.size() == 12);
    CHECK(g.order.size() == 10);
    for (std::size_t e = 2; e < g.ranks.size(); ++e)
        CHECK(g.ranks[e - 1] < g.ranks[e]);
}

TEST_CASE("rank tree: many items per rank are counted, not sorted, into the same groups") {
    // At least as many items as ranks takes the counting path; the same items with one rank
    // more than items take the sorting path. Both must give the tree order.
    std::mt19937 rng(7);
    for (int ranks : {1, 3, 16}) {
        for (int me = 0; me < ranks; ++me) {
            std::vector<int> rank_of(64);
            for (auto& r : rank_of)
                r = int(rng() % unsigned(ranks));
            const auto counted = group_by_rank(rank_of, me, ranks);
            const auto sorted = group_by_rank(rank_of, me, int(rank_of.size()) + 1);
            CHECK(counted.ranks == sorted.ranks);
            CHECK(counted.starts == sorted.starts);
            CHECK(counted.order == sorted.order);
            for (std::size_t e = 0; e < counted.ranks.size(); ++e)
                for (std::size_t k = counted.starts[e]; k < counted.starts[e + 1]; ++k)
                    CHECK(rank_of[counted.order[k]] == counted.ranks[e]);
        }
    }
}
