/// @file
/// Starting and stopping the runtime.
///
/// prema::run(argc, argv, entry) is the whole program: it initialises MPI if nobody has, runs
/// `entry` on every rank (SPMD, like an MPI main), and returns once the job is quiescent (no
/// handler running or queued, no message in flight, detected by counting waves, not timeouts).
/// prema::runtime embeds PREMA in an existing MPI code: construct it on a communicator after
/// MPI_Init, call run() for each phase, destroy it, and carry on with MPI; it never finalizes
/// MPI it did not initialise.
#pragma once

#include <functional>
#include <memory>

#include <mpi.h>

#include "prema/config.hpp"
#include "prema/coro/task.hpp"
#include "prema/transport/rank.hpp"

namespace prema {

/// The coroutine every rank runs: the body of a phase (runtime::run, prema::run).
using entry_fn = std::function<task<>()>;

/// The progress mode the runtime on this rank runs with: dedicated or inline, never automatic,
/// which the constructor resolves (the same mode on every rank). Fixed before the constructor
/// returns, so any thread may ask while the runtime exists: the thread that created it,
/// handlers on the workers, or threads of the application. Throws usage_error when none exists.
progress_mode resolved_progress();

/// PREMA inside an existing MPI code: one runtime per process at a time, whose run() calls
/// are the PREMA phases (see the file's description and docs/guide/embedding.md).
class runtime {
  public:
    /// Collective over `comm`, of whose ranks the runtime makes a communicator of its own
    /// (its messages never match the application's). MPI must be initialised with a
    /// thread level that `cfg.progress` needs (FUNNELED for dedicated, SERIALIZED for inline
    /// with several workers, for auto that of the mode it resolves to); otherwise usage_error
    /// says which level is missing.
    explicit runtime(MPI_Comm comm, config cfg = config::from_env());
    /// Collective: stops the runtime's threads and frees its communicator (MPI stays).
    ~runtime();
    runtime(const runtime&) = delete;
    runtime& operator=(const runtime&) = delete;

    /// Runs `entry` on every rank; returns at global quiescence, on every rank together.
    /// Returns 0, or 1 if a handler or entry failed on this rank (the errors are logged).
    /// With --prema-help (which the constructor prints on rank 0) it returns 0 at once.
    int run(entry_fn entry);

  private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// Parses --prema-* options out of argv, initialises MPI if needed, runs one phase and shuts
/// down. Returns 0 or 1 as runtime::run does; bad options are reported on rank 0 and give 2.
/// --prema-help and --prema-version print on rank 0 and return 0 without running `entry`.
int run(int& argc, char**& argv, entry_fn entry);

} // namespace prema
