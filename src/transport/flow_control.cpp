#include "transport/flow_control.hpp"

#include <algorithm>
#include <limits>

#include "prema/detail/transport/message.hpp"

namespace prema::detail {

flow_control::flow_control(int ranks, std::size_t max_outstanding, std::uint64_t max_cost)
    : max_(max_outstanding ? max_outstanding : std::numeric_limits<std::size_t>::max()),
      credits_(max_outstanding != 0), max_cost_(max_cost), slot_(std::size_t(ranks)) {
    constexpr std::uint64_t least_base = 4096;
    const std::uint64_t budget = max_outstanding, p = std::uint64_t(ranks);
    if (credits_) {
        base_ = std::min(std::max(budget / (2 * p), least_base), budget / 2);
        shared_ = std::max(budget > p * base_ ? budget - p * base_ : 0, budget / 2);
    } else {
        base_ = std::numeric_limits<std::uint64_t>::max() / 2;
    }
    // Every sender starts with its base window, granted without a message (add_peer).
    exposure_ = credits_ ? p * base_ : 0;
    peak_exposure_.store(exposure_, std::memory_order_relaxed);
}

flow_control::peer& flow_control::add_peer(int rank) noexcept {
    auto& p = peers_.emplace_back();
    p.out.limit = base_;
    p.in.granted = base_;
    slot_[std::size_t(rank)] = std::uint32_t(peers_.size());
    return p;
}

void flow_control::update() noexcept {
    bool over = queued_.load(std::memory_order_relaxed) > std::int64_t(max_);
    if (over != over_.load(std::memory_order_relaxed))
        over_.store(over, std::memory_order_relaxed);
}

void flow_control::queued(std::size_t bytes) noexcept {
    if (queued_.fetch_add(std::int64_t(bytes), std::memory_order_relaxed) + std::int64_t(bytes) >
            std::int64_t(max_) &&
        !over_.load(std::memory_order_relaxed))
        over_.store(true, std::memory_order_relaxed);
}

void flow_control::handed_over(std::size_t bytes) noexcept {
    queued_.fetch_sub(std::int64_t(bytes), std::memory_order_relaxed);
    update();
}

bool flow_control::hold(std::coroutine_handle<> h) {
    std::lock_guard lock(held_mutex_);
    // Checked under the lock release_if_under takes: a release cannot slip in between.
    if (!over())
        return false;
    held_.push_back(h);
    held_count_.fetch_add(1, std::memory_order_release);
    return true;
}

std::vector<std::coroutine_handle<>> flow_control::release_if_under() {
    std::vector<std::coroutine_handle<>> ready;
    if (held() == 0)
        return ready;
    update(); // queued() may have raised the flag after the last handover lowered the amount
    if (over())
        return ready;
    std::lock_guard lock(held_mutex_);
    ready.swap(held_);
    held_count_.store(0, std::memory_order_release);
    return ready;
}

bool flow_control::wait(message* m, std::uint64_t cost) noexcept {
    auto& o = lanes(m->peer).out;
    m->credit = std::uint32_t(cost);
    m->next = nullptr;
    (o.tail ? o.tail->next : o.head) = m;
    o.tail = m;
    o.waiting_cost += cost;
    return !std::exchange(o.asked, true);
}

flow_control::request_body flow_control::request(int dest) noexcept {
    auto& o = lanes(dest).out;
    return {o.sent, o.head->credit, o.waiting_cost};
}

bool flow_control::granted(int dest, std::uint64_t limit, std::vector<message*>& ready) noexcept {
    auto& o = lanes(dest).out;
    o.limit = std::max(o.limit, limit);
    while (o.head && o.sent + o.head->credit <= o.limit) {
        message* m = std::exchange(o.head, o.head->next);
        m->next = nullptr;
        o.sent += m->credit;
        o.waiting_cost -= m->credit;
        ready.push_back(m);
    }
    if (!o.head)
        o.tail = nullptr;
    // Asks again for what still waits (a renewal may have crossed the request).
    o.asked = o.head != nullptr;
    return o.asked;
}

std::vector<message*> flow_control::take_waiting() noexcept {
    std::vector<message*> all;
    for (auto& p : peers_) {
        auto& o = p.out;
        for (message* m = o.head; m; m = std::exchange(m->next, nullptr))
            all.push_back(m);
        o.head = o.tail = nullptr;
        o.waiting_cost = 0;
    }
    return all;
}

void flow_control::grant(int source, std::uint64_t limit) noexcept {
    auto& r = lanes(source).in;
    if (limit <= r.granted)
        return;
    std::uint64_t ex_old = excess(r.granted - r.consumed), ex_new = excess(limit - r.consumed);
    lent_ += ex_new - ex_old;
    holders_ += ex_old == 0 && ex_new > 0;
    exposure_ += limit - r.granted;
    r.granted = limit;
    if (exposure_ > peak_exposure_.load(std::memory_order_relaxed))
        peak_exposure_.store(exposure_, std::memory_order_relaxed);
    if (!std::exchange(r.grant_due, true))
        grant_ready_.push_back(source);
}

void flow_control::matched(int source, std::uint64_t cost) noexcept {
    if (!credits_)
        return;
    auto& r = lanes(source).in;
    // Never below nothing outstanding: a garbled message may claim a charge never made.
    std::uint64_t outstanding = r.granted - r.consumed, taken = std::min(cost, outstanding);
    r.consumed += taken;
    exposure_ -= taken;
    if (std::uint64_t ex_old = excess(outstanding); ex_old) {
        std::uint64_t ex_new = excess(outstanding - taken);
        lent_ -= ex_old - ex_new;
        holders_ -= ex_new == 0;
    }
    // The base window comes back unasked once half of it is used.
    if (r.granted - r.consumed < base_ / 2)
        grant(source, r.consumed + base_);
}

const char* flow_control::asked(int source, const request_body& w) noexcept {
    auto& r = lanes(source).in;
    if (!credits_)
        return "a request for credit, but this rank grants no credits "
               "(--prema-max-outstanding-bytes 0)";
    if (w.sent > r.granted || w.sent < r.consumed)
        return "garbled credit request: it claims a sent amount this rank never granted or "
               "already received";
    if (w.need == 0 || w.want < w.need)
        return "garbled credit request: it asks for nothing, or for less than its first message";
    r.want = w;
    if (!r.waiting && !try_serve(source)) {
        r.waiting = true;
        waiting_.push_back(source);
    }
    return nullptr;
}

bool flow_control::try_serve(int source) noexcept {
    auto& r = lanes(source).in;
    const auto& w = r.want;
    const std::uint64_t floor = w.sent + w.need; // the first waiting message fits
    if (r.granted >= floor)
        return true; // a grant on its way covers it; the sender asks again if it needs more
    const std::uint64_t ex_old = excess(r.granted - r.consumed);
    const std::uint64_t others = lent_ - ex_old;
    const std::uint64_t share = shared_ / (holders_ + (ex_old == 0));
    const std::uint64_t room = shared_ > others ? shared_ - others : 0;
    std::uint64_t limit = std::min(w.sent + std::max(w.need, std::min(w.want, base_ + share)),
                                   r.consumed + base_ + room);
    if (limit < floor) {
        if (lent_ > shared_)
            return false; // one request past the budget at a time
        limit = floor;
    }
    grant(source, limit);
    return true;
}

std::uint64_t flow_control::matched_total() const noexcept {
    std::uint64_t sum = 0;
    for (auto& p : peers_)
        sum += p.in.consumed;
    return sum;
}

void flow_control::serve_queue() noexcept {
    while (!waiting_.empty() && try_serve(waiting_.front())) {
        lanes(waiting_.front()).in.waiting = false;
        waiting_.pop_front();
    }
}

} // namespace prema::detail
