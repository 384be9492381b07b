// aggregator: packs small messages to the same rank into one MPI message.
//
// Each worker thread owns a batch_set: at most one open batch (a pooled message, see
// message.hpp) per destination rank. prema::send and the runtime's own replies serialize
// straight into the open batch, so a message costs a few stores, not a pooled buffer and an MPI
// send. A batch opens in the pool's smallest buffer and moves to one 4x larger as it fills, up
// to the batch size, so an open batch holds memory in proportion to what it carries, and a
// destination with no open batch holds none: a worker that has written to P ranks holds their
// messages' bytes, not P batch-sized buffers (a batch's few growth copies cost less than one
// MPI message; opening a lane's next batch at the size its last one left with cut a 16-byte
// send from 124 to 102 instructions but lowered the object message rate by about 13% in 13
// alternating pairs of jobs, 2026-11-28, so batches still start small). The lanes themselves
// (32 bytes each) are made lane_chunk destinations at a time, when the worker first writes to
// one of them: at 10,000 ranks a worker that talks to a tree's three peers holds a few
// chunks, not 10,000 lanes. A batch
// leaves (progress_engine::post) when it is full, when a message of prompt_bytes or more
// joins it (outbox.hpp; heat2d's 4 KiB edge rows waited for the sender's next compute step
// before that rule: +16% wall time on 2 ranks against +2% unbatched), when its worker finds
// nothing else to do, when the progress engine finds it open for --prema-aggregate-us (the worker
// flushes at its next message or between items), and before the message that would overtake it: a
// direct (unbatched) message from the same worker to the same rank.
//
// A handler that is its rank's only work (the last message of what arrived, and nothing else
// queued or running: only_work_here) sends its first message on its own, at once: nothing
// could join that batch before the handler ends and its worker goes idle, and the wait for
// that and the batch's framing on both sides cost an 8-byte ping-pong 0.05 us a hop (0.265 ->
// 0.215 us, against 0.16 us for raw MPI). Its later messages batch as usual, so a handler
// that sends many pays one extra MPI message at most.
//
// Quiescence: a batch counts as sent when it leaves, with the number of messages it holds;
// while any batch is open, some batch_set's open_count() is nonzero and the rank is not idle,
// so no termination wave can start with messages still in a buffer.
//
// Threads: everything but request_flush_if_open_for() runs on the owning worker only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "prema/detail/transport/message.hpp"
#include "prema/detail/transport/outbox.hpp"

namespace prema::detail {

class message_pool;
class progress_engine;

// Below this batch size (--prema-aggregate-bytes, capped by --prema-eager-bytes) aggregation
// is off: a batch would not hold two messages.
inline constexpr std::size_t min_batch_bytes = 128;

class batch_set {
  public:
    // `capacity`: payload bytes of a batch (at most the pool's eager size).
    batch_set(message_pool& pool, progress_engine& engine, int ranks, int rank,
              std::size_t capacity);
    ~batch_set();
    batch_set(const batch_set&) = delete;
    batch_set& operator=(const batch_set&) = delete;

    // The room for the payload of the next message to `dest` in its open batch (opened if
    // needed): at least batch_min_room bytes.
    std::byte* begin(int dest, std::size_t& room);
    // Where an item of `bytes` of payload goes in dest's open batch (opened if needed), whose
    // buffer grows to hold it; nullptr if the batch cannot take it.
    std::byte* room_for(int dest, std::size_t bytes);

    // The message begun at begin(dest) has `bytes` of payload: it joins the batch.
    void commit(int dest, std::uint64_t handler, std::uint64_t token, std::size_t bytes);
    // After an item of `bytes` joined dest's batch (here or inline in post_new): notes it
    // when observing, flushes when prompt or full.
    void committed(int dest, std::uint64_t handler, std::size_t bytes);

    // The lane chunks by destination / lane_chunk, for the inline path of post_new
    // (worker_outbox); the table stays put, a chunk appears at its first batch.
    batch_lane* const* lanes() const noexcept { return chunks_.data(); }
    // Heap bytes the lanes take: the chunk table and the chunks made so far.
    std::size_t lane_bytes() const noexcept;
    const std::atomic<bool>* flush_requested() const noexcept { return &flush_requested_; }

    // The most a message's payload can have to fit in an empty batch.
    std::size_t max_payload() const noexcept {
        return capacity_ - sizeof(batch_prefix) - sizeof(batch_item);
    }

    bool open(int dest) const noexcept {
        const batch_lane* lane = find_lane(chunks_.data(), dest);
        return lane && lane->msg != nullptr;
    }
    // Batches open now. Any thread; a batch that leaves was counted as sent (post) before it
    // stops counting here, so a reader never sees neither.
    int open_count() const noexcept { return open_count_.load(std::memory_order_acquire); }
    void flush(int dest);
    void flush_all();

    // Owner, between two items: flushes if the progress engine asked for it.
    void flush_if_requested() {
        if (flush_requested_.load(std::memory_order_relaxed))
            flush_all();
    }

    // Progress engine, from its periodic work (one thread at a time): asks the owner to flush
    // if batches have been open for `age` ticks since this was first called with them open.
    // The owner does not read the clock when it opens a batch (rdtsc costs about 9 ns, a tenth
    // of a small message's path), so a batch's age counts from the first look that saw it.
    void request_flush_if_open_for(std::uint64_t now, std::uint64_t age) noexcept {
        auto stretch = open_stretch_.load(std::memory_order_relaxed);
        if (open_count() == 0)
            return;
        if (stretch != seen_stretch_) {
            seen_stretch_ = stretch;
            seen_since_ = now;
        } else if (now - seen_since_ >= age) {
            flush_requested_.store(true, std::memory_order_relaxed);
        }
    }

  private:
    // dest's lane, which exists once dest's first batch has started.
    batch_lane& lane(int dest) noexcept { return *find_lane(chunks_.data(), dest); }
    void start(int dest, batch_lane& b);
    // Moves `b` to a buffer with room for at least `payload` bytes (at most the batch size).
    void grow(batch_lane& b, std::size_t payload);

    message_pool& pool_;
    progress_engine& engine_;
    int rank_;
    std::size_t capacity_;
    // dirty_.size(), for other threads: written by the owner alone, so a store, not an add.
    std::atomic<int> open_count_{0};
    // By destination / lane_chunk: a chunk of lanes, or null until the first batch to one of its
    // ranks (owned: deleted with the set). Never resized, so lanes() stays valid.
    std::vector<batch_lane*> chunks_;
    std::vector<int> dirty_; // destinations with an open batch
    // Stretches of time with a batch open, counted by the owner as they begin.
    std::atomic<std::uint64_t> open_stretch_{0};
    std::atomic<bool> flush_requested_{false};
    // The progress engine's: the stretch it last saw and when it first saw it.
    std::uint64_t seen_stretch_ = 0, seen_since_ = 0;
};

} // namespace prema::detail
