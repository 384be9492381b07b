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

class node_peers {
  public:
    // Collective over `comm` (MPI_Comm_split_type). Ranks on this rank's node are reached
    // through shared memory unless MPI was told not to use it (shared_memory_in_use()).
    explicit node_peers(MPI_Comm comm);
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
