// What each parameter is measured as (medians on rank 0's clock, the lowest of 3 rounds):
//   startup_s, per_byte_s  PREMA handler ping-pongs of 8 B to 64 KiB (tools/measure, as the
//                          latency benchmark): the slope of the least-squares line through the
//                          half round trips, and the 8-B half round trip less 8 bytes of it
//                          (a fitted intercept follows the noise of the large sizes)
//   migrate_s              prema::migrate of an empty object between ranks 0 and 1, less the
//                          completion reply's start-up
//   poll_s                 co_await prema::yield() on one worker: requeue and resume
//   decision_s             the work_stealing policy serving one request over a work map of 16
//                          objects, on an in-process context (no messages)
//   quiescence_s           a phase with nothing to do: runtime::run to global quiescence
#include "calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <span>
#include <vector>

#include <mpi.h>

#include <prema/prema.hpp>

#include "lb/model/machine.hpp"
#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"
#include "pingpong.hpp"

namespace prema::model {

namespace {

using clk = std::chrono::steady_clock;
using measure::summarize;

double seconds_since(clk::time_point t0) {
    return std::chrono::duration<double>(clk::now() - t0).count();
}

double median_s(std::vector<double> v) {
    if (v.empty())
        return 0;
    auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

// A rank with `objects` pending objects and nothing else, for timing a policy's decision.
class still_context final : public lb::context {
  public:
    explicit still_context(const config& cfg, int objects) : cfg_(cfg) {
        for (int i = 0; i < objects; ++i)
            map_.push_back({object_id{0, 0, std::uint64_t(i)}, 1.0 + i, 1});
    }
    void send(int, std::span<const std::byte>) override {}
    bool migrate(object_id, int) override { return true; }
    std::vector<lb::object_load> work_map() const override {
        auto v = map_;
        std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.load > b.load; });
        return v;
    }
    double local_load() const override { return double(map_.size()); }
    int running() const override { return 1; }
    int rank() const override { return 0; }
    int ranks() const override { return 2; }
    int workers() const override { return 1; }
    const config& options() const override { return cfg_; }
    void note_answer_wait(double) override {}

  private:
    const config& cfg_;
    std::vector<lb::object_load> map_;
};

// The request message of the receiver-initiated policies, as they encode it.
struct request_bytes : detail::requester {
    static std::vector<std::byte> make() {
        msg m{kind::request, 1, 0}; // one object wanted
        auto b = std::as_bytes(std::span(&m, 1));
        return {b.begin(), b.end()};
    }
};

double decision_s(const config& cfg) {
    still_context ctx(cfg, 16);
    auto policy = detail::make_work_stealing();
    policy->attach(ctx);
    auto request = request_bytes::make();
    std::vector<double> times;
    for (int i = 0; i < 2000; ++i) {
        auto t0 = clk::now();
        policy->receive(1, request);
        times.push_back(seconds_since(t0));
    }
    return median_s(times);
}

// Slope of the least-squares line through (bytes, half round trip), at least 0.
double fit_slope(const std::vector<double>& x, const std::vector<double>& y) {
    double n = double(x.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    }
    return std::max(0.0, (n * sxy - sx * sy) / (n * sxx - sx * sx));
}

task<> measure_entry(machine& m, std::vector<double>& migrations, std::vector<double>& yields) {
    const std::vector<std::size_t> sizes{8, 1024, 8192, 16384, 65536};
    std::vector<double> x, half;
    for (std::size_t bytes : sizes) {
        auto rtt = co_await measure::transport_pingpong(bytes, 50, 400);
        x.push_back(double(bytes));
        half.push_back(summarize(std::move(rtt)).half_rtt() * 1e-6);
    }
    m.per_byte_s = fit_slope(x, half);
    m.startup_s = std::max(0.0, half.front() - m.per_byte_s * x.front());
    if (rank() == 0) {
        auto ball = make_mobile<measure::ball>();
        for (int i = 0; i < 20 + 200; ++i) {
            auto t0 = clk::now();
            co_await migrate(ball, i % 2 == 0 ? 1 : 0); // there and back
            if (i >= 20)
                migrations.push_back(seconds_since(t0));
        }
        co_await destroy(ball);
        for (int i = 0; i < 20000; ++i) {
            auto t0 = clk::now();
            co_await yield();
            yields.push_back(seconds_since(t0));
        }
    }
}

// One round of every measurement, on rank 0's clock (the other ranks' values are unused).
machine measure_round(runtime& rt, const config& cfg) {
    machine m;
    std::vector<double> migrations, yields, phases;
    rt.run([&] { return measure_entry(m, migrations, yields); });
    for (int i = 0; i < 50; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        auto t0 = clk::now();
        rt.run([]() -> task<> { co_return; });
        phases.push_back(seconds_since(t0));
    }
    m.migrate_s = median_s(migrations); // the whole call, for now
    m.poll_s = median_s(yields);
    m.decision_s = decision_s(cfg);
    m.quiescence_s = median_s(phases);
    return m;
}

} // namespace

int calibrate(const config& base, const std::string& path) {
    int me = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p < 2) {
        if (me == 0)
            std::fprintf(stderr, "prema-model --calibrate: needs 2 ranks (mpirun -np 2 prema-model "
                                 "--calibrate FILE)\n");
        return 2;
    }
    config cfg = base;
    cfg.lb = "none";
    // Each figure is the lowest median of several rounds: on a shared machine other jobs only
    // ever add time, and what the model needs is the runtime's own cost.
    constexpr int rounds = 3;
    machine m;
    {
        runtime rt(MPI_COMM_WORLD, cfg);
        for (int r = 0; r < rounds; ++r) {
            if (me == 0)
                std::fprintf(stderr,
                             "[calibrate] round %d of %d: messages, migrations, yields, "
                             "policy decisions, quiescence\n",
                             r + 1, rounds);
            machine x = measure_round(rt, cfg);
            for (auto field : {&machine::startup_s, &machine::per_byte_s, &machine::migrate_s,
                               &machine::poll_s, &machine::decision_s, &machine::quiescence_s})
                m.*field = r == 0 ? x.*field : std::min(m.*field, x.*field);
        }
    }
    m.migrate_s = std::max(0.0, m.migrate_s - m.startup_s); // less the completion reply
    if (me != 0)
        return 0;
    std::ofstream out(path);
    write_machine(out, m,
                  "Measured by prema-model --calibrate on " + std::to_string(p) + " ranks, " +
                      std::to_string(cfg.workers) + " worker(s), " + to_string(cfg.progress) +
                      " progress (lowest median of " + std::to_string(rounds) + " rounds).");
    if (!out) {
        std::fprintf(stderr, "prema-model: cannot write %s\n", path.c_str());
        return 1;
    }
    write_machine(std::cout, m, "");
    std::printf("wrote %s\n", path.c_str());
    return 0;
}

} // namespace prema::model
