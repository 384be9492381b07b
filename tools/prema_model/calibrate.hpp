// prema-model --calibrate: measures the model's machine parameters on this machine and
// runtime (under mpirun -np 2) and writes them where prema-model --machine reads them.
#pragma once

#include <string>

#include <prema/config.hpp>

namespace prema::model {

// Collective over MPI_COMM_WORLD (initialised; 2 ranks or more, ranks 0 and 1 take part).
// Progress on rank 0's stderr; rank 0 writes `path`. Returns the exit status.
int calibrate(const config& cfg, const std::string& path);

} // namespace prema::model
