// The two implementations of heat2d, each run on every rank of MPI_COMM_WORLD. Both return
// the time of the time-stepping loop (setup excluded, the same on every rank) and the
// checksum (valid on rank 0).
#pragma once

#include <prema/config.hpp>

#include "grid.hpp"

namespace heat2d {

struct outcome {
    double seconds = 0;
    double checksum = 0;
};

// Plain MPI: each rank steps its run of blocks, exchanging edge rows with MPI_Isend/Irecv.
outcome run_mpi(const problem& p);

// PREMA: blocks are mobile objects that exchange edge rows by messages and step on their own.
outcome run_prema(const problem& p, const prema::config& cfg);

} // namespace heat2d
