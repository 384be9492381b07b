#include "lb/balancer.hpp"
#include "lb/policies.hpp"

#include <limits>
#include <map>

#include <fmt/format.h>

#include "base/log.hpp"
#include "objects/traced.hpp"
#include "prema/error.hpp"
#include "prema/lb/spawn_anywhere.hpp"
#include "prema/transport/rank.hpp"

namespace prema::detail {

namespace {

std::map<std::string, lb::policy_factory>& policies() {
    static std::map<std::string, lb::policy_factory> p = builtin_policies();
    return p;
}

void on_policy_message(const incoming& in) {
    if (tracing())
        note_lb("lb_receive", fmt::format(R"("peer":{},"bytes":{})", in.source, in.payload.size()));
    running_balancer().deliver(in.source, in.payload);
}

const std::uint64_t policy_id = register_handler("prema::lb_message", &on_policy_message);

} // namespace

std::uint64_t policy_message_id() noexcept {
    return policy_id;
}

balancer& running_balancer() {
    return static_cast<balancer&>(current_balancer());
}

int task_rank() {
    return running_balancer().task_rank();
}

void check_policy(const std::string& name) {
    if (policies().count(name))
        return;
    std::string names;
    for (auto& [known, make] : policies())
        names += (names.empty() ? "" : ", ") + known;
    throw usage_error(fmt::format("--prema-lb={}: no such policy (known: {})", name, names));
}

balancer::balancer(const config& cfg, worker_pool& workers, std::atomic<std::int64_t>& pending)
    : balancer_link(
          cfg.lb != "none", pending,
          [](balancer_link& b, pending_handler* h) { static_cast<balancer&>(b).ready(h); },
          [](balancer_link& b, const lb::object_load& l) { static_cast<balancer&>(b).notify(l); }),
      cfg_(cfg), workers_(workers), policy_(policies().at(cfg.lb)()),
      period_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::microseconds(cfg.lb_period_us))),
      demand_(8 * period_) {
    policy_->attach(*this);
}

balancer::~balancer() = default;

void balancer::ready(pending_handler* h) {
    pending_.fetch_add(1, std::memory_order_acq_rel);
    queued_.fetch_add(1, std::memory_order_release);
    policy_->push(worker_pool::current_index(), h);
    workers_.wake_one();
}

void balancer::notify(const lb::object_load& l) {
    if (!balances_)
        return;
    {
        std::lock_guard lock(map_mutex_);
        loads_.update(l);
    }
    policy_->notify(l);
}

bool balancer::next(int worker, work_item& w) {
    // Idle workers ask all the time; the policy's queue takes a lock.
    if (queued_.load(std::memory_order_acquire) == 0)
        return false;
    while (auto* h = policy_->pop(worker)) {
        queued_.fetch_sub(1, std::memory_order_relaxed);
        double load = h->load(); // claim() frees a withdrawn handler
        if (claim(static_cast<pending_handler*>(h), w)) {
            pending_.fetch_sub(1, std::memory_order_acq_rel);
            started(load);
            return true;
        }
    }
    return false;
}

void balancer::tick() {
    // An idle rank comes here every eighth poll: no clock read when nothing would balance.
    if (!balances_ || !enabled_.load(std::memory_order_acquire))
        return;
    auto now = std::chrono::steady_clock::now();
    // A rank whose workers just ran out of work asks now, not up to a period later: that wait
    // was idle time on every steal. At most once per period, so that a rank flickering between
    // busy and dry (its work arriving one message at a time) does not flood its victims.
    const auto ended = ended_.load(std::memory_order_acquire);
    const bool ran_dry = ended != ended_seen_ && queued_.load(std::memory_order_acquire) == 0 &&
                         running_.load(std::memory_order_acquire) < cfg_.workers;
    ended_seen_ = ended;
    if (ran_dry && now < next_tick_ && now >= next_dry_tick_) {
        next_dry_tick_ = now + period_;
        std::lock_guard lock(counters_mutex);
        ++counters.dry_ticks;
    } else if (now < next_tick_)
        return;
    next_tick_ = now + period_;
    policy_->dist_balance();
}

