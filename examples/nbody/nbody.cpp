// nbody: direct-sum gravity over mobile chunks of particles, with half of the domain empty so
// that chunk costs differ strongly, run under static placement (--prema-lb none) and under a
// balancing policy in the same program. Prints the time of each and the energy drift, and
// fails if the drift exceeds --max-drift or the policies disagree in any bit.
//
//   mpirun -np 2 ./nbody [--particles 4096 --chunks 64 --steps 20] [--prema-lb diffusion]
//   (--help lists every option; --all compares every registered policy, --policy NAME one)
//
// Distribution. The domain is cut into --chunks slabs along x; a chunk is a mobile object that
// holds the particles starting in its slab (they stay in it). Every particle starts in x < 0.5,
// denser towards x = 0: the upper half of the chunks is empty and the lower ones cost in
// proportion to their particle count. Chunks are placed in contiguous runs, so with static
// placement the ranks holding the upper half idle.
//
// Positions travel by broadcast: each step a chunk sends its particles' new positions to every
// rank (prema::broadcast), which copies them into its replica of all positions. A chunk's force
// needs every position anyway, so the replica is what every chunk reads, wherever balancing
// has moved it. The replica is double-buffered by step parity: step k reads buffer k % 2 and
// fills buffer (k + 1) % 2, and quiescence separates the steps, so no reader meets a writer.
//
// Time stepping is leapfrog (kick-drift-kick with the kicks of consecutive steps merged): step k
// computes the accelerations at x_k, kicks by dt (dt / 2 at step 0), and drifts; one more force
// pass at the end (step `steps`) completes the last half kick, so velocities are synchronous
// for the energy at both ends.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>
#include <prema/prema.hpp>

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "../common/placement.hpp"
#include "../common/policies.hpp"
#include "../common/progress.hpp"
#include "../common/stopwatch.hpp"
#include "bodies.hpp"

namespace {

using nbody::problem;

// Each rank's replica of all positions, double-buffered by step parity, and on rank 0 the
// energies the chunks report at the end. Set up before every run; during it, handlers write
// disjoint ranges of the buffer no one reads in that step.
struct replica {
    problem p;
    nbody::positions x[2];
    std::vector<double> start_energy, end_energy; // per chunk, rank 0 only
};
replica world;
// Thread CPU time this rank spent in force passes during the current run: what each rank's
// share of the work costs, whatever else the machine runs.
std::atomic<double> force_cpu_s{0};

struct chunk {
    int index = 0, begin = 0, end = 0;  // its particles' global indices: [begin, end)
    std::vector<double> x, v;           // their positions and velocities, 3 per particle
    double start_energy = 0;            // of its particles, at step 0
    std::vector<double> acc, potential; // scratch of one step, not part of the state

    // What a pending step weighs for the balancer: the force pass of each particle costs the
    // same; an empty chunk still costs a message.
    double load() const { return double(end - begin) + 1; }

