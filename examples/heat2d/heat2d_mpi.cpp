// heat2d in plain MPI: the baseline for PREMA's overhead. Each step, every rank posts the
// receives of the two ghost rows that come from other ranks, sends its own edge rows, fills
// the ghost rows between its own blocks by copying, steps the blocks that need nothing from
// other ranks while the messages travel, then waits and steps the rest.
#include <mpi.h>

#include "../common/progress.hpp"
#include "../common/stopwatch.hpp"
#include "versions.hpp"

namespace heat2d {

outcome run_mpi(const problem& p) {
    int me = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int first = p.first_block(me, ranks), count = p.first_block(me + 1, ranks) - first;
    std::vector<tile> tiles;
    for (int b = first; b < first + count; ++b)
        tiles.emplace_back(p, b);
    std::vector<std::vector<double>> scratch(static_cast<std::size_t>(count));
    int above = first > 0 ? me - 1 : MPI_PROC_NULL; // neighbours own blocks first-1 and last+1
    int below = first + count < p.blocks ? me + 1 : MPI_PROC_NULL;
    enum { to_above, to_below };
    example::progress shown("heat2d mpi: step");

    MPI_Barrier(MPI_COMM_WORLD);
    example::stopwatch clock;
    for (int s = 0; s < p.steps; ++s) {
        tile &top = tiles.front(), &bottom = tiles.back();
        MPI_Request req[4];
        MPI_Irecv(top.row(0) + 1, p.cols, MPI_DOUBLE, above, to_below, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(bottom.row(bottom.rows + 1) + 1, p.cols, MPI_DOUBLE, below, to_above,
                  MPI_COMM_WORLD, &req[1]);
        MPI_Isend(top.row(1) + 1, p.cols, MPI_DOUBLE, above, to_above, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(bottom.row(bottom.rows) + 1, p.cols, MPI_DOUBLE, below, to_below, MPI_COMM_WORLD,
                  &req[3]);
        for (int b = 0; b + 1 < count; ++b) {
            tiles[std::size_t(b)].set_ghost(1, tiles[std::size_t(b) + 1].row(1) + 1);
            tiles[std::size_t(b) + 1].set_ghost(0, tiles[std::size_t(b)].row(p.block_rows) + 1);
        }
        // Blocks strictly inside the run need nothing from other ranks; the sends read the
        // edge blocks, so those step only once the messages are done.
        for (int b = 1; b + 1 < count; ++b)
            tiles[std::size_t(b)].step(p.alpha, scratch[std::size_t(b)]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        tiles.front().step(p.alpha, scratch.front());
        if (count > 1)
            tiles.back().step(p.alpha, scratch.back());
        if (me == 0)
            shown.report(s + 1, p.steps);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    outcome out{clock.wall_s(), clock.cpu_s()};

    std::vector<double> mine, all(static_cast<std::size_t>(p.blocks));
    for (auto& t : tiles)
        mine.push_back(t.sum_of_squares());
    std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts);
    for (int r = 0; r < ranks; ++r) {
        offsets[std::size_t(r)] = p.first_block(r, ranks);
        counts[std::size_t(r)] = p.first_block(r + 1, ranks) - offsets[std::size_t(r)];
    }
    MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    out.checksum = checksum(all);
    return out;
}

} // namespace heat2d
