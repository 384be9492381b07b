// The object layer's state, and an object's life on this rank: creation, destruction, and
// freeing what remains when the runtime shuts down.
#include "objects/layer.hpp"

#include <fmt/format.h>

#include "prema/objects/objects.hpp"

namespace prema::detail {

std::atomic<std::int64_t>& ready_backlog() noexcept {
    static std::atomic<std::int64_t> handlers{0};
    return handlers;
}

namespace objects {

layer_state& layer() {
    static layer_state l;
    return l;
}

std::string describe(object_id id) {
    return fmt::format("object <{}:{}>", id.creator, id.serial);
}

void destroy_object(object_record& rec, const object_entry& request) {
    forget_address(rec);
    rec.type->destroy(rec.object);
    rec.object = nullptr;
    rec.gone_to = -2;
    layer().dir.set_destroyed(rec.id);
    current_balancer().notify({rec.id, 0, 0});
    if (request.token)
        reply_void(request.header.origin, request.token);
    for (auto& e : rec.ready)
        fail(e, describe(rec.id) + " was destroyed");
    for (auto& [key, e] : rec.early)
        fail(e, describe(rec.id) + " was destroyed");
    rec.ready.clear();
    rec.early.clear();
}

// Frees this rank's objects when the runtime that holds them shuts down.
// Called from worker threads (object creation, migration arrival): serialised by a mutex.
void hook_shutdown() {
    static std::mutex m;
    std::lock_guard lock(m);
    auto& st = state();
    if (layer().hooked == &st)
        return;
    layer().hooked = &st;
    st.at_shutdown.push_back([] {
        forget_all_addresses();
        for (auto& rec : layer().dir.clear())
            if (rec->object)
                rec->type->destroy(rec->object);
        layer().hooked = nullptr;
    });
}

} // namespace objects

using namespace objects;

object_id adopt_local_object(void* obj, const object_type& type) {
    hook_shutdown();
    auto rec = std::make_shared<object_record>();
    rec->id = object_id{rank(), 0, ++layer().next_serial};
    rec->object = obj;
    rec->type = &type;
    layer().dir.set_local(rec->id, rank(), rec, 0);
    note_address(*rec);
    return rec->id;
}

} // namespace prema::detail
