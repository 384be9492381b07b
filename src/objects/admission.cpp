// Admission: a message reaches the record of the object living here and joins its ready queue
// in the order its origin sent it; early ones wait, duplicates are dropped, and a message that
// finds the object gone is routed on.
#include "objects/layer.hpp"
#include "runtime/log.hpp"

namespace prema::detail::objects {

void note_forwarded(const object_header& h, const object_record& rec) {
    // Lazy update: the origin learns where the object is from its forwarded message.
    if (h.hops == 0)
        return;
    if (int here = rank(); h.origin != here)
        post_update(h.origin, h.id, here, rec.moves);
}

void admit_early(object_record& rec, std::int32_t origin, std::uint64_t& expected) {
    if (rec.early.empty()) // the usual case: messages arrive in order
        return;
    for (auto it = rec.early.find({origin, expected}); it != rec.early.end();
         it = rec.early.find({origin, expected})) {
        // A cancelled request only held its place in the order.
        if (it->second.header.op != object_op::cancelled)
            rec.ready.push_back(std::move(it->second));
        ++expected;
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
        auto& expected = rec->expected[origin];
        if (e.header.seq < expected) {
            log().debug("duplicate message {} from rank {} to {} dropped", e.header.seq, origin,
                        describe(rec->id));
            return;
        }
        if (e.header.seq > expected) {
            rec->early.emplace(std::pair(origin, e.header.seq), std::move(e));
            return;
        }
        if (e.header.op != object_op::cancelled)
            rec->ready.push_back(std::move(e));
        ++expected;
        admit_early(*rec, origin, expected);
        // Behind an exclusive handler nothing can start: the handler's end schedules them.
        if (rec->exclusive_running) {
            notify_balancer(*rec);
            return;
        }
    }
    schedule(rec);
}

} // namespace prema::detail::objects
