// Checkpoint and restart: objects, their message order, their names and the root come back on
// the same and on a smaller rank count; an incomplete newer checkpoint is ignored; every
// damaged input is a checkpoint_error on every rank naming the file, and leaves nothing loaded.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <unistd.h>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/checkpoint.hpp>
#include <prema/prema.hpp>

#include "checkpoint/coordinator.hpp"
#include "checkpoint/io_reactor.hpp"
#include "runtime/runtime_state.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace {

struct cell {
    std::uint64_t tag = 0;
    std::vector<double> data;
    std::vector<std::int64_t> last; // per sender: the last number seen
    std::int64_t violations = 0;
    template <class Ar> void serialize(Ar& ar) { ar(tag, data, last, violations); }
};

void count(cell& c, int from, std::int64_t n) {
    if (c.last.size() <= std::size_t(from))
        c.last.resize(std::size_t(from) + 1, -1);
    if (n != c.last[std::size_t(from)] + 1)
        ++c.violations;
    c.last[std::size_t(from)] = n;
}

// What a cell holds, as one number that any change alters.
double digest(const cell& c) {
    double s = double(c.tag) + 1e6 * double(c.violations);
    for (double d : c.data)
        s += d;
    for (auto n : c.last)
        s += double(n + 1) * 7;
    return s;
}

std::int64_t violations(const cell& c) {
    return c.violations;
}

struct root {
    std::uint64_t step = 0;
    std::vector<prema::mobile_ptr<cell>> cells;
    template <class Ar> void serialize(Ar& ar) { ar(step, cells); }
};

struct other_root {
    double x = 0;
    template <class Ar> void serialize(Ar& ar) { ar(x); }
};

constexpr int cells_per_rank = 5;
constexpr std::int64_t messages = 4;

// A fresh directory name, the same on every rank.
std::string scratch(const std::string& name) {
    char buf[512] = {};
    if (world_rank() == 0) {
        auto p =
            fs::temp_directory_path() / ("prema_ckpt_" + std::to_string(::getpid()) + "_" + name);
        fs::remove_all(p);
        std::snprintf(buf, sizeof buf, "%s", p.c_str());
    }
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
    return buf;
}

std::vector<prema::mobile_ptr<cell>> gather(const std::vector<prema::mobile_ptr<cell>>& mine) {
    int n = int(mine.size() * sizeof(prema::object_id));
    std::vector<prema::mobile_ptr<cell>> all(mine.size() * std::size_t(world_size()));
    MPI_Allgather(mine.data(), n, MPI_BYTE, all.data(), n, MPI_BYTE, MPI_COMM_WORLD);
    return all;
}

// Makes `count` cells on every rank in one phase of `rt`, cell i tagged and holding `size(i)`
// values 0.25 * (i + 1), and returns every rank's cells.
template <class Size>
std::vector<prema::mobile_ptr<cell>> create_cells(prema::runtime& rt, int count, Size size) {
    std::vector<prema::mobile_ptr<cell>> mine;
    REQUIRE(rt.run([&]() -> prema::task<> {
        for (int i = 0; i < count; ++i) {
            cell c;
            c.tag = std::uint64_t(prema::rank() * 100 + i);
            c.data.assign(size(i), 0.25 * (i + 1));
            mine.push_back(prema::make_mobile<cell>(std::move(c)));
        }
        co_return;
    }) == 0);
    return gather(mine);
}

prema::task<double> total_digest(const std::vector<prema::mobile_ptr<cell>>& cells) {
    double sum = 0;
    for (auto mp : cells)
        sum += co_await prema::call(mp, prema::fn<&digest>);
    co_return sum;
}

// Sends messages [from, from + messages) from this rank to every cell.
prema::task<> send_numbers(const std::vector<prema::mobile_ptr<cell>>& cells, std::int64_t from) {
    for (std::int64_t k = from; k < from + messages; ++k)
        for (auto mp : cells)
            co_await prema::send(mp, prema::fn<&count>, prema::rank(), k);
}

struct saved {
    root r;
    double digest = 0;
};

