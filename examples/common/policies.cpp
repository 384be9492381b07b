#include "policies.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <mpi.h>

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

unsigned long long run_under_policy(const prema::config& cfg, const std::string& policy,
                                    prema::entry_fn entry) {
    prema::config c = cfg;
    c.lb = policy;
    unsigned long long mine = 0, total = 0;
    int failed = 0, any_failed = 0;
    {
        prema::runtime rt(MPI_COMM_WORLD, c);
        failed = rt.run(std::move(entry));
        mine = prema::lb::current_stats().migrations_out;
    }
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed)
        throw std::runtime_error("the run under policy " + policy + " failed (see the log above)");
    return total;
}

} // namespace example
