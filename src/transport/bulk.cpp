// Where split-phase payloads are received (see include/prema/detail/transport/bulk.hpp), and the
// registry that lets the runtime empty every buffer pool when it ends.
#include <mutex>
#include <vector>

#include "prema/transport/handler.hpp"
#include "transport/progress_engine.hpp"

namespace prema::detail {

namespace {
struct pool_registry {
    std::mutex mutex;
    std::vector<void (*)() noexcept> clears;
};
pool_registry& pools() {
    static pool_registry r;
    return r;
}
} // namespace

bulk_counters& bulk_stats() noexcept {
    static bulk_counters c;
    return c;
}

void register_pool(void (*clear)() noexcept) {
    auto& r = pools();
    std::lock_guard lock(r.mutex);
    r.clears.push_back(clear);
}

void clear_pools() noexcept {
    auto& r = pools();
    std::lock_guard lock(r.mutex);
    for (auto clear : r.clears)
        clear();
}

void choose_receive_buffer(message& m) {
    auto& h = m.header();
    if (h.flags & flag_bulk)
        if (auto* e = find_handler(h.handler); e && e->receive_bulk)
            e->receive_bulk(incoming{h.source, h.token, m.payload()}, h.payload_bytes, m.split);
    if (!m.split)
        m.split.hold(vector_pool<byte_vector>::get().take(h.payload_bytes));
    bulk_stats().last_receive.store(m.split.data(), std::memory_order_relaxed);
}

} // namespace prema::detail
