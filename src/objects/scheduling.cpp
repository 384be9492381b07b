// Access and scheduling: which ready entries may start (exclusive alone, shared together, in
// order), handing handlers to the load-balancing scheduler, running them on a worker, and
// giving access back when a handler ends or a guard dies.
#include <memory>

#include <fmt/format.h>

#include "objects/layer.hpp"
#include "objects/pending_handler.hpp"
#include "objects/traced.hpp"
#include "prema/objects/objects.hpp"

namespace prema::detail {

namespace objects {

namespace {

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

} // namespace

bool may_start(const object_record& rec, access mode) {
    return !rec.exclusive_running && (mode == access::shared || rec.shared_running == 0);
}

void grant(object_record& rec, access mode) {
    if (mode == access::exclusive)
        rec.exclusive_running = true;
    else
        ++rec.shared_running;
}

namespace {
// Whether schedule() has anything to do once an access is given back (lock held): entries to
// start or hand to the balancer, or a pending load the balancer must hear has gone.
bool schedule_needed(const object_record& rec) {
    return !rec.ready.empty() || rec.told.pending != 0;
}

// Undoes grant(); `handler`: a started handler (not a guard) ends. Record locked.
void give_back(object_record& rec, access mode, bool handler) {
    if (mode == access::exclusive)
        rec.exclusive_running = false;
    else
        --rec.shared_running;
    rec.started -= handler;
}
} // namespace

void read_weight(object_record& rec) {
    // load() is user code on the object, so it runs only while no other can: no handler has
    // started (a claimed one counts in `started` from the moment a worker takes it) and no
    // exclusive access is granted (a guard counts only there; a handler granted it but not
    // started yet is skipped too, and the weight is read again when it ends).
    if (rec.started == 0 && !rec.exclusive_running && rec.object && rec.type->weight)
        rec.weight = rec.type->weight(rec.object);
}

namespace {
// Whether `now` is at least twice or at most half `told`, or became nonzero.
bool changed_by_half(double now, double told) {
    return now >= 2 * told ? now > 0 : 2 * now <= told;
}
} // namespace

void notify_balancer(object_record& rec) {
    // The balancer works from estimates (a pending handler weighs the object's last load()),
    // so it hears of every change from or to nothing and otherwise of changes by half or more:
    // a flood of messages to one object then costs it a few looks, not three per message.
    auto load = pending_load(rec);
    const auto& told = rec.told;
    if ((load.pending == 0) == (told.pending == 0) &&
        !changed_by_half(load.pending, told.pending) && !changed_by_half(load.load, told.load))
        return;
    rec.told = load;
    current_balancer().notify(load);
}

lb::object_load pending_load(const object_record& rec) {
    int n = int(rec.handed.size()) + rec.ready.handlers();
    return {rec.id, n * handler_load(rec), n, n * measured_seconds(rec.history)};
}

void schedule(const record_ptr& rec) {
    // The thread's list from its last call, capacity and all: no allocation per message.
    thread_local std::vector<pending_handler*> spare;
    std::vector<pending_handler*> handed = std::move(spare);
    handed.clear();
    std::vector<object_entry> acquired;
    auto& lb = current_balancer();
    {
        std::lock_guard lock(rec->mutex);
        read_weight(*rec);
        while (!rec->ready.empty() && rec->gone_to == -1) {
            auto& head = rec->ready.front();
            access mode = mode_of(head);
            if (!may_start(*rec, mode))
                break;
            object_entry e = std::move(head);
            rec->ready.pop_front();
            int here = rank();
            switch (e.header.op) {
            case object_op::migrate:
                serve_move(*rec, e);
                continue;
            case object_op::destroy:
                destroy_object(*rec, e);
                continue;
            case object_op::acquire:
                if (e.header.origin != here) {
                    int dest = e.header.origin;
                    rec->ready.push_front(std::move(e)); // travels at the head, starts there
                    try {
                        ship(*rec, dest, {});
                    } catch (...) {
                        object_entry refused = std::move(rec->ready.front());
                        rec->ready.pop_front();
                        refuse_move({refused.header.origin, refused.token}, rec->id, dest,
                                    std::current_exception());
                    }
                    continue;
                }
                break;
            case object_op::user:
                break;
            case object_op::cancelled: // dropped on admission, never queued
            case object_op::skip:
                continue;
            }
            grant(*rec, mode);
            if (e.header.op == object_op::acquire) {
                acquired.push_back(std::move(e));
            } else {
                handed.push_back(new pending_handler(rec, std::move(e), mode, handler_load(*rec)));
                rec->handed.push_back(handed.back());
            }
        }
        if (rec->gone_to == -1)
            notify_balancer(*rec);
    }
    for (auto& e : acquired)
        reply_value(
            e.header.origin, e.token,
            std::pair<std::uint64_t, std::uint64_t>(reinterpret_cast<std::uint64_t>(rec.get()),
                                                    reinterpret_cast<std::uint64_t>(rec->object)));
    for (auto* h : handed)
        lb.ready(h);
    spare = std::move(handed);
}

void finish(object_record& rec, access mode, bool handler, double load, std::uint64_t busy) {
    record_ptr more; // set when something may start now
    {
        std::lock_guard lock(rec.mutex);
        if (handler && measuring())
            learn(rec.history, busy, rec.weight);
        give_back(rec, mode, handler);
        // Taken under the lock: the access just given back may let another thread ship or
        // destroy the object, and so drop the directory's reference, once it is released.
        if (schedule_needed(rec))
            more = rec.shared_from_this();
    }
    if (handler)
        current_balancer().finished(load);
    if (more)
        schedule(more);
}

namespace {

// A handler's span in the trace, when tracing, with its busy time and its object's average
// before it (this run is learnt after, where access is given back).
struct observed_run {
    double begin = 0;
    int tid = 0;
    observed_run() {
        if (observing()) {
            begin = observe_now_us();
            tid = observe_tid();
        }
    }
    void end(const object_handler_entry& h, object_record& rec, std::uint64_t busy) const {
        if (!observing())
            return;
        double average = 0;
        if (tracing()) { // shared handlers of the object may be learning now
            std::lock_guard lock(rec.mutex);
            average = measured_seconds(rec.history);
        }
        note_object_handler(h.name, traced(rec.id), begin, tid, ticks_to_seconds(busy), average);
    }
};

// A coroutine handler from its start to its end: the access it runs under (its tasks see it
// through their access_context), its running time when measured, and what its end gives back.
// The handler's end frees it, on the thread where the handler ended.
struct running_task : pooled_frame {
    running_task(object_record& r, const object_handler_entry& h, access m, double l)
        : rec(r), handler(h), mode(m), load(l), held{r.id, m, h.id} {}
    object_record& rec; // kept here by the access granted for the task (see start_task)
    const object_handler_entry& handler;
    access mode;
    double load;
    held_access held;
    busy_meter meter;
    observed_run run;
};

void end_task(std::uint64_t context, std::exception_ptr failure) noexcept {
    std::unique_ptr<running_task> r(reinterpret_cast<running_task*>(context));
    if (failure)
        report_detached_error(r->handler.name, failure);
    // The last stretch ends here, on the thread that ran it.
    if (measuring())
        pause_meter(r->meter);
    const auto busy = r->meter.ticks.load(std::memory_order_relaxed);
    r->run.end(r->handler, r->rec, busy);
    finish(r->rec, r->mode, true, r->load, busy);
}

void start_claimed(void* arg) {
    auto* h = static_cast<pending_handler*>(arg);
    auto handler = find_object_handler(h->entry.header.handler);
    start_handler(std::move(h->rec), handler, h->entry, h->mode, h->load());
    delete h;
}

} // namespace

std::uint64_t invoke_plain(const record_ptr& rec, const object_handler_entry& h,
                           const object_call& call) {
    observed_run run;
    const std::uint64_t begin = measuring() ? now_ticks() : 0;
    try {
        h.run(call);
    } catch (...) {
        report_detached_error(h.name, std::current_exception());
    }
    const std::uint64_t busy = measuring() ? now_ticks() - begin : 0;
    run.end(h, *rec, busy);
    return busy;
}

namespace {

// Gives back the access of a plain handler that ended on this thread and, while the rank has
// nothing else to do and its quantum lasts, takes the object's next ready entry if it is a
// plain handler that may start now: a flood of messages to one object then runs here back to
// back, where the queued path would hand each to the balancer and claim it again. False once
// the access is given back and whatever may start is scheduled.
bool finish_and_take_next(const record_ptr& rec, std::uint64_t busy, access& mode, double& load,
                          object_entry& next, const object_handler_entry*& next_handler) {
    const double ended = load;
    bool took = false, more = false;
    {
        std::lock_guard lock(rec->mutex);
        if (measuring())
            learn(rec->history, busy, rec->weight);
        give_back(*rec, mode, true);
        more = schedule_needed(*rec);
        if (rec->gone_to == -1 && !rec->ready.empty() &&
            rec->ready.front().header.op == object_op::user && only_work_here() &&
            !quantum_expired()) {
            const auto* h = find_object_handler(rec->ready.front().header.handler);
            if (h && h->run && may_start(*rec, h->mode)) {
                read_weight(*rec);
                next = std::move(rec->ready.front());
                rec->ready.pop_front();
                mode = h->mode;
                grant(*rec, mode);
                ++rec->started;
                load = handler_load(*rec);
                next_handler = h;
                took = true;
                notify_balancer(*rec);
            }
        }
    }
    auto& lb = current_balancer();
    lb.finished(ended);
    // A shared one taken may leave others that can start beside it: they go to the balancer.
    if (more && (!took || mode == access::shared))
        schedule(rec);
    if (took)
        lb.started(load);
    return took;
}

} // namespace

void finish_plain(const record_ptr& rec, access mode, double load, std::uint64_t busy) {
    object_entry next;
    const object_handler_entry* next_handler = nullptr;
    while (finish_and_take_next(rec, busy, mode, load, next, next_handler))
        busy = invoke_plain(
            rec, *next_handler,
            object_call{rec->object, next.header.origin, next.token, next.payload, &next.bulk});
}

void run_plain(const record_ptr& rec, const object_handler_entry& h, const object_call& call,
               access mode, double load) {
    finish_plain(rec, mode, load, invoke_plain(rec, h, call));
}

void start_task(object_record& rec, const object_handler_entry& h, const object_call& call,
                access mode, double load) {
    const auto context = reinterpret_cast<std::uint64_t>(new running_task(rec, h, mode, load));
    auto& r = *reinterpret_cast<running_task*>(context);
    if (measuring())
        stretch_start = now_ticks();
    task<> t;
    try {
        t = h.invoke(call);
    } catch (...) {
        report_detached_error(h.name, std::current_exception());
    }
    if (!t.valid()) // the arguments were malformed
        return end_task(context, nullptr);
    std::move(t).start_detached(&end_task, context, {&r.held, measuring() ? &r.meter : nullptr});
}

void start_handler(record_ptr rec, const object_handler_entry* h, object_entry& e, access mode,
                   double load) {
    if (!h) {
        fail(e,
             fmt::format("rank {} has no object handler with id {:#x}", rank(), e.header.handler));
        return finish(*rec, mode, true, load);
    }
    const object_call call{rec->object, e.header.origin, e.token, e.payload, &e.bulk};
    if (h->run)
        return run_plain(rec, *h, call, mode, load);
    start_task(*rec, *h, call, mode, load);
}

} // namespace objects

using namespace objects;

void release_access(std::uint64_t record, access mode) noexcept {
    auto* rec = reinterpret_cast<object_record*>(record);
    finish(*rec, mode, false);
}

bool claim(pending_handler* h, work_item& w) {
    auto& rec = *h->rec;
    {
        std::lock_guard lock(rec.mutex);
        if (h->status == pending_handler::state::queued) {
            h->status = pending_handler::state::started;
            std::erase(rec.handed, h);
            ++rec.started;
            notify_balancer(rec);
            w = {&start_claimed, h};
            return true;
        }
    }
    delete h; // withdrawn by a migration that took its entry along
    return false;
}

} // namespace prema::detail
