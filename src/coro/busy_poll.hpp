// Inline progress: how often a busy worker serves the network, between two items and at the
// yield points of a long one (or once a quantum, if shorter). It is what a steal request or
// another rank's control message waits for while every worker of the rank is busy; a poll that
// finds nothing costs well under a microsecond. The load-balancing model uses it too.
#pragma once

namespace prema::detail {

inline constexpr double busy_poll_us = 50;

} // namespace prema::detail