    template <class Archive> void serialize(Archive& ar) {
        ar(index, begin, end, x, v, start_energy);
    }
};

void store_positions(std::int64_t step, int begin, std::vector<double> x) {
    auto& to = world.x[step % 2];
    if (begin < 0 || x.size() % 3 || 3 * std::size_t(begin) + x.size() > to.size())
        throw std::runtime_error("positions of particles from " + std::to_string(begin) + ", " +
                                 std::to_string(x.size()) + " values: not within the " +
                                 std::to_string(to.size() / 3) + " particles");
    std::copy(x.begin(), x.end(), to.begin() + 3 * std::ptrdiff_t(begin));
}

void record_energy(int index, double start, double end) {
    if (index < 0 || std::size_t(index) >= world.start_energy.size())
        throw std::runtime_error("energy of chunk " + std::to_string(index) + " of " +
                                 std::to_string(world.start_energy.size()));
    world.start_energy[std::size_t(index)] = start;
    world.end_energy[std::size_t(index)] = end;
}

// Step k of the chunk; k == steps only closes the last half kick and reports the energies.
prema::task<> advance(chunk& c, std::int64_t k) {
    const problem& p = world.p;
    int n = c.end - c.begin;
    c.acc.resize(3 * std::size_t(n));
    c.potential.resize(std::size_t(n));
    constexpr int piece = 32; // particles between yield points: a few hundred us
    for (int i = 0; i < n; i += piece) {
        double cpu0 = example::stopwatch::thread_cpu_s();
        nbody::forces(p, world.x[k % 2], c.begin + i, c.begin + std::min(n, i + piece),
                      c.acc.data() + 3 * i, c.potential.data() + i);
        force_cpu_s += example::stopwatch::thread_cpu_s() - cpu0;
        co_await prema::yield_point();
    }
    if (k == 0)
        c.start_energy = nbody::energy(p, c.v, c.potential);
    double kick = k == 0 || k == p.steps ? p.dt / 2 : p.dt;
    for (std::size_t i = 0; i < c.v.size(); ++i)
        c.v[i] += kick * c.acc[i];
    if (k == p.steps) {
        co_await prema::send(0, prema::fn<&record_energy>, c.index, c.start_energy,
                             nbody::energy(p, c.v, c.potential));
        co_return;
    }
    for (std::size_t i = 0; i < c.x.size(); ++i)
        c.x[i] += p.dt * c.v[i];
    if (n > 0)
        co_await prema::broadcast(prema::fn<&store_positions>, k + 1, c.begin, c.x);
}

struct outcome {
    std::string policy;
    double seconds = 0; // the time steps, on rank 0
    unsigned long long migrations = 0;
    double busiest_cpu_s = 0, mean_cpu_s = 0; // force passes per rank: the largest, the mean
    double start_energy = 0, end_energy = 0, position_sum = 0; // rank 0
};

template <class T> std::vector<T> slice(const std::vector<T>& all, int begin, int end) {
    return std::vector<T>(all.begin() + 3 * std::ptrdiff_t(begin),
                          all.begin() + 3 * std::ptrdiff_t(end));
}

outcome simulate(const problem& p, const nbody::initial_state& init, const prema::config& cfg,
                 const std::string& policy) {
    world = replica{p,
                    {init.x, init.x},
                    std::vector<double>(std::size_t(p.chunks)),
                    std::vector<double>(std::size_t(p.chunks))};
    outcome out{policy};
    force_cpu_s = 0;
    out.migrations = example::run_under_policy(cfg, policy, [&]() -> prema::task<> {
        int me = prema::rank(), ranks = prema::ranks();
        std::vector<prema::mobile_ptr<chunk>> mine; // this rank drives the chunks it created
        for (int c = example::first_item(me, ranks, p.chunks);
             c < example::first_item(me + 1, ranks, p.chunks); ++c) {
            int b = init.first[std::size_t(c)], e = init.first[std::size_t(c) + 1];
            mine.push_back(prema::make_mobile<chunk>(
                chunk{c, b, e, slice(init.x, b, e), slice(init.v, b, e), 0, {}, {}}));
        }
        co_await prema::quiescence(); // every rank has placed its chunks
        example::stopwatch clock;
        example::progress shown("nbody " + policy + ": step");
        for (std::int64_t k = 0; k <= p.steps; ++k) {
            for (auto& c : mine)
                co_await prema::send(c, prema::fn<&advance>, k);
            co_await prema::quiescence(); // step k done everywhere, its positions delivered
            if (me == 0)
                shown.report(long(k + 1), long(p.steps) + 1);
        }
        out.seconds = clock.wall_s();
    });
    double mine = force_cpu_s, sum = 0;
    MPI_Reduce(&mine, &out.busiest_cpu_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    out.mean_cpu_s = sum / ranks;
    for (int c = 0; c < p.chunks; ++c) { // in chunk order: the same sums on every rank count
        out.start_energy += world.start_energy[std::size_t(c)];
        out.end_energy += world.end_energy[std::size_t(c)];
    }
    for (double x : world.x[p.steps % 2])
        out.position_sum += x;
    return out;
}

} // namespace

int main(int argc, char** argv) {
    problem p;
    example::policy_choice policies;
    double max_drift = 1e-4;
    std::string json_path;
    example::cli cli("nbody", "Direct-sum gravity over mobile chunks of particles, half of the "
                              "domain empty: static\nplacement (policy none) against balancing "
                              "policies (--policy, --all or --prema-lb;\nwork_stealing if none "
                              "is named) in one run. Prints the time of each and the\nenergy "
                              "drift; fails if the drift exceeds --max-drift or the policies'\n"
                              "results differ.");
    cli.add("--particles", "N", "particles", p.particles, 2, 1 << 24);
    cli.add("--chunks", "N", "chunks (slabs along x; the upper half is empty)", p.chunks, 2,
            1 << 20);
    cli.add("--steps", "N", "time steps", p.steps, 1, 1 << 24);
    cli.add("--dt", "X", "time step", p.dt, 1e-12, 1.0);
    cli.add("--softening", "X", "Plummer softening length", p.softening, 1e-6, 1.0);
    cli.add("--seed", "N", "seed of the initial particles", p.seed, 0, 1 << 30);
    cli.add("--max-drift", "X", "largest relative energy drift accepted", max_drift, 0.0, 1.0);
    policies.add_to(cli, argc, argv);
    cli.add("--json", "FILE", "also write the figures as JSON", json_path);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) {
        int me = 0, ranks = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        auto init = nbody::make_initial(p);
        std::vector<outcome> runs{simulate(p, init, cfg, "none")};
        for (auto& policy : policies.resolve(cfg.lb, "work_stealing"))
            if (policy != "none")
                runs.push_back(simulate(p, init, cfg, policy));
        if (me != 0)
            return 0;

        int empty = 0, largest = 0;
        for (int c = 0; c < p.chunks; ++c) {
            int n = init.first[std::size_t(c) + 1] - init.first[std::size_t(c)];
            empty += n == 0;
            largest = std::max(largest, n);
        }
        std::printf("nbody: %d particles in %d chunks (%d empty, largest %d particles), %d steps "
                    "of dt %g; %d ranks x %d worker(s), %s progress\n",
                    p.particles, p.chunks, empty, largest, p.steps, p.dt, ranks, cfg.workers,
                    prema::to_string(cfg.progress).c_str());
        std::printf("%-15s %9s %8s | %12s %10s | %10s\n", "policy", "time s", "vs none",
                    "busiest cpu s", "imbalance", "migrations");
        example::json out;
        out.set("particles", p.particles).set("chunks", p.chunks).set("empty_chunks", empty);
        out.set("steps", p.steps).set("dt", p.dt).set("ranks", ranks);
        out.set("workers", cfg.workers).set("progress", prema::to_string(cfg.progress));
        const outcome& base = runs.front();
        bool same = true;
        std::vector<example::json> rows;
        for (auto& r : runs) {
            std::printf("%-15s %9.3f %7.2fx | %12.3f %9.2fx | %10llu\n", r.policy.c_str(),
                        r.seconds, base.seconds / r.seconds, r.busiest_cpu_s,
                        r.busiest_cpu_s / r.mean_cpu_s, r.migrations);
            same &= r.start_energy == base.start_energy && r.end_energy == base.end_energy &&
                    r.position_sum == base.position_sum;
            rows.push_back(example::json()
                               .set("policy", r.policy)
                               .set("seconds", r.seconds)
                               .set("speedup", base.seconds / r.seconds)
                               .set("busiest_rank_force_cpu_s", r.busiest_cpu_s)
                               .set("mean_rank_force_cpu_s", r.mean_cpu_s)
                               .set("migrations", (long long)r.migrations)
                               .set("end_energy", r.end_energy));
        }
        double drift = std::abs((base.end_energy - base.start_energy) / base.start_energy);
        bool ok = drift <= max_drift;
        std::printf("vs none: time under none / time under the policy. busiest cpu: the thread CPU "
                    "time of the force passes\non the busiest rank (what the run would take with "
                    "a core per rank); imbalance: busiest / mean.\n");
        std::printf("energy: start %.12g, end %.12g, relative drift %.3e (at most %.1e: %s)\n",
                    base.start_energy, base.end_energy, drift, max_drift, ok ? "ok" : "EXCEEDED");
        std::printf("results under every policy: %s\n", same ? "identical" : "DIFFER");
        std::printf("answer: end energy %.17g, position sum %.17g\n", base.end_energy,
                    base.position_sum);
        out.set("start_energy", base.start_energy).set("end_energy", base.end_energy);
        out.set("relative_drift", drift).set("identical", same).set("runs", rows);
        if (!json_path.empty() && !out.write(json_path))
            ok = false;
        return ok && same ? 0 : 1;
    });
}