int balancer::task_rank() {
    const int r = demand_.claim(demand::clock::now());
    if (r < 0)
        return rank();
    std::lock_guard lock(counters_mutex);
    ++counters.tasks_placed;
    return r;
}

void balancer::warn_if_held_off() const {
    if (rank() != 0 || cfg_.lb == "none" || enabled_.load() || was_on_.load())
        return;
    log().warn("--prema-lb {} never balanced: prema::lb::enable_balancing(false) was left on to "
               "the end (no phase ended with balancing on); call enable_balancing(true) on every "
               "rank once the objects are placed",
               cfg_.lb);
}

void balancer::deliver(int from, std::span<const std::byte> bytes) {
    policy_->receive(from, bytes);
}

std::vector<lb::object_load> balancer::work_map() const {
    std::lock_guard lock(map_mutex_);
    return loads_.heaviest(loads_.size(), std::numeric_limits<double>::infinity());
}

std::vector<lb::object_load> balancer::heaviest(std::size_t k, double at_most) const {
    std::lock_guard lock(map_mutex_);
    return loads_.heaviest(k, at_most);
}

std::size_t balancer::work_objects() const {
    std::lock_guard lock(map_mutex_);
    return loads_.size();
}

double balancer::local_load() const {
    std::lock_guard lock(map_mutex_);
    return loads_.total();
}

void balancer::send(int rank, std::span<const std::byte> bytes) {
    post_new(
        rank, policy_message_id(), 0, [&](byte_writer& w) { w.write(bytes.data(), bytes.size()); },
        flag_urgent | flag_uncounted);
    if (tracing())
        note_lb("lb_send", fmt::format(R"("peer":{},"bytes":{})", rank, bytes.size()));
    std::lock_guard lock(counters_mutex);
    ++counters.messages;
}

bool balancer::migrate(object_id object, int rank) {
    bool moved = migrate_for_balance(object, rank);
    if (tracing())
        note_lb("lb_migrate", fmt::format(R"("object":"{}","from":{},"to":{},"moved":{})",
                                          json_id(traced(object)), prema::rank(), rank, moved));
    return moved;
}

void balancer::note_answer_wait(double seconds) {
    std::lock_guard lock(counters_mutex);
    counters.max_answer_wait_s = std::max(counters.max_answer_wait_s, seconds);
}

int balancer::rank() const {
    return prema::rank();
}
int balancer::ranks() const {
    return prema::ranks();
}
int balancer::workers() const {
    return cfg_.workers;
}

} // namespace prema::detail

namespace prema::lb {

using detail::running_balancer;

void scheduler::push(int, ready_handler* h) {
    std::lock_guard lock(fifo_mutex_);
    fifo_.push_back(h);
}

ready_handler* scheduler::pop(int) {
    std::lock_guard lock(fifo_mutex_);
    if (fifo_.empty())
        return nullptr;
    auto* h = fifo_.front();
    fifo_.pop_front();
    return h;
}

void register_policy(const std::string& name, policy_factory make) {
    detail::policies()[name] = std::move(make);
}

std::vector<std::string> policy_names() {
    std::vector<std::string> names;
    for (auto& [name, make] : detail::policies())
        names.push_back(name);
    return names;
}

void enable_balancing(bool on) {
    running_balancer().set_enabled(on);
}

int demand() {
    return running_balancer().waiting_ranks();
}

stats current_stats() {
    auto& b = running_balancer();
    std::lock_guard lock(b.counters_mutex);
    stats s = b.counters;
    s.migrations_out = b.migrations_out();
    s.migrations_in = b.migrations_in();
    return s;
}

} // namespace prema::lb
