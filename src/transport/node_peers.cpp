// Node-local and remote ranks (node_peers.hpp).
#include "transport/node_peers.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

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

node_peers::node_peers(MPI_Comm comm) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int on_node = 0;
    MPI_Comm_size(node, &on_node);
    // The same on every rank: Open MPI's settings come from mpirun for the whole job.
    const bool shared = shared_memory_in_use();
    if (shared) {
        std::vector<int> node_ranks(static_cast<std::size_t>(on_node));
        std::iota(node_ranks.begin(), node_ranks.end(), 0);
        local_.resize(node_ranks.size());
        MPI_Group node_group, job_group;
        MPI_Comm_group(node, &node_group);
        MPI_Comm_group(comm, &job_group);
        MPI_Group_translate_ranks(node_group, on_node, node_ranks.data(), job_group, local_.data());
        MPI_Group_free(&node_group);
        MPI_Group_free(&job_group);
        std::sort(local_.begin(), local_.end());
    }
    MPI_Comm_free(&node);
    any_remote_ = !shared ? size > 1 : on_node < size;
}

bool node_peers::remote(int rank) const noexcept {
    return any_remote_ && !std::binary_search(local_.begin(), local_.end(), rank);
}

} // namespace prema::detail
