#include "policies.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <mpi.h>

#include <prema/error.hpp>
#include <prema/lb/scheduler.hpp>

namespace example {

namespace {

// "a,b" -> {a, b}; "" -> {}.
std::vector<std::string> split_names(const std::string& list) {
    std::vector<std::string> names;
    for (std::size_t from = 0; from < list.size();) {
        auto comma = std::min(list.find(',', from), list.size());
        names.push_back(list.substr(from, comma - from));
        from = comma + 1;
    }
    return names;
}

} // namespace

bool lb_option_given(int argc, char** argv) {
    bool given = std::getenv("PREMA_LB") != nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string_view a(argv[i]);
        given |= a == "--prema-lb" || a.rfind("--prema-lb=", 0) == 0;
    }
    return given;
}

void policy_choice::add_to(cli& options, int argc, char** argv) {
    lb_given = lb_option_given(argc, argv);
    options.add("--policy", "NAME[,NAME]",
                "policies to compare with none, one after another (default: --prema-lb, or "
                "work_stealing)",
                policy);
    options.add_flag("--all", "every registered policy, one after another", all);
    options.check([this] {
        if (all && !policy.empty())
            throw prema::usage_error("--all and --policy exclude each other");
        auto names = prema::lb::policy_names();
        for (auto& name : split_names(policy)) {
            if (std::find(names.begin(), names.end(), name) != names.end())
                continue;
            std::string known;
            for (auto& n : names)
                known += (known.empty() ? "" : ", ") + n;
            throw prema::usage_error("--policy " + policy + ": no such policy '" + name +
                                     "' (known: " + known + ")");
        }
    });
}

std::vector<std::string> policy_choice::resolve(const std::string& cfg_lb,
                                                const std::string& fallback) const {
    if (!all)
        return !policy.empty() ? split_names(policy)
                               : std::vector<std::string>{lb_given ? cfg_lb : fallback};
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
