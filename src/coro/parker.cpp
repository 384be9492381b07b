#include "coro/parker.hpp"

#include "coro/futex.hpp"

namespace prema::detail {

void parker::wait(std::chrono::nanoseconds timeout) {
    futex_wait(&state_, parked, timeout);
}

void parker::wake() noexcept {
    futex_wake(&state_);
}

} // namespace prema::detail
