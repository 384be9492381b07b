#include "refinement.hpp"

#include <algorithm>
#include <array>
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

// The vertices created while a step runs, for step() to find those on the cell's sides: the
// mesher does not say where it inserted its points. Only the thread running the step logs.
thread_local std::vector<void*>* created = nullptr;

template <class Vb> struct logged_vertex_base : Vb {
    template <class Tds2> struct Rebind_TDS {
        using Other = logged_vertex_base<typename Vb::template Rebind_TDS<Tds2>::Other>;
    };
    template <class... A> explicit logged_vertex_base(A&&... a) : Vb(std::forward<A>(a)...) {
        if (created)
            created->push_back(this);
    }
};

using tds = CGAL::Triangulation_data_structure_2<
    logged_vertex_base<CGAL::Delaunay_mesh_vertex_base_2<kernel>>,
    CGAL::Delaunay_mesh_face_base_2<kernel>>;
using cdt = CGAL::Constrained_Delaunay_triangulation_2<kernel, tds>;
using point = cdt::Point;

// Delaunay_mesh_size_criteria_2 with the size bound read from the sizing field at the
// triangle's centroid, capped by the subdomain's own bound, instead of one constant.
class sizing_criteria {
  public:
    using Quality = CGAL::Delaunay_mesh_size_criteria_2<cdt>::Quality;

    sizing_criteria(double aspect_bound, const sizing_field& h, const double& cap)
        : bound_(aspect_bound), h_(&h), cap_(&cap) {}

    class Is_bad {
      public:
        using Point_2 = point;
        Is_bad(double bound, const sizing_field* h, const double* cap)
            : bound_(bound), h_(h), cap_(cap) {}

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
            double h =
                std::min(*cap_, (*h_)((a.x() + b.x() + c.x()) / 3, (a.y() + b.y() + c.y()) / 3));
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
        const double* cap_;
    };

    Is_bad is_bad_object() const { return Is_bad(bound_, h_, cap_); }

  private:
    double bound_;
    const sizing_field* h_;
    const double* cap_;
};

using mesher = CGAL::Delaunay_mesher_2<cdt, sizing_criteria>;

std::array<std::pair<point, point>, 4> sides(const rect& r) {
    point p00(r.x0, r.y0), p10(r.x1, r.y0), p11(r.x1, r.y1), p01(r.x0, r.y1);
    return {{{p00, p10}, {p10, p11}, {p01, p11}, {p00, p01}}}; // bottom, right, top, left
}

point on_side(const rect& c, side_point p) {
    switch (p.side) {
    case bottom:
        return {p.along, c.y0};
    case right:
        return {c.x1, p.along};
    case top:
        return {p.along, c.y1};
    default:
        return {c.x0, p.along};
    }
}

// Which side of `c` the point lies strictly inside, if any.
bool find_side(const rect& c, const point& p, side_point& out) {
    double x = p.x(), y = p.y();
    bool in_x = x > c.x0 && x<c.x1, in_y = y> c.y0 && y < c.y1;
    if (in_x && (y == c.y0 || y == c.y1))
        out = {y == c.y0 ? bottom : top, x};
    else if (in_y && (x == c.x0 || x == c.x1))
        out = {x == c.x0 ? left : right, y};
    else
        return false;
    return true;
}

} // namespace

struct refinement::impl {
    rect cell;
    double cap;
    cdt tri;
    sizing_criteria criteria;
    mesher refine;
    std::uint64_t inserted = 0;
    bool done = false;

