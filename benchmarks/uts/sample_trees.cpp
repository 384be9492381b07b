#include "sample_trees.hpp"

#include <prema/error.hpp>

namespace uts {

namespace {

using enum tree_kind;
using enum geo_shape;

tree_params geometric_tree(geo_shape shape, int depth, double b0, int seed) {
    tree_params p;
    p.kind = geometric;
    p.shape = shape;
    p.depth = depth;
    p.b0 = b0;
    p.seed = seed;
    return p;
}

tree_params binomial_tree(double b0, double q, int m, int seed) {
    tree_params p;
    p.kind = binomial;
    p.b0 = b0;
    p.q = q;
    p.m = m;
    p.seed = seed;
    return p;
}

tree_params hybrid_tree(geo_shape shape, int depth, double b0, double q, int m, int seed) {
    tree_params p = geometric_tree(shape, depth, b0, seed);
    p.kind = hybrid;
    p.q = q;
    p.m = m;
    return p;
}

constexpr const char* published = "published with UTS 2.1";
// Counted by this program's sequential loop and by an independent Python implementation
// (hashlib's SHA-1) alike.
constexpr const char* small = "the test tree's known size";

const sample_tree table[] = {
    // The release's small workloads (about 4 million nodes).
    {"T1", geometric_tree(fixed, 10, 4, 19), {4'130'071, 3'305'118, 10}, published},
    {"T5", geometric_tree(linear, 20, 4, 34), {4'147'582, 2'181'318, 20}, published},
    {"T2", geometric_tree(cyclic, 16, 6, 502), {4'117'769, 2'342'762, 81}, published},
    {"T3", binomial_tree(2000, 0.124875, 8, 42), {4'112'897, 3'599'034, 1572}, published},
    {"T4", hybrid_tree(linear, 16, 6, 0.234375, 4, 1), {4'132'453, 3'108'986, 134}, published},
    // Large workloads (about 100 million nodes).
    {"T1L", geometric_tree(fixed, 13, 4, 29), {102'181'082, 81'746'377, 13}, published},
    {"T2L", geometric_tree(cyclic, 23, 7, 220), {96'793'510, 53'791'152, 67}, published},
    {"T3L", binomial_tree(2000, 0.200014, 5, 7), {111'345'631, 89'076'904, 17844}, published},
    // Small trees for tests (a quarter of a million nodes): T1 two levels shallower, and T3
    // slightly subcritical (q m = 0.984 instead of 0.999).
    {"T1XS", geometric_tree(fixed, 8, 4, 19), {257'042, 205'878, 8}, small},
    {"T3XS", binomial_tree(2000, 0.123, 8, 42), {247'729, 217'012, 261}, small},
};

} // namespace

std::span<const sample_tree> sample_trees() {
    return table;
}

const sample_tree& find_sample_tree(const std::string& name) {
    std::string names;
    for (const auto& t : table) {
        if (name == t.name)
            return t;
        names += names.empty() ? "" : ", ";
        names += t.name;
    }
    throw prema::usage_error("--tree " + name + ": no such tree (known: " + names + ")");
}

} // namespace uts
