#include "grid.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace heat2d {

tile::tile(const problem& p, int block)
    : rows(p.block_rows), cols(p.cols), u(std::size_t(rows + 2) * std::size_t(cols + 2), 0.0) {
    // Two hot rectangles, one across a block boundary, so heat crosses blocks from the start.
    long height = long(p.blocks) * p.block_rows;
    for (int i = 1; i <= rows; ++i) {
        long gi = long(block) * p.block_rows + i - 1;
        for (int j = 1; j <= cols; ++j) {
            bool hot_a = gi >= height / 8 && gi < height / 4 && j > cols / 8 && j <= cols / 2;
            bool hot_b = gi >= height / 2 - height / 16 && gi < height / 2 + height / 16 &&
                         j > 5 * cols / 8 && j <= 7 * cols / 8;
            row(i)[j] = hot_a ? 100.0 : hot_b ? 50.0 : 0.0;
        }
    }
}

std::vector<double> tile::edge(int side) const {
    const double* r = row(side == 0 ? 1 : rows) + 1;
    return std::vector<double>(r, r + cols);
}

void tile::set_ghost(int side, const double* values) {
    std::memcpy(row(side == 0 ? 0 : rows + 1) + 1, values, std::size_t(cols) * sizeof(double));
}

void tile::step(double alpha, std::vector<double>& scratch) {
    if (scratch.size() != u.size())
        scratch.assign(u.size(), 0.0); // its ghost frame stays 0 until set_ghost fills it
    std::size_t w = std::size_t(cols + 2);
    for (int i = 1; i <= rows; ++i) {
        const double* up = row(i - 1);
        const double* c = row(i);
        const double* down = row(i + 1);
        double* out = scratch.data() + std::size_t(i) * w;
        for (int j = 1; j <= cols; ++j)
            out[j] = c[j] + alpha * (up[j] + down[j] + c[j - 1] + c[j + 1] - 4.0 * c[j]);
    }
    std::swap(u, scratch);
}

double tile::sum_of_squares() const {
    double s = 0;
    for (int i = 1; i <= rows; ++i)
        for (int j = 1; j <= cols; ++j)
            s += row(i)[j] * row(i)[j];
    return s;
}

double checksum(const std::vector<double>& block_sums) {
    double s = 0;
    for (double b : block_sums)
        s += b;
    return s;
}

} // namespace heat2d
