/// @file
/// prema::lb::scheduler: the pluggable two-level scheduler of implicit load balancing.
///
/// Inside a rank, object handlers that are safe to run (in order, no access conflict) are
/// push()ed to the scheduler and workers pop() them. Between ranks, the policy moves objects
/// whose handlers have not started: the load of an object is the load of its pending handlers,
/// and migrate() takes them along. The runtime withdraws pushed handlers of an object that
/// migrates; pop() never sees them again, so a policy never reasons about correctness.
///
/// Threads: push/pop/notify run on worker threads (concurrently); dist_balance and receive
/// run on the thread that drives MPI (the progress thread, or an idle worker in inline mode),
/// so policy messages are served while long handlers run. receive/dist_balance must not block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "prema/config.hpp"
#include "prema/objects/mobile_ptr.hpp"
#include "prema/objects/ready_work.hpp"

namespace prema::lb {

/// What a policy can see and do on its rank. The runtime provides one; tests can provide a
/// fake cluster of ranks inside one process.
class context {
  public:
    virtual ~context() = default;
    /// Delivers `bytes` to the same policy on `rank` (scheduler::send_to).
    virtual void send(int rank, std::span<const std::byte> bytes) = 0;
    /// Moves a local object with its pending handlers (scheduler::migrate).
    virtual bool migrate(object_id object, int rank) = 0;
    /// This rank's objects with pending work, heaviest first (scheduler::work_map).
    virtual std::vector<object_load> work_map() const = 0;
    /// Summed load of this rank's pending handlers.
    virtual double local_load() const = 0;
    /// The first k entries of work_map() whose load is at most `at_most`. The runtime answers
    /// from an index kept in load order, in O(k + log n): a policy that moves a few objects
    /// never pays for all of them. The default, for contexts without such an index (tests'
    /// fakes), goes through work_map().
    virtual std::vector<object_load> heaviest(std::size_t k, double at_most) const {
        std::vector<object_load> out;
        for (auto& l : work_map())
            if (out.size() < k && l.load <= at_most)
                out.push_back(l);
        return out;
    }
    /// How many entries work_map() has (O(1) in the runtime).
    virtual std::size_t work_objects() const { return work_map().size(); }
    /// How many handlers run on this rank now.
    virtual int running() const = 0;
    /// Summed load of the running handlers (their weight when they started).
    virtual double running_load() const { return running(); }
    /// This rank.
    virtual int rank() const = 0;
    /// Number of ranks.
    virtual int ranks() const = 0;
    /// Worker threads of this rank (--prema-workers).
    virtual int workers() const = 0;
    /// The runtime options, for the policy's thresholds (--prema-lb-*).
    virtual const config& options() const = 0;
    /// Records a wait for a policy reply (lb::stats::max_answer_wait_s).
    virtual void note_answer_wait(double seconds) = 0;
    /// `rank` asked for `want` objects and this rank gave none (scheduler::note_demand).
    virtual void asked(int /*rank*/, int /*want*/) {}
    /// `rank` got work from this rank or withdrew its ask (scheduler::note_fed).
    virtual void fed(int /*rank*/) {}
};

/// The base of every load-balancing policy: derive from it, override what the policy decides,
/// and register it with register_policy(). The defaults queue ready handlers in one FIFO and
/// never balance.
class scheduler {
  public:
    virtual ~scheduler() = default;

    /// Called by the runtime (or a test) before anything else.
    void attach(context& c) noexcept { ctx_ = &c; }

    // --- inside a rank ---------------------------------------------------------------------
    /// A handler of this rank became safe to run; `worker` is the thread that found it.
    /// Default: one FIFO shared by the rank's workers.
    virtual void push(int worker, ready_handler* h);
    /// The next handler `worker` should run, or nullptr if none. Default: the FIFO's front.
    virtual ready_handler* pop(int worker);

    /// An object's pending load changed (it may be zero now). Any thread.
    virtual void notify(const object_load&) {}

    // --- between ranks ---------------------------------------------------------------------
    /// Called periodically (--prema-lb-period-us) while balancing is enabled.
    virtual void dist_balance() {}

    /// A message sent by this policy's instance on rank `from` with send_to().
    virtual void receive(int /*from*/, std::span<const std::byte> /*message*/) {}

  protected:
    /// Sends `bytes` to this policy on `rank`. Policy traffic has priority over application
    /// work and does not count as work for quiescence.
    void send_to(int rank, std::span<const std::byte> bytes) { ctx_->send(rank, bytes); }
    /// Sends a trivially copyable message `m` as its bytes; decode<M>() reads it back.
    template <class M> void send_to(int rank, const M& m) {
        static_assert(std::is_trivially_copyable_v<M>);
        send_to(rank, std::as_bytes(std::span(&m, 1)));
    }
    /// The M that send_to(rank, m) sent; bytes missing from a shorter message read as zero.
    template <class M> static M decode(std::span<const std::byte> bytes) {
        static_assert(std::is_trivially_copyable_v<M>);
        M m{};
        std::memcpy(&m, bytes.data(), std::min(bytes.size(), sizeof m));
        return m;
    }

