// The runtime's logger: spdlog, every line prefixed with the rank.
#pragma once

#include <spdlog/spdlog.h>

namespace prema::detail {

spdlog::logger& log();

// (Re)creates the logger for `rank` at `level` (trace..off).
void init_log(int rank, const std::string& level);

} // namespace prema::detail
