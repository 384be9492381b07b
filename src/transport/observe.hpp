// Observability, the recording half: the counters and trace events of --prema-stats and
// --prema-trace that every layer from the transport up writes. The report (gathering to rank 0,
// the table, the trace file) is the runtime's (runtime/observe_report.hpp).
//
// Every hook on a hot path is behind observing() / tracing() / stats_on(): one load of a
// global and a branch predicted not taken. The global changes only while no worker runs (at
// runtime construction and destruction). Events are buffered per thread, in memory, without
// locks; ~runtime gathers them to rank 0 on the runtime's communicator.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace prema::detail {

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

// The report's start (no worker runs): records what `flags` asks for from now, with zeroed
// counters and no event; `progress_tid` names the progress thread in the trace.
void observe_begin(unsigned flags, int progress_tid);
// The common time origin of the ranks' events: now (the report calls it after a barrier).
void observe_restart_clock() noexcept;
// The report's end (no worker runs): stops recording; returns what was recorded.
unsigned observe_end() noexcept;

// This rank's counts since observe_begin().
struct observe_counters {
    std::atomic<std::uint64_t> handlers{0}, object_handlers{0}, sent{0}, received{0}, bytes_sent{0},
        bytes_received{0}, migrations_in{0}, migrations_out{0};
    std::atomic<std::uint64_t> wall_ticks{0};
};
const observe_counters& observed_counters() noexcept;
// This rank's trace events as JSON objects, comma-separated, the process and thread names
// first (Chrome trace event format, `rank` as the process id); drains the buffers.
std::string take_trace_events(int rank);

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

// An object as the trace names it (the transport knows no object_id: objects/traced.hpp).
struct traced_id {
    std::int32_t creator;
    std::uint64_t serial;
};

// The slow halves of the hooks; call only when observing().
// `name`: a registry's handler name, which lives as long as the process.
void note_handler(const std::string& name, int source, double begin_us, int tid);
// `busy_s`: the handler's running time; `measured_s`: its object's average before it (seconds).
void note_object_handler(const std::string& name, traced_id id, double begin_us, int tid,
                         double busy_s, double measured_s);
void note_send(int dest, std::uint64_t handler, std::size_t bytes);
void note_receive(int source, std::uint64_t handler, std::size_t bytes);
void note_migration(traced_id id, int from, int to, bool out);
void note_phase(std::uint64_t wall_ticks); // detail::now_ticks(), as the workers' times
// A load-balancing decision or policy message (trace only): `args` is a JSON object body.
void note_lb(const char* name, const std::string& args);

std::string json_id(traced_id id); // "creator:serial", for trace args

} // namespace prema::detail
