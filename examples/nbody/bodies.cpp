#include "bodies.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace nbody {
namespace {

// Uniform in [0, 1) from the raw generator: std::uniform_real_distribution may differ
// between standard libraries, the generator's sequence does not.
double uniform(std::mt19937_64& g) {
    return double(g() >> 11) * 0x1p-53;
}

} // namespace

initial_state make_initial(const problem& p) {
    std::mt19937_64 g(std::uint64_t(p.seed));
    std::size_t n = std::size_t(p.particles);
    positions x(3 * n), v(3 * n);
    for (std::size_t i = 0; i < n; ++i) {
        double u = uniform(g);
        x[3 * i] = 0.5 * u * u; // density falls off from x = 0; x >= 0.5 stays empty
        x[3 * i + 1] = uniform(g);
        x[3 * i + 2] = uniform(g);
        for (int d = 0; d < 3; ++d)
            v[3 * i + std::size_t(d)] = 0.1 * (uniform(g) - 0.5);
    }
    auto slab = [&](std::size_t i) { return std::min(p.chunks - 1, int(x[3 * i] * p.chunks)); };
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return slab(a) < slab(b); });
    initial_state s{positions(3 * n), positions(3 * n),
                    std::vector<int>(std::size_t(p.chunks) + 1)};
    for (std::size_t k = 0; k < n; ++k) {
        for (std::size_t d = 0; d < 3; ++d) {
            s.x[3 * k + d] = x[3 * order[k] + d];
            s.v[3 * k + d] = v[3 * order[k] + d];
        }
        ++s.first[std::size_t(slab(order[k])) + 1];
    }
    std::partial_sum(s.first.begin(), s.first.end(), s.first.begin());
    return s;
}

void forces(const problem& p, const positions& x, int begin, int end, double* acc,
            double* potential) {
    std::size_t n = std::size_t(end - begin), all = x.size() / 3;
    double m = p.mass(), eps2 = p.softening * p.softening;
    for (std::size_t k = 0; k < n; ++k) {
        std::size_t i = std::size_t(begin) + k;
        double xi = x[3 * i], yi = x[3 * i + 1], zi = x[3 * i + 2];
        double ax = 0, ay = 0, az = 0, phi = 0;
        for (std::size_t j = 0; j < all; ++j) {
            if (j == i)
                continue;
            double dx = x[3 * j] - xi, dy = x[3 * j + 1] - yi, dz = x[3 * j + 2] - zi;
            double inv = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
            double inv3 = inv * inv * inv;
            ax += dx * inv3;
            ay += dy * inv3;
            az += dz * inv3;
            phi -= inv;
        }
        acc[3 * k] = m * ax;
        acc[3 * k + 1] = m * ay;
        acc[3 * k + 2] = m * az;
        potential[k] = m * phi;
    }
}

double energy(const problem& p, const std::vector<double>& v,
              const std::vector<double>& potential) {
    double m = p.mass(), e = 0;
    for (std::size_t k = 0; k < potential.size(); ++k) {
        double v2 = v[3 * k] * v[3 * k] + v[3 * k + 1] * v[3 * k + 1] + v[3 * k + 2] * v[3 * k + 2];
        e += 0.5 * m * v2 + 0.5 * m * potential[k];
    }
    return e;
}

} // namespace nbody
