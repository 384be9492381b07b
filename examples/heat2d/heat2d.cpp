// heat2d: the 2-D heat equation on a grid split into blocks of rows, stepped explicitly for a
// fixed number of steps, in PREMA (blocks are mobile objects exchanging edge rows by messages,
// heat2d_prema.cpp) and in plain MPI (heat2d_mpi.cpp) in the same run. Prints both times and
// checksums; fails if the checksums differ in any bit.
//
//   mpirun -np 2 ./heat2d [--blocks 8 --block-rows 512 --cols 512 --steps 200] [--json FILE]
//   (--help lists every option; --prema-* runtime options apply to the PREMA run)
//
// Checkpoints (PREMA run): --checkpoint-every N writes one after every N steps under
// --checkpoint-dir; --restart DIR (or --prema-restart DIR) resumes from the newest one there,
// on any number of ranks, and ends with the same checksum as an uninterrupted run.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include <mpi.h>
#include <prema/prema.hpp>

#include "../common/cli.hpp"
#include "../common/json.hpp"
#include "versions.hpp"

namespace {

// The runs of one version: the fastest wall time, the least CPU time of the job (summed over
// ranks), and whether every run gave the same checksum. add() is collective.
struct tally {
    double best_s = 0, best_cpu_s = 0, checksum = 0;
    bool consistent = true;
    unsigned long long migrations = 0; // over all runs
    int runs = 0;
    int checkpoints = 0;                         // the last run's
    double checkpoint_s = 0, checkpointed_s = 0; // their time, and that run's

