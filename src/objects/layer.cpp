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
    if (int home = home_of(rec.id); home != rank())
        post_update(home, rec.id, destroyed_here, rec.moves);
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

void install_local(const record_ptr& rec, int here, std::uint64_t moves) {
    note_address(*rec);
    layer().dir.set_local(rec->id, here, rec, moves);
}

namespace {

// At each epoch: the directory forgets what no message can need any more, and each object
// living here the orders of origins that have not written to it lately. Objects with a handler
// started keep theirs until a later epoch (direct.cpp points into them meanwhile).
void collect(std::uint64_t epoch) {
    layer().dir.collect(epoch);
    for (auto& rec : layer().dir.local_records()) {
        std::lock_guard lock(rec->mutex);
        if (rec->started == 0)
            collect_orders(*rec, epoch);
    }
}

[[maybe_unused]] const bool collecting = add_epoch_listener(&collect);

} // namespace

} // namespace objects

using namespace objects;

directory_counts directory_census() {
    auto [entries, local] = layer().dir.size();
    return {entries, local, layer().shipped_orders.load(), noted_addresses()};
}

object_id adopt_local_object(void* obj, const object_type& type) {
    hook_shutdown();
    auto rec = std::make_shared<object_record>();
    rec->id = object_id{rank(), 0, ++layer().next_serial};
    rec->object = obj;
    rec->type = &type;
    install_local(rec, rank(), 0);
    return rec->id;
}

} // namespace prema::detail
