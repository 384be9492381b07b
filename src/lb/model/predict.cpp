#include "lb/model/predict.hpp"

#include <algorithm>
#include <cmath>

#include "coro/busy_poll.hpp"
#include "prema/error.hpp"

namespace prema::model {

policy parse_policy(const std::string& name) {
    for (auto p : {policy::none, policy::work_stealing, policy::diffusion})
        if (name == to_string(p))
            return p;
    throw usage_error("policy '" + name + "': the model knows none, work_stealing, diffusion");
}

std::string to_string(policy p) {
    switch (p) {
    case policy::none:
        return "none";
    case policy::work_stealing:
        return "work_stealing";
    case policy::diffusion:
        return "diffusion";
    }
    return "?";
}

breakdown& breakdown::operator+=(const breakdown& b) {
    compute += b.compute;
    app_messages += b.app_messages;
    lb_messages += b.lb_messages;
    migrations += b.migrations;
    decisions += b.decisions;
    preemption += b.preemption;
    other += b.other;
    return *this;
}

breakdown& breakdown::operator*=(double k) {
    compute *= k;
    app_messages *= k;
    lb_messages *= k;
    migrations *= k;
    decisions *= k;
    preemption *= k;
    other *= k;
    return *this;
}

double slice_s(const settings& s) {
    if (s.quantum_s <= 0)
        return 0;
    return s.yield_every_s > 0 ? s.yield_every_s * std::ceil(s.quantum_s / s.yield_every_s - 1e-9)
                               : s.quantum_s;
}

double poll_gap_s(const settings& s) {
    if (s.quantum_s <= 0)
        return 0;
    const double every = std::min(s.quantum_s, detail::busy_poll_us * 1e-6);
    return s.yield_every_s > 0 ? s.yield_every_s * std::ceil(every / s.yield_every_s - 1e-9)
                               : every;
}

double yields(double weight_s, const settings& s) {
    double slice = slice_s(s);
    if (slice <= 0 || weight_s <= 0)
        return 0;
    return std::max(0.0, std::ceil(weight_s / slice - 1e-9) - 1);
}

} // namespace prema::model
