// Receiver-initiated diffusion (PREMA's "Diffusion"): an idle rank queries the loads of its
// neighbourhood (--prema-lb-neighbours ranks), asks the most loaded for work (it grants half
// its spare objects, see requester.hpp), and replaces neighbours that had nothing by ranks
// picked at random for the next round.
#include <algorithm>
#include <vector>

#include "lb/policies.hpp"
#include "lb/policies/requester.hpp"

namespace prema::detail {

namespace {
class diffusion final : public requester {
    void dist_balance() override {
        if (neighbours_.empty())
            pick_neighbours();
        if (querying_ || !hungry() || neighbours_.empty())
            return;
        querying_ = true;
        replies_ = 0;
        best_rank_ = -1;
        best_load_ = 0;
        empty_.clear();
        for (int n : neighbours_)
            send_to(n, msg{kind::query, 0, 0});
    }

    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        switch (m.k) {
        case kind::query:
            send_to(from, msg{kind::load, 0, local_load()});
            return;
        case kind::load:
            on_load(from, m.load);
            return;
        case kind::request:
            serve(from, m.count);
            return;
        default:
            answered(m.k);
        }
    }

    void on_load(int from, double load) {
        if (!querying_)
            return;
        if (load > best_load_) {
            best_load_ = load;
            best_rank_ = from;
        } else if (load <= 0) {
            empty_.push_back(from);
        }
        if (++replies_ < int(neighbours_.size()))
            return;
        querying_ = false;
        replace_empty();
        if (best_rank_ >= 0)
            ask(best_rank_, steal_batch());
        else
            back_off(replies_); // the whole neighbourhood was empty
    }

    void pick_neighbours() {
        int k = std::min(options().lb_neighbours, ranks() - 1);
        while (int(neighbours_.size()) < k) {
            int r = random_other();
            if (std::find(neighbours_.begin(), neighbours_.end(), r) == neighbours_.end())
                neighbours_.push_back(r);
        }
    }

    void replace_empty() {
        if (int(neighbours_.size()) >= ranks() - 1)
            return; // everyone is a neighbour already
        for (int gone : empty_)
            std::erase(neighbours_, gone);
        pick_neighbours();
    }

    std::vector<int> neighbours_, empty_;
    bool querying_ = false;
    int replies_ = 0, best_rank_ = -1;
    double best_load_ = 0;
};
} // namespace

std::unique_ptr<lb::scheduler> make_diffusion() {
    return std::make_unique<diffusion>();
}

} // namespace prema::detail
