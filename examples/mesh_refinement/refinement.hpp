// One subdomain's constrained Delaunay refinement (CGAL's Delaunay_mesher_2), step by step so
// that the handler running it can pass yield points between steps.
//
// The subdomain's cell and the holes inside it are constraints, their sides split beforehand
// where the sizing field asks for it (by bisection, so a side shared by two subdomains gets the
// same points from both). Nothing is exchanged with neighbours. The result depends only on
// the domain and the subdomain index: refinement is deterministic. CGAL lives in
// refinement.cpp alone (it compiles slowly); a refinement is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "domain.hpp"

namespace mesh_refinement {

// A triangulation as flat arrays: x, y per point; three point indices per triangle,
// counter-clockwise.
struct triangle_mesh {
    std::vector<double> xy;
    std::vector<std::int32_t> triangles;

    std::size_t size() const { return triangles.size() / 3; }
    template <class Ar> void serialize(Ar& ar) { ar(xy, triangles); }
};

class refinement {
  public:
    // Builds the constrained triangulation of subdomain `index` (the domain must outlive this).
    // `min_angle_deg`: Delaunay refinement's angle bound, in (0, 20.7] where it is guaranteed.
    refinement(const domain& d, int index, double min_angle_deg);
    ~refinement();
    refinement(const refinement&) = delete;
    refinement& operator=(const refinement&) = delete;

    // Inserts up to `points` Steiner points; returns true once no triangle is bad.
    bool step(int points);
    std::uint64_t points_inserted() const;
    // The triangles inside the domain.
    triangle_mesh mesh() const;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace mesh_refinement
