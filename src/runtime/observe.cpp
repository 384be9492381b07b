#include "runtime/observe.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "coro/worker_pool.hpp"
#include "objects/measured_load.hpp"
#include "prema/objects/objects.hpp"
#include "prema/transport/handler.hpp"
#include "prema/wtime.hpp"
#include "runtime/core_sharing.hpp"
#include "runtime/gather_parts.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_state.hpp"

namespace prema::detail {

unsigned g_observe = 0;

namespace {

using clock = std::chrono::steady_clock;
clock::time_point g_origin = clock::now();
int g_progress_tid = 0;
std::uint64_t g_forwards_at_start = 0;

struct counters_t {
    std::atomic<std::uint64_t> handlers{0}, object_handlers{0}, sent{0}, received{0}, bytes_sent{0},
        bytes_received{0}, migrations_in{0}, migrations_out{0};
    std::atomic<std::uint64_t> wall_ticks{0};
    void reset() {
        for (auto* c : {&handlers, &object_handlers, &sent, &received, &bytes_sent, &bytes_received,
                        &migrations_in, &migrations_out, &wall_ticks})
            c->store(0, std::memory_order_relaxed);
    }
};
counters_t g_counters;

// What the args of an event hold; formatted at the gather, not when recorded.
enum class args_kind : std::uint8_t { text, source, object, message, migration };

struct event {
    const char* name;          // static text, or
    const std::string* name_s; // a registry's handler name (stable: node-based map)
    const char* cat;
    char ph;
    args_kind kind;
    int tid;
    double ts, dur;
    std::int64_t a = 0, b = 0;    // source | peer, bytes | from, to | busy, measured (ns)
    object_id id{};               // object, migration
    const std::string* handler{}; // message: the handler's name
    std::string args{};           // text: body of a JSON object
};

// One per thread that ever recorded an event; owned by the registry so that events of joined
// worker threads survive until the gather. Only its thread appends; the gather runs when no
// worker does.
struct thread_buffer {
    std::vector<event> events;
};
std::mutex g_registry_mutex;
std::vector<std::unique_ptr<thread_buffer>> g_registry;
thread_local thread_buffer* tls_buffer = nullptr;

thread_buffer& local_buffer() {
    if (!tls_buffer) {
        std::lock_guard lock(g_registry_mutex);
        g_registry.push_back(std::make_unique<thread_buffer>());
        tls_buffer = g_registry.back().get();
    }
    return *tls_buffer;
}

event& record(const char* name, const std::string* name_s, const char* cat, char ph, args_kind kind,
              double ts, double dur, int tid) {
    auto& v = local_buffer().events;
    v.push_back(event{name, name_s, cat, ph, kind, tid, ts, dur});
    return v.back();
}

std::string escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", int(static_cast<unsigned char>(c)));
        } else {
            out += c;
        }
    }
    return out;
}

std::string json_args(const event& e) {
    switch (e.kind) {
    case args_kind::text:
        return e.args;
    case args_kind::source:
        return fmt::format(R"("source":{})", e.a);
    case args_kind::object:
        return fmt::format(R"("object":"{}","busy_us":{:.3f},"measured_us":{:.3f})", json_id(e.id),
                           double(e.a) / 1e3, double(e.b) / 1e3);
    case args_kind::message:
        return fmt::format(R"("peer":{},"bytes":{},"handler":"{}")", e.a, e.b,
                           e.handler ? escape(*e.handler) : std::string());
    case args_kind::migration:
        return fmt::format(R"("object":"{}","from":{},"to":{})", json_id(e.id), e.a, e.b);
    }
    return {};
}

std::string to_json(const event& e, int pid) {
    return fmt::format(R"({{"name":"{}","cat":"{}","ph":"{}","ts":{:.3f},"dur":{:.3f},)"
                       R"("pid":{},"tid":{},{}"args":{{{}}}}})",
                       escape(e.name_s ? std::string_view(*e.name_s) : std::string_view(e.name)),
                       e.cat, e.ph, e.ts, e.dur, pid, e.tid, e.ph == 'i' ? R"("s":"t",)" : "",
                       json_args(e));
}

event meta(const char* name, int tid, std::string args) {
    event e{name, nullptr, "__metadata", 'M', args_kind::text, tid, 0, 0};
    e.args = std::move(args);
    return e;
}

