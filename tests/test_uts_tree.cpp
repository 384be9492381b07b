// The UTS benchmark's tree (benchmarks/uts): the SHA-1 node states and random numbers against
// digests computed independently (sha1sum, Python's hashlib), the child-count rule of every
// shape against the formula evaluated in Python, and the small test trees' counts, which must
// not depend on how the work is cut into chunks or spread over stacks.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <prema/error.hpp>

#include "rng.hpp"
#include "sample_trees.hpp"
#include "tree.hpp"

namespace {

std::string hex(const uts::node& n) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (auto b : n.state) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

uts::tree_params geometric(uts::geo_shape shape, double b0, int depth) {
    uts::tree_params p;
    p.kind = uts::tree_kind::geometric;
    p.shape = shape;
    p.b0 = b0;
    p.depth = depth;
    return p;
}

// child 0 of the root of seed 19: u = 0.99760702485...
uts::node high_u_at(std::int32_t height) {
    uts::node n = uts::child_node(uts::root_node(19), 0);
    n.height = height;
    return n;
}

} // namespace

TEST_CASE("root and child states are the SHA-1 digests the UTS rules define") {
    // SHA-1 of 16 zero bytes and the seed, big-endian (`printf '\0...\0\x13' | sha1sum`).
    uts::node r19 = uts::root_node(19);
    CHECK(hex(r19) == "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
    CHECK(r19.height == 0);
    CHECK(hex(uts::root_node(42)) == "a11dabbcec7aab309c890ab3dbc256eaeb582782");
    // SHA-1 of the parent's 20 bytes and the child index, big-endian.
    uts::node c0 = uts::child_node(r19, 0), c1 = uts::child_node(r19, 1);
    CHECK(hex(c0) == "2fb3131030280c1617a81d6a49c1e29effb19645");
    CHECK(hex(c1) == "4a8304c7c88f903ac06b01b07c7b2590e9397b5b");
    CHECK(hex(uts::child_node(r19, 4)) == "0903e6986fda015d0b1aaf8903dfe65c4cf129a5");
    CHECK(c0.height == 1);
    CHECK(uts::child_node(c0, 3).height == 2);
    // Bytes 16..19 big-endian, top bit cleared (c0's are 0xffb19645).
    CHECK(uts::rand31(r19) == 1518729323);
    CHECK(uts::rand31(uts::root_node(42)) == 1800939394);
    CHECK(uts::rand31(c0) == 2142344773);
    CHECK(uts::uniform(c0) == doctest::Approx(2142344773.0 / 2147483648.0));
}

TEST_CASE("T1's and T3's first generations") {
    uts::tree t1(uts::find_sample_tree("T1").params);
    uts::node r19 = t1.root();
    CHECK(t1.children(r19) == 5);
    const int t1_children[] = {27, 7, 18, 3, 4};
    for (int i = 0; i < 5; ++i)
        CHECK(t1.children(uts::child_node(r19, i)) == t1_children[i]);

    uts::tree t3(uts::find_sample_tree("T3").params);
    uts::node r42 = t3.root();
    CHECK(t3.children(r42) == 2000); // a binomial root is not capped at 100
    // u < q = 0.124875 for children 5 and 6 only (rand31 59961814 and 87640987).
    for (int i = 0; i < 12; ++i)
        CHECK(t3.children(uts::child_node(r42, i)) == (i == 5 || i == 6 ? 8 : 0));
}

TEST_CASE("geometric shapes give floor(ln(1 - u) / ln(1 - p)) with p = 1 / (1 + b_h)") {
    using enum uts::geo_shape;
    uts::tree lin(geometric(linear, 4, 20)); // b_h = 4 (1 - h/20)
    CHECK(lin.children(high_u_at(1)) == 25);
    CHECK(lin.children(high_u_at(5)) == 20);
    CHECK(lin.children(high_u_at(19)) == 3);
    CHECK(lin.children(high_u_at(20)) == 0);
    uts::tree exp(geometric(expdec, 4, 20)); // b_h = 4 h^(-ln 4 / ln 20)
    CHECK(exp.children(high_u_at(1)) == 27);
    CHECK(exp.children(high_u_at(2)) == 20);
    CHECK(exp.children(high_u_at(7)) == 12);
    uts::tree cyc(geometric(cyclic, 6, 16)); // b_h = 6^sin(2 pi h / 16), 0 past 5 x 16
    CHECK(cyc.children(high_u_at(1)) == 14);
    CHECK(cyc.children(high_u_at(4)) == 39);
    CHECK(cyc.children(high_u_at(12)) == 3);
    CHECK(cyc.children(high_u_at(80)) == 8);
    CHECK(cyc.children(high_u_at(81)) == 0);
    CHECK(cyc.children(high_u_at(5000)) == 0); // past the table of ln(1 - p) by height
    uts::tree fix(geometric(fixed, 4, 10));
    CHECK(fix.children(high_u_at(9)) == 27);
    CHECK(fix.children(high_u_at(10)) == 0);
    // 304 by the formula: capped.
    CHECK(uts::tree(geometric(fixed, 50, 10)).children(high_u_at(3)) == 100);
}

TEST_CASE("the test trees have their counted sizes, however the work is cut") {
    for (const char* name : {"T1XS", "T3XS"}) {
        CAPTURE(name);
        const auto& sample = uts::find_sample_tree(name);
        uts::tree t(sample.params);
        CHECK(t.search() == sample.expected);

        // Chunks of 7 nodes, and every 50th chunk the stack's older half goes to a second
        // stack that is expanded later: as bags are split and moved.
        std::vector<uts::node> a{t.root()}, b;
        uts::tally got;
        for (int round = 1; !a.empty() || !b.empty(); ++round) {
            if (a.empty())
                std::swap(a, b);
            t.expand(a, got, 7);
            if (round % 50 == 0 && a.size() >= 2) {
                auto half = std::ptrdiff_t(a.size() / 2);
                b.insert(b.end(), a.begin(), a.begin() + half);
                a.erase(a.begin(), a.begin() + half);
            }
        }
        CHECK(got == sample.expected);
    }
}

TEST_CASE("an unknown tree name is refused with the known ones") {
    CHECK_THROWS_WITH_AS(uts::find_sample_tree("T9"),
                         doctest::Contains("--tree T9: no such tree (known: T1, T5, T2, T3"),
                         prema::usage_error);
}
