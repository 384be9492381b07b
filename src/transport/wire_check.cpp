#include "transport/wire_check.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

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
    std::uint64_t inline_bytes = std::uint64_t(count) - sizeof(wire_header);
    // With a bulk, the arguments travel inline beside the split-phase payload.
    std::uint64_t bytes = h.payload_bytes;
    if ((h.flags & flag_bulk) && bytes <= cfg.max_message_bytes)
        bytes += inline_bytes;
    if (bytes > cfg.max_message_bytes)
        return fmt::format("payload of {} bytes is above --prema-max-message-bytes={}", bytes,
                           cfg.max_message_bytes);
    if ((h.flags & flag_batch) && (h.flags & (flag_split | flag_urgent | flag_uncounted)))
        return "garbled header: a batch is never split, urgent or uncounted";
    if ((h.flags & flag_bulk) && !(h.flags & flag_split))
        return "garbled header: a bulk is always split-phase";
    if (!(h.flags & flag_split)) {
        if (h.payload_bytes != inline_bytes)
            return fmt::format("garbled header: says {} payload bytes, carries {}", h.payload_bytes,
                               count - int(sizeof(wire_header)));
        return {};
    }
    if ((!(h.flags & flag_bulk) && inline_bytes != 0) || h.payload_tag < wire_first_payload_tag)
        return "garbled split-phase header";
    if ((h.flags & flag_bulk) && h.payload_bytes == 0)
        return "garbled header: an empty bulk";
    return {};
}

bool payload_follows(const wire_header& h, int byte_count, int source, int max_tag) {
    return byte_count >= int(sizeof(wire_header)) && h.magic == wire_magic && h.source == source &&
           (h.flags & flag_split) && h.payload_tag >= wire_first_payload_tag &&
           h.payload_tag <= max_tag;
}

std::uint32_t counted_by_sender(const wire_header& h, int byte_count) {
    constexpr int flags_end = int(offsetof(wire_header, flags) + sizeof h.flags);
    if (byte_count < flags_end)
        return 1;
    if (h.flags & flag_uncounted)
        return 0;
    if (!(h.flags & flag_batch) || byte_count < int(sizeof h + sizeof(batch_prefix)))
        return 1;
    batch_prefix prefix;
    std::memcpy(&prefix, reinterpret_cast<const std::byte*>(&h + 1), sizeof prefix);
    return prefix.count;
}

std::string check_batch(std::span<const std::byte> payload, std::uint32_t& count) {
    count = 0;
    if (payload.size() < sizeof(batch_prefix))
        return fmt::format("truncated batch: {} bytes", payload.size());
    batch_prefix prefix;
    std::memcpy(&prefix, payload.data(), sizeof prefix);
    std::size_t at = sizeof prefix;
    // Messages walked so far: each item's own and its run's (batch_item::more).
    std::uint64_t messages = 0;
    for (std::uint32_t i = 0; at < payload.size(); ++i) {
        if (payload.size() - at < sizeof(batch_item))
            return fmt::format("truncated batch: item {} starts past the end", i);
        batch_item item;
        std::memcpy(&item, payload.data() + at, sizeof item);
        at += sizeof item;
        if (item.payload_bytes > payload.size() - at)
            return fmt::format("garbled batch: item {} says {} bytes, {} left", i,
                               item.payload_bytes, payload.size() - at);
        if (item.more > 0 && item.token != 0)
            return fmt::format("garbled batch: item {} is a run of {} messages with a token", i,
                               std::uint64_t(item.more) + 1);
        at += std::min(batch_padded(item.payload_bytes), payload.size() - at);
        messages += std::uint64_t(item.more) + 1;
        if (messages > prefix.count)
            return fmt::format("garbled batch: more than the {} messages its prefix says",
                               prefix.count);
    }
    if (messages < prefix.count)
        return fmt::format("truncated batch: it ends after {} of its {} messages", messages,
                           prefix.count);
    count = prefix.count;
    return {};
}

} // namespace prema::detail
