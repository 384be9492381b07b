// Barker's closed-form model (K. Barker, PREMA thesis, 2004, ch. 6), as written, for comparison
// with the round model. The two-class fit stands for the workload; the heavy (alpha) objects are
// taken to fill the first ranks, N/P objects per rank; the light (beta) ranks run dry first and
// then take one alpha object per round until the alpha ranks have started everything. The lower
// bound uses the classes' minimum weights and the shortest search for work (one probe), the upper
// bound their maximum weights and the longest (every other rank probed); the prediction is the mean
// of the two. With several workers a rank runs its objects W at a time.
#include <algorithm>
#include <cmath>

#include "lb/model/fit.hpp"
#include "lb/model/predict.hpp"

namespace prema::model {

prediction predict_thesis(const workload& w, const machine& m, const settings& s) {
    validate(w);
    const auto f = fit_two_classes(w.all_weights());
    const double P = w.ranks, W = w.workers, N = double(f.objects), n = N / P;
    const double heavy_objects = N - double(f.gamma);
    const double p_alpha =
        heavy_objects > 0 ? std::clamp(std::round(heavy_objects / n), 1.0, std::max(1.0, P - 1))
                          : 0.0;
    const double p_beta = P - p_alpha;
    const bool balance = s.policy != policy::none && p_alpha > 0 && p_beta > 0;
    const double small = m.message_s(s.lb_message_bytes);
    const double transit = m.migrate_s + m.per_byte_s * s.object_bytes;
    const double msg_task = s.messages_per_object * m.message_s(s.message_bytes);
    const double probes = s.policy == policy::diffusion ? std::min<double>(s.neighbours, P - 1) : 1;
    // Eq 6.19 and 6.18: the request (its start-up paid once per neighbour), half a quantum until
    // the remote polling thread wakes, the reply.
    const double t_req = probes * m.startup_s + m.per_byte_s * s.lb_message_bytes;
    const double t_lb = t_req + s.quantum_s / 2 + small + m.decision_s;
    const double t_alpha = n * f.heavy_s / W, t_beta = n * f.light_s / W;

    auto bound = [&](double alpha_w, double beta_w, double locate) {
        double migr_alpha = 0, migr_beta = 0;
        if (balance) {
            double m_alpha =
                std::max(0.0, std::floor((t_alpha - (t_beta + locate)) * W / f.heavy_s));
            double c_alpha = p_beta / p_alpha + 1;
            double rounds = std::floor(m_alpha / c_alpha);
            migr_alpha = rounds * std::floor(p_beta / p_alpha);
            migr_beta = rounds * std::ceil(p_alpha / p_beta);
        }
        double work_alpha = (n * alpha_w - migr_alpha * f.heavy_s) / W; // Eq 6.10 / 6.12
        double work_beta = (n * beta_w + migr_beta * f.heavy_s) / W;    // Eq 6.11 / 6.13
        breakdown b;
        if (work_alpha >= work_beta || p_beta == 0) {
            b.compute = work_alpha;
            b.app_messages = (n - migr_alpha) * msg_task / W; // Eq 6.16
            b.migrations = migr_alpha * transit;              // Eq 6.20
        } else {
            b.compute = work_beta;
            b.app_messages = (n + migr_beta) * msg_task / W; // Eq 6.17
            b.lb_messages = migr_beta * (t_lb - m.decision_s);
            b.decisions = migr_beta * m.decision_s;
            b.migrations = migr_beta * transit; // Eq 6.21
        }
        // Eq 6.14: the polling thread's wake-ups, here the yield points that suspend.
        double slice = slice_s(s);
        b.preemption = slice > 0 ? b.compute / slice * m.poll_s : 0;
        b.other = m.quiescence_s;
        return std::pair{b, migr_alpha * p_alpha};
    };
    double locate_best = s.period_s / 2 + 2 * small + transit + m.decision_s;
    double locate_worst = locate_best + (P - 2) * std::max(s.period_s, 2 * small);
    auto [lower, moved_lo] = bound(f.heavy_min, f.light_min, locate_best);
    auto [upper, moved_hi] = bound(f.heavy_max, f.light_max, locate_worst);
    prediction p;
    p.min_s = lower.total();
    p.max_s = upper.total();
    p.makespan_s = (p.min_s + p.max_s) / 2;
    p.slowest = lower;
    p.slowest += upper;
    p.slowest *= 0.5;
    p.migrations = (moved_lo + moved_hi) / 2;
    p.lb_messages = 2 * probes * p.migrations;
    p.slowest_rank = 0;
    return p;
}

} // namespace prema::model
