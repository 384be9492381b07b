/// @file
/// byte_vector: a std::vector of bytes whose resize() leaves new bytes uninitialised, so that
/// receiving a 64 MiB payload does not first write 64 MiB of zeros. Buffers of 1 MiB and more
/// start on a page boundary, so that checkpoints can write them around the page cache
/// (O_DIRECT).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace prema::detail {

template <class T> struct default_init_allocator : std::allocator<T> {
    template <class U> struct rebind { using other = default_init_allocator<U>; };
    using std::allocator<T>::allocator;
    template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
    template <class U, class... A> void construct(U* p, A&&... a) {
        ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
    }

    static constexpr std::size_t page = 4096, large = std::size_t{1} << 20;
    T* allocate(std::size_t n) {
        if (n * sizeof(T) < large)
            return std::allocator<T>::allocate(n);
        return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(page)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < large)
            std::allocator<T>::deallocate(p, n);
        else // unsized: clang declares the sized form only under -fsized-deallocation
            ::operator delete(p, std::align_val_t(page));
    }
};

using byte_vector = std::vector<std::byte, default_init_allocator<std::byte>>;

} // namespace prema::detail
