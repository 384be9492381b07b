// The UTS tree shapes (Olivier et al., LCPC 2006, as the benchmark's release 2.1 generates them)
// and the depth-first expansion that both the sequential loop and the parallel bags run.
//
// A node's child count depends on its own random number u (rng.hpp) and its height h only:
//   binomial   the root has floor(b0) children; any other node m children if u < q, else none
//   geometric  floor(ln(1 - u) / ln(1 - p)) children with p = 1 / (1 + b_h), the target
//              branching factor b_h being b0 at the root and below it, by shape (d = depth):
//                linear  b0 (1 - h/d)            expdec  b0 h^(-ln b0 / ln d)
//                cyclic  b0^sin(2 pi h/d), 0 past 5d   fixed  b0 while h < d, then 0
//   hybrid     geometric while h < shift d, binomial below
// capped at 100 children, except a binomial root (at most ceil(b0)). Doubles and the C
// library's log, pow and sin, as the reference does: the published tree sizes depend on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rng.hpp"

namespace uts {

enum class tree_kind { binomial, geometric, hybrid };
enum class geo_shape { linear, expdec, cyclic, fixed };

struct tree_params {
    tree_kind kind = tree_kind::geometric;
    geo_shape shape = geo_shape::linear;
    double b0 = 4;        // root branching factor (geometric: target branching factor)
    int depth = 6;        // geometric: the shape's depth parameter d
    double q = 15.0 / 64; // binomial: probability that a node has children
    int m = 4;            // binomial: a parent's child count
    std::int32_t seed = 0;
    double shift = 0.5; // hybrid: geometric above shift * depth

    // "binomial, b0 2000, q 0.124875, m 8, seed 42"
    std::string describe() const;
};

// What a search counted; partial counts add up.
struct tally {
    std::uint64_t nodes = 0;
    std::uint64_t leaves = 0;
    std::int32_t max_height = 0;

    void add(const tally& o) {
        nodes += o.nodes;
        leaves += o.leaves;
        max_height = o.max_height > max_height ? o.max_height : max_height;
    }
    bool operator==(const tally&) const = default;
};

class tree {
  public:
    explicit tree(const tree_params& p);

    node root() const { return root_node(p_.seed); }
    int children(const node& n) const;
    const tree_params& params() const { return p_; }

    // Expands up to `budget` nodes from the top of `stack`, depth first: each is popped,
    // counted into `t`, and its children pushed (all of them at once). What is left on the
    // stack is the rest of the work, in any order and on any rank.
    void expand(std::vector<node>& stack, tally& t, std::uint64_t budget) const;

    // The whole tree, one node after the other on this thread.
    tally search() const;

  private:
    int geometric_children(const node& n) const;
    double log_one_minus_p(std::int32_t height) const;

    tree_params p_;
    // ln(1 - p) by height for geometric nodes, the same doubles the formula gives (most of a
    // geometric node's cost besides its hash is two logarithms; this saves one).
    std::vector<double> log_one_minus_p_;
};

} // namespace uts
