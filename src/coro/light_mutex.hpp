// light_mutex: a mutex for short critical sections taken on every message (an object's record,
// a directory shard), where std::mutex's call into pthread costs more than the section.
//
// Uncontended, lock is one compare-exchange and unlock one exchange, inline. A contended lock
// sleeps in std::atomic::wait (a futex on Linux) rather than spinning: with more threads than
// cores, a spinner can burn the time slice its holder needs. The three states are Drepper's
// ("Futexes Are Tricky"): 0 free, 1 held, 2 held and someone may sleep, so that unlock wakes a
// sleeper only when there may be one. Not recursive; the thread that locked it unlocks it.
#pragma once

#include <atomic>

namespace prema::detail {

class light_mutex {
  public:
    light_mutex() = default;
    light_mutex(const light_mutex&) = delete;
    light_mutex& operator=(const light_mutex&) = delete;

    void lock() noexcept {
        int free = 0;
        if (!state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                            std::memory_order_relaxed)) [[unlikely]]
            lock_contended();
    }
    bool try_lock() noexcept {
        int free = 0;
        return state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                              std::memory_order_relaxed);
    }
    void unlock() noexcept {
        if (state_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
            state_.notify_one();
    }

  private:
    void lock_contended() noexcept {
        // Marked 2 before sleeping, and kept 2 when taken after a sleep: another may still be
        // asleep, and its unlock must wake it.
        while (state_.exchange(2, std::memory_order_acquire) != 0)
            state_.wait(2, std::memory_order_relaxed);
    }

    std::atomic<int> state_{0};
};

} // namespace prema::detail
