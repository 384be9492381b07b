// The transport as the templates in the public headers see it: take a pooled message, fill
// it, post it. Defined in src/transport; valid while a runtime runs on this rank.
#pragma once

#include <cstddef>
#include <cstdint>

#include "prema/transport/message.hpp"
#include "prema/transport/serialization.hpp"

namespace prema::detail {

// A pooled message; throws usage_error when no runtime runs on this rank.
message* acquire_message();
void release_message(message* m) noexcept;

// Payload bytes that travel inside the message; more goes split-phase. A vector argument of at
// least this many bytes travels as the message's bulk.
std::size_t eager_capacity() noexcept;

// Throws usage_error naming the rank and the job size if `rank` does not exist.
void check_rank(int rank);

// Throws usage_error if the payload (with its bulk) exceeds --prema-max-message-bytes.
void check_payload(std::uint64_t handler, const byte_writer& payload);

// Posts `m` (usually already holding `payload`'s inline bytes) to `dest` and takes ownership of
// it and of the payload's bulk. Throws usage_error, leaving `m` with the caller, if
// check_payload fails. `flags`: wire_flags (urgent, uncounted) for runtime control traffic.
void post(message* m, int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload,
          std::uint32_t flags = 0);

// Where the next message to `dest` can be written into the calling worker's open batch to that
// rank (src/transport/aggregator.hpp), with `room` bytes; nullptr when this message does not
// go through a batch (the caller is not a worker of the running runtime, aggregation is off,
// or `dest` is this rank).
std::byte* batch_begin(int dest, std::size_t& room);
// The message begun by batch_begin has `payload`'s bytes: it joins the batch, or, if they
// overflowed the room (payload.spilled()) or have a bulk, leaves as it fits best.
void batch_commit(int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload);

// Posts the bytes `payload` holds (written elsewhere, e.g. on the stack): copied into a batch, or
// into a message of their own.
void post_copy(int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload);

// Fills a fresh message through `write(byte_writer&)` and posts it. Counted messages from a
// worker are batched (flags == 0).
template <class Write>
void post_new(int dest, std::uint64_t handler, std::uint64_t token, Write&& write,
              std::uint32_t flags = 0) {
    std::size_t room = 0;
    if (std::byte* at = flags == 0 ? batch_begin(dest, room) : nullptr) {
        byte_writer w(at, room, eager_capacity());
        write(w);
        return batch_commit(dest, handler, token, w);
    }
    message* m = acquire_message();
    try {
        byte_writer w(m->inline_data(), eager_capacity(), eager_capacity());
        write(w);
        post(m, dest, handler, token, w, flags);
    } catch (...) {
        release_message(m);
        throw;
    }
}

} // namespace prema::detail
