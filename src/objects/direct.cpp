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
#include <cassert>
#include <cstring>

#include "objects/balancer_link.hpp"
#include "objects/layer.hpp"
#include "objects/wire_decode.hpp"

namespace prema::detail::objects {

namespace {

// A plain handler that ran here and ended while the next message of its batch is an object
// message too (incoming::next_in_batch_for): this worker keeps its access until that message
// has been looked at. If it is for the same object, next in its origin's order and asks the same
// access, it runs under the same grant with one look at the record, instead of giving the
// access back, finding the record in the directory and granting it again (and the messages
// after it that claim_ahead took with it run with no look at all). Anything else gives it back
// first (release_held), and the last object message of a run always does, so no grant outlives
// its batch. The held handler still counts as started: the object cannot move meanwhile.
struct held_grant {
    record_ptr rec; // null: nothing held (set from the grant on, while the handler runs too)
    const object_handler_entry* handler = nullptr;
    std::int32_t origin = -1;
    origin_order* order = nullptr; // rec->expected[origin]: a map's element stays put
    double load = 0;
    std::uint64_t busy = 0;        // the ended handler's running time, learnt at the next look
    std::uint64_t runs = 0;        // direct runs not yet added to layer().direct_runs
    std::uint32_t claimed = 0;     // the batch's next messages, admitted already (claim_ahead)
    std::uint32_t run_claimed = 0; // the run's next messages, admitted already (claim_run)
};
thread_local held_grant held;

// Direct runs are counted in held.runs and added to the rank's count after the worker's item
// (flush_direct_runs). Off the workers (the progress thread runs handlers when it shares their
// cores) nothing calls that, so they go at once.
//
// The rank's count is a worker_count: an add to one shared count was a locked instruction on
// every item, about 7 ns of a lone object hop.
void note_direct_runs() {
    if (!tls_outbox)
        flush_direct_runs();
}

void release_held() {
    record_ptr rec = std::move(held.rec);
    note_direct_runs();
    finish_plain(rec, held.handler->mode, held.load, held.busy);
}

// The messages right after `h` in its batch that may run under its grant with no look at the
// record: the same object, origin and handler, next in order, not forwarded. Their sequence
// numbers are taken now, with `h`'s (record locked, `order` already past `h`), so a flood
// to one object pays one lock per batch, not per message. Not while measuring, which learns
// each run under the lock, nor with early messages held, which this would leave behind.
std::uint32_t claim_ahead(const object_record& rec, const object_header& h, origin_order& order,
                          const incoming& in) {
    if (measuring() || !rec.early.empty())
        return 0;
    batch_reader items(in.rest_of_batch());
    batch_item item;
    std::span<const std::byte> payload;
    std::uint32_t n = 0;
    while (items.next(item, payload) && item.handler == message_id() && item.more == 0 &&
           payload.size() >= sizeof(object_header)) {
        object_header next;
        std::memcpy(&next, payload.data(), sizeof next);
        if (next.id != h.id || next.origin != h.origin || next.handler != h.handler ||
            next.op != object_op::user || next.hops != 0 || !next_in_order(order, next))
            break;
        ++order.next;
        ++n;
    }
    return n;
}

// The same for the rest of the run `h` came in (runs.cpp): its messages are numbered right
// after `h` by the run's layout, so only their handler needs a look.
std::uint32_t claim_run(const object_record& rec, const object_header& h, origin_order& order,
                        const object_run_reader* run) {
    if (!run || measuring() || !rec.early.empty())
        return 0;
    object_run_reader ahead = *run;
    object_header next;
    std::span<const std::byte> args;
    std::uint32_t n = 0;
    while (ahead.next(next, args) && next.handler == h.handler)
        ++n;
    order.next += n;
    return n;
}

// Both: what may run with `h` under its grant (record locked, `order` already past `h`).
void claim_with(const object_record& rec, const object_header& h, origin_order& order,
                const incoming& in, const object_run_reader* run) {
    held.run_claimed = claim_run(rec, h, order, run);
    // The batch's next messages come after the whole run.
    if (!run || held.run_claimed == run->left())
        held.claimed = claim_ahead(rec, h, order, in);
}

// Runs the handler under held.rec's access and keeps the access for the next message of the
// run or batch if an object message follows, else gives it back. `order`: the origin's order
// in the record.
void run_direct(const object_handler_entry& handler, const object_header& h, origin_order* order,
                std::span<const std::byte> args, const incoming& in, double load,
                object_run_reader* run) {
    auto& rec = held.rec;
    held.busy =
        invoke_plain(rec, handler, object_call{rec->object, h.origin, in.token, args, in.bulk});
    ++held.runs;
    object_header next;
    while (held.run_claimed && run->next(next, args)) {
        --held.run_claimed;
        held.busy =
            invoke_plain(rec, handler, object_call{rec->object, h.origin, 0, args, nullptr});
        ++held.runs;
    }
    // The messages claimed with this one run here too, taken from the batch: the transport's
    // dispatch and this layer's look at each would only find what claim_ahead found.
    batch_item item;
    std::span<const std::byte> payload;
    while (held.claimed && in.take_next(item, payload)) {
        --held.claimed;
        held.busy = invoke_plain(rec, handler,
                                 object_call{rec->object, h.origin, item.token,
                                             payload.subspan(sizeof(object_header)), nullptr});
        ++held.runs;
    }
    held.handler = &handler;
    held.origin = h.origin;
    held.order = order;
    held.load = load;
    if (!(run && run->left()) && !in.next_in_batch_for(message_id()))
        release_held();
}

// The message under the held grant, if it may run there (see held_grant).
bool run_held(const object_header& h, std::span<const std::byte> args, const incoming& in,
              object_run_reader* run) {
    auto& rec = *held.rec;
    assert(held.run_claimed == 0);
    if (held.claimed) { // admitted with an earlier message of the batch, from these bytes
        assert(h.id == rec.id && h.origin == held.origin && h.handler == held.handler->id);
        --held.claimed;
        run_direct(*held.handler, h, held.order, args, in, held.load, run);
        return true;
    }
    if (rec.id != h.id || h.op != object_op::user)
        return false;
    const auto* handler =
        h.handler == held.handler->id ? held.handler : find_object_handler(h.handler);
    if (!handler || !handler->run || handler->mode != held.handler->mode)
        return false;
    double load = 0;
    bool queued_behind = false;
    // The held origin's order as it stands: a message of a newer stream takes the queued path.
    origin_order* order = h.origin == held.origin ? held.order : nullptr;
    {
        std::lock_guard lock(rec.mutex);
        if (rec.gone_to != -1 || !rec.ready.empty() || !rec.handed.empty())
            return false;
        if (!order)
            order = &order_of(rec, h);
        if (!next_in_order(*order, h))
            return false;
        if (measuring())
            learn(rec.history, held.busy, rec.weight);
        ++order->next;
        claim_with(rec, h, *order, in, run);
        admit_early(rec, h.origin, *order);
        load = handler_load(rec);
        queued_behind = !rec.ready.empty();
    }
    if (queued_behind)
        schedule(held.rec);
    note_forwarded(h, rec);
    if (load != held.load) { // one handler follows another: the running count stays
        auto& lb = current_balancer();
        lb.finished(held.load);
        lb.started(load);
    }
    run_direct(*handler, h, order, args, in, load, run);
    return true;
}

} // namespace

bool run_now(const object_header& h, std::span<const std::byte> args, const incoming& in,
             object_run_reader* run) {
    if (held.rec) {
        if (run_held(h, args, in, run))
            return true;
        release_held();
    }
    if (h.op != object_op::user || !may_run_here(in.more_in_batch() || (run && run->left())))
        return false;
    const auto* handler = find_object_handler(h.handler);
    if (!handler)
        return false;
    object_record* rec = layer().dir.local_record(h.id);
    if (!rec)
        return false;
    double load = 0;
    bool queued_behind = false;
    origin_order* order = nullptr;
    {
        std::lock_guard lock(rec->mutex);
        if (rec->gone_to != -1 || !rec->ready.empty() || !rec->handed.empty() ||
            !may_start(*rec, handler->mode))
            return false;
        order = &order_of(*rec, h);
        if (!next_in_order(*order, h))
            return false;
        read_weight(*rec);
        load = handler_load(*rec);
        grant(*rec, handler->mode);
        ++rec->started;
        ++order->next;
        if (handler->run)
            claim_with(*rec, h, *order, in, run);
        admit_early(*rec, h.origin, *order);
        queued_behind = !rec->ready.empty();
    }
    if (queued_behind)
        schedule(rec->shared_from_this());
    note_forwarded(h, *rec);
    current_balancer().started(load);
    if (handler->run) {
        held.rec = rec->shared_from_this();
        run_direct(*handler, h, order, args, in, load, run);
        return true;
    }
    ++held.runs;
    note_direct_runs();
    const object_call call{rec->object, h.origin, in.token, args, in.bulk};
    start_task(*rec, *handler, call, handler->mode, load);
    return true;
}

void end_direct_run() {
    if (held.rec)
        release_held();
}

void flush_direct_runs() noexcept {
    if (held.runs)
        layer().direct_runs.add(std::exchange(held.runs, 0));
}

} // namespace prema::detail::objects

std::uint64_t prema::detail::direct_run_count() noexcept {
    return objects::layer().direct_runs.load();
}
