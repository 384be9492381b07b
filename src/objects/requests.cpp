// Requests to objects as their callers see them: naming what a suspended call awaits.
#include "objects/requests.hpp"

#include <fmt/format.h>

#include "objects/layer.hpp"

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
    }
    return "an unknown request to " + describe(t.object);
}

} // namespace

std::string describe_object_request(const object_target& t, int dest) {
    return fmt::format("{} (sent to rank {})", request_name(t), dest);
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
