// Failures: every layer reports one through report_error, which logs it with the rank and tells
// the error hook (the transport counts failures against the phase, so that run() returns 1).
#pragma once

#include <string>

namespace prema::detail {

// Logs `what` at error level, then calls the error hook. Any thread.
void report_error(const std::string& what) noexcept;

// Called by report_error after it logged; nullptr for none. Installed by whoever counts
// failures (the transport's state, while it exists). Must be callable from any thread.
using error_hook = void (*)() noexcept;
void set_error_hook(error_hook hook) noexcept;

// Readable name of a mangled type name (the name itself if it does not demangle).
std::string demangle(const char* mangled);

// Demangled type of the exception being handled (inside a catch block).
std::string current_exception_type();

} // namespace prema::detail
