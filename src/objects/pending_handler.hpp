// pending_handler: an object handler that may start (in order, access granted), waiting in the
// load-balancing scheduler for a worker. Until a worker claims it, its object may still
// migrate: the object layer then withdraws it, under the object's lock, and ships its entry.
#pragma once

#include "coro/worker_pool.hpp"
#include "objects/object_record.hpp"
#include "prema/objects/ready_work.hpp"

namespace prema::detail {

struct pending_handler final : lb::ready_handler {
    enum class state { queued, started, withdrawn }; // guarded by rec->mutex
    pending_handler(record_ptr r, object_entry e, access m, double load)
        : ready_handler(r->id, load), rec(std::move(r)), entry(std::move(e)), mode(m) {}

    state status = state::queued;
    record_ptr rec;
    object_entry entry;
    access mode;
};

// Turns a popped handler into work for the calling worker; false (and frees it) if withdrawn.
bool claim(pending_handler* h, work_item& w);

// Moves a local object whose handlers have not started to `dest` with all its pending work.
bool migrate_for_balance(object_id id, int dest);

} // namespace prema::detail
