// light_mutex: a mutex for short critical sections taken on every message (an object's record,
// a directory shard), where std::mutex's call into pthread costs more than the section.
//
// Uncontended, lock is one compare-exchange and unlock a load and a store, inline: one locked
// instruction per section, not two. On x86 each locked instruction costs about 7 ns on a
// message's path here (it waits for the thread's earlier stores to reach the cache), and a lone
// object message went through three of these locks. A contended lock sleeps on a futex rather
// than spinning: with more threads than cores, a spinner can burn the time slice its holder
// needs. The states are Drepper's ("Futexes Are Tricky"): 0 free, 1 held, 2 held and someone
// may sleep, so that unlock wakes a sleeper only when there may be one. Since unlock reads the
// state before it stores 0, a waiter that marks it 2 in between may fall asleep unnoticed: so
// a waiter sleeps at most sleep_limit before it looks again, and such a miss costs that wait,
// never a hang. Not recursive; the thread that locked it unlocks it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "coro/futex.hpp"

namespace prema::detail {

class light_mutex {
  public:
    light_mutex() = default;
    light_mutex(const light_mutex&) = delete;
    light_mutex& operator=(const light_mutex&) = delete;

    void lock() noexcept {
        std::uint32_t free = 0;
        if (!state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                            std::memory_order_relaxed)) [[unlikely]]
            lock_contended();
    }
    bool try_lock() noexcept {
        std::uint32_t free = 0;
        return state_.compare_exchange_strong(free, 1, std::memory_order_acquire,
                                              std::memory_order_relaxed);
    }
    void unlock() noexcept {
        const bool sleeper = state_.load(std::memory_order_relaxed) == 2;
        state_.store(0, std::memory_order_release);
        if (sleeper) [[unlikely]]
            futex_wake(&state_);
    }

    // The longest a waiter sleeps before it looks again (see the file's description).
    static constexpr std::chrono::microseconds sleep_limit{100};

  private:
    void lock_contended() noexcept {
        // Marked 2 before sleeping, and kept 2 when taken after a sleep: another may still be
        // asleep, and its unlock must wake it.
        while (state_.exchange(2, std::memory_order_acquire) != 0)
            futex_wait(&state_, 2, sleep_limit);
    }

    std::atomic<std::uint32_t> state_{0};
};

} // namespace prema::detail
