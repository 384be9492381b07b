// Blocking collectives along PREMA's tree (prema/detail/transport/tree.hpp), for start-up: a
// rank meets its parent and its two children, the ranks every later collective of PREMA's meets
// anyway. MPI's own collectives reach log2 P partners (recursive doubling), and a rank then
// holds pages of each partner's shared-memory segment for the rest of the job: one
// MPI_Allgather of 8 bytes per rank touched 244 KB of eight partners on a rank of 256
// (2026-11-29, Open MPI 4.1).
//
// Each is collective over a communicator that carries nothing else on tag_tree meanwhile.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

namespace prema::detail {

// Every rank passes a block of the same size and gets back all of them, rank r's at
// r * mine.size().
std::vector<std::uint64_t> tree_allgather(MPI_Comm comm, std::span<const std::uint64_t> mine);

// Every rank passes as many values and gets back each one's least over the ranks, in place.
// With none, a barrier: no rank returns before every rank has called it.
void tree_min(MPI_Comm comm, std::span<std::uint64_t> values);

} // namespace prema::detail
