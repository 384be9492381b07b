// flow_control: back-pressure on senders and receiver-granted credits, so that a rank that
// floods another, or many ranks that flood one, keep every rank's memory bounded
// (docs/design/flow-control.md).
//
// Sender side: the bytes this rank holds for the network (posted, and not yet handed over by
// MPI, including messages that wait for credit). When they pass --prema-max-outstanding-bytes,
// `co_await prema::send(...)` suspends the sending coroutine (the worker goes on with other
// work, incoming messages included) until the MPI thread sees them below the limit again.
// Runtime traffic (replies, forwards, control messages) never waits there.
//
// Credits: a counted message leaves for another rank only within the credit that rank granted
// this one; one that does not fit waits, in order, on its sender, which asks for more (an
// uncounted control message, at most one outstanding per destination). A message costs what
// MPI may hold for its header message before the receiver matches it (cost()); a split-phase
// payload is received into memory the receiver chooses once it has matched the header, so it
// costs nothing here. Every sender starts with a base window
// that the receiver renews, unasked, as it matches the sender's messages; the rest of the
// receiver's budget is granted on request, to the senders that ask, each at most an equal
// share among those holding some, and never beyond the waiting messages' cost. One request at
// a time may go past the shared budget by what its first message needs, so that a sender
// always gets through (a message larger than the budget, or a budget held by senders that
// each kept less than a message of their grant). So a receiver's unmatched messages never
// exceed ranks x base + shared + one message, however many ranks send to it. The budgets
// follow from --prema-max-outstanding-bytes B and the job size P:
// base = min(max(B / 2P, 4 KiB), B / 2), shared = max(B - P x base, B / 2).
//
// Threads: queued(), hold() and the flags from any thread; the rest on the thread that drives
// MPI.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace prema::detail {

struct message;

class flow_control {
  public:
    // What a message of `wire_bytes` (its header message's bytes) may cost the receiver while
    // it waits unmatched inside MPI. Measured with Open MPI 4.1 (ob1, shared memory and TCP):
    // about 900 bytes for a message of up to 128 bytes, and beyond that its bytes again,
    // rounded up to a power of two by the allocator that holds them (1,000 bytes: 2,980 in
    // all). Charging the wire bytes alone let a flood of small messages hold 3x the bound.
    static constexpr std::uint64_t cost(std::uint64_t wire_bytes) noexcept {
        return unmatched_overhead + (wire_bytes <= 128 ? wire_bytes : 2 * wire_bytes);
    }
    static constexpr std::uint64_t unmatched_overhead = 1024;

    // `max_outstanding`: 0 is no limit (and no credits). `max_cost`: the cost of the largest
    // message.
    flow_control(int ranks, std::size_t max_outstanding, std::uint64_t max_cost);

    // --- this rank's own queue -------------------------------------------------------------
    // A counted message of `bytes` to another rank was posted.
    void queued(std::size_t bytes) noexcept;
    // MPI has the bytes of a posted message (its local send completed).
    void handed_over(std::size_t bytes) noexcept;

    // Whether senders must wait (cheap: read on every co_await send).
    bool over() const noexcept { return over_.load(std::memory_order_relaxed); }
    const std::atomic<bool>* over_flag() const noexcept { return &over_; }

    // Suspends `h` until the amount drops below the limit; false (not suspended) if it
    // already has.
    bool hold(std::coroutine_handle<> h);
    // Coroutines held, counted as work by quiescence detection.
    std::size_t held() const noexcept { return held_count_.load(std::memory_order_acquire); }
    // The held coroutines to resume, once the amount is below the limit.
    std::vector<std::coroutine_handle<>> release_if_under();

    // --- credits, as a sender ----------------------------------------------------------------
    // Charges a message of `cost` to `dest` if it fits the credit and nothing waits before it;
    // false: it must wait (wait()).
    bool take(int dest, std::uint64_t cost) noexcept {
        auto& o = lanes(dest).out;
        if (o.head || o.sent + cost > o.limit) [[unlikely]]
            return false;
        o.sent += cost;
        return true;
    }
    // `m` (costing `cost`) waits for credit to `m->peer`, behind those that already do. True if
    // a request for credit must go now: request() says what it asks.
    bool wait(message* m, std::uint64_t cost) noexcept;
    struct request_body {
        std::uint64_t sent; // bytes charged so far to the destination
        std::uint64_t need; // the waiting head's cost
        std::uint64_t want; // every waiting message's cost
    };
    request_body request(int dest) noexcept;
    // `dest` granted credit up to `limit` (cumulative): the messages that now fit, in order,
    // each charged (the caller sends them), and whether to ask again for the rest.
    bool granted(int dest, std::uint64_t limit, std::vector<message*>& ready) noexcept;
    // Messages waiting for credit (destructor: the caller gives them back).
    std::vector<message*> take_waiting() noexcept;

