#include "transport/termination.hpp"

#include <algorithm>

#include "coro/worker_pool.hpp"
#include "prema/coro/yield.hpp"

namespace prema::detail {

wave_result termination_detector::poll(bool idle, const local_counts& c) {
    if (!sums_.in_flight()) {
        if (!idle || !may_start_wave())
            return wave_result::none;
        sums_.start({c.sent, c.received, c.waiters, c.entries});
    }
    if (!sums_.test())
        return wave_result::none;
    const tree_sum::values sums = sums_.take();
    if (sums[0] != sums[1]) {
        static const std::uint64_t first = std::uint64_t(first_wave_gap_us * ticks_per_us()),
                                   most = std::uint64_t(max_wave_gap_us * ticks_per_us());
        gap_ticks_ = std::min(most, gap_ticks_ ? 2 * gap_ticks_ : first);
        next_wave_tick_ = now_ticks() + gap_ticks_;
    } else {
        gap_ticks_ = next_wave_tick_ = 0;
    }
    bool quiet =
        sums[0] == sums[1] && have_previous_ && previous_[0] == sums[0] && previous_[1] == sums[1];
    previous_ = sums;
    have_previous_ = true;
    if (!quiet)
        return wave_result::none;
    have_previous_ = false;
    if (sums[2] > 0)
        return wave_result::quiescence;
    return sums[3] == 0 ? wave_result::finished : wave_result::deadlock;
}

} // namespace prema::detail
