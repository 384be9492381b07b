#include "lb/heat_diffusion_math.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>

#include <prema/error.hpp>

namespace prema::detail::heat {

std::vector<int> rank_mesh::neighbours(int rank) const {
    if (dims[0] < 1 || dims[1] < 1)
        throw usage_error("heat diffusion: mesh dimensions must be positive, got " +
                          std::to_string(dims[0]) + "x" + std::to_string(dims[1]));
    if (rank < 0 || rank >= size())
        throw usage_error("heat diffusion: rank " + std::to_string(rank) + " is not in a mesh of " +
                          std::to_string(size()) + " ranks");
    const int x = rank / dims[1], y = rank % dims[1];
    std::vector<int> out;
    out.reserve(4);
    // Pushed in ascending rank order.
    if (x > 0)
        out.push_back(rank - dims[1]);
    if (y > 0)
        out.push_back(rank - 1);
    if (y + 1 < dims[1])
        out.push_back(rank + 1);
    if (x + 1 < dims[0])
        out.push_back(rank + dims[1]);
    return out;
}

rank_mesh make_mesh(int ranks) {
    if (ranks < 1)
        throw usage_error("heat diffusion: a mesh needs at least one rank, got " +
                          std::to_string(ranks));
    int small = 1; // largest divisor <= sqrt(ranks)
    for (int d = 1; d <= ranks / d; ++d)
        if (ranks % d == 0)
            small = d;
    rank_mesh m;
    m.dims[0] = ranks / small;
    m.dims[1] = small;
    return m;
}

namespace {

// Jacobi spectral bound for a row with `degree` neighbours (digest A4.2 note).
double jacobi_rho(double alpha, int degree) {
    const double half = std::sqrt(alpha) * degree / 2;
    return half / (1 + half);
}

// Smallest nu >= 1 with rho^nu <= eps.
int sweeps_for(double rho, double eps) {
    if (rho <= 0 || eps >= 1)
        return 1; // nothing to iterate on, or no accuracy asked for
    const double nu = std::ceil(std::log(eps) / std::log(rho));
    return nu < 1 ? 1 : int(nu);
}

void check_alpha(double alpha) {
    if (!std::isfinite(alpha) || alpha <= 0)
        throw usage_error("heat diffusion: alpha must be a finite positive number, got " +
                          std::to_string(alpha));
}

// The mesh as a compact adjacency: neighbours of i are nbr[off[i] .. off[i+1]), and rev[e] is
// the position of the reverse edge, so each undirected edge is computed once and written to
// both ends with opposite signs (exact antisymmetry).
struct adjacency {
    std::vector<int> off, nbr, rev;
    int max_degree = 0;

