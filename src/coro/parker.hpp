// parker: lets one thread sleep until another wakes it, or until a timeout.
//
// A futex on one word. The sleeper announces itself, then re-checks for work before it sleeps;
// a waker publishes work, then looks for a sleeper (each followed by a seq_cst fence), so one of
// the two always sees the other and a wake-up is never lost. Wakers that find nobody asleep pay one
// load.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace prema::detail {

class parker {
  public:
    // Sleeps until unpark() or `timeout` (zero: no timeout), unless has_work() says otherwise
    // once the owner is visible as asleep. Owner thread only.
    template <class F> void park(std::chrono::nanoseconds timeout, F&& has_work) {
        state_.store(parked, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!has_work())
            wait(timeout);
        state_.store(awake, std::memory_order_relaxed);
    }

    // Wakes the owner if it sleeps. Call after publishing the work. Any thread.
    void unpark() noexcept {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (state_.load(std::memory_order_relaxed) == parked &&
            state_.exchange(awake, std::memory_order_acq_rel) == parked)
            wake();
    }

    bool sleeping() const noexcept { return state_.load(std::memory_order_acquire) == parked; }

  private:
    void wait(std::chrono::nanoseconds timeout);
    void wake() noexcept;

    static constexpr std::uint32_t awake = 0, parked = 1;
    std::atomic<std::uint32_t> state_{awake};
};

} // namespace prema::detail
