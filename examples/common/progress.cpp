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

} // namespace example
