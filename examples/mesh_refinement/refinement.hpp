// One subdomain's constrained Delaunay refinement (CGAL's Delaunay_mesher_2), step by step so
// that the handler running it can pass yield points between steps, and coupled to its
// neighbours through the vertices of the sides it shares with them.
//
// The subdomain's cell and the holes inside it are constraints. A cell side starts with its
// end points and the hole corners on it only; refinement splits it where triangles encroach on
// it, and step() reports every vertex it puts on a side so that the caller can send it to the
// neighbour across, which inserts the very same point with insert_on_side(). A side's
// vertices are named by their coordinate along the side (x on bottom and top, y on left and
// right): the other coordinate is the side's own, so both neighbours build bit-identical
// points. CGAL lives in refinement.cpp alone (it compiles slowly); a refinement is used by one
// thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "domain.hpp"

namespace mesh_refinement {

// Sides of a cell, in this order; side s of cell i is side opposite(s) of its neighbour.
enum side : int { bottom, right, top, left };
constexpr int opposite(int s) {
    return (s + 2) % 4;
}

// A vertex on a side, by its coordinate along it.
struct side_point {
    int side = 0;
    double along = 0;
    template <class Ar> void serialize(Ar& ar) { ar(side, along); }
};

// Every vertex of a subdomain's triangulation but the cell's corners: enough to rebuild it
// (after a migration) and to compare sides with the neighbours.
struct vertex_set {
    using side_list = std::array<std::vector<double>, 4>;
    side_list sides;              // strictly inside each side, ascending
    std::vector<double> interior; // x, y of every other vertex
    template <class Ar> void serialize(Ar& ar) { ar(sides, interior); }
};

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
    // Builds the constrained triangulation of subdomain `index` (the domain must outlive this)
    // from `start` (empty: the cell, its holes and the hole corners on its sides). Elements are
    // no larger than min(cap, the domain's sizing field). `min_angle_deg`: the angle bound, in
    // (0, 20.7] where Delaunay refinement is guaranteed to meet it.
    refinement(const domain& d, int index, double min_angle_deg, double cap,
               const vertex_set& start = {});
    ~refinement();
    refinement(const refinement&) = delete;
    refinement& operator=(const refinement&) = delete;

    // Inserts the point of `p` as a constrained vertex unless it is one already; returns
    // whether it did. Call restart() before stepping again.
    bool insert_on_side(side_point p);
    // A new size cap; takes effect at restart().
    void set_cap(double cap);
    // Looks for bad triangles and encroached sides again: after insertions or a new cap.
    void restart();
    // Inserts up to `points` Steiner points and appends those that landed on a cell side to
    // `on_sides`; returns true once no triangle is bad.
    bool step(int points, std::vector<side_point>& on_sides);

    std::uint64_t points_inserted() const;
    vertex_set vertices() const;
    // The triangles inside the domain.
    triangle_mesh mesh() const;

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace mesh_refinement
