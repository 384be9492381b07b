// Pure decoders of the object layer's messages, callable without MPI (the fuzzer and unit
// tests use them; the object layer's handlers do too).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "objects/object_record.hpp"

namespace prema::detail {

// An object message: the object header, then the handler's arguments. Throws wire_error when
// shorter than the header.
struct object_message_view {
    object_header header;
    std::span<const std::byte> args;
};
object_message_view view_object_message(std::span<const std::byte> payload);

// A run of object messages (an item with batch_item::more > 0, written by objects/runs.cpp):
// the first message's header, then per message an object_run_entry and its arguments, padded
// to 8 bytes but for the last. The messages are for one object from one origin, numbered from
// the header's seq on; the entry names each one's handler.
struct object_run_entry {
    std::uint64_t handler;
    std::uint32_t bytes;
    std::uint32_t reserved;
};
static_assert(sizeof(object_run_entry) == 16);

class object_run_reader {
  public:
    // Throws wire_error unless `payload` is a run of exactly `count` messages.
    object_run_reader(std::span<const std::byte> payload, std::uint32_t count);
    // The next message: its header and arguments; false after the last.
    bool next(object_header& h, std::span<const std::byte>& args) noexcept;
    std::uint32_t left() const noexcept { return left_; }

  private:
    object_header first_;
    std::span<const std::byte> rest_; // the entries not read yet
    std::uint32_t read_ = 0, left_ = 0;
};
object_entry decode_object_message(std::span<const std::byte> payload, std::uint64_t token);

// Who waits for a move: answered once the object is installed where the move takes it.
struct move_waiter {
    std::int32_t origin = -1;
    std::uint64_t token = 0; // 0: nobody awaits (a failure is reported instead)
};
// Its bytes on the wire: origin, then token.
inline constexpr std::size_t move_waiter_bytes = sizeof(std::int32_t) + sizeof(std::uint64_t);

// A migrate entry's arguments: the rank to move to, then the earlier moves taken as one with
// this one (serve_move, migration.cpp). nullopt when garbled.
struct move_request {
    std::int32_t dest = -1;
    std::vector<move_waiter> merged;
};
std::optional<move_request> decode_move(std::span<const std::byte> args);
// Appends `w` to a migrate entry's arguments, as decode_move reads them back.
void append_move_waiter(byte_vector& args, const move_waiter& w);

// A migration payload. `record->object` is a new object of `record->type` that the caller owns
// (free it with type->destroy). Throws wire_error when the payload is short, garbled or names
// an unknown object type.
struct decoded_install {
    record_ptr record;
    std::vector<move_waiter> waiters; // the moves it completes
};
decoded_install decode_install(std::span<const std::byte> payload);

} // namespace prema::detail
