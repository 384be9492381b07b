// copy_bytes(dst, src, n): std::memcpy, except in the one case where the C library's copy
// crawls on common HPC nodes.
//
// glibc's memcpy (2.36, Debian 12; x86-64 with "enhanced rep movsb") copies 2 KiB and more with
// `rep movsb`, which an AMD EPYC ran 4 to 27 times slower when the destination lay 1 to 31 bytes
// past the source modulo 4 KiB (8 KiB: 1,030 to 8,600 cycles instead of 270 to 320, depending on
// where the buffers start in their pages; benchmarks/latency prints the check for its node).
// PREMA's buffers met that case message after message, not by chance: a payload written into a
// buffer and the heap block allocated right after that buffer keep the same distance, and it lay
// inside the window for two in three sends of the 4-16 KiB ping-pong (8 and 16 KiB hops
// 1.9-3.0x raw MPI's over shared memory). There the bytes are copied with vector moves from the
// end towards the start, whose loads never follow a store to the same offset in a page: about as
// fast as an unhindered memcpy. Callers never pass overlapping ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace prema::detail {

// Copies from the end towards the start (src/transport/copy_bytes.cpp).
void copy_bytes_backward(void* dst, const void* src, std::size_t n) noexcept;

// Below 2 KiB glibc never uses `rep movsb` (its smallest threshold); the window of 64 bytes
// holds every distance measured slow (1 to 31) with a margin.
inline constexpr std::size_t slow_copy_min_bytes = 2048;
inline constexpr std::uintptr_t slow_copy_window = 64;

// Only x86-64 has `rep movsb`; elsewhere memcpy is always the way.
inline bool slow_for_memcpy(const void* dst, const void* src, std::size_t n) noexcept {
#if defined(__x86_64__)
    const std::uintptr_t ahead =
        (reinterpret_cast<std::uintptr_t>(dst) - reinterpret_cast<std::uintptr_t>(src)) & 4095;
    return n >= slow_copy_min_bytes && ahead - 1 < slow_copy_window - 1; // 1 <= ahead < 64
#else
    (void)dst, (void)src, (void)n;
    return false;
#endif
}

inline void copy_bytes(void* dst, const void* src, std::size_t n) noexcept {
    if (slow_for_memcpy(dst, src, n)) [[unlikely]]
        return copy_bytes_backward(dst, src, n);
    std::memcpy(dst, src, n);
}

} // namespace prema::detail
