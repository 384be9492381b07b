// The named trees of the UTS release (its sample_trees.sh) with their published sizes, and small
// ones for tests. A run fails unless it counts exactly these sizes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "tree.hpp"

namespace uts {

struct sample_tree {
    const char* name;
    tree_params params;
    tally expected;   // nodes, leaves, depth
    const char* note; // where `expected` comes from
};

std::span<const sample_tree> sample_trees();

// The tree called `name` (T1, T3L, ...); throws prema::usage_error listing the names if none is.
const sample_tree& find_sample_tree(const std::string& name);

} // namespace uts
