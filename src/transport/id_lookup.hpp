// Looking up a registry entry by id on every message: a direct-mapped cache per thread answers
// the usual few ids without hashing into the table. Registries are filled before main() and
// only read afterwards, and their entries never move, so cached pointers stay valid.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

namespace prema::detail {

template <class Entry>
const Entry* find_cached(const std::unordered_map<std::uint64_t, Entry>& table,
                         std::uint64_t id) noexcept {
    struct slot {
        std::uint64_t id;
        const Entry* entry;
    };
    thread_local std::array<slot, 64> cache{};
    auto& s = cache[(id ^ (id >> 29)) % cache.size()];
    if (s.entry && s.id == id) [[likely]]
        return s.entry;
    auto it = table.find(id);
    if (it == table.end())
        return nullptr;
    s = {id, &it->second};
    return s.entry;
}

} // namespace prema::detail