// This rank's events, comma-separated, with the process and thread names first.
std::string serialize_rank(int rank) {
    std::string out;
    std::set<int> tids;
    auto add = [&](const std::string& s) {
        if (!out.empty())
            out += ",\n";
        out += s;
    };
    std::lock_guard lock(g_registry_mutex);
    for (auto& b : g_registry)
        for (auto& e : b->events)
            tids.insert(e.tid);
    add(to_json(meta("process_name", 0, fmt::format(R"("name":"rank {}")", rank)), rank));
    add(to_json(meta("process_sort_index", 0, fmt::format(R"("sort_index":{})", rank)), rank));
    for (int t : tids)
        add(to_json(meta("thread_name", t,
                         t == g_progress_tid ? std::string(R"("name":"progress")")
                                             : fmt::format(R"("name":"worker {}")", t)),
                    rank));
    for (auto& b : g_registry) {
        for (auto& e : b->events)
            add(to_json(e, rank));
        b->events.clear();
        b->events.shrink_to_fit();
    }
    return out;
}

constexpr int n_fields = 14;

void print_stats(const std::vector<double>& all, int size, int workers, const std::string& progress,
                 const std::string& load) {
    std::string t = fmt::format("prema stats ({} ranks, {} worker(s) per rank, progress {}; "
                                "lb-load {}; times in ms, overhead = workers x wall - busy - idle, "
                                "measured = object handlers' running time, timed = how many)\n",
                                size, workers, progress, load);
    t += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>7} {:>7} {:>10} "
                     "{:>10} {:>10} {:>10} {:>10}\n",
                     "rank", "handlers", "obj-hndlrs", "msgs-sent", "msgs-recv", "bytes-sent",
                     "bytes-recv", "forwards", "mig-in", "mig-out", "busy", "idle", "overhead",
                     "measured", "timed");
    std::vector<double> total(n_fields, 0);
    auto row = [&](const std::string& label, const double* v) {
        t += fmt::format("{:>5} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>8} {:>7} {:>7} "
                         "{:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10}\n",
                         label, std::uint64_t(v[0]), std::uint64_t(v[1]), std::uint64_t(v[2]),
                         std::uint64_t(v[3]), std::uint64_t(v[4]), std::uint64_t(v[5]),
                         std::uint64_t(v[6]), std::uint64_t(v[7]), std::uint64_t(v[8]), v[9] / 1e3,
                         v[10] / 1e3, v[11] / 1e3, v[12] / 1e3, std::uint64_t(v[13]));
    };
    for (int r = 0; r < size; ++r) {
        const double* v = &all[std::size_t(r * n_fields)];
        row(std::to_string(r), v);
        for (int i = 0; i < n_fields; ++i)
            total[std::size_t(i)] += v[i];
    }
    row("all", total.data());
    std::fputs(t.c_str(), stdout);
    std::fflush(stdout);
}

} // namespace

double observe_now_us() noexcept {
    return std::chrono::duration<double, std::micro>(clock::now() - g_origin).count();
}

int observe_tid() noexcept {
    int i = worker_pool::current_index();
    return i >= 0 ? i : g_progress_tid;
}

void observe_start(runtime_state& st) {
    unsigned mine =
        (st.cfg.stats ? observe_stats : 0u) | (st.cfg.trace.empty() ? 0u : observe_trace);
    unsigned any = 0;
    // Every rank must take part in the gathers at shutdown: a rank without the option follows.
    MPI_Allreduce(&mine, &any, 1, MPI_UNSIGNED, MPI_BOR, st.comm);
    g_observe = any;
    if (!any)
        return;
    g_counters.reset();
    g_progress_tid = st.cfg.workers;
    g_forwards_at_start = forward_count();
    {
        std::lock_guard lock(g_registry_mutex);
        for (auto& b : g_registry)
            b->events.clear();
    }
    MPI_Barrier(st.comm);
    g_origin = clock::now();
}

void count_messages(bool on) noexcept {
    g_observe = on ? g_observe | observe_count : g_observe & ~unsigned(observe_count);
    if (auto* st = state_or_null()) // the workers' sends into batches look here
        for (auto& o : st->outboxes)
            o.observing = observing();
}

message_counts counted_messages() noexcept {
    auto& c = g_counters;
    return {c.sent.load(std::memory_order_relaxed), c.received.load(std::memory_order_relaxed),
            c.bytes_sent.load(std::memory_order_relaxed),
            c.bytes_received.load(std::memory_order_relaxed)};
}

