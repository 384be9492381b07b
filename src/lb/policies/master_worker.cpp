// Master-worker in two levels, so that no rank serves the whole job: the ranks form groups of
// G = ceil(sqrt(P)) consecutive ranks, the first of each group is its master, and rank 0 is
// also the master of the other group masters. A rank keeps a pool of one pending object per
// worker thread (a group master: one per worker thread of each rank of its group), sends the
// objects beyond it to its master and, when it runs dry (a group master: when its pool is
// empty), asks its master for as many as its pool holds. Rank 0 keeps what it gets. So rank 0 hears
// from at most (G - 1) + (P / G - 1), about 2 sqrt(P), ranks and every other master from at most G
// - 1; an object climbs at most two levels, and rank 0 holds only what the group pools overflow
// with.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {

class master_worker final : public requester {
    void dist_balance() override {
        const int up = master_of(rank());
        if (up < 0)
            return;
        const std::size_t pool = std::size_t(members(rank()) * workers());
        const std::size_t n = work_objects();
        if (n > pool) {
            std::size_t sent = 0, surplus = n - pool;
            for (auto& o : heaviest(surplus + std::size_t(std::max(running(), 0))))
                if (sent < surplus && migrate(o.object, up))
                    ++sent;
        }
        // A group master refills its pool once it is empty, even while its own workers are
        // busy: its members' requests depend on it.
        if (members(rank()) > 1 ? may_ask() && n == 0 : hungry())
            ask(up, int(pool));
    }

    int group_size() const { return int(std::ceil(std::sqrt(double(ranks())))); }

    // The rank `r` sends its surplus to and asks for work; -1 for rank 0.
    int master_of(int r) const {
        const int g = group_size(), first = r / g * g;
        return r != first ? first : r != 0 ? 0 : -1;
    }

    // Ranks whose work `r` pools: its group if it is a group master, else itself.
    int members(int r) const {
        const int g = group_size();
        return r % g != 0 ? 1 : std::min(g, ranks() - r);
    }
};

} // namespace

std::unique_ptr<lb::scheduler> make_master_worker() {
    return std::make_unique<master_worker>();
}

} // namespace prema::detail
