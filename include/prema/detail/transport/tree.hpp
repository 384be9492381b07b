// The tree PREMA's collectives travel along (all_reduce, broadcast, gather, reduce,
// create_many, the termination waves and the phase barrier): over n entries (the ranks, or a
// list of ranks with the root first), entry 0 is the root and every entry heads a contiguous run
// of entries, its subtree. The rest of an entry's run is split in two halves, the first the
// larger, each headed by a child. So:
// - a rank exchanges messages with at most three others (its parent, two children) whatever the
//   job's size. MPI makes its per-peer state on first contact (Open MPI: the pages of a peer's
//   shared-memory segment, about 50 KB each; a connection over a network), and a binomial
//   tree's root met ceil(log2 P) peers, more as the job grows;
// - the depth is floor(log2 n), no more than a binomial tree's;
// - folding an entry's own value, then its children's results in order, folds in entry order,
//   and results joined in child order come back in list order.
#pragma once

#include <array>
#include <cstddef>

namespace prema::detail {

// The entries [begin, end) of a subtree; begin heads it.
struct tree_run {
    std::size_t begin = 0, end = 0;
    std::size_t size() const noexcept { return end - begin; }
};

// The runs of the children of the entry heading `run`, in entry order (none, one or two).
struct tree_children {
    std::array<tree_run, 2> runs;
    std::size_t count = 0;

    explicit tree_children(tree_run run) noexcept {
        const std::size_t rest = run.size() > 0 ? run.size() - 1 : 0;
        const std::size_t mid = run.begin + 1 + (rest + 1) / 2;
        if (rest > 0)
            runs[count++] = {run.begin + 1, mid};
        if (mid < run.end)
            runs[count++] = {mid, run.end};
    }
    const tree_run* begin() const noexcept { return runs.data(); }
    const tree_run* end() const noexcept { return runs.data() + count; }
};

// Entry `i`'s place in the tree over `n` entries (i < n): its parent (none for the root) and
// its subtree. O(log n), no communication.
struct tree_place {
    static constexpr std::size_t no_parent = ~std::size_t{0};
    std::size_t parent = no_parent;
    tree_run run;

    tree_place(std::size_t i, std::size_t n) noexcept : run{0, n} {
        while (run.begin != i)
            for (const tree_run& child : tree_children(run))
                if (i < child.end) {
                    parent = run.begin;
                    run = child;
                    break;
                }
    }
    tree_children children() const noexcept { return tree_children(run); }
};

} // namespace prema::detail
