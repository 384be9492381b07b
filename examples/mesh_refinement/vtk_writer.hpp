// Writes subdomain meshes as one legacy-ASCII VTK unstructured grid (ParaView opens it), with
// integer cell fields: the subdomain of each triangle and, per named field, a value per
// subdomain (for example the rank that refined it in each run).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "domain.hpp"
#include "refinement.hpp"

namespace mesh_refinement {

struct subdomain_field {
    std::string name;
    std::vector<int> value; // per subdomain
};

// meshes[i] is subdomain i's mesh. Throws std::runtime_error naming the file if it cannot be
// written.
void write_vtk(const std::string& path, const std::vector<triangle_mesh>& meshes,
               const std::vector<subdomain_field>& fields);

// Writes one line per shared side, "x0 y0 x1 y1 splits": the split messages sent across it
// both ways (splits[i][s]: sent by subdomain i across its side s). plot_mesh.py reads it.
void write_side_splits(const std::string& path, const domain& d,
                       const std::vector<std::array<std::uint64_t, 4>>& splits);

} // namespace mesh_refinement
