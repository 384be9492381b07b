// prema::self: the mobile_ptr of an object that lives here, found from its address. The layer
// notes each object's address while it lives on this rank (installed by creation, migration or
// restart; forgotten before it is destroyed or leaves), so that a handler, which is handed the
// object itself, can name it without being sent its pointer.
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "objects/layer.hpp"

namespace prema::detail::objects {

namespace {

struct address_index {
    std::mutex mutex;
    std::unordered_map<const void*, const object_record*> by_address;
};

address_index& addresses() {
    static address_index index;
    return index;
}

} // namespace

void note_address(const object_record& rec) {
    auto& a = addresses();
    std::lock_guard lock(a.mutex);
    a.by_address[rec.object] = &rec;
}

void forget_address(const object_record& rec) {
    auto& a = addresses();
    std::lock_guard lock(a.mutex);
    if (auto it = a.by_address.find(rec.object); it != a.by_address.end() && it->second == &rec)
        a.by_address.erase(it);
}

std::size_t noted_addresses() {
    auto& a = addresses();
    std::lock_guard lock(a.mutex);
    return a.by_address.size();
}

void forget_all_addresses() {
    auto& a = addresses();
    std::lock_guard lock(a.mutex);
    a.by_address.clear();
}

} // namespace prema::detail::objects

// The record cannot go away meanwhile for the callers self() is meant for: a handler holds its
// object, which neither migrates nor is destroyed before the handler ends.
prema::object_id prema::detail::self_id(const void* object, std::uint64_t type_id,
                                        const char* type_name) {
    auto& a = objects::addresses();
    std::lock_guard lock(a.mutex);
    auto it = a.by_address.find(object);
    if (it == a.by_address.end())
        throw usage_error(fmt::format("prema::self: the {} at {} is not a mobile object living on "
                                      "rank {} (pass the object a handler was given)",
                                      demangle(type_name), object, rank()));
    const object_record& rec = *it->second;
    if (rec.type->id != type_id)
        throw usage_error(fmt::format("prema::self: the object at {} is a {}, not a {}", object,
                                      rec.type->name, demangle(type_name)));
    return rec.id;
}