    // --- credits, as a receiver ----------------------------------------------------------------
    // A message charged by `source` and costing `cost` was matched: renews its base window
    // (grant_ready()) when it runs low.
    void matched(int source, std::uint64_t cost) noexcept;
    // `source` asks for credit: grants what fits the budget (grant_ready()), or queues the
    // request. nullptr if the request is sound; else what is wrong with it.
    const char* asked(int source, const request_body& r) noexcept;
    // Serves queued requests as far as the budget allows (after matches freed some).
    void serve_waiting() noexcept {
        if (!waiting_.empty())
            serve_queue();
    }
    // The sources to send a grant now, each with its cumulative limit; clears the list.
    template <class Send> void send_grants(Send&& send) {
        for (int source : grant_ready_) {
            auto& r = lanes(source).in;
            r.grant_due = false;
            send(source, r.granted);
        }
        grant_ready_.clear();
    }
    bool grants_due() const noexcept { return !grant_ready_.empty(); }

    // Tests (any thread): the most bytes of credit granted to other ranks and not matched here
    // at any time since the runtime started, and the bound it stays under.
    std::uint64_t peak_exposure() const noexcept {
        return peak_exposure_.load(std::memory_order_relaxed);
    }
    std::uint64_t exposure_bound() const noexcept {
        return base_ * slot_.size() + shared_ + max_cost_;
    }
    std::uint64_t base_window() const noexcept { return base_; }
    // Tests, on the thread that drives MPI: bytes charged so far to `dest`, and matched so far
    // from every sender.
    std::uint64_t charged(int dest) const noexcept {
        auto k = slot_[std::size_t(dest)];
        return k ? peers_[k - 1].out.sent : 0;
    }
    std::uint64_t matched_total() const noexcept;

  private:
    void update() noexcept;
    std::uint64_t excess(std::uint64_t outstanding) const noexcept {
        return outstanding > base_ ? outstanding - base_ : 0;
    }
    // Sets `source`'s cumulative grant to `limit`, keeping the shared count.
    void grant(int source, std::uint64_t limit) noexcept;
    bool try_serve(int source) noexcept;
    void serve_queue() noexcept;

    std::size_t max_;
    std::atomic<std::int64_t> queued_{0};
    std::atomic<bool> over_{false};

    std::mutex held_mutex_;
    std::vector<std::coroutine_handle<>> held_;
    std::atomic<std::size_t> held_count_{0};

    bool credits_; // false: no limit
    std::uint64_t max_cost_;
    std::uint64_t base_ = 0;    // every sender's window, renewed unasked
    std::uint64_t shared_ = 0;  // granted on request on top of the base windows
    std::uint64_t lent_ = 0;    // of shared_, granted and not matched yet
    std::uint64_t holders_ = 0; // sources holding some of shared_

    struct out_lane { // to one destination
        std::uint64_t sent = 0, limit = 0;
        std::uint64_t waiting_cost = 0;
        message *head = nullptr, *tail = nullptr; // waiting for credit, linked by message::next
        bool asked = false;
    };
    struct in_lane { // from one source
        std::uint64_t granted = 0, consumed = 0;
        request_body want{};
        bool waiting = false;   // in waiting_
        bool grant_due = false; // in grant_ready_
    };
    // Both lanes of a rank this one has exchanged counted messages or credit with. A rank
    // never exchanged with costs its slot alone (4 bytes): its lanes would hold nothing but the
    // base window, which a new lane starts with. So the memory grows with the ranks a rank
    // talks to, not with the job (issue 27: about 100 bytes per rank of the job before).
    struct peer {
        out_lane out;
        in_lane in;
    };
    // The lanes of `rank`, made on first use. The reference lasts until the next new lane.
    peer& lanes(int rank) noexcept {
        auto k = slot_[std::size_t(rank)];
        if (!k) [[unlikely]]
            return add_peer(rank);
        return peers_[k - 1];
    }
    peer& add_peer(int rank) noexcept;
    std::vector<std::uint32_t> slot_; // by rank: 1 + index in peers_; 0: none yet
    std::vector<peer> peers_;
    std::deque<int> waiting_; // sources whose request the budget could not serve yet
    std::vector<int> grant_ready_;
    std::uint64_t exposure_ = 0; // granted and not matched, over all sources
    std::atomic<std::uint64_t> peak_exposure_{0};
};

} // namespace prema::detail
