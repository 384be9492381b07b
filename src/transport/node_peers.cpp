// Node-local and remote ranks (node_peers.hpp).
#include "transport/node_peers.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace prema::detail {

namespace {
// Open MPI's value of the MPI_T control variable `name` (a string), or empty.
std::string mpi_string_setting(const char* name) {
    // At MPI's own thread level: Open MPI lowers what MPI_Query_thread reports to the level
    // asked here.
    int level = MPI_THREAD_SINGLE, provided = 0;
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS)
        return {};
    std::string value;
    int count = 0;
    MPI_T_cvar_get_num(&count);
    for (int i = 0; i < count && value.empty(); ++i) {
        char found[256];
        int found_length = sizeof found, verbosity = 0, binding = 0, scope = 0;
        int description_length = 0;
        MPI_Datatype type = MPI_DATATYPE_NULL;
        MPI_T_enum values = MPI_T_ENUM_NULL;
        if (MPI_T_cvar_get_info(i, found, &found_length, &verbosity, &type, &values, nullptr,
                                &description_length, &binding, &scope) != MPI_SUCCESS ||
            type != MPI_CHAR || std::string_view(found) != name)
            continue;
        MPI_T_cvar_handle handle;
        int length = 0;
        if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &length) != MPI_SUCCESS)
            break;
        std::string text(std::size_t(std::max(length, 1)), '\0');
        if (MPI_T_cvar_read(handle, text.data()) == MPI_SUCCESS)
            value = text.c_str();
        MPI_T_cvar_handle_free(&handle);
        if (value.empty())
            break;
    }
    MPI_T_finalize();
    return value;
}
} // namespace

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
    // Open MPI reads its settings once, at MPI_Init; the scan of its variables takes
    // milliseconds, too long for every runtime a program starts.
    static const bool in_use = btl_list_has_shared_memory(mpi_string_setting("btl"));
    return in_use;
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