    explicit adjacency(const rank_mesh& mesh) {
        const int p = mesh.size();
        off.assign(std::size_t(p) + 1, 0);
        for (int i = 0; i < p; ++i) {
            auto n = mesh.neighbours(i);
            nbr.insert(nbr.end(), n.begin(), n.end());
            off[i + 1] = int(nbr.size());
            max_degree = std::max(max_degree, int(n.size()));
        }
        rev.assign(nbr.size(), -1);
        for (int i = 0; i < p; ++i)
            for (int e = off[i]; e < off[i + 1]; ++e) {
                const int j = nbr[e];
                for (int f = off[j]; f < off[j + 1]; ++f)
                    if (nbr[f] == i)
                        rev[e] = f;
            }
    }
    int degree(int i) const { return off[i + 1] - off[i]; }
};

} // namespace

int watts_sweeps(double alpha, int degree) {
    check_alpha(alpha);
    return sweeps_for(jacobi_rho(alpha, degree), alpha);
}

int inner_sweeps(double alpha, int max_degree) {
    check_alpha(alpha);
    // Starting each outer step from the virtual load turns the Jacobi error r (|r| <= rho^nu)
    // into a perturbation of the step's amplification: on a regular graph, for the mode with
    // y = (sqrt(alpha)/2) * mu, lambda = ((1-y)/(1+y)) * (1 - y^2 r), which stays below 1 in
    // magnitude when max(y, y^3) * |r| < 2. y <= sqrt(alpha) * max_degree (mu <= 2 deg), so ask
    // for rho^nu <= 1 / (2 max(1, y^3)), a 4x margin. Watts' nu = 1 at alpha >= ~0.6 on a 2-D
    // mesh violates this and diverges; the guard was also checked numerically on the
    // irregular-degree meshes make_mesh builds (up to 10x10 and 1x24, alpha up to 9).
    const double y = std::sqrt(alpha) * max_degree;
    const double guard = 1 / (2 * std::max(1.0, y * y * y));
    return sweeps_for(jacobi_rho(alpha, max_degree), std::min(alpha, guard));
}

diffusion_result diffuse(const rank_mesh& mesh, const std::vector<double>& load, double alpha,
                         int max_outer_steps) {
    check_alpha(alpha);
    if (mesh.dims[0] < 1 || mesh.dims[1] < 1)
        throw usage_error("heat diffusion: mesh dimensions must be positive, got " +
                          std::to_string(mesh.dims[0]) + "x" + std::to_string(mesh.dims[1]));
    const int p = mesh.size();
    if (load.size() != std::size_t(p))
        throw usage_error("heat diffusion: " + std::to_string(load.size()) +
                          " loads for a mesh of " + std::to_string(p) + " ranks");
    for (int i = 0; i < p; ++i)
        if (!std::isfinite(load[i]) || load[i] < 0)
            throw usage_error("heat diffusion: load of rank " + std::to_string(i) +
                              " must be finite and non-negative, got " + std::to_string(load[i]));

    const adjacency g(mesh);
    const double h = std::sqrt(alpha) / 2; // the a/2 of A = I + (a/2)L
    double total = 0;
    for (double u : load)
        total += u;
    const double limit = (1 + alpha) * (total / p);

    diffusion_result r;
    r.sweeps = inner_sweeps(alpha, g.max_degree);
    std::vector<double> t(g.nbr.size(), 0.0); // t[e] for edge e = (i, nbr[e])
    std::vector<double> v = load;             // virtual load load_i - sum_k t_ik
    std::vector<double> b(p), x(p), y(p);

    auto exceeds = [&] { return *std::max_element(v.begin(), v.end()) > limit; };
    // t_ij += h (w_i - w_j) once per undirected edge, mirrored to the reverse edge.
    auto accumulate_gradient = [&](const std::vector<double>& w) {
        for (int i = 0; i < p; ++i)
            for (int e = g.off[i]; e < g.off[i + 1]; ++e)
                if (i < g.nbr[e]) {
                    const double d = h * (w[i] - w[g.nbr[e]]);
                    t[e] += d;
                    t[g.rev[e]] -= d;
                }
    };

    while (exceeds() && r.outer_steps < max_outer_steps) {
        ++r.outer_steps;
        // u := v (see header); first half of the Crank–Nicolson flux, from the old state.
        accumulate_gradient(v);
        // b = B u = u - h L u.
        for (int i = 0; i < p; ++i) {
            double s = 0;
            for (int e = g.off[i]; e < g.off[i + 1]; ++e)
                s += v[i] - v[g.nbr[e]];
            b[i] = v[i] - h * s;
        }
        // Jacobi on A u' = b from u' = b: u'_i = (b_i + h sum_j u'_j) / (1 + h deg_i).
        x = b;
        for (int k = 0; k < r.sweeps; ++k) {
            for (int i = 0; i < p; ++i) {
                double s = 0;
                for (int e = g.off[i]; e < g.off[i + 1]; ++e)
                    s += x[g.nbr[e]];
                y[i] = (b[i] + h * s) / (1 + h * g.degree(i));
            }
            std::swap(x, y);
        }
        // Second half of the flux, from the new state.
        accumulate_gradient(x);
        // Recomputed rather than updated, so v is exactly what a caller applying t would get.
        for (int i = 0; i < p; ++i) {
            double s = 0;
            for (int e = g.off[i]; e < g.off[i + 1]; ++e)
                s += t[e];
            v[i] = load[i] - s;
        }
    }
    r.converged = !exceeds();

    r.transfers.resize(p);
    for (int i = 0; i < p; ++i)
        r.transfers[i].assign(t.begin() + g.off[i], t.begin() + g.off[i + 1]);
    r.final_load = std::move(v);
    return r;
}

std::vector<std::vector<double>> transfer_vectors(const rank_mesh& mesh,
                                                  const std::vector<double>& load, double alpha) {
    return diffuse(mesh, load, alpha).transfers;
}

namespace {

// Best subset of fewer than 20 candidates by enumeration. Subset sums come from two half
// tables (lo[mask & low] + hi[mask >> half]) so every sum is rounded the same way whatever
// the enumeration order, unlike a running Gray-code sum that drifts.
std::vector<int> exhaustive(const std::vector<int>& cand, const std::vector<double>& w,
                            double target, double limit) {
    const int n = int(cand.size());
    const int lo_bits = n / 2, hi_bits = n - lo_bits;
    auto table = [&](int first, int bits) {
        std::vector<double> s(std::size_t(1) << bits, 0.0);
        for (std::uint32_t m = 1; m < s.size(); ++m) {
            const int low = std::countr_zero(m);
            s[m] = s[m & (m - 1)] + w[cand[first + low]];
        }
        return s;
    };
    const auto lo = table(0, lo_bits), hi = table(lo_bits, hi_bits);
    const std::uint32_t lo_mask = (std::uint32_t(1) << lo_bits) - 1;

    std::uint32_t best = 0; // the empty set: error = target
    double best_err = target;
    int best_count = 0;
    for (std::uint32_t m = 1; m < (std::uint32_t(1) << n); ++m) {
        const double s = lo[m & lo_mask] + hi[m >> lo_bits];
        if (s > limit)
            continue;
        const double err = std::abs(s - target);
        const int count = std::popcount(m);
        if (err < best_err || (err == best_err && count < best_count)) {
            best = m;
            best_err = err;
            best_count = count;
        }
    }
    std::vector<int> out;
    for (int k = 0; k < n; ++k)
        if (best & (std::uint32_t(1) << k))
            out.push_back(cand[k]);
    return out;
}

// First fit over loads in decreasing order (never exceeds target), then the smallest unused
// object if adding it lands closer to target within the allowed overshoot.
std::vector<int> first_fit_decreasing(std::vector<int> cand, const std::vector<double>& w,
                                      double target, double limit) {
    std::sort(cand.begin(), cand.end(),
              [&](int a, int b) { return w[a] > w[b] || (w[a] == w[b] && a < b); });
    std::vector<int> out;
    std::vector<bool> taken(cand.size(), false);
    double sum = 0;
    for (std::size_t k = 0; k < cand.size(); ++k)
        if (sum + w[cand[k]] <= target) {
            sum += w[cand[k]];
            out.push_back(cand[k]);
            taken[k] = true;
        }
    for (std::size_t k = cand.size(); k-- > 0;)
        if (!taken[k]) { // the smallest unused one (last in decreasing order)
            const double s = sum + w[cand[k]];
            if (s <= limit && std::abs(s - target) < std::abs(sum - target))
                out.push_back(cand[k]);
            break;
        }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

std::vector<int> select_objects(const std::vector<double>& object_loads, double target) {
    if (!(target > 0))
        return {};
    std::vector<int> cand;
    for (std::size_t i = 0; i < object_loads.size(); ++i)
        if (object_loads[i] > 0 && std::isfinite(object_loads[i]))
            cand.push_back(int(i));
    if (cand.empty())
        return {};
    if (std::isinf(target))
        return cand; // everything movable, and nothing else can get closer
    double smallest = object_loads[cand[0]];
    for (int i : cand)
        smallest = std::min(smallest, object_loads[i]);
    const double limit = target + smallest;
    if (cand.size() < 20)
        return exhaustive(cand, object_loads, target, limit);
    return first_fit_decreasing(std::move(cand), object_loads, target, limit);
}

} // namespace prema::detail::heat
