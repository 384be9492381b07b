// Observability, the report half: starting --prema-stats and --prema-trace together, and at
// the end gathering every rank's counters and events to rank 0, which prints the table
// and writes the trace file. What is recorded, and how, is transport/observe.hpp.
#pragma once

namespace prema::detail {

struct runtime_state;

// Collective (runtime constructor) with `flags`, the ranks' agreed observe flags
// (start_agreement::observe): synchronises the ranks and takes the common time origin.
void observe_start(runtime_state& st, unsigned flags);
// Collective (runtime destructor, workers stopped, before the communicator is freed): gathers
// the counters and the events to rank 0, which prints the table and writes the trace file.
void observe_finish(runtime_state& st);

} // namespace prema::detail
