// The C++ heap of this process: every operator new and delete, which is what PREMA (and the
// benchmark) allocate with; MPI allocates with malloc and is not counted. So a rank's peak
// here is PREMA's own heap, apart from the MPI state that peak RSS above MPI_Init also holds
// (shared-memory pages of the peers MPI talks to, library pages, MPI's lazily made per-peer
// records: they grow with P although PREMA's heap does not).
#pragma once

#include <cstdint>

namespace scale_bench {

// The most bytes the C++ heap held at once since the program started (malloc's usable sizes).
std::int64_t heap_peak_bytes() noexcept;

} // namespace scale_bench
