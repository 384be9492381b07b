#include "prema/version.hpp"

namespace prema {

const char* version() noexcept {
    return PREMA_VERSION;
}

} // namespace prema
