#include "objects/directory.hpp"

#include <algorithm>
#include <cassert>

#include "prema/transport/rank.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

int home_of(object_id id) noexcept {
    int n = ranks();
    return n > 0 ? id.creator % n : id.creator;
}

directory::entry& directory::at(shard& s, object_id id, std::uint64_t epoch) {
    auto [it, inserted] = s.map.try_emplace(id);
    if (inserted) {
        it->second.where.rank = home_of(id);
        it->second.changed = epoch;
    }
    return it->second;
}

void directory::place(entry& e, const location& where, std::uint64_t epoch) {
    e.where = where;
    e.changed = epoch;
}

location directory::find(object_id id) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    auto it = s.map.find(id);
    if (it == s.map.end())
        return location{home_of(id), 0, nullptr, false, false};
    return it->second.where;
}

object_record* directory::local_record(object_id id) {
    struct last_look {
        const directory* dir = nullptr;
        std::uint64_t installs = 0;
        object_id id;
        record_ptr rec;
    };
    // 64 slots by the hash's top bits (a multiplicative hash's best mixed): a worker receiving
    // one message for each of 64 objects in turn took a shard lock and two shared_ptr counts
    // each time with a single slot.
    thread_local std::array<last_look, 64> looks;
    static_assert(sizeof(std::size_t) == 8);
    auto& last = looks[std::hash<object_id>{}(id) >> 58];
    // Read before the map: an install that the map may not show yet changes it after.
    const auto installs = installs_.load(std::memory_order_acquire);
    if (last.dir == this && last.installs == installs && last.id == id)
        return last.rec.get();
    last = {this, installs, id, find(id).local};
    return last.rec.get();
}

directory::send_slot directory::next_send(object_id id, bool ahead) {
    // A thread that numbers message after message to one object skips the hash lookup: it keeps
    // the entry it used last while no entry of any directory was erased since.
    struct last_use {
        std::uint64_t erasures = ~std::uint64_t(0);
        object_id id;
        entry* e = nullptr;
    };
    thread_local last_use last;
    auto& b = block_;
    assert(b.next == b.end); // close_block first
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    // Read under the lock: the epochs the messages of one pair are numbered in never go back.
    const auto epoch = current_epoch();
    // Read under the shard's lock too: an erasure counts itself before it takes the lock.
    const auto erasures = erasures_.load(std::memory_order_relaxed);
    const bool streak = last.erasures == erasures && last.id == id;
    if (!streak)
        last = {erasures, id, &at(s, id, epoch)};
    auto& e = *last.e;
    // Every message numbered two epochs ago or earlier has been admitted by now (the design
    // note's fact D): a new stream cannot overtake the old one.
    if (e.last_send == never || epoch >= e.last_send + 2) {
        e.stream = epoch;
        e.next_seq.store(0, std::memory_order_relaxed);
    }
    e.last_send = epoch;
    const auto& w = e.where;
    const send_slot slot{e.next_seq.load(std::memory_order_relaxed), e.stream, w.rank, w.moves,
                         w.local || w.destroyed || w.rank < 0 || w.rank >= ranks()};
    // The second message of a streak takes a block of 2, the next one of 4...
    const std::uint64_t size =
        ahead && streak && b.id == id && b.size > 0 ? std::min(2 * b.size, max_block) : 1;
    e.next_seq.store(slot.seq + size, std::memory_order_release);
    if (size == 1) { // no numbers ahead: the streak alone is noted (fewer stores per message)
        b.id = id;
        b.size = 1;
    } else {
        b = {erasures, id, epoch, slot.seq + 1, slot.seq + size, size, slot, &e.next_seq};
    }
    return slot;
}

std::optional<directory::unused_numbers> directory::close_block() {
    auto& b = block_;
    if (b.next == b.end)
        return std::nullopt;
    auto unused = unused_numbers{b.id, b.where, b.end - b.next};
    unused.first.seq = b.next;
    b.end = b.next;
    auto& s = shard_of(b.id);
    std::lock_guard lock(s.mutex);
    if (b.erasures == erasures_.load(std::memory_order_relaxed)) {
        auto it = s.map.find(b.id);
        if (it != s.map.end() && it->second.stream == unused.first.stream &&
            it->second.next_seq.load(std::memory_order_relaxed) ==
                unused.first.seq + unused.count) {
            it->second.next_seq.store(unused.first.seq, std::memory_order_relaxed);
            return std::nullopt;
        }
    }
    return unused;
}

void directory::set_local(object_id id, int here, record_ptr r, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    const auto epoch = current_epoch();
    place(at(s, id, epoch), location{here, moves, std::move(r), false, true}, epoch);
    installs_.fetch_add(1, std::memory_order_release);
}

void directory::set_remote(object_id id, int rank, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    const auto epoch = current_epoch();
    auto& e = at(s, id, epoch);
    // The object may already be back, installed with a higher move count: keep that.
    if (e.where.known && e.where.moves > moves)
        return;
    place(e, location{rank, moves, nullptr, false, true}, epoch);
}

void directory::set_destroyed(object_id id) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    const auto epoch = current_epoch();
    auto& e = at(s, id, epoch);
    place(e, location{e.where.rank, e.where.moves, nullptr, true, true}, epoch);
}

void directory::update_if_newer(object_id id, int rank, std::uint64_t moves) {
    auto& s = shard_of(id);
    std::lock_guard lock(s.mutex);
    const auto epoch = current_epoch();
    auto& e = at(s, id, epoch);
    if (e.where.local || e.where.destroyed || (e.where.known && moves <= e.where.moves))
        return;
    place(e, location{rank, moves, nullptr, false, true}, epoch);
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

std::pair<std::size_t, std::size_t> directory::size() {
    std::size_t all = 0, local = 0;
    for (auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        all += s.map.size();
        for (auto& [id, e] : s.map)
            local += e.where.local != nullptr;
    }
    return {all, local};
}

void directory::collect(std::uint64_t epoch) {
    const int here = rank();
    erasures_.fetch_add(1, std::memory_order_relaxed);
    for (auto& s : shards_) {
        std::lock_guard lock(s.mutex);
        std::erase_if(s.map, [&](const auto& item) {
            const auto& [id, e] = item;
            // The home answers for its live objects wherever they are.
            if (e.where.local || (home_of(id) == here && !e.where.destroyed))
                return false;
            // Two epochs: whatever the change set going (the install that left a tombstone
            // here, the notice of a destruction) has reached the home, and this rank's next
            // message to the object starts a new stream (next_send).
            return epoch >= e.changed + 2 && (e.last_send == never || epoch >= e.last_send + 2);
        });
    }
}

std::vector<record_ptr> directory::clear() {
    erasures_.fetch_add(1, std::memory_order_relaxed);
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
