// Runs of object messages, the sending side. A flood of small messages to one object (a
// counter, an accumulator, a mesh block receiving its neighbours' updates) sent each with its
// own batch item and object header takes 24 + 56 bytes of framing per message; the sender is
// then bound by the bytes it writes and the receiver by those it copies and reads (a function
// handler's 16-byte message rate fell from 34 to 24 M msgs/s when its payload was padded to
// the object message's 96 bytes, 2026-11-29). A message to the object the batch's last item
// is for, numbered right after it, joins that item as a run instead (batch_item::more): 16
// bytes of framing and its arguments. The receiver rebuilds each message's header from the
// run's (objects/wire_decode.hpp) and admits the run with one look at the record.
//
// Only the worker's own open batch is touched (its thread alone writes it), and only while the
// transport would batch the message anyway (open_lane), so a run never delays a message.
#include <cstring>

#include "objects/layer.hpp"
#include "objects/wire_decode.hpp"

namespace prema::detail {

object_run_place object_run_room(const object_send_slot& slot, std::size_t bytes) noexcept {
    batch_lane* lane = open_lane(slot.dest);
    // Observing notes each message's bytes as it joins: runs would blur them.
    if (!lane || tls_outbox->observing)
        return {};
    std::uint32_t more = 0;
    auto item = last_item_payload(*lane, objects::message_id(), more);
    if (item.size() < sizeof(object_header))
        return {};
    object_header first;
    std::memcpy(&first, item.data(), sizeof first);
    const auto& h = slot.header;
    // One stream of one origin's numbers to one object, at the same place: the receiver
    // numbers the run's messages from the first one's.
    if (first.id != h.id || first.origin != h.origin || first.op != object_op::user ||
        first.hops != 0 || first.stream != h.stream || first.moves != h.moves ||
        first.seq + more + 1 != h.seq)
        return {};
    // A lone message becomes a run by giving its arguments an entry: room for it first.
    const std::size_t entry = sizeof(object_run_entry);
    std::byte* end = lane->msg->inline_data() + lane->used; // past the item, padded
    const std::size_t room = lane->capacity - lane->used;
    const std::size_t ahead = (more == 0 ? entry : 0) + entry;
    if (room < ahead + bytes)
        return {};
    return {end + ahead, lane, more};
}

void join_object_run(const object_run_place& place, const object_send_slot& slot,
                     std::size_t bytes) {
    auto& lane = *place.lane;
    std::byte* payload = lane.msg->inline_data() + lane.last + sizeof(batch_item);
    const std::size_t entry = sizeof(object_run_entry);
    if (place.more == 0) {
        // [header][arguments] -> [header][entry][arguments]: the first message's arguments
        // move up by an entry, which the padding and the room reserved above make space for.
        object_header first;
        std::memcpy(&first, payload, sizeof first);
        std::uint32_t first_bytes = 0;
        std::memcpy(&first_bytes,
                    payload - sizeof(batch_item) + offsetof(batch_item, payload_bytes),
                    sizeof first_bytes);
        first_bytes -= std::uint32_t(sizeof first);
        std::memmove(payload + sizeof first + entry, payload + sizeof first, first_bytes);
        const object_run_entry e{first.handler, first_bytes, 0};
        std::memcpy(payload + sizeof first, &e, sizeof e);
    }
    const object_run_entry e{slot.header.handler, std::uint32_t(bytes), 0};
    std::memcpy(place.args - entry, &e, sizeof e);
    grow_last_item(lane, slot.dest, objects::message_id(),
                   std::size_t(place.args - payload) + bytes, bytes);
}

} // namespace prema::detail
