#include "base/errors.hpp"

#include <atomic>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>

#include "base/log.hpp"

namespace prema::detail {

namespace {
constinit std::atomic<error_hook> g_hook{nullptr};
} // namespace

void report_error(const std::string& what) noexcept {
    log().error("{}", what);
    if (auto hook = g_hook.load(std::memory_order_acquire))
        hook();
}

void set_error_hook(error_hook hook) noexcept {
    g_hook.store(hook, std::memory_order_release);
}

std::string demangle(const char* mangled) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> s(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
    return status == 0 && s ? std::string(s.get()) : std::string(mangled);
}

std::string current_exception_type() {
    auto* type = abi::__cxa_current_exception_type();
    return type ? demangle(type->name()) : "unknown exception";
}

} // namespace prema::detail
