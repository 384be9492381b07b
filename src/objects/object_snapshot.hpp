// object_snapshot: the object layer's side of checkpoint and restart. A saved object is the
// record a migration ships (decode_install reads it back), so there is one serializer.
#pragma once

#include <cstdint>
#include <vector>

#include "objects/object_record.hpp"
#include "prema/transport/serialization.hpp"

namespace prema::detail {

// The objects living here, in name order. Throws checkpoint_error if one is in use (a handler
// started, a guard held). Call at quiescence.
std::vector<record_ptr> objects_to_save();

// Appends `rec` as a migration ships it.
void pack_object(byte_writer& w, object_record& rec);

// Makes decoded records live here, and tells each object's home rank where it is. The caller
// waits for quiescence before anyone sends to them.
void install_restored(std::vector<record_ptr> records);

// Serial numbers: the highest this rank has issued, and raising it so that names saved in a
// checkpoint are never issued again.
std::uint64_t issued_serial() noexcept;
void reserve_serials(std::uint64_t up_to) noexcept;

// Whether this rank's directory knows any object (a restart must come first in a phase).
bool holds_objects();

} // namespace prema::detail
