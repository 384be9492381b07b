// balancer_link: the object layer's line up to the load balancer (src/lb, a layer above it).
// The object layer reports here what its handlers do (ready, started, finished, withdrawn when
// their object moves); the balancer derives from it and, when it is made, fills in the two
// calls that need the policy. The counts stay inline, as they were in the balancer: the
// started/finished pair runs for every object handler.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "prema/objects/ready_work.hpp"

namespace prema::detail {

struct pending_handler;

class balancer_link {
  public:
    // A handler may run: the policy takes it (the balancer's ready()).
    void ready(pending_handler* h) { ready_(*this, h); }
    // An object's pending load changed (for the policy's work map).
    void notify(const lb::object_load& l) { notify_(*this, l); }
    // Handed handlers of an object that moved: they no longer count as pending.
    void withdrawn(std::size_t n) noexcept { pending_.fetch_sub(std::int64_t(n)); }
    // A handler started without the policy's queue (the object layer's direct path). Only
    // policies read the running counts, so without one nothing pays for them (five atomic
    // read-modify-writes per handler, one a compare-and-swap loop on a double).
    void started(double load) noexcept {
        if (!balances_)
            return;
        running_.fetch_add(1);
        running_load_.fetch_add(load);
    }
    void finished(double load) noexcept {
        if (!balances_)
            return;
        running_.fetch_sub(1);
        running_load_.fetch_sub(load);
        ended_.fetch_add(1, std::memory_order_release);
    }
    // Whether a policy may move objects now: it must then see every pending handler.
    bool balancing() const noexcept {
        return balances_ && enabled_.load(std::memory_order_relaxed);
    }
    std::int64_t pending() const noexcept { return pending_.load(std::memory_order_acquire); }
    // An object left this rank (`out`) or arrived, for lb::current_stats().
    void count_migration(bool out) noexcept {
        (out ? migrations_out_ : migrations_in_).fetch_add(1, std::memory_order_relaxed);
    }
    std::uint64_t migrations_out() const noexcept { return migrations_out_.load(); }
    std::uint64_t migrations_in() const noexcept { return migrations_in_.load(); }

  protected:
    using ready_fn = void (*)(balancer_link&, pending_handler*);
    using notify_fn = void (*)(balancer_link&, const lb::object_load&);
    // `pending`: the count of handled-over handlers the transport reads (held_above); `on`: a
    // policy other than none balances.
    balancer_link(bool on, std::atomic<std::int64_t>& pending, ready_fn ready,
                  notify_fn notify) noexcept;
    ~balancer_link();

    std::atomic<std::int64_t>& pending_;
    std::atomic<std::int64_t> running_{0};
    std::atomic<double> running_load_{0};
    // On from the start when a policy is named; enable_balancing(false) is the opt-out.
    std::atomic<bool> enabled_{true};
    const bool balances_; // a policy other than none: tick() has something to do
    // Handlers ended. Counted, not sampled: a handler that the progress thread runs itself
    // starts and ends between two ticks (the balancer's tick() tells a rank that ran dry).
    std::atomic<std::uint64_t> ended_{0};
    std::atomic<std::uint64_t> migrations_out_{0}, migrations_in_{0};

  private:
    ready_fn ready_;
    notify_fn notify_;
};

// The running runtime's balancer, as the object layer sees it (throws usage_error if none).
balancer_link& current_balancer();

// Whether a received message may run at once on the worker that holds it rather than queue:
// it and the rest of its batch (`more_in_batch`) are all the work the rank has
// (only_work_here), or no other worker could run it sooner and no policy needs to see it
// pending (the rank has one worker and balancing is off).
bool may_run_here(bool more_in_batch) noexcept;

} // namespace prema::detail
