// Requests to objects as their callers see them: naming what a suspended call awaits, and the
// error of a handler that asks its own object for access it can never get.
#include "objects/requests.hpp"

#include <cstring>

#include <fmt/format.h>

#include "objects/layer.hpp"
#include "prema/error.hpp"

namespace prema::detail {

using namespace objects;

namespace {

const char* mode_name(access mode) {
    return mode == access::exclusive ? "exclusive" : "shared";
}

std::string handler_of(std::uint64_t id) {
    auto* h = find_object_handler(id);
    return h ? h->name : fmt::format("{:#x} (unknown here)", id);
}

std::string request_name(const object_target& t) {
    switch (t.op) {
    case object_op::user:
        return fmt::format("handler {} on {}", handler_of(t.handler), describe(t.object));
    case object_op::migrate:
        return fmt::format("the migration of {} to rank {}", describe(t.object), t.to);
    case object_op::destroy:
        return "the destruction of " + describe(t.object);
    case object_op::acquire:
        return fmt::format("{} access to {} (prema::acquire)", mode_name(t.mode),
                           describe(t.object));
    case object_op::cancelled:
    case object_op::skip:
        break;
    }
    return "an unknown request to " + describe(t.object);
}

} // namespace

std::string describe_object_request(const object_target& t, int dest) {
    return fmt::format("{} (sent to rank {})", request_name(t), dest);
}

void run_after_handler(const held_access& held, const object_target& t) {
    object_entry e;
    e.header = object_header{t.object, 0, 0, rank(), 0, t.op, 0, 0};
    if (t.op == object_op::migrate) {
        std::int32_t to = t.to;
        e.payload.resize(sizeof to);
        std::memcpy(e.payload.data(), &to, sizeof to);
    }
    // Local: the handler holds the object here, so it can neither move nor go away meanwhile.
    auto rec = layer().dir.find(held.object).local;
    std::lock_guard lock(rec->mutex);
    rec->ready.push_front(std::move(e)); // the handler's finish() schedules it
}

void refuse_own_object_request(const held_access& held, const object_target& t) {
    auto holder = handler_of(held.handler);
    auto holds = fmt::format("which holds {} {}", describe(held.object),
                             held.mode == access::exclusive ? "exclusively" : "shared");
    if (t.op == object_op::acquire)
        throw usage_error(fmt::format(
            "prema::acquire of {} access to {} from its handler {}, {}, would wait for itself: "
            "the access is granted only once {} has ended (the handler has the object already)",
            mode_name(t.mode), describe(t.object), holder, holds, holder));
    throw usage_error(fmt::format(
        "prema::call of handler {} from handler {}, {}, would wait for itself: the call runs only "
        "once {} has ended (call the function on the object the handler has, or prema::send it)",
        handler_of(t.handler), holder, holds, holder));
}

std::string describe_awaited_call(const pending_call& c) {
    auto who = c.caller ? fmt::format("handler {} of {}", handler_of(c.caller->handler),
                                      describe(c.caller->object))
                        : std::string("a coroutine outside object handlers (entry or spawned)");
    auto what = c.describe ? c.describe(c)
                           : fmt::format("handler {} on rank {}", handler_name(c.handler), c.dest);
    return who + " awaits " + what;
}

} // namespace prema::detail
