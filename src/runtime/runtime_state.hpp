// The state of the runtime on this rank, shared by the files of src/.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include "coro/worker_pool.hpp"
#include "prema/config.hpp"
#include "prema/runtime.hpp"
#include "prema/transport/call.hpp"
#include "transport/aggregator.hpp"
#include "transport/message_pool.hpp"
#include "transport/progress_engine.hpp"

namespace prema::detail {

class balancer;
class io_reactor;
struct coordinator;

struct runtime_state {
    config cfg;                                                  // cfg.progress: the resolved mode
    progress_mode requested_progress = progress_mode::automatic; // as configured, for reports
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0, size = 1;
    message_pool pool;
    std::unique_ptr<progress_engine> engine;
    std::unique_ptr<worker_pool> workers;
    // One per worker, when aggregation is on.
    std::vector<std::unique_ptr<batch_set>> batches;
    std::vector<worker_outbox> outboxes; // one per worker: its tls_outbox while it runs
    std::uint64_t aggregate_ticks = 0;   // --prema-aggregate-us in now_ticks() units
    // Dedicated progress thread on shared cores: it runs messages while every worker sleeps.
    bool progress_runs_handlers = false;
    std::vector<int> pin_cpus; // --prema-pin: a core per worker, then the progress thread's
    std::unique_ptr<balancer> lb;
    std::unique_ptr<io_reactor> io; // checkpoint file I/O, reaped by the progress engine's tick
    std::unique_ptr<coordinator> checkpoints; // checkpoint and restart rounds

    std::atomic<int> errors{0}; // failures this phase: handler exceptions, refused messages

    std::mutex calls_mutex;
    std::unordered_map<std::uint64_t, pending_call*> calls;
    std::uint64_t next_token = 1;

    std::mutex waiters_mutex;
    std::vector<std::coroutine_handle<>> waiters; // in co_await quiescence()

    std::vector<std::function<void()>> at_shutdown; // upper layers free their state

    // Quiescences decided in this runtime: the same count on every rank (each decision is the
    // outcome of a collective wave). Raised on the MPI thread before any waiter resumes, read by
    // the object layer on its message paths (docs/design/ordering-and-forwarding.md).
    std::atomic<std::uint64_t> epoch{0};

    entry_fn entry;
    std::atomic<std::uint64_t> entries{0}; // this rank's entry, while it runs
    std::atomic<bool> phase_over{false};

    runtime_state(MPI_Comm c, config cf);
    ~runtime_state();
};

// The running runtime; throws usage_error if there is none.
runtime_state& state();
runtime_state* state_or_null() noexcept;

// The epoch of the running runtime on this rank (runtime_state::epoch); 0 without a runtime.
std::uint64_t current_epoch() noexcept;
// Upper layers' work at each new epoch: `f(epoch)` runs on a worker after this rank has decided
// a quiescence, while other work (released waiters, new messages) may run beside it. Register
// during static initialisation.
bool add_epoch_listener(void (*f)(std::uint64_t epoch));

// Runs on a worker: decodes the message in `arg` and invokes its handler.
void dispatch_message(void* arg);

// Whether the message the calling thread runs is all the work this rank has: it runs on a
// worker and no other item is queued or running, or on the progress thread while no worker has
// any (dedicated progress on shared cores), and no object handler waits in the balancer. More
// user code may then run to its end right here without hiding work from the balancer.
bool only_work_here() noexcept;
// Whether a received message may run at once on the worker that holds it rather than queue:
// it and the rest of its batch (`more_in_batch`) are all the work the rank has
// (only_work_here), or no other worker could run it sooner and no policy needs to see it
// pending (the rank has one worker and balancing is off).
bool may_run_here(bool more_in_batch) noexcept;

// Demangled type of the exception being handled (inside a catch block).
std::string current_exception_type();

// Logs a failure and counts it against this phase.
void report_error(const std::string& what) noexcept;

} // namespace prema::detail
