// Replaces the global operator new and delete to count the C++ heap (heap_count.hpp).
#include "heap_count.hpp"

#include <atomic>
#include <cstdlib>
#include <malloc.h>
#include <new>

// The replacements pair malloc with free; GCC cannot see that the replaced operator delete
// matches the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace {

std::atomic<std::int64_t> live{0}, peak{0};

void* counted(void* p) {
    if (!p)
        throw std::bad_alloc();
    const auto now =
        live.fetch_add(std::int64_t(malloc_usable_size(p)), std::memory_order_relaxed) +
        std::int64_t(malloc_usable_size(p));
    auto seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
    return p;
}

void uncounted(void* p) noexcept {
    if (p)
        live.fetch_sub(std::int64_t(malloc_usable_size(p)), std::memory_order_relaxed);
    std::free(p);
}

} // namespace

std::int64_t scale_bench::heap_peak_bytes() noexcept {
    return peak.load(std::memory_order_relaxed);
}

void* operator new(std::size_t n) {
    return counted(std::malloc(n ? n : 1));
}
void* operator new(std::size_t n, std::align_val_t al) {
    const auto a = std::size_t(al);
    return counted(std::aligned_alloc(a, (n + a - 1) / a * a));
}
void operator delete(void* p) noexcept {
    uncounted(p);
}
void operator delete(void* p, std::size_t) noexcept {
    uncounted(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    uncounted(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    uncounted(p);
}
