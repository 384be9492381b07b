// futex: sleep on a 32-bit word until another thread wakes it or a timeout passes (Linux).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace prema::detail {

// Sleeps while *word == expected, until futex_wake(word) or `timeout` (zero: none). May return
// early (a signal, a spurious wake-up): callers look again at what they wait for.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                std::chrono::nanoseconds timeout);
// Wakes one thread asleep in futex_wait(word, ...), if any.
void futex_wake(std::atomic<std::uint32_t>* word) noexcept;

} // namespace prema::detail
