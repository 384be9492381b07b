#include "prema/config.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "base/options.hpp"
#include "prema/error.hpp"

namespace prema {

namespace {

std::uint64_t parse_unsigned(std::string_view name, const std::string& value) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(value, &used);
    } catch (...) {
        used = 0;
    }
    if (used != value.size() || value.empty() || value[0] == '-')
        throw usage_error("option --prema-" + std::string(name) + ": '" + value +
                          "' is not a non-negative integer");
    return v;
}

// A message or batch size: at most 1 MiB.
std::size_t parse_message_bytes(std::string_view name, const std::string& value) {
    const auto n = parse_unsigned(name, value);
    if (n > (std::uint64_t{1} << 20))
        throw usage_error("option --prema-" + std::string(name) + ": " + value + " is above 1 MiB");
    return std::size_t(n);
}

double parse_double(std::string_view name, const std::string& value) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(value, &used);
    } catch (...) {
        used = 0;
    }
    if (used != value.size() || value.empty())
        throw usage_error("option --prema-" + std::string(name) + ": '" + value +
                          "' is not a number");
    return v;
}

// One of two words: true for `yes`, false for `no`.
bool parse_either(std::string_view name, const std::string& value, std::string_view yes,
                  std::string_view no) {
    if (value == yes || value == no)
        return value == yes;
    throw usage_error(
        fmt::format("option --prema-{}: '{}' is not one of {}, {}", name, value, yes, no));
}

bool parse_switch(std::string_view name, const std::string& value) {
    if (value == "1" || value == "true" || value == "on")
        return true;
    if (value == "0" || value == "false" || value == "off" || value.empty())
        return false;
    throw usage_error("option --prema-" + std::string(name) + ": '" + value +
                      "' is not one of 1, 0");
}

// One runtime option: the parser, the environment twins and --prema-help all read this table,
// and docs/reference/options.md holds its markdown form (test_config checks that it does).
struct option {
    const char* name;
    const char* value;    // what follows the flag ("" for a switch, which takes none)
    const char* fallback; // the default as --prema-help shows it ("" for no value)
    bool env_twin;
    const char* meaning;
    void (*set)(config&, const std::string& value);
};

