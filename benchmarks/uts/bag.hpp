// The parallel search: the tree's unexpanded nodes live in mobile objects ("bags") that the
// load balancer moves between ranks. A bag's handler expands its nodes a chunk at a time until
// the quantum is over and then sends itself the rest as a new message, so between turns it is
// an object with a pending handler, which any policy may move. A rank splits its bag while it
// holds fewer than a few such bags ready, so that an idle rank always finds something to take.
// Every rank counts the nodes its bags expanded; the search ends at the job's quiescence.
//
// Call prepare() on every rank before the phase, plant_root() on one rank inside it, and read
// local_tally() after the phase's quiescence. Handlers run on any worker; the counters are
// atomic.
#pragma once

#include <cstdint>

#include "tree.hpp"

namespace uts {

struct bag_settings {
    const tree* shape = nullptr; // outlives the phase
    std::uint64_t chunk = 1024;  // nodes a bag expands between two looks at the quantum
    int reserve = 4;             // bags a rank keeps waiting to be expanded (or moved)
    // While another rank waits for work this rank could not give (prema::lb::demand), a chunk
    // ends by handing part of its bag to it (prema::spawn_anywhere), not at its next request.
    bool give_on_demand = false;
};

// Resets this rank's counters; the settings hold until the next call.
void prepare(const bag_settings& settings);

// Creates the first bag, holding the root, on this rank and starts it.
void plant_root();

// What this rank's bags counted since prepare().
tally local_tally();

// Half-bags this rank handed to waiting ranks since prepare().
std::uint64_t local_given();

} // namespace uts
