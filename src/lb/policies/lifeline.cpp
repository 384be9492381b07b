// Lifeline-based work stealing (after X10's GLB: Saraswat et al., PPoPP 2011). An idle rank asks
// up to `attempts` random victims for work, one request at a time; if all refuse, it sends one
// request along each of its lifelines (its neighbours in a hypercube over the ranks) and goes
// quiet: it sends nothing more until work reaches it. A rank asked along a lifeline grants at
// once if it can spare objects, and otherwise remembers the thief without answering; as soon as
// it can spare objects it pushes each remembered thief half of them, at most what the thief
// asked for (16 per idle worker), with no new request. A thief woken this way serves its own
// remembered thieves once it can spare objects: work spreads along the hypercube. A rank that
// has work again withdraws the lifeline requests still open, so that no buddy pushes it work it
// does not need (X10's places get work only through GLB; PREMA's ranks also get it from the
// application).
//
// Requests, refusals and the notice that work was pushed are policy messages, which do not count
// for quiescence; the objects pushed are migrations, which do, so a phase ends only once they
// arrived. A rank pays O(1) per period plus O(k log n) per k objects granted out of n; it has
// at most ceil(log2 P) lifelines and remembers at most as many thieves. An idle stretch costs a
// rank at most 4 random requests, one lifeline request and one withdrawal per lifeline; a quiet
// rank sends nothing, whatever the job's size. Policy messages between two ranks arrive in the
// order sent (MPI does not overtake), so a withdrawal never cancels a later request.
#include <algorithm>
#include <vector>

#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {

class lifeline final : public requester {
    void dist_balance() override {
        if (local_load() > 0) {
            wake();
            withdraw();
        }
        deal();
        steal();
    }

    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        switch (m.k) {
        case kind::request:
            serve(from, m.count);
            return;
        case kind::lifeline:
            if (int n = give(from, m.count); n > 0) {
                note_fed(from);
                send_to(from, msg{kind::dealt, n, 0});
            } else {
                remember(from, m.count);
                note_demand(from, m.count);
            }
            return;
        case kind::dealt:
            std::erase(activated_, from); // that lifeline may be used again
            wake();
            return;
        case kind::withdrawn:
            std::erase_if(thieves_, [&](const thief& t) { return t.rank == from; });
            note_fed(from);
            return;
        case kind::granted:
            replied();
            wake();
            return;
        default: // refused: the next victim at once
            replied();
            steal();
            return;
        }
    }

    // Active again: the next idle stretch starts with random steals.
    void wake() {
        quiet_ = false;
        tries_ = 0;
    }

    // One step of an idle rank: the next random request, or after the last one the lifelines
    // not in use yet, and quiet.
    void steal() {
        if (quiet_ || !hungry())
            return;
        if (tries_ < std::min(attempts, ranks() - 1)) {
            ++tries_;
            ask(random_other(), steal_batch());
            return;
        }
        for (int buddy = 1; buddy < ranks(); buddy *= 2) {
            const int to = rank() ^ buddy;
            if (to < ranks() &&
                std::find(activated_.begin(), activated_.end(), to) == activated_.end()) {
                activated_.push_back(to);
                send_to(to, msg{kind::lifeline, steal_batch(), 0});
            }
        }
        quiet_ = true;
    }

    // Takes back the lifeline requests no buddy answered yet: this rank has work.
    void withdraw() {
        for (int to : activated_)
            send_to(to, msg{kind::withdrawn, 0, 0});
        activated_.clear();
    }

    // Pushes remembered thieves work, in the order they asked, while this rank can spare some.
    void deal() {
        while (!thieves_.empty()) {
            auto& t = thieves_.front();
            const int n = give(t.rank, t.want);
            if (n == 0)
                break;
            note_fed(t.rank);
            send_to(t.rank, msg{kind::dealt, n, 0});
            thieves_.erase(thieves_.begin());
        }
        // A quiet thief does not ask again: its lifeline request stands as demand until it is
        // served or withdrawn.
        for (auto& t : thieves_)
            note_demand(t.rank, t.want);
    }

    void remember(int from, int want) {
        auto t = std::find_if(thieves_.begin(), thieves_.end(),
                              [&](const thief& x) { return x.rank == from; });
        if (t == thieves_.end())
            thieves_.push_back({from, want});
        else
            t->want = want;
    }

    struct thief {
        int rank, want;
    };
    std::vector<thief> thieves_; // asked along a lifeline, not served yet
    std::vector<int> activated_; // lifelines this rank asked along and got nothing from yet
    int tries_ = 0;              // random requests in this idle stretch
    bool quiet_ = false;         // asked along every lifeline: waits for work to come
};

} // namespace

std::unique_ptr<lb::scheduler> make_lifeline() {
    return std::make_unique<lifeline>();
}

} // namespace prema::detail
