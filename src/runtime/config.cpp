#include "prema/config.hpp"

#include <cstdlib>
#include <cstring>
#include <string_view>

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

// Applies one option; returns false if `name` is not a runtime option.
bool apply(config& c, std::string_view name, const std::string& value) {
    if (name == "workers") {
        auto v = parse_unsigned(name, value);
        if (v < 1 || v > 1024)
            throw usage_error("option --prema-workers: " + value + " is outside 1..1024");
        c.workers = int(v);
    } else if (name == "progress") {
        if (value == "auto")
            c.progress = progress_mode::automatic;
        else if (value == "dedicated")
            c.progress = progress_mode::dedicated;
        else if (value == "inline")
            c.progress = progress_mode::inline_;
        else
            throw usage_error("option --prema-progress: '" + value +
                              "' is not one of auto, dedicated, inline");
    } else if (name == "quantum-us") {
        c.quantum_us = parse_unsigned(name, value);
    } else if (name == "lb") {
        c.lb = value;
    } else if (name == "lb-period-us") {
        c.lb_period_us = parse_unsigned(name, value);
        if (c.lb_period_us == 0)
            throw usage_error("option --prema-lb-period-us: must be positive");
    } else if (name == "lb-neighbours") {
        auto v = parse_unsigned(name, value);
        if (v < 1 || v > 4096)
            throw usage_error("option --prema-lb-neighbours: " + value + " is outside 1..4096");
        c.lb_neighbours = int(v);
    } else if (name == "lb-alpha") {
        c.lb_alpha = parse_double(name, value);
        if (!(c.lb_alpha > 0 && c.lb_alpha < 1))
            throw usage_error("option --prema-lb-alpha: " + value + " is outside (0, 1)");
    } else if (name == "log") {
        static constexpr std::string_view levels[] = {"trace", "debug",    "info", "warn",
                                                      "error", "critical", "off"};
        bool ok = false;
        for (auto l : levels)
            ok |= value == l;
        if (!ok)
            throw usage_error("option --prema-log: '" + value +
                              "' is not one of trace, debug, info, warn, error, critical, off");
        c.log = value;
    } else if (name == "eager-bytes") {
        c.eager_bytes = parse_unsigned(name, value);
        if (c.eager_bytes > (std::size_t{1} << 20))
            throw usage_error("option --prema-eager-bytes: " + value + " is above 1 MiB");
    } else if (name == "aggregate-bytes") {
        c.aggregate_bytes = parse_unsigned(name, value);
        if (c.aggregate_bytes > (std::size_t{1} << 20))
            throw usage_error("option --prema-aggregate-bytes: " + value + " is above 1 MiB");
    } else if (name == "aggregate-us") {
        c.aggregate_us = parse_unsigned(name, value);
    } else if (name == "max-outstanding-bytes") {
        c.max_outstanding_bytes = parse_unsigned(name, value);
    } else if (name == "max-message-bytes") {
        c.max_message_bytes = parse_unsigned(name, value);
        if (c.max_message_bytes > std::size_t(0x7fffffff))
            throw usage_error("option --prema-max-message-bytes: " + value +
                              " is above the 2 GiB an MPI message can carry");
    } else if (name == "pool-messages") {
        c.pool_messages = parse_unsigned(name, value);
    } else if (name == "recv-slots") {
        auto v = parse_unsigned(name, value);
        if (v < 1 || v > 4096)
            throw usage_error("option --prema-recv-slots: " + value + " is outside 1..4096");
        c.recv_slots = int(v);
    } else if (name == "stats") {
        if (value == "1" || value == "true" || value == "on")
            c.stats = true;
        else if (value == "0" || value == "false" || value == "off" || value.empty())
            c.stats = false;
        else
            throw usage_error("option --prema-stats: '" + value + "' is not one of 1, 0");
    } else if (name == "trace") {
        c.trace = value;
    } else if (name == "restart") {
        if (value.empty())
            throw usage_error("option --prema-restart: needs a checkpoint directory");
        c.restart = value;
    } else {
        return false;
    }
    return true;
}

constexpr const char* option_names[] = {"workers",       "progress",
                                        "quantum-us",    "lb",
                                        "lb-period-us",  "lb-neighbours",
                                        "lb-alpha",      "log",
                                        "eager-bytes",   "max-message-bytes",
                                        "pool-messages", "recv-slots",
                                        "stats",         "trace",
                                        "restart",       "aggregate-bytes",
                                        "aggregate-us",  "max-outstanding-bytes"};

} // namespace

config config::from_env() {
    config c;
    for (const char* name : option_names) {
        std::string env = "PREMA_";
        for (const char* p = name; *p; ++p)
            env += *p == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(*p)));
        if (const char* v = std::getenv(env.c_str()))
            apply(c, name, v);
    }
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
        if (arg == "version") { // the one option without a value (and without env twin)
            c.show_version = true;
            continue;
        }
        if (arg == "stats") { // a flag: does not take the next argument
            c.stats = true;
            continue;
        }
        std::string name, value;
        if (auto eq = arg.find('='); eq != std::string_view::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
        } else {
            name = arg;
            if (i + 1 >= argc)
                throw usage_error("option --prema-" + name + " needs a value");
            value = argv[++i];
        }
        if (!apply(c, name, value))
            throw usage_error("unknown runtime option --prema-" + name);
    }
    argc = out;
    argv[argc] = nullptr;
    return c;
}

std::string to_string(progress_mode m) {
    return m == progress_mode::automatic   ? "auto"
           : m == progress_mode::dedicated ? "dedicated"
                                           : "inline";
}

} // namespace prema
