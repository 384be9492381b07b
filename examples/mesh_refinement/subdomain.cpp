#include "subdomain.hpp"

#include <algorithm>
#include <utility>

namespace mesh_refinement {

refinement_context g_context;
busy_clock g_busy;

void busy_clock::add(clk::time_point since, bool finished) {
    double s = std::chrono::duration<double>(clk::now() - since).count();
    std::lock_guard lock(mutex);
    seconds[std::this_thread::get_id()] += s;
    refined += finished;
}

int busy_clock::done() {
    std::lock_guard lock(mutex);
    return refined;
}

void busy_clock::clear() {
    std::lock_guard lock(mutex);
    seconds.clear();
    refined = 0;
}

namespace {

using clk = busy_clock::clk;

// The subdomain's triangulation, rebuilt from its vertices if it has just arrived (or is new).
refinement& triangulation(subdomain& s) {
    if (!s.live) {
        auto since = clk::now();
        bool again = !s.saved.interior.empty();
        s.live = std::make_unique<refinement>(*g_context.d, s.index, g_context.min_angle, s.cap,
                                              s.saved);
        s.saved = {};
        if (again) {
            ++s.rebuilds;
            s.rebuild_s += std::chrono::duration<double>(clk::now() - since).count();
        }
    }
    return *s.live;
}

// Refines until no triangle is bad, passing a yield point every g_context.steps Steiner
// points, and sends each vertex it puts on a shared side to the neighbour across.
prema::task<> refine_to_quality(subdomain& s, int depth) {
    auto since = clk::now();
    refinement& r = triangulation(s);
    r.restart();
    auto inserted = r.points_inserted();
    std::vector<side_point> on_sides;
    for (;;) {
        bool done = r.step(g_context.steps, on_sides);
        for (side_point p : on_sides) {
            int across = g_context.d->neighbour(s.index, p.side);
            if (across < 0)
                continue;
            ++s.splits_sent[std::size_t(p.side)];
            co_await prema::send(g_context.names[std::size_t(across)], prema::fn<&split>,
                                 opposite(p.side), p.along, depth + 1, g_context.step);
        }
        on_sides.clear();
        if (done)
            break;
        auto y = prema::yield_point();
        if (!y.ready) { // the quantum expired: the worker serves queued messages first
            g_busy.add(since, false);
            co_await y;
            since = clk::now();
        }
    }
    s.steiner += r.points_inserted() - inserted;
    s.refined_by = prema::rank();
    g_busy.add(since, true);
}

// The multi-step benchmark's work on the mesh between adaptations: Jacobi sweeps of a
// vertex average over the triangles, a cost proportional to the mesh like a solver's.
prema::task<> relax(subdomain& s) {
    if (g_context.solve_sweeps == 0)
        co_return;
    auto since = clk::now();
    triangle_mesh m = triangulation(s).mesh();
    std::size_t n = m.xy.size() / 2;
    std::vector<double> u(n), sum(n), count(n);
    for (std::size_t v = 0; v < n; ++v)
        u[v] = m.xy[2 * v] * m.xy[2 * v + 1];
    for (int sweep = 0; sweep < g_context.solve_sweeps; ++sweep) {
        std::fill(sum.begin(), sum.end(), 0.0);
        std::fill(count.begin(), count.end(), 0.0);
        for (std::size_t t = 0; t < m.size(); ++t)
            for (int k = 0; k < 3; ++k) {
                auto a = std::size_t(m.triangles[3 * t + std::size_t(k)]);
                auto b = std::size_t(m.triangles[3 * t + std::size_t((k + 1) % 3)]);
                sum[a] += u[b], count[a] += 1;
            }
        for (std::size_t v = 0; v < n; ++v)
            u[v] = 0.5 * u[v] + 0.5 * sum[v] / count[v];
        auto y = prema::yield_point();
        if (!y.ready) {
            g_busy.add(since, false);
            co_await y;
            since = clk::now();
        }
    }
    g_busy.add(since, false);
}

// Whether side `side` of subdomain i starts again from its end points in step `step`.
bool side_resets(int i, int side, int step) {
    const moving_front& f = g_context.front;
    int j = g_context.d->neighbour(i, side);
    return step > 0 && !f.inside(i, step) && (j < 0 || !f.inside(j, step)) &&
           (f.inside(i, step - 1) || (j >= 0 && f.inside(j, step - 1)));
}

} // namespace

prema::task<> refine(subdomain& s) {
    int step = g_context.step;
    std::array<bool, 4> reset{};
    for (int side = 0; side < 4; ++side)
        reset[std::size_t(side)] = side_resets(s.index, side, step);
    if (std::find(reset.begin(), reset.end(), true) != reset.end()) {
        vertex_set sides{s.live ? s.live->vertices().sides : s.saved.sides, {}};
        for (int side = 0; side < 4; ++side)
            if (reset[std::size_t(side)])
                sides.sides[std::size_t(side)].clear();
        for (side_point p : s.early)
            if (reset[std::size_t(p.side)])
                sides.sides[std::size_t(p.side)].push_back(p.along);
        for (auto& v : sides.sides)
            std::sort(v.begin(), v.end());
        s.live.reset();
        s.saved = std::move(sides);
    }
    s.early.clear();
    s.cap = g_context.cap[std::size_t(s.index)];
    s.refined_step = step;
    triangulation(s).set_cap(s.cap);
    co_await refine_to_quality(s, 0);
    co_await relax(s);
}

prema::task<> split(subdomain& s, int side, double along, int depth, int step) {
    ++s.splits_received;
    if (step > s.refined_step)
        s.early.push_back({side, along});
    s.pending.push_back({{side, along}, depth});
    if (s.pending.size() == 1)
        co_await prema::send(g_context.names[std::size_t(s.index)], prema::fn<&resume>);
}

prema::task<> resume(subdomain& s) {
    refinement& r = triangulation(s);
    int depth = -1;
    for (const pending_split& p : s.pending)
        if (r.insert_on_side(p.at)) {
            ++s.splits_inserted;
            depth = std::max(depth, p.depth);
        }
    s.pending.clear();
    if (depth < 0)
        co_return; // the neighbour split where this side had split already
    s.max_depth = std::max(s.max_depth, depth);
    if (s.refined_step < g_context.step)
        co_return; // this step's refine() is still to come and refines it all (from a mesh that
                   // its rebuild may reset: refining now could send splits it then drops)
    co_await refine_to_quality(s, depth);
}

summary summarize(subdomain& s) {
    refinement& r = triangulation(s);
    return {prema::rank(),
            s.refined_by,
            s.steiner,
            s.splits_sent,
            s.splits_received,
            s.splits_inserted,
            s.max_depth,
            s.rebuilds,
            s.rebuild_s,
            r.vertices().sides,
            assess(r.mesh(), g_context.min_angle)};
}

triangle_mesh mesh_of(subdomain& s) {
    return triangulation(s).mesh();
}

} // namespace mesh_refinement
