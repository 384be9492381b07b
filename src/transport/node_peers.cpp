// Node-local and remote ranks (node_peers.hpp).
#include "transport/node_peers.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <xxhash.h>

#include "transport/tree_blocking.hpp"

namespace prema::detail {

bool btl_list_has_shared_memory(std::string_view list) noexcept {
    if (list.empty()) // Open MPI's default: every transport it finds
        return true;
    const bool excluding = list.front() == '^';
    if (excluding)
        list.remove_prefix(1);
    bool named = false;
    while (!list.empty()) {
        auto comma = list.find(',');
        auto item = list.substr(0, comma);
        named |= item == "vader" || item == "sm" || item == "smcuda";
        list.remove_prefix(comma == std::string_view::npos ? list.size() : comma + 1);
    }
    return excluding ? !named : named;
}

bool shared_memory_in_use() {
    // Open MPI's mpirun hands `--mca btl LIST` to each process as OMPI_MCA_btl, as it does a
    // user's own setting of that variable. Asking MPI_T instead initialises the tool interface,
    // which opens every component of Open MPI to register its variables: 3.7 MB more peak RSS
    // per rank for one string (2026-11-29). A list set only in an MCA parameter file is not
    // seen; --prema-eager-bytes then sets the eager size by hand.
    const char* list = std::getenv("OMPI_MCA_btl");
    return btl_list_has_shared_memory(list ? list : "");
}

node_comm::node_comm(MPI_Comm comm) {
    char name[MPI_MAX_PROCESSOR_NAME];
    int length = 0;
    MPI_Get_processor_name(name, &length);
    // 64 bits: two nodes' names collide with odds of 2^-64, and then cost only speed (the
    // eager size of node_peers, the progress mode's count of cores).
    const std::uint64_t mine = XXH3_64bits(name, std::size_t(length));
    const auto all = tree_allgather(comm, std::span(&mine, 1));
    for (std::size_t r = 0; r < all.size(); ++r)
        if (all[r] == mine)
            ranks_.push_back(int(r));
    MPI_Group job, node;
    MPI_Comm_group(comm, &job);
    MPI_Group_incl(job, int(ranks_.size()), ranks_.data(), &node);
    MPI_Comm_create_group(comm, node, 0, &node_);
    MPI_Group_free(&node);
    MPI_Group_free(&job);
}

node_comm::~node_comm() {
    MPI_Comm_free(&node_);
}

node_peers::node_peers(MPI_Comm comm, const node_comm& node) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    // The same on every rank: Open MPI's settings come from mpirun for the whole job.
    const bool shared = shared_memory_in_use();
    if (shared)
        local_ = node.ranks();
    any_remote_ = !shared ? size > 1 : int(node.ranks().size()) < size;
}

bool node_peers::remote(int rank) const noexcept {
    return any_remote_ && !std::binary_search(local_.begin(), local_.end(), rank);
}

} // namespace prema::detail
