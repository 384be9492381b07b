/// @file
/// The transport as the templates in the public headers see it: take a pooled message, fill
/// it, post it. Defined in src/transport; valid while a runtime runs on this rank.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "prema/detail/transport/message.hpp"
#include "prema/transport/serialization.hpp"

namespace prema::detail {

// One destination's open batch (src/transport/aggregator.hpp owns, grows and flushes it).
struct batch_lane {
    message* msg = nullptr;   // nullptr: no open batch
    std::size_t used = 0;     // payload bytes, prefix included
    std::size_t capacity = 0; // payload bytes its buffer holds now (it grows up to the batch size)
    std::size_t last = 0;     // where the last item starts, while count > 0
    std::uint32_t count = 0;  // messages: the items and their runs' further messages
};

// A worker's lanes are made in chunks of this many destination ranks, at its first batch to one
// of them: a rank it never sends to costs an eighth of a byte (a null chunk pointer), not a lane.
inline constexpr unsigned lane_chunk_bits = 6;
inline constexpr unsigned lane_chunk = 1u << lane_chunk_bits;
// `dest`'s lane in a worker's chunk table, or nullptr while its chunk has not been made.
inline batch_lane* find_lane(batch_lane* const* chunks, int dest) noexcept {
    batch_lane* chunk = chunks[unsigned(dest) >> lane_chunk_bits];
    return chunk ? &chunk[unsigned(dest) & (lane_chunk - 1)] : nullptr;
}

// A message of at least this much payload leaves at once, with its batch (aggregator.hpp says
// why).
inline constexpr std::size_t prompt_bytes = 1024;
// A batch leaves once less than this room would be left after the next item.
inline constexpr std::size_t batch_min_room = 64;

// What a worker thread of the running runtime needs to send without leaving the inline code
// below: a send into an open batch is a few stores and no call. Set by the runtime on each of
// its worker threads while they run (tls_outbox), nullptr on every other thread.
struct worker_outbox {
    // Lane chunks by destination rank / lane_chunk, a chunk null until its first batch;
    // nullptr when aggregation is off.
    batch_lane* const* lanes = nullptr;
    std::size_t eager_bytes = 0; // a vector argument this large travels as a bulk
    int ranks = 0;
    int self = 0;
    bool observing = false; // --prema-stats/--prema-trace: every send is noted (slow path)
    const std::atomic<bool>* flush_requested = nullptr; // the progress engine wants the batches
    const std::atomic<bool>* senders_held = nullptr;    // back-pressure (flow_control.hpp)
    // The running handler is its rank's only work: its first counted message to another rank
    // leaves at once, on its own (set around each handler by dispatch; aggregator.hpp says
    // why).
    bool send_now = false;
};
inline thread_local worker_outbox* tls_outbox = nullptr;

// A pooled message with room for at least `payload_bytes` inline (the smallest by default: a
// payload that outgrows it moves to a bigger one, see grow_message); throws usage_error when
// no runtime runs on this rank.
message* acquire_message(std::size_t payload_bytes = 0);
void release_message(message* m) noexcept;
// A payload being written into the message `m`, which may grow up to `eager` bytes.
struct growing_message {
    message* m;
    std::size_t eager;
};
// byte_writer::grow_fn for a payload written into a message (`context`: a growing_message):
// a pooled message with room for `need` bytes, up to its eager size, takes the `kept` bytes
// written so far and the old one goes back, so that the payload is copied once on its way;
// nullptr above the eager size (the payload spills, and travels split-phase).
std::byte* grow_message(void* context, std::size_t need, std::size_t kept, std::size_t& capacity);

// Payload bytes that travel inside the message (--prema-eager-bytes); more goes split-phase.
// A vector argument of at least this many bytes travels as the message's bulk.
std::size_t eager_capacity() noexcept;
// The same for a message to `dest`: more to a rank on another node (node_peers.hpp).
std::size_t eager_capacity(int dest) noexcept;

// Throws usage_error naming the rank and the job size if `rank` does not exist.
void check_rank_slow(int rank);
inline void check_rank(int rank) {
    if (auto* o = tls_outbox; o && unsigned(rank) < unsigned(o->ranks)) [[likely]]
        return;
    check_rank_slow(rank);
}

// Throws usage_error if the payload (with its bulk) exceeds --prema-max-message-bytes.
void check_payload(std::uint64_t handler, const byte_writer& payload);

// Posts `payload` to `dest` and takes ownership of `m` and of the payload's bulk. `m`: the
// message the payload was written into, or nullptr if it was written elsewhere; either way the
// message that leaves holds a buffer sized to the payload. Throws usage_error, leaving `m` with
// the caller, if check_payload fails. `flags`: wire_flags (urgent, uncounted) for runtime
// control traffic.
void post(message* m, int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload,
          std::uint32_t flags = 0);

// The calling worker's batch to `dest` (src/transport/aggregator.hpp), opened if needed, with
// at least batch_min_room bytes of room; nullptr when the message to `dest` does not go through
// a batch (the caller is not a worker of the running runtime, aggregation is off, `dest` is
// this rank, or this is the first message of a handler that is its rank's only work, which
// clears worker_outbox::send_now).
batch_lane* open_batch(int dest);
// The message written at lane_room() has `payload`'s bytes: it joins the batch, or, if they
// overflowed the room (payload.spilled()) or have a bulk, leaves as it fits best.
void batch_commit(int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload);

// The item written at `lane`'s end has `bytes` of payload: the lane's batch leaves if the item
// asks for it (prompt_bytes) or the batch is full, and its buffer grows if the batch is not
// full but the buffer is; the send is noted when observing.
void batch_committed(int dest, std::uint64_t handler, std::size_t bytes);

// The inline path of post_new: the calling worker's open batch to `dest`, if a counted message
// may join it without a call (nullptr: ask open_batch, which opens batches, flushes those the
// progress engine asked for and sends a lone handler's first message on its own).
inline batch_lane* open_lane(int dest) noexcept {
    worker_outbox* o = tls_outbox;
    if (!o || !o->lanes || dest == o->self || o->send_now ||
        o->flush_requested->load(std::memory_order_relaxed))
        return nullptr;
    batch_lane* lane = find_lane(o->lanes, dest);
    return lane && lane->msg ? lane : nullptr;
}
// Where the payload of the next item of `lane` goes, and how much room its buffer has there.
inline std::byte* lane_room(const batch_lane& lane, std::size_t& room) noexcept {
    std::size_t at = lane.used + sizeof(batch_item);
    room = lane.capacity - at;
    return lane.msg->inline_data() + at;
}
// The item whose `bytes` of payload lie at lane_room() becomes the batch's last.
inline void append_item(batch_lane& lane, std::uint64_t handler, std::uint64_t token,
                        std::size_t bytes) noexcept {
    // Three stores into the buffer: a batch_item built on the stack and copied whole is read
    // back by loads wider than the stores that built it, which wait for those stores to reach
    // the cache.
    std::byte* at = lane.msg->inline_data() + lane.used;
    static_assert(offsetof(batch_item, token) == 8 && offsetof(batch_item, payload_bytes) == 16 &&
                  offsetof(batch_item, more) == 20);
    // payload_bytes, then more (0), as one word
    const std::uint64_t tail = std::endian::native == std::endian::little
                                   ? std::uint64_t(std::uint32_t(bytes))
                                   : std::uint64_t(std::uint32_t(bytes)) << 32;
    std::memcpy(at, &handler, sizeof handler);
    std::memcpy(at + 8, &token, sizeof token);
    std::memcpy(at + 16, &tail, sizeof tail);
    lane.last = lane.used;
    lane.used += sizeof(batch_item) + batch_padded(bytes);
    ++lane.count;
}
// The message whose `bytes` of payload lie at lane_room() joins the batch.
inline void join_lane(batch_lane& lane, int dest, std::uint64_t handler, std::uint64_t token,
                      std::size_t bytes) {
    append_item(lane, handler, token, bytes);
    if (tls_outbox->observing || bytes >= prompt_bytes ||
        lane.capacity < lane.used + sizeof(batch_item) + batch_min_room) [[unlikely]]
        batch_committed(dest, handler, bytes);
}

// Runs (batch_item::more), for a handler registered as taking them. The payload of `lane`'s
// last item if that item is a message to `handler` without a token, which the handler's own
// sender may grow into a run in place and past its end (lane_room: up to the buffer's end);
// empty otherwise. `more`: the messages after the first that it carries already.
inline std::span<std::byte> last_item_payload(const batch_lane& lane, std::uint64_t handler,
                                              std::uint32_t& more) noexcept {
    if (lane.count == 0)
        return {};
    std::byte* at = lane.msg->inline_data() + lane.last;
    batch_item item;
    std::memcpy(&item, at, sizeof item);
    if (item.handler != handler || item.token != 0)
        return {};
    more = item.more;
    return {at + sizeof item, item.payload_bytes};
}
// The last item (see last_item_payload) now has `bytes` of payload and carries one more
// message, of `message_bytes`: the batch leaves or grows as after join_lane.
inline void grow_last_item(batch_lane& lane, int dest, std::uint64_t handler, std::size_t bytes,
                           std::size_t message_bytes) {
    std::byte* at = lane.msg->inline_data() + lane.last;
    // payload_bytes and more as one word, read and written whole (as append_item writes it):
    // the run's next message reads them with one 8-byte load, which would wait for two 4-byte
    // stores to reach the cache (a quarter of a flood's sending time, 2026-11-29).
    constexpr bool little = std::endian::native == std::endian::little;
    std::uint64_t tail = 0;
    std::memcpy(&tail, at + offsetof(batch_item, payload_bytes), sizeof tail);
    const std::uint64_t more = (little ? tail >> 32 : tail & 0xffffffffu) + 1;
    const std::uint64_t size = std::uint32_t(bytes);
    tail = little ? more << 32 | size : size << 32 | more;
    std::memcpy(at + offsetof(batch_item, payload_bytes), &tail, sizeof tail);
    lane.used = lane.last + sizeof(batch_item) + batch_padded(bytes);
    ++lane.count;
    if (message_bytes >= prompt_bytes ||
        lane.capacity < lane.used + sizeof(batch_item) + batch_min_room) [[unlikely]]
        batch_committed(dest, handler, message_bytes);
}

// Fills a fresh message through `write(byte_writer&)` and posts it. Counted messages from a
// worker are batched (flags == 0).
template <class Write>
void post_new(int dest, std::uint64_t handler, std::uint64_t token, Write&& write,
              std::uint32_t flags = 0) {
    batch_lane* lane = nullptr;
    if (flags == 0 && !(lane = open_lane(dest))) [[unlikely]]
        lane = open_batch(dest);
    if (lane) [[likely]] {
        std::size_t room = 0;
        std::byte* at = lane_room(*lane, room);
        byte_writer w(at, room, tls_outbox->eager_bytes);
        write(w);
        if (w.spilled() || w.bulk()) [[unlikely]]
            return batch_commit(dest, handler, token, w);
        return join_lane(*lane, dest, handler, token, w.size());
    }
    growing_message g{acquire_message(), eager_capacity(dest)};
    try {
        byte_writer w(g.m->inline_data(), g.m->inline_capacity(), g.eager);
        w.grow_with(&grow_message, &g);
        write(w);
        post(g.m, dest, handler, token, w, flags);
    } catch (...) {
        release_message(g.m);
        throw;
    }
}

} // namespace prema::detail
