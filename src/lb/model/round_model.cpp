// The round model: Barker's rounds of migration (idle ranks take not-yet-started objects from
// loaded ones), played out event by event on the per-object weights with the rules of the
// runtime's policies (src/lb/policies/requester.hpp, work_stealing.cpp, diffusion.cpp):
//   - each rank's workers start its objects in order (the scheduler's FIFO);
//   - a rank asks for work when nothing is pending and a worker is free, at its next balancing
//     tick (--prema-lb-period-us; each rank's ticks have their own phase);
//   - work_stealing asks a victim picked at random; diffusion queries its neighbourhood, asks
//     the most loaded, replaces neighbours that had nothing; the asker wants 16 objects per
//     free worker;
//   - the asked rank gives half its spare objects (pending beyond its free workers), rounded
//     up, heaviest first, at most what was asked for, else refuses; refusals back off as in
//     requester::back_off; "heaviest" and a rank's load go by the workload's estimates
//     (--prema-lb-load), the time by the weights;
//   - answers come from the progress thread at once (dedicated progress) or, with inline
//     progress and every worker busy, at the next poll of a running object's yield points
//     (poll_gap_s; the thesis waited half a quantum);
//   - an object in transit costs migrate_s + per_byte_s x object_bytes.
// Randomness (tick phases, victim orders, neighbourhoods) is drawn from settings::seed; the
// prediction is the mean over settings::replications runs.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <vector>

#include "lb/model/predict.hpp"
#include "prema/error.hpp"

namespace prema::model {

namespace {

struct item {
    double weight = 0;   // its work, seconds
    double estimate = 0; // what the policies weigh it by (workload::estimates)
    bool migrated = false;
    int attempts = 0;   // balancing attempts the receiver made for it
    double transit = 0; // its migration time
};

struct worker {
    bool busy = false;
    double free_at = 0; // end of the current item, or since when it is idle
    breakdown path;
};

struct rank_state {
    std::deque<item> pending;
    std::vector<worker> workers;
    bool waiting = false, armed = false, querying = false;
    int refusals = 0, attempts = 0;
    double quiet_until = 0, phase = 0;
    std::vector<int> neighbours;

    int free() const {
        return int(std::count_if(workers.begin(), workers.end(), [](auto& w) { return !w.busy; }));
    }
    double load() const {
        double l = 0;
        for (auto& i : pending)
            l += i.estimate;
        return l;
    }
};

constexpr double min_spacing_s = 1e-5;
// requester.hpp's constants: refusals before a pause, objects a thief asks per free worker.
constexpr int attempts = 4, batch_per_worker = 16;

enum class kind { worker_free, tick, loads, serve, arrive, refused };

struct event {
    double t;
    long seq;
    kind k;
    int rank, other = -1;
    item it{};
    bool operator>(const event& e) const { return t != e.t ? t > e.t : seq > e.seq; }
};

struct outcome {
    double makespan = 0;
    int slowest = 0;
    breakdown path;
    double migrations = 0, messages = 0;
};

class simulation {
  public:
    simulation(const workload& w, const machine& m, const settings& s, unsigned seed)
        : w_(w), m_(m), s_(s), rng_(seed), ranks_(std::size_t(w.ranks)) {
        std::uniform_real_distribution<double> phase(0, s.period_s);
        for (int r = 0; r < w.ranks; ++r) {
            auto& rk = ranks_[std::size_t(r)];
            rk.workers.resize(std::size_t(w.workers));
            const auto& weights = w.weights[std::size_t(r)];
            for (std::size_t i = 0; i < weights.size(); ++i)
                rk.pending.push_back({weights[i], w.estimates.empty()
                                                      ? weights[i]
                                                      : w.estimates[std::size_t(r)][i]});
            rk.phase = phase(rng_);
            unfinished_ += long(rk.pending.size());
        }
    }

    outcome run() {
        for (int r = 0; r < w_.ranks; ++r)
            dispatch(r, 0);
        // Idle ranks keep asking until the end: stop when the last object has finished.
        while (!queue_.empty() && unfinished_ > 0) {
            event e = queue_.top();
            queue_.pop();
            handle(e);
        }
        outcome o;
        for (int r = 0; r < w_.ranks; ++r)
            for (auto& wk : ranks_[std::size_t(r)].workers)
                if (wk.free_at >= o.makespan) {
                    o.makespan = wk.free_at;
                    o.slowest = r;
                    o.path = wk.path;
                }
        o.makespan += m_.quiescence_s;
        o.path.other += m_.quiescence_s;
        o.migrations = migrations_;
        o.messages = messages_;
        return o;
    }