// Cells on every rank with numbered messages, moved around, checkpointed twice (the second
// replaces the first); state changed after the checkpoint must not come back.
saved build(const std::string& dir) {
    prema::runtime rt(MPI_COMM_WORLD);
    saved s;
    s.r.cells = create_cells(rt, cells_per_rank, [](int i) { return std::size_t(200 + 50 * i); });
    s.r.step = 42;
    REQUIRE(rt.run([&]() -> prema::task<> {
        co_await send_numbers(s.r.cells, 0);
        co_await prema::checkpoint(dir, s.r);
        if (prema::rank() == 0) // every cell one rank further, so files differ from creators
            for (std::size_t i = 0; i < s.r.cells.size(); ++i)
                co_await prema::migrate(s.r.cells[i], int(i + 1) % prema::ranks());
        co_await prema::quiescence();
        co_await send_numbers(s.r.cells, messages);
        co_await prema::checkpoint(dir, s.r);
        if (prema::rank() == 0)
            s.digest = co_await total_digest(s.r.cells);
        co_await prema::quiescence();
        co_await send_numbers(s.r.cells, 2 * messages); // after the checkpoint: not saved
    }) == 0);
    MPI_Bcast(&s.digest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return s;
}

// Restarts on `comm` and checks that everything is back and works: values, message order
// continuing, new names distinct from saved ones, migration.
void check_restart(MPI_Comm comm, const std::string& dir, const saved& s) {
    prema::runtime rt(comm);
    checker c;
    int rc = rt.run([&]() -> prema::task<> {
        auto r = co_await prema::restart<root>(dir);
        c(r.step == s.r.step, "root step");
        c(r.cells == s.r.cells, "root cells");
        if (prema::rank() == 0)
            c(co_await total_digest(r.cells) == s.digest, "digest at the checkpoint");
        co_await prema::quiescence();
        co_await send_numbers(r.cells, 2 * messages);
        auto fresh = co_await prema::create<cell>((prema::rank() + 1) % prema::ranks());
        for (auto mp : r.cells)
            c(mp != fresh, "a new object reuses a saved name");
        if (prema::rank() == 0) {
            co_await prema::migrate(r.cells.front(), prema::ranks() - 1);
            for (auto mp : r.cells)
                c(co_await prema::call(mp, prema::fn<&violations>) == 0, "order kept");
        }
        c.done = true;
    });
    CHECK(rc == 0);
    report(c);
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const fs::path& p, const std::string& s) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}

fs::path only_checkpoint(const std::string& dir) {
    std::vector<fs::path> found;
    for (auto& e : fs::directory_iterator(dir))
        found.push_back(e.path());
    REQUIRE(found.size() == 1); // the older checkpoint was removed
    return found.front();
}

