// Embedding PREMA in an existing MPI code.
//
// The "legacy" application owns MPI: it initialises it, does its own collectives, starts a PREMA
// runtime on its communicator for one phase of irregular work, destroys the runtime, checks the
// result with MPI again, and finalizes MPI itself. PREMA never finalizes MPI it did not start.
//   mpirun -np 4 ./embedding [--prema-workers 2 ...]
#include <cstdio>

#include <mpi.h>

#include <prema/prema.hpp>

namespace {

// Legacy state: one value per rank, computed by the MPI code before PREMA starts.
long local_value = 0;

// What the PREMA phase fetched from the left neighbour.
long fetched = -1;

long value_of(int rank) {
    return 1000 + 7L * rank;
}

} // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_SERIALIZED) {
        if (rank == 0)
            std::fprintf(stderr, "embedding: MPI does not provide MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    // Phase 1: plain MPI.
    local_value = value_of(rank);
    long total_before = 0;
    MPI_Allreduce(&local_value, &total_before, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    // Phase 2: PREMA on the application's communicator. Each rank asks its left neighbour for
    // its value with prema::call; the neighbour's handler reads the legacy state.
    int rc = 0;
    try {
        prema::runtime rt(MPI_COMM_WORLD, prema::config::from_args(argc, argv));
        rc = rt.run([]() -> prema::task<> {
            int left = (prema::rank() + prema::ranks() - 1) % prema::ranks();
            fetched = co_await prema::call(left, []() { return local_value; });
        });
    } catch (const prema::usage_error& e) {
        if (rank == 0)
            std::fprintf(stderr, "embedding: %s\n", e.what());
        rc = 2;
    }
    // The runtime is gone; MPI is still ours.

    // Phase 3: plain MPI again. Every value was fetched exactly once, so the sums agree.
    int bad = rc != 0 || fetched != value_of((rank + size - 1) % size);
    int any_bad = 0;
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    long total_after = 0;
    MPI_Allreduce(&fetched, &total_after, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    bool ok = any_bad == 0 && total_after == total_before;
    if (rank == 0)
        std::printf("embedding: %d ranks, sum before %ld, sum of fetched values %ld: %s\n", size,
                    total_before, total_after, ok ? "ok" : "FAILED");

    MPI_Finalize();
    return ok ? 0 : 1;
}
