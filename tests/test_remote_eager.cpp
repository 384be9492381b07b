// The eager size by destination (src/transport/node_peers.hpp): payloads between
// --prema-eager-bytes and --prema-remote-eager-bytes travel inline to a rank reached over a
// network and split-phase to one reached through shared memory. ctest runs the 2-rank part
// twice: over shared memory (TEST_EXPECT_REMOTE=0) and with `--mca btl tcp,self`, where Open
// MPI reaches the other rank over TCP (TEST_EXPECT_REMOTE=1).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <mpi.h>
#include <string>
#include <vector>

#include <prema/prema.hpp>

#include "test_support.hpp"
#include "transport/node_peers.hpp"

namespace {

using prema::detail::bulk_stats;

std::atomic<int> intact{0}, broken{0};

double value(std::size_t i, std::size_t n) {
    return double(i) * 0.25 + double(n);
}

std::vector<double> make(std::size_t n) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = value(i, n);
    return v;
}

void check_vector(std::vector<double> v) {
    bool ok = !v.empty();
    for (std::size_t i = 0; i < v.size() && ok; ++i)
        ok = v[i] == value(i, v.size());
    (ok ? intact : broken).fetch_add(1);
}

std::size_t echo_size(std::vector<double> v) {
    check_vector(v);
    return v.size();
}

} // namespace

TEST_SUITE("remote eager size") {

    TEST_CASE("Open MPI btl lists with and without shared memory") {
        using prema::detail::btl_list_has_shared_memory;
        CHECK(btl_list_has_shared_memory(""));
        CHECK(btl_list_has_shared_memory("^uct,openib,ofi"));
        CHECK(btl_list_has_shared_memory("self,vader,tcp"));
        CHECK(btl_list_has_shared_memory("sm,self"));
        CHECK(btl_list_has_shared_memory("smcuda,tcp,self"));
        CHECK_FALSE(btl_list_has_shared_memory("tcp,self"));
        CHECK_FALSE(btl_list_has_shared_memory("self"));
        CHECK_FALSE(btl_list_has_shared_memory("^vader"));
        CHECK_FALSE(btl_list_has_shared_memory("^openib,sm"));
        CHECK_FALSE(btl_list_has_shared_memory("tcp,vaderx"));
    }

    TEST_CASE("ranks off the node list are remote, and none is in a job on one node") {
        prema::detail::node_peers two_nodes({0, 2, 4}, true);
        CHECK_FALSE(two_nodes.remote(0));
        CHECK_FALSE(two_nodes.remote(4));
        CHECK(two_nodes.remote(1));
        CHECK(two_nodes.remote(5));
        prema::detail::node_peers one_node({0, 1, 2}, false);
        CHECK_FALSE(one_node.remote(1));
        prema::detail::node_peers no_shared_memory({}, true);
        CHECK(no_shared_memory.remote(0));
        CHECK(no_shared_memory.remote(1));
    }

    TEST_CASE("payloads between the eager sizes travel inline only to a remote rank") {
        if (world_size() < 2)
            return;
        const char* expect = std::getenv("TEST_EXPECT_REMOTE");
        REQUIRE_MESSAGE(expect, "set TEST_EXPECT_REMOTE=0 (shared memory) or 1 (tcp,self)");
        const bool remote = std::string(expect) == "1";
        const int me = world_rank();
        // Doubles: 40 KiB, 64 KiB and 127 KiB (between the default eager sizes), 256 KiB
        // (above both).
        const std::size_t sizes[] = {5120, 8192, 16256, 32768};
        for (auto progress : {prema::progress_mode::inline_, prema::progress_mode::dedicated}) {
            INFO("progress: ", prema::to_string(progress));
            intact = 0;
            broken = 0;
            const auto moved_before = bulk_stats().received_moved.load();
            checker chk;
            prema::config cfg;
            cfg.progress = progress;
            prema::runtime rt(MPI_COMM_WORLD, cfg);
            int rc = rt.run([&]() -> prema::task<> {
                if (me == 0)
                    for (auto n : sizes) {
                        co_await prema::send(1, prema::fn<&check_vector>, make(n));
                        chk(co_await prema::call(1, prema::fn<&echo_size>, make(n)) == n,
                            "call: wrong size back");
                    }
                co_await prema::quiescence();
                chk.done = true;
            });
            CHECK(rc == 0);
            report(chk);
            if (me == 1) {
                CHECK(intact == 8);
                CHECK(broken == 0);
                // Received into the handler's own vector: the split-phase payloads.
                const auto moved = bulk_stats().received_moved.load() - moved_before;
                CHECK(moved == (remote ? 2u : 8u));
            }
        }
    }

} // TEST_SUITE
