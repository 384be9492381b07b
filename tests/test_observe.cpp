// --prema-stats and --prema-trace: option parsing, the shutdown table, the merged trace file.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/lb/scheduler.hpp>
#include <prema/prema.hpp>

#include "runtime/gather_parts.hpp"
#include "test_support.hpp"

namespace {

struct tally {
    std::int64_t n = 0;
    template <class Ar> void serialize(Ar& ar) { ar(n); }
};

void bump(tally& t, std::int64_t by) {
    t.n += by;
}
std::int64_t total(const tally& t) {
    return t.n;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

constexpr int sends_per_rank = 5;

// Runs `phases` in a runtime with `cfg`; returns the table rank 0 prints at its shutdown (empty
// on the other ranks).
std::string stats_table(const prema::config& cfg,
                        const std::function<void(prema::runtime&)>& phases) {
    char out_path[256] = {};
    std::snprintf(out_path, sizeof out_path, "/tmp/prema_stats_test_%d.txt", int(::getpid()));
    int saved_stdout = -1;
    {
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        phases(rt);
        if (world_rank() == 0) {
            std::fflush(stdout);
            saved_stdout = ::dup(1);
            std::FILE* f = std::fopen(out_path, "w");
            REQUIRE(f);
            ::dup2(::fileno(f), 1);
            std::fclose(f);
        }
    }
    if (world_rank() != 0)
        return {};
    std::fflush(stdout);
    ::dup2(saved_stdout, 1);
    ::close(saved_stdout);
    auto table = slurp(out_path);
    std::remove(out_path);
    MESSAGE(table);
    return table;
}

// One row of the table: the label, then handlers ... mig-out as counts, busy, idle, overhead.
struct stats_row {
    std::string label;
    std::int64_t handlers = 0, object_handlers = 0, sent = 0, received = 0, bytes_sent = 0,
                 bytes_received = 0, forwards = 0, mig_in = 0, mig_out = 0;
    double busy_ms = 0, idle_ms = 0, overhead_ms = 0, measured_ms = 0;
    std::int64_t timed = 0;
};

std::vector<stats_row> parse_rows(const std::string& table) {
    std::vector<stats_row> rows;
    std::istringstream lines(table);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        stats_row r;
        if (fields >> r.label >> r.handlers >> r.object_handlers >> r.sent >> r.received >>
            r.bytes_sent >> r.bytes_received >> r.forwards >> r.mig_in >> r.mig_out >> r.busy_ms >>
            r.idle_ms >> r.overhead_ms >> r.measured_ms >> r.timed)
            rows.push_back(r);
    }
    return rows;
}

std::uint64_t sum_over_ranks(std::uint64_t v) {
    std::uint64_t sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

// About 2 ms of work with yield points, so that work stealing moves the objects still waiting.
prema::task<> work(tally& t) {
    for (int i = 0; i < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        co_await prema::yield_point();
    }
    ++t.n;
}

// The default FIFO, but every handler it hands out costs the worker 20 ms of searching.
constexpr auto slow_pop_cost = std::chrono::milliseconds(20);
struct slow_pop final : prema::lb::scheduler {
    prema::lb::ready_handler* pop(int worker) override {
        auto* h = scheduler::pop(worker);
        if (h)
            std::this_thread::sleep_for(slow_pop_cost);
        return h;
    }
};

} // namespace

TEST_CASE("--prema-stats is a flag, --prema-trace takes a file") {
    char a0[] = "app", a1[] = "--prema-stats", a2[] = "mine", a3[] = "--prema-trace",
         a4[] = "t.json";
    char* argv[] = {a0, a1, a2, a3, a4, nullptr};
    int argc = 5;
    auto c = prema::config::from_args(argc, argv);
    CHECK(c.stats);
    CHECK(c.trace == "t.json");
    REQUIRE(argc == 2);
    CHECK(std::string(argv[1]) == "mine");
    ::setenv("PREMA_STATS", "1", 1);
    ::setenv("PREMA_TRACE", "env.json", 1);
    auto e = prema::config::from_env();
    ::unsetenv("PREMA_STATS");
    ::unsetenv("PREMA_TRACE");
    CHECK(e.stats);
    CHECK(e.trace == "env.json");
}

TEST_CASE("stats table and merged Chrome trace") {
    int me = world_rank(), n = world_size();
    // One path for all ranks: rank 0's.
    char path[256] = {};
    if (me == 0)
        std::snprintf(path, sizeof path, "/tmp/prema_trace_test_%d.json", int(::getpid()));
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    prema::config cfg;
    cfg.stats = true;
    cfg.trace = path;
    auto table = stats_table(cfg, [](prema::runtime& rt) {
        CHECK(rt.run([&]() -> prema::task<> {
            int r = prema::rank(), size = prema::ranks();
            auto mp = co_await prema::create<tally>((r + 1) % size);
            for (int i = 0; i < sends_per_rank; ++i)
                co_await prema::send(mp, prema::fn<&bump>, std::int64_t(1));
            co_await prema::migrate(mp, r); // from the neighbour to here
            auto t = co_await prema::call(mp, prema::fn<&total>);
            CHECK(t == sends_per_rank);
            co_await prema::destroy(mp);
        }) == 0);
    });
    if (me != 0)
        return;
    // Each rank ran sends_per_rank bumps and one total.
    // The default config asks for auto; the header says what it became.
    CHECK((table.find("progress auto -> inline;") != std::string::npos ||
           table.find("progress auto -> dedicated;") != std::string::npos));
    auto rows = parse_rows(table);
    REQUIRE(rows.size() == std::size_t(n) + 1);
    auto& all = rows.back();
    CHECK(all.label == "all");
    CHECK(all.sent == all.received);
    CHECK(all.handlers > 0);
    CHECK(all.object_handlers == std::int64_t(n) * (sends_per_rank + 1));
    CHECK(all.mig_in == n);
    // --prema-stats times every object handler: the workers ran them, so they fit in busy.
    CHECK(table.find("; lb-load hybrid;") != std::string::npos);
    CHECK(all.timed == all.object_handlers);
    CHECK(all.measured_ms > 0);
    CHECK(all.measured_ms <= all.busy_ms);

    auto trace = slurp(path);
    REQUIRE(!trace.empty());
    CHECK(trace.find(R"("pid":0,"tid":0)") != std::string::npos);
    CHECK(trace.find(R"("cat":"object_handler")") != std::string::npos);
    CHECK(trace.find(R"("busy_us":)") != std::string::npos);
    CHECK(trace.find(R"("measured_us":)") != std::string::npos);
    CHECK(trace.find(R"("name":"migrate_in")") != std::string::npos);
    CHECK(trace.find(R"("name":"send")") != std::string::npos);
    // A JSON array of events with the required keys, handler events from every rank, a
    // migration.
    std::string check = "python3 -c 'import json,sys\n"
                        "ev=json.load(open(sys.argv[1]))\n"
                        "assert isinstance(ev,list) and ev\n"
                        "keys={\"name\",\"cat\",\"ph\",\"ts\",\"dur\",\"pid\",\"tid\",\"args\"}\n"
                        "assert all(keys<=set(e) for e in ev), \"missing keys\"\n"
                        "h={e[\"pid\"] for e in ev if e[\"ph\"]==\"X\" and e[\"cat\"] in "
                        "(\"handler\",\"object_handler\")}\n"
                        "assert h==set(range(" +
                        std::to_string(n) +
                        ")), h\n"
                        "assert any(e[\"cat\"]==\"migration\" for e in ev)\n"
                        "' " +
                        std::string(path);
    if (std::system("python3 -c pass > /dev/null 2>&1") == 0) {
        CHECK(std::system(check.c_str()) == 0);
    } else {
        // No Python: brackets balance outside strings.
        int depth = 0;
        bool in_string = false, ok = true;
        for (std::size_t i = 0; i < trace.size(); ++i) {
            char c = trace[i];
            if (in_string) {
                if (c == '\\')
                    ++i;
                else if (c == '"')
                    in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == '[' || c == '{') {
                ++depth;
            } else if (c == ']' || c == '}') {
                ok &= --depth >= 0;
            }
        }
        CHECK(ok);
        CHECK(depth == 0);
    }
    std::remove(path);
}

TEST_CASE("migrations out = in and messages sent = received over the ranks, explicit and "
          "balancer moves alike") {
    constexpr int per_rank = 8;
    int me = world_rank(), n = world_size();
    prema::config cfg;
    cfg.stats = true;
    cfg.lb = "work_stealing";
    cfg.lb_period_us = 500;
    std::uint64_t out = 0, in = 0;
    auto table = stats_table(cfg, [&](prema::runtime& rt) {
        // Every rank but 0 moves its objects to rank 0: all work starts there.
        std::vector<prema::mobile_ptr<tally>> mine;
        CHECK(rt.run([&]() -> prema::task<> {
            for (int i = 0; i < per_rank; ++i) {
                mine.push_back(prema::make_mobile<tally>());
                if (me != 0)
                    co_await prema::migrate(mine.back(), 0);
            }
        }) == 0);
        std::vector<prema::mobile_ptr<tally>> all(mine.size() * std::size_t(n));
        int bytes = int(mine.size() * sizeof(prema::mobile_ptr<tally>));
        MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
        // The policy moves objects off rank 0 while every rank sends them work; balancing stays
        // on to the end, so policy messages may be on the wire when the runtime shuts down.
        CHECK(rt.run([&]() -> prema::task<> {
            for (auto mp : all)
                co_await prema::send(mp, prema::fn<&work>);
        }) == 0);
        auto stats = prema::lb::current_stats();
        out = sum_over_ranks(stats.migrations_out);
        in = sum_over_ranks(stats.migrations_in);
    });
    std::uint64_t explicit_moves = std::uint64_t(per_rank * (n - 1));
    CHECK(out == in);
    CHECK(out >= explicit_moves);
    if (n > 1)
        CHECK(out > explicit_moves); // the policy moved some too
    if (me != 0)
        return;
    auto rows = parse_rows(table);
    REQUIRE(rows.size() == std::size_t(n) + 1);
    auto& all = rows.back();
    CHECK(all.label == "all");
    CHECK(all.sent == all.received);
    CHECK(all.bytes_sent == all.bytes_received);
    CHECK(all.mig_out == all.mig_in);
    CHECK(std::uint64_t(all.mig_in) == in);
    for (auto& r : rows)
        CHECK(r.overhead_ms >= 0);
}

TEST_CASE("--prema-stats overhead: the workers' time neither running items nor idle") {
    constexpr int handlers = 5;
    prema::lb::register_policy("test_slow_pop", [] { return std::make_unique<slow_pop>(); });
    prema::config cfg;
    cfg.stats = true;
    cfg.lb = "test_slow_pop";
    auto table = stats_table(cfg, [&](prema::runtime& rt) {
        CHECK(rt.run([&]() -> prema::task<> {
            // One handler per object: a worker runs the next handler of the object it just
            // served without asking the policy (objects/scheduling.cpp).
            for (int i = 0; i < handlers; ++i)
                co_await prema::send(prema::make_mobile<tally>(), prema::fn<&bump>,
                                     std::int64_t(1));
        }) == 0);
    });
    if (world_rank() != 0)
        return;
    auto rows = parse_rows(table);
    REQUIRE(rows.size() == std::size_t(world_size()) + 1);
    // Finding each handler took the policy 20 ms: overhead, not busy time.
    double least = handlers * std::chrono::duration<double, std::milli>(slow_pop_cost).count();
    for (auto& r : rows) {
        CAPTURE(r.label);
        CHECK(r.overhead_ms >= least);
        CHECK(r.busy_ms < least);
    }
}

TEST_CASE("prema::wtime() is steady_clock in seconds, with or without a runtime") {
    auto steady = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    };
    double s0 = steady(), w0 = prema::wtime();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    double w1 = prema::wtime(), s1 = steady();
    CHECK(w0 >= s0);
    CHECK(w1 <= s1);
    CHECK(w1 - w0 >= 0.020);
    double inside = 0;
    {
        prema::runtime rt(MPI_COMM_WORLD);
        CHECK(rt.run([&]() -> prema::task<> {
            inside = prema::wtime();
            co_return;
        }) == 0);
    }
    CHECK(inside > w1);
    CHECK(inside < prema::wtime());
}

// The trace's gather at shutdown: parts of any length (here in pieces of 3 bytes, as a part of
// more than 2 GiB goes in pieces of 1 GiB), empty ones too, reach rank 0 whole and in order.
TEST_CASE("gather_parts brings every rank's part to rank 0 in pieces") {
    const int me = world_rank(), n = world_size();
    auto part_of = [](int r) { return std::string(std::size_t(3 * r + r % 2), char('a' + r)); };
    std::vector<std::string> got;
    prema::detail::gather_parts(
        MPI_COMM_WORLD, part_of(me),
        [&](int r, std::string_view part) {
            CHECK(r == int(got.size()));
            got.emplace_back(part);
        },
        3);
    if (me != 0) {
        CHECK(got.empty());
        return;
    }
    REQUIRE(got.size() == std::size_t(n));
    for (int r = 0; r < n; ++r)
        CHECK(got[std::size_t(r)] == part_of(r));
}