constexpr option options[] = {
    {"workers", "N", "1", true, "Worker threads per rank that run handlers (1..1024).",
     [](config& c, const std::string& v) {
         auto n = parse_unsigned("workers", v);
         if (n < 1 || n > 1024)
             throw usage_error("option --prema-workers: " + v + " is outside 1..1024");
         c.workers = int(n);
     }},
    {"progress", "auto|dedicated|inline", "auto", true,
     "Who drives MPI: a progress thread of its own (`dedicated`), the idle workers (`inline`), "
     "or `auto`, dedicated when that thread gets a core of its own; see "
     "docs/guide/progress.md.",
     [](config& c, const std::string& v) {
         if (v == "auto")
             c.progress = progress_mode::automatic;
         else if (v == "dedicated")
             c.progress = progress_mode::dedicated;
         else if (v == "inline")
             c.progress = progress_mode::inline_;
         else
             throw usage_error("option --prema-progress: '" + v +
                               "' is not one of auto, dedicated, inline");
     }},
    {"quantum-us", "N", "1000", true,
     "Preemption quantum in µs: a yield point suspends a coroutine that has run longer than "
     "this, so queued messages get a turn. `0` disables yield points.",
     [](config& c, const std::string& v) { c.quantum_us = parse_unsigned("quantum-us", v); }},
    {"spin-us", "N", "1000", true,
     "When a rank's threads have cores of their own: how long an idle worker spins before it "
     "sleeps, and how long the progress thread of an idle rank polls on (it never sleeps while "
     "the rank has work). Work that comes meanwhile is handed over through memory, not a "
     "wake-up. `0`: sleep at once. Threads that share cores never spin; see "
     "docs/guide/progress.md.",
     [](config& c, const std::string& v) {
         c.spin_us = parse_unsigned("spin-us", v);
         if (c.spin_us > 10'000'000)
             throw usage_error("option --prema-spin-us: " + v + " is above 10 s");
     }},
    {"pin", "on|off", "on", true,
     "When a rank's threads have cores of their own: pin each (workers, then the progress "
     "thread) to one core of the rank's affinity mask, its share of it when ranks of the node "
     "have the same mask. The thread that called `run()` gets its own affinity back afterwards.",
     [](config& c, const std::string& v) { c.pin = parse_either("pin", v, "on", "off"); }},
    {"loopback", "direct|mpi", "direct", true,
     "How a message to the sender's own rank travels: `direct` to a worker's queue, `mpi` "
     "through MPI and the progress engine like any other (to measure or test that path on one "
     "rank).",
     [](config& c, const std::string& v) {
         c.loopback_mpi = parse_either("loopback", v, "mpi", "direct");
     }},
    {"lb", "NAME", "none", true,
     "Load-balancing policy: `none`, `work_stealing`, `diffusion`, `master_worker`, "
     "`heat_diffusion`, `lifeline`, or one the program registered. Any but `none` balances from "
     "the start of the run; `prema::lb::enable_balancing(false)` holds it off (see "
     "docs/guide/balancing.md).",
     [](config& c, const std::string& v) { c.lb = v; }},
    {"lb-period-us", "N", "1000", true,
     "How often a policy's `dist_balance()` runs (on the progress thread).",
     [](config& c, const std::string& v) {
         c.lb_period_us = parse_unsigned("lb-period-us", v);
         if (c.lb_period_us == 0)
             throw usage_error("option --prema-lb-period-us: must be positive");
     }},
    {"lb-neighbours", "N", "4", true, "Neighbourhood size of `diffusion` (1..4096).",
     [](config& c, const std::string& v) {
         auto n = parse_unsigned("lb-neighbours", v);
         if (n < 1 || n > 4096)
             throw usage_error("option --prema-lb-neighbours: " + v + " is outside 1..4096");
         c.lb_neighbours = int(n);
     }},
    {"lb-alpha", "X", "0.1", true,
     "Imbalance tolerance of `heat_diffusion` (stop when max ≤ (1+α)·average), in (0, 1).",
     [](config& c, const std::string& v) {
         c.lb_alpha = parse_double("lb-alpha", v);
         if (!(c.lb_alpha > 0 && c.lb_alpha < 1))
             throw usage_error("option --prema-lb-alpha: " + v + " is outside (0, 1)");
     }},
    {"lb-load", "declared|measured|hybrid", "hybrid", true,
     "What a pending object handler weighs for the policy: `declared` its object's `load()` (1 "
     "without one), `measured` the busy time its object's handlers took (seconds, averaged), "
     "`hybrid` `load()` scaled by the measured/declared ratio learnt so far (the measured time "
     "when the type has no `load()`). Every rank must use the same; see docs/guide/balancing.md.",
     [](config& c, const std::string& v) {
         if (v == "declared")
             c.lb_load = load_mode::declared;
         else if (v == "measured")
             c.lb_load = load_mode::measured;
         else if (v == "hybrid")
             c.lb_load = load_mode::hybrid;
         else
             throw usage_error("option --prema-lb-load: '" + v +
                               "' is not one of declared, measured, hybrid");
     }},
    {"log", "LEVEL", "warn", true,
     "`trace`, `debug`, `info`, `warn`, `error`, `critical` or `off`; lines go to stderr, "
     "prefixed with the rank.",
     [](config& c, const std::string& v) {
         static constexpr std::string_view levels[] = {"trace", "debug",    "info", "warn",
                                                       "error", "critical", "off"};
         if (std::find(std::begin(levels), std::end(levels), v) == std::end(levels))
             throw usage_error("option --prema-log: '" + v +
                               "' is not one of trace, debug, info, warn, error, critical, off");
         c.log = v;
     }},
    {"eager-bytes", "N", "32768", true,
     "Payloads up to this size travel inline with the header; larger ones go split-phase "
     "(header first, payload on its own tag), and a vector argument of this size or more "
     "travels without copies (see docs/guide/messages.md). At most 1 MiB.",
     [](config& c, const std::string& v) {
         c.eager_bytes = parse_message_bytes("eager-bytes", v);
     }},
    {"remote-eager-bytes", "N", "131072", true,
     "`--prema-eager-bytes` for messages to ranks on other nodes, and to every rank when MPI "
     "does not use shared memory (Open MPI's `btl` without `vader`): there a second MPI "
     "message costs a network transfer of its own, more than copying up to this size (see "
     "docs/guide/messages.md). Never below `--prema-eager-bytes`; at most 1 MiB.",
     [](config& c, const std::string& v) {
         c.remote_eager_bytes = parse_message_bytes("remote-eager-bytes", v);
     }},
    {"max-message-bytes", "N", "1073741824", true,
     "Largest payload a rank sends or accepts (at most 2^31 − 1). Sending more is a "
     "`usage_error`; receiving more is refused and logged.",
     [](config& c, const std::string& v) {
         c.max_message_bytes = parse_unsigned("max-message-bytes", v);
         if (c.max_message_bytes > std::size_t(0x7fffffff))
             throw usage_error("option --prema-max-message-bytes: " + v +
                               " is above the 2 GiB an MPI message can carry");
     }},
    {"aggregate-bytes", "N", "32768", true,
     "Small messages a worker sends to one rank leave together in batches of up to N bytes "
     "(capped by `--prema-eager-bytes` and `--prema-max-message-bytes`; below 128 aggregation "
     "is off). See docs/guide/messages.md.",
     [](config& c, const std::string& v) {
         c.aggregate_bytes = parse_message_bytes("aggregate-bytes", v);
     }},
    {"aggregate-us", "N", "50", true,
     "How long a batch stays open while its worker is busy, counted from the progress "
     "engine's first look at it; an idle worker sends its batches at once.",
     [](config& c, const std::string& v) { c.aggregate_us = parse_unsigned("aggregate-us", v); }},
    {"max-outstanding-bytes", "N", "33554432", true,
     "Back-pressure: `co_await prema::send` suspends the sending coroutine while this rank "
     "holds more than N bytes of messages queued for the network (waiting for credit "
     "included); and the credit each rank grants its senders together, so that about N bytes "
     "of messages at most wait for it to take them, however many ranks send "
     "(docs/design/flow-control.md). `0`: no limit.",
     [](config& c, const std::string& v) {
         c.max_outstanding_bytes = parse_unsigned("max-outstanding-bytes", v);
     }},
    {"pool-messages", "N", "256", true,
     "Small message buffers preallocated per rank; free buffers beyond the bytes of N "
     "eager-sized ones go back to the heap.",
     [](config& c, const std::string& v) { c.pool_messages = parse_unsigned("pool-messages", v); }},
    {"recv-slots", "N", "32", true, "Receives pre-posted for incoming headers (1..4096).",
     [](config& c, const std::string& v) {
         auto n = parse_unsigned("recv-slots", v);
         if (n < 1 || n > 4096)
             throw usage_error("option --prema-recv-slots: " + v + " is outside 1..4096");
         c.recv_slots = int(n);
     }},
    {"stats", "", "off", true,
     "At shutdown rank 0 prints a table, one row per rank: transport handlers and object "
     "handlers run, messages and bytes sent/received, forwards, migrations in/out (summed over "
     "the ranks, sent = received and in = out), and the workers' busy time (running items), "
     "idle time (finding nothing to do) and overhead (workers × wall time of `run()` − busy − "
     "idle, all three on one clock: finding the next item, the policy's `pop()` included, the "
     "workers' own MPI polls with inline progress, thread start and stop), in ms; then the "
     "object handlers' measured busy time and how many were timed, under the `--prema-lb-load` "
     "mode the header names.",
     [](config& c, const std::string& v) { c.stats = parse_switch("stats", v); }},
    {"restart", "DIR", "", true,
     "Checkpoint directory the application resumes from: `prema::restart_dir()` returns it "
     "(see docs/guide/checkpoint.md).",
     [](config& c, const std::string& v) {
         if (v.empty())
             throw usage_error("option --prema-restart: needs a checkpoint directory");
         c.restart = v;
     }},
    {"trace", "FILE", "", true,
     "Records events per thread in memory (handlers as complete events with object id and "
     "handler name, object handlers with their busy time and their object's measured average, "
     "message sends/receives with peer and bytes, migrations, load-balancing "
     "messages and decisions) and at shutdown rank 0 writes them, merged, to FILE in the Chrome "
     "trace event format: open it in Perfetto (ui.perfetto.dev) or `chrome://tracing`. `pid` "
     "is the rank, `tid` the worker (the progress thread is `tid` = number of workers); "
     "timestamps in µs from a common start (`prema::wtime()` reads the same clock).",
     [](config& c, const std::string& v) { c.trace = v; }},
    {"version", "", "off", false,
     "`prema::run` (and the examples) print `prema X.Y.Z` on rank 0 and exit 0 without running "
     "the program.",
     [](config& c, const std::string& v) { c.show_version = parse_switch("version", v); }},
    {"help", "", "off", true,
     "Rank 0 prints this table and the run ends with status 0 without running the program "
     "(`prema::run`; an embedding program's `runtime::run` returns 0 at once).",
     [](config& c, const std::string& v) { c.show_help = parse_switch("help", v); }},
};

