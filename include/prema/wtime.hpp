/// @file
/// prema::wtime(): the clock of --prema-trace, for the program's own timings.
#pragma once

namespace prema {

/// Seconds on a monotonic clock (std::chrono::steady_clock) with an arbitrary origin: only
/// differences mean something, as with MPI_Wtime. It is the clock the trace's timestamps come
/// from, so intervals the program measures line up with the trace. Any thread, with or without
/// a runtime; a few tens of nanoseconds.
double wtime() noexcept;

} // namespace prema
