// Runs received messages on a worker: one message, or every message of a batch in the order
// they were sent, each through its handler's invoker, with no copy and no queue hop in between.

#include <fmt/format.h>

#include "prema/transport/handler.hpp"
#include "transport/observe.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {

// `e`: the handler `handler` names, or nullptr if this binary has none by that id.
void run_one(const handler_entry* e, std::uint64_t handler, const incoming& in) {
    if (e) {
        // The last message of what arrived, and nothing else to run on this rank: its handler's
        // first message need not wait in a batch for the worker to go idle.
        worker_outbox* o = tls_outbox;
        if (o)
            o->send_now = !in.more_in_batch() && only_work_here();
        // Typed handlers report their own failures; a system handler's throw means bad input.
        double begin = observing() ? observe_now_us() : 0;
        try {
            e->invoke(in);
        } catch (const std::exception& x) {
            report_error(fmt::format("handler {} refused a message from rank {}: {}", e->name,
                                     in.source, x.what()));
        }
        if (o)
            o->send_now = false;
        if (observing())
            note_handler(e->name, in.source, begin, observe_tid());
        return;
    }
    auto why = wire_error(fmt::format(
        "rank {} has no handler with id {:#x} (message from rank {}); a handler is known to a "
        "binary only if that binary sends or calls it somewhere",
        state().rank, handler, in.source));
    if (in.token)
        reply_error(in.source, in.token, fmt::format("id {:#x}", handler),
                    std::make_exception_ptr(why));
    else
        report_error(why.what());
}

// The progress engine checked the layout (check_batch) before delivering it.
void run_batch(const wire_header& h, std::span<const std::byte> payload) {
    batch_reader items(payload.subspan(sizeof(batch_prefix)));
    // A batch usually repeats a few handlers: look each up once per run of equal ids.
    std::uint64_t looked_up = 0;
    const handler_entry* e = nullptr;
    batch_item item;
    std::span<const std::byte> args;
    // A handler may take the items after its own (incoming::take_next): the loop goes on after
    // them. check_batch made sure the prefix's count of items fills the payload exactly.
    while (items.next(item, args)) {
        const bool noting = observing();
        if (noting)
            note_receive(h.source, item.handler, sizeof item + item.payload_bytes);
        if (item.handler != looked_up || !e) {
            e = find_handler(item.handler);
            looked_up = item.handler;
        }
        if (item.more > 0 && e && !e->takes_runs) [[unlikely]] {
            report_error(fmt::format("handler {} takes no runs, and rank {} sent it {} messages "
                                     "in one batch item",
                                     e->name, h.source, std::uint64_t(item.more) + 1));
            continue;
        }
        run_one(e, item.handler,
                incoming{h.source, item.token, args, nullptr, &items, !noting, item.more});
    }
}

} // namespace

void dispatch_message(void* arg) {
    auto* m = static_cast<message*>(arg);
    auto& h = m->header();
    if (h.flags & flag_batch)
        run_batch(h, m->payload());
    else
        run_one(
            find_handler(h.handler), h.handler,
            incoming{h.source, h.token, m->payload(), h.flags & flag_bulk ? &m->split : nullptr});
    auto& st = state();
    st.pool.release(m);
    st.engine->dispatched();
}

} // namespace prema::detail
