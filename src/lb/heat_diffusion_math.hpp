// Pure arithmetic of Watts' (1995) diffusion load balancer: the virtual rank mesh, the
// second-order (Crank–Nicolson) work-transfer vectors, and the choice of objects that meet a
// transfer. No MPI, no threads: each rank computes its own transfers from values its mesh
// neighbours send it (class node); everything is deterministic (same input, same binary =>
// bit-identical output) and summation orders are fixed.
#pragma once

#include <vector>

namespace prema::detail::heat {

// A 2-D grid of ranks with `cols` columns filled row by row (rank = row * cols + column), the
// last row possibly partial, no wrap-around. make_mesh builds one for every rank count, primes
// included. Ranks on the edge simply have fewer neighbours: that is Watts' Neumann boundary (a
// missing neighbour behaves as if it had the rank's own load), which on a graph is just the
// graph Laplacian.
struct rank_mesh {
    int ranks = 1;
    int cols = 1;

    int size() const { return ranks; }
    int rows() const { return (ranks + cols - 1) / cols; }
    // Neighbours in ascending rank order (at most 4); transfer vectors are indexed in this order.
    std::vector<int> neighbours(int rank) const;
    // The largest number of neighbours of any rank; O(cols).
    int max_degree() const;
};

// ceil(sqrt(ranks)) columns: the diameter is then at most about 2 sqrt(ranks) whatever the
// factors of `ranks` (a grid of its divisors is a 1 x P line when P is prime, and diffusion
// needs O(diameter^2) outer steps to remove the slowest mode).
rank_mesh make_mesh(int ranks);

// Watts' inner Jacobi sweep count, eq. (2.10) generalised to `degree` neighbours:
// nu = ceil(ln alpha / ln rho), rho = (a*deg/2) / (1 + a*deg/2), a = sqrt(alpha); at least 1.
// With degree 6 this reproduces the 3-D torus table of the design digest.
int watts_sweeps(double alpha, int degree);

// The sweep count diffuse() actually uses: Watts' nu, raised when needed so that the outer
// iteration stays a contraction (see diffuse()). For alpha <= ~0.1 on a 2-D mesh it equals
// watts_sweeps; for larger alpha Watts' nu drops to 1 and the iteration diverges.
int inner_sweeps(double alpha, int max_degree);

// One rank's share of the diffusion: its transfers and the values it exchanges with its mesh
// neighbours. An outer step takes exchanges_per_step() exchanges: in each, the rank sends
// outgoing() to every neighbour and then gets theirs with incoming(). The heat_diffusion policy
// runs one node per rank over messages; diffuse() runs all of them in one process. Both use the
// same arithmetic in the same order, so they agree bit for bit.
class node {
  public:
    // `load`: this rank's load; `sweeps`: inner_sweeps(alpha, mesh.max_degree()).
    node(const rank_mesh& mesh, int rank, double load, double alpha, int sweeps);

    const std::vector<int>& neighbours() const { return neighbours_; }
    int exchanges_per_step() const { return sweeps_ + 2; }
    // The value to send in the current exchange.
    double outgoing() const { return exchange_ == 0 ? v_ : x_; }
    // The neighbours' values of the current exchange, in neighbours() order; moves on to the
    // next exchange (after the last one of an outer step, to the next step).
    void incoming(const std::vector<double>& values);

    // Load to send to each neighbour (neighbours() order; negative: to receive), summed over
    // the outer steps completed.
    const std::vector<double>& transfers() const { return t_; }
    // load - sum_k transfers()[k], summed in k order: the load once the transfers are met.
    double virtual_load() const { return v_; }

  private:
    std::vector<int> neighbours_;
    std::vector<double> t_;
    double load_, h_;
    int sweeps_, exchange_ = 0;
    double v_, b_ = 0, x_ = 0;
};

struct diffusion_result {
    // transfers[i][k]: load rank i sends to mesh.neighbours(i)[k]; negative means receive.
    // Exactly antisymmetric: transfers[j][k'] == -transfers[i][k] for the same edge.
    std::vector<std::vector<double>> transfers;
    // load[i] - sum_k transfers[i][k] (summed in k order): the load once transfers are met.
    std::vector<double> final_load;
    int outer_steps = 0;
    int sweeps = 0;         // Jacobi sweeps per outer step
    bool converged = false; // max(final_load) <= (1 + alpha) * average
};

// Watts' improved second-order diffusion (Fig. 2.3) on the mesh graph: each outer step is one
// Crank–Nicolson step A u' = B u with A = I + (a/2)L, B = I - (a/2)L, a = sqrt(alpha), solved by
// `sweeps` Jacobi iterations from u' = B u, and adds (a/2)(u_i - u_j) + (a/2)(u'_i - u'_j) to
// t_ij. Each rank computes its own rows from its neighbours' values (class node); this runs
// every rank's node in one process and stops when max_i v_i <= (1 + alpha) * average (a test
// of all loads, which the distributed policy cannot make: it runs a fixed number of steps per
// round) or after max_outer_steps.
//
// Deviation from the thesis (the digest's consistency caveat): with a finite number of sweeps,
// sum_j t_ij drifts from u_i - u'_i, so the loads the transfers actually produce are not the
// diffused u. Here the diffused state *is* the virtual load v_i = load_i - sum_j t_ij: each
// outer step starts from u := v and the convergence test is on v, so the returned transfers
// provably meet the bound when converged. With exact solves this is identical to Watts.
//
// Throws prema::usage_error for a size mismatch, negative or non-finite loads, or alpha that is
// not a finite positive number. Watts' range is 0 < alpha < 1 (alpha = 1 - mineff).
diffusion_result diffuse(const rank_mesh& mesh, const std::vector<double>& load, double alpha,
                         int max_outer_steps = 1000);

// Indices (ascending) of objects whose summed load best approximates `target` (smallest
// |sum - target|, then fewest objects) without exceeding it by more than the smallest
// candidate. Objects with load <= 0 (or non-finite) are never chosen: moving them cannot help.
// Fewer than 20 candidates: exhaustive search (Watts: 2^20 subsets take well under a second);
// otherwise first-fit decreasing, then one top-up with the smallest unused object if that gets
// closer. target <= 0 or no candidates: empty.
std::vector<int> select_objects(const std::vector<double>& object_loads, double target);

} // namespace prema::detail::heat
