// progress_engine: the one place where a rank talks to MPI.
//
// Outgoing: workers post messages into a lock-free queue; poll() starts MPI_Isend for each
// (header, then the payload split-phase on its own tag when it does not fit inline) and
// returns buffers to the pool as sends complete. Incoming: a ring of pre-posted MPI_Irecv for
// headers, all alike, so MPI fills them in posting order and testing the head keeps arrival
// order; a split-phase header makes poll() post the payload receive at once. Complete messages
// go to `deliver`. poll() also runs the termination waves.
//
// poll() runs on one thread at a time: the dedicated progress thread, or an idle worker that won
// try_poll()'s lock (inline mode; and in dedicated mode on cores of its own, a spinning worker,
// while the progress thread stays off MPI: see share_polling).
#pragma once

#include <array>
#include <atomic>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <concurrentqueue.h>
#include <mpi.h>

#include "coro/parker.hpp"
#include "coro/try_mutex.hpp"
#include "coro/worker_count.hpp"
#include "prema/config.hpp"
#include "transport/flow_control.hpp"
#include "transport/message_pool.hpp"
#include "transport/termination.hpp"
#include "transport/tree_sum.hpp"
#include "transport/wire_check.hpp"

namespace prema::detail {

// The options every rank must set alike, in the order config_mismatch reads them: the eager
// sizes, max_message_bytes, lb_load and max_outstanding_bytes. A peer with a larger eager size
// sends headers that overflow this rank's receives (MPI_ERR_TRUNCATE aborts the job), a
// split-phase payload refused for a smaller maximum is never received, so its sender hangs,
// policies that compare loads between ranks would compare unlike units, and a sender and its
// receiver must count credits alike.
inline constexpr std::size_t options_that_must_match = 5;
std::array<std::uint64_t, options_that_must_match> must_match(const config& cfg);
// Empty if the job's least (`lo`) and greatest (`hi`) value of each of must_match() agree,
// else a message that names each option that differs, its range and this rank's value.
std::string config_mismatch(const config& cfg,
                            std::span<const std::uint64_t, options_that_must_match> lo,
                            std::span<const std::uint64_t, options_that_must_match> hi);

// Gives `m`, whose split-phase header has arrived, the buffer its payload is received into:
// for a bulk, the vector its handler will take (see bulk.hpp); else a pooled byte buffer.
void choose_receive_buffer(message& m);

// A count raised mostly by the thread that polls (the poll lock's holder, or the progress
// thread), once per message received or posted by it: that thread adds with a store, not a
// locked add (about 7 ns each on a message's path here), and other threads (loopback messages,
// posts while another thread polls) add to a second count. Read from any thread.
class poller_count {
  public:
    void add_polling(std::uint64_t n) noexcept {
        mine_.store(mine_.load(std::memory_order_relaxed) + n, std::memory_order_release);
    }
    void add_other(std::uint64_t n) noexcept { others_.fetch_add(n, std::memory_order_release); }
    std::uint64_t load() const noexcept {
        return mine_.load(std::memory_order_acquire) + others_.load(std::memory_order_acquire);
    }

  private:
    std::atomic<std::uint64_t> mine_{0}, others_{0};
};

class progress_engine {
  public:
    struct hooks {
        std::function<void(message*)> deliver; // a complete incoming message
        std::function<bool()> idle;            // nothing queued or running on this rank
        std::function<local_counts()> counts;  // waiters and entries for the waves
        std::function<void(wave_result)> decided;
        std::function<void(const std::string&)> error;       // a message was refused
        std::function<void(message*)> urgent;                // run a flag_urgent message here
        std::function<void()> tick;                          // called every poll (load balancing)
        std::function<void(std::coroutine_handle<>)> resume; // a sender that back-pressure held
        // Handlers queued behind received messages, read at every poll (so a counter, not a
        // call). May be null.
        const std::atomic<std::int64_t>* backlog = nullptr;
    };

    progress_engine(MPI_Comm comm, const config& cfg, message_pool& pool, hooks h);
    ~progress_engine();

    int rank() const noexcept { return rank_; }
    int size() const noexcept { return size_; }