    void add(const heat2d::outcome& o) {
        double cpu = 0;
        MPI_Reduce(&o.cpu_s, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        best_s = runs == 0 ? o.seconds : std::min(best_s, o.seconds);
        best_cpu_s = runs == 0 ? cpu : std::min(best_cpu_s, cpu);
        consistent &= runs == 0 || o.checksum == checksum;
        checksum = o.checksum;
        migrations += o.migrations;
        checkpoints = o.checkpoints;
        checkpoint_s = o.checkpoint_s;
        checkpointed_s = o.seconds;
        ++runs;
    }
};

} // namespace

int main(int argc, char** argv) {
    heat2d::problem p;
    heat2d::checkpointing ck;
    std::string run = "both", json_path;
    int repeat = 1;
    bool rotate = false;
    example::cli cli("heat2d", "2-D heat equation over blocks of rows: PREMA (blocks are mobile "
                               "objects exchanging edge\nrows by messages) against the same "
                               "computation in plain MPI. Prints both times and the\nchecksum "
                               "(per-block sums of squares added in block order); fails if the "
                               "versions "
                               "disagree.");
    cli.add("--cols", "N", "grid width", p.cols, 1, 1 << 20);
    cli.add("--block-rows", "N", "rows per block", p.block_rows, 1, 1 << 20);
    cli.add("--blocks", "N", "blocks (at least one per rank)", p.blocks, 1, 1 << 20);
    cli.add("--steps", "N", "time steps", p.steps, 1, 1 << 30);
    cli.add("--alpha", "X", "diffusion number k dt / h^2", p.alpha, 0.0, 0.25);
    cli.add("--run", "WHICH", "prema, mpi or both", run);
    cli.add("--repeat", "N", "run each version N times, alternating; report the least times",
            repeat, 1, 1000);
    cli.add_flag("--rotate",
                 "PREMA: move every block to the next rank after each tenth of the steps", rotate);
    cli.add("--checkpoint-every", "N", "PREMA: checkpoint after every N steps (0: never)", ck.every,
            0, 1 << 30);
    cli.add("--checkpoint-dir", "DIR", "PREMA: where checkpoints go", ck.dir);
    cli.add("--restart", "DIR", "PREMA: resume from the newest checkpoint in DIR", ck.restart);
    cli.add("--kill-rank", "R", "tests: rank R raises SIGKILL part-way (-1: none)", ck.kill_rank,
            -1, 1 << 20);
    cli.add("--kill-after-step", "K", "tests: ... once it has done K steps", ck.kill_after, 0,
            1 << 30);
    cli.add("--json", "FILE", "also write the figures as JSON", json_path);
    return example::main(argc, argv, cli, [&](const prema::config& cfg) {
        int me = 0, ranks = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
        if (run != "prema" && run != "mpi" && run != "both")
            throw prema::usage_error("--run: expected prema, mpi or both, not '" + run + "'");
        if (p.blocks < ranks)
            throw prema::usage_error("--blocks " + std::to_string(p.blocks) + " is fewer than " +
                                     std::to_string(ranks) + " ranks");
        bool do_mpi = run != "prema", do_prema = run != "mpi";
        tally by_mpi, by_prema;
        for (int i = 0; i < repeat; ++i) {
            if (do_mpi)
                by_mpi.add(heat2d::run_mpi(p));
            if (do_prema)
                by_prema.add(heat2d::run_prema(p, cfg, rotate, ck));
        }
        if (me != 0)
            return 0;
        std::printf("heat2d: %d blocks of %d x %d (grid %ld x %d), %d steps, alpha %g; %d ranks, "
                    "PREMA with %d worker(s), %s progress\n",
                    p.blocks, p.block_rows, p.cols, long(p.blocks) * p.block_rows, p.cols, p.steps,
                    p.alpha, ranks, cfg.workers, prema::to_string(cfg.progress).c_str());
        std::printf("%-8s %10s %12s %10s  %s\n", "version", "time s", "ms / step", "cpu s",
                    "checksum");
        example::json out;
        out.set("ranks", ranks).set("workers", cfg.workers);
        out.set("progress", prema::to_string(cfg.progress));
        out.set("blocks", p.blocks).set("block_rows", p.block_rows).set("cols", p.cols);
        out.set("steps", p.steps).set("alpha", p.alpha).set("repeat", repeat);
        int rc = 0;
        for (auto [name, t] : {std::pair{"mpi", &by_mpi}, {"prema", &by_prema}}) {
            if (t->runs == 0)
                continue;
            std::printf("%-8s %10.4f %12.4f %10.4f  %.17g%s\n", name, t->best_s,
                        1e3 * t->best_s / p.steps, t->best_cpu_s, t->checksum,
                        t->consistent ? "" : "  (NOT the same in every repeat)");
            out.set(std::string(name) + "_s", t->best_s);
            out.set(std::string(name) + "_cpu_s", t->best_cpu_s);
            out.set(std::string(name) + "_checksum", t->checksum);
            rc |= t->consistent ? 0 : 1;
        }
        if (do_prema && cfg.lb != "none") {
            std::printf("policy %s: blocks moved %llu times%s\n", cfg.lb.c_str(),
                        by_prema.migrations, rotate ? " (--rotate's moves included)" : "");
            out.set("migrations", (long long)by_prema.migrations);
        }
        if (by_prema.checkpoints > 0) {
            double share = by_prema.checkpoint_s / by_prema.checkpointed_s;
            std::printf("checkpoints: %d in %.4f s, %.2f%% of the PREMA run (target < 2%%)\n",
                        by_prema.checkpoints, by_prema.checkpoint_s, 100 * share);
            out.set("checkpoints", by_prema.checkpoints);
            out.set("checkpoint_s", by_prema.checkpoint_s).set("checkpoint_share", share);
        }
        if (do_mpi && do_prema) {
            double overhead = by_prema.best_s / by_mpi.best_s - 1;
            double cpu_overhead = by_prema.best_cpu_s / by_mpi.best_cpu_s - 1;
            bool same = by_prema.checksum == by_mpi.checksum;
            std::printf("PREMA overhead: %+.1f%% wall time, %+.1f%% CPU time (target < 10%%); "
                        "checksums %s\n",
                        100 * overhead, 100 * cpu_overhead, same ? "identical" : "DIFFER");
            out.set("overhead", overhead).set("cpu_overhead", cpu_overhead);
            out.set("checksums_identical", same);
            rc |= same ? 0 : 1;
        }
        std::printf("checksum: %.17g\n", do_mpi ? by_mpi.checksum : by_prema.checksum);
        if (!json_path.empty() && !out.write(json_path))
            rc = 1;
        return rc;
    });
}
