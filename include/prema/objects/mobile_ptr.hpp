// mobile_ptr<T>: the global name of a mobile object, valid on every rank.
//
// Identity is (creator rank, creator's serial number); it never changes when the object moves.
// Trivially copyable, so it travels inside messages as plain bytes. A default-constructed
// pointer is null.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace prema {

struct object_id {
    std::int32_t creator = -1;
    std::uint32_t reserved = 0;
    std::uint64_t serial = 0;

    bool null() const noexcept { return creator < 0; }
    friend bool operator==(const object_id&, const object_id&) = default;
    friend auto operator<=>(const object_id&, const object_id&) = default;
};

template <class T> class mobile_ptr {
  public:
    using element_type = T;

    mobile_ptr() noexcept = default;
    explicit mobile_ptr(object_id id) noexcept : id_(id) {}

    object_id id() const noexcept { return id_; }
    int creator() const noexcept { return id_.creator; }
    explicit operator bool() const noexcept { return !id_.null(); }
    friend bool operator==(const mobile_ptr&, const mobile_ptr&) = default;
    friend auto operator<=>(const mobile_ptr&, const mobile_ptr&) = default;

    // For containers of pointers and objects that hold pointers to other objects.
    template <class Archive> void serialize(Archive& ar) {
        ar(id_.creator, id_.reserved, id_.serial);
    }

  private:
    object_id id_;
};

} // namespace prema

template <> struct std::hash<prema::object_id> {
    std::size_t operator()(const prema::object_id& id) const noexcept {
        return std::hash<std::uint64_t>{}(id.serial * 0x9e3779b97f4a7c15ull ^
                                          std::uint64_t(std::uint32_t(id.creator)));
    }
};
