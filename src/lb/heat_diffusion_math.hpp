// Pure arithmetic of Watts' (1995) diffusion load balancer: the virtual rank mesh, the
// second-order (Crank–Nicolson) work-transfer vectors, and the choice of objects that meet a
// transfer. No MPI, no threads, no state: a policy calls these on gathered loads, either on one
// rank or redundantly on every rank, so everything here is deterministic (same input, same
// binary => bit-identical output) and summation orders are fixed.
#pragma once

#include <vector>

namespace prema::detail::heat {

// A 2-D grid of ranks, row-major (rank = x * dims[1] + y), no wrap-around. Ranks on the edge
// simply have fewer neighbours: that is Watts' Neumann boundary (a missing neighbour behaves as
// if it had the rank's own load), which on a graph is just the graph Laplacian.
struct rank_mesh {
    int dims[2] = {1, 1}; // dims[0] >= dims[1], as MPI_Dims_create orders them

    int size() const { return dims[0] * dims[1]; }
    // Neighbours in ascending rank order; transfer vectors are indexed in this order.
    std::vector<int> neighbours(int rank) const;
};

// The squarest grid for `ranks` (a line when ranks is prime): squarer meshes have a smaller
// diameter, and diffusion needs O(diameter^2) outer steps to remove the slowest mode.
rank_mesh make_mesh(int ranks);

// Watts' inner Jacobi sweep count, eq. (2.10) generalised to `degree` neighbours:
// nu = ceil(ln alpha / ln rho), rho = (a*deg/2) / (1 + a*deg/2), a = sqrt(alpha); at least 1.
// With degree 6 this reproduces the 3-D torus table of the design digest.
int watts_sweeps(double alpha, int degree);

// The sweep count diffuse() actually uses: Watts' nu, raised when needed so that the outer
// iteration stays a contraction (see diffuse()). For alpha <= ~0.1 on a 2-D mesh it equals
// watts_sweeps; for larger alpha Watts' nu drops to 1 and the iteration diverges.
int inner_sweeps(double alpha, int max_degree);

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
// t_ij. It stops when max_i v_i <= (1 + alpha) * average or after max_outer_steps.
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

// Just the transfer vectors of diffuse().
std::vector<std::vector<double>> transfer_vectors(const rank_mesh& mesh,
                                                  const std::vector<double>& load, double alpha);

// Indices (ascending) of objects whose summed load best approximates `target` (smallest
// |sum - target|, then fewest objects) without exceeding it by more than the smallest
// candidate. Objects with load <= 0 (or non-finite) are never chosen: moving them cannot help.
// Fewer than 20 candidates: exhaustive search (Watts: 2^20 subsets take well under a second);
// otherwise first-fit decreasing, then one top-up with the smallest unused object if that gets
// closer. target <= 0 or no candidates: empty.
std::vector<int> select_objects(const std::vector<double>& object_loads, double target);

} // namespace prema::detail::heat
