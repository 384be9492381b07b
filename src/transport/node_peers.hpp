// Which ranks of the job this rank reaches through shared memory, and which over a network:
// the eager size differs between the two (--prema-eager-bytes, --prema-remote-eager-bytes).
//
// Over shared memory a second MPI message costs little and MPI moves a large payload with one
// copy, so PREMA copies only small payloads into the message. Over a network (Open MPI's TCP
// transport, measured on the loopback: 2026-11-28) the split-phase header costs a transfer of
// its own, about as much as a small message's hop, and copying up to 128 KiB costs less.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include <mpi.h>

namespace prema::detail {

// The ranks of a communicator on this rank's node (the same MPI processor name), as a
// communicator of their own, freed with this. Not made with MPI_Comm_split_type, whose
// allgather and context agreement over the whole communicator reach log2 P partners (Open MPI:
// 276 KB of their shared-memory pages on rank 0 of 256): the names' hashes travel PREMA's tree
// (tree_allgather), and MPI_Comm_create_group agrees on the context within the node only.
class node_comm {
  public:
    // Collective over `comm`, which carries nothing else meanwhile.
    explicit node_comm(MPI_Comm comm);
    ~node_comm();
    node_comm(const node_comm&) = delete;
    node_comm& operator=(const node_comm&) = delete;

    MPI_Comm get() const noexcept { return node_; }
    // Their ranks in `comm`, sorted.
    const std::vector<int>& ranks() const noexcept { return ranks_; }

  private:
    MPI_Comm node_ = MPI_COMM_NULL;
    std::vector<int> ranks_;
};

class node_peers {
  public:
    // Not collective. Ranks on this rank's node (`node`, made from `comm`) are reached through
    // shared memory unless MPI was told not to use it (shared_memory_in_use()).
    node_peers(MPI_Comm comm, const node_comm& node);
    // `local`: the ranks reached through shared memory, sorted.
    node_peers(std::vector<int> local, bool any_remote) noexcept
        : local_(std::move(local)), any_remote_(any_remote) {}

    // Whether a message to `rank` travels over a network.
    bool remote(int rank) const noexcept;
    // Whether any rank of the job is remote: then every rank is remote to some other, and
    // receives messages of the remote eager size.
    bool any_remote() const noexcept { return any_remote_; }

  private:
    std::vector<int> local_; // sorted; empty when every rank is remote
    bool any_remote_ = false;
};

// False when Open MPI's `btl` setting leaves out its shared-memory transport (`vader`, `sm`),
// as `--mca btl tcp,self` or `--mca btl ^vader` do; true otherwise, and with any other MPI.
bool shared_memory_in_use();

// Whether an Open MPI `btl` list ("tcp,self", "^vader,openib", empty for the default)
// selects a shared-memory transport.
bool btl_list_has_shared_memory(std::string_view list) noexcept;

} // namespace prema::detail
