#include "transport/aggregator.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "prema/detail/transport/copy_bytes.hpp"
#include "transport/message_pool.hpp"
#include "transport/observe.hpp"
#include "transport/progress_engine.hpp"

namespace prema::detail {

batch_set::batch_set(message_pool& pool, progress_engine& engine, int ranks, int rank,
                     std::size_t capacity)
    : pool_(pool), engine_(engine), rank_(rank), capacity_(capacity),
      chunks_((std::size_t(ranks) + lane_chunk - 1) / lane_chunk, nullptr) {}

batch_set::~batch_set() {
    // Quiescence flushed everything that was sent; what is left was never counted.
    for (int dest : dirty_)
        pool_.release(lane(dest).msg);
    for (batch_lane* chunk : chunks_)
        delete[] chunk;
}

std::size_t batch_set::lane_bytes() const noexcept {
    auto made = std::size_t(std::ranges::count_if(chunks_, [](auto* c) { return c != nullptr; }));
    return chunks_.capacity() * sizeof(batch_lane*) + made * lane_chunk * sizeof(batch_lane);
}

void batch_set::start(int dest, batch_lane& b) {
    b.msg = pool_.acquire();
    b.capacity = std::min(capacity_, b.msg->inline_capacity());
    b.used = sizeof(batch_prefix);
    b.count = 0;
    if (dirty_.empty())
        open_stretch_.store(open_stretch_.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
    dirty_.push_back(dest);
    open_count_.store(int(dirty_.size()), std::memory_order_relaxed);
}

std::byte* batch_set::begin(int dest, std::size_t& room) {
    flush_if_requested();
    if (batch_lane*& chunk = chunks_[unsigned(dest) >> lane_chunk_bits]; !chunk)
        chunk = new batch_lane[lane_chunk];
    auto& b = lane(dest);
    if (!b.msg)
        start(dest, b);
    return lane_room(b, room);
}

void batch_set::grow(batch_lane& b, std::size_t payload) {
    message* bigger = pool_.acquire(std::min(capacity_, std::max(payload, 4 * b.capacity)));
    copy_bytes(bigger->inline_data(), b.msg->inline_data(), b.used);
    pool_.release(std::exchange(b.msg, bigger));
    b.capacity = std::min(capacity_, bigger->inline_capacity());
}

std::byte* batch_set::room_for(int dest, std::size_t bytes) {
    std::size_t room = 0;
    std::byte* at = begin(dest, room);
    if (bytes <= room)
        return at;
    auto& b = lane(dest);
    std::size_t needed = b.used + sizeof(batch_item) + bytes;
    if (needed > capacity_)
        return nullptr;
    grow(b, needed);
    return lane_room(b, room);
}

void batch_set::commit(int dest, std::uint64_t handler, std::uint64_t token, std::size_t bytes) {
    append_item(lane(dest), handler, token, bytes);
    committed(dest, handler, bytes);
}

void batch_set::committed(int dest, std::uint64_t handler, std::size_t bytes) {
    if (observing())
        note_send(dest, handler, sizeof(batch_item) + bytes);
    auto& b = lane(dest);
    std::size_t next = b.used + sizeof(batch_item) + batch_min_room;
    if (bytes >= prompt_bytes || capacity_ < next)
        flush(dest);
    else if (b.capacity < next)
        grow(b, next);
}

void batch_set::flush(int dest) {
    if (!open(dest))
        return;
    auto& b = lane(dest);
    message* m = std::exchange(b.msg, nullptr);
    dirty_.erase(std::find(dirty_.begin(), dirty_.end(), dest));
    if (dirty_.empty())
        flush_requested_.store(false, std::memory_order_relaxed);
    if (b.count == 0) {
        // Opened for a message that then left another way (a bulk, or too big for a batch):
        // nothing to send, and nothing was counted.
        pool_.release(m);
        open_count_.store(int(dirty_.size()), std::memory_order_release);
        return;
    }
    batch_prefix prefix{b.count, 0};
    std::memcpy(m->inline_data(), &prefix, sizeof prefix);
    m->header() = wire_header{wire_magic, flag_batch, 0, 0, b.used, rank_, 0};
    m->peer = dest;
    m->logical = b.count;
    // Counted as sent by post() before the open count drops: a wave never sees neither.
    engine_.post(m);
    open_count_.store(int(dirty_.size()), std::memory_order_release);
}

void batch_set::flush_all() {
    // Idle workers call this every round: no store unless a request is pending.
    if (flush_requested_.load(std::memory_order_relaxed))
        flush_requested_.store(false, std::memory_order_relaxed);
    while (!dirty_.empty())
        flush(dirty_.back());
}

} // namespace prema::detail
