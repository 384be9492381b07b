// A progress engine for tests of the transport's parts on one rank: on MPI_COMM_SELF, with no
// balancing, waves or errors to report, and every message it would deliver given back to its
// pool.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "transport/message_pool.hpp"
#include "transport/progress_engine.hpp"

inline prema::detail::progress_engine::hooks self_engine_hooks(prema::detail::message_pool& pool,
                                                               std::function<bool()> idle) {
    using namespace prema::detail;
    auto drop = [&pool](message* m) { pool.release(m); };
    return {.deliver = drop,
            .idle = std::move(idle),
            .counts = [] { return local_counts{}; },
            .decided = [](wave_result) {},
            .error = [](const std::string&) {},
            .urgent = drop,
            .tick = {},
            .resume = {},
            .backlog = nullptr};
}
