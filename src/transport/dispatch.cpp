#include <fmt/format.h>

#include "prema/transport/handler.hpp"
#include "runtime/observe.hpp"
#include "runtime/runtime_state.hpp"

namespace prema::detail {

void dispatch_message(void* arg) {
    auto* m = static_cast<message*>(arg);
    auto& h = m->header();
    incoming in{h.source, h.token, m->payload()};
    if (auto* e = find_handler(h.handler)) {
        // Typed handlers report their own failures; a system handler's throw means bad input.
        double begin = observing() ? observe_now_us() : 0;
        try {
            e->invoke(in);
        } catch (const std::exception& x) {
            report_error(fmt::format("handler {} refused a message from rank {}: {}", e->name,
                                     h.source, x.what()));
        }
        if (observing())
            note_handler(e->name, h.source, begin, observe_tid());
    } else {
        auto why = wire_error(fmt::format(
            "rank {} has no handler with id {:#x} (message from rank {}); a handler is known to "
            "a binary only if that binary sends or calls it somewhere",
            state().rank, h.handler, h.source));
        if (h.token)
            reply_error(h.source, h.token, fmt::format("id {:#x}", h.handler),
                        std::make_exception_ptr(why));
        else
            report_error(why.what());
    }
    state().pool.release(m);
}

} // namespace prema::detail
