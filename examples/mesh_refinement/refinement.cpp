#include "refinement.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>
#include <utility>

#include <CGAL/Constrained_Delaunay_triangulation_2.h>
#include <CGAL/Delaunay_mesh_face_base_2.h>
#include <CGAL/Delaunay_mesh_size_criteria_2.h>
#include <CGAL/Delaunay_mesh_vertex_base_2.h>
#include <CGAL/Delaunay_mesher_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>

namespace mesh_refinement {
namespace {

using kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using tds = CGAL::Triangulation_data_structure_2<CGAL::Delaunay_mesh_vertex_base_2<kernel>,
                                                 CGAL::Delaunay_mesh_face_base_2<kernel>>;
using cdt = CGAL::Constrained_Delaunay_triangulation_2<kernel, tds>;
using point = cdt::Point;

// Delaunay_mesh_size_criteria_2 with the size bound read from the sizing field at the
// triangle's centroid instead of one constant.
class sizing_criteria {
  public:
    using Quality = CGAL::Delaunay_mesh_size_criteria_2<cdt>::Quality;

    sizing_criteria(double aspect_bound, const sizing_field& h) : bound_(aspect_bound), h_(&h) {}

    class Is_bad {
      public:
        using Point_2 = point;
        Is_bad(double bound, const sizing_field* h) : bound_(bound), h_(h) {}

        CGAL::Mesh_2::Face_badness operator()(const Quality q) const {
            if (q.size() > 1)
                return CGAL::Mesh_2::IMPERATIVELY_BAD;
            return q.sine() < bound_ ? CGAL::Mesh_2::BAD : CGAL::Mesh_2::NOT_BAD;
        }

        CGAL::Mesh_2::Face_badness operator()(const cdt::Face_handle& f, Quality& q) const {
            const point& a = f->vertex(0)->point();
            const point& b = f->vertex(1)->point();
            const point& c = f->vertex(2)->point();
            double e[3] = {CGAL::squared_distance(b, c), CGAL::squared_distance(c, a),
                           CGAL::squared_distance(a, b)};
            std::sort(e, e + 3);
            double h = (*h_)((a.x() + b.x() + c.x()) / 3, (a.y() + b.y() + c.y()) / 3);
            q.second = e[2] / (h * h);
            if (q.size() > 1) {
                q.first = 1; // too big: the angle does not matter
                return CGAL::Mesh_2::IMPERATIVELY_BAD;
            }
            double area2 = 2 * CGAL::area(a, b, c);
            q.first = area2 * area2 / (e[2] * e[1]); // squared sine of the smallest angle
            return operator()(q);
        }

      private:
        double bound_;
        const sizing_field* h_;
    };

    Is_bad is_bad_object() const { return Is_bad(bound_, h_); }

  private:
    double bound_;
    const sizing_field* h_;
};

using mesher = CGAL::Delaunay_mesher_2<cdt, sizing_criteria>;

// Splits [a, b] at midpoints until every piece is no longer than the size at its middle;
// appends the points strictly between a and b. Symmetric in a and b.
void bisect(const sizing_field& h, point a, point b, std::vector<point>& out, int depth = 0) {
    point m((a.x() + b.x()) / 2, (a.y() + b.y()) / 2);
    if (depth >= 40 || std::sqrt(CGAL::squared_distance(a, b)) <= h(m.x(), m.y()))
        return;
    bisect(h, a, m, out, depth + 1);
    out.push_back(m);
    bisect(h, m, b, out, depth + 1);
}

// Inserts the segment a-b, with the bisection points and any of `extra` lying on it, as a
// chain of constraints.
void insert_side(cdt& t, const sizing_field& h, point a, point b, const std::vector<point>& extra) {
    std::vector<point> pts{a, b};
    bisect(h, a, b, pts);
    for (const point& p : extra)
        if (CGAL::collinear(a, b, p) && CGAL::collinear_are_strictly_ordered_along_line(a, p, b))
            pts.push_back(p);
    // Order along the side (it is axis-parallel), without duplicates.
    auto along = [&](const point& p) { return a.x() == b.x() ? p.y() : p.x(); };
    std::sort(pts.begin(), pts.end(), [&](auto& p, auto& q) { return along(p) < along(q); });
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    for (std::size_t i = 0; i + 1 < pts.size(); ++i)
        t.insert_constraint(pts[i], pts[i + 1]);
}

std::vector<std::pair<point, point>> sides(const rect& r) {
    point p00(r.x0, r.y0), p10(r.x1, r.y0), p11(r.x1, r.y1), p01(r.x0, r.y1);
    return {{p00, p10}, {p10, p11}, {p01, p11}, {p00, p01}};
}

} // namespace

struct refinement::impl {
    cdt tri;
    sizing_criteria criteria;
    mesher refine;
    std::uint64_t inserted = 0;
    bool done = false;

    impl(const domain& d, int index, double min_angle_deg)
        : criteria(std::pow(std::sin(min_angle_deg * std::numbers::pi / 180), 2), d.size()),
          refine(tri, criteria) {
        rect c = d.cell(index);
        auto holes = d.holes_in(c);
        // The corners of the holes are points of the cell's sides too.
        std::vector<point> corners;
        for (const rect& h : holes)
            for (auto& [a, b] : sides(h))
                corners.push_back(a), corners.push_back(b);
        for (auto& [a, b] : sides(c))
            insert_side(tri, d.size(), a, b, corners);
        std::vector<point> seeds;
        for (const rect& h : holes) {
            for (auto& [a, b] : sides(h)) {
                bool on_cell_side = (a.x() == b.x() && (a.x() == c.x0 || a.x() == c.x1)) ||
                                    (a.y() == b.y() && (a.y() == c.y0 || a.y() == c.y1));
                if (!on_cell_side)
                    insert_side(tri, d.size(), a, b, {});
            }
            seeds.emplace_back((h.x0 + h.x1) / 2, (h.y0 + h.y1) / 2);
        }
        refine.set_seeds(seeds.begin(), seeds.end(), false);
        refine.init();
        done = refine.is_refinement_done();
    }
};

refinement::refinement(const domain& d, int index, double min_angle_deg)
    : impl_(std::make_unique<impl>(d, index, min_angle_deg)) {}

refinement::~refinement() = default;

bool refinement::step(int points) {
    for (int i = 0; i < points && !impl_->done; ++i) {
        if (impl_->refine.step_by_step_refine_mesh())
            ++impl_->inserted;
        impl_->done = impl_->refine.is_refinement_done();
    }
    return impl_->done;
}

std::uint64_t refinement::points_inserted() const {
    return impl_->inserted;
}

triangle_mesh refinement::mesh() const {
    triangle_mesh m;
    std::unordered_map<const void*, std::int32_t> index;
    auto id = [&](cdt::Vertex_handle v) {
        auto [it, fresh] = index.try_emplace(&*v, std::int32_t(index.size()));
        if (fresh) {
            m.xy.push_back(v->point().x());
            m.xy.push_back(v->point().y());
        }
        return it->second;
    };
    for (auto f : impl_->tri.finite_face_handles())
        if (f->is_in_domain())
            for (int k = 0; k < 3; ++k)
                m.triangles.push_back(id(f->vertex(k)));
    return m;
}

} // namespace mesh_refinement
