// Heat diffusion (Watts), computed by each rank with its neighbours: the ranks form a virtual
// 2-D mesh (heat::make_mesh, any rank count), and a round is a fixed number of outer steps of
// second-order (Crank–Nicolson) diffusion of work-transfer vectors, in which every rank
// exchanges one value with each of its (at most 4) mesh neighbours per exchange and computes its
// own transfers (heat::node). At the end of a round each rank sends its neighbours objects whose
// loads best meet its positive transfers. Per round a rank sends and receives
// degree x steps_per_round x (sweeps + 2) messages, whatever the number of ranks.
//
// A round starts when a rank's timer expires (every 4 periods while it moves objects, backing
// off to every 64 while it does not) or when a neighbour's first value of the next round
// arrives: a round spreads over the mesh as a wave. A neighbour is at most one exchange ahead
// (it cannot finish an exchange without this rank's value), so two slots of values suffice.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "lb/heat_diffusion_math.hpp"
#include "lb/policies.hpp"

namespace prema::detail {

namespace {

class heat_diffusion final : public lb::scheduler {
    struct msg {
        std::uint64_t exchange; // position in the sequence of all exchanges of all rounds
        double value;
    };
    using clock = std::chrono::steady_clock;

    // Outer steps per round: each moves load about sqrt(alpha) of the way along a gradient,
    // and objects move only once per round, so more steps smooth gradients that single
    // objects cannot (at the cost of (sweeps + 2) exchanges each).
    static constexpr int steps_per_round = 2;
    // Candidates per transfer for heat::select_objects: O(1) work per order whatever the
    // number of local objects; a transfer that needs more objects is met over more rounds.
    static constexpr std::size_t candidates = 64;

    void dist_balance() override {
        if (ranks() == 1 || node_ || clock::now() < next_round_)
            return;
        begin_round();
    }

    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        if (!node_ && m.exchange == position_)
            begin_round(); // a neighbour started the next round: join it
        // Anything else cannot happen (see the top); a message that is neither this exchange's
        // nor the next one's is dropped rather than corrupting a later round.
        if (!node_ || (m.exchange != position_ && m.exchange != position_ + 1))
            return;
        const auto& nb = node_->neighbours();
        auto k = std::size_t(std::find(nb.begin(), nb.end(), from) - nb.begin());
        if (k == nb.size())
            return;
        auto& slot = m.exchange == position_ ? now_ : next_;
        slot.values[k] = m.value;
        ++slot.count;
        while (node_ && now_.count == int(node_->neighbours().size()))
            advance();
    }

    double my_load() const { return local_load() + running_load(); }

    void begin_round() {
        if (mesh_.ranks != ranks()) {
            mesh_ = heat::make_mesh(ranks());
            neighbours_ = mesh_.neighbours(rank());
            sweeps_ = heat::inner_sweeps(options().lb_alpha, mesh_.max_degree());
            now_.values.assign(neighbours_.size(), 0);
            next_.values.assign(neighbours_.size(), 0);
        }
        node_.emplace(mesh_, rank(), my_load(), options().lb_alpha, sweeps_);
        round_end_ = position_ + std::uint64_t(steps_per_round * node_->exchanges_per_step());
        send_value();
    }

    void send_value() {
        for (int n : node_->neighbours())
            send_to(n, msg{position_, node_->outgoing()});
    }

    // Every neighbour's value of this exchange is in: compute, move on, send the next value.
    void advance() {
        node_->incoming(now_.values);
        std::swap(now_, next_);
        next_.count = 0;
        if (++position_ < round_end_) {
            send_value();
            return;
        }
        finish_round();
        if (now_.count > 0)
            begin_round(); // a neighbour's first value of the next round came meanwhile
    }

    void finish_round() {
        bool moved = false;
        const auto& nb = node_->neighbours();
        for (std::size_t k = 0; k < nb.size(); ++k)
            if (node_->transfers()[k] > 0)
                moved |= send_objects(nb[k], node_->transfers()[k]);
        node_.reset();
        idle_rounds_ = moved ? 0 : std::min(idle_rounds_ + 1, 4);
        next_round_ =
            clock::now() + std::chrono::microseconds(options().lb_period_us) * (4 << idle_rounds_);
    }

    // Meets a transfer with objects whose handlers have not started, none heavier than the
    // transfer: rounds run on measured loads again and again, and an object that overshot
    // the transfer could bounce between two ranks whose loads differ by less than its own.
    bool send_objects(int to, double amount) {
        auto objects = heaviest(candidates, 2 * amount);
        std::vector<double> loads;
        for (auto& o : objects)
            loads.push_back(o.load);
        bool moved = false;
        for (int i : heat::select_objects(loads, amount))
            moved |= migrate(objects[std::size_t(i)].object, to);
        return moved;
    }

    struct slot {
        std::vector<double> values; // by neighbour, neighbours() order
        int count = 0;
    };

    heat::rank_mesh mesh_{0, 1};
    std::vector<int> neighbours_;
    int sweeps_ = 0, idle_rounds_ = 0;
    std::optional<heat::node> node_; // the round in progress
    std::uint64_t position_ = 0, round_end_ = 0;
    slot now_, next_;
    clock::time_point next_round_{};
};

} // namespace

std::unique_ptr<lb::scheduler> make_heat_diffusion() {
    return std::make_unique<heat_diffusion>();
}

} // namespace prema::detail
