// A subdomain as a mobile object, and the handlers that refine it coupled to its neighbours.
//
// refine() meshes the subdomain with the current size cap; whenever refinement puts a vertex
// on a side it shares with a neighbour (it split that side because a triangle encroached on
// it), it sends the neighbour split(side, point) with the point's exact coordinate. The
// neighbour inserts that point as a constrained vertex (unless it has it already) and refines
// again what that changed, which may split its other sides in turn: a cascade, whose depth
// each split carries. Splits that arrive while one is being handled are batched: the first
// one queues a resume() to the object itself, which runs after the others have been queued.
// Nothing waits for anything; the run ends at quiescence, when no split is in flight, and the
// sides are then conforming by construction (each holds the union of both neighbours' splits).
//
// The CGAL triangulation lives beside the object, not in its serialized form: migrating sends
// the vertices only (vertex_set) and the next handler on the new rank rebuilds the
// triangulation from them.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <prema/prema.hpp>

#include "adaptivity.hpp"
#include "domain.hpp"
#include "mesh_quality.hpp"
#include "refinement.hpp"

namespace mesh_refinement {

struct subdomain;

// What the handlers read: set before a runtime's run starts, read-only while it runs.
struct refinement_context {
    const domain* d = nullptr;
    double min_angle = 20.7;
    int steps = 32;                 // Steiner points between yield points
    int step = 0;                   // 0: the first refinement; then the adaptive steps
    int solve_sweeps = 0;           // multi-step: relaxation sweeps over the mesh per step
    moving_front front{1, 0, 1, 1}; // where the elements must be finer, step by step
    std::vector<double> cap;        // size cap per subdomain, this step
    std::vector<double> estimate;   // load() per subdomain, this step
    std::vector<prema::mobile_ptr<subdomain>> names;
};
extern refinement_context g_context;

// Handler time per worker thread of this rank, and refinements finished here.
struct busy_clock {
    using clk = std::chrono::steady_clock;
    std::mutex mutex;
    std::map<std::thread::id, double> seconds;
    int refined = 0;

    void add(clk::time_point since, bool finished);
    int done();
    void clear();
};
extern busy_clock g_busy;

// A split received and not inserted yet.
struct pending_split {
    side_point at;
    int depth = 0;
    template <class Ar> void serialize(Ar& ar) { ar(at, depth); }
};

struct subdomain {
    int index = -1;
    double cap = 1;        // the size cap the mesh was refined to
    int refined_step = -1; // the last step whose refine() ran
    vertex_set saved;      // the vertices while `live` is empty (built or migrated)
    std::vector<pending_split> pending;
    std::vector<side_point> early; // received this step before refine() ran for it
    std::array<std::uint64_t, 4> splits_sent{};
    std::uint64_t splits_received = 0, splits_inserted = 0;
    int max_depth = 0;         // of the splits this subdomain inserted
    int refined_by = -1;       // the rank that last refined it
    std::uint64_t steiner = 0; // points the mesher inserted, over every rebuild
    int rebuilds = 0;          // of the triangulation from its vertices, after migrating
    double rebuild_s = 0;
    std::unique_ptr<refinement> live; // not serialized

    // The refinement ahead, until refine() has run for this step. After it, a pending split
    // costs a scan of the mesh and a little refinement, while moving the subdomain for it
    // costs a rebuild of the whole triangulation; it weighs nothing, so that the balancers
    // that go by weight move unrefined subdomains, not refined ones (work stealing takes
    // whatever is pending).
    double load() const {
        return refined_step == g_context.step ? 0.0 : g_context.estimate[std::size_t(index)];
    }

    template <class Ar> void save(Ar& ar) const {
        ar(index, cap, refined_step, live ? live->vertices() : saved, pending, early, splits_sent,
           splits_received, splits_inserted, max_depth, refined_by, steiner, rebuilds, rebuild_s);
    }
    template <class Ar> void load(Ar& ar) {
        ar(index, cap, refined_step, saved, pending, early, splits_sent, splits_received,
           splits_inserted, max_depth, refined_by, steiner, rebuilds, rebuild_s);
    }
};

// Refines to g_context.cap[index], then runs the step's relaxation sweeps. In an adaptive
// step, a subdomain the front has just left, or whose neighbour it has just left, is rebuilt
// from its sides first; a side between two subdomains outside the front loses the vertices
// the front put on it. Both ends of a side decide that alike from the front alone, and keep
// the splits the other sent this step before the rebuild.
prema::task<> refine(subdomain& s);
// From the neighbour across `side`: a vertex it put on the side they share in step `step`.
prema::task<> split(subdomain& s, int side, double along, int depth, int step);
// Inserts the pending splits and refines again (unless this step's refine() is still to come).
prema::task<> resume(subdomain& s);

// What rank 0 collects about each subdomain at the end.
struct summary {
    int owner = -1, refined_by = -1;
    std::uint64_t steiner = 0;
    std::array<std::uint64_t, 4> splits_sent{};
    std::uint64_t splits_received = 0, splits_inserted = 0;
    int max_depth = 0;
    int rebuilds = 0;
    double rebuild_s = 0;
    vertex_set::side_list sides;
    mesh_quality quality;
    template <class Ar> void serialize(Ar& ar) {
        ar(owner, refined_by, steiner, splits_sent, splits_received, splits_inserted, max_depth,
           rebuilds, rebuild_s, sides, quality);
    }
};
summary summarize(subdomain& s);
triangle_mesh mesh_of(subdomain& s);

} // namespace mesh_refinement
