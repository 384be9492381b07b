// What the mesh refinement example verifies on the final mesh, from the summaries rank 0
// collects (subdomain.hpp): each shared side has exactly the same vertices, bit for bit, in
// both subdomains; no angle is below the bound and no triangle is inverted (recomputed from the
// points, mesh_quality.hpp); the triangles' area is the domain's; every subdomain was refined;
// and every split message sent arrived.
#pragma once

#include <cstdint>
#include <vector>

#include "domain.hpp"
#include "subdomain.hpp"

namespace mesh_refinement {

struct totals {
    std::uint64_t triangles = 0, points = 0, below = 0, inverted = 0, steiner = 0;
    double min_angle = 180, area = 0;
    int unrefined = 0;
    int shared_sides = 0, nonconforming = 0;
    std::uint64_t side_vertices = 0; // on shared sides, counted once
    std::uint64_t splits_sent = 0, splits_received = 0, splits_inserted = 0;
    int max_depth = 0;
    int rebuilds = 0;
    double rebuild_s = 0;

    // Whether every check passed on a mesh of `d`.
    bool ok(const domain& d) const;
};

totals sum_up(const std::vector<summary>& subdomains, const domain& d);

} // namespace mesh_refinement
