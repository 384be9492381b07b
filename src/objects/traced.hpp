// An object as the trace names it: the transport's recorder (transport/observe.hpp) sits below
// the object layer and knows no object_id.
#pragma once

#include "prema/objects/mobile_ptr.hpp"
#include "transport/observe.hpp"

namespace prema::detail {

inline traced_id traced(object_id id) noexcept {
    return {id.creator, id.serial};
}

} // namespace prema::detail
