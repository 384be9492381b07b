// coordinator: what checkpoint and restart keep between calls, per runtime (the runtime owns
// it, so a new runtime starts afresh). Rank 0's part collects the failures of each agreement
// round and the files of the checkpoint being written; every rank counts its rounds.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/manifest.hpp"
#include "prema/checkpoint.hpp"
#include "prema/transport/byte_vector.hpp"

namespace prema::detail {

struct coordinator {
    std::mutex mutex;                                  // guards everything below
    std::uint64_t rounds = 0;                          // agreement rounds this rank has entered
    std::map<std::uint64_t, std::string> errors;       // rank 0: round -> first failure reported
    std::vector<checkpoint_file> files;                // rank 0: this checkpoint's rank files
    checkpoint_file root;                              // rank 0
    std::uint64_t serial = 0;                          // rank 0: highest serial any rank issued
    std::map<std::uint64_t, std::pair<bool, int>> due; // rank 0: step -> (answer, ranks asked)
    std::optional<std::chrono::steady_clock::time_point> last; // rank 0: last checkpoint
    checkpoint_stats stats;                                    // this rank's last checkpoint
    std::vector<byte_vector> buffers; // rank files' piece buffers, kept for the next checkpoint
};

} // namespace prema::detail
