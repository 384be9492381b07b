/// @file
/// mobile_ptr<T>: the global name of a mobile object, valid on every rank.
///
/// Identity is (creator rank, creator's serial number); it never changes when the object moves.
/// Trivially copyable, so it travels inside messages as plain bytes. A default-constructed
/// pointer is null.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace prema {

/// The identity of a mobile object, whatever its type: what policies and guards name.
struct object_id {
    std::int32_t creator = -1;  ///< the rank that created it; negative for the null id
    std::uint32_t reserved = 0; ///< zero; keeps the layout free of padding on the wire
    std::uint64_t serial = 0;   ///< the creator's serial number of the object

    /// True for the null id (a default-constructed mobile_ptr's).
    bool null() const noexcept { return creator < 0; }
    friend bool operator==(const object_id&, const object_id&) = default;
    friend auto operator<=>(const object_id&, const object_id&) = default;
};

/// The global name of a mobile object of type T: send it anywhere, and address the object
/// through it (prema::send, prema::call, prema::migrate, ...) wherever it lives.
template <class T> class mobile_ptr {
  public:
    using element_type = T; ///< the object's type

    /// The null pointer.
    mobile_ptr() noexcept = default;
    /// The pointer to the object named `id`; the caller vouches that it is a T.
    explicit mobile_ptr(object_id id) noexcept : id_(id) {}

    /// The object's identity.
    object_id id() const noexcept { return id_; }
    /// The rank that created the object (not where it lives now).
    int creator() const noexcept { return id_.creator; }
    /// False for the null pointer.
    explicit operator bool() const noexcept { return !id_.null(); }
    friend bool operator==(const mobile_ptr&, const mobile_ptr&) = default;
    friend auto operator<=>(const mobile_ptr&, const mobile_ptr&) = default;

    /// For containers of pointers and objects that hold pointers to other objects.
    template <class Archive> void serialize(Archive& ar) {
        ar(id_.creator, id_.reserved, id_.serial);
    }

  private:
    object_id id_;
};

} // namespace prema

/// @cond internal
// Hashes object ids for unordered containers.
template <> struct std::hash<prema::object_id> {
    std::size_t operator()(const prema::object_id& id) const noexcept {
        return std::hash<std::uint64_t>{}(id.serial * 0x9e3779b97f4a7c15ull ^
                                          std::uint64_t(std::uint32_t(id.creator)));
    }
};
/// @endcond
