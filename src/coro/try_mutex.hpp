// try_mutex: a lock that is only ever tried, never waited for (the inline poller's lock: a
// worker that finds another polling goes back to its own work).
//
// Since nobody sleeps on it, unlock is a plain release store, not the exchange a sleeping
// waiter would need; a try that finds it held costs a load, no locked instruction. Not
// recursive; the thread that locked it unlocks it. Usable with std::unique_lock and
// std::try_to_lock.
#pragma once

#include <atomic>

namespace prema::detail {

class try_mutex {
  public:
    try_mutex() = default;
    try_mutex(const try_mutex&) = delete;
    try_mutex& operator=(const try_mutex&) = delete;

    bool try_lock() noexcept {
        return !held_.load(std::memory_order_relaxed) &&
               !held_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

  private:
    std::atomic<bool> held_{false};
};

} // namespace prema::detail
