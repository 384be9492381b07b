/// @file
/// prema::lb::ready_handler and prema::lb::object_load: what the object layer hands a
/// load-balancing scheduler (prema/lb/scheduler.hpp). They belong to the object layer, which
/// makes them, so that it needs nothing of the balancing layer above it; policies read them.
#pragma once

#include "prema/objects/mobile_ptr.hpp"

namespace prema::lb {

/// A handler ready to run on an object; opaque to policies except for what it runs on.
class ready_handler {
  public:
    /// The object the handler runs on.
    object_id object() const noexcept { return object_; }
    /// What the handler weighs (as --prema-lb-load weighs pending handlers).
    double load() const noexcept { return load_; }

  protected:
    /// Made by the runtime only: a policy receives ready handlers, never creates them.
    ready_handler(object_id o, double load) noexcept : object_(o), load_(load) {}
    ~ready_handler() = default;

  private:
    object_id object_;
    double load_;
};

/// A local object with pending (not started) work, for policy decisions.
struct object_load {
    object_id object; ///< the object, on this rank
    double load;      ///< sum of its pending handlers' loads, as --prema-lb-load weighs them
    int pending;      ///< how many handlers have not started
    /// Seconds its pending handlers would take by the busy time its handlers took so far
    /// (exponentially averaged, kept across migrations); 0 while none was measured.
    double measured = 0;
};

} // namespace prema::lb