const option* find_option(std::string_view name) {
    for (auto& o : options)
        if (name == o.name)
            return &o;
    return nullptr;
}

std::string env_name(const option& o) {
    std::string env = "PREMA_";
    for (const char* p = o.name; *p; ++p)
        env += *p == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(*p)));
    return env;
}

std::string flag_text(const option& o) {
    return std::string("--prema-") + o.name + (*o.value ? std::string(" ") + o.value : "");
}

std::string env_text(const option& o) {
    if (!o.env_twin)
        return "";
    return env_name(o) + (*o.value ? "" : "=1");
}

std::string default_text(const option& o) {
    return *o.fallback ? o.fallback : "none";
}

// `text` broken into lines of at most `width` characters (counting UTF-8 sequences as one),
// each indented by `indent` spaces.
std::string wrapped(std::string_view text, std::size_t indent, std::size_t width) {
    auto length = [](std::string_view s) {
        return std::size_t(std::count_if(s.begin(), s.end(), [](char ch) {
            return (static_cast<unsigned char>(ch) & 0xc0) != 0x80;
        }));
    };
    std::string out, line;
    while (!text.empty()) {
        auto space = text.find(' ');
        auto word = text.substr(0, space);
        text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
        if (!line.empty() && length(line) + 1 + length(word) > width) {
            out += std::string(indent, ' ') + line + '\n';
            line.clear();
        }
        if (!line.empty())
            line += ' ';
        line += word;
    }
    if (!line.empty())
        out += std::string(indent, ' ') + line + '\n';
    return out;
}

} // namespace

