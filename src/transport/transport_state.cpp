// The transport's state on this rank, the functions that find it, and what every layer above
// reads of it (this rank, the epoch, errors of the phase).
#include "transport/transport_state.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "prema/error.hpp"
#include "prema/quiescence.hpp"
#include "prema/transport/rank.hpp"

namespace prema::detail {

namespace {
std::atomic<transport_state*> g_state{nullptr};

// report_error's hook: a failure counts against this phase, while a runtime runs.
void count_error() noexcept {
    if (auto* st = g_state.load(std::memory_order_acquire))
        st->errors.fetch_add(1, std::memory_order_relaxed);
}

std::vector<void (*)(std::uint64_t)>& listeners() {
    static std::vector<void (*)(std::uint64_t)> all;
    return all;
}

// A communicator of PREMA's own over the ranks of `c`, so that no message of the application's
// matches a receive of PREMA's. Not MPI_Comm_dup: Open MPI agrees on the new context with an
// allreduce over `c`, whose recursive doubling reaches log2 P partners, and a rank holds pages
// of each partner's shared-memory segment from then on (a lone MPI_Comm_dup after MPI_Init:
// 304 KB on rank 0 of 256 ranks, 40 KB of 8, 2026-11-29); MPI_Comm_create_group agrees along
// a binary tree (three peers). Nothing of `c` but its group is needed: no attributes, no
// topology.
MPI_Comm own_copy(MPI_Comm c) {
    MPI_Group group;
    MPI_Comm_group(c, &group);
    MPI_Comm copy = MPI_COMM_NULL;
    MPI_Comm_create_group(c, group, 0, &copy);
    MPI_Group_free(&group);
    return copy;
}
} // namespace

thread_local constinit bool progress_thread_runs_message = false;

transport_state::transport_state(MPI_Comm c, config cf)
    : cfg(std::move(cf)), comm(own_copy(c)), node(comm), peers(comm, node),
      pool(peers.any_remote() ? std::max(cfg.eager_bytes, cfg.remote_eager_bytes) : cfg.eager_bytes,
           cfg.pool_messages, cfg.pool_messages * (sizeof(wire_header) + cfg.eager_bytes)) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    set_error_hook(&count_error);
}

transport_state::~transport_state() = default;

bool set_state(transport_state* st, transport_state* expected) noexcept {
    return g_state.compare_exchange_strong(expected, st);
}

transport_state* state_or_null() noexcept {
    return g_state.load(std::memory_order_acquire);
}

transport_state& state() {
    auto* st = state_or_null();
    if (!st)
        throw usage_error("no PREMA runtime is running in this process");
    return *st;
}

std::uint64_t current_epoch() noexcept {
    auto* st = state_or_null();
    return st ? st->epoch.load(std::memory_order_acquire) : 0;
}

bool add_epoch_listener(void (*f)(std::uint64_t)) {
    listeners().push_back(f);
    return true;
}

const std::vector<void (*)(std::uint64_t)>& epoch_listeners() {
    return listeners();
}

void add_quiescence_waiter(std::coroutine_handle<> h) {
    auto& st = state();
    // Quiescence waits for what the waiter sent: its worker's batches leave now, not when the
    // items queued behind it are done (heat2d's entry, which starts every segment with a message
    // to each block, kept rank 1's blocks waiting behind rank 0's steps: 0.6 ms a segment).
    if (batch_set* b = my_batches(st))
        b->flush_all();
    std::lock_guard lock(st.waiters_mutex);
    st.waiters.push_back(h);
}

bool only_work_here() noexcept {
    auto& st = state();
    if (st.held_above.load(std::memory_order_acquire) > 0)
        return false;
    if (worker_pool::current() == st.workers.get()) // the item running is the caller's
        return st.workers->active_near(worker_pool::current_index()) <= 1;
    return progress_thread_runs_message && st.workers->active() == 0;
}

} // namespace prema::detail

namespace prema {

int rank() noexcept {
    auto* st = detail::state_or_null();
    return st ? st->rank : -1;
}

int ranks() noexcept {
    auto* st = detail::state_or_null();
    return st ? st->size : 0;
}

const config& current_config() {
    return detail::state().cfg;
}

} // namespace prema
