// The physics of the nbody example, independent of how the work is distributed: the initial
// particles, the direct-sum force on a range of particles, and the energies. Every function
// visits the particles in global index order, so a chunk's result does not depend on the rank
// that computes it: runs on any rank count and under any balancing policy agree bit for bit.
#pragma once

#include <cstdint>
#include <vector>

namespace nbody {

struct problem {
    int particles = 4096;
    int chunks = 64; // slabs of the domain along x; the upper half of them stays empty
    int steps = 20;
    double dt = 1e-3;
    double softening = 0.02; // Plummer softening length
    int seed = 1;
    double mass() const { return 1.0 / particles; }
};

// Positions of every particle, x y z interleaved (3 x particles values).
using positions = std::vector<double>;

// The initial state: positions (all in x < 0.5 of the unit cube, denser towards x = 0) and
// velocities, sorted by slab, and where each chunk's particles start: chunk c holds particles
// [first[c], first[c + 1]).
struct initial_state {
    positions x, v;
    std::vector<int> first;
};
initial_state make_initial(const problem& p);

// Accelerations (3 per particle: acc[3 * (i - begin) + d]) and potentials of particles
// [begin, end) from all `x`, each a sum over all other particles in index order.
void forces(const problem& p, const positions& x, int begin, int end, double* acc,
            double* potential);

// Kinetic + potential energy of a set of particles (the potential counted half, since every
// pair appears twice in the total).
double energy(const problem& p, const std::vector<double>& v, const std::vector<double>& potential);

} // namespace nbody
