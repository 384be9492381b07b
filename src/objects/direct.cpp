// The direct path: a message that a worker receives for an object living on its rank runs at
// once on that worker when nothing can come before it: it is next in its origin's order,
// nothing waits on the object ahead of it, and the access it asks for is free. The queued path
// (ready queue, the policy's queue, a worker's claim, the balancer's bookkeeping at each step)
// costs more than the transport and the handler together and has nothing to decide when the
// rank has nothing else to do: the order is kept, and the handler would start on whichever
// worker is free, which this one is. With other work about (queued items, pending handlers,
// the rest of a batch) messages take the queued path, where the balancer sees them and may
// move their objects to an idle rank and other workers may take them, unless the rank has a
// single worker and no policy balances (may_run_here): the queued path would then only run
// the same handlers in the same order on the same worker, later.
#include "lb/balancer.hpp"
#include "objects/layer.hpp"

namespace prema::detail::objects {

bool run_now(const object_header& h, std::span<const std::byte> args, const incoming& in) {
    if (h.op != object_op::user || !may_run_here(in.more_in_batch))
        return false;
    const auto* handler = find_object_handler(h.handler);
    if (!handler)
        return false;
    record_ptr rec = layer().dir.find(h.id).local;
    if (!rec)
        return false;
    double load = 0;
    bool queued_behind = false;
    {
        std::lock_guard lock(rec->mutex);
        if (rec->gone_to != -1 || !rec->ready.empty() || !rec->handed.empty() ||
            !may_start(*rec, handler->mode))
            return false;
        auto& expected = rec->expected[h.origin];
        if (h.seq != expected)
            return false;
        read_weight(*rec);
        load = handler_load(*rec);
        grant(*rec, handler->mode);
        ++rec->started;
        ++expected;
        admit_early(*rec, h.origin, expected);
        queued_behind = !rec->ready.empty();
    }
    if (queued_behind)
        schedule(rec);
    note_forwarded(h, *rec);
    layer().direct_runs.fetch_add(1, std::memory_order_relaxed);
    current_balancer().started(load);
    if (handler->run) {
        run_plain(rec, *handler, object_call{rec->object, h.origin, in.token, args, in.bulk},
                  handler->mode, load);
    } else {
        // The coroutine outlives the message it came in: it owns its arguments.
        object_entry e{h, in.token, byte_vector(args.begin(), args.end()), {}};
        if (in.bulk)
            e.bulk = std::move(*in.bulk);
        start_handler(std::move(rec), handler, std::move(e), handler->mode, load);
    }
    return true;
}

} // namespace prema::detail::objects

std::uint64_t prema::detail::direct_run_count() noexcept {
    return objects::layer().direct_runs.load(std::memory_order_relaxed);
}
