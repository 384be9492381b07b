// Progress lines on stderr for long runs: "label: 40/100 (40%), 3.1 s". Call report() as often
// as convenient; it prints at most once per `every_s` seconds and never in the first `every_s`
// seconds, so short runs stay silent. Used on one rank (rank 0), on one thread at a time.
#pragma once

#include <chrono>
#include <string>

namespace example {

class progress {
  public:
    explicit progress(std::string label, double every_s = 2.0);
    void report(long done, long total);

  private:
    using clock = std::chrono::steady_clock;
    std::string label_;
    std::chrono::duration<double> every_;
    clock::time_point start_ = clock::now(), last_ = start_;
};

} // namespace example
