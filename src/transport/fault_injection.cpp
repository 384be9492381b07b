#include "transport/fault_injection.hpp"

#include "transport/transport_state.hpp"

namespace prema::detail {

void inject_raw(int dest, std::span<const std::byte> bytes, std::span<const std::byte> payload) {
    state().engine->post_raw(dest, bytes, payload);
}

} // namespace prema::detail
