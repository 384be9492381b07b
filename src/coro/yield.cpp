// Where a coroutine that yields or is rescheduled goes: the rank's worker pool (worker_pool::home),
// on the calling worker's own queue when the caller is one of its workers.
#include "prema/coro/yield.hpp"

#include "coro/worker_pool.hpp"
#include "prema/error.hpp"

namespace prema::detail {

namespace {
void resume_handle(void* a) {
    std::coroutine_handle<>::from_address(a).resume();
}

worker_pool& home_pool() {
    auto* pool = worker_pool::home();
    if (!pool)
        throw usage_error("no PREMA runtime is running in this process");
    return *pool;
}
} // namespace

void reschedule(std::coroutine_handle<> h) {
    home_pool().push({&resume_handle, h.address()});
}

void requeue_yielded(std::coroutine_handle<> h) {
    home_pool().push_yielded({&resume_handle, h.address()});
}

} // namespace prema::detail
