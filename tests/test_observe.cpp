// --prema-stats and --prema-trace: option parsing, the shutdown table, the merged trace file.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

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
    char out_path[256] = {};
    if (me == 0) {
        std::snprintf(path, sizeof path, "/tmp/prema_trace_test_%d.json", int(::getpid()));
        std::snprintf(out_path, sizeof out_path, "/tmp/prema_stats_test_%d.txt", int(::getpid()));
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    prema::config cfg;
    cfg.stats = true;
    cfg.trace = path;
    int saved_stdout = -1;
    {
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        int rc = rt.run([&]() -> prema::task<> {
            int r = prema::rank(), size = prema::ranks();
            auto mp = co_await prema::create<tally>((r + 1) % size);
            for (int i = 0; i < sends_per_rank; ++i)
                co_await prema::send(mp, prema::fn<&bump>, std::int64_t(1));
            co_await prema::migrate(mp, r); // from the neighbour to here
            auto t = co_await prema::call(mp, prema::fn<&total>);
            CHECK(t == sends_per_rank);
            co_await prema::destroy(mp);
        });
        CHECK(rc == 0);
        // The table goes to rank 0's stdout when the runtime shuts down: capture it.
        if (me == 0) {
            std::fflush(stdout);
            saved_stdout = ::dup(1);
            std::FILE* f = std::fopen(out_path, "w");
            REQUIRE(f);
            ::dup2(::fileno(f), 1);
            std::fclose(f);
        }
    }
    if (me != 0)
        return;
    std::fflush(stdout);
    ::dup2(saved_stdout, 1);
    ::close(saved_stdout);

    auto table = slurp(out_path);
    std::remove(out_path);
    MESSAGE(table);
    // The default config asks for auto; the header says what it became.
    CHECK((table.find("progress auto -> inline;") != std::string::npos ||
           table.find("progress auto -> dedicated;") != std::string::npos));
    // Columns: rank handlers obj-hndlrs ...; each rank ran sends_per_rank bumps and one total.
    std::istringstream lines(table);
    std::string line;
    std::int64_t all_object_handlers = -1, all_migrations_in = -1;
    int rank_rows = 0;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string label;
        std::int64_t handlers = 0, object_handlers = 0, sent = 0, received = 0, bytes_sent = 0,
                     bytes_received = 0, forwards = 0, mig_in = 0;
        if (!(fields >> label >> handlers >> object_handlers >> sent >> received >> bytes_sent >>
              bytes_received >> forwards >> mig_in))
            continue;
        if (label == "all") {
            all_object_handlers = object_handlers;
            all_migrations_in = mig_in;
            CHECK(sent == received);
            CHECK(handlers > 0);
        } else {
            ++rank_rows;
        }
    }
    CHECK(rank_rows == n);
    CHECK(all_object_handlers == std::int64_t(n) * (sends_per_rank + 1));
    CHECK(all_migrations_in == n);

    auto trace = slurp(path);
    REQUIRE(!trace.empty());
    CHECK(trace.find(R"("pid":0,"tid":0)") != std::string::npos);
    CHECK(trace.find(R"("cat":"object_handler")") != std::string::npos);
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
