// coordinator: what checkpoint and restart keep between calls, per runtime (the runtime owns
// it, so a new runtime starts afresh). Rank 0's part collects the failures of each agreement
// round and the files of the checkpoint being written; every rank counts its rounds.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/manifest.hpp"
#include "prema/checkpoint.hpp"
#include "prema/detail/transport/byte_vector.hpp"

namespace prema::detail {

struct coordinator {
    std::mutex mutex;                                  // guards everything below
    std::uint64_t rounds = 0;                          // agreement rounds this rank has entered
    std::map<std::uint64_t, std::string> errors;       // rank 0: round -> first failure reported
    std::vector<checkpoint_file> files;                // rank 0: this checkpoint's rank files
    checkpoint_file root;                              // rank 0
    std::uint64_t serial = 0;                          // rank 0: highest serial any rank issued
    std::uint64_t seq = 0;                             // rank 0: this checkpoint's number
    std::map<std::uint64_t, std::pair<bool, int>> due; // rank 0: step -> (answer, ranks asked)
    std::optional<std::chrono::steady_clock::time_point> last; // rank 0: last checkpoint
    checkpoint_stats stats;                                    // this rank's last checkpoint
    std::vector<byte_vector> buffers; // rank files' piece buffers, kept for the next checkpoint
};

// Test hook (tests/test_checkpoint.cpp): receives the highest checkpoint number a listing of
// the checkpoint directory found on this rank and returns what the listing reports instead, to
// play the stale view of a shared file system. Empty in a normal run.
inline std::function<std::optional<std::uint64_t>(std::optional<std::uint64_t>)> listing_view;

} // namespace prema::detail
