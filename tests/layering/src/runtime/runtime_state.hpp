// The runtime's state, included from below by transport/reaches_up.cpp.
#pragma once
#include "transport/transport_state.hpp"
