// A user-written load-balancing policy: "ring_steal".
//
// An idle rank (nothing pending, a worker free) asks its left neighbour for work. A rank that
// can spare an object (more objects with pending work than free workers) migrates its heaviest
// one to the requester; a rank that cannot passes the request on to its own left. A request that
// goes all the way round the ring is refused, and the requester pauses before asking again.
//
// What a policy sees (include/prema/lb/scheduler.hpp):
//  - dist_balance() runs every --prema-lb-period-us while balancing is enabled, and receive()
//    gets what this policy's instances on other ranks send with send_to(). Both run on the one
//    thread that drives MPI, so the policy's own state needs no lock; neither may block.
//  - work_map() lists this rank's objects with pending (not started) work, heaviest first;
//    local_load(), running() and workers() are the figures to decide with.
//  - migrate(object, rank) moves an object with its pending handlers. The runtime keeps every
//    message to it ordered and run exactly once, wherever it goes: a policy only decides where
//    work should run, never reasons about correctness.
//
// Register the policy before the runtime starts; --prema-lb=NAME selects it. This program runs
// the same imbalanced workload (every object on rank 0) under `none` and under the selected
// policy (ring_steal unless --prema-lb names another) and prints both makespans.
//   mpirun -np 4 ./custom_policy
//   mpirun -np 4 ./custom_policy --prema-lb=work_stealing
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <mpi.h>

#include <prema/lb/scheduler.hpp>
#include <prema/prema.hpp>

namespace {

class ring_steal final : public prema::lb::scheduler {
    enum class kind : std::uint8_t { request, granted, refused };
    struct msg { // policy messages are plain bytes: any trivially copyable struct
        kind k;
        std::int32_t origin; // the rank that wants work
    };
    using clock = std::chrono::steady_clock;

    void dist_balance() override {
        bool idle = local_load() == 0 && running() < workers();
        if (!idle || waiting_ || ranks() == 1 || clock::now() < quiet_until_)
            return;
        waiting_ = true;
        asked_at_ = clock::now();
        send_to(left(), msg{kind::request, rank()});
    }

    void receive(int /*from*/, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        if (m.k == kind::request)
            return serve(m.origin);
        waiting_ = false;
        note_answer_wait(std::chrono::duration<double>(clock::now() - asked_at_).count());
        if (m.k == kind::refused) // nobody has spare work: wait 8 periods before asking again
            quiet_until_ = clock::now() + 8 * std::chrono::microseconds(options().lb_period_us);
    }

    void serve(int origin) {
        auto objects = work_map();
        if (int(objects.size()) > workers() - running()) // keep one object per free worker
            for (auto& o : objects)
                if (migrate(o.object, origin)) // false if it started meanwhile: try the next
                    return send_to(origin, msg{kind::granted, origin});
        if (left() == origin) // the request went round the ring
            send_to(origin, msg{kind::refused, origin});
        else
            send_to(left(), msg{kind::request, origin});
    }

    int left() const { return (rank() + ranks() - 1) % ranks(); }

    bool waiting_ = false;
    clock::time_point asked_at_{}, quiet_until_{};
};

// The workload: objects that each get one work item of `ms` milliseconds. Sleeping stands for
// computing so that ranks sharing a few cores do not distort the schedule; the yield points let
// the runtime serve balancing messages during long handlers.
struct chunk {
    int ms = 0;
    template <class Archive> void serialize(Archive& ar) { ar(ms); }
};

prema::task<> compute(chunk& c) {
    for (int i = 0; i < c.ms; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        co_await prema::yield_point();
    }
}

struct outcome {
    double makespan_s;
    unsigned long long migrations;
};

// Runs the workload under `cfg`: 8 objects per worker of the job, all on rank 0, one in five
// heavy (25 ms), the others 10 ms.
outcome measure(const prema::config& cfg) {
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    double start = MPI_Wtime();
    rt.run([&]() -> prema::task<> {
        if (prema::rank() != 0)
            co_return;
        int objects = 8 * prema::ranks() * cfg.workers;
        for (int i = 0; i < objects; ++i) {
            auto c = prema::make_mobile<chunk>(chunk{i % 5 == 0 ? 25 : 10});
            co_await prema::send(c, prema::fn<&compute>);
        }
    });
    double makespan = MPI_Wtime() - start;
    unsigned long long mine = prema::lb::current_stats().migrations_out, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return {makespan, total};
}

} // namespace

int main(int argc, char** argv) {
    prema::lb::register_policy("ring_steal", [] { return std::make_unique<ring_steal>(); });

    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = 0;
    try {
        prema::config cfg = prema::config::from_args(argc, argv);
        if (cfg.lb == "none") // the baseline runs anyway
            cfg.lb = "ring_steal";
        prema::config baseline = cfg;
        baseline.lb = "none";
        outcome fixed = measure(baseline), balanced = measure(cfg);
        if (rank == 0)
            std::printf("none: %.3f s\n%s: %.3f s, %llu objects moved, %.2fx faster\n",
                        fixed.makespan_s, cfg.lb.c_str(), balanced.makespan_s, balanced.migrations,
                        fixed.makespan_s / balanced.makespan_s);
    } catch (const prema::usage_error& e) {
        if (rank == 0)
            std::fprintf(stderr, "custom_policy: %s\n", e.what());
        rc = 2;
    }
    MPI_Finalize();
    return rc;
}
