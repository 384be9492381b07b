#include "transport/tree_blocking.hpp"

#include <algorithm>
#include <cstddef>

#include "prema/detail/transport/tree.hpp"
#include "transport/wire_check.hpp"

namespace prema::detail {

namespace {
std::size_t size_of(MPI_Comm comm) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    return std::size_t(size);
}

tree_place place_of(MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    return {std::size_t(rank), size_of(comm)};
}

void send(std::span<const std::uint64_t> v, std::size_t to, MPI_Comm comm) {
    MPI_Send(v.data(), int(v.size()), MPI_UINT64_T, int(to), tag_tree, comm);
}
void receive(std::span<std::uint64_t> v, std::size_t from, MPI_Comm comm) {
    MPI_Recv(v.data(), int(v.size()), MPI_UINT64_T, int(from), tag_tree, comm, MPI_STATUS_IGNORE);
}
} // namespace

std::vector<std::uint64_t> tree_allgather(MPI_Comm comm, std::span<const std::uint64_t> mine) {
    const tree_place place = place_of(comm);
    const std::size_t w = mine.size();
    std::vector<std::uint64_t> all(w * size_of(comm));
    std::ranges::copy(mine, all.begin() + std::ptrdiff_t(w * place.run.begin));
    const std::span<std::uint64_t> blocks(all);
    // Up: each child's subtree is a contiguous run of ranks, so its blocks fill their place.
    for (const tree_run& child : place.children())
        receive(blocks.subspan(child.begin * w, child.size() * w), child.begin, comm);
    if (place.parent != tree_place::no_parent) {
        send(blocks.subspan(place.run.begin * w, place.run.size() * w), place.parent, comm);
        receive(blocks, place.parent, comm);
    }
    for (const tree_run& child : place.children())
        send(blocks, child.begin, comm);
    return all;
}

void tree_min(MPI_Comm comm, std::span<std::uint64_t> values) {
    const tree_place place = place_of(comm);
    std::vector<std::uint64_t> theirs(values.size());
    for (const tree_run& child : place.children()) {
        receive(theirs, child.begin, comm);
        std::ranges::transform(values, theirs, values.begin(),
                               [](std::uint64_t a, std::uint64_t b) { return std::min(a, b); });
    }
    if (place.parent != tree_place::no_parent) {
        send(values, place.parent, comm);
        receive(values, place.parent, comm);
    }
    for (const tree_run& child : place.children())
        send(values, child.begin, comm);
}

} // namespace prema::detail