  private:
    double small() const { return m_.message_s(s_.lb_message_bytes); }
    double transit() const { return m_.migrate_s + m_.per_byte_s * s_.object_bytes; }
    bool balancing() const { return s_.policy != policy::none && w_.ranks > 1; }
    // Ticks at least this far apart: a period of 0 means "every pass of the progress loop",
    // which the model cannot follow event by event.
    double spacing() const { return std::max(s_.period_s, min_spacing_s); }

    void post(double t, kind k, int rank, int other = -1, item it = {}) {
        queue_.push(event{t, seq_++, k, rank, other, it});
    }

    void handle(const event& e) {
        auto& rk = ranks_[std::size_t(e.rank)];
        switch (e.k) {
        case kind::worker_free:
            rk.workers[std::size_t(e.other)].busy = false;
            --unfinished_;
            dispatch(e.rank, e.t);
            break;
        case kind::tick:
            tick(e.rank, e.t);
            break;
        case kind::loads:
            loads(e.rank, e.t);
            break;
        case kind::serve:
            serve(e.rank, e.other, e.t);
            break;
        case kind::arrive:
            rk.pending.push_back(e.it);
            rk.waiting = false;
            rk.refusals = 0;
            dispatch(e.rank, e.t);
            break;
        case kind::refused:
            rk.waiting = false;
            back_off(rk, 1, e.t);
            rearm(e.rank, e.t);
            break;
        }
    }

    // Free workers start pending objects; a rank left with nothing pending looks for work.
    void dispatch(int r, double t) {
        auto& rk = ranks_[std::size_t(r)];
        for (auto& wk : rk.workers) {
            if (wk.busy || rk.pending.empty())
                continue;
            item it = rk.pending.front();
            rk.pending.pop_front();
            double waited = t - wk.free_at;
            if (it.migrated) { // the wait was for this object: attribute it
                double migr = std::min(waited, it.transit);
                double decide = std::min(waited - migr, it.attempts * m_.decision_s);
                wk.path.migrations += migr;
                wk.path.decisions += decide;
                wk.path.lb_messages += waited - migr - decide;
            } else {
                wk.path.other += waited;
            }
            double pre = yields(it.weight, s_) * m_.poll_s;
            double app = s_.messages_per_object * m_.message_s(s_.message_bytes);
            wk.path.compute += it.weight;
            wk.path.preemption += pre;
            wk.path.app_messages += app;
            wk.busy = true;
            wk.free_at = t + it.weight + pre + app;
            post(wk.free_at, kind::worker_free, r, int(&wk - rk.workers.data()));
        }
        if (rk.pending.empty() && rk.free() > 0)
            arm(r, t);
    }

    bool hungry(const rank_state& rk, double t) const {
        return !rk.waiting && !rk.querying && t >= rk.quiet_until && rk.pending.empty() &&
               rk.free() > 0;
    }

    // The next balancing tick at or after t (and after any back-off pause).
    void arm(int r, double t) {
        auto& rk = ranks_[std::size_t(r)];
        if (!balancing() || rk.armed || rk.waiting || rk.querying)
            return;
        double from = std::max(t, rk.quiet_until);
        double next = s_.period_s > 0
                          ? rk.phase + std::ceil((from - rk.phase) / s_.period_s) * s_.period_s
                          : from;
        rk.armed = true;
        post(std::max(next, from), kind::tick, r);
    }

    // After an answer without work: the tick after this one.
    void rearm(int r, double t) {
        auto& rk = ranks_[std::size_t(r)];
        rk.quiet_until = std::max(rk.quiet_until, t + spacing());
        arm(r, t);
    }

    void tick(int r, double t) {
        auto& rk = ranks_[std::size_t(r)];
        rk.armed = false;
        if (!hungry(rk, t)) {
            if (rk.pending.empty() && rk.free() > 0)
                arm(r, t); // still idle, paused: try again after the pause
            return;
        }
        ++rk.attempts;
        if (s_.policy == policy::work_stealing) {
            ask(r, random_other(r), t);
            return;
        }
        if (rk.neighbours.empty())
            pick_neighbours(r);
        rk.querying = true;
        int k = int(rk.neighbours.size());
        messages_ += 2 * k;
        double answer = 0;
        for (int n : rk.neighbours)
            answer = std::max(answer, answer_delay(n, t));
        post(t + 2 * small() + (k - 1) * m_.startup_s + answer, kind::loads, r);
    }

    void ask(int r, int victim, double t) {
        ranks_[std::size_t(r)].waiting = true;
        messages_ += 2;
        post(t + small() + answer_delay(victim, t), kind::serve, victim, r);
    }

    // Diffusion: every neighbour answered; ask the most loaded.
    void loads(int r, double t) {
        auto& rk = ranks_[std::size_t(r)];
        rk.querying = false;
        int best = -1;
        double best_load = 0;
        std::vector<int> empty;
        for (int n : rk.neighbours) {
            double l = ranks_[std::size_t(n)].load();
            if (l > best_load)
                best_load = l, best = n;
            else if (l <= 0)
                empty.push_back(n);
        }
        int k = int(rk.neighbours.size());
        if (k < w_.ranks - 1) {
            for (int gone : empty)
                std::erase(rk.neighbours, gone);
            pick_neighbours(r);
        }
        if (best >= 0) {
            ask(r, best, t);
        } else {
            back_off(rk, k, t);
            rearm(r, t);
        }
    }

