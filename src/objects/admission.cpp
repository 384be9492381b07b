// Admission: a message reaches the record of the object living here and joins its ready queue
// in the order its origin sent it; early ones wait, duplicates are dropped, and a message that
// finds the object gone is routed on.
#include "objects/layer.hpp"
#include "runtime/log.hpp"

namespace prema::detail::objects {

// In-order admission: early messages wait, duplicates are dropped.
void accept(const record_ptr& rec, object_entry e) {
    int here = rank();
    if (e.header.hops > 0 && e.header.origin != here) {
        // Lazy update: the origin learns where the object is from its forwarded message.
        post_update(e.header.origin, e.header.id, here, rec->moves);
    }
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
        // A cancelled request only held its place in the order.
        auto admit = [&](object_entry&& in_order) {
            if (in_order.header.op != object_op::cancelled)
                rec->ready.push_back(std::move(in_order));
            ++expected;
        };
        admit(std::move(e));
        for (auto it = rec->early.find({origin, expected}); it != rec->early.end();
             it = rec->early.find({origin, expected})) {
            admit(std::move(it->second));
            rec->early.erase(it);
        }
    }
    schedule(rec);
}

} // namespace prema::detail::objects