    // Queues `m` (header filled) for sending. Any thread. Loopback messages go straight to
    // `deliver`. In inline mode the poster also starts the send if no one else is polling, so
    // that busy workers do not hold messages back.
    void post(message* m);

    // Fault injection for tests: queues a message whose wire bytes are exactly `bytes` (at most
    // the pool's wire_bytes()), sent over MPI even to this rank. It counts as sent as a real
    // sender of these bytes would count it (counted_by_sender), so that the receiver's refusal,
    // which counts it received alike, keeps quiescence exact. Any thread.
    // A non-empty `payload` follows on the tag that the bytes' header names, as a split-phase
    // payload would; it must outlive the send.
    void post_raw(int dest, std::span<const std::byte> bytes,
                  std::span<const std::byte> payload = {});

    // One sweep over everything in flight; true if anything moved. MPI thread only.
    // `one_header`: stop receiving after one header, so that the calling worker runs it now
    // rather than after another test of MPI (inline mode).
    bool poll(bool one_header = false);

    // poll() if no other thread is polling (an idle worker).
    bool try_poll();

    // Dedicated mode on cores of its own, with MPI_THREAD_SERIALIZED or more: spinning workers
    // poll too (try_poll), and while one does the progress thread leaves MPI to it, so that a
    // message for an idle worker is received and run by that worker, and its reply sent by it,
    // with no hand-off between threads. Workers' posts then start their sends themselves when
    // nobody polls. Before run().
    void share_polling();

    // Polls with backoff until `stop` is set (the dedicated progress thread's loop).
    void run(const std::atomic<bool>& stop);

    // Collective, once the last phase is over: receives the uncounted messages still on the
    // wire, and drops them. The destructor drains too.
    void drain_uncounted();

    // Starts a phase: termination waves begin afresh. Collective (MPI thread): waits until every
    // rank has left the previous phase, so that no message of this phase reaches a rank that is
    // still finishing the previous one (it would run, and count its errors, in the wrong phase).
    void begin_phase() {
        sums_.run({}, [] {}); // a barrier: nobody's total comes back before everyone has joined
        detector_.reset();
        phase_decided_ = false;
    }

    std::uint64_t sent() const noexcept { return sent_.load(); }
    std::uint64_t received() const noexcept { return received_.load(); }

    // How long the thread in run() polls on after the last traffic once its rank is idle (it
    // never sleeps while the rank has work); 0 when it shares its core: then it yields for a
    // little while and sleeps, since polling would only delay the thread it waits for.
    void set_spin_us(std::uint64_t us);

    // Wakes the dedicated thread if it sleeps.
    void wake() noexcept { parker_.unpark(); }

    flow_control& flow() noexcept { return flow_; }

    // A delivered message has run and its buffer is back (dispatch_message). Any thread.
    void dispatched() noexcept { dispatched_.add(1); }

  private:
    static constexpr int full_sweep_every = 8, inline_polls = 8;
    static constexpr std::size_t max_sends_in_flight = 256;
    static constexpr int first_payload_tag = wire_first_payload_tag;

    enum class op_kind : std::uint8_t {
        send,            // one of a message's sends
        payload,         // the receive of a split-phase payload
        dropped_payload, // the receive of a refused header's payload, dropped when it is in
    };
    struct op {
        message* msg;
        op_kind kind;
    };

