/// @file
/// Coordinated checkpoint and restart of mobile objects.
///
/// @code
///   struct root { std::uint64_t step; std::vector<prema::mobile_ptr<tile>> tiles; ... };
///   if (auto dir = prema::restart_dir(); !dir.empty())
///       r = co_await prema::restart<root>(dir);           // objects back, r as saved
///   while (r.step < steps) {
///       ... one step, ending at a quiescent point ...
///       ++r.step;
///       if (co_await prema::checkpoint_due({.every_steps = 100}, r.step))
///           co_await prema::checkpoint("ckpt", r);
///   }
/// @endcode
///
/// checkpoint(dir, root): collective, from the entry coroutine of every rank at the same point.
/// It waits for quiescence, then every rank packs its mobile objects as a migration would (with
/// their pending handlers) and writes them to dir/ckpt-N/rank-R.bin through io_uring, many
/// writes in flight, fsync'd; rank 0 adds root.bin (the `root` value as rank 0 passed it: what
/// the application needs to find its objects again, e.g. its mobile_ptrs and the step). Last,
/// rank 0 writes dir/ckpt-N/manifest (write, fsync, rename, fsync of the directory) and removes
/// older checkpoints. A crash before the rename leaves the previous checkpoint the newest
/// complete one. Every rank returns once the manifest is durable. While it waits for the disk
/// the coroutine is suspended: no worker blocks (unless the kernel refuses io_uring: then the
/// runtime logs a warning and writes with blocking calls on the calling worker).
/// Objects must be idle: a held object_guard is a checkpoint_error.
///
/// restart<Root>(dir): collective, first thing in the entry coroutine, before any object is
/// created. Finds the newest complete checkpoint in dir, checks every file it needs (size and
/// checksum against the manifest, format version, object and root types) and only then
/// installs the objects and returns the root on every rank. Same rank count: every object goes
/// back to the rank that saved it; another rank count: the objects are dealt out in blocks,
/// in the order they were saved. A mobile_ptr held from before keeps working: the directory
/// entry of an object lives at its home rank, creator mod ranks, and new objects get serial
/// numbers above every saved one. Any problem is a checkpoint_error on every rank naming the
/// file and what is wrong; then nothing has been loaded.
///
/// Ordering counters restart from zero on both ends: at the quiescent point of a checkpoint
/// every message sent had been admitted, so sender and receiver counts agreed, and zero agrees
/// too whatever the rank count. A destroyed object is not saved: after a restart a message to
/// it reports a dangling pointer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <typeinfo>

#include "prema/coro/task.hpp"
#include "prema/detail/transport/byte_vector.hpp"
#include "prema/transport/handler.hpp"
#include "prema/transport/serialization.hpp"

namespace prema {
namespace detail {
task<> write_checkpoint(std::string dir, byte_vector root, std::uint64_t root_type);
task<> read_checkpoint(std::string dir, std::uint64_t root_type,
                       std::function<void(byte_reader&)> decode_root);
} // namespace detail

/// Saves every rank's mobile objects and `root` (rank 0's) to a new checkpoint under `dir`.
/// `root` is serialized before the call returns.
template <class Root> [[nodiscard]] task<> checkpoint(std::string dir, const Root& root) {
    detail::byte_writer w(nullptr, 0);
    detail::write_value(w, root);
    return detail::write_checkpoint(std::move(dir), std::move(w.heap()),
                                    detail::stable_hash(typeid(Root).name()));
}

/// Loads the newest complete checkpoint under `dir`; returns its root on every rank.
template <class Root> task<Root> restart(std::string dir) {
    Root root{};
    co_await detail::read_checkpoint(
        std::move(dir), detail::stable_hash(typeid(Root).name()),
        [&root](detail::byte_reader& r) { root = detail::read_value<Root>(r); });
    co_return root;
}

/// This rank's figures for the last checkpoint it took part in.
struct checkpoint_stats {
    std::uint64_t objects = 0; ///< saved by this rank
    std::uint64_t bytes = 0;   ///< this rank's file
    double write_s = 0;        ///< packing and writing it, fsync included
    double total_s = 0;        ///< the whole checkpoint() call
};
/// This rank's figures for the last checkpoint it took part in (zeros before the first).
checkpoint_stats last_checkpoint_stats();

/// The directory given by --prema-restart (PREMA_RESTART), empty if none.
const std::string& restart_dir();

/// When to checkpoint: every `every_steps` steps, or once `every_seconds` of wall-clock time
/// have passed since the last checkpoint (rank 0's clock), whichever comes first; 0 disables.
struct checkpoint_policy {
    std::uint64_t every_steps = 0; ///< a checkpoint every this many steps; 0: not by steps
    double every_seconds = 0;      ///< a checkpoint once this many seconds passed; 0: not by time
};

/// Collective, once per step on every rank, with `step` the steps done so far: true on every
/// rank for the same steps. Steps alone cost nothing; a time interval asks rank 0, whose answer
/// for a step is the same to everyone.
task<bool> checkpoint_due(checkpoint_policy p, std::uint64_t step);

} // namespace prema
