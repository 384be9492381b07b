#include "objects/balancer_link.hpp"

#include "prema/error.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {
// The balancer of the running runtime: set while it exists (made and freed between phases,
// while no worker runs).
std::atomic<balancer_link*> g_link{nullptr};
} // namespace

balancer_link::balancer_link(bool on, std::atomic<std::int64_t>& pending, ready_fn ready,
                             notify_fn notify) noexcept
    : pending_(pending), balances_(on), ready_(ready), notify_(notify) {
    g_link.store(this, std::memory_order_release);
}

balancer_link::~balancer_link() {
    balancer_link* self = this;
    g_link.compare_exchange_strong(self, nullptr);
}

balancer_link& current_balancer() {
    auto* l = g_link.load(std::memory_order_acquire);
    if (!l)
        throw usage_error("no PREMA runtime is running in this process");
    return *l;
}

bool may_run_here(bool more_in_batch) noexcept {
    auto& st = state();
    return (st.cfg.workers == 1 && !current_balancer().balancing()) ||
           (!more_in_batch && only_work_here());
}

} // namespace prema::detail
