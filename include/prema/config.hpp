/// @file
/// Runtime options. Every field has a command-line form `--prema-NAME VALUE` (or
/// `--prema-NAME=VALUE`) and an environment twin `PREMA_NAME`; the flag wins. `--prema-help`
/// (config::help()) lists them all with their twins, defaults and meanings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace prema {

/// Who drives MPI on a rank (--prema-progress; docs/guide/progress.md).
enum class progress_mode {
    /// Dedicated when its thread gets a core of its own, inline otherwise; decided when the
    /// runtime starts (prema::resolved_progress() tells which).
    automatic,
    dedicated, ///< the thread that called run() drives MPI; idle workers may poll it too
    inline_,   ///< idle workers take turns driving MPI (fewer threads than cores: small machines)
};

/// What a pending object handler weighs for the load balancer (--prema-lb-load).
enum class load_mode {
    declared, ///< T::load() per handler, 1 without one: the application's estimate alone
    measured, ///< the object's measured busy seconds per handler (docs/guide/balancing.md)
    hybrid,   ///< T::load() scaled by the measured/declared ratio learnt so far
};

/// The runtime options of one rank; from_args() and from_env() read them, and a default
/// config holds the defaults.
struct config {
    int workers = 1;                                   ///< --prema-workers: worker threads per rank
    progress_mode progress = progress_mode::automatic; ///< --prema-progress auto|dedicated|inline
    std::uint64_t quantum_us = 1000;                   ///< --prema-quantum-us: preemption quantum
    /// --prema-spin-us: on cores of its own, how long an idle thread polls before it sleeps.
    std::uint64_t spin_us = 1000;
    bool pin = true;           ///< --prema-pin on|off: each thread on a core of its own
    bool loopback_mpi = false; ///< --prema-loopback direct|mpi: messages to self through MPI
    std::string lb = "none";   ///< --prema-lb: load-balancing policy name
    std::uint64_t lb_period_us = 1000;     ///< --prema-lb-period-us: dist_balance() period
    int lb_neighbours = 4;                 ///< --prema-lb-neighbours: diffusion neighbourhood
    double lb_alpha = 0.1;                 ///< --prema-lb-alpha: heat diffusion tolerance
    load_mode lb_load = load_mode::hybrid; ///< --prema-lb-load declared|measured|hybrid
    std::string log = "warn";              ///< --prema-log: trace|debug|info|warn|error|off
    std::size_t eager_bytes = 32768;       ///< --prema-eager-bytes: larger payloads go split-phase
    /// --prema-remote-eager-bytes: the same for messages to ranks on other nodes
    std::size_t remote_eager_bytes = 131072;
    std::size_t max_message_bytes = std::size_t{1} << 30; ///< --prema-max-message-bytes
    /// --prema-aggregate-bytes: small messages to one rank leave together in batches of up to
    /// this many bytes (at most eager_bytes); 0 sends each message on its own.
    std::size_t aggregate_bytes = 32768;
    std::uint64_t aggregate_us = 50; ///< --prema-aggregate-us: the longest a batch stays open
    /// --prema-max-outstanding-bytes: co_await send suspends while this rank has more queued
    /// for the network; and about the most bytes of messages that may wait for this rank to
    /// take them, from all senders together (its credit budget); 0: no limit.
    std::size_t max_outstanding_bytes = std::size_t{32} << 20;
    std::size_t pool_messages = 256; ///< --prema-pool-messages: preallocated small buffers
    int recv_slots = 32;             ///< --prema-recv-slots: pre-posted receives
    bool stats = false;  ///< --prema-stats (no value; PREMA_STATS=1): per-rank summary at shutdown
    std::string trace;   ///< --prema-trace FILE: Chrome trace event file written by rank 0
    std::string restart; ///< --prema-restart DIR: prema::restart_dir() for the application
    bool show_version = false; ///< --prema-version (no value): prema::run prints it and exits
    /// --prema-help (no value; PREMA_HELP=1): rank 0 prints help(); prema::run then returns 0
    /// and runtime::run returns 0 at once, neither running the entry.
    bool show_help = false;

    /// Reads PREMA_* variables, then --prema-* flags, removing the flags from argv so that
    /// the application sees only its own arguments. Throws usage_error on a bad value or an
    /// unknown --prema- option.
    static config from_args(int& argc, char** argv);

    /// The same, without a command line.
    static config from_env();

    /// Every option with its environment twin, default and meaning, for a terminal.
    static std::string help();

    /// Every option equal.
    bool operator==(const config&) const = default;
};

std::string to_string(progress_mode m); ///< "auto", "dedicated" or "inline"
std::string to_string(load_mode m);     ///< "declared", "measured" or "hybrid"

} // namespace prema
