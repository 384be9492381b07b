// Whether this rank's threads have to share cores with each other or with the other ranks of
// the node. Threads that busy-wait on a shared core steal the cycles of the thread they wait
// for (a yielding but runnable thread still gets its fair share under CFS), so the idle
// back-off of workers and of the progress thread skips spinning and goes to sleep early then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>
#include <sched.h>

#include "prema/config.hpp"

namespace prema::detail {

struct core_sharing {
    int own_cores = 0;  // cores this process may run on (its affinity mask)
    int node_cores = 0; // cores of the node
    int node_ranks = 0; // ranks of the job on this node
    // This rank's share of its affinity mask, in order: the mask's cores split between the
    // ranks of the node with the same mask (in node order: Open MPI's --bind-to socket gives
    // the ranks of a socket one mask, --bind-to none all of them the whole node). Empty when the
    // mask overlaps another rank's without being the same.
    std::vector<int> share;
    bool shared(int threads_per_rank) const noexcept {
        return threads_per_rank > own_cores || node_ranks * threads_per_rank > node_cores;
    }
};

// Collective over `node`, the job's ranks on this node (node_comm); call on the thread that
// drives MPI.
core_sharing detect_core_sharing(MPI_Comm node);

// What --prema-progress auto becomes on this rank. A dedicated progress thread pays only
// with a core of its own: on a shared core every hand-off between it and a worker waits for the
// scheduler (1.9-3.3 us per message measured), while inline progress lets an idle worker poll.
progress_mode resolve_progress(const core_sharing& cores, int workers) noexcept;

// How long this rank's idle threads (`threads` of them) spin before they sleep: `configured`
// (--prema-spin-us) on cores of their own, 0 on shared cores, where a spinning thread takes the
// cycles of the thread it waits for.
std::uint64_t idle_spin_us(const core_sharing& cores, int threads,
                           std::uint64_t configured) noexcept;

// The cores to pin this rank's `threads` threads to, one each (workers in order, then the
// progress thread), or empty (do not pin): when its threads share cores, or its share of them
// is too small. Pinned, two spinning threads never land on one core, and a thread keeps its
// caches.
std::vector<int> pin_plan(const core_sharing& cores, int threads);

// Pins the calling thread to `cpu` until destroyed, then gives it back the affinity it had
// (the thread may be the application's: the one that called run()). cpu < 0: does nothing.
class thread_pin {
  public:
    explicit thread_pin(int cpu);
    ~thread_pin();
    thread_pin(const thread_pin&) = delete;
    thread_pin& operator=(const thread_pin&) = delete;

  private:
    bool pinned_ = false;
    cpu_set_t before_{};
};

// "auto -> inline" for a resolved automatic mode, else the mode's name: for logs and reports.
std::string describe_progress(progress_mode requested, progress_mode resolved);

} // namespace prema::detail
