#include "transport/tree_sum.hpp"

#include <cstddef>

#include "prema/detail/transport/tree.hpp"

namespace prema::detail {

namespace {
constexpr int count = 4;

void add(tree_sum::values& to, const tree_sum::values& v) noexcept {
    for (std::size_t i = 0; i < to.size(); ++i)
        to[i] += v[i];
}
} // namespace

tree_sum::tree_sum(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm_, &rank);
    MPI_Comm_size(comm_, &size);
    const tree_place place{std::size_t(rank), std::size_t(size)};
    if (place.parent != tree_place::no_parent)
        parent_ = int(place.parent);
    for (const tree_run& child : place.children())
        children_[std::size_t(child_count_++)] = int(child.begin);
}

tree_sum::~tree_sum() {
    while (in_flight() && !test())
        ;
}

void tree_sum::start(const values& mine) {
    mine_ = mine;
    for (int i = 0; i < child_count_; ++i)
        MPI_Irecv(from_child_[std::size_t(i)].data(), count, MPI_UINT64_T,
                  children_[std::size_t(i)], tag_, comm_, &requests_[std::size_t(i)]);
    stage_ = stage::from_children;
}

bool tree_sum::complete(int first, int n) {
    int done = 0;
    MPI_Testall(n, &requests_[std::size_t(first)], &done, MPI_STATUSES_IGNORE);
    return done != 0;
}

bool tree_sum::test() {
    if (stage_ == stage::from_children) {
        if (!complete(0, child_count_))
            return false;
        for (int i = 0; i < child_count_; ++i) // in child order
            add(mine_, from_child_[std::size_t(i)]);
        if (parent_ < 0) {
            total_ = mine_;
        } else {
            // mine_ now holds the subtree's sum, sent while total_ receives rank 0's.
            MPI_Isend(mine_.data(), count, MPI_UINT64_T, parent_, tag_, comm_, &requests_[2]);
            MPI_Irecv(total_.data(), count, MPI_UINT64_T, parent_, tag_, comm_, &requests_[3]);
        }
        stage_ = stage::from_parent;
    }
    if (stage_ == stage::from_parent) {
        if (!complete(3, 1))
            return false;
        for (int i = 0; i < child_count_; ++i)
            MPI_Isend(total_.data(), count, MPI_UINT64_T, children_[std::size_t(i)], tag_, comm_,
                      &requests_[std::size_t(i)]);
        stage_ = stage::to_children;
    }
    if (stage_ == stage::to_children) {
        if (!complete(0, child_count_) || !complete(2, 1))
            return false;
        stage_ = stage::complete;
    }
    return stage_ == stage::complete;
}

} // namespace prema::detail