// Restarts from `dir` in a fresh runtime: the cells' total digest on every rank, or NaN and
// the error if the restart failed.
double restored_digest(const std::string& dir, std::string& error) {
    prema::runtime rt(MPI_COMM_WORLD);
    double d = std::nan("");
    CHECK(rt.run([&]() -> prema::task<> {
        try {
            auto r = co_await prema::restart<root>(dir);
            if (prema::rank() == 0)
                d = co_await total_digest(r.cells);
        } catch (const prema::checkpoint_error& e) {
            error = e.what();
        }
    }) == 0);
    MPI_Bcast(&d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return d;
}

// Rank 0's view of its checkpoint I/O: every operation in the order started; an fsync of
// `fail_fsync_of` fails with EIO.
struct io_log {
    std::mutex mutex;
    std::vector<std::pair<prema::detail::io_op::kind, std::string>> ops;
    std::string fail_fsync_of;
} g_io_log;

int watch_io(const prema::detail::io_op& op) {
    std::lock_guard lock(g_io_log.mutex);
    g_io_log.ops.emplace_back(op.op, op.path);
    return op.op == prema::detail::io_op::kind::fsync && op.path == g_io_log.fail_fsync_of ? -EIO
                                                                                           : 0;
}

// A runtime whose cells hold more than a rank file's first piece (4 MiB) on every rank, so that
// whole pages of it go through O_DIRECT (where the file system takes it).
struct big_cells {
    prema::runtime rt{MPI_COMM_WORLD};
    root r;
    big_cells() {
        r.cells = create_cells(rt, 3, [](int i) { return std::size_t(i == 1 ? 600'000 : 100); });
        uring = prema::detail::checkpoint_layer().io->uses_uring();
    }
    // Sends the next numbers to every cell, runs `arm` on this rank, checkpoints to `dir`:
    // the error ("" if none) and the cells' digest at that point, on every rank.
    std::pair<std::string, double> checkpoint(const std::string& dir,
                                              const std::function<void()>& arm) {
        std::string error;
        double digest = 0;
        CHECK(rt.run([&]() -> prema::task<> {
            co_await send_numbers(r.cells, sent);
            arm();
            try {
                co_await prema::checkpoint(dir, r);
            } catch (const prema::checkpoint_error& e) {
                error = e.what();
            }
            if (prema::rank() == 0)
                digest = co_await total_digest(r.cells);
        }) == 0);
        sent += messages;
        MPI_Bcast(&digest, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return {error, digest};
    }
    std::int64_t sent = 0;
    bool uring = false; // whether this rank's checkpoint I/O went through io_uring at first
};

void no_faults_left() {
    auto& f = prema::detail::io_fault_injection;
    f.partial_submits = 0;
    f.failed_submits = 0;
    f.short_writes = 0;
}

bool takes_o_direct(const std::string& dir) {
    fs::create_directories(dir);
    auto probe = dir + "/probe";
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0644);
    if (fd >= 0)
        ::close(fd);
    fs::remove(probe);
    return fd >= 0;
}

} // namespace

TEST_CASE("io faults: a short O_DIRECT write continues from where it stopped") {
    auto dir = scratch("short_write");
    if (world_rank() == 0 && !takes_o_direct(dir))
        MESSAGE(dir << " refuses O_DIRECT: the short write is a buffered one");
    double digest = 0;
    {
        big_cells b;
        auto [error, d] =
            b.checkpoint(dir, [] { prema::detail::io_fault_injection.short_writes = 1; });
        CHECK(error == "");
        CHECK(prema::detail::io_fault_injection.short_writes == 0); // it was injected
        digest = d;
    }
    no_faults_left();
    std::string error;
    CHECK(restored_digest(dir, error) == digest);
    CHECK(error == "");
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0)
        fs::remove_all(dir);
}

TEST_CASE("io faults: entries a partial io_uring submit left behind are submitted again") {
    auto dir = scratch("partial_submit");
    double digest = 0;
    {
        big_cells b;
        // Every submit of several entries takes only one, until the checkpoint is over.
        auto [error, d] = b.checkpoint(
            dir, [] { prema::detail::io_fault_injection.partial_submits = 1'000'000; });
        CHECK(error == "");
        if (b.uring)
            CHECK(prema::detail::io_fault_injection.partial_submits < 1'000'000);
        else
            MESSAGE("no io_uring here: no submit to cut short");
        digest = d;
    }
    no_faults_left();
    std::string error;
    CHECK(restored_digest(dir, error) == digest);
    CHECK(error == "");
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0)
        fs::remove_all(dir);
}

TEST_CASE("io faults: a failed io_uring submit fails the checkpoint on every rank, and the next "
          "one works") {
    auto dir = scratch("failed_submit"), next = scratch("after_failed_submit");
    int last = world_size() - 1;
    double digest = 0;
    {
        big_cells b;
        // Not a structured binding: clang 14 cannot capture one in INFO's lambda.
        std::string error;
        std::tie(error, std::ignore) = b.checkpoint(dir, [&] {
            if (prema::rank() == last)
                prema::detail::io_fault_injection.failed_submits = 1;
        });
        if (b.uring) {
            INFO(error);
            CHECK(error.find("rank " + std::to_string(last) + ": ") == 0);
            CHECK(error.find("could not be submitted to io_uring") != std::string::npos);
        }
        // That rank's later I/O blocks its workers, a short O_DIRECT write included.
        std::tie(error, digest) = b.checkpoint(next, [&] {
            if (prema::rank() == last)
                prema::detail::io_fault_injection.short_writes = 1;
        });
        CHECK(error == "");
        CHECK(prema::detail::io_fault_injection.short_writes == 0);
    }
    no_faults_left();
    std::string error;
    CHECK(restored_digest(next, error) == digest);
    CHECK(error == "");
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
        fs::remove_all(dir);
        fs::remove_all(next);
    }
}

