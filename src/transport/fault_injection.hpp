// Fault injection for the test suite: puts arbitrary bytes on the wire, where the runtime
// expects a message header, to check that garbage is refused with an error instead of a crash
// or a hang. Private to the library and its tests; not part of the public API.
#pragma once

#include <cstddef>
#include <span>

namespace prema::detail {

// Sends exactly `bytes` (at most sizeof(wire_header) + eager_bytes) to `dest` as if they were
// a message; it counts as sent for quiescence as a real sender would count it. Needs a running
// runtime; throws usage_error otherwise or if `dest` or the size is out of range. A non-empty
// `payload` (which must outlive the send) follows on the payload tag the bytes' header names, as
// the split-phase payload of a real message would. Any thread.
void inject_raw(int dest, std::span<const std::byte> bytes,
                std::span<const std::byte> payload = {});

} // namespace prema::detail
