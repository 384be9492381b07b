#include "progress.hpp"

#include <cstdio>

namespace example {

progress::progress(std::string label, double every_s) : label_(std::move(label)), every_(every_s) {}

void progress::report(long done, long total) {
    auto now = clock::now();
    if (now - last_ < every_)
        return;
    last_ = now;
    std::fprintf(stderr, "%s: %ld/%ld (%.0f%%), %.1f s\n", label_.c_str(), done, total,
                 total > 0 ? 100.0 * double(done) / double(total) : 100.0,
                 std::chrono::duration<double>(now - start_).count());
}

ticker::ticker(bool on, std::string label, std::function<std::string()> status, double every_s)
    : label_(std::move(label)), status_(std::move(status)), every_(every_s) {
    if (on)
        thread_ = std::thread([this] { loop(); });
}

ticker::~ticker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

void ticker::loop() {
    auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, every_, [this] { return stop_; }))
        std::fprintf(
            stderr, "%s: %s, %.1f s\n", label_.c_str(), status_().c_str(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

} // namespace example
