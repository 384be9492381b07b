/// @file
/// The unit the transport moves: a pooled buffer holding a wire header and up to its capacity
/// of payload (at most `eager_bytes`; the pool's size classes, message_pool.hpp, give a message
/// a buffer sized to what it carries). Larger payloads live in `split` and travel split-phase: the
/// header first, the payload second, on a tag the header names. With flag_bulk, the split-phase
/// payload is one vector argument (see bulk.hpp) and the other arguments travel inline after the
/// header, in the same MPI message. A batch (flag_batch) is one such
/// message whose payload packs many small messages to the same rank: a batch_prefix, then per
/// message (or run of messages, see batch_item) a batch_item and its payload, padded to 8 bytes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "prema/detail/transport/bulk.hpp"

namespace prema::detail {

inline constexpr std::uint32_t wire_magic = 0x50524d31; // "PRM1": format version 1

enum wire_flags : std::uint32_t {
    flag_split = 1u << 0,     // payload follows in a second MPI message
    flag_urgent = 1u << 1,    // run on the thread that polls MPI, ahead of all queued work
    flag_uncounted = 1u << 2, // control traffic: not work, left out of quiescence counts
    flag_batch = 1u << 3,     // the payload is a batch of counted messages (see batch_item)
    flag_bulk = 1u << 4,      // with flag_split: the split-phase payload is a bulk argument
    flag_credited = 1u << 5,  // charged to the sender's credit at the receiver (flow_control)
};

// Exactly what crosses the network in front of every payload.
struct wire_header {
    std::uint32_t magic;
    std::uint32_t flags;
    std::uint64_t handler;       // handler id (see handler.hpp)
    std::uint64_t token;         // nonzero: a call expecting a reply with this token
    std::uint64_t payload_bytes; // inline bytes after the header, or the split-phase size
                                 // (with flag_bulk, the inline bytes are what MPI received)
    std::int32_t source;
    std::int32_t payload_tag; // MPI tag of the split-phase payload
};
static_assert(sizeof(wire_header) == 40);

// The start of a batch's payload.
struct batch_prefix {
    std::uint32_t count; // messages in the batch: its items and the runs' further messages
    std::uint32_t reserved;
};
static_assert(sizeof(batch_prefix) == 8);

// In front of each message of a batch; its payload follows, padded to a multiple of 8 bytes.
// An item may carry a run: `more` messages after the first, for one handler registered as
// taking runs (register_handler), which alone knows their layout in the payload; a run has
// no token. Consecutive messages to one mobile object travel so, without a header each.
struct batch_item {
    std::uint64_t handler;
    std::uint64_t token;
    std::uint32_t payload_bytes;
    std::uint32_t more;
};
static_assert(sizeof(batch_item) == 24);

constexpr std::size_t batch_padded(std::size_t bytes) noexcept {
    return (bytes + 7) & ~std::size_t{7};
}

// Walks the items of a batch (what follows its prefix) as check_batch accepted them.
class batch_reader {
  public:
    explicit batch_reader(std::span<const std::byte> items) noexcept : rest_(items) {}
    // The next item and its payload; false after the last.
    bool next(batch_item& item, std::span<const std::byte>& payload) noexcept {
        if (rest_.size() < sizeof item)
            return false;
        std::memcpy(&item, rest_.data(), sizeof item);
        payload = rest_.subspan(sizeof item, item.payload_bytes);
        rest_ =
            rest_.subspan(std::min(rest_.size(), sizeof item + batch_padded(item.payload_bytes)));
        return true;
    }
    // The items not read yet.
    std::span<const std::byte> rest() const noexcept { return rest_; }

  private:
    std::span<const std::byte> rest_;
};

struct message {
    int peer = -1;         // destination (outgoing) or source (incoming)
    int pending_sends = 0; // progress engine only: MPI sends still using the buffers
    // Messages this one stands for in the quiescence counts: a batch's count, else 1.
    std::uint32_t logical = 1;
    // Progress engine: wire bytes it holds against the back-pressure limit (0: none), and
    // whether they are counted there now: only while it waits in the outbox or in MPI, so a
    // send that MPI copies out at once never touches the shared count.
    std::uint32_t flow_bytes = 0;
    bool flow_queued = false;
    std::uint8_t size_class = 0; // the pool's, for release
    std::uint32_t capacity = 0;  // bytes of the wire buffer: header and inline payload
    message* next = nullptr;     // progress engine: the next message waiting for credit
    std::uint32_t credit = 0;    // progress engine: its cost in credit (flow_control.hpp)
    bulk_buffer split;           // split-phase payload, empty when it fits inline
    // flag_bulk: the arguments' bytes inline after the header. Else 0, also on a receive.
    std::uint32_t inline_bytes = 0;
    // Fault injection only (progress_engine::post_raw): when >= 0, the message's wire bytes
    // are exactly the first `raw_bytes` bytes of the buffer, header or not, never split.
    int raw_bytes = -1;

    // The wire buffer lives right after this object, in the same allocation.
    wire_header& header() noexcept { return *reinterpret_cast<wire_header*>(this + 1); }
    std::byte* inline_data() noexcept { return reinterpret_cast<std::byte*>(&header() + 1); }
    // Payload bytes that fit inline.
    std::size_t inline_capacity() const noexcept { return capacity - sizeof(wire_header); }

    // The arguments' bytes (without a bulk).
    std::span<const std::byte> payload() noexcept {
        if (header().flags & flag_bulk)
            return {inline_data(), inline_bytes};
        if (header().flags & flag_split)
            return {split.data(), split.size()};
        return {inline_data(), std::size_t(header().payload_bytes)};
    }
};
static_assert(sizeof(message) % alignof(wire_header) == 0);

} // namespace prema::detail
