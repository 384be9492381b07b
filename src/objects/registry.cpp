// The object types and object handlers this program knows, by the stable hash of their names
// (registered before main(), looked up when a message or an install names them).
#include <unordered_map>

#include "base/errors.hpp"
#include "prema/objects/objects.hpp"
#include "transport/id_lookup.hpp"

namespace prema::detail {

namespace {
template <class V> std::unordered_map<std::uint64_t, V>& table() {
    static std::unordered_map<std::uint64_t, V> t;
    return t;
}
} // namespace

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

std::uint64_t register_object_handler(const char* key, object_runner run, object_invoker invoke,
                                      access mode, bulk_receiver_fn receive_bulk) {
    std::uint64_t id = stable_hash(key);
    table<object_handler_entry>().try_emplace(
        id, object_handler_entry{id, demangle(key), run, invoke, mode, receive_bulk});
    return id;
}

const object_handler_entry* find_object_handler(std::uint64_t id) noexcept {
    return find_cached(table<object_handler_entry>(), id);
}

} // namespace prema::detail
