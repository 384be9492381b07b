#include "objects/measured_load.hpp"

#include <atomic>
#include <limits>

#include "coro/worker_pool.hpp"

namespace prema::detail {

bool g_measuring = false;

namespace {

load_mode g_mode = load_mode::hybrid;
double g_seconds_per_tick = 0;

// The rank's sums, for the ratio of objects without history and for --prema-stats. Relaxed:
// each is a running figure on its own; a reader may see one handler in one sum and not yet in
// the other, which moves the ratio by one handler's worth.
std::atomic<std::uint64_t> g_runs{0};
std::atomic<double> g_seconds{0}, g_declared{0};

} // namespace

void start_measuring(bool on, load_mode mode) {
    g_measuring = on;
    g_mode = mode;
    g_seconds_per_tick = 1e-6 / ticks_per_us();
    g_runs.store(0, std::memory_order_relaxed);
    g_seconds.store(0, std::memory_order_relaxed);
    g_declared.store(0, std::memory_order_relaxed);
}

double ticks_to_seconds(std::uint64_t ticks) noexcept {
    return double(ticks) * g_seconds_per_tick;
}

void learn(load_history& h, std::uint64_t busy, double declared) {
    const double s = ticks_to_seconds(busy);
    // A zero declared weight says nothing of the ratio (and would divide by it).
    const bool scaled = declared > 0;
    const double r = scaled ? s / declared : 0;
    if (h.runs == 0) {
        h.seconds = s;
        h.ratio = r;
    } else {
        h.seconds += load_alpha * (s - h.seconds);
        if (scaled)
            h.ratio += load_alpha * (r - h.ratio);
    }
    if (h.runs != std::numeric_limits<std::uint32_t>::max())
        ++h.runs;
    g_runs.fetch_add(1, std::memory_order_relaxed);
    g_seconds.fetch_add(s, std::memory_order_relaxed);
    if (scaled)
        g_declared.fetch_add(declared, std::memory_order_relaxed);
}

namespace {
double rank_ratio() noexcept {
    const double declared = g_declared.load(std::memory_order_relaxed);
    return declared > 0 ? g_seconds.load(std::memory_order_relaxed) / declared : 1.0;
}
} // namespace

double handler_load(const load_history& h, double declared) noexcept {
    switch (g_mode) {
    case load_mode::declared:
        return declared;
    case load_mode::measured:
        return h.runs ? h.seconds : declared * rank_ratio();
    case load_mode::hybrid:
        break;
    }
    return declared * (h.runs ? h.ratio : rank_ratio());
}

measured_totals measured_so_far() noexcept {
    return {g_runs.load(std::memory_order_relaxed), g_seconds.load(std::memory_order_relaxed)};
}

load_mode current_load_mode() noexcept {
    return g_mode;
}

} // namespace prema::detail