void observe_finish(runtime_state& st) {
    unsigned flags = g_observe;
    g_observe = 0;
    if (!flags)
        return;
    if (flags & observe_stats) {
        std::uint64_t busy = 0, idle = 0;
        if (st.workers)
            st.workers->time_totals(busy, idle);
        // The overhead is a small difference of large sums: taken in ticks, it owes nothing to
        // the rate calibrated over a few ms, whose error used to swamp (and clamp) it.
        double tpu = ticks_per_us();
        double busy_us = double(busy) / tpu, idle_us = double(idle) / tpu;
        auto worker_ticks = std::int64_t(g_counters.wall_ticks.load()) * st.cfg.workers;
        double overhead_us = double(worker_ticks - std::int64_t(busy) - std::int64_t(idle)) / tpu;
        auto& c = g_counters;
        const auto measured = measured_so_far();
        std::vector<double> mine = {double(c.handlers.load()),
                                    double(c.object_handlers.load()),
                                    double(c.sent.load()),
                                    double(c.received.load()),
                                    double(c.bytes_sent.load()),
                                    double(c.bytes_received.load()),
                                    double(forward_count() - g_forwards_at_start),
                                    double(c.migrations_in.load()),
                                    double(c.migrations_out.load()),
                                    busy_us,
                                    idle_us,
                                    overhead_us,
                                    measured.seconds * 1e6,
                                    double(measured.runs)};
        std::vector<double> all(std::size_t(n_fields * st.size));
        MPI_Gather(mine.data(), n_fields, MPI_DOUBLE, all.data(), n_fields, MPI_DOUBLE, 0, st.comm);
        if (st.rank == 0)
            print_stats(all, st.size, st.cfg.workers,
                        describe_progress(st.requested_progress, st.cfg.progress),
                        to_string(st.cfg.lb_load));
    }
    if (flags & observe_trace) {
        // Rank 0 writes each rank's events as they arrive, one rank's at a time.
        std::FILE* f = nullptr;
        std::string path = st.cfg.trace.empty() ? "prema-trace.json" : st.cfg.trace;
        if (st.rank == 0 && !(f = std::fopen(path.c_str(), "w")))
            log().error("--prema-trace: cannot write {}", path);
        bool first = true;
        if (f)
            std::fputs("[\n", f);
        gather_parts(st.comm, serialize_rank(st.rank), [&](int, std::string_view part) {
            if (!f || part.empty())
                return;
            if (!first)
                std::fputs(",\n", f);
            std::fwrite(part.data(), 1, part.size(), f);
            first = false;
        });
        if (f) {
            std::fputs("\n]\n", f);
            std::fclose(f);
        }
    }
}

std::string json_id(object_id id) {
    return fmt::format("{}:{}", id.creator, id.serial);
}

void note_handler(const std::string& name, int source, double begin_us, int tid) {
    g_counters.handlers.fetch_add(1, std::memory_order_relaxed);
    if (tracing())
        record(nullptr, &name, "handler", 'X', args_kind::source, begin_us,
               observe_now_us() - begin_us, tid)
            .a = source;
}

void note_object_handler(const std::string& name, object_id id, double begin_us, int tid,
                         double busy_s, double measured_s) {
    g_counters.object_handlers.fetch_add(1, std::memory_order_relaxed);
    if (tracing()) {
        auto& e = record(nullptr, &name, "object_handler", 'X', args_kind::object, begin_us,
                         observe_now_us() - begin_us, tid);
        e.id = id;
        e.a = std::int64_t(busy_s * 1e9);
        e.b = std::int64_t(measured_s * 1e9);
    }
}

namespace {
void note_message(const char* name, int peer, std::uint64_t handler, std::size_t bytes) {
    auto& e = record(name, nullptr, "message", 'i', args_kind::message, observe_now_us(), 0,
                     observe_tid());
    e.a = peer;
    e.b = std::int64_t(bytes);
    e.handler = &handler_name(handler);
}
} // namespace

void note_send(int dest, std::uint64_t handler, std::size_t bytes) {
    g_counters.sent.fetch_add(1, std::memory_order_relaxed);
    g_counters.bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
    if (tracing())
        note_message("send", dest, handler, bytes);
}

void note_receive(int source, std::uint64_t handler, std::size_t bytes) {
    g_counters.received.fetch_add(1, std::memory_order_relaxed);
    g_counters.bytes_received.fetch_add(bytes, std::memory_order_relaxed);
    if (tracing())
        note_message("receive", source, handler, bytes);
}

void note_migration(object_id id, int from, int to, bool out) {
    (out ? g_counters.migrations_out : g_counters.migrations_in)
        .fetch_add(1, std::memory_order_relaxed);
    if (tracing()) {
        auto& e = record(out ? "migrate_out" : "migrate_in", nullptr, "migration", 'i',
                         args_kind::migration, observe_now_us(), 0, observe_tid());
        e.id = id;
        e.a = from;
        e.b = to;
    }
}

void note_phase(std::uint64_t wall_ticks) {
    g_counters.wall_ticks.fetch_add(wall_ticks, std::memory_order_relaxed);
}

void note_lb(const char* name, const std::string& args) {
    if (tracing())
        record(name, nullptr, "lb", 'i', args_kind::text, observe_now_us(), 0, observe_tid()).args =
            args;
}

} // namespace prema::detail

namespace prema {

double wtime() noexcept {
    return std::chrono::duration<double>(detail::clock::now().time_since_epoch()).count();
}

} // namespace prema
