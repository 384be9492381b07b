// The two implementations of heat2d, each run on every rank of MPI_COMM_WORLD. Both return
// the wall time of the time-stepping loop (setup excluded; from and to points every rank
// passes together), this process's CPU time in it, and the checksum (valid on rank 0).
#pragma once

#include <string>

#include <prema/config.hpp>

#include "grid.hpp"

namespace heat2d {

struct outcome {
    double seconds = 0;
    double cpu_s = 0; // this rank's process, all threads
    double checksum = 0;
    unsigned long long migrations = 0; // PREMA only: blocks moved by the --prema-lb policy
    int checkpoints = 0;               // PREMA only: checkpoints written during the run
    double checkpoint_s = 0;           // PREMA only: their wall time, part of `seconds`
};

// PREMA only: coordinated checkpoints of the blocks, and restarting from them.
struct checkpointing {
    int every = 0;                   // --checkpoint-every N: after every N steps (0: never)
    std::string dir = "heat2d.ckpt"; // --checkpoint-dir
    std::string restart;             // --restart DIR (or --prema-restart DIR)
    int kill_rank = -1;              // tests: this rank raises SIGKILL once it has done
    int kill_after = 0;              // at least this many steps (after that step's checkpoint)
};

// Plain MPI: each rank steps its run of blocks, exchanging edge rows with MPI_Isend/Irecv.
outcome run_mpi(const problem& p);

// PREMA: blocks are mobile objects that exchange edge rows by messages and step on their own.
// `rotate`: between segments of steps, every block migrates to the next rank.
outcome run_prema(const problem& p, const prema::config& cfg, bool rotate,
                  const checkpointing& c = {});

} // namespace heat2d
