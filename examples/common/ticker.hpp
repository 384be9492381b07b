// Progress for long runs: while a ticker lives, a thread of its own calls `report(elapsed
// seconds)` every `period` (rank 0 usually prints a line to stderr). The destructor stops and
// joins it; `report` must be safe to call from that thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace apps {

class ticker {
  public:
    using clock = std::chrono::steady_clock;

    ticker(bool on, std::function<void(double)> report,
           std::chrono::milliseconds period = std::chrono::seconds(2))
        : report_(std::move(report)), period_(period) {
        if (on)
            thread_ = std::thread([this] { loop(); });
    }
    ~ticker() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable())
            thread_.join();
    }
    ticker(const ticker&) = delete;
    ticker& operator=(const ticker&) = delete;

  private:
    void loop() {
        auto start = clock::now();
        std::unique_lock lock(mutex_);
        while (!wake_.wait_for(lock, period_, [this] { return stop_; }))
            report_(std::chrono::duration<double>(clock::now() - start).count());
    }

    std::function<void(double)> report_;
    std::chrono::milliseconds period_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace apps
