// worker_pool: the threads that run handlers on one rank.
//
// Each worker owns a lock-free queue (moodycamel) of system work: message dispatch and resumed
// coroutines. A worker pops its own queue first, then asks the application scheduler (object
// handlers, see src/lb), then steals from workers picked at random; with nothing to do it asks
// the idle hook (inline progress) and backs off. On cores of its own it spins (a pause between
// looks) for the spin time, so that work pushed meanwhile is handed over through memory, then
// sleeps on a futex until a push or wake_one() wakes it; on shared cores spinning would only
// delay the thread that brings the work, so it yields a few times and sleeps. `active()` counts
// items queued or running; quiescence detection reads it.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include <concurrentqueue.h>

#include "coro/parker.hpp"

namespace prema::detail {

// One unit of work: a coroutine to resume or a message to dispatch.
struct work_item {
    void (*fn)(void*);
    void* arg;
};

class worker_pool {
  public:
    // app_work(worker, item): the next application item, if any. May be empty.
    using app_source = std::function<bool(int worker, work_item& w)>;

    // Who may call the idle poll (the network). inline progress: idle workers always, and busy
    // ones in between items once the quantum has run out: they are the rank's only pollers.
    // dedicated: only while they spin, so that a message for an idle worker is received and run
    // by that worker, with no hand-off; the progress thread polls the rest of the time.
    enum class poll_when { always, while_spinning };

    // idle_poll: returns true if it found something to do. May be empty. spin_us: how long an
    // idle worker spins before it sleeps; 0 when the threads share cores (see core_sharing.hpp).
    worker_pool(int workers, std::uint64_t quantum_us, std::function<bool()> idle_poll,
                std::uint64_t spin_us = 0, poll_when when = poll_when::always);

    // Installs the application work source and its "anything there?" test. Before start().
    void set_app_source(app_source source, std::function<bool()> has_app_work) {
        app_source_ = std::move(source);
        has_app_work_ = std::move(has_app_work);
    }

    // Called on each worker after every item it ran and whenever it finds nothing to do,
    // before it polls or backs off. idle = true when it found nothing, and after the item that
    // left the pool with nothing queued or running (a reply then leaves before the worker
    // looks for more). Before start().
    using item_hook = void (*)(void* context, int worker, bool idle);
    void set_item_hook(item_hook hook, void* context) noexcept {
        item_hook_ = hook;
        item_hook_context_ = context;
    }

    // Called on each worker's thread when it starts running items (starting = true) and when
    // it stops, so that the runtime can set and clear its per-thread state. Before start().
    using thread_hook = void (*)(void* context, int worker, bool starting);
    void set_thread_hook(thread_hook hook, void* context) noexcept {
        thread_hook_ = hook;
        thread_hook_context_ = context;
    }

    // Wakes one sleeping worker, if any (application work became available). Any thread.
    void wake_one() noexcept;
    ~worker_pool();

    // Starts threads for workers [first, size()); the caller runs the others with run_worker().
    void start(int first);

    // Runs worker `index` on the calling thread until request_stop().
    void run_worker(int index);

    // Makes every worker loop return (any thread); stop() also joins the pool's threads.
    void request_stop() noexcept;
    void stop();

    // Queues an item: on the calling worker's own queue, else round robin. Any thread.
    void push(work_item w);

    // On a worker of this pool: runs `w` next on the calling worker, without a queue round trip
    // (a message its idle poll just received), unless it already holds one such item or items
    // wait in its queue: messages run in the order they arrived (a worker also polls between
    // items once its quantum is over, and a batch received then must not overtake the batches
    // before it, or the object layer holds every message behind the first one it sees early).
    // Anywhere else, and for the second item, the same as push().
    void push_here(work_item w);

    // Queues a coroutine that yielded: on the calling worker, behind its queued system work
    // (a moodycamel queue prefers its busiest producer, which would be the yielder itself).
    // Not stolen by other workers. Off the pool, the same as push().
    void push_yielded(work_item w);

