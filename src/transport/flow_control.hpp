// flow_control: back-pressure on senders, so that a rank that floods another keeps both
// ranks' memory bounded.
//
// Two amounts are watched: the bytes this rank has queued for the network (posted, and not
// yet handed over by MPI), and per destination the bytes sent but not acknowledged.
// Acknowledgement costs no message of its own: once a destination has
// sync_interval() bytes unacknowledged, the next message to it goes as MPI_Issend, whose
// completion says that the receiver matched it and, MPI being non-overtaking, everything sent
// before it on the same tag. The receiver matches only while it keeps up (the progress engine
// stops taking headers while too many received messages wait to run), so a slow receiver
// holds back its senders instead of growing MPI's unexpected-message queue.
//
// When either amount passes --prema-max-outstanding-bytes, `co_await prema::send(...)`
// suspends the sending coroutine (the worker goes on with other work, incoming messages
// included) until the MPI thread sees both below the limit again. Runtime traffic (replies,
// forwards, control messages) never waits: the limit bounds what applications flood.
//
// Threads: queued() and hold() from any thread; the rest on the thread that drives MPI.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace prema::detail {

class flow_control {
  public:
    flow_control(int ranks, std::size_t max_outstanding);

    // A counted message of `bytes` to another rank was posted.
    void queued(std::size_t bytes) noexcept;
    // MPI has the bytes of a posted message (its local send completed).
    void handed_over(std::size_t bytes) noexcept;

    // A message of `bytes` to `dest` starts now. True: send it with MPI_Issend, and call
    // acknowledged(dest, covered) when it completes.
    bool start(int dest, std::size_t bytes, std::size_t& covered) noexcept;
    // True if `dest` still has a sync_interval() unacknowledged: no send may come to cover
    // it (its senders may all be held), so an empty MPI_Issend must (probe()).
    bool acknowledged(int dest, std::size_t covered) noexcept;
    // The bytes an empty MPI_Issend to `dest`, started now, acknowledges.
    std::size_t probe(int dest) noexcept;

    // Whether senders must wait (cheap: read on every co_await send).
    bool over() const noexcept { return over_.load(std::memory_order_relaxed); }
    const std::atomic<bool>* over_flag() const noexcept { return &over_; }

    // Suspends `h` until the amounts drop below the limit; false (not suspended) if they
    // already have.
    bool hold(std::coroutine_handle<> h);
    // Coroutines held, counted as work by quiescence detection.
    std::size_t held() const noexcept { return held_count_.load(std::memory_order_acquire); }
    // The held coroutines to resume, once the amounts are below the limit.
    std::vector<std::coroutine_handle<>> release_if_under();

    std::size_t sync_interval() const noexcept { return sync_interval_; }

  private:
    void update() noexcept;

    std::size_t max_;
    std::size_t sync_interval_;
    std::atomic<std::int64_t> queued_{0};
    std::vector<std::size_t> unacked_; // by destination; MPI thread
    std::vector<bool> sync_pending_;   // by destination; MPI thread
    std::atomic<int> dests_over_{0};   // destinations with more than max_ unacknowledged
    std::atomic<bool> over_{false};

    std::mutex held_mutex_;
    std::vector<std::coroutine_handle<>> held_;
    std::atomic<std::size_t> held_count_{0};
};

} // namespace prema::detail
