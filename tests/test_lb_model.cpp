// The load-balancing model (src/lb/model/) on cases small enough to work out by hand: the
// two-class fit, the round model's rounds of migration, the thesis's closed form, and the
// inputs it reads (CSV workloads, machine files) with their error messages.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include <prema/error.hpp>

#include "lb/model/fit.hpp"
#include "lb/model/machine.hpp"
#include "lb/model/predict.hpp"
#include "lb/model/recommend.hpp"
#include "lb/model/workload.hpp"

namespace model = prema::model;
using doctest::Approx;

namespace {

model::workload two_ranks(std::vector<double> r0, std::vector<double> r1) {
    model::workload w;
    w.ranks = 2;
    w.weights = {std::move(r0), std::move(r1)};
    return w;
}

// Costs that make the rounds easy to follow: only migrations (and quiescence) take time, and
// balancing ticks come at once (period 0).
model::settings immediate(model::policy p) {
    model::settings s;
    s.policy = p;
    s.period_s = 0;
    s.quantum_s = 0;
    return s;
}

std::string error_of(auto&& f) {
    try {
        f();
    } catch (const prema::usage_error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("two-class fit: least-squares split of the sorted weights") {
    // {1,2,3,4}: splits after 1, 2, 3 cost 0+2, 0.5+0.5, 2+0; the middle one wins.
    auto f = model::fit_two_classes({4, 1, 3, 2});
    CHECK(f.gamma == 2);
    CHECK(f.light_s == Approx(1.5));
    CHECK(f.heavy_s == Approx(3.5));
    CHECK(f.error == Approx(1.0));
    CHECK(f.light_max == 2);
    CHECK(f.heavy_min == 3);

    // A step: exact, no error.
    f = model::fit_two_classes({5, 1, 1, 5, 1});
    CHECK(f.gamma == 3);
    CHECK(f.light_s == Approx(1));
    CHECK(f.heavy_s == Approx(5));
    CHECK(f.error == Approx(0));

    // One value: everything is light.
    f = model::fit_two_classes({2, 2, 2});
    CHECK(f.gamma == 3);
    CHECK(f.heavy_s == Approx(2));

    CHECK(error_of([] { model::fit_two_classes({}); }).find("no object weights") !=
          std::string::npos);
}

TEST_CASE("round model, no balancing: the most loaded rank, plus yields and quiescence") {
    model::machine m;
    m.poll_s = 0.01;
    m.quiescence_s = 0.02;
    auto s = immediate(model::policy::none);
    s.quantum_s = 0.5; // an item of 3 s suspends ceil(3 / 0.5) - 1 = 5 times
    auto p = model::predict(two_ranks({1, 1}, {3}), m, s);
    CHECK(p.makespan_s == Approx(3 + 5 * 0.01 + 0.02));
    CHECK(p.slowest_rank == 1);
    CHECK(p.slowest.compute == Approx(3));
    CHECK(p.slowest.preemption == Approx(0.05));
    CHECK(p.slowest.total() == Approx(p.makespan_s));
    CHECK(p.migrations == 0);
}

TEST_CASE("round model, work stealing: a grant is half the victim's spare objects") {
    // Rank 0 has five 1-s objects, rank 1 one. At 1 rank 1 is idle and rank 0 has three pending
    // (its worker busy): two move (half of three, rounded up), arrive at 1.1 and run 1.1..3.1 on
    // rank 1; rank 0 runs its last at 2..3. Makespan 3.1 on rank 1: 3 s of work and 0.1 s of
    // migration (the two travel together). One object per request took 3.2.
    model::machine m;
    m.migrate_s = 0.1;
    auto w = two_ranks({1, 1, 1, 1, 1}, {1});
    auto p = model::predict(w, m, immediate(model::policy::work_stealing));
    CHECK(p.makespan_s == Approx(3.1));
    CHECK(p.slowest_rank == 1);
    CHECK(p.migrations == Approx(2));
    CHECK(p.slowest.compute == Approx(3));
    CHECK(p.slowest.migrations == Approx(0.1));
    CHECK(p.slowest.total() == Approx(3.1));

    // Diffusion with one neighbour asks the same rank after a load query: same rounds.
    auto d = model::predict(w, m, immediate(model::policy::diffusion));
    CHECK(d.makespan_s == Approx(3.1));
    // Without balancing rank 0 takes 5 s.
    CHECK(model::predict(w, m, immediate(model::policy::none)).makespan_s == Approx(5));
}

TEST_CASE("round model: a victim gives its heaviest pending object, never its last") {
    // Rank 0: 2, 2, 2, 2 (ends 2, 4, 6, 8); rank 1: 1, 1, 1, 0.5 ends at 3.5 and steals a 2 (two
    // pending on rank 0): runs 3.5..5.5. Rank 0 starts its last at 4; at 5.5 nothing is spare.
    model::machine m;
    auto w = two_ranks({2, 2, 2, 2}, {1, 1, 1, 0.5});
    auto p = model::predict(w, m, immediate(model::policy::work_stealing));
    CHECK(p.makespan_s == Approx(6));
    CHECK(p.slowest_rank == 0);
    CHECK(p.migrations == Approx(1));
}

TEST_CASE("round model: victims pick by the estimates (--prema-lb-load), time goes by weight") {
    // Rank 0: 1, 4, 1, 1; rank 1: 0.5. At 0.5 rank 1 steals what rank 0 thinks heaviest of the
    // pending 4, 1, 1. Weighed by the work (measured), the 4: rank 1 runs it 0.5..4.5 while rank
    // 0 ends at 3. Declared wrong (0.5 for the 4, 2 for a 1), a 1: rank 0 runs the 4 from 1 to 5.
    model::machine m;
    auto w = two_ranks({1, 4, 1, 1}, {0.5});
    auto measured = model::predict(w, m, immediate(model::policy::work_stealing));
    CHECK(measured.makespan_s == Approx(4.5));
    CHECK(measured.slowest_rank == 1);
    w.estimates = {{1, 0.5, 2, 1}, {0.5}};
    auto declared = model::predict(w, m, immediate(model::policy::work_stealing));
    CHECK(declared.makespan_s == Approx(5));
    CHECK(declared.slowest_rank == 0);
    CHECK(declared.slowest.compute == Approx(5));

    std::istringstream csv("rank,weight_s,declared_s\n0,1,2\n0,3,1\n1,1,1\n");
    auto c = model::read_csv(csv, "weight_s", 1, "t.csv", "declared_s");
    CHECK(c.weights[0] == std::vector<double>{1, 3});
    CHECK(c.estimates[0] == std::vector<double>{2, 1});
    CHECK(c.estimates[1] == std::vector<double>{1});
    // Regranulated, the estimates are cut as the weights are.
    auto g = model::regranulate(c, 4);
    REQUIRE(g.estimates[0].size() == 4);
    CHECK(g.estimates[0][0] == Approx(1));
    CHECK(g.estimates[0][3] == Approx(0.5));
    std::istringstream none("rank,weight_s\n0,1\n");
    CHECK(error_of([&] {
              model::read_csv(none, "weight_s", 1, "t.csv", "declared_s");
          }).find("no column 'declared_s'") != std::string::npos);
    auto bad = c;
    bad.estimates[1].clear();
    CHECK(error_of([&] { model::validate(bad); }).find("estimates") != std::string::npos);
}

TEST_CASE("thesis closed form on a bi-modal workload") {
    // alpha = 2 s on rank 0, beta = 1 s on rank 1, N/P = 4. T_alpha = 8, T_beta = 4;
    // M_alpha = floor((8 - 4 - 0) / 2) = 2, C_alpha = 1/1 + 1 = 2, one round: one object moves,
    // T_alpha_work = 8 - 2 = 6 = T_beta_work = 4 + 2.
    model::machine m;
    auto w = two_ranks({2, 2, 2, 2}, {1, 1, 1, 1});
    auto none = model::predict_thesis(w, m, immediate(model::policy::none));
    CHECK(none.makespan_s == Approx(8));
    auto ws = model::predict_thesis(w, m, immediate(model::policy::work_stealing));
    CHECK(ws.makespan_s == Approx(6));
    CHECK(ws.migrations == Approx(1));
    // The round model agrees here.
    CHECK(model::predict(w, m, immediate(model::policy::work_stealing)).makespan_s == Approx(6));
}

TEST_CASE("yield points: the slice is the first multiple of the application's step") {
    model::settings s;
    s.quantum_s = 1e-3;
    s.yield_every_s = 0.4e-3; // suspends every 1.2 ms
    CHECK(model::slice_s(s) == Approx(1.2e-3));
    CHECK(model::yields(12e-3, s) == Approx(9));
    s.quantum_s = 0;
    CHECK(model::yields(12e-3, s) == 0);
}

TEST_CASE("inline progress: a running object's yield points poll every 50 us, not once a slice") {
    model::settings s;
    s.quantum_s = 1e-3;
    CHECK(model::poll_gap_s(s) == Approx(50e-6));
    s.yield_every_s = 20e-6; // polls at every third yield point
    CHECK(model::poll_gap_s(s) == Approx(60e-6));
    s.yield_every_s = 0.4e-3; // at each
    CHECK(model::poll_gap_s(s) == Approx(0.4e-3));
    s.quantum_s = 30e-6; // a quantum shorter than the poll interval
    s.yield_every_s = 0;
    CHECK(model::poll_gap_s(s) == Approx(30e-6));
    s.quantum_s = 0; // no yield points
    CHECK(model::poll_gap_s(s) == 0);
}

TEST_CASE("workloads: CSV, round robin and regranulation keep the work") {
    std::istringstream csv("object,rank,weight_s,measured_s\n0,0,1,1.1\n1,1,3,3.2\n2,0,2,2.1\n");
    auto w = model::read_csv(csv, "weight_s", 1, "t.csv");
    REQUIRE(w.ranks == 2);
    CHECK(w.weights[0] == std::vector<double>{1, 2});
    CHECK(w.weights[1] == std::vector<double>{3});

    auto g = model::regranulate(model::round_robin({1, 3}, 1, 1), 4);
    REQUIRE(g.weights[0].size() == 4);
    CHECK(g.weights[0][0] == Approx(0.5));
    CHECK(g.weights[0][3] == Approx(1.5));
    CHECK(g.total_s() == Approx(4));

    std::istringstream no_col("object,rank,weight\n0,0,1\n");
    CHECK(error_of([&] {
              model::read_csv(no_col, "weight_s", 1, "t.csv");
          }).find("no column 'weight_s'") != std::string::npos);
    std::istringstream bad("rank,weight_s\n0,-1\n");
    CHECK(error_of([&] { model::read_csv(bad, "weight_s", 1, "t.csv"); }).find("t.csv:2") !=
          std::string::npos);
    std::istringstream gap("rank,weight_s\n1,1\n");
    CHECK(error_of([&] {
              model::read_csv(gap, "weight_s", 1, "t.csv");
          }).find("rank 0 has no object") != std::string::npos);
}

TEST_CASE("machine files round-trip and name bad lines") {
    model::machine m;
    m.startup_s = 2e-6;
    m.per_byte_s = 1e-10;
    m.migrate_s = 3e-5;
    m.poll_s = 1e-6;
    m.decision_s = 4e-7;
    m.quiescence_s = 1e-4;
    std::stringstream file;
    model::write_machine(file, m, "test");
    auto back = model::read_machine(file, "m.txt");
    CHECK(back.startup_s == Approx(2e-6));
    CHECK(back.migrate_s == Approx(3e-5));
    CHECK(back.message_s(100) == Approx(2e-6 + 1e-8));

    std::istringstream unknown("startup = 1\n");
    CHECK(error_of([&] { model::read_machine(unknown, "m.txt"); }).find("m.txt:1: unknown key") !=
          std::string::npos);
    std::istringstream missing("startup_s = 1\n");
    CHECK(error_of([&] { model::read_machine(missing, "m.txt"); }).find("no value for") !=
          std::string::npos);
}

TEST_CASE("recommendation: coarse grains waste a heavy object's tail, finer ones balance") {
    // 4 ranks, all work on rank 0 (4 s). One object per worker cannot be split; with more
    // objects the others can take some.
    model::workload w = model::round_robin({4, 1e-3, 1e-3, 1e-3}, 4, 1);
    model::machine m;
    m.migrate_s = 1e-3;
    m.poll_s = 1e-5;
    model::scan_grid grid;
    grid.objects_per_worker = {1, 8};
    grid.quanta_s = {1e-3, 1e-2};
    auto all = model::scan(w, m, immediate(model::policy::work_stealing), grid);
    CHECK(all.size() == 4);
    auto& b = model::best(all);
    CHECK(b.objects_per_worker == 8);
    CHECK(b.quantum_s == Approx(1e-2)); // fewer yields
    CHECK(b.p.makespan_s < 2.0);
}
