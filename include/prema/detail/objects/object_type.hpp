/// @file
/// How a mobile object's type moves between ranks.
///
/// A type migrates through cereal: a `template <class Ar> void serialize(Ar&)` member, or
/// cereal's non-member save/load functions for types that cannot be changed (the equivalent of
/// PREMA's pack/unpack/size callbacks). The type is named on the wire by the hash of its
/// mangled name, registered before main() like handlers.
///
/// Load: if T has `double load() const`, each pending handler of a T is declared to weigh that much
/// for load balancing (read only while no handler runs on the object and no guard holds it
/// exclusively, so it never races with a writer); otherwise 1. --prema-lb-load says whether the
/// policy takes the declared weight, the measured busy time or (default) the declared weight
/// scaled by what was measured (src/objects/measured_load.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>

#include "prema/transport/serialization.hpp"

namespace prema::detail {

struct object_type {
    std::uint64_t id;
    std::string name;
    void (*destroy)(void* obj);
    void (*save)(const void* obj, byte_writer& w);
    void* (*load)(byte_reader& r);     // returns a new object
    double (*weight)(const void* obj); // T::load(), or nullptr: every handler weighs 1
};

const object_type& register_object_type(const char* key, void (*destroy)(void*),
                                        void (*save)(const void*, byte_writer&),
                                        void* (*load)(byte_reader&), double (*weight)(const void*));
const object_type* find_object_type(std::uint64_t id) noexcept;

template <class T> struct object_type_of {
    static void destroy(void* p) { delete static_cast<T*>(p); }
    static void save(const void* p, byte_writer& w) {
        output_archive ar(w);
        ar(*static_cast<const T*>(p));
    }
    static void* load(byte_reader& r) {
        auto obj = std::make_unique<T>();
        input_archive ar(r);
        ar(*obj);
        return obj.release();
    }
    static double weight(const void* p) { return double(static_cast<const T*>(p)->load()); }
    static constexpr double (*weight_fn)(const void*) = [] {
        if constexpr (requires(const T& t) { double(t.load()); })
            return &weight;
        else
            return static_cast<double (*)(const void*)>(nullptr);
    }();
    static inline const object_type& value =
        register_object_type(typeid(T).name(), &destroy, &save, &load, weight_fn);
};

template <class T>
inline constexpr bool is_mobile =
    std::is_default_constructible_v<T>&& cereal::traits::is_output_serializable<
        T, output_archive>::value&& cereal::traits::is_input_serializable<T, input_archive>::value;

} // namespace prema::detail