    // The asked rank's policy answers: half its spare objects (rounded up), the ones it
    // believes heaviest, at most what the thief asks for (requester::serve and steal_batch).
    void serve(int v, int thief, double t) {
        auto& vk = ranks_[std::size_t(v)];
        auto& tk = ranks_[std::size_t(thief)];
        t += m_.decision_s;
        const int spare = int(vk.pending.size()) - vk.free();
        if (spare <= 0) {
            post(t + small(), kind::refused, thief);
            return;
        }
        const int want = batch_per_worker * std::max(tk.free(), 1);
        for (int n = std::min(want, (spare + 1) / 2); n > 0; --n) {
            auto heaviest =
                std::max_element(vk.pending.begin(), vk.pending.end(),
                                 [](auto& a, auto& b) { return a.estimate < b.estimate; });
            item it = *heaviest;
            vk.pending.erase(heaviest);
            it.migrated = true;
            it.transit = transit();
            it.attempts = tk.attempts;
            tk.attempts = 0;
            ++migrations_;
            post(t + std::max(transit(), small()), kind::arrive, thief, -1, it);
        }
    }

    // When rank v's policy gets to a message that arrives at t.
    double answer_delay(int v, double t) {
        if (!s_.inline_progress)
            return 0;
        auto& vk = ranks_[std::size_t(v)];
        if (vk.free() > 0)
            return 0; // an idle worker drives MPI
        double first_end = std::numeric_limits<double>::infinity();
        for (auto& wk : vk.workers)
            first_end = std::min(first_end, wk.free_at - t);
        double gap = poll_gap_s(s_) > 0 ? poll_gap_s(s_) : first_end;
        std::uniform_real_distribution<double> u(0, std::max(0.0, std::min(gap, first_end)));
        return u(rng_);
    }

    // As requester::back_off: after `attempts` refusals in a row (fewer in a smaller job).
    void back_off(rank_state& rk, int n, double t) {
        rk.refusals += n;
        const int tries = std::min(attempts, w_.ranks - 1);
        if (rk.refusals >= tries)
            rk.quiet_until = t + spacing() * double(1 << std::min(rk.refusals - tries, 5));
    }

    int random_other(int r) {
        std::uniform_int_distribution<int> d(0, w_.ranks - 2);
        int o = d(rng_);
        return o >= r ? o + 1 : o;
    }

    void pick_neighbours(int r) {
        auto& nb = ranks_[std::size_t(r)].neighbours;
        int k = std::min(s_.neighbours, w_.ranks - 1);
        std::uniform_int_distribution<int> d(0, w_.ranks - 2);
        while (int(nb.size()) < k) {
            int o = d(rng_);
            o = o >= r ? o + 1 : o;
            if (std::find(nb.begin(), nb.end(), o) == nb.end())
                nb.push_back(o);
        }
    }

    const workload& w_;
    const machine& m_;
    const settings& s_;
    std::mt19937 rng_;
    std::vector<rank_state> ranks_;
    std::priority_queue<event, std::vector<event>, std::greater<>> queue_;
    long seq_ = 0, unfinished_ = 0;
    double migrations_ = 0, messages_ = 0;
};

} // namespace

prediction predict(const workload& w, const machine& m, const settings& s) {
    validate(w);
    if (s.neighbours < 1 || s.replications < 1 || s.period_s < 0 || s.quantum_s < 0)
        throw usage_error("model settings: neighbours and replications must be >= 1, period and "
                          "quantum >= 0");
    int reps = s.policy == policy::none ? 1 : s.replications;
    prediction p;
    p.min_s = std::numeric_limits<double>::infinity();
    std::map<int, int> slowest;
    for (int i = 0; i < reps; ++i) {
        outcome o = simulation(w, m, s, s.seed + unsigned(i)).run();
        p.makespan_s += o.makespan;
        p.min_s = std::min(p.min_s, o.makespan);
        p.max_s = std::max(p.max_s, o.makespan);
        p.slowest += o.path;
        p.migrations += o.migrations;
        p.lb_messages += o.messages;
        ++slowest[o.slowest];
    }
    p.makespan_s /= reps;
    p.slowest *= 1.0 / reps;
    p.migrations /= reps;
    p.lb_messages /= reps;
    p.slowest_rank = std::max_element(slowest.begin(), slowest.end(), [](auto& a, auto& b) {
                         return a.second < b.second;
                     })->first;
    return p;
}

} // namespace prema::model
