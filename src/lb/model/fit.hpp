// The thesis's bi-modal approximation of a task-weight distribution (Barker 2004, Eqs 6.1-6.5):
// sorted weights split at index gamma into a light class (the first gamma) and a heavy class
// (the rest), each replaced by its mean; gamma minimises the summed squared error.
#pragma once

#include <cstddef>
#include <vector>

namespace prema::model {

struct two_class_fit {
    std::size_t gamma = 0;   // objects in the light class
    std::size_t objects = 0; // all objects
    double light_s = 0;      // mean of the light class
    double heavy_s = 0;      // mean of the heavy class (= light_s if it is empty)
    double light_min = 0, light_max = 0, heavy_min = 0, heavy_max = 0;
    double error = 0; // Error_alpha + Error_beta (s^2)
    double split = 0; // a weight above this belongs to the heavy class
};

// Least-squares split of `weights` (seconds, any order; none negative). With fewer than two
// objects, or all weights equal, everything is light. Throws usage_error on an empty list.
two_class_fit fit_two_classes(std::vector<double> weights);

} // namespace prema::model
