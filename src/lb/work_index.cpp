#include "lb/work_index.hpp"

#include <algorithm>

namespace prema::detail {

void work_index::update(const lb::object_load& l) {
    auto it = by_id_.find(l.object);
    if (it == by_id_.end()) {
        if (l.pending > 0) {
            by_id_.emplace(l.object, sorted_.insert(l).first);
            total_ += l.load;
        }
        return;
    }
    total_ -= it->second->load;
    if (l.pending <= 0) {
        sorted_.erase(it->second);
        by_id_.erase(it);
        if (by_id_.empty())
            total_ = 0; // no rounding left over from the additions and removals
        return;
    }
    auto node = sorted_.extract(it->second); // reuses the node: no allocation
    node.value() = l;
    it->second = sorted_.insert(std::move(node)).position;
    total_ += l.load;
}

std::vector<lb::object_load> work_index::heaviest(std::size_t k, double at_most) const {
    std::vector<lb::object_load> out;
    out.reserve(std::min(k, by_id_.size()));
    for (auto it = sorted_.lower_bound(at_most); it != sorted_.end() && out.size() < k; ++it)
        out.push_back(*it);
    return out;
}

} // namespace prema::detail
