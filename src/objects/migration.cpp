// Migration: a record leaves with its object, its ordering counters and every pending entry,
// and is installed on the receiving rank, which tells the object's home where it now lives.
#include <algorithm>

#include <fmt/format.h>

#include "base/log.hpp"
#include "objects/layer.hpp"
#include "objects/pending_handler.hpp"
#include "objects/traced.hpp"
#include "objects/wire_decode.hpp"
#include "prema/objects/objects.hpp"

namespace prema::detail {

namespace objects {

namespace {

// A bulk follows the arguments, its size first (bulk_bit in their size says it is there).
void write_entry(byte_writer& w, const object_entry& e) {
    w.write(&e.header, sizeof e.header);
    w.write(&e.token, sizeof e.token);
    std::uint64_t n = e.payload.size() | (e.bulk ? bulk_bit : 0);
    w.write(&n, sizeof n);
    w.write(e.payload.data(), e.payload.size());
    if (e.bulk) {
        n = e.bulk.size();
        w.write(&n, sizeof n);
        w.write(e.bulk.data(), e.bulk.size());
    }
}

} // namespace

std::size_t pack_record(byte_writer& w, const object_record& rec, std::uint64_t moves,
                        std::span<const move_waiter> waiters) {
    w.write(&rec.id, sizeof rec.id);
    w.write(&rec.type->id, sizeof rec.type->id);
    w.write(&moves, sizeof moves);
    auto count = std::uint32_t(waiters.size());
    w.write(&count, sizeof count);
    for (auto& waiter : waiters) {
        w.write(&waiter.origin, sizeof waiter.origin);
        w.write(&waiter.token, sizeof waiter.token);
    }
    // The measured load goes with the object: its new rank weighs it by what it has learnt.
    w.write(&rec.history.seconds, sizeof rec.history.seconds);
    w.write(&rec.history.ratio, sizeof rec.history.ratio);
    w.write(&rec.history.runs, sizeof rec.history.runs);
    // Only the origins that may still continue their streams: the others start new ones.
    const auto epoch = current_epoch();
    const auto count_at = w.size();
    std::uint32_t n = 0;
    w.write(&n, sizeof n);
    for (auto& [origin, o] : rec.expected) {
        if (!order_needed(rec, origin, o, epoch))
            continue;
        w.write(&origin, sizeof origin);
        w.write(&o.stream, sizeof o.stream);
        w.write(&o.next, sizeof o.next);
        w.write(&o.seen, sizeof o.seen);
        ++n;
    }
    w.patch(count_at, &n, sizeof n);
    const std::size_t orders = n;
    n = std::uint32_t(rec.early.size());
    w.write(&n, sizeof n);
    for (auto& [key, e] : rec.early)
        write_entry(w, e);
    // Handed handlers come before `ready`: they were its head.
    n = std::uint32_t(rec.handed.size() + rec.ready.size());
    w.write(&n, sizeof n);
    for (auto* h : rec.handed)
        write_entry(w, h->entry);
    for (auto& e : rec.ready)
        write_entry(w, e);
    rec.type->save(rec.object, w);
    return orders;
}

void ship(object_record& rec, int dest, std::span<const move_waiter> waiters) {
    // Packed in full before anything changes: packing runs the type's serialize, which may
    // throw, and the install may exceed --prema-max-message-bytes. Either way the object stays.
    message* m = acquire_message();
    byte_writer w(m->inline_data(), m->inline_capacity());
    std::size_t orders = 0;
    try {
        orders = pack_record(w, rec, rec.moves + 1, waiters);
        check_payload(install_id(), w);
    } catch (...) {
        release_message(m);
        throw;
    }
    // Before the post: once posted, the object may come back here and be counted again.
    current_balancer().notify({rec.id, 0, 0});
    current_balancer().count_migration(true);
    if (observing())
        note_migration(traced(rec.id), rank(), dest, true);
    post(m, dest, install_id(), 0, w);
    layer().shipped_orders.fetch_add(orders, std::memory_order_relaxed);
    // Handed handlers travelled with the object: the workers that pop them drop them.
    for (auto* h : rec.handed)
        h->status = pending_handler::state::withdrawn;
    current_balancer().withdrawn(rec.handed.size());
    rec.handed.clear();
    rec.exclusive_running = false;
    rec.shared_running = 0;
    forget_address(rec);
    rec.type->destroy(rec.object);
    rec.object = nullptr;
    rec.early.clear();
    rec.ready.clear();
    rec.gone_to = dest;
    layer().dir.set_remote(rec.id, dest, rec.moves + 1);
}

namespace {

// "type: what()" of `e`.
std::string explain(std::exception_ptr e) {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        return current_exception_type() + ": " + x.what();
    } catch (...) {
        return current_exception_type();
    }
}

} // namespace

void refuse_move(const move_waiter& waiter, object_id id, int dest, std::exception_ptr why) {
    auto what = fmt::format("the migration of {} to rank {}", describe(id), dest);
    if (waiter.token)
        reply_error(waiter.origin, waiter.token, what, why);
    else
        report_error(fmt::format("{} failed, it stays on rank {}: {}", what, rank(), explain(why)));
}

namespace {

// A later move already queued that a move serving `waiters` may be taken as one with, so that
// the object skips a stop: a storm of moves racing the object's messages costs each chasing
// message two hops per move made (docs/design/ordering-and-forwarding.md). Only the handlers of
// other origins may lie between: they run here instead of at the skipped stop, which order per
// sender allows. A handler from the origin of any waiter (the request's own, or of a move merged
// into it before) must run after that waiter's move, and an acquire or destroy must find the
// object where the moves before it left it: either ends the search. The waiters resume once
// the object is installed where the later move takes it, so nothing they do after resuming
// meets the object before that move. nullptr: none.
object_entry* later_move(object_record& rec, std::span<const move_waiter> waiters) {
    auto waits = [&](std::int32_t origin) {
        return std::any_of(waiters.begin(), waiters.end(),
                           [&](const move_waiter& w) { return w.origin == origin; });
    };
    for (auto& e : rec.ready) {
        if (e.header.op == object_op::migrate) {
            auto m = decode_move(e.payload);
            return m && m->dest >= 0 && m->dest < ranks() ? &e : nullptr;
        }
        if (e.header.op == object_op::acquire || e.header.op == object_op::destroy ||
            waits(e.header.origin))
            return nullptr;
    }
    return nullptr;
}

} // namespace

void serve_move(object_record& rec, const object_entry& request) {
    auto move = decode_move(request.payload);
    if (!move)
        return fail(request, fmt::format("a migration request of {} bytes, not a rank and the "
                                         "moves merged with it",
                                         request.payload.size()));
    if (move->dest < 0 || move->dest >= ranks())
        return fail(request,
                    "migration to rank " + std::to_string(move->dest) + " which does not exist");
    auto& waiters = move->merged;
    waiters.push_back({request.header.origin, request.token});
    if (move->dest == rank()) {
        for (auto& w : waiters)
            if (w.token)
                reply_void(w.origin, w.token);
        return;
    }
    if (auto* later = later_move(rec, waiters)) {
        for (auto& w : waiters)
            append_move_waiter(later->payload, w);
        return;
    }
    try {
        ship(rec, move->dest, waiters);
    } catch (...) {
        for (auto& w : waiters)
            refuse_move(w, rec.id, move->dest, std::current_exception());
    }
}

namespace {

void on_install(const incoming& in) {
    auto decoded = decode_install(in.payload);
    record_ptr rec = std::move(decoded.record);
    // A rank that never created an object but receives one by migration must still free it
    // at shutdown (LeakSanitizer found the installed objects leaked).
    hook_shutdown();
    int here = rank();
    install_local(rec, here, rec->moves);
    // The home keeps the route short (see forward); a home that shipped the object here
    // already knows.
    if (int home = home_of(rec->id); home != here && home != in.source)
        post_update(home, rec->id, here, rec->moves);
    for (auto& e : take_arrivals(rec->id))
        accept(rec, std::move(e));
    for (auto& w : decoded.waiters)
        if (w.token)
            reply_void(w.origin, w.token);
    current_balancer().count_migration(false);
    if (observing())
        note_migration(traced(rec->id), in.source, rank(), false);
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
    try {
        ship(rec, dest, {});
    } catch (...) {
        // Nobody waits for a balancing move, so it is logged; once per object at warning
        // level, since the policy may offer the same object again and again.
        log().log(rec.refused_balancing ? spdlog::level::debug : spdlog::level::warn,
                  "load balancing: {} stays on rank {}, it cannot move to rank {}: {}",
                  describe(id), rank(), dest, explain(std::current_exception()));
        rec.refused_balancing = true;
        return false;
    }
    return true;
}

} // namespace prema::detail
