/// @file
/// Exceptions the runtime raises. Every one names what was wrong so that a user can fix it
/// without a debugger: the rank, the handler, the sizes involved.
#pragma once

#include <stdexcept>
#include <string>

namespace prema {

/// Base of all runtime errors.
class error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Bad use of the API detected on the calling rank (a send to a rank that does not exist,
/// a message above the configured maximum, a bad option value).
class usage_error : public error {
  public:
    using error::error;
};

/// A message that cannot be decoded: truncated, garbled, unknown handler.
class wire_error : public error {
  public:
    using error::error;
};

/// A checkpoint that cannot be written, or one that cannot be restarted from: missing,
/// truncated, corrupt (checksum mismatch) or written by an incompatible build. The message names
/// the file and what is wrong.
class checkpoint_error : public error {
  public:
    using error::error;
};

/// An exception thrown by a handler on another rank, rethrown on the caller of prema::call.
/// The original type cannot cross ranks; its type name and what() text do.
class remote_error : public error {
  public:
    /// The error `type` with text `what` that `handler` threw on `rank`.
    remote_error(int rank, std::string handler, std::string type, const std::string& what)
        : error("rank " + std::to_string(rank) + ", handler " + handler + " threw " + type + ": " +
                what),
          rank_(rank), handler_(std::move(handler)), type_(std::move(type)) {}
    /// The rank the handler ran on.
    int rank() const noexcept { return rank_; }
    /// The handler's name.
    const std::string& handler() const noexcept { return handler_; }
    /// The type of the exception it threw.
    const std::string& type() const noexcept { return type_; }

  private:
    int rank_;
    std::string handler_;
    std::string type_;
};

} // namespace prema
