// Writes the seed corpus: one file per valid encoding of each fuzz target.
// Usage: make_corpus DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "wire_targets.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    int bad = 0;
    for (auto& [name, bytes] : prema_fuzz::seed_inputs()) {
        if (!prema_fuzz::run_wire_input(bytes.data(), bytes.size())) {
            std::fprintf(stderr, "seed %s is not accepted by its decoder\n", name.c_str());
            bad = 1;
        }
        std::ofstream out(std::string(argv[1]) + "/" + name, std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    }
    return bad;
}
