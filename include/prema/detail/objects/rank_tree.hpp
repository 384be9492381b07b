// The tree along which gather, reduce and create_many spread over the ranks that take part:
// a list of k entries (one per rank, the caller's first) is a binomial tree in which entry 0 is
// the root and every subtree is a contiguous run of entries. Entry 0's children are the entries
// at 1, 2, 4, ... each heading the run up to the next power of two, so the caller sends and
// receives ceil(log2 k) messages, not k, and the results, joined in child order, come back in
// list order.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace prema::detail {

// The runs [begin, end) of entry 0's children in a list of `k` entries, in list order.
inline std::vector<std::pair<std::size_t, std::size_t>> subtrees(std::size_t k) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (std::size_t step = 1; step < k; step *= 2)
        out.emplace_back(step, std::min(2 * step, k));
    return out;
}

// The entries [begin, end) of `v`, moved out.
template <class T>
std::vector<T> take_run(std::vector<T>& v, std::pair<std::size_t, std::size_t> run) {
    return {std::make_move_iterator(v.begin() + std::ptrdiff_t(run.first)),
            std::make_move_iterator(v.begin() + std::ptrdiff_t(run.second))};
}

} // namespace prema::detail
