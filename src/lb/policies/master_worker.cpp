// Master-worker: rank 0 holds the pool. Other ranks keep one pending object per worker and
// send the rest to the master; when they run dry they ask the master for one. The master
// works too (preemption lets it serve requests while it computes).
#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {
constexpr int master = 0;

class master_worker final : public requester {
    void dist_balance() override {
        if (rank() == master)
            return;
        auto objects = work_map();
        for (std::size_t i = std::size_t(workers()); i < objects.size(); ++i)
            migrate(objects[i].object, master);
        if (hungry())
            ask(master);
    }
};
} // namespace

std::unique_ptr<lb::scheduler> make_master_worker() {
    return std::make_unique<master_worker>();
}

} // namespace prema::detail
