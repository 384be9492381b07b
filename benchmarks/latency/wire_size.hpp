// How many bytes PREMA hands MPI for a message, learnt through MPI's profiling interface: the
// benchmark defines MPI_Isend itself (wire_size.cpp), notes the size of each MPI_BYTE send while
// watching, and passes every call on to PMPI_Isend. Raw MPI's time depends on the bytes it moves
// (Open MPI's shared memory moves the smallest messages in one slot of a fast box), so the
// benchmark also times raw MPI at the size of PREMA's own message.
#pragma once

namespace wire_size {

// Starts noting (from zero) or stops. Noting costs a compare-exchange per MPI_Isend that is the
// largest yet; off, one relaxed load.
void watch(bool on) noexcept;

// The largest MPI_BYTE MPI_Isend, in bytes, since watch(true).
long largest() noexcept;

} // namespace wire_size
