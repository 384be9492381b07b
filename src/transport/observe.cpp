#include "transport/observe.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "coro/worker_pool.hpp"
#include "prema/transport/handler.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

unsigned g_observe = 0;

namespace {

using clock = std::chrono::steady_clock;
clock::time_point g_origin = clock::now();
int g_progress_tid = 0;

observe_counters g_counters;

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
    traced_id id{};               // object, migration
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

} // namespace

std::string take_trace_events(int rank) {
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

double observe_now_us() noexcept {
    return std::chrono::duration<double, std::micro>(clock::now() - g_origin).count();
}

int observe_tid() noexcept {
    int i = worker_pool::current_index();
    return i >= 0 ? i : g_progress_tid;
}

void observe_begin(unsigned flags, int progress_tid) {
    g_observe = flags;
    for (auto* c : {&g_counters.handlers, &g_counters.object_handlers, &g_counters.sent,
                    &g_counters.received, &g_counters.bytes_sent, &g_counters.bytes_received,
                    &g_counters.migrations_in, &g_counters.migrations_out, &g_counters.wall_ticks})
        c->store(0, std::memory_order_relaxed);
    g_progress_tid = progress_tid;
    std::lock_guard lock(g_registry_mutex);
    for (auto& b : g_registry)
        b->events.clear();
}

void observe_restart_clock() noexcept {
    g_origin = clock::now();
}

unsigned observe_end() noexcept {
    return std::exchange(g_observe, 0u);
}

const observe_counters& observed_counters() noexcept {
    return g_counters;
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

std::string json_id(traced_id id) {
    return fmt::format("{}:{}", id.creator, id.serial);
}

void note_handler(const std::string& name, int source, double begin_us, int tid) {
    g_counters.handlers.fetch_add(1, std::memory_order_relaxed);
    if (tracing())
        record(nullptr, &name, "handler", 'X', args_kind::source, begin_us,
               observe_now_us() - begin_us, tid)
            .a = source;
}

void note_object_handler(const std::string& name, traced_id id, double begin_us, int tid,
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

void note_migration(traced_id id, int from, int to, bool out) {
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
