#include "base/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace prema::detail {

namespace {
std::shared_ptr<spdlog::logger>& logger() {
    static std::shared_ptr<spdlog::logger> l = [] {
        auto s = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
        auto lg = std::make_shared<spdlog::logger>("prema", s);
        lg->set_pattern("[prema] [%l] %v");
        lg->set_level(spdlog::level::warn);
        return lg;
    }();
    return l;
}
} // namespace

spdlog::logger& log() {
    return *logger();
}

void init_log(int rank, const std::string& level) {
    auto& l = logger();
    l->set_pattern("[prema rank " + std::to_string(rank) + "] [%l] %v");
    l->set_level(spdlog::level::from_str(level));
    l->flush_on(spdlog::level::warn);
}

} // namespace prema::detail
