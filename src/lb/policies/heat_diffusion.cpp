// Heat diffusion (Watts): rank 0 gathers every rank's load, runs second-order (Crank-Nicolson)
// diffusion of work-transfer vectors over a virtual 2-D mesh of ranks, and tells each rank how
// much to send to which mesh neighbour; that rank then picks objects whose loads best meet
// the amount. Rounds repeat every 4 periods while loads stay out of balance, backing off
// (up to 64 periods) while they are balanced.
#include <algorithm>
#include <chrono>
#include <vector>

#include "lb/heat_diffusion_math.hpp"
#include "lb/policies.hpp"

namespace prema::detail {

namespace {

class heat_diffusion final : public lb::scheduler {
    enum class kind : std::uint8_t { query, load, order };
    struct msg {
        kind k;
        std::int32_t to;
        std::uint32_t round;
        double amount; // load (reply) or amount to send (order)
    };
    using clock = std::chrono::steady_clock;

    void dist_balance() override {
        if (rank() != 0 || ranks() == 1 || gathering_ || clock::now() < next_round_)
            return;
        gathering_ = true;
        ++round_;
        loads_.assign(std::size_t(ranks()), -1);
        loads_[0] = my_load();
        replies_ = 1;
        for (int r = 1; r < ranks(); ++r)
            send_to(r, msg{kind::query, 0, round_, 0});
    }

    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        switch (m.k) {
        case kind::query:
            send_to(from, msg{kind::load, 0, m.round, my_load()});
            return;
        case kind::load:
            if (m.round == round_ && gathering_ && loads_[std::size_t(from)] < 0) {
                loads_[std::size_t(from)] = m.amount;
                if (++replies_ == ranks())
                    decide();
            }
            return;
        case kind::order:
            send_objects(m.to, m.amount);
            return;
        }
    }

    double my_load() const { return local_load() + running_load(); }

    void decide() {
        gathering_ = false;
        if (mesh_ranks_ != ranks()) {
            mesh_ = heat::make_mesh(ranks());
            mesh_ranks_ = ranks();
        }
        double alpha = options().lb_alpha;
        auto t = heat::transfer_vectors(mesh_, loads_, alpha);
        bool any = false;
        for (int i = 0; i < ranks(); ++i) {
            auto nb = mesh_.neighbours(i);
            for (std::size_t k = 0; k < nb.size(); ++k) {
                if (t[std::size_t(i)][k] <= 0)
                    continue;
                any = true;
                if (i == 0)
                    send_objects(nb[k], t[0][k]);
                else
                    send_to(i, msg{kind::order, nb[k], round_, t[std::size_t(i)][k]});
            }
        }
        idle_rounds_ = any ? 0 : std::min(idle_rounds_ + 1, 4);
        next_round_ =
            clock::now() + std::chrono::microseconds(options().lb_period_us) * (4 << idle_rounds_);
    }

    // Meets a transfer vector with objects whose handlers have not started.
    void send_objects(int to, double amount) {
        auto objects = work_map();
        std::vector<double> loads;
        for (auto& o : objects)
            loads.push_back(o.load);
        for (int i : heat::select_objects(loads, amount))
            migrate(objects[std::size_t(i)].object, to);
    }

    heat::rank_mesh mesh_{};
    std::vector<double> loads_;
    int mesh_ranks_ = 0, replies_ = 0, idle_rounds_ = 0;
    std::uint32_t round_ = 0;
    bool gathering_ = false;
    clock::time_point next_round_{};
};

} // namespace

std::unique_ptr<lb::scheduler> make_heat_diffusion() {
    return std::make_unique<heat_diffusion>();
}

} // namespace prema::detail