    std::int64_t active() const noexcept {
        // The workers' own items first: one that ends has already counted what it pushed.
        std::int64_t here = 0;
        for (const auto& w : workers_)
            here += w->here_active.load(std::memory_order_acquire);
        return here + active_.load(std::memory_order_acquire);
    }
    // active() as worker `index` can see it without reading the other workers' counts of the
    // items their own polls gave them (a cache line each, written at every item): for choices
    // that only cost time when wrong (whether a reply may leave without waiting for a batch).
    std::int64_t active_near(int index) const noexcept {
        return active_near(*workers_[std::size_t(index)]);
    }

    std::uint64_t quantum_ticks() const noexcept { return quantum_ticks_; }
    int size() const noexcept { return int(workers_.size()); }

    // The pool and index of the calling thread, or nullptr / -1 off the pool.
    static worker_pool* current() noexcept;
    static int current_index() noexcept;

    // The rank's pool, where reschedule() and spawn() queue work from any thread (the progress
    // thread and the I/O reactor belong to no pool); nullptr while there is none. Its owner
    // (the runtime) sets it after constructing the pool; the pool's destructor clears it.
    static worker_pool* home() noexcept;
    static void set_home(worker_pool* pool) noexcept;

    // --prema-stats: ticks (detail::now_ticks) the workers spent running items, and finding
    // nothing to do, summed over the workers. Measured only while stats are on; call when the
    // workers are stopped.
    void time_totals(std::uint64_t& busy, std::uint64_t& idle) const noexcept;
    // Whether the workers measure those times (--prema-stats); set before start().
    void measure_times(bool on) noexcept { measure_times_ = on; }

  private:
    friend void poll_at_yield_point(std::uint64_t now);

    struct alignas(64) worker {
        moodycamel::ConcurrentQueue<work_item> queue;
        std::deque<work_item> yielded;    // owner thread only
        work_item here{nullptr, nullptr}; // owner thread only: push_here()
        // Items from push_here() queued or running: counted in active() by stores of their
        // owner, not locked adds to active_ (two locked instructions per message, about 7 ns
        // each on its path).
        std::atomic<std::int64_t> here_active{0};
        parker park;
        std::uint64_t busy_ticks = 0, idle_ticks = 0; // owner thread; --prema-stats only
        // Owner thread, inline progress: an item that starts after poll_due serves the network
        // first (see run). The maximum: the worker has polled while idle since it was set.
        std::uint64_t poll_due = std::numeric_limits<std::uint64_t>::max();
        // Owner thread, inline progress: the clock just before the idle poll that found the
        // next item, which starts its slice then (0: read the clock when it starts).
        std::uint64_t polled_at = 0;
    };

    // `here`: the item is the worker's push_here() item.
    bool pop(int index, work_item& w, bool& here);
    std::int64_t active_near(const worker& w) const noexcept {
        return w.here_active.load(std::memory_order_relaxed) +
               active_.load(std::memory_order_acquire);
    }
    // Inline progress, a busy worker: polls the network now, and next at now + busy_poll_us
    // (between items or at a yield point, whichever comes first).
    void serve_network(worker& self, std::uint64_t now);
    bool any_work() const noexcept;
    // True if `w` was the last item queued or running in the pool, as active_near() sees it.
    bool run(worker& self, const work_item& w, bool here, bool stats);
    void wake_for(int target);

    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<std::thread> threads_;
    std::function<bool()> idle_poll_;
    app_source app_source_;
    std::function<bool()> has_app_work_;
    item_hook item_hook_ = nullptr;
    void* item_hook_context_ = nullptr;
    thread_hook thread_hook_ = nullptr;
    void* thread_hook_context_ = nullptr;
    bool measure_times_ = false;
    std::uint64_t quantum_ticks_;
    std::uint64_t busy_poll_ticks_; // inline: see busy_poll_us
    std::uint64_t spin_ticks_;      // an idle worker spins this long before it parks; 0: it yields
    bool poll_always_;              // poll_when::always
    std::atomic<std::int64_t> active_{0};
    std::atomic<std::uint32_t> next_{0};
    std::atomic<bool> stopping_{false};
};

// Ticks of detail::now_ticks() per microsecond, measured once.
double ticks_per_us();

// One round of a spin-wait: tells the core that this thread waits (a pause instruction), which
// frees its execution resources for the sibling hyperthread and saves power.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

} // namespace prema::detail
