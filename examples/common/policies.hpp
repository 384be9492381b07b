// Which load-balancing policies a program that compares them runs, each on a prema::runtime of
// its own after the static baseline (`none`): --all (every registered policy), --policy NAME
// (or a comma-separated list of names), or the runtime's --prema-lb. Runs on the thread that called
// main(), outside any phase.
#pragma once

#include <string>
#include <vector>

#include <prema/runtime.hpp>

#include "cli.hpp"

namespace example {

// Whether --prema-lb (or PREMA_LB) is on main()'s command line, before the runtime removes it.
bool lb_option_given(int argc, char** argv);

struct policy_choice {
    std::string policy;    // --policy NAME[,NAME...]
    bool all = false;      // --all
    bool lb_given = false; // --prema-lb (or PREMA_LB) was on the command line

    // Adds --policy and --all to `options` (with a check that they exclude each other and that
    // the policy exists). Call it with main()'s argv, before the runtime removes --prema-lb.
    void add_to(cli& options, int argc, char** argv);

    // The policies to compare with `none`: every registered one but none (--all), else the one
    // (or ones, in order) of --policy, else of --prema-lb (cfg_lb), else `fallback`.
    std::vector<std::string> resolve(const std::string& cfg_lb, const std::string& fallback) const;
};

// Runs `entry` as the one phase of a fresh runtime whose policy is `policy` (the rest of `cfg`
// unchanged) and returns the migrations (the policy's and `entry`'s own), summed over the ranks
// (on every rank).
// Collective. Throws std::runtime_error on every rank if a handler failed on any.
unsigned long long run_under_policy(const prema::config& cfg, const std::string& policy,
                                    prema::entry_fn entry);

} // namespace example
