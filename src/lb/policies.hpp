// The policies PREMA ships, selected by name with --prema-lb.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "prema/lb/scheduler.hpp"

namespace prema::detail {

std::unique_ptr<lb::scheduler> make_work_stealing();
std::unique_ptr<lb::scheduler> make_diffusion();
std::unique_ptr<lb::scheduler> make_master_worker();
std::unique_ptr<lb::scheduler> make_heat_diffusion();
std::unique_ptr<lb::scheduler> make_lifeline();

inline std::map<std::string, lb::policy_factory> builtin_policies() {
    return {
        {"none", [] { return std::make_unique<lb::scheduler>(); }},
        {"work_stealing", make_work_stealing},
        {"diffusion", make_diffusion},
        {"master_worker", make_master_worker},
        {"heat_diffusion", make_heat_diffusion},
        {"lifeline", make_lifeline},
    };
}

} // namespace prema::detail
