// termination_detector: knows when the whole job has gone quiet.
//
// Counting waves (Mattern's four-counter method, with waves as non-blocking sums up and down
// PREMA's tree, tree_sum): a rank joins a wave only while it is idle, contributing how many
// messages it has sent and received.
// Two consecutive waves with equal sums (sent == received, unchanged in between) prove that no
// message was in flight and no rank did anything between them: the job is quiescent.
// A wave that finds messages in flight (sent != received) makes the next one wait, 4 us at
// first and twice as long each time up to max_wave_gap_us: a rank that is busy with traffic
// would otherwise keep a wave in flight all the time, and every poll pays for testing it. Every
// rank sees the same sums, so all wait alike; when the job goes quiet, detection takes at most one
// gap longer. Runs on the MPI thread only.
#pragma once

#include <cstdint>

#include "prema/coro/yield.hpp"
#include "transport/tree_sum.hpp"

namespace prema::detail {

struct local_counts {
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
    std::uint64_t waiters = 0; // coroutines in co_await quiescence()
    std::uint64_t entries = 0; // entry coroutines that have not finished
};

enum class wave_result {
    none,       // nothing decided yet
    quiescence, // quiet, and some rank awaits quiescence(): release the waiters
    finished,   // quiet, and every entry has finished: the phase is over
    deadlock,   // quiet, but entries remain suspended on something that can never happen
};

class termination_detector {
  public:
    // The waves travel as `sums`, which the detector uses only while a wave is in flight.
    explicit termination_detector(tree_sum& sums) : sums_(sums) {}

    // Starts a new phase: forgets the previous wave.
    void reset() noexcept {
        have_previous_ = false;
        gap_ticks_ = 0;
        next_wave_tick_ = 0;
    }

    static constexpr double first_wave_gap_us = 4, max_wave_gap_us = 64;

    // One step: joins a wave if `idle` (reading `counts` only then), tests the wave in flight.
    wave_result poll(bool idle, const local_counts& counts);

    bool wave_in_flight() const noexcept { return sums_.in_flight(); }

    // Whether an idle rank would start a wave now (the gap after a busy wave has passed).
    bool may_start_wave() const noexcept {
        return !wave_in_flight() && (next_wave_tick_ == 0 || now_ticks() >= next_wave_tick_);
    }

  private:
    tree_sum& sums_;
    tree_sum::values previous_{};
    bool have_previous_ = false;
    std::uint64_t gap_ticks_ = 0, next_wave_tick_ = 0; // now_ticks() units
};

} // namespace prema::detail
