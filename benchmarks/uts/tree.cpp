#include "tree.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace uts {

namespace {

constexpr int max_children = 100;

const char* shape_name(geo_shape s) {
    switch (s) {
    case geo_shape::linear:
        return "linear";
    case geo_shape::expdec:
        return "expdec";
    case geo_shape::cyclic:
        return "cyclic";
    case geo_shape::fixed:
        return "fixed";
    }
    return "?";
}

// The geometric target branching factor b_h at `height`.
double target_branching(const tree_params& p, std::int32_t height) {
    if (height == 0)
        return p.b0;
    double h = height, d = p.depth;
    switch (p.shape) {
    case geo_shape::linear:
        return p.b0 * (1.0 - h / d);
    case geo_shape::expdec:
        return p.b0 * std::pow(h, -std::log(p.b0) / std::log(d));
    case geo_shape::cyclic:
        return h > 5 * d ? 0.0 : std::pow(p.b0, std::sin(2.0 * 3.141592653589793 * h / d));
    case geo_shape::fixed:
        return h < d ? p.b0 : 0.0;
    }
    return 0.0;
}

double log_one_minus_p_at(const tree_params& p, std::int32_t height) {
    return std::log(1.0 - 1.0 / (1.0 + target_branching(p, height)));
}

} // namespace

std::string tree_params::describe() const {
    char buf[200];
    switch (kind) {
    case tree_kind::binomial:
        std::snprintf(buf, sizeof buf, "binomial, b0 %g, q %g, m %d, seed %d", b0, q, m, seed);
        break;
    case tree_kind::geometric:
        std::snprintf(buf, sizeof buf, "geometric (%s), b0 %g, depth %d, seed %d",
                      shape_name(shape), b0, depth, seed);
        break;
    case tree_kind::hybrid:
        std::snprintf(buf, sizeof buf,
                      "hybrid (%s above %g of depth %d, then q %g, m %d), b0 %g, seed %d",
                      shape_name(shape), shift, depth, q, m, b0, seed);
        break;
    }
    return buf;
}

tree::tree(const tree_params& p) : p_(p) {
    if (p.kind != tree_kind::binomial) {
        // Every height a fixed, linear or cyclic tree can reach (deeper nodes have no children).
        int heights = std::clamp(5 * p.depth + 2, 1, 1 << 16);
        for (int h = 0; h < heights; ++h)
            log_one_minus_p_.push_back(log_one_minus_p_at(p, h));
    }
}

double tree::log_one_minus_p(std::int32_t height) const {
    if (std::size_t(height) < log_one_minus_p_.size())
        return log_one_minus_p_[std::size_t(height)];
    return log_one_minus_p_at(p_, height);
}

int tree::geometric_children(const node& n) const {
    // The inverse of the geometric distribution's cumulative density at u; ln(1 - p) is -inf
    // where b_h is 0 (p = 1), which gives no children.
    double k = std::floor(std::log(1.0 - uniform(n)) / log_one_minus_p(n.height));
    return k >= max_children ? max_children : int(k);
}

int tree::children(const node& n) const {
    auto binomial = [&] { return uniform(n) < p_.q ? p_.m : 0; };
    switch (p_.kind) {
    case tree_kind::binomial:
        if (n.height == 0) // floor(b0): under the root's own cap, ceil(b0)
            return int(std::floor(p_.b0));
        return std::min(binomial(), max_children);
    case tree_kind::geometric:
        return geometric_children(n);
    case tree_kind::hybrid:
        return double(n.height) < p_.shift * p_.depth ? geometric_children(n)
                                                      : std::min(binomial(), max_children);
    }
    return 0;
}

void tree::expand(std::vector<node>& stack, tally& t, std::uint64_t budget) const {
    for (; budget > 0 && !stack.empty(); --budget) {
        node n = stack.back();
        stack.pop_back();
        int k = children(n);
        ++t.nodes;
        t.leaves += k == 0;
        t.max_height = std::max(t.max_height, n.height);
        for (int i = 0; i < k; ++i)
            stack.push_back(child_node(n, i));
    }
}

tally tree::search() const {
    std::vector<node> stack{root()};
    tally t;
    expand(stack, t, std::numeric_limits<std::uint64_t>::max());
    return t;
}

} // namespace uts
