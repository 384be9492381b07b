// What suspended calls await, for the runtime's report of a job that goes quiet while
// coroutines still wait (runtime.cpp).
#pragma once

#include <string>

#include "prema/objects/objects.hpp"

namespace prema::detail {

// "<who> awaits <what> (sent to rank R)": the object handler that waits, if one does, and the
// request by handler name, object and rank.
std::string describe_awaited_call(const pending_call& c);

} // namespace prema::detail