TEST_CASE("stale listings: every rank takes rank 0's number; the previous checkpoint stays until "
          "the new manifest is durable") {
    using prema::detail::io_op;
    auto dir = scratch("stale"), first = scratch("stale_first");
    int me = world_rank();
    if (me == 0)
        prema::detail::io_fault_injection.intercept = &watch_io;
    else // a shared file system whose listing lags on these ranks: they see no checkpoint
        prema::detail::listing_view = [](std::optional<std::uint64_t>) {
            return std::optional<std::uint64_t>();
        };
    root r;
    double digest_a = 0, digest_c = 0;
    std::string failure;
    {
        prema::runtime rt(MPI_COMM_WORLD);
        r.cells = create_cells(rt, cells_per_rank, [](int) { return std::size_t(300); });
        // A (ckpt-000001), then B, whose directories never become durable: A must stay whole.
        REQUIRE(rt.run([&]() -> prema::task<> {
            co_await send_numbers(r.cells, 0);
            co_await prema::checkpoint(dir, r);
            if (prema::rank() == 0) {
                digest_a = co_await total_digest(r.cells);
                std::lock_guard lock(g_io_log.mutex);
                g_io_log.fail_fsync_of = dir;
            }
            co_await prema::quiescence();
            co_await send_numbers(r.cells, messages);
            try {
                co_await prema::checkpoint(dir, r);
            } catch (const prema::checkpoint_error& e) {
                failure = e.what();
            }
        }) == 0);
        INFO(failure);
        CHECK(failure.find(dir + ": fsync failed") != std::string::npos);
        if (me == 0) {
            fs::create_directories(first);
            fs::copy(fs::path(dir) / "ckpt-000001", fs::path(first) / "ckpt-000001",
                     fs::copy_options::recursive);
            std::lock_guard lock(g_io_log.mutex);
            g_io_log.fail_fsync_of.clear();
            g_io_log.ops.clear();
        }
        MPI_Barrier(MPI_COMM_WORLD);
        // C: succeeds, and replaces both.
        REQUIRE(rt.run([&]() -> prema::task<> {
            co_await send_numbers(r.cells, 2 * messages);
            co_await prema::checkpoint(dir, r);
            if (prema::rank() == 0)
                digest_c = co_await total_digest(r.cells);
        }) == 0);
    }
    prema::detail::io_fault_injection.intercept = nullptr;
    prema::detail::listing_view = nullptr;
    MPI_Bcast(&digest_a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&digest_c, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0) {
        std::vector<std::string> left;
        for (auto& e : fs::directory_iterator(dir))
            left.push_back(e.path().filename().string());
        CHECK(left == std::vector<std::string>{"ckpt-000003"});
        for (int k = 0; k < world_size(); ++k)
            CHECK(
                fs::exists(fs::path(dir) / "ckpt-000003" / ("rank-" + std::to_string(k) + ".bin")));
        // Older checkpoints go only once the manifest's rename and both directories are synced.
        auto at = [&](io_op::kind k, const std::string& path) {
            auto it = std::find(g_io_log.ops.begin(), g_io_log.ops.end(), std::pair(k, path));
            return it - g_io_log.ops.begin();
        };
        auto first_unlink = std::find_if(g_io_log.ops.begin(), g_io_log.ops.end(),
                                         [](auto& op) { return op.first == io_op::kind::unlink; }) -
                            g_io_log.ops.begin();
        auto ck = dir + "/ckpt-000003";
        auto n = std::ptrdiff_t(g_io_log.ops.size());
        CHECK(first_unlink < n);
        CHECK(at(io_op::kind::rename, ck + "/manifest.tmp") < at(io_op::kind::fsync, ck));
        CHECK(at(io_op::kind::fsync, ck) < first_unlink);
        CHECK(at(io_op::kind::fsync, dir) < first_unlink);
    }
    std::string error;
    CHECK(restored_digest(first, error) == digest_a);
    CHECK(error == "");
    CHECK(restored_digest(dir, error) == digest_c);
    CHECK(error == "");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        fs::remove_all(dir);
        fs::remove_all(first);
    }
}

