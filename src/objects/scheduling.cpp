// Access and scheduling: which ready entries may start (exclusive alone, shared together, in
// order), handing handlers to the load-balancing scheduler, running them on a worker, and
// giving access back when a handler ends or a guard dies.
#include <cstring>

#include <fmt/format.h>

#include "objects/layer.hpp"
#include "objects/pending_handler.hpp"
#include "prema/objects/objects.hpp"
#include "runtime/observe.hpp"

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

lb::object_load pending_load(const object_record& rec) {
    int n = int(rec.handed.size()) + rec.ready.handlers();
    return {rec.id, n * rec.weight, n};
}

void schedule(const record_ptr& rec) {
    std::vector<pending_handler*> handed;
    std::vector<object_entry> acquired;
    auto& lb = current_balancer();
    {
        std::lock_guard lock(rec->mutex);
        // load() is user code on the object, so it runs only while no other can: no handler
        // has started (a claimed one counts in `started` from the moment a worker takes it)
        // and no exclusive access is granted (a guard counts only there; a handler granted it
        // but not started yet is skipped too, and the weight is read again when it ends).
        if (rec->started == 0 && !rec->exclusive_running && rec->object && rec->type->weight)
            rec->weight = rec->type->weight(rec->object);
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
                    try {
                        ship(*rec, dest, e.header.origin, e.token);
                    } catch (...) {
                        refuse_move(e, rec->id, dest, std::current_exception());
                    }
                }
                continue;
            }
            case object_op::destroy:
                destroy_object(*rec, e);
                continue;
            case object_op::acquire:
                if (e.header.origin != here) {
                    int dest = e.header.origin;
                    rec->ready.push_front(std::move(e)); // travels at the head, starts there
                    try {
                        ship(*rec, dest, -1, 0);
                    } catch (...) {
                        object_entry refused = std::move(rec->ready.front());
                        rec->ready.pop_front();
                        refuse_move(refused, rec->id, dest, std::current_exception());
                    }
                    continue;
                }
                break;
            case object_op::user:
                break;
            case object_op::cancelled: // dropped on admission, never queued
                continue;
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

namespace {

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

// Makes the access the awaiting coroutine holds known to the tasks it awaits (access_context).
struct hold {
    const held_access& held;
    bool await_ready() const noexcept { return false; }
    template <class P> bool await_suspend(std::coroutine_handle<P> h) const noexcept {
        h.promise().holder = &held;
        return false;
    }
    void await_resume() const noexcept {}
};

detached run_handler(record_ptr rec, object_entry e, access mode, double load) {
    held_access held{rec->id, mode, e.header.handler};
    co_await hold{held};
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

} // namespace

} // namespace objects

using namespace objects;

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

} // namespace prema::detail
