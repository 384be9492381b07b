#include "transport/flow_control.hpp"

#include <algorithm>

namespace prema::detail {

flow_control::flow_control(int ranks, std::size_t max_outstanding)
    : max_(max_outstanding), sync_interval_(std::max<std::size_t>(max_outstanding / 8, 1)),
      unacked_(std::size_t(ranks)), sync_pending_(std::size_t(ranks)) {}

void flow_control::update() noexcept {
    bool over = queued_.load(std::memory_order_relaxed) > std::int64_t(max_) ||
                dests_over_.load(std::memory_order_relaxed) > 0;
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

bool flow_control::start(int dest, std::size_t bytes, std::size_t& covered) noexcept {
    auto& unacked = unacked_[std::size_t(dest)];
    bool was_over = unacked > max_;
    unacked += bytes;
    if (!was_over && unacked > max_)
        dests_over_.fetch_add(1, std::memory_order_relaxed);
    update();
    if (sync_pending_[std::size_t(dest)] || unacked < sync_interval_)
        return false;
    sync_pending_[std::size_t(dest)] = true;
    covered = unacked;
    return true;
}

bool flow_control::acknowledged(int dest, std::size_t covered) noexcept {
    auto& unacked = unacked_[std::size_t(dest)];
    bool was_over = unacked > max_;
    unacked -= covered;
    sync_pending_[std::size_t(dest)] = false;
    if (was_over && unacked <= max_)
        dests_over_.fetch_sub(1, std::memory_order_relaxed);
    update();
    return unacked >= sync_interval_;
}

std::size_t flow_control::probe(int dest) noexcept {
    sync_pending_[std::size_t(dest)] = true;
    return unacked_[std::size_t(dest)];
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

} // namespace prema::detail
