#include "runtime/start_agreement.hpp"

#include <array>
#include <cstdint>
#include <span>

#include "transport/observe.hpp"
#include "transport/progress_engine.hpp"
#include "transport/tree_blocking.hpp"

namespace prema::detail {

start_agreement agree_at_start(MPI_Comm comm, const config& cfg, progress_mode mine) {
    constexpr std::size_t own = 3, n = own + options_that_must_match;
    std::array<std::uint64_t, n> values{mine == progress_mode::dedicated, cfg.stats,
                                        !cfg.trace.empty()};
    const auto options = must_match(cfg);
    std::copy(options.begin(), options.end(), values.begin() + own);
    // Every value's least and greatest in one minimum: the greatest is the complement of the
    // least complement.
    std::array<std::uint64_t, 2 * n> both;
    for (std::size_t i = 0; i < n; ++i) {
        both[i] = values[i];
        both[n + i] = ~values[i];
    }
    tree_min(comm, both);
    std::array<std::uint64_t, n> lo, hi;
    for (std::size_t i = 0; i < n; ++i) {
        lo[i] = both[i];
        hi[i] = ~both[n + i];
    }
    start_agreement a;
    a.all_dedicated = lo[0] != 0;
    a.observe = (hi[1] ? observe_stats : 0u) | (hi[2] ? observe_trace : 0u);
    a.mismatch = config_mismatch(cfg, std::span(lo).subspan<own>(), std::span(hi).subspan<own>());
    return a;
}

} // namespace prema::detail
