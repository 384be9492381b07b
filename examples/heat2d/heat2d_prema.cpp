// heat2d in PREMA. Each block of rows is a mobile object. After every step a block sends its
// edge rows to its neighbours (prema::send to their mobile pointers, wherever they live), and a
// block steps as soon as it holds both ghost rows of its current step: blocks advance on their
// own, without a barrier per step, and a block that waits leaves its worker to another block.
// A neighbour is never more than one step ahead (it needs this block's rows to go on), so a
// block keeps at most two steps' ghost rows per side.
//
// The entry coroutine runs the steps in segments: it tells every block how far to go and waits
// for quiescence, at which point every block has done exactly `done` steps and no message is in
// flight. The top of that loop is the one place between steps (progress is reported there;
// --rotate moves every block one rank on there, which must not change the answer; checkpoints
// are written there: the blocks, with the ghost rows they already hold for the next step, and
// the root below).
#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <prema/prema.hpp>

#include "../common/policies.hpp"
#include "../common/progress.hpp"
#include "../common/stopwatch.hpp"
#include "versions.hpp"

namespace heat2d {
namespace {

struct block {
    int index = 0;
    std::int64_t step = 0;   // steps done
    std::int64_t target = 0; // step to stop at (the end of the entry's current segment)
    std::int64_t steps = 0;  // the run's last step: no edge rows are sent after it
    double alpha = 0;
    prema::mobile_ptr<block> up, down; // null at the top and bottom of the grid
    tile cells;
    // Edge rows received from neighbours, for [side * 2 + step % 2], and their step (-1: none).
    std::array<std::vector<double>, 4> ghost;
    std::array<std::int64_t, 4> ghost_step{-1, -1, -1, -1};
    std::vector<double> scratch; // the next state's storage, not part of the state

    block() = default;
    block(int i, problem p) : index(i), steps(p.steps), alpha(p.alpha), cells(p, i) {}

    bool has(int side) const {
        return !(side == 0 ? up : down) || ghost_step[std::size_t(side * 2 + step % 2)] == step;
    }

    template <class Archive> void serialize(Archive& ar) {
        ar(index, step, target, steps, alpha, up, down, cells, ghost, ghost_step);
    }
};

prema::task<> on_edge(block& b, std::int64_t step, int side, std::vector<double> row);

// Sends this block's edge rows of its current step to its neighbours.
prema::task<> send_edges(block& b) {
    if (b.up)
        co_await prema::send(b.up, prema::fn<&on_edge>, b.step, 1, b.cells.edge(0));
    if (b.down)
        co_await prema::send(b.down, prema::fn<&on_edge>, b.step, 0, b.cells.edge(1));
}

// Steps while the ghost rows are there and the segment is not done.
prema::task<> advance(block& b) {
    while (b.step < b.target && b.has(0) && b.has(1)) {
        for (int side = 0; side < 2; ++side)
            if (side == 0 ? b.up : b.down)
                b.cells.set_ghost(side, b.ghost[std::size_t(side * 2 + b.step % 2)].data());
        b.cells.step(b.alpha, b.scratch);
        ++b.step;
        if (b.step < b.steps)
            co_await send_edges(b);
    }
}

prema::task<> on_edge(block& b, std::int64_t step, int side, std::vector<double> row) {
    if ((side != 0 && side != 1) || row.size() != std::size_t(b.cells.cols) || step < b.step)
        throw std::runtime_error("block " + std::to_string(b.index) + " at step " +
                                 std::to_string(b.step) + ": bad edge row (side " +
                                 std::to_string(side) + ", step " + std::to_string(step) + ", " +
                                 std::to_string(row.size()) + " values)");
    std::size_t slot = std::size_t(side * 2 + step % 2);
    b.ghost[slot] = std::move(row);
    b.ghost_step[slot] = step;
    co_await advance(b);
}

prema::task<> connect(block& b, prema::mobile_ptr<block> up, prema::mobile_ptr<block> down) {
    b.up = up;
    b.down = down;
    co_await send_edges(b);
}

prema::task<> run_until(block& b, std::int64_t target) {
    b.target = target;
    co_await advance(b);
}

double block_sum(const block& b) {
    return b.cells.sum_of_squares();
}

// What a checkpoint saves besides the blocks: the problem (a restart must solve the same one),
// the steps done and the blocks' names.
struct saved_run {
    int cols = 0, block_rows = 0, blocks = 0, steps = 0;
    double alpha = 0;
    std::int64_t done = 0;
    std::vector<prema::mobile_ptr<block>> names;
    template <class Archive> void serialize(Archive& ar) {
        ar(cols, block_rows, blocks, steps, alpha, done, names);
    }
    bool same_problem(const problem& p) const {
        return cols == p.cols && block_rows == p.block_rows && blocks == p.blocks &&
               steps == p.steps && alpha == p.alpha;
    }
};

// Creates the blocks (rank 0 keeps their names) and delivers their step-0 edges.
prema::task<std::vector<prema::mobile_ptr<block>>> create_blocks(const problem& p) {
    std::vector<prema::mobile_ptr<block>> blocks;
    if (prema::rank() == 0) {
        for (int b = 0; b < p.blocks; ++b)
            blocks.push_back(co_await prema::create<block>(p.owner(b, prema::ranks()), b, p));
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            // Not `b > 0 ? blocks[b - 1] : null` inside the co_await expression: GCC 12
            // evaluates both arms there (AddressSanitizer sees blocks[-1] read).
            prema::mobile_ptr<block> up, down; // null at the top and bottom of the grid
            if (b > 0)
                up = blocks[b - 1];
            if (b + 1 < blocks.size())
                down = blocks[b + 1];
            co_await prema::send(blocks[b], prema::fn<&connect>, up, down);
        }
    }
    co_return blocks;
}

// The blocks and the steps done: created afresh, or from the newest checkpoint in `dir`.
prema::task<saved_run> start(const problem& p, const std::string& dir) {
    saved_run run{p.cols, p.block_rows, p.blocks, p.steps, p.alpha, 0, {}};
    if (dir.empty()) {
        run.names = co_await create_blocks(p);
        co_return run;
    }
    run = co_await prema::restart<saved_run>(dir);
    if (!run.same_problem(p))
        throw prema::usage_error("the checkpoint in " + dir +
                                 " is of another problem (--cols, --block-rows, --blocks, "
                                 "--steps, --alpha must match)");
    if (prema::rank() != 0)
        run.names.clear(); // rank 0 drives the blocks
    else
        std::printf("heat2d prema: restarted at step %lld from %s\n",
                    static_cast<long long>(run.done), dir.c_str());
    co_return run;
}

} // namespace

