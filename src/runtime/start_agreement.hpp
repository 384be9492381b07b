// What the ranks agree on when the runtime starts, in one collective: whether every rank's
// automatic progress rule picked a dedicated thread, whether any rank asked for the stats or a
// trace (every rank then takes part in the gathers at shutdown), and whether the options that
// must match do (must_match). One minimum along the tree where there were four MPI_Allreduce
// (transport/tree_blocking.hpp says why).
#pragma once

#include <string>

#include <mpi.h>

#include "prema/config.hpp"

namespace prema::detail {

struct start_agreement {
    bool all_dedicated = false; // every rank's resolve_progress() gave dedicated
    unsigned observe = 0;       // the OR of the ranks' observe flags (observe_stats, _trace)
    std::string mismatch;       // config_mismatch(): empty when the options agree
};

// Collective over `comm`, which carries nothing else meanwhile (the runtime's own communicator,
// before its progress engine starts). `mine`: the mode --prema-progress auto resolves to on
// this rank.
start_agreement agree_at_start(MPI_Comm comm, const config& cfg, progress_mode mine);

} // namespace prema::detail
