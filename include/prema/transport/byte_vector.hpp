// byte_vector: a std::vector of bytes whose resize() leaves new bytes uninitialised, so that
// receiving a 64 MiB payload does not first write 64 MiB of zeros.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace prema::detail {

template <class T> struct default_init_allocator : std::allocator<T> {
    template <class U> struct rebind { using other = default_init_allocator<U>; };
    using std::allocator<T>::allocator;
    template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }
};

using byte_vector = std::vector<std::byte, default_init_allocator<std::byte>>;

} // namespace prema::detail