outcome run_prema(const problem& p, const prema::config& cfg, bool rotate, const checkpointing& c) {
    outcome out;
    std::string restart = c.restart.empty() ? cfg.restart : c.restart;
    out.migrations = example::run_under_policy(cfg, cfg.lb, [&]() -> prema::task<> {
        int me = prema::rank();
        prema::lb::enable_balancing(false); // until every block is placed
        saved_run run = co_await start(p, restart);
        auto& blocks = run.names;
        co_await prema::quiescence();      // every block placed, step-0 edges delivered
        prema::lb::enable_balancing(true); // blocks move only under a --prema-lb policy
        example::stopwatch clock;
        example::progress shown("heat2d prema: step");
        // Ten segments: progress every tenth of the run, at the cost of ten global waits. A
        // segment also ends where a checkpoint is due.
        std::int64_t segment = std::max(1, p.steps / 10);
        for (std::int64_t& done = run.done; done < p.steps;) {
            // Between steps: every block has done `done` steps, nothing is in flight.
            if (rotate && done > 0)
                for (auto& b : blocks)
                    co_await prema::migrate(b, (prema::where(b) + 1) % prema::ranks());
            std::int64_t next = std::min<std::int64_t>(p.steps, done + segment);
            if (c.every > 0)
                next = std::min<std::int64_t>(next, (done / c.every + 1) * c.every);
            for (auto& b : blocks)
                co_await prema::send(b, prema::fn<&run_until>, next);
            co_await prema::quiescence();
            done = next;
            if (co_await prema::checkpoint_due({.every_steps = std::uint64_t(c.every)},
                                               std::uint64_t(done)) &&
                done < p.steps) {
                auto t = std::chrono::steady_clock::now();
                co_await prema::checkpoint(c.dir, run);
                out.checkpoint_s +=
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
                ++out.checkpoints;
            }
            if (me == c.kill_rank && done >= c.kill_after)
                std::raise(SIGKILL); // tests: a node fails part-way
            if (me == 0)
                shown.report(done, p.steps);
        }
        out.seconds = clock.wall_s();
        out.cpu_s = clock.cpu_s();
        std::vector<double> sums;
        for (auto& b : blocks)
            sums.push_back(co_await prema::call(b, prema::fn<&block_sum>));
        out.checksum = checksum(sums);
    });
    return out;
}

} // namespace heat2d
