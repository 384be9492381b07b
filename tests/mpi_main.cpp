// main() of every test binary: doctest on every rank of an MPI job. Each rank runs the same
// test cases (multi-rank tests are collective); the job fails if any rank fails.
// TEST_MPI_THREAD_LEVEL=funneled initialises MPI with MPI_THREAD_FUNNELED instead of
// MPI_THREAD_SERIALIZED, as an application that embeds the runtime may.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cstdlib>
#include <string_view>

#include <doctest/doctest.h>
#include <mpi.h>

int main(int argc, char** argv) {
    const char* level = std::getenv("TEST_MPI_THREAD_LEVEL");
    int provided = 0;
    MPI_Init_thread(&argc, &argv,
                    level && std::string_view(level) == "funneled" ? MPI_THREAD_FUNNELED
                                                                   : MPI_THREAD_SERIALIZED,
                    &provided);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    doctest::Context ctx(argc, argv);
    if (rank != 0)
        ctx.setOption("reporters", "console"); // every rank reports its own failures
    int failed = ctx.run() != 0;
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed;
}
