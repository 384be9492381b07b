// The tree along which gather, reduce and create_many spread over the ranks that take part: a
// list of k entries (one per rank, the caller's first) is the tree of
// prema/detail/transport/tree.hpp, entry 0 at the root, every subtree a contiguous run of
// entries. The caller sends its (at most two) children their runs and receives their results,
// each of them does the same with its run, and the results, joined in child order, come back in
// list order. The caller builds the list from its items' ranks (group_by_rank) in time and
// memory of the items, not of the job: a gather over ten objects at 100,000 ranks makes ten
// entries at most, not 100,000 empty lists.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "prema/detail/transport/tree.hpp"

namespace prema::detail {

// The runs [begin, end) of entry 0's children in a list of `k` entries, in list order.
inline std::vector<std::pair<std::size_t, std::size_t>> subtrees(std::size_t k) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (const tree_run& child : tree_children(tree_run{0, k}))
        out.emplace_back(child.begin, child.end);
    return out;
}

// The entries [begin, end) of `v`, moved out.
template <class T>
std::vector<T> take_run(std::vector<T>& v, std::pair<std::size_t, std::size_t> run) {
    return {std::make_move_iterator(v.begin() + std::ptrdiff_t(run.first)),
            std::make_move_iterator(v.begin() + std::ptrdiff_t(run.second))};
}

// Items grouped by the rank each goes to, in tree order: `me` first (with or without items),
// then every other rank that has items, ascending; within a rank, in item order.
struct rank_groups {
    std::vector<int> ranks;          // the tree's entries
    std::vector<std::size_t> starts; // ranks[g]'s items are order[starts[g], starts[g + 1])
    std::vector<std::size_t> order;  // item indices, in tree order

    std::size_t size(std::size_t g) const noexcept { return starts[g + 1] - starts[g]; }
    // The entry of `rank`, which is `me` or a rank some item goes to.
    std::size_t entry_of(int rank) const noexcept {
        if (rank == ranks[0])
            return 0;
        return std::size_t(std::lower_bound(ranks.begin() + 1, ranks.end(), rank) - ranks.begin());
    }
};

// In time and memory of the items, whatever the job's size: a count per rank when there are at
// least as many items as ranks (create_many of n >= P objects: O(n + P)), a sort otherwise
// (O(n log n), nothing per rank).
inline rank_groups group_by_rank(std::span<const int> rank_of, int me, int ranks) {
    rank_groups g;
    g.ranks.push_back(me);
    g.starts.push_back(0);
    if (std::size_t(ranks) <= rank_of.size()) {
        // Each rank's count, then where its next item goes in `order`.
        std::vector<std::size_t> next(static_cast<std::size_t>(ranks), 0);
        for (int r : rank_of)
            ++next[std::size_t(r)];
        std::size_t at = std::exchange(next[std::size_t(me)], 0);
        for (int r = 0; r < ranks; ++r)
            if (r != me && next[std::size_t(r)] > 0) {
                g.ranks.push_back(r);
                g.starts.push_back(at);
                at += std::exchange(next[std::size_t(r)], at);
            }
        g.starts.push_back(at);
        g.order.resize(rank_of.size());
        for (std::size_t i = 0; i < rank_of.size(); ++i)
            g.order[next[std::size_t(rank_of[i])]++] = i;
        return g;
    }
    std::vector<std::pair<int, std::size_t>> keyed(rank_of.size()); // me sorts first, as -1
    for (std::size_t i = 0; i < rank_of.size(); ++i)
        keyed[i] = {rank_of[i] == me ? -1 : rank_of[i], i};
    std::sort(keyed.begin(), keyed.end());
    g.order.reserve(keyed.size());
    for (auto [rank, i] : keyed) {
        if (rank != -1 && rank != g.ranks.back()) {
            g.ranks.push_back(rank);
            g.starts.push_back(g.order.size());
        }
        g.order.push_back(i);
    }
    g.starts.push_back(g.order.size());
    return g;
}

} // namespace prema::detail
