// Progress lines on stderr for long runs: "label: 40/100 (40%), 3.1 s". Call report() as often
// as convenient; it prints at most once per `every_s` seconds and never in the first `every_s`
// seconds, so short runs stay silent. Used on one rank (rank 0), on one thread at a time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

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

// The same kind of line for a stretch where the calling thread is blocked (in
// prema::runtime::run, say): while a ticker lives, a thread of its own prints
// "label: <status()>, 3.1 s" every `every_s` seconds. `status` runs on that thread. The
// destructor stops and joins it.
class ticker {
  public:
    ticker(bool on, std::string label, std::function<std::string()> status, double every_s = 2.0);
    ~ticker();
    ticker(const ticker&) = delete;
    ticker& operator=(const ticker&) = delete;

  private:
    void loop();

    std::string label_;
    std::function<std::string()> status_;
    std::chrono::duration<double> every_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace example
