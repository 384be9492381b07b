// The input of the mesh refinement example: a unit square with rectangular holes, cut into a
// grid of subdomains, and the sizing field that says how fine the mesh must be where.
//
// Everything here is plain data computed the same way on every rank from the same options, so
// a subdomain is named by its index alone. Holes are axis-parallel, like the grid, so that a
// subdomain's boundary has no angle below 90 degrees and Delaunay refinement can meet the angle
// bound everywhere.
#pragma once

#include <vector>

namespace mesh_refinement {

struct rect {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    double area() const { return (x1 - x0) * (y1 - y0); }
};

// Element size: shrinks linearly towards a curve (the wave y = wave_y + wave_a sin(2 pi
// wave_k x), an interface the solver must resolve) and a point (a re-entrant hole corner), from
// hmax far away to hmin on them. `grade` is how fast it grows with distance.
struct sizing_field {
    double hmin = 0, hmax = 0, grade = 0;
    double wave_y = 0, wave_a = 0, wave_k = 0;
    double point_x = 0, point_y = 0;

    double operator()(double x, double y) const;
};

class domain {
  public:
    // Fails (std::invalid_argument) unless hmin <= hmax and subdomains >= 1.
    domain(int subdomains, double hmin, double hmax, double grade);

    int subdomains() const { return nx_ * ny_; }
    int columns() const { return nx_; }
    int rows() const { return ny_; }
    const sizing_field& size() const { return size_; }
    const std::vector<rect>& holes() const { return holes_; }

    // Subdomain i's cell, row-major from the bottom left.
    rect cell(int i) const;
    // The subdomain across side s (refinement.hpp's numbering: bottom, right, top, left) of
    // subdomain i, or -1 on the square's boundary.
    int neighbour(int i, int s) const;
    // Holes clipped to `c`: the parts of `c` outside the domain (positive area only).
    std::vector<rect> holes_in(const rect& c) const;
    // Area of the domain inside subdomain i (its cell minus holes).
    double area(int i) const;
    double area() const;
    // What the application can know before meshing: the triangles expected in subdomain i,
    // the integral of 1 / (area of an equilateral triangle of side h) over it (midpoint rule).
    // `cap` bounds the element size as in refinement.hpp.
    double expected_triangles(int i, double cap = 1) const;

  private:
    int nx_ = 1, ny_ = 1;
    sizing_field size_;
    std::vector<rect> holes_;
};

} // namespace mesh_refinement
