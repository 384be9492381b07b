#include "objects/directory.hpp"

#include "prema/runtime.hpp"

namespace prema::detail {

int home_of(object_id id) noexcept {
    int n = ranks();
    return n > 0 ? id.creator % n : id.creator;
}

directory::entry& directory::at(shard& s, object_id id) {
    auto [it, inserted] = s.map.try_emplace(id);
    if (inserted)
        it->second.where.rank = home_of(id);
    return it->second;
}

location directory::find(object_id id) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto it = s.map.find(id);
    if (it == s.map.end())
        return location{home_of(id), 0, nullptr, false, false};
    return it->second.where;
}

record_ptr directory::local_record(object_id id) {
    struct last_look {
        const directory* dir = nullptr;
        std::uint64_t installs = 0;
        object_id id;
        record_ptr rec;
    };
    thread_local last_look last;
    // Read before the map: an install that the map may not show yet changes it after.
    const auto installs = installs_.load(std::memory_order_acquire);
    if (last.dir == this && last.installs == installs && last.id == id)
        return last.rec;
    record_ptr rec = find(id).local;
    last = {this, installs, id, rec};
    return rec;
}

directory::send_slot directory::next_send(object_id id) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto& e = at(s, id);
    const auto& w = e.where;
    return {e.next_seq++, w.rank, w.moves,
            w.local || w.destroyed || w.rank < 0 || w.rank >= ranks()};
}

void directory::set_local(object_id id, int here, record_ptr r, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    at(s, id).where = location{here, moves, std::move(r), false, true};
    installs_.fetch_add(1, std::memory_order_release);
}

void directory::set_remote(object_id id, int rank, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto& e = at(s, id);
    // The object may already be back, installed with a higher move count: keep that.
    if (e.where.known && e.where.moves > moves)
        return;
    e.where = location{rank, moves, nullptr, false, true};
}

void directory::set_destroyed(object_id id) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto& e = at(s, id);
    e.where.local = nullptr;
    e.where.destroyed = true;
    e.where.known = true;
}

void directory::update_if_newer(object_id id, int rank, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto& e = at(s, id);
    if (e.where.local || e.where.destroyed || (e.where.known && moves <= e.where.moves))
        return;
    e.where = location{rank, moves, nullptr, false, true};
}

std::vector<record_ptr> directory::local_records() {
    std::vector<record_ptr> local;
    for (auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (auto& [id, e] : s.map)
            if (e.where.local)
                local.push_back(e.where.local);
    }
    return local;
}

bool directory::empty() {
    for (auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        if (!s.map.empty())
            return false;
    }
    return true;
}

std::vector<record_ptr> directory::clear() {
    std::vector<record_ptr> local;
    for (auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        for (auto& [id, e] : s.map)
            if (e.where.local)
                local.push_back(std::move(e.where.local));
        s.map.clear();
    }
    installs_.fetch_add(1, std::memory_order_release);
    return local;
}

} // namespace prema::detail
