#include "prema/detail/coro/frame_allocator.hpp"

#include <array>
#include <new>

namespace prema::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool use_cache = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool use_cache = false;
#else
constexpr bool use_cache = true;
#endif
#else
constexpr bool use_cache = true;
#endif

constexpr std::size_t granule = 64, classes = 16; // frames up to 1 KiB are cached
constexpr std::size_t max_cached = 256;           // per class and thread

struct free_frame_node {
    free_frame_node* next;
};

struct frame_cache {
    std::array<free_frame_node*, classes> heads{};
    std::array<std::size_t, classes> counts{};
    ~frame_cache();
};

// Frames freed while the thread exits, after its cache is gone, go to the heap. The cache is
// reached through a plain pointer: a thread_local with a destructor is reached through a
// wrapper call that checks it is constructed, on every frame.
thread_local frame_cache* live_cache = nullptr;

frame_cache::~frame_cache() {
    live_cache = nullptr;
    for (auto* head : heads)
        while (head) {
            auto* next = head->next;
            ::operator delete(head);
            head = next;
        }
}

[[gnu::noinline]] frame_cache* first_use() noexcept {
    static thread_local bool constructed = false; // once per thread, never after exit
    if (constructed)
        return nullptr;
    constructed = true;
    thread_local frame_cache cache;
    live_cache = &cache;
    return live_cache;
}

frame_cache* usable_cache() noexcept {
    if (!use_cache)
        return nullptr;
    if (auto* c = live_cache) [[likely]]
        return c;
    return first_use();
}

std::size_t class_of(std::size_t bytes) noexcept {
    return (bytes + granule - 1) / granule - 1;
}

} // namespace

void* allocate_frame(std::size_t bytes) {
    std::size_t k = class_of(bytes);
    if (k < classes)
        if (auto* c = usable_cache(); c && c->heads[k]) {
            auto* node = c->heads[k];
            c->heads[k] = node->next;
            --c->counts[k];
            return node;
        }
    // Rounded up, so that any frame of the class can reuse the block.
    return ::operator new(k < classes ? (k + 1) * granule : bytes);
}

void free_frame(void* frame, std::size_t bytes) noexcept {
    std::size_t k = class_of(bytes);
    if (k < classes)
        if (auto* c = usable_cache(); c && c->counts[k] < max_cached) {
            c->heads[k] = new (frame) free_frame_node{c->heads[k]};
            ++c->counts[k];
            return;
        }
    ::operator delete(frame);
}

} // namespace prema::detail
