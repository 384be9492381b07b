// What happens to an exception that escapes detached work (a spawned task, a handler): it is
// reported, with its type, through report_error, which the transport counts against the phase.
#include "prema/coro/spawn.hpp"

#include <fmt/format.h>

#include "base/errors.hpp"

namespace prema::detail {

void report_detached_error(std::string_view what, std::exception_ptr e) noexcept {
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        report_error(fmt::format("{} threw {}: {}", what, current_exception_type(), x.what()));
    } catch (...) {
        report_error(fmt::format("{} threw a non-standard exception", what));
    }
}

} // namespace prema::detail
