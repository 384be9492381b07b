/// @file
/// Everything a PREMA program needs.
#pragma once

#include "prema/checkpoint.hpp"
#include "prema/config.hpp"
#include "prema/coro/spawn.hpp"
#include "prema/coro/task.hpp"
#include "prema/coro/when_all.hpp"
#include "prema/coro/yield.hpp"
#include "prema/error.hpp"
#include "prema/lb/scheduler.hpp"
#include "prema/objects/create_many.hpp"
#include "prema/objects/objects.hpp"
#include "prema/objects/reduce.hpp"
#include "prema/quiescence.hpp"
#include "prema/runtime.hpp"
#include "prema/transport/all_reduce.hpp"
#include "prema/transport/broadcast.hpp"
#include "prema/transport/call.hpp"
#include "prema/transport/remote_memory.hpp"
#include "prema/transport/send.hpp"
#include "prema/version.hpp"
#include "prema/wtime.hpp"
