// The multi-step benchmark's moving feature (Barker's loosely synchronous adaptivity, thesis
// ch. 7.5): a band of `width` consecutive subdomains in row-major order, a front sweeping up
// the square, where elements must be no larger than `fine`. Each step it advances by `shift`
// subdomains: that many enter it (refined further) and as many leave it (coarsened), as in the
// thesis's "10% refine + 10% de-refine"; the others keep their load, which makes the previous
// step's measured loads a good predictor of the next step's.
#pragma once

#include <algorithm>
#include <cmath>

namespace mesh_refinement {

struct moving_front {
    int n = 1, width = 0, shift = 0;
    double fine = 1, coarse = 1;

    // `change`: the fraction of subdomains refined per step (as many are coarsened). The band
    // covers a quarter of the subdomains, or what moves if that is more.
    moving_front(int subdomains, double change, double fine_size, double coarse_size)
        : n(subdomains), fine(fine_size), coarse(coarse_size) {
        shift = std::max(1, int(std::lround(change * n)));
        width = std::min(n, std::max(shift, n / 4));
    }

    bool inside(int i, int step) const {
        int start = int((long(step) * shift) % n);
        return (i - start + n) % n < width;
    }
    double cap(int i, int step) const { return inside(i, step) ? fine : coarse; }
};

} // namespace mesh_refinement
