// Helpers the multi-rank tests share; they work outside a runtime phase, on MPI_COMM_WORLD.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline int world_size() {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

// Object messages forwarded so far, summed over the ranks.
inline std::uint64_t forwards_everywhere() {
    std::uint64_t mine = prema::detail::forward_count(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

// Objects shipped to other ranks so far (migrations), summed over the ranks.
inline std::uint64_t moves_everywhere() {
    std::uint64_t mine = prema::lb::current_stats().migrations_out, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

// Expectations evaluated inside the entry coroutine (on worker threads), reported by doctest
// on the main thread once run() has returned. `done` proves the entry ran to its end.
struct checker {
    std::vector<std::string> failures;
    bool done = false;
    void operator()(bool ok, const std::string& what) {
        if (!ok)
            failures.push_back(what);
    }
};

inline void report(const checker& c) {
    for (const auto& f : c.failures)
        FAIL_CHECK(f);
    CHECK(c.done);
}
