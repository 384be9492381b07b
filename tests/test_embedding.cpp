// prema::runtime embedded in an MPI code: the application owns MPI (tests/mpi_main.cpp
// initialises and finalizes it), starts runtimes on its communicators, runs phases, and uses MPI
// itself between them. ctest runs it twice: with MPI_THREAD_SERIALIZED and with
// MPI_THREAD_FUNNELED (test_embedding_funneled_*).
#include <atomic>
#include <string>
#include <vector>

#include <sched.h>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

#include "test_support.hpp"

namespace {

int sum_over(MPI_Comm comm, int v) {
    int total = 0;
    MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, comm);
    return total;
}

// Messages received by this rank's handlers during the current phase.
std::atomic<int> received{0};

// Legacy state that a handler reads: set by the application between phases.
int app_value = 0;

std::atomic<int> mallopt_calls{0};

} // namespace

// Replaces glibc's mallopt in this executable (the runtime is linked into it), to see whether
// the runtime calls it.
extern "C" int mallopt(int, int) {
    mallopt_calls.fetch_add(1);
    return 1;
}

namespace {

// One phase: every rank calls its left neighbour (which answers with its world rank and
// app_value) and sends one message to every rank, itself included. Returns what the left
// neighbour answered, as {world rank, app_value}.
std::pair<int, int> neighbour_phase(prema::runtime& rt) {
    std::pair<int, int> answer{-1, -1};
    received = 0;
    int rc = rt.run([&answer]() -> prema::task<> {
        int left = (prema::rank() + prema::ranks() - 1) % prema::ranks();
        answer = co_await prema::call(left, []() {
            return std::pair<int, int>{world_rank(), app_value};
        });
        for (int r = 0; r < prema::ranks(); ++r)
            co_await prema::send(
                r, [](int) { received.fetch_add(1); }, prema::rank());
    });
    CHECK(rc == 0);
    return answer;
}

int thread_level() {
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return provided;
}

std::string usage_message(const prema::config& cfg) {
    try {
        prema::runtime rt(MPI_COMM_WORLD, cfg);
    } catch (const prema::usage_error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Binds the calling thread to one of its cores for the scope of the object: the runtime then
// counts a single core for the rank.
class one_core {
  public:
    one_core() {
        sched_getaffinity(0, sizeof saved_, &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &saved_)) {
                CPU_SET(c, &one);
                break;
            }
        REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
    }
    ~one_core() { sched_setaffinity(0, sizeof saved_, &saved_); }
    one_core(const one_core&) = delete;
    one_core& operator=(const one_core&) = delete;

  private:
    cpu_set_t saved_;
};

void check_mpi_alive() {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    CHECK(initialized == 1);
    CHECK(finalized == 0);
    CHECK(sum_over(MPI_COMM_WORLD, 1) == world_size());
}

} // namespace

TEST_CASE("one runtime runs several phases, with user MPI collectives between them") {
    int me = world_rank(), n = world_size();
    int left = (me + n - 1) % n;
    {
        prema::runtime rt(MPI_COMM_WORLD);
        CHECK(prema::rank() == me);
        CHECK(prema::ranks() == n);

        app_value = 10 * me;
        auto a = neighbour_phase(rt);
        CHECK(a.first == left);
        CHECK(a.second == 10 * left);
        CHECK(received.load() == n);

        // The application's own MPI between phases, on the communicator the runtime uses.
        int total = sum_over(MPI_COMM_WORLD, received.load());
        CHECK(total == n * n);
        app_value = total + me;

        auto b = neighbour_phase(rt);
        CHECK(b.first == left);
        CHECK(b.second == total + left);
        CHECK(received.load() == n);
        int fetched_sum = sum_over(MPI_COMM_WORLD, b.second);
        int value_sum = sum_over(MPI_COMM_WORLD, app_value);
        CHECK(fetched_sum == value_sum);
    }
    CHECK(prema::rank() == -1);
    CHECK(prema::ranks() == 0);
    check_mpi_alive();
}

TEST_CASE("two runtimes one after another") {
    int me = world_rank(), n = world_size();
    int left = (me + n - 1) % n;
    for (int round = 0; round < 2; ++round) {
        CAPTURE(round);
        app_value = 100 * round + me;
        {
            prema::runtime rt(MPI_COMM_WORLD);
            auto a = neighbour_phase(rt);
            CHECK(a.first == left);
            CHECK(a.second == 100 * round + left);
            CHECK(received.load() == n);
        }
        check_mpi_alive();
    }
}

TEST_CASE("with --prema-help every rank's run() returns 0 without running the entry") {
    prema::config cfg;
    cfg.show_help = true;
    std::atomic<int> entries{0};
    {
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        for (int phase = 0; phase < 2; ++phase)
            CHECK(rt.run([&]() -> prema::task<> {
                entries.fetch_add(1);
                co_return;
            }) == 0);
    }
    CHECK(entries.load() == 0);
    check_mpi_alive();
}

TEST_CASE("the default config resolves auto to dedicated or inline, the same on every rank") {
    int me = world_rank(), n = world_size();
    prema::runtime rt(MPI_COMM_WORLD);
    auto mode = prema::resolved_progress();
    CHECK((mode == prema::progress_mode::dedicated || mode == prema::progress_mode::inline_));
    CHECK(prema::current_config().progress == mode);
    int dedicated = mode == prema::progress_mode::dedicated;
    CHECK(sum_over(MPI_COMM_WORLD, dedicated) == (dedicated ? n : 0));
    app_value = me;
    auto a = neighbour_phase(rt);
    CHECK(a.first == (me + n - 1) % n);
    CHECK(received.load() == n);
}

TEST_CASE("auto on a rank bound to one core is inline, which needs SERIALIZED for 2 workers") {
    int me = world_rank(), n = world_size();
    one_core bound;
    prema::config cfg;
    cfg.workers = 2;
    if (thread_level() < MPI_THREAD_SERIALIZED) {
        auto m = usage_message(cfg);
        CHECK(contains(m, "--prema-progress=auto -> inline with 2 worker(s)"));
        CHECK(contains(m, "MPI_THREAD_SERIALIZED"));
        return;
    }
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(prema::resolved_progress() == prema::progress_mode::inline_);
    app_value = me;
    auto a = neighbour_phase(rt);
    CHECK(a.first == (me + n - 1) % n);
    CHECK(received.load() == n);
}

TEST_CASE("auto with 2 workers runs dedicated under FUNNELED, or names the level inline needs") {
    int me = world_rank(), n = world_size();
    prema::config cfg;
    cfg.workers = 2;
    if (thread_level() < MPI_THREAD_SERIALIZED) {
        // Whether this machine has a core for every thread decides; both outcomes are correct.
        auto m = usage_message(cfg);
        if (!m.empty()) {
            CHECK(contains(m, "auto -> inline"));
            CHECK(contains(m, "MPI_THREAD_SERIALIZED"));
            return;
        }
    }
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    if (thread_level() < MPI_THREAD_SERIALIZED)
        CHECK(prema::resolved_progress() == prema::progress_mode::dedicated);
    app_value = me;
    auto a = neighbour_phase(rt);
    CHECK(a.first == (me + n - 1) % n);
    CHECK(received.load() == n);
}

TEST_CASE("a runtime with inline progress and two workers") {
    int me = world_rank(), n = world_size();
    prema::config cfg;
    cfg.progress = prema::progress_mode::inline_;
    cfg.workers = 2;
    if (thread_level() < MPI_THREAD_SERIALIZED) {
        auto m = usage_message(cfg);
        CHECK(contains(m, "--prema-progress=inline with 2 worker(s)"));
        CHECK(contains(m, "MPI_THREAD_SERIALIZED"));
        return;
    }
    app_value = me;
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    CHECK(prema::resolved_progress() == prema::progress_mode::inline_);
    CHECK(prema::current_config().progress == prema::progress_mode::inline_);
    CHECK(prema::current_config().workers == 2);
    auto a = neighbour_phase(rt);
    CHECK(a.first == (me + n - 1) % n);
    CHECK(received.load() == n);
}

TEST_CASE("the runtime leaves the host program's malloc settings alone") {
    // A library embedded in an MPI code must not retune the process's allocator; this
    // executable's mallopt stands in for glibc's and counts the calls made while a runtime
    // starts, moves megabyte payloads and stops.
    const int before = mallopt_calls.load();
    {
        prema::runtime rt(MPI_COMM_WORLD);
        const int next = (world_rank() + 1) % world_size();
        CHECK(rt.run([&]() -> prema::task<> {
            std::vector<char> big(std::size_t{3} << 20, 'x');
            for (int i = 0; i < 4; ++i)
                co_await prema::call(
                    next, [](std::vector<char> v) { return v.size(); }, big);
        }) == 0);
    }
    CHECK(mallopt_calls.load() == before);
}

TEST_CASE("MPI stays initialised once the runtime is destroyed") {
    { prema::runtime rt(MPI_COMM_WORLD); }
    check_mpi_alive();
    CHECK_THROWS_AS(prema::current_config(), prema::usage_error);
    CHECK_THROWS_AS(prema::resolved_progress(), prema::usage_error);
}

TEST_CASE("creating a second runtime while one exists throws usage_error") {
    int me = world_rank(), n = world_size();
    prema::runtime rt(MPI_COMM_WORLD);
    // Collective, like the constructor: every rank tries, every rank is refused.
    CHECK_THROWS_AS(prema::runtime(MPI_COMM_WORLD), prema::usage_error);
    // The first runtime is unharmed.
    CHECK(prema::ranks() == n);
    app_value = me;
    auto a = neighbour_phase(rt);
    CHECK(a.first == (me + n - 1) % n);
    CHECK(received.load() == n);
}

TEST_CASE("a runtime on a sub-communicator sees only its half") {
    int me = world_rank(), n = world_size();
    int half = n / 2;
    int color = me < half ? 0 : 1;
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, me, &sub);
    int sub_rank = 0, sub_size = 0;
    MPI_Comm_rank(sub, &sub_rank);
    MPI_Comm_size(sub, &sub_size);
    CHECK(sub_size == (color == 0 ? half : n - half));
    {
        prema::runtime rt(sub);
        CHECK(prema::ranks() == sub_size);
        CHECK(prema::rank() == sub_rank);

        // The left neighbour in the half is a world rank of the same half.
        app_value = me;
        auto a = neighbour_phase(rt);
        int first = color == 0 ? 0 : half;
        int expected_left = first + (sub_rank + sub_size - 1) % sub_size;
        CHECK(a.first == expected_left);
        CHECK(a.second == expected_left);
        CHECK(received.load() == sub_size);

        // A rank outside the half does not exist for this runtime.
        std::atomic<bool> refused{false};
        int rc = rt.run([&refused]() -> prema::task<> {
            try {
                co_await prema::send(prema::ranks(), [] {});
            } catch (const prema::usage_error&) {
                refused = true;
            }
        });
        CHECK(rc == 0);
        CHECK(refused.load());

        // User MPI on the world and on the half, between phases.
        CHECK(sum_over(MPI_COMM_WORLD, 1) == n);
        CHECK(sum_over(sub, 1) == sub_size);
    }
    check_mpi_alive();
    MPI_Comm_free(&sub);
}