config config::from_env() {
    config c;
    for (auto& o : options)
        if (o.env_twin)
            if (const char* v = std::getenv(env_name(o).c_str()))
                o.set(c, v);
    return c;
}

config config::from_args(int& argc, char** argv) {
    config c = from_env();
    constexpr std::string_view prefix = "--prema-";
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg.substr(0, prefix.size()) != prefix) {
            argv[out++] = argv[i];
            continue;
        }
        arg.remove_prefix(prefix.size());
        std::string name, value;
        auto eq = arg.find('=');
        name = arg.substr(0, eq);
        const option* o = find_option(name);
        if (!o)
            throw usage_error("unknown runtime option --prema-" + name);
        if (eq != std::string_view::npos)
            value = arg.substr(eq + 1);
        else if (!*o->value)      // a switch: does not take the next argument
            value.assign(1, '1'); // not = "1": g++ 12 -O3 warns (-Wrestrict) there, wrongly
        else if (i + 1 >= argc)
            throw usage_error(fmt::format("option --prema-{} needs a value ({})", name, o->value));
        else
            value = argv[++i];
        o->set(c, value);
    }
    argc = out;
    argv[argc] = nullptr;
    return c;
}

std::string config::help() {
    std::string text =
        wrapped("PREMA runtime options: --prema-NAME VALUE or --prema-NAME=VALUE, or "
                "the environment variable shown (the flag wins). The pages named "
                "are in the docs/ folder of PREMA's source.",
                0, 80);
    for (auto& o : options) {
        std::string meaning = o.meaning;
        std::erase(meaning, '`');
        text += fmt::format("\n  {}  [{}{}default {}]\n", flag_text(o),
                            o.env_twin ? env_text(o) : "", o.env_twin ? ", " : "", default_text(o));
        text += wrapped(meaning, 6, 74);
    }
    return text;
}

namespace detail {

std::vector<option_summary> option_list() {
    std::vector<option_summary> list;
    for (auto& o : options)
        list.push_back({o.name, o.value, o.fallback, o.env_twin ? env_name(o) : ""});
    return list;
}

std::string options_markdown() {
    auto code = [](const std::string& s) {
        if (s.empty())
            return s;
        std::string escaped;
        for (char ch : s)
            escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
        return "`" + escaped + "`";
    };
    std::string rows = "| Flag | Environment | Default | Meaning |\n|---|---|---|---|\n";
    for (auto& o : options) {
        std::string fallback = *o.fallback ? code(o.fallback) : "none";
        if (!*o.value && *o.fallback)
            fallback = o.fallback; // a switch: off, not a value to type
        rows += fmt::format("| {} | {} | {} | {} |\n", code(flag_text(o)),
                            o.env_twin ? code(env_text(o)) : "none", fallback, o.meaning);
    }
    return rows;
}

} // namespace detail

std::string to_string(progress_mode m) {
    return m == progress_mode::automatic   ? "auto"
           : m == progress_mode::dedicated ? "dedicated"
                                           : "inline";
}

std::string to_string(load_mode m) {
    return m == load_mode::declared ? "declared" : m == load_mode::measured ? "measured" : "hybrid";
}

} // namespace prema
