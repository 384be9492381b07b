#include "transport/wire_check.hpp"

#include <fmt/format.h>

namespace prema::detail {

std::string check_header(const wire_header& h, int byte_count, int source, const config& cfg) {
    int count = byte_count;
    if (count < 0 || std::size_t(count) < sizeof(wire_header))
        return fmt::format("truncated header: {} bytes, a header has {}", count,
                           sizeof(wire_header));
    if (h.magic != wire_magic)
        return fmt::format("garbled header: magic {:#x} is not PREMA's {:#x}", h.magic, wire_magic);
    if (h.source != source)
        return fmt::format("garbled header: claims to come from rank {}", h.source);
    if (h.payload_bytes > cfg.max_message_bytes)
        return fmt::format("payload of {} bytes is above --prema-max-message-bytes={}",
                           h.payload_bytes, cfg.max_message_bytes);
    if (!(h.flags & flag_split)) {
        if (h.payload_bytes != std::uint64_t(count) - sizeof(wire_header))
            return fmt::format("garbled header: says {} payload bytes, carries {}", h.payload_bytes,
                               count - int(sizeof(wire_header)));
        return {};
    }
    if (std::size_t(count) != sizeof(wire_header) || h.payload_tag < wire_first_payload_tag)
        return "garbled split-phase header";
    return {};
}

} // namespace prema::detail