    // Sends `m` if its destination's credit allows (else it waits for credit).
    void start_send(message* m);
    // Sends `m` now.
    void transmit(message* m);
    void send_header(message* m, int bytes);
    // The credit control message to `dest` (flow_control.hpp).
    void send_credit(int dest, std::uint64_t kind, const flow_control::request_body& body);
    void on_credit(message* m, int source);
    void send_grants();
    void add_op(message* m, op_kind kind) {
        ops_.push_back({m, kind});
        op_requests_.push_back(MPI_REQUEST_NULL);
    }
    bool flush_outbox();
    void post_receive(int slot);
    void repost_deferred();
    // The message received into `slot`, `bytes` long. A small one (a quarter of a receive buffer or
    // less) that will wait behind others (`alone` false) moves to a buffer of its size and the
    // slot keeps its own; any other keeps the slot's buffer, and the slot gets a new one when it
    // is posted again. So the received messages a busy rank holds (up to max_in_hand_) cost
    // about their size, not the eager size each (4 MiB a rank by default before), and a message
    // that is all the rank has in hand, which runs next (a reply in a chain of calls), is not
    // copied: one full buffer at most, for 65 fewer of a hop's 4,000 instructions.
    message* take_received(std::size_t slot, std::size_t bytes, bool alone);
    // A header message of `count` bytes from `source`, received into `m`.
    void on_header(message* m, int count, int source);
    void on_op_done(const op& o);
    // `from_wire`: it came through MPI, so the caller is the polling thread (see poller_count).
    void count_received(message* m, bool from_wire);
    // Counts a message being posted, before it can leave. `polling`: the caller is the polling
    // thread or holds the poll lock (see poller_count).
    void count_sent(message* m, bool polling) noexcept;
    // Queues `m` for the poller to send.
    void enqueue(message* m);
    bool poll_headers(bool one_header);
    // Counts `m`'s bytes against the back-pressure limit, once: it waits for MPI.
    void queue_flow(message* m) noexcept;
    // `m`'s sends are done: uncount its bytes and give the buffer back.
    void release_sent(message* m) noexcept;
    bool poll_ops();
    bool poll_waves();
    // Refuse `m`, of `bytes` received bytes, with an error; counted as its sender counted it.
    void reject(message* m, int bytes, int source, const std::string& why);
    void drop_payload(message* m, int bytes, int source, const std::string& why);
    bool receive_dropped_payloads();

    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
    const config& cfg_;
    message_pool& pool_;
    hooks hooks_;

    moodycamel::ConcurrentQueue<message*> outbox_;
    // outbox_'s size, raised after an enqueue and lowered after a dequeue (so briefly below
    // zero, wrapped): zero means there is nothing to look for yet.
    std::atomic<std::size_t> outbox_count_{0};
    std::vector<message*> slots_;
    std::vector<MPI_Request> slot_requests_;
    std::size_t head_ = 0;
    int deferred_slot_ = -1; // received from, not yet posted again (see poll_headers)
    std::vector<op> ops_;    // parallel to op_requests_
    struct unreceived_payload {
        int source, tag;
    };
    std::vector<unreceived_payload> unreceived_payloads_; // of refused headers, to drop
    std::vector<MPI_Request> op_requests_;
    std::vector<int> done_indices_;
    int next_payload_tag_ = first_payload_tag;
    int max_tag_ = 32767;
    std::uint64_t spin_ticks_ = 0; // see set_spin_us
    int polls_since_sweep_ = 0;
    flow_control flow_;
    std::vector<message*> credited_; // scratch: messages a grant lets go
    // Received messages not yet run, delivered_ - dispatched_: over max_in_hand_, headers wait
    // in MPI (see flow_control).
    poller_count delivered_;
    worker_count dispatched_; // one slot per worker of this rank
    std::uint64_t max_in_hand_;
    std::int64_t last_backlog_ = 0;
    static constexpr std::int64_t max_backlog = 1 << 16;

    // The termination waves, the phase barrier and the drain (collective, one at a time).
    tree_sum sums_;
    termination_detector detector_;
    // The phase is over (finished or deadlock): no further wave may start, since the other ranks
    // will not join it (in inline mode another worker may poll before it sees the stop).
    bool phase_decided_ = false;
    poller_count sent_;
    poller_count received_;
    // Header messages that went through MPI, of every kind; MPI thread only. Read by
    // drain_uncounted(), which then drops what still arrives instead of delivering it.
    std::uint64_t wire_sent_ = 0, wire_received_ = 0;
    bool draining_ = false;
    try_mutex poll_mutex_; // the thread that polls, when workers may (see share_polling)
    bool shared_polling_ = false;
    // now_ticks() of a worker's recent try_poll: a worker writes it only once it is
    // worker_poll_note_ticks_ old, so that the progress thread's reads of it do not cost every
    // poll of the worker a cache miss.
    std::atomic<std::uint64_t> worker_polled_at_{0};
    std::uint64_t worker_poll_note_ticks_ = 0;
    parker parker_;
};

} // namespace prema::detail
