#include "prema/transport/all_reduce.hpp"

#include <atomic>

namespace prema::detail {

namespace {
// Never reset: every rank makes the same calls in every phase, so the counters stay equal
// across phases and runtimes.
std::atomic<std::uint64_t> all_reduce_calls{0};
} // namespace

std::uint64_t next_all_reduce_seq() noexcept {
    return all_reduce_calls.fetch_add(1, std::memory_order_relaxed);
}

} // namespace prema::detail
