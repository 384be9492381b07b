#include "mesh_quality.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace mesh_refinement {

mesh_quality assess(const triangle_mesh& m, double angle_bound_deg) {
    // The mesher accepts a triangle when sin^2(smallest angle) >= sin^2(bound), computed in
    // floating point: allow for its rounding, nothing more.
    constexpr double tolerance_deg = 1e-7;
    mesh_quality q;
    q.triangles = m.size();
    q.points = m.xy.size() / 2;
    for (std::size_t t = 0; t < m.size(); ++t) {
        double x[3], y[3];
        for (int k = 0; k < 3; ++k) {
            auto p = std::size_t(m.triangles[3 * t + std::size_t(k)]);
            x[k] = m.xy[2 * p];
            y[k] = m.xy[2 * p + 1];
        }
        double cross = (x[1] - x[0]) * (y[2] - y[0]) - (y[1] - y[0]) * (x[2] - x[0]);
        q.area += cross / 2;
        q.inverted += cross <= 0;
        double smallest = 180;
        for (int k = 0; k < 3; ++k) {
            int a = (k + 1) % 3, b = (k + 2) % 3;
            double ux = x[a] - x[k], uy = y[a] - y[k], vx = x[b] - x[k], vy = y[b] - y[k];
            double angle = std::atan2(std::abs(ux * vy - uy * vx), ux * vx + uy * vy);
            smallest = std::min(smallest, angle * 180 / std::numbers::pi);
        }
        q.min_angle_deg = std::min(q.min_angle_deg, smallest);
        q.below_bound += smallest < angle_bound_deg - tolerance_deg;
    }
    return q;
}

} // namespace mesh_refinement