TEST_CASE("stale listings at restart: every rank loads the checkpoint rank 0 chose") {
    auto dir = scratch("stale_restart"), older = scratch("stale_restart_older");
    int me = world_rank();
    root r;
    double digest_new = 0;
    {
        prema::runtime rt(MPI_COMM_WORLD);
        r.cells = create_cells(rt, cells_per_rank, [](int) { return std::size_t(30); });
        REQUIRE(rt.run([&]() -> prema::task<> {
            co_await send_numbers(r.cells, 0);
            co_await prema::checkpoint(dir, r); // ckpt-000001
        }) == 0);
        if (me == 0) {
            fs::create_directories(older);
            fs::copy(fs::path(dir) / "ckpt-000001", fs::path(older) / "ckpt-000001",
                     fs::copy_options::recursive);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        REQUIRE(rt.run([&]() -> prema::task<> {
            co_await send_numbers(r.cells, messages);
            co_await prema::checkpoint(dir, r); // ckpt-000002, which replaces ckpt-000001
            if (prema::rank() == 0)
                digest_new = co_await total_digest(r.cells);
        }) == 0);
    }
    // Both complete in the directory again; on the other ranks the listing lags behind the
    // newest, as a shared file system's may.
    if (me == 0)
        fs::copy(fs::path(older) / "ckpt-000001", fs::path(dir) / "ckpt-000001",
                 fs::copy_options::recursive);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&digest_new, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me != 0)
        prema::detail::listing_view = [](std::optional<std::uint64_t>) {
            return std::optional<std::uint64_t>(1);
        };
    std::string error;
    CHECK(restored_digest(dir, error) == digest_new);
    CHECK(error == "");
    prema::detail::listing_view = nullptr;
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        fs::remove_all(dir);
        fs::remove_all(older);
    }
}

