// demand: the other ranks that asked this rank for work it could not give, and how many objects
// each still wants. The policy notes asks and grants on the MPI thread; the application reads it
// (prema::lb::demand, to split finer only when someone waits) and claims it (spawn_anywhere
// places a new task on a rank that waits) from worker threads. An ask is forgotten once the
// asker got what it wanted or after `lifetime` without a new ask: a thief that was fed by
// someone else stops asking, and nothing tells this rank.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

namespace prema::detail {

class demand {
  public:
    using clock = std::chrono::steady_clock;

    explicit demand(clock::duration lifetime) : lifetime_(lifetime) {}

    // `rank` asked for `want` objects and got none: it waits from now on.
    void asked(int rank, int want, clock::time_point now);
    // `rank` got work from this rank or does not want any more.
    void fed(int rank);

    // How many ranks wait now. O(1) without a lock while none does.
    int waiting(clock::time_point now);
    // A rank that waits, charged with one object (round robin over the waiting ranks), or -1.
    int claim(clock::time_point now);

  private:
    struct ask {
        int rank, want;
        clock::time_point until;
    };
    void expire(clock::time_point now);

    const clock::duration lifetime_;
    std::mutex mutex_;
    std::vector<ask> asks_;     // at most one per rank
    std::atomic<int> count_{0}; // asks_.size(), for the lock-free test
    std::size_t next_ = 0;      // where claim() looks first
};

} // namespace prema::detail
