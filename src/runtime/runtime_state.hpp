// The runtime's state on this rank, composed of the layers' own: the transport's
// (transport_state, which the layers above it reach through state()), the checkpoint layer's
// (checkpoint_state), the balancer (which the object layer reaches as its balancer_link), and
// what only the runtime holds: the entry of the phase.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "checkpoint/checkpoint_state.hpp"
#include "prema/runtime.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

class balancer;

struct runtime_state : transport_state, checkpoint_state {
    progress_mode requested_progress = progress_mode::automatic; // as configured, for reports
    std::vector<int> pin_cpus; // --prema-pin: a core per worker, then the progress thread's
    std::unique_ptr<balancer> lb;

    entry_fn entry;
    std::atomic<std::uint64_t> entries{0}; // this rank's entry, while it runs
    std::atomic<bool> phase_over{false};

    runtime_state(MPI_Comm c, config cf);
    ~runtime_state();
};

} // namespace prema::detail
