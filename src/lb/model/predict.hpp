// Makespan prediction of a load-balanced run (issue 8): the slowest rank's finishing time for a
// policy, and where that rank's critical worker spent it. Two methods:
//   predict()        the round model: the policy's rounds of migration of not-yet-started
//                    objects from loaded to idle ranks, played out on the per-object weights
//                    with the runtime's actual rules (see round_model.cpp)
//   predict_thesis() Barker's closed form (2004, Eqs 6.6-6.21) on the two-class fit
// Neither needs MPI; both are deterministic for a given settings::seed.
#pragma once

#include <string>

#include "lb/model/machine.hpp"
#include "lb/model/workload.hpp"

namespace prema::model {

enum class policy { none, work_stealing, diffusion };
policy parse_policy(const std::string& name); // throws usage_error naming the known ones
std::string to_string(policy p);

// The runtime options of the run being predicted and the application's communication.
struct settings {
    model::policy policy = policy::work_stealing;
    bool inline_progress = false; // --prema-progress inline: no progress thread answers requests
    double quantum_s = 1e-3;      // --prema-quantum-us; 0 disables yield points
    double yield_every_s = 0;     // work between the application's yield points (0: continuous)
    double period_s = 1e-3;       // --prema-lb-period-us
    int neighbours = 4;           // --prema-lb-neighbours (diffusion)
    double messages_per_object = 0;
    double message_bytes = 0;
    double object_bytes = 64; // packed size of a migrating object with its pending handlers
    double lb_message_bytes = 16;
    int replications = 16; // the policies choose victims at random: mean over this many rounds
    unsigned seed = 1;
};

// Seconds on the critical worker's path; they add up to the makespan.
struct breakdown {
    double compute = 0;      // running objects' work
    double app_messages = 0; // the objects' own messages
    double lb_messages = 0;  // waiting for load queries, requests and answers
    double migrations = 0;   // objects in transit to this rank
    double decisions = 0;    // policies deciding on the critical path
    double preemption = 0;   // yield points that suspend
    double other = 0;        // quiescence detection at the end
    double total() const {
        return compute + app_messages + lb_messages + migrations + decisions + preemption + other;
    }
    breakdown& operator+=(const breakdown& b);
    breakdown& operator*=(double k);
};

struct prediction {
    double makespan_s = 0;       // mean over replications
    double min_s = 0, max_s = 0; // spread over replications
    int slowest_rank = 0;        // the rank that finished last most often
    breakdown slowest;           // mean over replications of the last worker's path
    double migrations = 0;       // mean per run
    double lb_messages = 0;      // mean policy messages per run
};

// How long a running object goes between suspensions: the first multiple of yield_every_s at or
// above the quantum (0: yield points never suspend).
double slice_s(const settings& s);
// Inline progress: how long a running object goes between polls of the network, which its yield
// points do every busy_poll_us (or at each, if they are further apart). 0: never (quantum 0).
double poll_gap_s(const settings& s);
// Yield points that suspend while running `weight_s` of work.
double yields(double weight_s, const settings& s);

prediction predict(const workload& w, const machine& m, const settings& s);
prediction predict_thesis(const workload& w, const machine& m, const settings& s);

} // namespace prema::model
