// Pure decoders of the object layer's messages, callable without MPI (the fuzzer and unit
// tests use them; the object layer's handlers do too).
#pragma once

#include <cstdint>
#include <span>

#include "objects/object_record.hpp"

namespace prema::detail {

// An object message: the object header, then the handler's arguments. Throws wire_error when
// shorter than the header.
struct object_message_view {
    object_header header;
    std::span<const std::byte> args;
};
object_message_view view_object_message(std::span<const std::byte> payload);
object_entry decode_object_message(std::span<const std::byte> payload, std::uint64_t token);

// A migration payload. `record->object` is a new object of `record->type` that the caller owns
// (free it with type->destroy). Throws wire_error when the payload is short, garbled or names
// an unknown object type.
struct decoded_install {
    record_ptr record;
    std::int32_t reply_to = -1;
    std::uint64_t token = 0; // nonzero: the migrating rank awaits a reply
};
decoded_install decode_install(std::span<const std::byte> payload);

} // namespace prema::detail
