#include "policies.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <prema/error.hpp>
#include <prema/lb/scheduler.hpp>

namespace example {

void policy_choice::add_to(cli& options, int argc, char** argv) {
    lb_given = std::getenv("PREMA_LB") != nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string_view a(argv[i]);
        lb_given |= a == "--prema-lb" || a.rfind("--prema-lb=", 0) == 0;
    }
    options.add("--policy", "NAME",
                "policy to compare with none (default: --prema-lb, or work_stealing)", policy);
    options.add_flag("--all", "every registered policy, one after another", all);
    options.check([this] {
        if (all && !policy.empty())
            throw prema::usage_error("--all and --policy exclude each other");
        auto names = prema::lb::policy_names();
        if (policy.empty() || std::find(names.begin(), names.end(), policy) != names.end())
            return;
        std::string known;
        for (auto& n : names)
            known += (known.empty() ? "" : ", ") + n;
        throw prema::usage_error("--policy " + policy + ": no such policy (known: " + known + ")");
    });
}

std::vector<std::string> policy_choice::resolve(const std::string& cfg_lb,
                                                const std::string& fallback) const {
    if (!all)
        return {!policy.empty() ? policy : lb_given ? cfg_lb : fallback};
    std::vector<std::string> out;
    for (auto& name : prema::lb::policy_names())
        if (name != "none")
            out.push_back(name);
    return out;
}

} // namespace example