    impl(const domain& d, int index, double min_angle_deg, double cap_, const vertex_set& start)
        : cell(d.cell(index)), cap(cap_),
          criteria(std::pow(std::sin(min_angle_deg * std::numbers::pi / 180), 2), d.size(), cap),
          refine(tri, criteria) {
        auto holes = d.holes_in(cell);
        // A cell side is a chain of constraints through its vertices: the corners of the holes
        // on it and whatever `start` holds. The corners come from every hole touching the
        // cell, inside or not, so that the neighbour across finds the same ones.
        std::array<std::vector<double>, 4> along = start.sides;
        for (const rect& h : d.holes()) {
            rect r{std::max(cell.x0, h.x0), std::max(cell.y0, h.y0), std::min(cell.x1, h.x1),
                   std::min(cell.y1, h.y1)};
            if (r.x0 > r.x1 || r.y0 > r.y1)
                continue;
            for (auto& [a, b] : sides(r))
                for (const point& p : {a, b}) {
                    side_point s;
                    if (find_side(cell, p, s))
                        along[std::size_t(s.side)].push_back(s.along);
                }
        }
        auto cell_sides = sides(cell);
        for (int s = 0; s < 4; ++s) {
            auto& v = along[std::size_t(s)];
            std::sort(v.begin(), v.end());
            v.erase(std::unique(v.begin(), v.end()), v.end());
            point prev = cell_sides[std::size_t(s)].first;
            for (double t : v) {
                point p = on_side(cell, {s, t});
                tri.insert_constraint(prev, p);
                prev = p;
            }
            tri.insert_constraint(prev, cell_sides[std::size_t(s)].second);
        }
        std::vector<point> seeds;
        for (const rect& h : holes) {
            for (auto& [a, b] : sides(h)) {
                bool on_cell_side = (a.x() == b.x() && (a.x() == cell.x0 || a.x() == cell.x1)) ||
                                    (a.y() == b.y() && (a.y() == cell.y0 || a.y() == cell.y1));
                if (!on_cell_side)
                    tri.insert_constraint(a, b);
            }
            seeds.emplace_back((h.x0 + h.x1) / 2, (h.y0 + h.y1) / 2);
        }
        // The rest in one go (spatially sorted): points on the holes' sides split them.
        std::vector<point> interior;
        for (std::size_t k = 0; k + 1 < start.interior.size(); k += 2)
            interior.emplace_back(start.interior[k], start.interior[k + 1]);
        tri.insert(interior.begin(), interior.end());
        refine.set_seeds(seeds.begin(), seeds.end(), false);
        restart();
    }

    void restart() {
        refine.init();
        done = refine.is_refinement_done();
    }
};

refinement::refinement(const domain& d, int index, double min_angle_deg, double cap,
                       const vertex_set& start)
    : impl_(std::make_unique<impl>(d, index, min_angle_deg, cap, start)) {}

refinement::~refinement() = default;

bool refinement::insert_on_side(side_point p) {
    auto before = impl_->tri.number_of_vertices();
    impl_->tri.insert(on_side(impl_->cell, p));
    return impl_->tri.number_of_vertices() != before;
}

void refinement::set_cap(double cap) {
    impl_->cap = cap;
}

void refinement::restart() {
    impl_->restart();
}

bool refinement::step(int points, std::vector<side_point>& on_sides) {
    std::vector<void*> log;
    created = &log;
    for (int i = 0; i < points && !impl_->done; ++i) {
        if (impl_->refine.step_by_step_refine_mesh())
            ++impl_->inserted;
        impl_->done = impl_->refine.is_refinement_done();
    }
    created = nullptr;
    for (void* v : log) {
        side_point s;
        if (find_side(impl_->cell, static_cast<cdt::Vertex*>(v)->point(), s))
            on_sides.push_back(s);
    }
    return impl_->done;
}

std::uint64_t refinement::points_inserted() const {
    return impl_->inserted;
}

vertex_set refinement::vertices() const {
    vertex_set out;
    const rect& c = impl_->cell;
    for (auto v : impl_->tri.finite_vertex_handles()) {
        const point& p = v->point();
        side_point s;
        if (find_side(c, p, s))
            out.sides[std::size_t(s.side)].push_back(s.along);
        else if ((p.x() != c.x0 && p.x() != c.x1) || (p.y() != c.y0 && p.y() != c.y1))
            out.interior.insert(out.interior.end(), {p.x(), p.y()}); // not a corner
    }
    for (auto& v : out.sides)
        std::sort(v.begin(), v.end());
    return out;
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
