// Helpers the multi-rank tests share; they work outside a runtime phase, on MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int world_size() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}
