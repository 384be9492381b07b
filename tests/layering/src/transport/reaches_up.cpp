// A transport source that includes the runtime above it: check-layering.py must name it.
#include "runtime/runtime_state.hpp"
#include "transport/transport_state.hpp"
