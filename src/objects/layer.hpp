// The Mobile Object Layer's state on this rank and the steps its files hand each other:
// routing (routing.cpp) sends a message where the object is believed to live, admission
// (admission.cpp) puts it in order on the object's record, scheduling (scheduling.cpp) starts
// what access allows, migration (migration.cpp) ships a record to another rank, and layer.cpp
// creates, destroys and frees objects.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "coro/worker_count.hpp"
#include "objects/balancer_link.hpp"
#include "objects/directory.hpp"
#include "objects/object_record.hpp"
#include "objects/wire_decode.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {
class object_run_reader; // wire_decode.hpp
}

namespace prema::detail::objects {

struct layer_state {
    directory dir;
    std::atomic<std::uint64_t> next_serial{0};
    std::atomic<std::uint64_t> forwards{0};
    worker_count direct_runs;                     // direct.cpp; read by tests only
    std::atomic<std::uint64_t> run_messages{0};   // received in runs (runs.cpp), counted per run
    std::atomic<std::uint64_t> shipped_orders{0}; // ordering entries that migrations carried
    // Messages that know of a newer move than this rank does: they wait here until an install
    // or a directory update brings this rank's knowledge up to theirs.
    std::mutex arrivals_mutex;
    std::unordered_map<object_id, std::vector<object_entry>> arrivals;
    transport_state* hooked = nullptr; // the runtime whose shutdown frees our objects
};

layer_state& layer();

std::string describe(object_id id);

// Transport handler ids of object messages, installs and directory updates.
std::uint64_t message_id();
std::uint64_t install_id();
std::uint64_t update_id();

// Makes the running runtime free this rank's objects at its shutdown.
void hook_shutdown();

// Makes `rec` the object living here at move `moves`: its address noted for prema::self first,
// then its directory entry. Once in the directory, another worker may ship the object away and
// clear rec.object; a note made after that would race with the ship and could leave a stale
// address (ThreadSanitizer found it in the migration storm).
void install_local(const record_ptr& rec, int here, std::uint64_t moves);

// self.cpp: the addresses of the objects that live here, for prema::self. Noted before an
// object is installed (install_local), forgotten before it is destroyed or leaves.
void note_address(const object_record& rec);
void forget_address(const object_record& rec);
void forget_all_addresses();
// How many addresses are noted: one per object living here.
std::size_t noted_addresses();

// routing.cpp
// A message that cannot reach its object: the caller gets the error, a send is reported here.
void fail(const object_entry& e, const std::string& why);
// Sends `e` on from this rank, which knows the object reached `dest` at move `moves`.
void forward(object_entry e, int dest, std::uint64_t moves);
// Tells `dest` that `id` lives on `where` since its move `moves`, or with `where`
// destroyed_here, that it was destroyed (the home must know: the rank that destroyed it
// forgets it, see directory::collect).
inline constexpr int destroyed_here = -2;
void post_update(int dest, object_id id, int where, std::uint64_t moves);
// Sends `e`, which rank `from` sent here, where this rank believes its object is. A rank that
// no longer knows the object waits for the install `e` claims only if the home sent it (the
// home's word is never stale that way); held messages routed again pass this rank.
void route(object_entry e, int from);
// The messages held for `id`, after the directory learnt something new about it.
std::vector<object_entry> take_arrivals(object_id id);

// admission.cpp: in-order admission of a message to the object living here.
void accept(const record_ptr& rec, object_entry e);
// The order of `h`'s origin at `rec` (locked) once `h` has arrived: a message of a newer stream
// starts it again from 0 (its older streams have all arrived, see next_send).
origin_order& order_of(object_record& rec, const object_header& h);
// How many of its origin's numbers a message holds: a skip's count (at least one), else one.
inline std::uint64_t numbers_held(const object_header& h) {
    return h.op == object_op::skip && h.handler > 1 ? h.handler : 1;
}
// Cancelled requests and skips are dropped on admission, once their numbers are passed.
inline bool holds_place_only(const object_header& h) {
    return h.op == object_op::cancelled || h.op == object_op::skip;
}
inline bool next_in_order(const origin_order& o, const object_header& h) {
    return h.stream == o.stream && h.seq == o.next;
}
// Whether the order of `origin` at `rec` (locked) must be kept at `epoch`: the origin's next
// message may continue its stream, or (never by then, checked all the same since forgetting it
// would lose them) messages of the origin wait in `early`.
bool order_needed(const object_record& rec, std::int32_t origin, const origin_order& o,
                  std::uint64_t epoch);
// Forgets the orders of `rec` (locked) that are not needed; not while a handler is started
// (direct.cpp keeps a pointer to one).
void collect_orders(object_record& rec, std::uint64_t epoch);
// Moves the held messages from `origin` that are next in its order to the ready queue
// (record locked).
void admit_early(object_record& rec, std::int32_t origin, origin_order& order);
// After a forwarded message: tells its origin where the object is (a lazy directory update).
void note_forwarded(const object_header& h, const object_record& rec);

// direct.cpp: runs an object message at once on this worker if it may (see there); false,
// having done nothing, otherwise. `run`: the rest of the run the message came in (null if
// none), whose next messages it may run with it, taking them from `run`.
bool run_now(const object_header& h, std::span<const std::byte> args, const incoming& in,
             object_run_reader* run);
// Gives back the access run_now may keep for the next object message of a batch: called when
// a message ends without reaching run_now's end (an exception).
void end_direct_run();
// Adds the calling worker's direct runs to layer().direct_runs (after each of its items).
void flush_direct_runs() noexcept;

// scheduling.cpp
// Moves what may start from the front of `ready` to the load-balancing scheduler; runs the
// runtime's own entries (migrate, destroy, acquire) in place.
void schedule(const record_ptr& rec);
// What one pending handler of `rec` (locked) weighs: its load() as last read, or what was
// measured, as --prema-lb-load says (measured_load.hpp). Inline, on every handler's path: with
// nothing measured every mode gives load() (the rank's ratio is 1 then), without a look at the
// rank's sums.
inline double handler_load(const object_record& rec) {
    return measuring() ? detail::handler_load(rec.history, rec.weight) : rec.weight;
}
// Pending load of `rec` (locked): its handlers that have not started, each weighing
// handler_load(), and the seconds they would take by measurement.
lb::object_load pending_load(const object_record& rec);
// Tells the balancer the pending load of `rec` (locked) if it changed from or to nothing.
void notify_balancer(object_record& rec);
// Whether an entry asking `mode` may start now, and granting it that access (record locked).
bool may_start(const object_record& rec, access mode);
void grant(object_record& rec, access mode);
// Reads the object's load() if no user code can be running on it (record locked).
void read_weight(object_record& rec);
// Runs a handler granted its access on this thread: a plain one to its end, a coroutine one
// until it first suspends (it goes on wherever it is resumed). Gives the access back when the
// handler ends.
// `h`: the entry's handler (null if this rank has none).
void start_handler(record_ptr rec, const object_handler_entry* h, object_entry& e, access mode,
                   double load);
// start_handler for a coroutine handler: `call` needs to last only until it returns (the
// handler's task owns its decoded arguments). The task holds no reference to `rec`: the access
// granted for it keeps the object here, and so the directory's reference, until finish gives
// it back (a reference taken and dropped per message was two locked instructions).
void start_task(object_record& rec, const object_handler_entry& h, const object_call& call,
                access mode, double load);
void run_plain(const record_ptr& rec, const object_handler_entry& h, const object_call& call,
               access mode, double load);
// run_plain's two halves. invoke_plain runs the handler (an error nobody awaits is reported)
// and returns how long it took in now_ticks() units when measuring (else 0, without reading the
// clock); finish_plain gives its access back, running the object's next plain handlers here
// while the rank has nothing else to do.
std::uint64_t invoke_plain(const record_ptr& rec, const object_handler_entry& h,
                           const object_call& call);
void finish_plain(const record_ptr& rec, access mode, double load, std::uint64_t busy);
// Gives access back: `handler` says whether a started handler (not a guard) of weight `load`
// ends, after `busy` ticks of running time (learnt when measuring). `rec` may be freed by
// another thread as soon as it returns.
void finish(object_record& rec, access mode, bool handler, double load = 0, std::uint64_t busy = 0);

// migration.cpp
// The object with everything pending on it, as decode_install reads it: what a migration ships
// and what a checkpoint saves. Record locked.
// Returns how many ordering entries it wrote: the needed ones (order_needed).
std::size_t pack_record(byte_writer& w, const object_record& rec, std::uint64_t moves,
                        std::span<const move_waiter> waiters);
// Serializes the object with everything pending on it, handed handlers included, and posts it
// to `dest`, where its install answers `waiters`. Record locked. Throws, changing nothing, if
// the object cannot be packed or sent.
void ship(object_record& rec, int dest, std::span<const move_waiter> waiters);
// A move that ship() refused with `why`: the waiter gets the exception, a move nobody awaits
// is reported here.
void refuse_move(const move_waiter& waiter, object_id id, int dest, std::exception_ptr why);
// Serves a migrate entry that reached the head of the object's queue: moves the object, or
// leaves the move to a later one already queued (see later_move). Record locked.
void serve_move(object_record& rec, const object_entry& request);

// layer.cpp: destroys the object for `request`, failing what waits for it. Record locked.
void destroy_object(object_record& rec, const object_entry& request);

} // namespace prema::detail::objects
