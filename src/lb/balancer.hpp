// balancer: the runtime's side of implicit load balancing on one rank. It owns the policy,
// counts the work waiting in it (for quiescence), keeps the work map, carries policy messages
// and calls dist_balance() periodically.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "coro/worker_pool.hpp"
#include "lb/demand.hpp"
#include "lb/work_index.hpp"
#include "objects/pending_handler.hpp"
#include "prema/config.hpp"
#include "prema/lb/scheduler.hpp"

namespace prema::detail {

class balancer final : public lb::context {
  public:
    balancer(const config& cfg, worker_pool& workers);
    ~balancer();

    // Object layer -> policy.
    void ready(pending_handler* h);
    void withdrawn(std::size_t n) noexcept { pending_.fetch_sub(std::int64_t(n)); }
    void notify(const lb::object_load& l);
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

    // Workers: the next application item.
    bool next(int worker, work_item& w);
    bool has_work() const noexcept { return queued_.load(std::memory_order_acquire) > 0; }
    std::int64_t pending() const noexcept { return pending_.load(std::memory_order_acquire); }

    // MPI thread: periodic balancing and policy messages.
    void tick();
    void deliver(int from, std::span<const std::byte> bytes);

    lb::scheduler& policy() noexcept { return *policy_; }
    void set_enabled(bool on) noexcept {
        enabled_.store(on);
        if (on)
            was_on_.store(true);
    }
    // Whether a policy may move objects now: it must then see every pending handler.
    bool balancing() const noexcept {
        return balances_ && enabled_.load(std::memory_order_relaxed);
    }
    // Thread that called run(): a phase ended. Balancing still on counts as having balanced.
    void phase_over() noexcept {
        if (enabled_.load())
            was_on_.store(true);
    }
    // Runtime destructor: rank 0 warns once if enable_balancing(false) held a named policy off
    // for good (a placement phase whose end was forgotten).
    void warn_if_held_off() const;

    // lb::context
    void send(int rank, std::span<const std::byte> bytes) override;
    bool migrate(object_id object, int rank) override;
    std::vector<lb::object_load> work_map() const override;
    std::vector<lb::object_load> heaviest(std::size_t k, double at_most) const override;
    std::size_t work_objects() const override;
    double local_load() const override;
    int running() const override { return int(running_.load()); }
    // Loads added as handlers start and taken away as they end, in another order: measured
    // seconds are not exact in binary, so the sum drifts by rounding and may dip below 0 when
    // nothing runs. Policies check that loads are not negative.
    double running_load() const override { return std::max(0.0, running_load_.load()); }
    int rank() const override;
    int ranks() const override;
    int workers() const override;
    const config& options() const override { return cfg_; }
    void note_answer_wait(double seconds) override;
    void asked(int rank, int want) override { demand_.asked(rank, want, demand::clock::now()); }
    void fed(int rank) override { demand_.fed(rank); }

    // Application: ranks waiting for work from this one (prema::lb::demand), and where a new
    // task should go (prema::spawn_anywhere): a waiting rank, charged with it, or this rank.
    int waiting_ranks() { return demand_.waiting(demand::clock::now()); }
    int task_rank();

    lb::stats counters;
    std::mutex counters_mutex;

  private:
    const config& cfg_;
    worker_pool& workers_;
    std::unique_ptr<lb::scheduler> policy_;
    std::atomic<std::int64_t> pending_{0};
    // Handed to the policy and not popped yet, withdrawn ones included (pending_ is not).
    std::atomic<std::int64_t> queued_{0};
    std::atomic<std::int64_t> running_{0};
    std::atomic<double> running_load_{0};
    // On from the start when a policy is named; enable_balancing(false) is the opt-out.
    std::atomic<bool> enabled_{true};
    const bool balances_; // a policy other than none: tick() has something to do
    // Balancing was on at the end of a phase or turned on by enable_balancing(true).
    std::atomic<bool> was_on_{false};
    std::chrono::steady_clock::duration period_;
    std::chrono::steady_clock::time_point next_tick_{};
    // Handlers ended, and how many tick() had seen end: a rank ran dry when one ended since and
    // none is queued and a worker is free. Counted, not sampled: a handler that the progress
    // thread runs itself starts and ends between two ticks.
    std::atomic<std::uint64_t> ended_{0};
    std::uint64_t ended_seen_ = 0; // tick() only
    std::chrono::steady_clock::time_point next_dry_tick_{};
    demand demand_;

    mutable std::mutex map_mutex_;
    work_index loads_; // kept only when balances_: nothing else reads it
};

// Throws usage_error naming the known policies if `name` is not one.
void check_policy(const std::string& name);

// The balancer of the running runtime (throws usage_error if none runs).
balancer& current_balancer();

// The transport handler id of policy messages.
std::uint64_t policy_message_id() noexcept;

} // namespace prema::detail
