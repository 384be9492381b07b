#include "lb/demand.hpp"

#include <algorithm>

namespace prema::detail {

void demand::asked(int rank, int want, clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto a = std::find_if(asks_.begin(), asks_.end(), [&](const ask& x) { return x.rank == rank; });
    if (a == asks_.end())
        asks_.push_back({rank, std::max(want, 1), now + lifetime_});
    else
        *a = {rank, std::max(want, 1), now + lifetime_};
    count_.store(int(asks_.size()), std::memory_order_release);
}

void demand::fed(int rank) {
    if (count_.load(std::memory_order_acquire) == 0)
        return;
    std::lock_guard lock(mutex_);
    std::erase_if(asks_, [&](const ask& x) { return x.rank == rank; });
    count_.store(int(asks_.size()), std::memory_order_release);
}

void demand::expire(clock::time_point now) {
    std::erase_if(asks_, [&](const ask& x) { return x.until <= now || x.want <= 0; });
    count_.store(int(asks_.size()), std::memory_order_release);
}

int demand::waiting(clock::time_point now) {
    if (count_.load(std::memory_order_acquire) == 0)
        return 0;
    std::lock_guard lock(mutex_);
    expire(now);
    return int(asks_.size());
}

int demand::claim(clock::time_point now) {
    if (count_.load(std::memory_order_acquire) == 0)
        return -1;
    std::lock_guard lock(mutex_);
    expire(now);
    if (asks_.empty())
        return -1;
    auto& a = asks_[next_++ % asks_.size()];
    const int rank = a.rank;
    if (--a.want == 0)
        expire(now);
    return rank;
}

} // namespace prema::detail