    /// Moves a local object with no started handler to `rank`, with its pending handlers.
    /// Returns false (and moves nothing) if it is running, gone, or has no pending work.
    bool migrate(object_id object, int rank) { return ctx_->migrate(object, rank); }

    /// PREMA's mo_work_map: this rank's objects with pending work, heaviest first. O(n): a
    /// policy that needs only some of them asks heaviest() and work_objects().
    std::vector<object_load> work_map() const { return ctx_->work_map(); }
    /// The k heaviest entries of work_map() whose load is at most `at_most`, in O(k + log n).
    std::vector<object_load>
    heaviest(std::size_t k, double at_most = std::numeric_limits<double>::infinity()) const {
        return ctx_->heaviest(k, at_most);
    }
    /// How many objects have pending work here, in O(1).
    std::size_t work_objects() const { return ctx_->work_objects(); }
    /// Pending load of this rank (not started handlers).
    double local_load() const { return ctx_->local_load(); }
    /// How many handlers run on this rank now.
    int running() const { return ctx_->running(); }
    /// Summed load of the running handlers (their weight when they started).
    double running_load() const { return ctx_->running_load(); }

    /// This rank.
    int rank() const { return ctx_->rank(); }
    /// Number of ranks.
    int ranks() const { return ctx_->ranks(); }
    /// Worker threads of this rank (--prema-workers).
    int workers() const { return ctx_->workers(); }
    /// Thresholds and neighbourhood sizes (--prema-lb-*).
    const config& options() const { return ctx_->options(); }

    /// Records how long this rank waited for a reply to a request (shown in lb::stats).
    void note_answer_wait(double seconds) { ctx_->note_answer_wait(seconds); }

    /// Tells the runtime that `rank` asked for `want` objects and this rank had none to give:
    /// prema::lb::demand() then counts it, and prema::spawn_anywhere places new tasks there.
    /// A policy that refuses work should say so; the ask lapses after 8 balancing periods
    /// without a new one.
    void note_demand(int rank, int want) { ctx_->asked(rank, want); }
    /// Tells the runtime that `rank` got work from this rank, or no longer asks.
    void note_fed(int rank) { ctx_->fed(rank); }

  private:
    context* ctx_ = nullptr;
    std::mutex fifo_mutex_;
    std::deque<ready_handler*> fifo_;
};

/// Makes a fresh instance of a policy (one per rank and runtime).
using policy_factory = std::function<std::unique_ptr<scheduler>()>;
/// Registers a policy under `name`, for --prema-lb. Register user policies before the runtime
/// starts.
void register_policy(const std::string& name, policy_factory make);
/// The names --prema-lb accepts: the shipped policies and the registered ones.
std::vector<std::string> policy_names();

/// Turns balancing between ranks on or off on this rank (call it on every rank). On from the
/// start when --prema-lb names a policy; enable_balancing(false) holds it off while objects are
/// created and placed, enable_balancing(true) lets it go. The state carries over from one
/// runtime::run to the next. Left off to the end without ever having been on at the end of a
/// phase, it makes rank 0 warn at shutdown that the policy never balanced.
void enable_balancing(bool on);

/// Counters of this rank since the runtime started.
struct stats {
    /// Objects shipped to and installed from other ranks, whatever moved them (a policy,
    /// prema::migrate, an acquire or multicast); summed over the ranks, out = in at quiescence.
    std::uint64_t migrations_out = 0;
    std::uint64_t migrations_in = 0; ///< objects installed from other ranks
    std::uint64_t messages = 0;      ///< policy messages sent
    double max_answer_wait_s = 0;    ///< longest wait of this rank's policy for a reply
    /// Tasks prema::spawn_anywhere sent to a rank that had asked this one for work.
    std::uint64_t tasks_placed = 0;
    /// Balancing ticks run at once because this rank ran dry, ahead of the period.
    std::uint64_t dry_ticks = 0;
};
/// This rank's counters now.
stats current_stats();

/// How many other ranks asked this rank for work it could not give and still wait (their asks
/// lapse after 8 balancing periods without a new one, or once they got work from here). An
/// application that splits its work on demand (a bag of tree nodes, a range of iterations)
/// splits finer while this is above 0 and keeps its pieces coarse otherwise. 0 without a policy
/// or with one that does not report refusals (work_stealing and lifeline do). Cheap: an atomic
/// load while nobody waits. Any thread of a running runtime.
int demand();

} // namespace prema::lb
