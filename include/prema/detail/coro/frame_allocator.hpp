/// @file
/// Where coroutine frames of prema::task and of the runtime's detached coroutines live.
///
/// A coroutine handler allocates its frames with every message it handles; a per-thread cache
/// of freed frames, by size class, serves them without the heap. A frame freed on another
/// thread than the one that allocated it (coroutines resume wherever their reply arrives) joins
/// the freeing thread's cache. Each cache keeps a bounded number of frames per class and gives
/// the rest back to the heap; large frames bypass it. Sanitizer builds use the heap directly,
/// so that a use after free of a frame is still caught.
#pragma once

#include <cstddef>

namespace prema::detail {

void* allocate_frame(std::size_t bytes);
void free_frame(void* frame, std::size_t bytes) noexcept;

// Mixed into promise types: their frames come from allocate_frame.
struct pooled_frame {
    static void* operator new(std::size_t bytes) { return allocate_frame(bytes); }
    static void operator delete(void* frame, std::size_t bytes) noexcept {
        free_frame(frame, bytes);
    }
};

} // namespace prema::detail
