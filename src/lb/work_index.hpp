// work_index: a rank's objects with pending work, ordered heaviest first and kept so as each
// load changes, so that a policy asking for its k heaviest objects pays O(k + log n), not a copy
// and sort of all n (which the MPI thread did for every request before). Not thread-safe: the
// balancer guards it with its lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <set>
#include <unordered_map>
#include <vector>

#include "prema/lb/scheduler.hpp"
#include "prema/objects/mobile_ptr.hpp"

namespace prema::detail {

class work_index {
  public:
    // Records an object's pending load; pending == 0 removes it. O(log n), no allocation for an
    // object already present.
    void update(const lb::object_load& l);

    // The k heaviest objects whose load is at most `at_most`, heaviest first (ties by id).
    std::vector<lb::object_load> heaviest(std::size_t k, double at_most) const;

    std::size_t size() const noexcept { return by_id_.size(); }
    // Summed pending load: kept as loads change (so rounding may leave it off by a few ulps of
    // the largest sum it had, never below 0), exactly 0 when no object has pending work.
    double total() const noexcept { return by_id_.empty() ? 0 : std::max(total_, 0.0); }

  private:
    struct heavier {
        using is_transparent = void;
        bool operator()(const lb::object_load& a, const lb::object_load& b) const {
            return a.load != b.load ? a.load > b.load : a.object < b.object;
        }
        // Against a bare load: the objects heavier than it come first.
        bool operator()(const lb::object_load& a, double load) const { return a.load > load; }
        bool operator()(double load, const lb::object_load& b) const { return load > b.load; }
    };
    using ordered = std::set<lb::object_load, heavier>;

    ordered sorted_;
    std::unordered_map<object_id, ordered::iterator> by_id_;
    double total_ = 0;
};

} // namespace prema::detail
