// What the runtime logs on this rank, captured through an extra spdlog sink so that tests can
// check what it says (link the test with spdlog::spdlog).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "base/log.hpp"

// Records the lines at `least` and above.
class log_capture : public spdlog::sinks::base_sink<std::mutex> {
  public:
    explicit log_capture(spdlog::level::level_enum least) : least_(least) {}

    std::string take() {
        std::lock_guard lock(mutex_);
        std::string all;
        all.swap(text_);
        return all;
    }

  protected:
    void sink_it_(const spdlog::details::log_msg& msg) override {
        if (msg.level >= least_) {
            text_.append(msg.payload.data(), msg.payload.size());
            text_ += '\n';
        }
    }
    void flush_() override {}

  private:
    spdlog::level::level_enum least_;
    std::string text_;
};

// The one capture of this process, installed on first use: before any runtime runs (sinks are
// not guarded against concurrent logging).
inline log_capture& captured_log(spdlog::level::level_enum least) {
    static auto sink = [least] {
        auto s = std::make_shared<log_capture>(least);
        prema::detail::log().sinks().push_back(s);
        return s;
    }();
    return *sink;
}
