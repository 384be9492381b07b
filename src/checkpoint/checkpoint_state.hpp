// The checkpoint layer's state on this rank: its file I/O and its rounds. The runtime's state
// holds it (runtime_state derives from it) and makes it current while the runtime exists.
#pragma once

#include <atomic>
#include <memory>

#include "prema/error.hpp"

namespace prema::detail {

class io_reactor;
struct coordinator;

struct checkpoint_state {
    std::unique_ptr<io_reactor> io; // checkpoint file I/O, reaped by the progress engine's tick
    std::unique_ptr<coordinator> checkpoints; // checkpoint and restart rounds
};

inline std::atomic<checkpoint_state*> g_checkpoint_state{nullptr};

// The running runtime's (throws usage_error if none runs).
inline checkpoint_state& checkpoint_layer() {
    auto* s = g_checkpoint_state.load(std::memory_order_acquire);
    if (!s)
        throw usage_error("no PREMA runtime is running in this process");
    return *s;
}

} // namespace prema::detail
