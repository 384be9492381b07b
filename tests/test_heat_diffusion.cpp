// prema::detail::heat: rank mesh, Watts' second-order diffusion of transfer vectors, object
// selection. Pure arithmetic, so every rank of the job runs the same deterministic checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <prema/error.hpp>

#include "lb/heat_diffusion_math.hpp"

namespace heat = prema::detail::heat;

namespace {

double sum_of(const std::vector<double>& v) {
    return std::accumulate(v.begin(), v.end(), 0.0);
}

double max_of(const std::vector<double>& v) {
    return *std::max_element(v.begin(), v.end());
}

// load_i - sum_k t[i][k], the load a rank has once its transfers are met.
std::vector<double> apply(const std::vector<double>& load,
                          const std::vector<std::vector<double>>& t) {
    std::vector<double> out(load.size());
    for (std::size_t i = 0; i < load.size(); ++i) {
        double s = 0;
        for (double x : t[i])
            s += x;
        out[i] = load[i] - s;
    }
    return out;
}

struct shape {
    std::string name;
    std::vector<double> load;
};

// The imbalance shapes every mesh is checked with.
std::vector<shape> shapes(int p) {
    std::vector<shape> out;
    std::vector<double> hot(p, 1.0);
    hot[0] = 1.0 + p; // one rank holds half of all work
    out.push_back({"one hot rank", hot});
    std::vector<double> hot_mid(p, 2.0);
    hot_mid[p / 2] = 50.0;
    out.push_back({"hot rank in the middle", hot_mid});
    std::vector<double> linear(p);
    for (int i = 0; i < p; ++i)
        linear[i] = 1.0 + i;
    out.push_back({"linear", linear});
    std::vector<double> step(p, 1.0);
    for (int i = 0; i < p / 2; ++i)
        step[i] = 1.2; // half the ranks 20% heavier
    out.push_back({"step, half 20% heavy", step});
    std::vector<double> few(p, 1.0);
    for (int i = 0; i < std::max(1, p / 5); ++i)
        few[i] = 2.0; // 20% of the ranks twice as heavy
    out.push_back({"step, 20% of ranks heavy", few});
    return out;
}

// Exact best |sum - target| over all subsets within the overshoot rule, by plain enumeration.
double brute_best_error(const std::vector<double>& w, double target) {
    std::vector<double> pos;
    for (double x : w)
        if (x > 0)
            pos.push_back(x);
    if (pos.empty() || target <= 0)
        return std::max(target, 0.0);
    const double limit = target + *std::min_element(pos.begin(), pos.end());
    double best = target;
    for (std::uint32_t m = 0; m < (std::uint32_t(1) << pos.size()); ++m) {
        double s = 0;
        for (std::size_t k = 0; k < pos.size(); ++k)
            if (m & (std::uint32_t(1) << k))
                s += pos[k];
        if (s <= limit)
            best = std::min(best, std::abs(s - target));
    }
    return best;
}

double selected_sum(const std::vector<double>& w, const std::vector<int>& idx) {
    double s = 0;
    for (int i : idx)
        s += w[i];
    return s;
}

double smallest_positive(const std::vector<double>& w) {
    double m = std::numeric_limits<double>::infinity();
    for (double x : w)
        if (x > 0)
            m = std::min(m, x);
    return m;
}

} // namespace

