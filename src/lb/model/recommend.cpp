#include "lb/model/recommend.hpp"

#include <algorithm>
#include <tuple>

#include "prema/error.hpp"

namespace prema::model {

std::vector<candidate> scan(const workload& w, const machine& m, const settings& base,
                            const scan_grid& grid) {
    if (grid.objects_per_worker.empty() || grid.quanta_s.empty() || grid.neighbours.empty())
        throw usage_error("scan: every grid dimension needs at least one value");
    std::vector<int> neighbourhoods;
    if (base.policy == policy::diffusion) {
        for (int k : grid.neighbours)
            if (k <= std::max(1, w.ranks - 1))
                neighbourhoods.push_back(k);
    }
    if (neighbourhoods.empty())
        neighbourhoods.push_back(std::min(base.neighbours, std::max(1, w.ranks - 1)));
    std::vector<candidate> all;
    for (int k : grid.objects_per_worker) {
        workload g = regranulate(w, k);
        for (double q : grid.quanta_s)
            for (int nb : neighbourhoods) {
                settings s = base;
                s.quantum_s = q;
                s.neighbours = nb;
                all.push_back({k, q, nb, predict(g, m, s)});
            }
    }
    return all;
}

const candidate& best(const std::vector<candidate>& all) {
    if (all.empty())
        throw usage_error("best: nothing was scanned");
    double lowest = std::min_element(all.begin(), all.end(), [](auto& a, auto& b) {
                        return a.p.makespan_s < b.p.makespan_s;
                    })->p.makespan_s;
    const candidate* pick = nullptr;
    for (auto& c : all) {
        if (c.p.makespan_s > lowest * 1.005)
            continue;
        if (!pick || std::tuple(c.objects_per_worker, -c.quantum_s, c.neighbours) <
                         std::tuple(pick->objects_per_worker, -pick->quantum_s, pick->neighbours))
            pick = &c;
    }
    return *pick;
}

} // namespace prema::model
