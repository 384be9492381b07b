// object_record: a mobile object on the rank where it lives, with the state that moves with it.
//
// Messages enter through deliver(): the per-origin sequence check holds early messages and
// drops duplicates, in-order ones join `ready`. Entries leave `ready` from the front only, so
// handlers start in order; an exclusive one starts when nothing runs, shared ones start
// together. Migration and destruction are entries too, so they happen in order with handlers.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "coro/light_mutex.hpp"
#include "objects/measured_load.hpp"
#include "prema/detail/transport/byte_vector.hpp"
#include "prema/objects/objects.hpp"
#include "prema/objects/ready_work.hpp"

namespace prema::detail {

struct object_entry {
    object_header header;
    std::uint64_t token = 0; // a call awaiting a reply
    byte_vector payload;     // the arguments, after the header
    bulk_buffer bulk;        // the message's bulk argument, if it has one
};

// Handlers waiting in every ready_queue of this process: the receive side of back-pressure
// reads it (progress_engine::hooks::backlog), so that a flood of object messages waits in the
// sender's budget instead of the receiver's queues.
std::atomic<std::int64_t>& ready_backlog() noexcept;

// The in-order entries of an object, and how many of them are handlers (what its pending load
// counts), kept as they come and go rather than counted on every look.
class ready_queue {
  public:
    ready_queue() = default;
    ready_queue(const ready_queue&) = delete;
    ready_queue& operator=(const ready_queue&) = delete;
    ~ready_queue() { clear(); }

    void push_back(object_entry e) {
        note(e, 1);
        entries_.push_back(std::move(e));
    }
    void push_front(object_entry e) {
        note(e, 1);
        entries_.push_front(std::move(e));
    }
    object_entry& front() noexcept { return entries_.front(); }
    const object_entry& back() const noexcept { return entries_.back(); }
    void pop_front() noexcept {
        note(entries_.front(), -1);
        entries_.pop_front();
    }
    void clear() noexcept {
        ready_backlog().fetch_sub(handlers_, std::memory_order_relaxed);
        handlers_ = 0;
        entries_.clear();
    }
    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }
    int handlers() const noexcept { return int(handlers_); }
    auto begin() const noexcept { return entries_.begin(); }
    auto end() const noexcept { return entries_.end(); }
    // An entry's arguments may change in place (a move merged into a later one), never its op:
    // the handler count follows the ops.
    auto begin() noexcept { return entries_.begin(); }
    auto end() noexcept { return entries_.end(); }

  private:
    void note(const object_entry& e, int sign) noexcept {
        if (e.header.op == object_op::user) {
            handlers_ += sign;
            ready_backlog().fetch_add(sign, std::memory_order_relaxed);
        }
    }
    std::deque<object_entry> entries_;
    std::int64_t handlers_ = 0;
};

// Where one origin's messages to an object stand: the stream they are numbered in (the epoch at
// which the origin last started from 0, see object_header::stream), the next number in it, and
// the epoch in which the last of them arrived. Forgotten four epochs after that
// (collect_orders): by then the origin's next message starts a new stream.
struct origin_order {
    std::uint64_t stream = 0;
    std::uint64_t next = 0;
    std::uint64_t seen = 0;
};

struct object_record : std::enable_shared_from_this<object_record> {
    object_id id;
    void* object = nullptr;
    const object_type* type = nullptr;
    std::uint64_t moves = 0; // migrations so far: orders directory updates

    light_mutex mutex;                                       // guards everything below
    std::unordered_map<std::int32_t, origin_order> expected; // by origin rank
    std::map<std::pair<std::int32_t, std::uint64_t>, object_entry> early;
    ready_queue ready;
    int shared_running = 0;         // access granted: started handlers, guards, and handlers
    bool exclusive_running = false; // handed to the scheduler but not started yet
    int started = 0;                // handlers running (or suspended) now: pin the object
    std::vector<struct pending_handler*> handed; // in order; withdrawn if the object moves
    double weight = 1;    // declared load of one pending handler (T::load(), else 1)
    load_history history; // busy time of its handlers, when measured
    int gone_to = -1;     // >= 0: shipped to that rank; -2: destroyed. Late entries are rerouted.
    bool refused_balancing = false; // a balancing move failed to pack it (and said so)
    lb::object_load told{};         // what the balancer last heard of the pending load
};

using record_ptr = std::shared_ptr<object_record>;

} // namespace prema::detail
