// Routing: an object message goes where this rank believes its object lives, is forwarded from
// a stale place (at most three times, through the object's home), or waits here for an install
// it knows of; directory updates correct a sender's belief after the fact.
#include <limits>

#include <fmt/format.h>

#include "objects/layer.hpp"
#include "objects/wire_decode.hpp"
#include "prema/objects/objects.hpp"

namespace prema::detail {

namespace objects {

void fail(const object_entry& e, const std::string& why) {
    if (e.header.op == object_op::cancelled || e.header.op == object_op::skip) // nobody waits
        return;
    if (e.token)
        reply_error(e.header.origin, e.token, "the object layer",
                    std::make_exception_ptr(usage_error(why)));
    else
        report_error(fmt::format("message from rank {} dropped: {}", e.header.origin, why));
}

// A message that has already been forwarded once goes to the object's home instead: every
// install tells the home, so the home's entry is never more than the moves in flight behind,
// and a message needs at most sender -> stale host -> next host -> home -> host however many
// ranks the object has visited, once it stops moving (while it moves, two hops per move:
// docs/design/ordering-and-forwarding.md). Following each old host's pointer instead costs one
// hop per migration since the sender last heard of the object (70 hops after a 70-rank tour).
// Termination without a hop limit: every forward but the first either goes to the home with
// the move count this rank knows, where it waits until the home knows as much (see route), or
// leaves the home with a move count at least that high, so each pass through a non-home rank
// raises the count, which is bounded by the migrations made.
void forward(object_entry e, int dest, std::uint64_t moves) {
    layer().forwards.fetch_add(1, std::memory_order_relaxed);
    if (int home = home_of(e.header.id); e.header.hops > 0 && home != rank())
        dest = home;
    if (e.header.hops < std::numeric_limits<decltype(e.header.hops)>::max())
        ++e.header.hops;
    e.header.moves = moves;
    post_new(dest, message_id(), e.token, [&](byte_writer& w) {
        w.write(&e.header, sizeof e.header);
        w.write(e.payload.data(), e.payload.size());
        // As it arrived: the arguments inline, so they stay so (post never folds the bulk).
        w.bulk() = std::move(e.bulk);
    });
}

void post_update(int dest, object_id id, int where, std::uint64_t moves) {
    post_new(dest, update_id(), 0, [&](byte_writer& w) {
        w.write(&id, sizeof id);
        w.write(&where, sizeof where);
        w.write(&moves, sizeof moves);
    });
}

namespace {

// Whether `e`, sent here by `from`, may wait here for the install it claims (its move count is
// beyond what this rank knows, `loc`). A rank that knows the object knows whether the claim is
// news. One that does not may have forgotten it (collected, see directory::collect): it waits
// only on the home's word, since the home sends here only while the object lives here or is on
// its way, and its word is never older than the forgetting (the design note says why). Any
// other claim goes on to the home, which holds it until it knows as much.
bool wait_here(const location& loc, const object_header& h, int from) {
    return !loc.destroyed && h.moves > loc.moves && (loc.known || from == home_of(h.id));
}

// A message for an object its home does not know: destroyed long enough ago to be forgotten,
// if the home issued that serial; a pointer nobody made otherwise.
std::string unknown_at_home(object_id id, int here) {
    if (id.creator == here && id.serial > 0 && id.serial <= layer().next_serial.load())
        return describe(id) + " was destroyed";
    return "dangling mobile pointer: " + describe(id) + " is unknown at its home rank " +
           std::to_string(here) + " (never created there, destroyed, or not restored)";
}

} // namespace

void route(object_entry e, int from) {
    auto loc = layer().dir.find(e.header.id);
    if (loc.local)
        return accept(loc.local, std::move(e));
    const int here = rank();
    const bool home = home_of(e.header.id) == here;
    if (!loc.known && home)
        return fail(e, unknown_at_home(e.header.id, here));
    if (wait_here(loc, e.header, from)) {
        // The object is on its way here, or (at its home) an install elsewhere is about to be
        // reported: hold the message until on_install or on_update raises what this rank knows
        // (re-checked under the lock they take after updating the directory).
        std::unique_lock lock(layer().arrivals_mutex);
        loc = layer().dir.find(e.header.id);
        if (loc.local) {
            lock.unlock();
            return accept(loc.local, std::move(e));
        }
        // The whole test again, not only "not local": between the two looks the awaited
        // install may have run here and a migration shipped the object on (the directory then
        // names the next rank with a higher move count). Held on that stale claim, the message
        // would wait for an install that never comes: lost, and with it every later message
        // from its origin, parked behind it in `early`.
        if (wait_here(loc, e.header, from)) {
            layer().arrivals[e.header.id].push_back(std::move(e));
            return;
        }
        // It has been and gone: route on from the fresh entry below.
    }
    if (loc.destroyed)
        return fail(e, describe(e.header.id) + " was destroyed");
    // Not known here: the home knows, and the claim goes with the message (see wait_here).
    if (!loc.known)
        return forward(std::move(e), home_of(e.header.id), e.header.moves);
    if (loc.rank < 0 || loc.rank >= ranks() || loc.rank == here)
        return fail(e, "dangling mobile pointer: " + describe(e.header.id) +
                           " names no existing rank");
    forward(std::move(e), loc.rank, loc.moves);
}

std::vector<object_entry> take_arrivals(object_id id) {
    std::vector<object_entry> held;
    std::lock_guard lock(layer().arrivals_mutex);
    if (auto it = layer().arrivals.find(id); it != layer().arrivals.end()) {
        held = std::move(it->second);
        layer().arrivals.erase(it);
    }
    return held;
}

namespace {

// Each message of a run (see runs.cpp) as if it had come on its own: the rest of the run is
// what follows it in its batch.
void deliver_run(const incoming& in) {
    object_run_reader run(in.payload, in.more + 1);
    layer().run_messages.fetch_add(in.more + 1, std::memory_order_relaxed);
    object_header h;
    std::span<const std::byte> args;
    while (run.next(h, args))
        if (!run_now(h, args, in, &run))
            route(object_entry{h, 0, byte_vector(args.begin(), args.end()), {}}, in.source);
}

void deliver(const incoming& in) {
    if (in.more)
        return deliver_run(in);
    auto v = view_object_message(in.payload);
    if (run_now(v.header, v.args, in, nullptr))
        return;
    object_entry e{v.header, in.token, byte_vector(v.args.begin(), v.args.end()), {}};
    if (in.bulk)
        e.bulk = std::move(*in.bulk);
    route(std::move(e), in.source);
}

void on_message(const incoming& in) {
    try {
        deliver(in);
    } catch (...) {
        // The batch's next message would have given back a grant kept for it: none follows.
        if (!in.next_in_batch_for(message_id()))
            end_direct_run();
        throw;
    }
}

// Received as the object handler's parameter takes it.
void receive_object_bulk(const incoming& in, std::size_t bytes, bulk_buffer& out) {
    object_header h;
    if (in.payload.size() < sizeof h)
        return;
    std::memcpy(&h, in.payload.data(), sizeof h);
    if (h.op != object_op::user)
        return;
    if (auto* e = find_object_handler(h.handler); e && e->receive_bulk)
        e->receive_bulk(in, bytes, out);
}

void on_update(const incoming& in) {
    byte_reader r(in.payload);
    object_id id;
    std::int32_t where = 0;
    std::uint64_t moves = 0;
    r.read(&id, sizeof id);
    r.read(&where, sizeof where);
    r.read(&moves, sizeof moves);
    if (where == destroyed_here)
        layer().dir.set_destroyed(id);
    else
        layer().dir.update_if_newer(id, where, moves);
    for (auto& e : take_arrivals(id))
        route(std::move(e), rank());
}

const std::uint64_t message_handler =
    register_handler("prema::object_message", &on_message, &receive_object_bulk, true);
const std::uint64_t update_handler = register_handler("prema::object_update", &on_update);

// What the calling thread's block of numbers left (directory::close_block): given back, or
// skipped by a message that holds their place.
void skip_unused_numbers() noexcept {
    auto unused = layer().dir.close_block();
    if (!unused)
        return;
    const auto& at = unused->first;
    const object_header header{unused->id, at.seq,          unused->count, rank(),
                               0,          object_op::skip, at.moves,      at.stream};
    try {
        post_new(at.routed_here ? rank() : at.rank, message_handler, 0,
                 [&](byte_writer& w) { w.write(&header, sizeof header); });
    } catch (const std::exception& e) {
        report_error(fmt::format("the place of {} unused numbers to {} could not be kept: {}",
                                 unused->count, describe(header.id), e.what()));
    }
}

} // namespace

std::uint64_t message_id() {
    return message_handler;
}
std::uint64_t update_id() {
    return update_handler;
}

} // namespace objects

using namespace objects;

std::uint64_t object_message_id() noexcept {
    return message_handler;
}

int where(object_id id) {
    auto loc = layer().dir.find(id);
    return loc.destroyed ? -1 : loc.rank;
}

std::uint64_t forward_count() noexcept {
    return layer().forwards.load();
}

std::uint64_t run_message_count() noexcept {
    return layer().run_messages.load(std::memory_order_relaxed);
}

void begin_object_message(byte_writer& w) {
    static constexpr std::byte room[sizeof(object_header)] = {};
    w.write(room, sizeof room);
}

object_send_slot next_object_message(object_id id, object_op op, std::uint64_t handler) {
    if (id.null())
        throw usage_error("message to a null mobile_ptr");
    auto& dir = layer().dir;
    const int here = rank();
    std::uint64_t seq = 0;
    const directory::send_slot* slot = dir.next_from_block(id, seq);
    directory::send_slot numbered;
    if (!slot) {
        if (directory::block_open())
            skip_unused_numbers();
        // Workers only: the runtime closes their blocks after each item.
        numbered = dir.next_send(id, tls_outbox != nullptr);
        seq = numbered.seq;
        slot = &numbered;
    }
    // Errors (destroyed, dangling) are found by routing, so such messages go through here.
    return {{id, seq, handler, here, 0, op, slot->moves, slot->stream},
            slot->routed_here ? here : slot->rank};
}

void after_worker_item() noexcept {
    directory::end_streak();
    if (directory::block_open())
        skip_unused_numbers();
    flush_direct_runs();
}

void post_cancelled(const object_send_slot& slot) noexcept {
    auto header = slot.header;
    header.op = object_op::cancelled;
    try {
        post_new(slot.dest, message_handler, 0,
                 [&](byte_writer& w) { w.write(&header, sizeof header); });
    } catch (const std::exception& e) {
        // Out of memory, or the runtime stopped: the object can no longer be reached anyway.
        report_error(fmt::format("the place of a failed message to {} could not be kept: {}",
                                 describe(header.id), e.what()));
    }
}

void check_object_message(object_id id, byte_writer& w) {
    if (id.null())
        throw usage_error("message to a null mobile_ptr");
    check_payload(message_handler, w);
}

} // namespace prema::detail
