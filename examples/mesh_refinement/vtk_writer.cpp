#include "vtk_writer.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace mesh_refinement {

void write_vtk(const std::string& path, const std::vector<triangle_mesh>& meshes,
               const std::vector<subdomain_field>& fields) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    if (!f)
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    std::size_t points = 0, triangles = 0;
    for (const auto& m : meshes)
        points += m.xy.size() / 2, triangles += m.size();
    std::FILE* out = f.get();
    std::fprintf(out,
                 "# vtk DataFile Version 3.0\nPREMA mesh_refinement: %zu subdomains\nASCII\n"
                 "DATASET UNSTRUCTURED_GRID\nPOINTS %zu double\n",
                 meshes.size(), points);
    for (const auto& m : meshes)
        for (std::size_t p = 0; p < m.xy.size(); p += 2)
            std::fprintf(out, "%.17g %.17g 0\n", m.xy[p], m.xy[p + 1]);
    std::fprintf(out, "CELLS %zu %zu\n", triangles, 4 * triangles);
    std::size_t base = 0;
    for (const auto& m : meshes) {
        for (std::size_t t = 0; t < m.triangles.size(); t += 3)
            std::fprintf(out, "3 %zu %zu %zu\n", base + std::size_t(m.triangles[t]),
                         base + std::size_t(m.triangles[t + 1]),
                         base + std::size_t(m.triangles[t + 2]));
        base += m.xy.size() / 2;
    }
    std::fprintf(out, "CELL_TYPES %zu\n", triangles);
    for (std::size_t t = 0; t < triangles; ++t)
        std::fputs("5\n", out); // VTK_TRIANGLE
    std::fprintf(out, "CELL_DATA %zu\n", triangles);
    auto write_field = [&](const std::string& name, auto value_of) {
        std::fprintf(out, "SCALARS %s int 1\nLOOKUP_TABLE default\n", name.c_str());
        for (std::size_t i = 0; i < meshes.size(); ++i)
            for (std::size_t t = 0; t < meshes[i].size(); ++t)
                std::fprintf(out, "%d\n", value_of(i));
    };
    write_field("subdomain", [](std::size_t i) { return int(i); });
    for (const auto& field : fields)
        write_field(field.name, [&](std::size_t i) { return field.value.at(i); });
    if (std::fflush(out) != 0 || std::ferror(out))
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

void write_side_splits(const std::string& path, const domain& d,
                       const std::vector<std::array<std::uint64_t, 4>>& splits) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    if (!f)
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    for (int i = 0; i < d.subdomains(); ++i)
        for (int s : {bottom, right}) { // each shared side once
            int across = d.neighbour(i, s);
            if (across < 0)
                continue;
            rect c = d.cell(i);
            double x0 = s == right ? c.x1 : c.x0, y0 = c.y0;
            double x1 = c.x1, y1 = s == right ? c.y1 : c.y0;
            auto n = splits.at(std::size_t(i))[std::size_t(s)] +
                     splits.at(std::size_t(across))[std::size_t(opposite(s))];
            std::fprintf(f.get(), "%.17g %.17g %.17g %.17g %llu\n", x0, y0, x1, y1,
                         (unsigned long long)n);
        }
    if (std::fflush(f.get()) != 0 || std::ferror(f.get()))
        throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

} // namespace mesh_refinement
