// Handler ids: FNV-1a of a key that is the same on every rank of one binary (the mangled type
// name of the handler). Registration happens during static initialisation, before any rank can
// receive a message; afterwards the table is only read, so lookups take no lock.
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "base/errors.hpp"
#include "prema/transport/handler.hpp"
#include "transport/id_lookup.hpp"

namespace prema::detail {

namespace {
std::unordered_map<std::uint64_t, handler_entry>& table() {
    static std::unordered_map<std::uint64_t, handler_entry> t;
    return t;
}

} // namespace

std::uint64_t stable_hash(std::string_view s) noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : s) {
        h ^= std::uint8_t(c);
        h *= 0x100000001b3ull;
    }
    return h;
}

std::uint64_t register_handler(const char* key, invoker_fn invoke, bulk_receiver_fn receive_bulk,
                               bool takes_runs) {
    std::uint64_t id = stable_hash(key);
    auto [it, inserted] =
        table().try_emplace(id, handler_entry{id, demangle(key), invoke, receive_bulk, takes_runs});
    if (!inserted && it->second.invoke != invoke) {
        std::fprintf(stderr, "prema: handlers %s and %s hash to the same id %#llx; rename one\n",
                     it->second.name.c_str(), demangle(key).c_str(),
                     static_cast<unsigned long long>(id));
        std::abort();
    }
    return id;
}

const handler_entry* find_handler(std::uint64_t id) noexcept {
    return find_cached(table(), id);
}

const std::string& handler_name(std::uint64_t id) noexcept {
    static const std::string unknown = "<unknown handler>";
    auto* e = find_handler(id);
    return e ? e->name : unknown;
}

} // namespace prema::detail
