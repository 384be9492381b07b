#include "checks.hpp"

#include <algorithm>
#include <cmath>

namespace mesh_refinement {

bool totals::ok(const domain& d) const {
    return below == 0 && inverted == 0 && unrefined == 0 && nonconforming == 0 &&
           splits_sent == splits_received && std::abs(area - d.area()) <= 1e-9 * d.area();
}

totals sum_up(const std::vector<summary>& subdomains, const domain& d) {
    totals t;
    for (std::size_t i = 0; i < subdomains.size(); ++i) {
        const summary& s = subdomains[i];
        const mesh_quality& q = s.quality;
        t.triangles += q.triangles, t.points += q.points, t.below += q.below_bound;
        t.inverted += q.inverted, t.steiner += s.steiner, t.area += q.area;
        t.min_angle = std::min(t.min_angle, q.min_angle_deg);
        t.unrefined += s.refined_by < 0;
        for (auto n : s.splits_sent)
            t.splits_sent += n;
        t.splits_received += s.splits_received, t.splits_inserted += s.splits_inserted;
        t.max_depth = std::max(t.max_depth, s.max_depth);
        t.rebuilds += s.rebuilds, t.rebuild_s += s.rebuild_s;
        for (int side = 0; side < 2; ++side) { // bottom and right: each shared side once
            int across = d.neighbour(int(i), side);
            if (across < 0)
                continue;
            const auto& mine = s.sides[std::size_t(side)];
            const auto& theirs = subdomains[std::size_t(across)].sides[std::size_t(opposite(side))];
            ++t.shared_sides;
            t.side_vertices += mine.size();
            // operator== on doubles: the same values; the points are then the same bits (no
            // NaN, and a side coordinate is never -0).
            t.nonconforming += mine != theirs;
        }
    }
    return t;
}

} // namespace mesh_refinement
