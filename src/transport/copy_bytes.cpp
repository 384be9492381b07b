// The slow case of copy_bytes (prema/detail/transport/copy_bytes.hpp).
#include "prema/detail/transport/copy_bytes.hpp"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace prema::detail {

void copy_bytes_backward(void* dst, const void* src, std::size_t n) noexcept {
#if defined(__x86_64__) // SSE2 is part of x86-64
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    // 64 bytes a step from the end; the first n % 64 bytes last, with memcpy (under 64 bytes
    // it moves them through registers). Intrinsics, so that the compiler does not turn the
    // loop back into a call to memmove.
    std::size_t i = n;
    while (i >= 64) {
        i -= 64;
        const auto* from = reinterpret_cast<const __m128i*>(s + i);
        auto* to = reinterpret_cast<__m128i*>(d + i);
        const __m128i a = _mm_loadu_si128(from), b = _mm_loadu_si128(from + 1),
                      c = _mm_loadu_si128(from + 2), e = _mm_loadu_si128(from + 3);
        _mm_storeu_si128(to, a);
        _mm_storeu_si128(to + 1, b);
        _mm_storeu_si128(to + 2, c);
        _mm_storeu_si128(to + 3, e);
    }
    std::memcpy(d, s, i);
#else
    std::memcpy(dst, src, n);
#endif
}

} // namespace prema::detail
