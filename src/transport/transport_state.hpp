// The transport's state on this rank: what the transport's files share, and the part of the
// runtime's state the layers above read (options, rank, workers, epoch). The runtime's own
// state (runtime/runtime_state.hpp) extends it with the balancer's and checkpoint's parts; the
// transport never names those.
#pragma once

#include <algorithm>
#include <atomic>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include "base/errors.hpp"
#include "coro/worker_pool.hpp"
#include "prema/config.hpp"
#include "prema/transport/call.hpp"
#include "prema/transport/rank.hpp"
#include "transport/aggregator.hpp"
#include "transport/message_pool.hpp"
#include "transport/node_peers.hpp"
#include "transport/progress_engine.hpp"

namespace prema::detail {

struct transport_state {
    config cfg;                    // cfg.progress: the resolved mode
    MPI_Comm comm = MPI_COMM_NULL; // the runtime's own: the ranks of the one it was given
    node_comm node;                // the ranks of `comm` on this node
    int rank = 0, size = 1;
    node_peers peers;
    // Its largest buffer holds the largest inline payload any rank may send this one.
    message_pool pool;
    std::unique_ptr<progress_engine> engine;
    std::unique_ptr<worker_pool> workers;
    // One per worker, when aggregation is on.
    std::vector<std::unique_ptr<batch_set>> batches;
    std::vector<worker_outbox> outboxes; // one per worker: its tls_outbox while it runs
    std::uint64_t aggregate_ticks = 0;   // --prema-aggregate-us in now_ticks() units
    // Dedicated progress thread on shared cores: it runs messages while every worker sleeps.
    bool progress_runs_handlers = false;
    // Handlers the layers above hold back from the workers (the balancer's policy queue): the
    // rank is not idle while any wait there. Kept here, not behind a call, because every
    // message the workers run reads it (only_work_here).
    std::atomic<std::int64_t> held_above{0};

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

    // Collective over `c`.
    transport_state(MPI_Comm c, config cf);

    // The largest payload that travels inline to `dest`; more goes split-phase. Never below
    // --prema-eager-bytes: a payload written into a message up to that size must fit inline.
    std::size_t eager_to(int dest) const noexcept {
        return peers.remote(dest) ? std::max(cfg.eager_bytes, cfg.remote_eager_bytes)
                                  : cfg.eager_bytes;
    }
    ~transport_state();
};

// The calling worker's batches, or nullptr off the pool or with aggregation off.
batch_set* my_batches(transport_state& st) noexcept;

// The running runtime's transport state; throws usage_error if no runtime runs.
transport_state& state();
transport_state* state_or_null() noexcept;
// The runtime's constructor and destructor: `st` runs (nullptr: none). False if one ran already.
bool set_state(transport_state* st, transport_state* expected) noexcept;

// The epoch of the running runtime on this rank (runtime_state::epoch); 0 without a runtime.
std::uint64_t current_epoch() noexcept;
// Upper layers' work at each new epoch: `f(epoch)` runs on a worker after this rank has decided
// a quiescence, while other work (released waiters, new messages) may run beside it. Register
// during static initialisation.
bool add_epoch_listener(void (*f)(std::uint64_t epoch));
// The listeners, for the runtime that runs them at each quiescence.
const std::vector<void (*)(std::uint64_t)>& epoch_listeners();

// Runs on a worker: decodes the message in `arg` and invokes its handler.
void dispatch_message(void* arg);

// Whether the message the calling thread runs is all the work this rank has: it runs on a
// worker and no other item is queued or running, or on the progress thread while no worker has
// any (dedicated progress on shared cores), and no object handler waits in the balancer
// (held_above). More user code may then run to its end right here without hiding work from
// the balancer.
bool only_work_here() noexcept;
// True on the progress thread while it runs a message itself (dedicated progress on shared
// cores, the runtime's run_on_progress_thread), for only_work_here.
extern thread_local constinit bool progress_thread_runs_message;

} // namespace prema::detail
