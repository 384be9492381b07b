/// @file
/// prema::rank(), prema::ranks() and prema::current_config(): where the calling code runs.
/// Declared by the transport, which owns the runtime's communicator; prema/runtime.hpp
/// includes this header.
#pragma once

#include "prema/config.hpp"

namespace prema {

/// This rank in the running runtime's communicator (-1 when none runs).
int rank() noexcept;
/// The number of ranks of the running runtime (0 when none runs).
int ranks() noexcept;

/// The runtime's config; valid while a runtime exists on this rank. Its `progress` is the
/// resolved mode, as resolved_progress() gives it.
const config& current_config();

} // namespace prema
