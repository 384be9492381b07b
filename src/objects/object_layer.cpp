// The Mobile Object Layer: routing with forwarding and lazy directory updates, ordered
// delivery, access privileges, migration and destruction.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "lb/balancer.hpp"
#include "objects/directory.hpp"
#include "objects/object_snapshot.hpp"
#include "objects/pending_handler.hpp"
#include "objects/wire_decode.hpp"
#include "prema/objects/objects.hpp"
#include "runtime/log.hpp"
#include "runtime/observe.hpp"
#include "runtime/runtime_state.hpp"

namespace prema::detail {

namespace {

struct object_layer {
    directory dir;
    std::atomic<std::uint64_t> next_serial{0};
    std::atomic<std::uint64_t> forwards{0};
    // Messages that know of a newer move than this rank does: they wait here until an install
    // or a directory update brings this rank's knowledge up to theirs.
    std::mutex arrivals_mutex;
    std::unordered_map<object_id, std::vector<object_entry>> arrivals;
    runtime_state* hooked = nullptr; // the runtime whose shutdown frees our objects
};

object_layer& layer() {
    static object_layer l;
    return l;
}

template <class V> std::unordered_map<std::uint64_t, V>& table() {
    static std::unordered_map<std::uint64_t, V> t;
    return t;
}

std::string describe(object_id id) {
    return fmt::format("object <{}:{}>", id.creator, id.serial);
}

std::uint64_t message_id();
std::uint64_t install_id();
std::uint64_t update_id();

// A message that cannot reach its object: the caller gets the error, a send is reported here.
void fail(const object_entry& e, const std::string& why) {
    if (e.token)
        reply_error(e.header.origin, e.token, "the object layer",
                    std::make_exception_ptr(usage_error(why)));
    else
        report_error(fmt::format("message from rank {} dropped: {}", e.header.origin, why));
}

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

// Sends `e` on from this rank, which knows the object reached `dest` at move `moves`.
//
// A message that has already been forwarded once goes to the object's home instead: every
// install tells the home, so the home's entry is never more than the moves in flight behind,
// and a message needs at most sender -> stale host -> next host -> home -> host however many
// ranks the object has visited. Following each old host's pointer instead costs one hop per
// migration since the sender last heard of the object (70 hops after a 70-rank tour).
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

// Tells `dest` that `id` lives on `where` since its move `moves`.
void post_update(int dest, object_id id, int where, std::uint64_t moves) {
    post_new(dest, update_id(), 0, [&](byte_writer& w) {
        w.write(&id, sizeof id);
        w.write(&where, sizeof where);
        w.write(&moves, sizeof moves);
    });
}

void accept(const record_ptr& rec, object_entry e);

// Sends `e` where this rank believes its object is.
void route(object_entry e) {
    auto loc = layer().dir.find(e.header.id);
    if (loc.local)
        return accept(loc.local, std::move(e));
    if (!loc.destroyed && e.header.moves > loc.moves) {
        // The object is on its way here, or (at its home) an install elsewhere is about to be
        // reported: hold the message until on_install or on_update raises what this rank knows
        // (re-checked under the lock they take after updating the directory).
        std::unique_lock lock(layer().arrivals_mutex);
        loc = layer().dir.find(e.header.id);
        if (loc.local) {
            lock.unlock();
            return accept(loc.local, std::move(e));
        }
        // Both halves of the test again, not only "not local": between the two looks the
        // awaited install may have run here and a migration shipped the object on (the
        // directory then names the next rank with a higher move count). Held on that stale
        // claim, the message would wait for an install that never comes: lost, and with it
        // every later message from its origin, parked behind it in `early`.
        if (!loc.destroyed && e.header.moves > loc.moves) {
            layer().arrivals[e.header.id].push_back(std::move(e));
            return;
        }
        // It has been and gone: route on from the fresh entry below.
    }
    if (loc.destroyed)
        return fail(e, describe(e.header.id) + " was destroyed");
    int here = rank();
    if (!loc.known && home_of(e.header.id) == here)
        return fail(e, "dangling mobile pointer: " + describe(e.header.id) +
                           " is unknown at its home rank " + std::to_string(here) +
                           " (never created there, or not restored)");
    if (loc.rank < 0 || loc.rank >= ranks() || loc.rank == here)
        return fail(e, "dangling mobile pointer: " + describe(e.header.id) +
                           " names no existing rank");
    forward(std::move(e), loc.rank, loc.moves);
}

access mode_of(const object_entry& e) {
    switch (e.header.op) {
    case object_op::user:
        if (auto* h = find_object_handler(e.header.handler))
            return h->mode;
        return access::exclusive;
    case object_op::acquire:
        if (e.header.origin == rank() && !e.payload.empty())
            return access(e.payload[0]);
        return access::exclusive;
    default:
        return access::exclusive;
    }
}

// The object with everything pending on it, as decode_install reads it: what a migration ships
// and what a checkpoint saves. Record locked.
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

// Serializes the object with everything pending on it and posts it to `dest`. Record locked.
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

void destroy_object(object_record& rec, const object_entry& request) {
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

detached run_handler(record_ptr rec, object_entry e, access mode, double load);

// Pending load of `rec` (locked): its handlers that have not started, each weighing the
// object's load() as last read.
lb::object_load pending_load(const object_record& rec) {
    int n = int(rec.handed.size());
    for (auto& e : rec.ready)
        n += e.header.op == object_op::user;
    return {rec.id, n * rec.weight, n};
}

// Moves what may start from the front of `ready` to the load-balancing scheduler; runs the
// runtime's own entries (migrate, destroy, acquire) in place.
void schedule(const record_ptr& rec) {
    std::vector<pending_handler*> handed;
    std::vector<object_entry> acquired;
    auto& lb = current_balancer();
    {
        std::lock_guard lock(rec->mutex);
        if (rec->started == 0 && rec->object && rec->type->weight)
            rec->weight = rec->type->weight(rec->object); // nothing can be writing it now
        while (!rec->ready.empty() && rec->gone_to == -1) {
            auto& head = rec->ready.front();
            access mode = mode_of(head);
            bool idle = !rec->exclusive_running && rec->shared_running == 0;
            if ((mode == access::exclusive && !idle) || rec->exclusive_running)
                break;
            object_entry e = std::move(head);
            rec->ready.pop_front();
            int here = rank();
            switch (e.header.op) {
            case object_op::migrate: {
                std::int32_t dest = -1;
                if (e.payload.size() == sizeof dest)
                    std::memcpy(&dest, e.payload.data(), sizeof dest);
                if (dest < 0 || dest >= ranks()) {
                    fail(e, "migration to rank " + std::to_string(dest) + " which does not exist");
                } else if (dest == here) {
                    if (e.token)
                        reply_void(e.header.origin, e.token);
                } else {
                    ship(*rec, dest, e.header.origin, e.token);
                }
                continue;
            }
            case object_op::destroy:
                destroy_object(*rec, e);
                continue;
            case object_op::acquire:
                if (e.header.origin != here) {
                    rec->ready.push_front(std::move(e)); // travels at the head, starts there
                    ship(*rec, rec->ready.front().header.origin, -1, 0);
                    continue;
                }
                break;
            case object_op::user:
                break;
            }
            if (mode == access::exclusive)
                rec->exclusive_running = true;
            else
                ++rec->shared_running;
            if (e.header.op == object_op::acquire) {
                acquired.push_back(std::move(e));
            } else {
                handed.push_back(new pending_handler(rec, std::move(e), mode, rec->weight));
                rec->handed.push_back(handed.back());
            }
        }
        if (rec->gone_to == -1)
            lb.notify(pending_load(*rec));
    }
    for (auto& e : acquired)
        reply_value(
            e.header.origin, e.token,
            std::pair<std::uint64_t, std::uint64_t>(reinterpret_cast<std::uint64_t>(rec.get()),
                                                    reinterpret_cast<std::uint64_t>(rec->object)));
    for (auto* h : handed)
        lb.ready(h);
}

// Gives access back: `handler` says whether a started handler (not a guard) of weight `load`
// ends.
void finish(const record_ptr& rec, access mode, bool handler, double load = 0) {
    {
        std::lock_guard lock(rec->mutex);
        if (mode == access::exclusive)
            rec->exclusive_running = false;
        else
            --rec->shared_running;
        rec->started -= handler;
    }
    if (handler)
        current_balancer().finished(load);
    schedule(rec);
}

detached run_handler(record_ptr rec, object_entry e, access mode, double load) {
    auto* h = find_object_handler(e.header.handler);
    if (!h) {
        fail(e,
             fmt::format("rank {} has no object handler with id {:#x}", rank(), e.header.handler));
    } else {
        double begin = 0;
        int tid = 0;
        if (observing()) {
            begin = observe_now_us();
            tid = observe_tid();
        }
        try {
            co_await h->invoke(
                object_call{rec->object, e.header.origin, e.token, e.payload, &e.bulk});
        } catch (...) {
            report_detached_error(h->name, std::current_exception());
        }
        if (observing())
            note_object_handler(h->name, rec->id, begin, tid);
    }
    finish(rec, mode, true, load);
}

void start_claimed(void* arg) {
    auto* h = static_cast<pending_handler*>(arg);
    auto d = run_handler(std::move(h->rec), std::move(h->entry), h->mode, h->load());
    delete h;
    d.handle.resume();
}

// In-order admission: early messages wait, duplicates are dropped.
void accept(const record_ptr& rec, object_entry e) {
    int here = rank();
    if (e.header.hops > 0 && e.header.origin != here) {
        // Lazy update: the origin learns where the object is from its forwarded message.
        post_update(e.header.origin, e.header.id, here, rec->moves);
    }
    {
        std::unique_lock lock(rec->mutex);
        if (rec->gone_to == -2) {
            lock.unlock();
            return fail(e, describe(rec->id) + " was destroyed");
        }
        if (rec->gone_to >= 0) {
            int dest = rec->gone_to;
            lock.unlock();
            return forward(std::move(e), dest, rec->moves + 1);
        }
        auto origin = e.header.origin;
        auto& expected = rec->expected[origin];
        if (e.header.seq < expected) {
            log().debug("duplicate message {} from rank {} to {} dropped", e.header.seq, origin,
                        describe(rec->id));
            return;
        }
        if (e.header.seq > expected) {
            rec->early.emplace(std::pair(origin, e.header.seq), std::move(e));
            return;
        }
        rec->ready.push_back(std::move(e));
        ++expected;
        for (auto it = rec->early.find({origin, expected}); it != rec->early.end();
             it = rec->early.find({origin, expected})) {
            rec->ready.push_back(std::move(it->second));
            rec->early.erase(it);
            ++expected;
        }
    }
    schedule(rec);
}

void on_message(const incoming& in) {
    auto e = decode_object_message(in.payload, in.token);
    if (in.bulk)
        e.bulk = std::move(*in.bulk);
    route(std::move(e));
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

void hook_shutdown();

// The messages held for `id`, after the directory learnt something new about it.
std::vector<object_entry> take_arrivals(object_id id) {
    std::vector<object_entry> held;
    std::lock_guard lock(layer().arrivals_mutex);
    if (auto it = layer().arrivals.find(id); it != layer().arrivals.end()) {
        held = std::move(it->second);
        layer().arrivals.erase(it);
    }
    return held;
}

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

void on_update(const incoming& in) {
    byte_reader r(in.payload);
    object_id id;
    std::int32_t where = 0;
    std::uint64_t moves = 0;
    r.read(&id, sizeof id);
    r.read(&where, sizeof where);
    r.read(&moves, sizeof moves);
    layer().dir.update_if_newer(id, where, moves);
    for (auto& e : take_arrivals(id))
        route(std::move(e));
}

const std::uint64_t message_handler =
    register_handler("prema::object_message", &on_message, &receive_object_bulk);
const std::uint64_t install_handler = register_handler("prema::object_install", &on_install);
const std::uint64_t update_handler = register_handler("prema::object_update", &on_update);
std::uint64_t message_id() {
    return message_handler;
}
std::uint64_t install_id() {
    return install_handler;
}
std::uint64_t update_id() {
    return update_handler;
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
        for (auto& rec : layer().dir.clear())
            if (rec->object)
                rec->type->destroy(rec->object);
        layer().hooked = nullptr;
    });
}

} // namespace

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

const object_type& register_object_type(const char* key, void (*destroy)(void*),
                                        void (*save)(const void*, byte_writer&),
                                        void* (*load)(byte_reader&),
                                        double (*weight)(const void*)) {
    std::uint64_t id = stable_hash(key);
    auto [it, inserted] = table<object_type>().try_emplace(
        id, object_type{id, demangle(key), destroy, save, load, weight});
    return it->second;
}

const object_type* find_object_type(std::uint64_t id) noexcept {
    auto it = table<object_type>().find(id);
    return it == table<object_type>().end() ? nullptr : &it->second;
}

std::uint64_t register_object_handler(const char* key, object_invoker invoke, access mode,
                                      bulk_receiver_fn receive_bulk) {
    std::uint64_t id = stable_hash(key);
    table<object_handler_entry>().try_emplace(
        id, object_handler_entry{id, demangle(key), invoke, mode, receive_bulk});
    return id;
}

const object_handler_entry* find_object_handler(std::uint64_t id) noexcept {
    auto it = table<object_handler_entry>().find(id);
    return it == table<object_handler_entry>().end() ? nullptr : &it->second;
}

void begin_object_message(byte_writer& w) {
    static constexpr std::byte room[sizeof(object_header)] = {};
    w.write(room, sizeof room);
}

int finish_object_message(object_id id, object_op op, std::uint64_t handler, byte_writer& w) {
    if (id.null())
        throw usage_error("message to a null mobile_ptr");
    check_payload(message_handler, w);
    auto [seq, loc] = layer().dir.next_send(id);
    object_header h{id, seq, handler, rank(), 0, op, loc.moves};
    w.patch(0, &h, sizeof h);
    // Errors (destroyed, dangling) are found by routing, so such messages go through here.
    if (loc.local || loc.destroyed || loc.rank < 0 || loc.rank >= ranks())
        return rank();
    return loc.rank;
}

object_id adopt_local_object(void* obj, const object_type& type) {
    hook_shutdown();
    auto rec = std::make_shared<object_record>();
    rec->id = object_id{rank(), 0, ++layer().next_serial};
    rec->object = obj;
    rec->type = &type;
    layer().dir.set_local(rec->id, rank(), rec, 0);
    return rec->id;
}

void release_access(std::uint64_t record, access mode) noexcept {
    auto* rec = reinterpret_cast<object_record*>(record);
    finish(rec->shared_from_this(), mode, false);
}

bool claim(pending_handler* h, work_item& w) {
    auto& rec = *h->rec;
    {
        std::lock_guard lock(rec.mutex);
        if (h->status == pending_handler::state::queued) {
            h->status = pending_handler::state::started;
            std::erase(rec.handed, h);
            ++rec.started;
            current_balancer().notify(pending_load(rec));
            w = {&start_claimed, h};
            return true;
        }
    }
    delete h; // withdrawn by a migration that took its entry along
    return false;
}

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

std::vector<record_ptr> objects_to_save() {
    auto local = layer().dir.local_records();
    std::erase_if(local, [](const record_ptr& rec) {
        std::lock_guard lock(rec->mutex);
        if (rec->gone_to != -1)
            return true;
        if (rec->started > 0 || rec->exclusive_running || rec->shared_running > 0 ||
            !rec->handed.empty())
            throw checkpoint_error(describe(rec->id) +
                                   " is in use at the checkpoint (a handler is running or "
                                   "suspended, or an object_guard is held)");
        // At quiescence every message sent has arrived, so none waits for an earlier one.
        if (!rec->early.empty())
            throw checkpoint_error(describe(rec->id) +
                                   " holds messages that arrived out of order at the checkpoint");
        return false;
    });
    std::sort(local.begin(), local.end(), [](auto& a, auto& b) { return a->id < b->id; });
    return local;
}

void pack_object(byte_writer& w, object_record& rec) {
    std::lock_guard lock(rec.mutex);
    pack_record(w, rec, rec.moves, -1, 0);
}

void install_restored(std::vector<record_ptr> records) {
    hook_shutdown();
    int here = rank();
    for (auto& rec : records) {
        // Counters restart at zero on both ends (prema/checkpoint.hpp); one more move than any
        // location a stale entry could claim.
        rec->expected.clear();
        ++rec->moves;
        layer().dir.set_local(rec->id, here, rec, rec->moves);
        if (int home = home_of(rec->id); home != here)
            post_update(home, rec->id, here, rec->moves);
    }
    for (auto& rec : records)
        schedule(rec);
}

std::uint64_t issued_serial() noexcept {
    return layer().next_serial.load();
}

void reserve_serials(std::uint64_t up_to) noexcept {
    auto cur = layer().next_serial.load();
    while (cur < up_to && !layer().next_serial.compare_exchange_weak(cur, up_to)) {
    }
}

bool holds_objects() {
    return !layer().dir.empty();
}

} // namespace prema::detail
