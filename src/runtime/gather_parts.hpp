// Gathers a byte string from every rank to rank 0, for the trace at shutdown: any length per
// rank and in total (MPI counts are int, so a part travels in pieces of at most `piece` bytes
// after its 64-bit length), and rank 0 holds one part at a time. Runs while no PREMA message
// travels on `comm` (its point-to-point tag is not one the progress engine receives).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include <mpi.h>

namespace prema::detail {

inline constexpr std::size_t gather_piece_bytes = std::size_t{1} << 30;

// Collective on `comm`: rank 0 gets every rank's `part`, in rank order, through
// `take(rank, bytes)` (valid during the call); the other ranks' `take` is not called.
void gather_parts(MPI_Comm comm, std::string_view part,
                  const std::function<void(int, std::string_view)>& take,
                  std::size_t piece = gather_piece_bytes);

} // namespace prema::detail