TEST_SUITE("heat diffusion") {

    TEST_CASE("make_mesh: ceil(sqrt P) columns, the last row partial, primes included") {
        auto shape = [](int p) {
            auto m = heat::make_mesh(p);
            return std::vector<int>{m.rows(), m.cols};
        };
        CHECK(shape(1) == std::vector<int>{1, 1});
        CHECK(shape(2) == std::vector<int>{1, 2});
        CHECK(shape(4) == std::vector<int>{2, 2});
        CHECK(shape(7) == std::vector<int>{3, 3});
        CHECK(shape(8) == std::vector<int>{3, 3});
        CHECK(shape(9) == std::vector<int>{3, 3});
        CHECK(shape(13) == std::vector<int>{4, 4});
        CHECK(shape(16) == std::vector<int>{4, 4});
        CHECK(shape(17) == std::vector<int>{4, 5});
        CHECK(shape(10007) == std::vector<int>{100, 101});
        CHECK_THROWS_AS(heat::make_mesh(0), prema::usage_error);
    }

    // Breadth-first distances from rank 0 and from the last rank: the mesh is connected and
    // its diameter grows as sqrt(P) for every P (a prime P built a 1 x P line before).
    TEST_CASE("the mesh is connected with a diameter of about 2 sqrt(P), primes included") {
        for (int p : {2, 3, 5, 7, 13, 61, 64, 97, 1009}) {
            CAPTURE(p);
            auto m = heat::make_mesh(p);
            int diameter = 0;
            for (int from : {0, p - 1, m.cols - 1}) {
                std::vector<int> dist(std::size_t(p), -1), queue{from};
                dist[std::size_t(from)] = 0;
                for (std::size_t q = 0; q < queue.size(); ++q)
                    for (int j : m.neighbours(queue[q]))
                        if (dist[std::size_t(j)] < 0) {
                            dist[std::size_t(j)] = dist[std::size_t(queue[q])] + 1;
                            queue.push_back(j);
                        }
                CHECK(queue.size() == std::size_t(p));
                diameter = std::max(diameter, *std::max_element(dist.begin(), dist.end()));
            }
            CHECK(diameter <= 2 * int(std::ceil(std::sqrt(double(p)))));
        }
    }

    TEST_CASE("neighbours: Neumann boundary, symmetric, ascending") {
        for (int p : {1, 2, 4, 7, 8, 9, 12, 16, 17}) {
            CAPTURE(p);
            auto m = heat::make_mesh(p);
            CHECK(m.size() == p);
            int directed = 0, most = 0;
            for (int i = 0; i < p; ++i) {
                auto n = m.neighbours(i);
                CHECK(std::is_sorted(n.begin(), n.end()));
                CHECK(n.size() <= 4);
                directed += int(n.size());
                most = std::max(most, int(n.size()));
                for (int j : n) {
                    CHECK(j != i);
                    auto back = m.neighbours(j);
                    CHECK(std::count(back.begin(), back.end(), i) == 1);
                }
            }
            CHECK(m.max_degree() == most);
            // No wrap-around: each full row has cols - 1 edges, the last one its length - 1,
            // and every rank with one below has a vertical edge.
            const int last = p - (m.rows() - 1) * m.cols;
            const int edges = (m.rows() - 1) * (m.cols - 1) + (last - 1) + (p - m.cols);
            CHECK(directed == 2 * edges);
        }
        auto m9 = heat::make_mesh(9);
        CHECK(m9.neighbours(0) == std::vector<int>{1, 3});
        CHECK(m9.neighbours(4) == std::vector<int>{1, 3, 5, 7});
        CHECK(m9.neighbours(5) == std::vector<int>{2, 4, 8});
        auto m7 = heat::make_mesh(7); // 0 1 2 / 3 4 5 / 6
        CHECK(m7.neighbours(6) == std::vector<int>{3});
        CHECK(m7.neighbours(4) == std::vector<int>{1, 3, 5});
        CHECK(m7.neighbours(5) == std::vector<int>{2, 4});
        CHECK(heat::make_mesh(1).neighbours(0).empty());
        CHECK_THROWS_AS(m9.neighbours(9), prema::usage_error);
        CHECK_THROWS_AS(m9.neighbours(-1), prema::usage_error);
    }

    TEST_CASE("Watts' nu matches the digest's 3-D torus table (6 neighbours)") {
        CHECK(heat::watts_sweeps(1 - 0.50, 6) == 2);
        CHECK(heat::watts_sweeps(1 - 0.80, 6) == 3);
        CHECK(heat::watts_sweeps(1 - 0.90, 6) == 4);
        CHECK(heat::watts_sweeps(1 - 0.95, 6) == 4);
        CHECK(heat::watts_sweeps(1 - 0.99, 6) == 4);
        CHECK(heat::watts_sweeps(0.5, 0) == 1); // an isolated rank: nothing to iterate
        CHECK(heat::watts_sweeps(1.0, 4) == 1);
    }

    TEST_CASE("inner_sweeps: Watts' nu at small alpha, more where Watts' would diverge") {
        for (int deg : {1, 2, 3, 4, 6})
            for (double a : {0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 0.95}) {
                CAPTURE(deg);
                CAPTURE(a);
                CHECK(heat::inner_sweeps(a, deg) >= heat::watts_sweeps(a, deg));
            }
        CHECK(heat::inner_sweeps(0.05, 4) == heat::watts_sweeps(0.05, 4));
        CHECK(heat::inner_sweeps(0.1, 4) == heat::watts_sweeps(0.1, 4));
        CHECK(heat::watts_sweeps(0.8, 4) == 1);
        CHECK(heat::inner_sweeps(0.8, 4) > 1);
    }

    TEST_CASE("balanced input gives zero transfers") {
        for (int p : {1, 4, 8, 9, 16}) {
            CAPTURE(p);
            auto m = heat::make_mesh(p);
            for (double level : {0.0, 1.0, 3.7}) {
                auto r = heat::diffuse(m, std::vector<double>(p, level), 0.1);
                CHECK(r.outer_steps == 0);
                CHECK(r.converged);
                REQUIRE(r.transfers.size() == std::size_t(p));
                for (int i = 0; i < p; ++i) {
                    CHECK(r.transfers[i].size() == m.neighbours(i).size());
                    for (double x : r.transfers[i])
                        CHECK(x == 0.0);
                }
            }
        }
    }

    TEST_CASE("transfers balance every shape within (1 + alpha) * average") {
        for (int p : {4, 8, 9, 16}) {
            auto m = heat::make_mesh(p);
            for (const auto& s : shapes(p))
                for (double alpha : {0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 0.95}) {
                    CAPTURE(p);
                    CAPTURE(s.name);
                    CAPTURE(alpha);
                    auto r = heat::diffuse(m, s.load, alpha);
                    const double avg = sum_of(s.load) / p;
                    auto after = apply(s.load, r.transfers);
                    CHECK(r.converged);
                    CHECK(r.outer_steps < 1000);
                    CHECK(max_of(after) <= (1 + alpha) * avg + 1e-9 * avg);
                    CHECK(max_of(r.final_load) <= (1 + alpha) * avg);
                }
        }
    }

    TEST_CASE("lines (prime rank counts) and a larger grid also converge") {
        for (int p : {2, 3, 7, 13, 36, 64}) {
            auto m = heat::make_mesh(p);
            for (const auto& s : shapes(p)) {
                CAPTURE(p);
                CAPTURE(s.name);
                auto r = heat::diffuse(m, s.load, 0.1);
                const double avg = sum_of(s.load) / p;
                CHECK(r.converged);
                CHECK(max_of(apply(s.load, r.transfers)) <= 1.1 * avg + 1e-9 * avg);
            }
        }
    }

    // A prime P made a 1 x P line, whose slowest mode needs O(P^2) outer steps.
    TEST_CASE("a prime rank count converges about as fast as a square one") {
        auto steps = [](int p) {
            std::vector<double> load(std::size_t(p), 1.0);
            load[0] = 1.0 + p;
            auto r = heat::diffuse(heat::make_mesh(p), load, 0.1);
            CHECK(r.converged);
            return r.outer_steps;
        };
        for (int prime : {61, 97}) {
            CAPTURE(prime);
            const int square = prime == 61 ? 64 : 100;
            CHECK(steps(prime) <= 2 * steps(square));
        }
    }

    TEST_CASE("conservation: the implied load change is the transfer sum, total unchanged") {
        for (int p : {4, 8, 9, 16}) {
            auto m = heat::make_mesh(p);
            for (const auto& s : shapes(p)) {
                CAPTURE(p);
                CAPTURE(s.name);
                auto r = heat::diffuse(m, s.load, 0.1);
                const double total = sum_of(s.load);
                // final_load is load - sum_k t[i][k], summed in the same order: exactly equal.
                CHECK(r.final_load == apply(s.load, r.transfers));
                CHECK(sum_of(r.final_load) == doctest::Approx(total).epsilon(1e-12));
                double net = 0;
                for (const auto& row : r.transfers)
                    for (double x : row)
                        net += x;
                CHECK(std::abs(net) <= 1e-12 * total);
            }
        }
    }

    TEST_CASE("antisymmetry is exact: t_ij == -t_ji") {
        for (int p : {4, 8, 9, 16}) {
            auto m = heat::make_mesh(p);
            for (const auto& s : shapes(p)) {
                CAPTURE(p);
                CAPTURE(s.name);
                auto t = heat::diffuse(m, s.load, 0.05).transfers;
                bool any_nonzero = false;
                for (int i = 0; i < p; ++i) {
                    auto ni = m.neighbours(i);
                    for (std::size_t k = 0; k < ni.size(); ++k) {
                        const int j = ni[k];
                        auto nj = m.neighbours(j);
                        auto back = std::find(nj.begin(), nj.end(), i) - nj.begin();
                        CHECK(t[j][back] == -t[i][k]);
                        any_nonzero = any_nonzero || t[i][k] != 0;
                    }
                }
                CHECK(any_nonzero);
            }
        }
    }

    TEST_CASE("a hot rank sends, and its neighbours pass work on") {
        auto m = heat::make_mesh(9);
        std::vector<double> load(9, 1.0);
        load[0] = 10.0;
        auto t = heat::diffuse(m, load, 0.1).transfers;
        for (double x : t[0])
            CHECK(x > 0); // rank 0 only sends, to 1 and 3
        // Rank 1 receives from 0 and forwards towards 2 and 4.
        CHECK(t[1][0] < 0);
        CHECK(t[1][1] > 0);
        CHECK(t[1][2] > 0);
    }

    TEST_CASE("deterministic: same input, bit-identical output") {
        auto m = heat::make_mesh(16);
        std::mt19937 gen(42);
        std::uniform_real_distribution<double> dist(0.0, 10.0);
        std::vector<double> load(16);
        for (auto& x : load)
            x = dist(gen);
        auto a = heat::diffuse(m, load, 0.1);
        auto copy = load;
        auto b = heat::diffuse(heat::make_mesh(16), copy, 0.1);
        CHECK(a.transfers == b.transfers);
        CHECK(a.final_load == b.final_load);
        CHECK(a.outer_steps == b.outer_steps);
    }

    TEST_CASE("the outer-step cap stops early and still returns consistent transfers") {
        auto m = heat::make_mesh(16);
        std::vector<double> load(16, 1.0);
        load[0] = 100.0;
        auto r = heat::diffuse(m, load, 0.01, 2);
        CHECK(r.outer_steps == 2);
        CHECK_FALSE(r.converged);
        CHECK(r.final_load == apply(load, r.transfers));
        CHECK(max_of(r.final_load) < 100.0);
    }

    TEST_CASE("bad input is a usage_error") {
        auto m = heat::make_mesh(4);
        const std::vector<double> ok(4, 1.0);
        CHECK_THROWS_AS(heat::diffuse(m, std::vector<double>(3, 1.0), 0.1), prema::usage_error);
        CHECK_THROWS_AS(heat::diffuse(m, {1.0, -1.0, 1.0, 1.0}, 0.1), prema::usage_error);
        CHECK_THROWS_AS(heat::diffuse(m, {1.0, std::nan(""), 1.0, 1.0}, 0.1), prema::usage_error);
        CHECK_THROWS_AS(heat::diffuse(m, ok, 0.0), prema::usage_error);
        CHECK_THROWS_AS(heat::diffuse(m, ok, -0.1), prema::usage_error);
        CHECK_THROWS_AS(heat::diffuse(m, ok, std::nan("")), prema::usage_error);
        heat::rank_mesh bad;
        bad.ranks = 0;
        CHECK_THROWS_AS(heat::diffuse(bad, {}, 0.1), prema::usage_error);
    }

    TEST_CASE("select_objects: exact hits in small sets") {
        const std::vector<double> w{3, 5, 7, 11, 13};
        for (double target : {3.0, 8.0, 18.0, 24.0, 39.0}) {
            CAPTURE(target);
            auto idx = heat::select_objects(w, target);
            CHECK(selected_sum(w, idx) == target);
            CHECK(std::is_sorted(idx.begin(), idx.end()));
        }
        // Ties go to fewer objects: 18 = 5 + 13 = 7 + 11, never a longer sum.
        CHECK(heat::select_objects(w, 18.0).size() == 2);
        CHECK(heat::select_objects({1, 2, 3, 4, 5}, 5.0) == std::vector<int>{4}); // not 1+4, 2+3

        std::mt19937 gen(7);
        for (int round = 0; round < 200; ++round) {
            const int n = 1 + round % 19;
            std::uniform_int_distribution<int> load(1, 50);
            std::vector<double> v(n);
            for (auto& x : v)
                x = load(gen);
            double target = 0;
            for (int i = 0; i < n; ++i)
                if (gen() & 1)
                    target += v[i];
            if (target == 0)
                target = v[0];
            CAPTURE(round);
            CHECK(selected_sum(v, heat::select_objects(v, target)) == target);
        }
    }

    TEST_CASE("select_objects: small sets get the optimal error") {
        std::mt19937 gen(11);
        std::uniform_real_distribution<double> load(0.1, 5.0), t(0.0, 30.0);
        for (int round = 0; round < 200; ++round) {
            const int n = 1 + round % 12;
            std::vector<double> v(n);
            for (auto& x : v)
                x = load(gen);
            const double target = t(gen);
            auto idx = heat::select_objects(v, target);
            CAPTURE(round);
            CHECK(std::abs(selected_sum(v, idx) - target) ==
                  doctest::Approx(brute_best_error(v, target)).epsilon(1e-12));
        }
    }

    TEST_CASE("select_objects: never over target by more than the smallest object") {
        std::mt19937 gen(3);
        std::uniform_real_distribution<double> load(0.01, 10.0), frac(0.0, 1.2);
        for (int round = 0; round < 300; ++round) {
            const int n = 1 + round % 60; // both exhaustive (< 20) and first-fit sizes
            std::vector<double> v(n);
            for (auto& x : v)
                x = load(gen);
            const double target = frac(gen) * sum_of(v);
            auto idx = heat::select_objects(v, target);
            CAPTURE(round);
            CHECK(selected_sum(v, idx) <= target + smallest_positive(v) + 1e-12);
            CHECK(std::adjacent_find(idx.begin(), idx.end()) == idx.end()); // no repeats
        }
        // One object bigger than the target but closer than nothing: allowed.
        CHECK(heat::select_objects({10.0}, 9.0) == std::vector<int>{0});
        CHECK(heat::select_objects({10.0}, 4.0).empty());
    }

    TEST_CASE("select_objects: first fit decreasing for 20 or more objects") {
        std::vector<double> w(25);
        std::iota(w.begin(), w.end(), 1.0); // 1 .. 25
        auto idx = heat::select_objects(w, 100.0);
        CHECK(selected_sum(w, idx) == 100.0); // 25 + 24 + 23 + 22 + 6
        CHECK(idx.size() == 5);

        std::vector<double> ones(30, 1.0);
        auto half = heat::select_objects(ones, 7.5);
        CHECK(std::abs(selected_sum(ones, half) - 7.5) <= 0.5);
        // The top-up takes one more small object when that lands closer.
        std::vector<double> w2(20, 4.0);
        w2.push_back(1.0);
        auto top = heat::select_objects(w2, 8.8);
        CHECK(selected_sum(w2, top) == 9.0);
    }

    TEST_CASE("select_objects: empty input, target <= 0, unusable loads") {
        CHECK(heat::select_objects({}, 5.0).empty());
        CHECK(heat::select_objects({1.0, 2.0}, 0.0).empty());
        CHECK(heat::select_objects({1.0, 2.0}, -3.0).empty());
        CHECK(heat::select_objects({1.0, 2.0}, std::nan("")).empty());
        CHECK(heat::select_objects({0.0, -1.0}, 5.0).empty());
        auto idx = heat::select_objects({0.0, -1.0, 2.0, std::nan(""), 0.0}, 10.0);
        CHECK(idx == std::vector<int>{2});
        std::vector<double> many(30, 0.0);
        many[17] = 1.0;
        CHECK(heat::select_objects(many, 10.0) == std::vector<int>{17});
    }
}
