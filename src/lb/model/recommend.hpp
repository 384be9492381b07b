// Recommendations: the model's predicted makespan over a grid of objects per worker, quanta and
// neighbourhood sizes, and the best point of it.
#pragma once

#include <vector>

#include "lb/model/predict.hpp"

namespace prema::model {

struct scan_grid {
    std::vector<int> objects_per_worker{1, 2, 4, 8, 16, 32, 64};
    std::vector<double> quanta_s{1e-4, 2.5e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2};
    std::vector<int> neighbours{1, 2, 4, 8, 16}; // diffusion only; capped at ranks - 1
};

struct candidate {
    int objects_per_worker;
    double quantum_s;
    int neighbours;
    prediction p;
};

// Every grid point (neighbourhoods only for diffusion), the workload regranulated to each
// objects-per-worker value, everything else from `base`.
std::vector<candidate> scan(const workload& w, const machine& m, const settings& base,
                            const scan_grid& grid);

// The lowest predicted makespan; on ties (within 0.5 %) the coarsest decomposition, the
// largest quantum and the smallest neighbourhood, which cost least outside the model.
const candidate& best(const std::vector<candidate>& all);

} // namespace prema::model
