// How many bytes PREMA hands MPI for a message, learnt through MPI's profiling interface: the
// benchmark defines MPI_Isend itself (wire_size.cpp), notes the size of each MPI_BYTE send while
// watching, and passes every call on to PMPI_Isend. Raw MPI's time depends on the bytes it moves
// (Open MPI's shared memory moves the smallest messages in one slot of a fast box), so the
// benchmark also times raw MPI at the size of PREMA's own message.
#pragma once

namespace wire_size {

// Starts noting (from nothing) or stops. Noting takes a lock per MPI_Isend; off, one relaxed
// load.
void watch(bool on) noexcept;

// The size, in bytes, that most MPI_BYTE MPI_Isends since watch(true) had (the larger of two
// equally common); 0 if none. The size of a chain's hops, not of its first message: that one
// leaves from a task, in a batch, while the hops leave from handlers on their own.
long most_common();

} // namespace wire_size
