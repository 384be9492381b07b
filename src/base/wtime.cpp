#include "prema/wtime.hpp"

#include <chrono>

namespace prema {

// The trace's clock too (transport/observe.cpp), so that intervals line up with the trace.
double wtime() noexcept {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

} // namespace prema
