// Admission: a message reaches the record of the object living here and joins its ready queue
// in the order its origin sent it (its stream, then its number in it); early ones wait,
// duplicates are dropped, and a message that finds the object gone is routed on.
#include <algorithm>

#include "base/log.hpp"
#include "objects/layer.hpp"

namespace prema::detail::objects {

void note_forwarded(const object_header& h, const object_record& rec) {
    // Lazy update: the origin learns where the object is from its forwarded message.
    if (h.hops == 0)
        return;
    if (int here = rank(); h.origin != here)
        post_update(h.origin, h.id, here, rec.moves);
}

origin_order& order_of(object_record& rec, const object_header& h) {
    auto& o = rec.expected[h.origin];
    const auto epoch = current_epoch();
    if (h.stream > o.stream)
        o = {h.stream, 0, epoch};
    else
        o.seen = std::max(o.seen, epoch);
    return o;
}

bool order_needed(const object_record& rec, std::int32_t origin, const origin_order& o,
                  std::uint64_t epoch) {
    if (epoch < o.seen + 4)
        return true;
    auto held = rec.early.lower_bound({origin, 0});
    return held != rec.early.end() && held->first.first == origin;
}

void collect_orders(object_record& rec, std::uint64_t epoch) {
    std::erase_if(rec.expected, [&](const auto& item) {
        return !order_needed(rec, item.first, item.second, epoch);
    });
}

void admit_early(object_record& rec, std::int32_t origin, origin_order& order) {
    if (rec.early.empty()) // the usual case: messages arrive in order
        return;
    for (auto it = rec.early.find({origin, order.next}); it != rec.early.end();
         it = rec.early.find({origin, order.next})) {
        // A cancelled request or a skip only held its place in the order.
        order.next += numbers_held(it->second.header);
        if (!holds_place_only(it->second.header))
            rec.ready.push_back(std::move(it->second));
        rec.early.erase(it);
    }
}

// In-order admission: early messages wait, duplicates are dropped.
void accept(const record_ptr& rec, object_entry e) {
    note_forwarded(e.header, *rec);
    {
        std::unique_lock lock(rec->mutex);
        if (rec->gone_to == -2) {
            lock.unlock();
            return fail(e, describe(rec->id) + " was destroyed");
        }
        if (rec->gone_to >= 0) {
            int dest = rec->gone_to;
            lock.unlock();
            return forward(std::move(e), dest, rec->moves + 1);
        }
        auto origin = e.header.origin;
        auto& order = order_of(*rec, e.header);
        if (e.header.stream < order.stream || e.header.seq < order.next) {
            log().debug("duplicate message {} (stream {}) from rank {} to {} dropped", e.header.seq,
                        e.header.stream, origin, describe(rec->id));
            return;
        }
        if (e.header.seq > order.next) {
            rec->early.emplace(std::pair(origin, e.header.seq), std::move(e));
            return;
        }
        order.next += numbers_held(e.header);
        if (!holds_place_only(e.header))
            rec->ready.push_back(std::move(e));
        admit_early(*rec, origin, order);
        // Behind an exclusive handler nothing can start: the handler's end schedules them.
        if (rec->exclusive_running) {
            notify_balancer(*rec);
            return;
        }
    }
    schedule(rec);
}

} // namespace prema::detail::objects
