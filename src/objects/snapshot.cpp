// The object layer's side of checkpoint and restart (object_snapshot.hpp).
#include <algorithm>

#include "objects/layer.hpp"
#include "objects/object_snapshot.hpp"
#include "prema/error.hpp"
#include "prema/objects/objects.hpp"

namespace prema::detail {

using namespace objects;

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
    pack_record(w, rec, rec.moves, {});
}

void install_restored(std::vector<record_ptr> records) {
    hook_shutdown();
    int here = rank();
    for (auto& rec : records) {
        // Counters restart at zero on both ends (prema/checkpoint.hpp); one more move than any
        // location a stale entry could claim.
        rec->expected.clear();
        ++rec->moves;
        install_local(rec, here, rec->moves);
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
