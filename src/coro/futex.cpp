#include "coro/futex.hpp"

#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace prema::detail {

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout.count() > 0) {
        ts.tv_sec = timeout.count() / 1'000'000'000;
        ts.tv_nsec = timeout.count() % 1'000'000'000;
        tsp = &ts;
    }
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tsp,
            nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
}

} // namespace prema::detail
