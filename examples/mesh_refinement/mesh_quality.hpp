// What the checks of the mesh refinement example measure on a subdomain's mesh, independently
// of the mesher: angles (from the points, not from CGAL's criterion), orientation and area.
#pragma once

#include <cstdint>

#include "refinement.hpp"

namespace mesh_refinement {

struct mesh_quality {
    std::uint64_t triangles = 0, points = 0;
    std::uint64_t below_bound = 0; // triangles with an angle below the bound
    std::uint64_t inverted = 0;    // triangles that are not counter-clockwise
    double min_angle_deg = 180;
    double area = 0;
    template <class Ar> void serialize(Ar& ar) {
        ar(triangles, points, below_bound, inverted, min_angle_deg, area);
    }
};

mesh_quality assess(const triangle_mesh& m, double angle_bound_deg);

} // namespace mesh_refinement
