#include "lb/heat_diffusion_math.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>

#include <prema/error.hpp>

namespace prema::detail::heat {

namespace {

void check_mesh(const rank_mesh& mesh) {
    if (mesh.ranks < 1 || mesh.cols < 1)
        throw usage_error("heat diffusion: a mesh needs a positive rank and column count, got " +
                          std::to_string(mesh.ranks) + " ranks in " + std::to_string(mesh.cols) +
                          " columns");
}

} // namespace

std::vector<int> rank_mesh::neighbours(int rank) const {
    check_mesh(*this);
    if (rank < 0 || rank >= ranks)
        throw usage_error("heat diffusion: rank " + std::to_string(rank) + " is not in a mesh of " +
                          std::to_string(ranks) + " ranks");
    const int column = rank % cols;
    std::vector<int> out;
    out.reserve(4);
    // Pushed in ascending rank order.
    if (rank >= cols)
        out.push_back(rank - cols);
    if (column > 0)
        out.push_back(rank - 1);
    if (column + 1 < cols && rank + 1 < ranks)
        out.push_back(rank + 1);
    if (rank + cols < ranks)
        out.push_back(rank + cols);
    return out;
}

int rank_mesh::max_degree() const {
    // A rank with a neighbour below is in a full row, and so is the one above it: the first
    // two rows have the largest degrees.
    int most = 0;
    for (int r = 0; r < std::min(ranks, 2 * cols); ++r)
        most = std::max(most, int(neighbours(r).size()));
    return most;
}

rank_mesh make_mesh(int ranks) {
    if (ranks < 1)
        throw usage_error("heat diffusion: a mesh needs at least one rank, got " +
                          std::to_string(ranks));
    rank_mesh m;
    m.ranks = ranks;
    while (m.cols * m.cols < ranks)
        ++m.cols;
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

node::node(const rank_mesh& mesh, int rank, double load, double alpha, int sweeps)
    : neighbours_(mesh.neighbours(rank)), t_(neighbours_.size(), 0.0), load_(load),
      h_(std::sqrt(alpha) / 2), sweeps_(sweeps), v_(load) {
    check_alpha(alpha);
    if (!std::isfinite(load) || load < 0)
        throw usage_error("heat diffusion: load of rank " + std::to_string(rank) +
                          " must be finite and non-negative, got " + std::to_string(load));
}

void node::incoming(const std::vector<double>& values) {
    if (values.size() != neighbours_.size())
        throw usage_error("heat diffusion: " + std::to_string(values.size()) + " values from " +
                          std::to_string(neighbours_.size()) + " neighbours");
    // t_ij += h (w_i - w_j): rank j adds h (w_j - w_i), exactly the negation.
    auto accumulate_gradient = [&](double w) {
        for (std::size_t k = 0; k < values.size(); ++k)
            t_[k] += h_ * (w - values[k]);
    };
    const double degree = double(values.size());
    if (exchange_ == 0) {
        // u := v (see diffuse()); first half of the Crank–Nicolson flux, from the old state,
        // then b = B u = u - h L u, and Jacobi on A u' = b starts from u' = b.
        accumulate_gradient(v_);
        double s = 0;
        for (double vj : values)
            s += v_ - vj;
        b_ = v_ - h_ * s;
        x_ = b_;
    } else if (exchange_ <= sweeps_) {
        // u'_i = (b_i + h sum_j u'_j) / (1 + h deg_i).
        double s = 0;
        for (double xj : values)
            s += xj;
        x_ = (b_ + h_ * s) / (1 + h_ * degree);
    } else {
        // Second half of the flux, from the new state; v recomputed rather than updated, so it
        // is exactly what meeting the transfers gives.
        accumulate_gradient(x_);
        double s = 0;
        for (double t : t_)
            s += t;
        v_ = load_ - s;
    }
    exchange_ = exchange_ == sweeps_ + 1 ? 0 : exchange_ + 1;
}

diffusion_result diffuse(const rank_mesh& mesh, const std::vector<double>& load, double alpha,
                         int max_outer_steps) {
    check_alpha(alpha);
    check_mesh(mesh);
    const int p = mesh.size();
    if (load.size() != std::size_t(p))
        throw usage_error("heat diffusion: " + std::to_string(load.size()) +
                          " loads for a mesh of " + std::to_string(p) + " ranks");

    diffusion_result r;
    r.sweeps = inner_sweeps(alpha, mesh.max_degree());
    std::vector<node> nodes;
    nodes.reserve(std::size_t(p));
    double total = 0;
    for (int i = 0; i < p; ++i) {
        nodes.emplace_back(mesh, i, load[std::size_t(i)], alpha, r.sweeps);
        total += load[std::size_t(i)];
    }
    const double limit = (1 + alpha) * (total / p);
    auto exceeds = [&] {
        return std::any_of(nodes.begin(), nodes.end(),
                           [&](const node& n) { return n.virtual_load() > limit; });
    };

    std::vector<double> sent(std::size_t(p), 0.0), values;
    while (exceeds() && r.outer_steps < max_outer_steps) {
        ++r.outer_steps;
        for (int e = 0; e < r.sweeps + 2; ++e) {
            for (int i = 0; i < p; ++i)
                sent[std::size_t(i)] = nodes[std::size_t(i)].outgoing();
            for (auto& n : nodes) {
                values.clear();
                for (int j : n.neighbours())
                    values.push_back(sent[std::size_t(j)]);
                n.incoming(values);
            }
        }
    }
    r.converged = !exceeds();
    for (auto& n : nodes) {
        r.transfers.push_back(n.transfers());
        r.final_load.push_back(n.virtual_load());
    }
    return r;
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
