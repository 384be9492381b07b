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
#include "objects/balancer_link.hpp"
#include "objects/pending_handler.hpp"
#include "prema/config.hpp"
#include "prema/lb/scheduler.hpp"

namespace prema::detail {

// The object layer reports to it through balancer_link, which it derives from (the counts
// of pending and running handlers live there).
class balancer final : public lb::context, public balancer_link {
  public:
    // `pending`: the transport's count of handlers held above it (transport_state::held_above).
    balancer(const config& cfg, worker_pool& workers, std::atomic<std::int64_t>& pending);
    ~balancer();

    // Object layer -> policy (through balancer_link).
    void ready(pending_handler* h);
    void notify(const lb::object_load& l);

    // Workers: the next application item.
    bool next(int worker, work_item& w);
    bool has_work() const noexcept { return queued_.load(std::memory_order_acquire) > 0; }

    // MPI thread: periodic balancing and policy messages.
    void tick();
    void deliver(int from, std::span<const std::byte> bytes);

    lb::scheduler& policy() noexcept { return *policy_; }
    void set_enabled(bool on) noexcept {
        enabled_.store(on);
        if (on)
            was_on_.store(true);
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
    // Handed to the policy and not popped yet, withdrawn ones included (pending_ is not).
    std::atomic<std::int64_t> queued_{0};
    // Balancing was on at the end of a phase or turned on by enable_balancing(true).
    std::atomic<bool> was_on_{false};
    std::chrono::steady_clock::duration period_;
    std::chrono::steady_clock::time_point next_tick_{};
    // How many handlers tick() had seen end (balancer_link::ended_): a rank ran dry when one
    // ended since and none is queued and a worker is free.
    std::uint64_t ended_seen_ = 0; // tick() only
    std::chrono::steady_clock::time_point next_dry_tick_{};
    demand demand_;

    mutable std::mutex map_mutex_;
    work_index loads_; // kept only when balances_: nothing else reads it
};

// Throws usage_error naming the known policies if `name` is not one.
void check_policy(const std::string& name);

// The balancer of the running runtime (throws usage_error if none runs).
balancer& running_balancer();

// The transport handler id of policy messages.
std::uint64_t policy_message_id() noexcept;

} // namespace prema::detail
