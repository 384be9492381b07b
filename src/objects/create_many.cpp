// create_many's checks, made before anything is sent, and its count of batches.
#include "prema/objects/create_many.hpp"

#include <atomic>

#include <fmt/format.h>

#include "prema/error.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {
std::atomic<std::uint64_t> batches{0};
}

void check_create_batch(std::size_t objects) {
    // The reply: a count, then the ids.
    std::size_t room = (state().cfg.max_message_bytes - sizeof(std::uint64_t)) / sizeof(object_id);
    if (objects > room)
        throw usage_error(fmt::format(
            "prema::create_many: {} objects on one rank, but the ids of at most {} fit in a reply "
            "(--prema-max-message-bytes={})",
            objects, room, state().cfg.max_message_bytes));
}

void check_placement(int rank, std::size_t index) {
    int size = state().size;
    if (rank < 0 || rank >= size)
        throw usage_error(fmt::format("prema::create_many: the placement function put object {} "
                                      "on rank {}, but the job has {} ranks (0..{})",
                                      index, rank, size, size - 1));
}

void count_create_batch() noexcept {
    batches.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t create_batch_count() noexcept {
    return batches.load(std::memory_order_relaxed);
}

} // namespace prema::detail
