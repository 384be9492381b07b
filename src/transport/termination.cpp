#include "transport/termination.hpp"

namespace prema::detail {

termination_detector::~termination_detector() {
    // A wave in flight is collective; every rank stops at the same decision, so none is left.
    if (request_ != MPI_REQUEST_NULL)
        MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

wave_result termination_detector::poll(bool idle, const local_counts& c) {
    if (request_ == MPI_REQUEST_NULL) {
        if (!idle)
            return wave_result::none;
        mine_ = {c.sent, c.received, c.waiters, c.entries};
        MPI_Iallreduce(mine_.data(), sums_.data(), 4, MPI_UINT64_T, MPI_SUM, comm_, &request_);
    }
    int done = 0;
    MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (!done)
        return wave_result::none;

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
