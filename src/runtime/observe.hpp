// Observability: --prema-stats (per-rank counters and busy/idle/overhead time, printed by
// rank 0 at shutdown) and --prema-trace FILE (Chrome trace event format, merged on rank 0).
//
// Every hook on a hot path is behind observing() / tracing() / stats_on(): one load of a
// global and a branch predicted not taken. The global changes only while no worker runs (at
// runtime construction and destruction). Events are buffered per thread, in memory, without
// locks; ~runtime gathers them to rank 0 on the runtime's communicator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "prema/objects/mobile_ptr.hpp"

namespace prema::detail {

struct runtime_state;

// observe_count: the message counters only, nothing printed (count_messages).
enum : unsigned { observe_stats = 1u, observe_trace = 2u, observe_count = 4u };
extern unsigned g_observe;

inline bool observing() noexcept {
    return __builtin_expect(g_observe != 0, 0);
}
inline bool tracing() noexcept {
    return __builtin_expect((g_observe & observe_trace) != 0, 0);
}
inline bool stats_on() noexcept {
    return __builtin_expect((g_observe & observe_stats) != 0, 0);
}

// Collective (runtime constructor): agrees on the options, synchronises the ranks and takes
// the common time origin.
void observe_start(runtime_state& st);
// Collective (runtime destructor, workers stopped, before the communicator is freed): gathers
// the counters and the events to rank 0, which prints the table and writes the trace file.
void observe_finish(runtime_state& st);

// Turns the message counters on or off without --prema-stats, for measurements and tests that
// count messages. Every rank alike, while a runtime exists, between its phases (no worker runs);
// the runtime's end turns them off.
void count_messages(bool on) noexcept;
// This rank's messages so far while counting (--prema-stats or count_messages): handler
// messages, not MPI messages (a batch counts as its items), with their wire bytes.
struct message_counts {
    std::uint64_t sent = 0, received = 0, bytes_sent = 0, bytes_received = 0;
};
message_counts counted_messages() noexcept;

// Microseconds since the common origin.
double observe_now_us() noexcept;
// The trace thread id of the calling thread: its worker index, or the progress thread's id.
int observe_tid() noexcept;

// The slow halves of the hooks; call only when observing().
// `name`: a registry's handler name, which lives as long as the process.
void note_handler(const std::string& name, int source, double begin_us, int tid);
// `busy_s`: the handler's running time; `measured_s`: its object's average before it (seconds).
void note_object_handler(const std::string& name, object_id id, double begin_us, int tid,
                         double busy_s, double measured_s);
void note_send(int dest, std::uint64_t handler, std::size_t bytes);
void note_receive(int source, std::uint64_t handler, std::size_t bytes);
void note_migration(object_id id, int from, int to, bool out);
void note_phase(std::uint64_t wall_ticks); // detail::now_ticks(), as the workers' times
// A load-balancing decision or policy message (trace only): `args` is a JSON object body.
void note_lb(const char* name, const std::string& args);

std::string json_id(object_id id); // "creator:serial", for trace args

} // namespace prema::detail
