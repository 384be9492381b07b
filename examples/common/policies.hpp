// Which load-balancing policies a program that compares them runs, one prema::runtime phase
// each: --all (every registered policy), --policy NAME, or the runtime's --prema-lb.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <prema/lb/scheduler.hpp>

#include "cli.hpp"

namespace apps {

// Whether --prema-lb (or PREMA_LB) was given: call it before config::from_args removes it.
inline bool lb_option_given(int argc, char** argv) {
    bool given = std::getenv("PREMA_LB") != nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string_view a(argv[i]);
        given |= a == "--prema-lb" || a.rfind("--prema-lb=", 0) == 0;
    }
    return given;
}

// Throws bad_option naming the known policies if `name` is not one.
inline void check_policy(const std::string& name) {
    auto names = prema::lb::policy_names();
    if (std::find(names.begin(), names.end(), name) != names.end())
        return;
    std::string known;
    for (auto& n : names)
        known += (known.empty() ? "" : ", ") + n;
    throw bad_option("policy " + name + ": no such policy (known: " + known + ")");
}

// The policies to compare with `none`: every registered one but none (`all`), else `policy`,
// else the --prema-lb choice (`lb_given`: cfg_lb), else `fallback`.
inline std::vector<std::string> policies_to_run(bool all, const std::string& policy, bool lb_given,
                                                const std::string& cfg_lb,
                                                const std::string& fallback) {
    std::vector<std::string> out;
    if (all) {
        for (auto& name : prema::lb::policy_names())
            if (name != "none")
                out.push_back(name);
    } else {
        out.push_back(!policy.empty() ? policy : lb_given ? cfg_lb : fallback);
    }
    return out;
}

} // namespace apps
