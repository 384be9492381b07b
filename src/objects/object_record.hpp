// object_record: a mobile object on the rank where it lives, with the state that moves with it.
//
// Messages enter through deliver(): the per-origin sequence check holds early messages and
// drops duplicates, in-order ones join `ready`. Entries leave `ready` from the front only, so
// handlers start in order; an exclusive one starts when nothing runs, shared ones start
// together. Migration and destruction are entries too, so they happen in order with handlers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "prema/objects/objects.hpp"
#include "prema/transport/byte_vector.hpp"

namespace prema::detail {

struct object_entry {
    object_header header;
    std::uint64_t token = 0; // a call awaiting a reply
    byte_vector payload;     // the arguments, after the header
    bulk_buffer bulk;        // the message's bulk argument, if it has one
};

struct object_record : std::enable_shared_from_this<object_record> {
    object_id id;
    void* object = nullptr;
    const object_type* type = nullptr;
    std::uint64_t moves = 0; // migrations so far: orders directory updates

    std::mutex mutex;                                         // guards everything below
    std::unordered_map<std::int32_t, std::uint64_t> expected; // origin -> next sequence number
    std::map<std::pair<std::int32_t, std::uint64_t>, object_entry> early;
    std::deque<object_entry> ready;
    int shared_running = 0;         // access granted: started handlers, guards, and handlers
    bool exclusive_running = false; // handed to the scheduler but not started yet
    int started = 0;                // handlers running (or suspended) now: pin the object
    std::vector<struct pending_handler*> handed; // in order; withdrawn if the object moves
    double weight = 1;                           // load of one pending handler (T::load(), else 1)
    int gone_to = -1; // >= 0: shipped to that rank; -2: destroyed. Late entries are rerouted.
};

using record_ptr = std::shared_ptr<object_record>;

} // namespace prema::detail
