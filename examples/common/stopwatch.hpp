// Wall time and this process's CPU time (all its threads, user + system) since construction.
// CPU time tells a program's own cost apart from time lost to other jobs on a shared machine:
// a rank that waits for a core shows it in wall time only. Safe on any thread.
#pragma once

#include <chrono>

#include <sys/resource.h>
#include <time.h>

namespace example {

class stopwatch {
  public:
    double wall_s() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
    }
    double cpu_s() const { return process_cpu_s() - cpu0_; }

    // CPU time of the calling thread: the cost of a piece of work, whoever else runs.
    static double thread_cpu_s() {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
    }

    static double process_cpu_s() {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    }

  private:
    std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
    double cpu0_ = process_cpu_s();
};

} // namespace example
