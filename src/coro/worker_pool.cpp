#include "coro/worker_pool.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <sched.h>
#include <utility>

#include "coro/busy_poll.hpp"
#include "prema/coro/yield.hpp"

namespace prema::detail {

namespace {
thread_local worker_pool* tls_pool = nullptr;
thread_local int tls_index = -1;
constinit std::atomic<worker_pool*> g_home{nullptr}; // see home()

std::uint32_t next_random() {
    thread_local std::uint32_t x =
        0x9e3779b9u ^ std::uint32_t(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

// Without spinning (shared cores) an idle worker yields this many rounds, in case the thread that
// brings its work is about to run, then parks.
constexpr int shared_core_yield_rounds = 8;
// A parked worker's timeout. Inline, the idle workers are their rank's pollers of MPI, which
// cannot wake them: a message that arrives meanwhile waits out the park.
constexpr std::chrono::microseconds idle_sleep_inline{50};
constexpr std::chrono::milliseconds idle_sleep_dedicated{5};
} // namespace

double ticks_per_us() {
    static const double value = [] {
        using clock = std::chrono::steady_clock;
        auto t0 = clock::now();
        auto k0 = now_ticks();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        auto k1 = now_ticks();
        auto t1 = clock::now();
        double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
        return double(k1 - k0) / us;
    }();
    return value;
}

worker_pool::worker_pool(int workers, std::uint64_t quantum_us, std::function<bool()> idle_poll,
                         std::uint64_t spin_us, poll_when when)
    : idle_poll_(std::move(idle_poll)),
      quantum_ticks_(quantum_us == 0 ? 0 : std::uint64_t(double(quantum_us) * ticks_per_us())),
      busy_poll_ticks_(std::min(quantum_ticks_, std::uint64_t(busy_poll_us * ticks_per_us()))),
      spin_ticks_(std::uint64_t(double(spin_us) * ticks_per_us())),
      poll_always_(when == poll_when::always) {
    for (int i = 0; i < workers; ++i)
        workers_.push_back(std::make_unique<worker>());
}

worker_pool::~worker_pool() {
    stop();
    worker_pool* self = this;
    g_home.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

void worker_pool::start(int first) {
    stopping_.store(false, std::memory_order_release);
    for (int i = first; i < size(); ++i)
        threads_.emplace_back([this, i] { run_worker(i); });
}

void worker_pool::request_stop() noexcept {
    stopping_.store(true, std::memory_order_release);
    for (auto& w : workers_)
        w->park.unpark();
}

void worker_pool::stop() {
    request_stop();
    for (auto& t : threads_)
        t.join();
    threads_.clear();
}

worker_pool* worker_pool::current() noexcept {
    return tls_pool;
}
int worker_pool::current_index() noexcept {
    return tls_index;
}

worker_pool* worker_pool::home() noexcept {
    return g_home.load(std::memory_order_acquire);
}
void worker_pool::set_home(worker_pool* pool) noexcept {
    g_home.store(pool, std::memory_order_release);
}

// Only run() sets poll_deadline, so the calling thread is a worker of tls_pool inside an item.
void poll_at_yield_point(std::uint64_t now) {
    tls_pool->serve_network(*tls_pool->workers_[std::size_t(tls_index)], now);
}

void worker_pool::serve_network(worker& self, std::uint64_t now) {
    self.poll_due = now + busy_poll_ticks_;
    poll_deadline = self.poll_due; // before the poll: a yield point inside it does not poll again
    idle_poll_();
}

void worker_pool::push(work_item w) {
    active_.fetch_add(1, std::memory_order_relaxed);
    int target = tls_pool == this ? tls_index : int(next_.fetch_add(1) % workers_.size());
    workers_[target]->queue.enqueue(w);
    wake_for(target);
}

void worker_pool::push_here(work_item w) {
    if (tls_pool != this || workers_[tls_index]->here.fn ||
        workers_[tls_index]->queue.size_approx() > 0)
        return push(w);
    auto& self = *workers_[tls_index];
    // Its owner is the only writer: a load and a store, no locked add. An item running may have
    // come from `here` too, so this counts, not flags.
    self.here_active.store(self.here_active.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
    self.here = w;
}

void worker_pool::push_yielded(work_item w) {
    if (tls_pool != this)
        return push(w);
    active_.fetch_add(1, std::memory_order_relaxed);
    workers_[tls_index]->yielded.push_back(w);
}

void worker_pool::wake_for(int target) {
    // Orders the enqueue before the sleeping() loads below (the waker's half of the parker
    // protocol). Without it the store can sit in the store buffer while we read a stale
    // "awake", the worker parks without seeing the item, and it waits out its timeout.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // The target may be busy; any sleeping worker can steal the item instead.
    if (workers_[target]->park.sleeping()) {
        workers_[target]->park.unpark();
        return;
    }
    for (auto& w : workers_) {
        if (w->park.sleeping()) {
            w->park.unpark();
            return;
        }
    }
}

void worker_pool::wake_one() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (auto& w : workers_) {
        if (w->park.sleeping()) {
            w->park.unpark();
            return;
        }
    }
}

bool worker_pool::pop(int index, work_item& w, bool& here) {
    auto& self = *workers_[index];
    here = self.here.fn != nullptr;
    if (here) {
        w = std::exchange(self.here, work_item{nullptr, nullptr});
        return true;
    }
    if (self.queue.try_dequeue(w))
        return true;
    if (!self.yielded.empty()) {
        w = self.yielded.front();
        self.yielded.pop_front();
        return true;
    }
    if (app_source_ && (!has_app_work_ || has_app_work_())) {
        // Counted before the source gives the item up, so quiescence never sees it nowhere.
        active_.fetch_add(1, std::memory_order_acq_rel);
        if (app_source_(index, w))
            return true;
        active_.fetch_sub(1, std::memory_order_acq_rel);
    }
    int n = size();
    if (n == 1)
        return false;
    int start = int(next_random() % std::uint32_t(n));
    for (int k = 0; k < n; ++k) {
        int victim = (start + k) % n;
        if (victim != index && workers_[victim]->queue.try_dequeue(w))
            return true;
    }
    return false;
}

void worker_pool::time_totals(std::uint64_t& busy, std::uint64_t& idle) const noexcept {
    busy = idle = 0;
    for (auto& w : workers_) {
        busy += w->busy_ticks;
        idle += w->idle_ticks;
    }
}

bool worker_pool::any_work() const noexcept {
    if (has_app_work_ && has_app_work_())
        return true;
    for (auto& w : workers_)
        if (w->queue.size_approx() > 0)
            return true;
    return false;
}

// Runs `w`, adding its time to self.busy_ticks if `stats` (--prema-stats).
bool worker_pool::run(worker& self, const work_item& w, bool here, bool stats) {
    std::uint64_t start = std::exchange(self.polled_at, 0);
    if (!start && (quantum_ticks_ || stats))
        start = now_ticks();
    slice_deadline =
        quantum_ticks_ ? start + quantum_ticks_ : std::numeric_limits<std::uint64_t>::max();
    // Inline progress: a worker that has been busy for busy_poll_us without polling serves the
    // network before it goes on, however short its items: policy messages (steal requests) are
    // answered between items, not a quantum later, and a handler that yields until a message
    // comes gets it. Looked at here, where the clock is read anyway.
    // Inside the item, its yield points take over (poll_at_yield_point).
    if (idle_poll_ && poll_always_ && quantum_ticks_) {
        if (self.poll_due == std::numeric_limits<std::uint64_t>::max()) { // polled since
            self.poll_due = start + busy_poll_ticks_;
        } else if (start >= self.poll_due) {
            serve_network(self, start);
        }
        poll_deadline = self.poll_due;
    }
    w.fn(w.arg);
    if (stats)
        self.busy_ticks += now_ticks() - start;
    slice_deadline = std::numeric_limits<std::uint64_t>::max();
    poll_deadline = std::numeric_limits<std::uint64_t>::max();
    if (here)
        self.here_active.store(self.here_active.load(std::memory_order_relaxed) - 1,
                               std::memory_order_release);
    else
        active_.fetch_sub(1, std::memory_order_release);
    return active_near(self) == 0 && (!app_source_ || (has_app_work_ && !has_app_work_()));
}

void worker_pool::run_worker(int index) {
    tls_pool = this;
    tls_index = index;
    if (thread_hook_)
        thread_hook_(thread_hook_context_, index, true);
    auto& self = *workers_[index];
    int idle_rounds = 0;
    std::uint64_t idle_since = 0;      // when the current idle stretch began, if spinning
    const bool stats = measure_times_; // fixed while the workers run
    std::uint64_t round_start = 0;
    while (!stopping_.load(std::memory_order_acquire)) {
        work_item w;
        bool here = false;
        if (stats)
            round_start = now_ticks();
        if (pop(index, w, here)) {
            // Finding the item was overhead, not busy time (nor idle: there was work).
            bool pool_idle = run(self, w, here, stats);
            if (item_hook_)
                item_hook_(item_hook_context_, index, pool_idle);
            idle_rounds = 0;
            continue;
        }
        if (item_hook_)
            item_hook_(item_hook_context_, index, true);
        // One clock reading per idle round while spinning: the spin's end, and the start of the
        // slice of what the poll finds (see below).
        const std::uint64_t now = spin_ticks_ ? now_ticks() : 0;
        if (idle_rounds++ == 0)
            idle_since = now;
        const bool spinning = spin_ticks_ && now - idle_since < spin_ticks_;
        if (idle_poll_ && (poll_always_ || spinning)) {
            self.poll_due = std::numeric_limits<std::uint64_t>::max();
            // The slice of what the poll finds starts now: reading the clock costs about 9 ns,
            // spent here while waiting for a message instead of on the message's way to its
            // handler. The item starts one poll later (more if the poll ran urgent handlers or
            // periodic work), so its quantum may end that much early, never late.
            std::uint64_t before = quantum_ticks_ && !stats ? (now ? now : now_ticks()) : 0;
            if (idle_poll_()) {
                self.polled_at = before;
                idle_rounds = 0;
                continue;
            }
        }
        if (spinning) {
            cpu_relax();
        } else if (!spin_ticks_ && idle_rounds < shared_core_yield_rounds) {
            sched_yield();
        } else {
            auto timeout = poll_always_ && idle_poll_
                               ? std::chrono::nanoseconds(idle_sleep_inline)
                               : std::chrono::nanoseconds(idle_sleep_dedicated);
            self.park.park(timeout, [this] {
                return any_work() || stopping_.load(std::memory_order_acquire);
            });
        }
        if (stats)
            self.idle_ticks += now_ticks() - round_start;
    }
    if (thread_hook_)
        thread_hook_(thread_hook_context_, index, false);
    tls_pool = nullptr;
    tls_index = -1;
}

} // namespace prema::detail
