#include "domain.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace mesh_refinement {

double sizing_field::operator()(double x, double y) const {
    // Vertical offset over the slope's secant: the distance to the wave to first order.
    double phase = 2 * std::numbers::pi * wave_k * x;
    double slope = 2 * std::numbers::pi * wave_k * wave_a * std::cos(phase);
    double to_wave = std::abs(y - wave_y - wave_a * std::sin(phase)) / std::hypot(1.0, slope);
    double to_point = std::hypot(x - point_x, y - point_y);
    return std::min(hmax, hmin + grade * std::min(to_wave, to_point));
}

namespace {

// The features sit in the bottom part of the square on purpose: a block (row-stripe) placement
// gives the first ranks most of the work, which is what balancing has to repair.
constexpr rect hole_layout[] = {
    {0.56, 0.27, 0.74, 0.40}, // its bottom left corner is the point feature
    {0.18, 0.62, 0.36, 0.81},
    {0.63, 0.57, 0.84, 0.71},
};

// A hole side closer than this fraction of a cell to a grid line is moved onto it: a sliver
// between the two would need tiny elements that have nothing to do with the sizing field.
constexpr double snap_fraction = 0.1;

double snap(double v, int cells) {
    double line = std::round(v * cells) / cells;
    return std::abs(v - line) < snap_fraction / cells ? line : v;
}

} // namespace

domain::domain(int subdomains, double hmin, double hmax, double grade) {
    if (subdomains < 1)
        throw std::invalid_argument("subdomains must be at least 1, not " +
                                    std::to_string(subdomains));
    if (!(hmin > 0 && hmin <= hmax))
        throw std::invalid_argument("need 0 < hmin <= hmax (hmin " + std::to_string(hmin) +
                                    ", hmax " + std::to_string(hmax) + ")");
    if (!(grade > 0))
        throw std::invalid_argument("grade must be positive, not " + std::to_string(grade));
    // The most square grid: ny the largest divisor not above sqrt(n).
    ny_ = 1;
    for (int d = 1; d * d <= subdomains; ++d)
        if (subdomains % d == 0)
            ny_ = d;
    nx_ = subdomains / ny_;
    size_ = {hmin, hmax, grade, 0.11, 0.05, 1.25, 0.56, 0.27};
    for (const rect& h : hole_layout)
        holes_.push_back({snap(h.x0, nx_), snap(h.y0, ny_), snap(h.x1, nx_), snap(h.y1, ny_)});
}

rect domain::cell(int i) const {
    int ix = i % nx_, iy = i / nx_;
    return {double(ix) / nx_, double(iy) / ny_, double(ix + 1) / nx_, double(iy + 1) / ny_};
}

int domain::neighbour(int i, int s) const {
    int ix = i % nx_, iy = i / nx_;
    switch (s) {
    case 0:
        return iy > 0 ? i - nx_ : -1;
    case 1:
        return ix + 1 < nx_ ? i + 1 : -1;
    case 2:
        return iy + 1 < ny_ ? i + nx_ : -1;
    default:
        return ix > 0 ? i - 1 : -1;
    }
}

std::vector<rect> domain::holes_in(const rect& c) const {
    std::vector<rect> out;
    for (const rect& h : holes_) {
        rect r{std::max(c.x0, h.x0), std::max(c.y0, h.y0), std::min(c.x1, h.x1),
               std::min(c.y1, h.y1)};
        if (r.x0 < r.x1 && r.y0 < r.y1)
            out.push_back(r);
    }
    return out;
}

double domain::area(int i) const {
    rect c = cell(i);
    double a = c.area();
    for (const rect& h : holes_in(c))
        a -= h.area();
    return a;
}

double domain::area() const {
    double a = 1;
    for (const rect& h : holes_)
        a -= h.area();
    return a;
}

double domain::expected_triangles(int i, double cap) const {
    constexpr int samples = 48; // per side of the cell
    rect c = cell(i);
    auto holes = holes_in(c);
    double dx = (c.x1 - c.x0) / samples, dy = (c.y1 - c.y0) / samples, sum = 0;
    for (int a = 0; a < samples; ++a)
        for (int b = 0; b < samples; ++b) {
            double x = c.x0 + (a + 0.5) * dx, y = c.y0 + (b + 0.5) * dy;
            bool in_hole = std::any_of(holes.begin(), holes.end(), [&](const rect& h) {
                return x > h.x0 && x < h.x1 && y > h.y0 && y < h.y1;
            });
            if (!in_hole) {
                double h = std::min(cap, size_(x, y));
                sum += 4 / (std::sqrt(3.0) * h * h);
            }
        }
    return sum * dx * dy;
}

} // namespace mesh_refinement
