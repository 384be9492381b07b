// Measured load (--prema-lb-load): the busy time of every object handler, averaged per object
// and kept with the object wherever it moves, and what a pending handler weighs for the policy.
//
// Timing a handler costs two clock reads (a coroutine handler: one per suspension and one per
// resumption, see prema/detail/coro/busy_meter.hpp), so handlers are timed only when someone reads
// the figures: a balancing policy (--prema-lb other than none), --prema-stats or --prema-trace.
// Otherwise measuring() is false and the handler paths read no clock.
#pragma once

#include <cstdint>

#include "prema/config.hpp"

namespace prema::detail {

// An object's history, guarded by its record's lock; travels with it (pack_record).
struct load_history {
    double seconds = 0;     // busy seconds per handler, exponentially averaged
    double ratio = 0;       // busy seconds per unit of declared weight, likewise
    std::uint32_t runs = 0; // handlers measured (stops counting at its maximum)
};

// Weight of the newest handler in the averages. A quarter follows a change of an object's work
// within a few handlers, while one outlier (the thread preempted by the OS, a page fault) moves
// the estimate by a quarter of its error only.
inline constexpr double load_alpha = 0.25;

extern bool g_measuring;
inline bool measuring() noexcept {
    return __builtin_expect(g_measuring, 0);
}

// Runtime construction, after the ranks agreed on the mode and on observing: whether handlers
// are timed, the mode, and a fresh start of the rank's totals.
void start_measuring(bool on, load_mode mode);

// A handler of an object whose pending handlers weigh `declared` each ran for `busy` ticks
// (now_ticks() units). Record locked.
void learn(load_history& h, std::uint64_t busy, double declared);

// What one pending handler weighs under --prema-lb-load. `declared`: T::load(), or 1. Objects
// without history take the rank's ratio of measured seconds to declared weight, so that they
// compare with measured ones (1 while nothing is measured: the declared weight as it is).
double handler_load(const load_history& h, double declared) noexcept;

// Measured busy seconds per handler of an object with history, else 0 (object_load::measured).
inline double measured_seconds(const load_history& h) noexcept {
    return h.runs ? h.seconds : 0;
}

// This rank's handlers measured since the runtime started, and their busy seconds.
struct measured_totals {
    std::uint64_t runs = 0;
    double seconds = 0;
};
measured_totals measured_so_far() noexcept;

load_mode current_load_mode() noexcept;

double ticks_to_seconds(std::uint64_t ticks) noexcept;

} // namespace prema::detail
