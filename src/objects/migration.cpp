// Migration: a record leaves with its object, its ordering counters and every pending entry,
// and is installed on the receiving rank, which tells the object's home where it now lives.
#include "objects/layer.hpp"
#include "objects/pending_handler.hpp"
#include "objects/wire_decode.hpp"
#include "prema/objects/objects.hpp"
#include "runtime/observe.hpp"

namespace prema::detail {

namespace objects {

namespace {

void write_entry(byte_writer& w, const object_entry& e) {
    w.write(&e.header, sizeof e.header);
    w.write(&e.token, sizeof e.token);
    std::uint64_t n = e.payload.size();
    w.write(&n, sizeof n);
    w.write(e.payload.data(), e.payload.size());
}

} // namespace

void pack_record(byte_writer& w, const object_record& rec, std::uint64_t moves,
                 std::int32_t reply_to, std::uint64_t token) {
    w.write(&rec.id, sizeof rec.id);
    w.write(&rec.type->id, sizeof rec.type->id);
    w.write(&moves, sizeof moves);
    w.write(&reply_to, sizeof reply_to);
    w.write(&token, sizeof token);
    std::uint32_t n = std::uint32_t(rec.expected.size());
    w.write(&n, sizeof n);
    for (auto& [origin, seq] : rec.expected) {
        w.write(&origin, sizeof origin);
        w.write(&seq, sizeof seq);
    }
    n = std::uint32_t(rec.early.size());
    w.write(&n, sizeof n);
    for (auto& [key, e] : rec.early)
        write_entry(w, e);
    n = std::uint32_t(rec.ready.size());
    w.write(&n, sizeof n);
    for (auto& e : rec.ready)
        write_entry(w, e);
    rec.type->save(rec.object, w);
}

void ship(object_record& rec, int dest, std::int32_t reply_to, std::uint64_t token) {
    // Before the post: once posted, the object may come back here and be counted again.
    current_balancer().notify({rec.id, 0, 0});
    {
        auto& lb = current_balancer();
        std::lock_guard lock(lb.counters_mutex);
        ++lb.counters.migrations_out;
    }
    if (observing())
        note_migration(rec.id, rank(), dest, true);
    post_new(dest, install_id(), 0,
             [&](byte_writer& w) { pack_record(w, rec, rec.moves + 1, reply_to, token); });
    rec.type->destroy(rec.object);
    rec.object = nullptr;
    rec.early.clear();
    rec.ready.clear();
    rec.gone_to = dest;
    layer().dir.set_remote(rec.id, dest, rec.moves + 1);
}

namespace {

void on_install(const incoming& in) {
    auto decoded = decode_install(in.payload);
    record_ptr rec = std::move(decoded.record);
    std::int32_t reply_to = decoded.reply_to;
    std::uint64_t token = decoded.token;
    // A rank that never created an object but receives one by migration must still free it
    // at shutdown (LeakSanitizer found the installed objects leaked).
    hook_shutdown();
    int here = rank();
    layer().dir.set_local(rec->id, here, rec, rec->moves);
    // The home keeps the route short (see forward); a home that shipped the object here
    // already knows.
    if (int home = home_of(rec->id); home != here && home != in.source)
        post_update(home, rec->id, here, rec->moves);
    for (auto& e : take_arrivals(rec->id))
        accept(rec, std::move(e));
    if (token)
        reply_void(reply_to, token);
    {
        auto& lb = current_balancer();
        std::lock_guard lock(lb.counters_mutex);
        ++lb.counters.migrations_in;
    }
    if (observing())
        note_migration(rec->id, in.source, rank(), false);
    schedule(rec);
}

const std::uint64_t install_handler = register_handler("prema::object_install", &on_install);

} // namespace

std::uint64_t install_id() {
    return install_handler;
}

} // namespace objects

using namespace objects;

bool migrate_for_balance(object_id id, int dest) {
    auto loc = layer().dir.find(id);
    if (!loc.local || dest == rank() || dest < 0 || dest >= ranks())
        return false;
    auto& rec = *loc.local;
    std::lock_guard lock(rec.mutex);
    if (rec.gone_to != -1 || rec.started > 0 || pending_load(rec).pending == 0)
        return false;
    // Access held by something other than the handed handlers is a guard: it pins the object.
    int exclusive = 0;
    for (auto* h : rec.handed)
        exclusive += h->mode == access::exclusive;
    int shared = int(rec.handed.size()) - exclusive;
    if ((rec.exclusive_running && exclusive == 0) || rec.shared_running > shared)
        return false;
    for (auto it = rec.handed.rbegin(); it != rec.handed.rend(); ++it) {
        (*it)->status = pending_handler::state::withdrawn;
        rec.ready.push_front(std::move((*it)->entry));
    }
    current_balancer().withdrawn(rec.handed.size());
    rec.handed.clear();
    rec.exclusive_running = false;
    rec.shared_running = 0;
    ship(rec, dest, -1, 0);
    return true;
}

} // namespace prema::detail