TEST_CASE("restart on the same and on a smaller rank count") {
    auto dir = scratch("roundtrip");
    auto s = build(dir);
    if (world_rank() == 0) { // a newer checkpoint that crashed before its manifest
        auto crashed = fs::path(dir) / "ckpt-999999";
        fs::create_directories(crashed);
        spit(crashed / "rank-0.bin", "half written");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_restart(MPI_COMM_WORLD, dir, s);
    if (world_size() > 1) {
        MPI_Comm fewer;
        int keep = world_rank() < world_size() - 1;
        MPI_Comm_split(MPI_COMM_WORLD, keep ? 0 : MPI_UNDEFINED, world_rank(), &fewer);
        if (keep) {
            check_restart(fewer, dir, s);
            MPI_Comm_free(&fewer);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0)
        fs::remove_all(dir);
}

TEST_CASE("damaged checkpoints: a clear error on every rank, nothing half-loaded") {
    auto dir = scratch("good");
    auto s = build(dir);
    auto bad = scratch("bad");
    std::string last_file = "rank-" + std::to_string(world_size() - 1) + ".bin";
    struct damage {
        const char* what;
        std::function<void(const fs::path&)> apply; // on the copied checkpoint directory
        std::vector<std::string> expect;            // in every rank's message
        bool other_root = false;
    };
    std::vector<damage> cases = {
        {"missing directory",
         [&](const fs::path&) { fs::remove_all(bad); },
         {bad, "no such checkpoint directory"}},
        {"no complete checkpoint",
         [](const fs::path& ck) { fs::remove(ck / "manifest"); },
         {bad, "no complete checkpoint"}},
        {"truncated rank file",
         [&](const fs::path& ck) {
             fs::resize_file(ck / last_file, fs::file_size(ck / last_file) / 2);
         },
         {last_file, "truncated"}},
        {"corrupt rank file",
         [&](const fs::path& ck) {
             auto b = slurp(ck / last_file);
             b[b.size() / 2] ^= 0x5a;
             spit(ck / last_file, b);
         },
         {last_file, "checksum mismatch"}},
        {"corrupt manifest",
         [](const fs::path& ck) {
             auto m = slurp(ck / "manifest");
             m[m.find("serial ") + 7] ^= 0x01;
             spit(ck / "manifest", m);
         },
         {"manifest", "checksum mismatch"}},
        {"truncated manifest",
         [](const fs::path& ck) {
             auto m = slurp(ck / "manifest");
             spit(ck / "manifest", m.substr(0, m.size() / 2));
         },
         {"manifest", "truncated"}},
        {"incompatible version",
         [](const fs::path& ck) {
             auto m = slurp(ck / "manifest");
             spit(ck / "manifest", "prema-checkpoint 9" + m.substr(m.find('\n')));
         },
         {"manifest", "format version 9"}},
        {"corrupt root",
         [](const fs::path& ck) { spit(ck / "root.bin", "junk"); },
         {"root.bin", "the manifest says"}},
        {"another root type", [](const fs::path&) {}, {"root.bin", "another type"}, true},
    };
    prema::runtime rt(MPI_COMM_WORLD);
    for (auto& d : cases) {
        if (world_rank() == 0) {
            fs::remove_all(bad);
            fs::copy(dir, bad, fs::copy_options::recursive);
            d.apply(only_checkpoint(bad));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        std::string message;
        bool right_type = false;
        CHECK(rt.run([&]() -> prema::task<> {
            try {
                if (d.other_root)
                    co_await prema::restart<other_root>(bad);
                else
                    co_await prema::restart<root>(bad);
            } catch (const prema::checkpoint_error& e) {
                right_type = true;
                message = e.what();
            }
        }) == 0);
        INFO(d.what << ": " << message);
        CHECK(right_type);
        for (auto& e : d.expect)
            CHECK(message.find(e) != std::string::npos);
    }
    // Nothing of the failed attempts was loaded: the good checkpoint restarts in this runtime.
    checker c;
    CHECK(rt.run([&]() -> prema::task<> {
        auto r = co_await prema::restart<root>(dir);
        if (prema::rank() == 0)
            c(co_await total_digest(r.cells) == s.digest, "digest after failed restarts");
        c.done = true;
    }) == 0);
    report(c);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) {
        fs::remove_all(dir);
        fs::remove_all(bad);
    }
}

TEST_CASE("checkpoint_due: every rank gets the same answers") {
    prema::runtime rt(MPI_COMM_WORLD);
    std::vector<char> by_steps, by_time;
    CHECK(rt.run([&]() -> prema::task<> {
        for (std::uint64_t step = 0; step < 30; ++step) {
            by_steps.push_back(co_await prema::checkpoint_due({.every_steps = 7}, step));
            // Ranks reach each step at different times: the answer must not depend on it.
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + prema::rank()));
            by_time.push_back(co_await prema::checkpoint_due({.every_seconds = 0.01}, step));
        }
    }) == 0);
    CHECK(std::count(by_steps.begin(), by_steps.end(), 1) == 4); // steps 7, 14, 21, 28
    auto ones = std::count(by_time.begin(), by_time.end(), 1);
    CHECK(ones > 0);
    CHECK(ones < 30);
    std::vector<char> all(by_time.size() * std::size_t(world_size()));
    MPI_Allgather(by_time.data(), int(by_time.size()), MPI_CHAR, all.data(), int(by_time.size()),
                  MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 1; r < world_size(); ++r)
        CHECK(std::equal(by_time.begin(), by_time.end(), all.begin() + r * by_time.size()));
}
