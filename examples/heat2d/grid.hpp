// The computation both heat2d versions share: the problem, its split into blocks of rows, one
// block's cells and the explicit time step. Both versions call the same compiled step() and
// sum_of_squares(), in the same order per block, so their checksums agree bit for bit on any rank
// count.
#pragma once

#include <cstddef>
#include <vector>

#include "../common/placement.hpp"

namespace heat2d {

struct problem {
    int cols = 512;       // grid width
    int block_rows = 512; // rows per block; the grid is blocks x block_rows rows high
    int blocks = 8;
    int steps = 200;
    double alpha = 0.2; // diffusion number k dt / h^2; the explicit scheme is stable up to 0.25

    // Blocks go to ranks in contiguous runs, so most neighbours share a rank in both versions.
    int first_block(int rank, int ranks) const { return example::first_item(rank, ranks, blocks); }
    int owner(int block, int ranks) const { return example::owner_of(block, ranks, blocks); }
};

// One block's cells with a ghost frame: ghost columns stay 0 (the fixed boundary), ghost rows
// hold the neighbours' edge rows (0 at the top and bottom of the grid).
struct tile {
    int rows = 0, cols = 0;
    std::vector<double> u; // (rows + 2) x (cols + 2), row-major

    tile() = default;
    tile(const problem& p, int block); // the initial condition of block `block`

    double* row(int i) { return u.data() + std::size_t(i) * std::size_t(cols + 2); }
    const double* row(int i) const { return u.data() + std::size_t(i) * std::size_t(cols + 2); }

    // Edge rows as a neighbour needs them (`cols` values, ghost columns left out), and the
    // ghost rows they fill: side 0 is above row 1, side 1 below row `rows`.
    std::vector<double> edge(int side) const;
    void set_ghost(int side, const double* values);

    // One time step; `scratch` is the next state's storage (resized on first use).
    void step(double alpha, std::vector<double>& scratch);
    // Sum of the squared cells in row-major order: it falls as heat spreads and leaves through
    // the boundary, so it tells a wrong exchange apart, where the plain sum would be conserved.
    double sum_of_squares() const;

    template <class Archive> void serialize(Archive& ar) { ar(rows, cols, u); }
};

// The checksum both versions print: the blocks' sums of squares added in block order.
double checksum(const std::vector<double>& block_sums);

} // namespace heat2d
