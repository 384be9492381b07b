#include "transport/termination.hpp"

#include <algorithm>

#include "coro/worker_pool.hpp"
#include "prema/coro/yield.hpp"

namespace prema::detail {

termination_detector::~termination_detector() {
    // A wave in flight is collective; every rank stops at the same decision, so none is left.
    if (request_ != MPI_REQUEST_NULL)
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

wave_result termination_detector::poll(bool idle, const local_counts& c) {
    if (request_ == MPI_REQUEST_NULL) {
        if (!idle || !may_start_wave())
            return wave_result::none;
        mine_ = {c.sent, c.received, c.waiters, c.entries};
        MPI_Iallreduce(mine_.data(), sums_.data(), 4, MPI_UINT64_T, MPI_SUM, comm_, &request_);
    }
    int done = 0;
    MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (!done)
        return wave_result::none;

    if (sums_[0] != sums_[1]) {
        static const std::uint64_t first = std::uint64_t(first_wave_gap_us * ticks_per_us()),
                                   most = std::uint64_t(max_wave_gap_us * ticks_per_us());
        gap_ticks_ = std::min(most, gap_ticks_ ? 2 * gap_ticks_ : first);
        next_wave_tick_ = now_ticks() + gap_ticks_;
    } else {
        gap_ticks_ = next_wave_tick_ = 0;
    }
    bool quiet = sums_[0] == sums_[1] && have_previous_ && previous_[0] == sums_[0] &&
                 previous_[1] == sums_[1];
    previous_ = sums_;
    have_previous_ = true;
    if (!quiet)
        return wave_result::none;
    have_previous_ = false;
    if (sums_[2] > 0)
        return wave_result::quiescence;
    return sums_[3] == 0 ? wave_result::finished : wave_result::deadlock;
}

} // namespace prema::detail
