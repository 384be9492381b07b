#include "transport/progress_engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <sched.h>
#include <string>

#include <fmt/format.h>

#include "coro/worker_pool.hpp"
#include "prema/detail/transport/copy_bytes.hpp"
#include "prema/error.hpp"
#include "prema/transport/handler.hpp"
#include "transport/observe.hpp"
#include "transport/wire_check.hpp"

namespace prema::detail {

namespace {
// The dedicated thread, once its rank is idle, sleeps between polls: MPI cannot wake it, so the
// sleeps double from the first to the longest until something happens.
constexpr std::chrono::microseconds first_sleep{20}, longest_sleep{200};
// On a shared core it yields between polls this long after the last traffic before it sleeps.
constexpr double shared_core_yield_us = 100;
// Shared polling: the progress thread stays off MPI while a worker has polled within this time;
// longer, and the worker is busy with what it found (or parked): the progress thread polls, so
// that urgent and balancing messages, batches and acknowledgements keep moving.
constexpr std::chrono::microseconds worker_poll_cover{20};
} // namespace

namespace {
int size_of(MPI_Comm comm) {
    int n = 0;
    MPI_Comm_size(comm, &n);
    return n;
}

// Credit requests and grants (flow_control.hpp): uncounted messages the progress engine
// handles itself when they arrive; the handler only reserves the id.
void on_credit_message(const incoming&) {}
const std::uint64_t credit_handler = register_handler("prema::credit", &on_credit_message);

enum credit_kind : std::uint64_t { credit_request = 1, credit_grant = 2 };
struct credit_body {
    std::uint64_t kind;
    flow_control::request_body body; // a grant: its cumulative limit in `sent`
};
static_assert(sizeof(credit_body) == 32);
} // namespace

std::array<std::uint64_t, options_that_must_match> must_match(const config& cfg) {
    return {cfg.eager_bytes, cfg.remote_eager_bytes, cfg.max_message_bytes,
            std::uint64_t(cfg.lb_load), cfg.max_outstanding_bytes};
}

std::string config_mismatch(const config& cfg,
                            std::span<const std::uint64_t, options_that_must_match> lo,
                            std::span<const std::uint64_t, options_that_must_match> hi) {
    constexpr std::size_t n = options_that_must_match;
    const auto mine = must_match(cfg);
    auto show = [](std::size_t i, std::uint64_t v) {
        return i == 3 ? to_string(load_mode(v)) : std::to_string(v);
    };
    std::string why;
    const char* names[n] = {"eager-bytes", "remote-eager-bytes", "max-message-bytes", "lb-load",
                            "max-outstanding-bytes"};
    for (std::size_t i = 0; i < n; ++i)
        if (lo[i] != hi[i])
            why += fmt::format("{}--prema-{} ranges from {} to {} (this rank: {})",
                               why.empty() ? "" : "; ", names[i], show(i, lo[i]), show(i, hi[i]),
                               show(i, mine[i]));
    if (!why.empty())
        why = "the ranks disagree on options that must match: " + why +
              "; every rank needs the same value";
    return why;
}

progress_engine::progress_engine(MPI_Comm comm, const config& cfg, message_pool& pool, hooks h)
    : comm_(comm), cfg_(cfg), pool_(pool), hooks_(std::move(h)),
      flow_(size_of(comm), cfg.max_outstanding_bytes, flow_control::cost(pool.wire_bytes())),
      dispatched_(cfg.workers), max_in_hand_(4 * cfg.recv_slots), sums_(comm, tag_tree),
      detector_(sums_) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    int* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
    if (found && tag_ub)
        max_tag_ = *tag_ub;
    slots_.resize(std::size_t(cfg_.recv_slots));
    slot_requests_.assign(slots_.size(), MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        slots_[i] = pool_.acquire_full();
        post_receive(int(i));
    }
}

progress_engine::~progress_engine() {
    drain_uncounted();
    repost_deferred();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        MPI_Cancel(&slot_requests_[i]);
        MPI_Wait(&slot_requests_[i], MPI_STATUS_IGNORE);
        pool_.release(slots_[i]);
    }
    // Quiescence means every message arrived; the sends only need their completion noted.
    MPI_Waitall(int(op_requests_.size()), op_requests_.data(), MPI_STATUSES_IGNORE);
    for (auto& o : ops_)
        if (o.kind == op_kind::dropped_payload ||
            (o.kind == op_kind::send && --o.msg->pending_sends == 0))
            pool_.release(o.msg);
    message* m;
    while (outbox_.try_dequeue(m))
        pool_.release(m);
    for (message* w : flow_.take_waiting())
        pool_.release(w);
}

void progress_engine::post_receive(int slot) {
    MPI_Irecv(&slots_[std::size_t(slot)]->header(), int(pool_.wire_bytes()), MPI_BYTE,
              MPI_ANY_SOURCE, tag_header, comm_, &slot_requests_[std::size_t(slot)]);
}

namespace {
// Set while this thread is inside poll(): code run from poll (urgent handlers) that posts must
// not try to take the poll lock again.
thread_local bool in_poll = false;
} // namespace

void progress_engine::count_sent(message* m, bool polling) noexcept {
    if (m->header().flags & flag_uncounted)
        return;
    polling ? sent_.add_polling(m->logical) : sent_.add_other(m->logical);
}

void progress_engine::post(message* m) {
    // Raw bytes must cross MPI to be checked; --prema-loopback mpi sends everything through it.
    if (m->peer == rank_ && m->raw_bytes < 0 && !cfg_.loopback_mpi) {
        count_sent(m, in_poll);
        count_received(m, false);
        return;
    }
    if (!(m->header().flags & flag_uncounted) && m->raw_bytes < 0) {
        // The memory it holds until it is out: its buffer and a split-phase payload.
        m->flow_bytes =
            std::uint32_t(std::min<std::uint64_t>(m->capacity + m->split.size(), UINT32_MAX));
    }
    if ((cfg_.progress == progress_mode::inline_ || shared_polling_) && !in_poll) {
        // Straight to MPI when nobody polls, behind what others queued meanwhile.
        std::unique_lock lock(poll_mutex_, std::try_to_lock);
        count_sent(m, lock.owns_lock());
        if (lock.owns_lock() && ops_.size() < max_sends_in_flight) {
            flush_outbox();
            if (ops_.size() < max_sends_in_flight)
                return start_send(m);
        }
        enqueue(m);
        if (lock.owns_lock())
            flush_outbox();
        else if (shared_polling_)
            wake(); // the progress thread may sleep (an idle rank), the poller not come back
        return;
    }
    count_sent(m, in_poll);
    enqueue(m);
    wake();
}

void progress_engine::enqueue(message* m) {
    queue_flow(m);
    outbox_.enqueue(m);
    outbox_count_.fetch_add(1, std::memory_order_release);
}

void progress_engine::queue_flow(message* m) noexcept {
    if (m->flow_bytes && !m->flow_queued) {
        flow_.queued(m->flow_bytes);
        m->flow_queued = true;
    }
}

void progress_engine::release_sent(message* m) noexcept {
    if (m->flow_queued)
        flow_.handed_over(m->flow_bytes);
    pool_.release(m);
}

void progress_engine::post_raw(int dest, std::span<const std::byte> bytes,
                               std::span<const std::byte> payload) {
    if (dest < 0 || dest >= size_ || bytes.size() > pool_.wire_bytes())
        throw usage_error(fmt::format("post_raw: rank {} of {}, {} bytes (at most {})", dest, size_,
                                      bytes.size(), pool_.wire_bytes()));
    message* m = pool_.acquire_full();
    // Zeros where `bytes` end: the sender's count reads what the receiver will (see
    // counted_by_sender), not what the buffer's last message left.
    std::memset(&m->header(), 0, sizeof(wire_header));
    if (!bytes.empty())
        std::memcpy(&m->header(), bytes.data(), bytes.size());
    m->logical = counted_by_sender(m->header(), int(bytes.size()));
    if (!payload.empty()) {
        if (bytes.size() < sizeof(wire_header) || m->header().payload_tag < first_payload_tag ||
            m->header().payload_tag > max_tag_) {
            pool_.release(m);
            throw usage_error("post_raw: a payload needs a header naming a payload tag");
        }
        m->split.borrow(const_cast<std::byte*>(payload.data()), payload.size());
    }
    m->raw_bytes = int(bytes.size());
    m->peer = dest;
    post(m);
}

bool progress_engine::flush_outbox() {
    bool moved = false;
    message* batch[64];
    std::size_t n;
    // At most max_sends_in_flight MPI sends: the rest wait in the outbox, so that testing the
    // sends in flight stays cheap however fast workers post.
    // The count is read first: looking into an empty queue costs more than the poll it is in.
    while (outbox_count_.load(std::memory_order_acquire) > 0 && ops_.size() < max_sends_in_flight &&
           (n = outbox_.try_dequeue_bulk(
                batch, std::min<std::size_t>(64, max_sends_in_flight - ops_.size()))) > 0) {
        outbox_count_.fetch_sub(n, std::memory_order_relaxed);
        for (std::size_t i = 0; i < n; ++i)
            start_send(batch[i]);
        moved = true;
    }
    return moved;
}

// Quiescence ignores uncounted messages, so some may still be on the wire when the runtime ends.
// They must be received on this communicator before it is freed: Open MPI reuses a freed
// communicator's context id, and the next runtime's header receives would match them (a
// load-balancing message from a finished runtime, run in the next one, broke its termination
// waves). Collective: sums (tree_sum) of the header messages that went out and came in (every
// kind, refused ones too) until they agree.
void progress_engine::drain_uncounted() {
    draining_ = true;
    for (;;) {
        const auto sums = sums_.run({wire_sent_, wire_received_, 0, 0}, [this] {
            poll_headers(false);
            poll_ops();
        });
        if (sums[0] == sums[1])
            return;
    }
}

void progress_engine::count_received(message* m, bool from_wire) {
    auto flags = m->header().flags;
    auto logical = m->logical;                // `m` belongs to the handler once delivered
    if (observing() && !(flags & flag_batch)) // a batch's messages are noted as they run
        note_receive(m->header().source, m->header().handler,
                     sizeof(wire_header) + m->inline_bytes + m->header().payload_bytes);
    if (draining_)
        return pool_.release(m);
    auto count = [from_wire](poller_count& c, std::uint64_t n) {
        from_wire ? c.add_polling(n) : c.add_other(n);
    };
    count(delivered_, 1);
    if (flags & flag_urgent)
        hooks_.urgent(m);
    else
        hooks_.deliver(m);
    if (!(flags & flag_uncounted))
        count(received_, logical);
}

void progress_engine::start_send(message* m) {
    auto& h = m->header();
    if (m->flow_bytes) { // counted, to another rank (or through MPI to this one)
        const std::uint64_t cost = flow_control::cost(
            sizeof(wire_header) + (h.flags & flag_split ? m->inline_bytes : h.payload_bytes));
        if (!flow_.take(m->peer, cost)) [[unlikely]] {
            queue_flow(m);
            if (flow_.wait(m, cost))
                send_credit(m->peer, credit_request, flow_.request(m->peer));
            return;
        }
        h.flags |= flag_credited;
    }
    transmit(m);
}

void progress_engine::transmit(message* m) {
    ++wire_sent_;
    auto& h = m->header();
    if (m->raw_bytes >= 0) { // fault injection: exactly these bytes, and a payload if any
        m->pending_sends = m->split ? 2 : 1;
        if (m->split) {
            add_op(m, op_kind::send);
            MPI_Isend(m->split.data(), int(m->split.size()), MPI_BYTE, m->peer, h.payload_tag,
                      comm_, &op_requests_.back());
        }
        add_op(m, op_kind::send);
        MPI_Isend(&h, m->raw_bytes, MPI_BYTE, m->peer, tag_header, comm_, &op_requests_.back());
        return;
    }
    if (!(h.flags & flag_split))
        return send_header(m, int(sizeof(wire_header) + h.payload_bytes));
    h.payload_tag = next_payload_tag_;
    next_payload_tag_ = next_payload_tag_ == max_tag_ ? first_payload_tag : next_payload_tag_ + 1;
    m->pending_sends = 2;
    queue_flow(m);
    add_op(m, op_kind::send);
    MPI_Isend(m->split.data(), int(m->split.size()), MPI_BYTE, m->peer, h.payload_tag, comm_,
              &op_requests_.back());
    send_header(m, int(sizeof(wire_header) + m->inline_bytes));
}

// Sends the header part of `m` (all of it unless split-phase); m->pending_sends counts it.
void progress_engine::send_header(message* m, int bytes) {
    auto& h = m->header();
    if (!(h.flags & flag_split))
        m->pending_sends = 1;
    // A small message is usually copied out at once: then its buffer goes back now and
    // poll_ops never scans it.
    MPI_Request request;
    MPI_Isend(&h, bytes, MPI_BYTE, m->peer, tag_header, comm_, &request);
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) {
        queue_flow(m);
        ops_.push_back({m, op_kind::send});
        op_requests_.push_back(request);
    } else if (--m->pending_sends == 0) {
        release_sent(m);
    }
}

void progress_engine::send_credit(int dest, std::uint64_t kind,
                                  const flow_control::request_body& body) {
    credit_body c{kind, body};
    message* m = pool_.acquire(sizeof c);
    std::memcpy(m->inline_data(), &c, sizeof c);
    m->header() = wire_header{wire_magic, flag_uncounted, credit_handler, 0, sizeof c, rank_, 0};
    m->peer = dest;
    transmit(m);
}

void progress_engine::send_grants() {
    flow_.send_grants([this](int source, std::uint64_t limit) {
        send_credit(source, credit_grant, {limit, 0, 0});
    });
}

void progress_engine::on_credit(message* m, int source) {
    credit_body c{};
    const bool sized = m->header().payload_bytes == sizeof c;
    if (sized)
        std::memcpy(&c, m->inline_data(), sizeof c);
    pool_.release(m);
    const char* why = nullptr;
    if (!sized || (c.kind != credit_request && c.kind != credit_grant)) {
        why = "garbled credit message";
    } else if (c.kind == credit_grant) {
        credited_.clear();
        bool ask = flow_.granted(source, c.body.sent, credited_);
        for (message* ready : credited_) {
            ready->header().flags |= flag_credited;
            transmit(ready);
        }
        if (ask)
            send_credit(source, credit_request, flow_.request(source));
    } else if (c.body.need > flow_control::cost(pool_.wire_bytes())) {
        why = "garbled credit request: its first message is larger than any message";
    } else {
        why = flow_.asked(source, c.body);
    }
    // Control traffic: refused, it is reported, and counted nowhere.
    if (why)
        hooks_.error(fmt::format("refused a message from rank {}: {}", source, why));
}

void progress_engine::reject(message* m, int bytes, int source, const std::string& why) {
    hooks_.error(fmt::format("refused a message from rank {}: {}", source, why));
    received_.add_polling(counted_by_sender(m->header(), bytes));
    pool_.release(m);
}

// The sender's payload send completes only once it is received (and its shutdown waits for
// it): a refused header's payload is received into a buffer of its own, as large as what
// actually arrives, and dropped. It is looked for until it comes, since MPI orders messages
// of different tags only in practice.
void progress_engine::drop_payload(message* m, int bytes, int source, const std::string& why) {
    auto& h = m->header();
    hooks_.error(fmt::format("refused a message from rank {}: {}; its split-phase payload is "
                             "received and dropped",
                             source, why));
    unreceived_payloads_.push_back({source, h.payload_tag});
    received_.add_polling(counted_by_sender(h, bytes));
    pool_.release(m);
    receive_dropped_payloads();
}

bool progress_engine::receive_dropped_payloads() {
    return std::erase_if(unreceived_payloads_, [this](const unreceived_payload& u) {
               int found = 0;
               MPI_Message arrived;
               MPI_Status status;
               MPI_Improbe(u.source, u.tag, comm_, &found, &arrived, &status);
               if (!found)
                   return false;
               int bytes = 0;
               MPI_Get_count(&status, MPI_BYTE, &bytes);
               message* m = pool_.acquire();
               m->split.hold(byte_vector(std::size_t(bytes)));
               add_op(m, op_kind::dropped_payload);
               MPI_Imrecv(m->split.data(), bytes, MPI_BYTE, &arrived, &op_requests_.back());
               return true;
           }) != 0;
}

void progress_engine::on_header(message* m, int count, int source) {
    auto& h = m->header();
    m->peer = source;
    // The sender charged it to its credit here, whatever else is wrong with it.
    if (h.flags & flag_credited)
        flow_.matched(source, flow_control::cost(std::uint64_t(count)));
    if (auto why = check_header(h, count, source, cfg_); !why.empty()) {
        if (payload_follows(h, count, source, max_tag_))
            return drop_payload(m, count, source, why);
        return reject(m, count, source, why);
    }
    if (h.flags & flag_batch) {
        if (auto why = check_batch(m->payload(), m->logical); !why.empty())
            return reject(m, count, source, why);
    } else if ((h.flags & flag_uncounted) && h.handler == credit_handler) {
        return on_credit(m, source);
    }
    if (!(h.flags & flag_split))
        return count_received(m, true);
    m->inline_bytes = std::uint32_t(count) - std::uint32_t(sizeof(wire_header));
    // Sends that completed meanwhile give their buffers back first, so that this payload can
    // be received into the one just sent, still in cache.
    poll_ops();
    choose_receive_buffer(*m);
    add_op(m, op_kind::payload);
    MPI_Irecv(m->split.data(), int(h.payload_bytes), MPI_BYTE, source, h.payload_tag, comm_,
              &op_requests_.back());
}

void progress_engine::repost_deferred() {
    if (deferred_slot_ < 0)
        return;
    auto& slot = slots_[std::size_t(deferred_slot_)];
    if (!slot)
        slot = pool_.acquire_full();
    post_receive(deferred_slot_);
    deferred_slot_ = -1;
}

message* progress_engine::take_received(std::size_t slot, std::size_t bytes, bool alone) {
    message* m = slots_[slot];
    if (alone || bytes < sizeof(wire_header) ||
        pool_.wire_bytes_for(bytes - sizeof(wire_header)) * 4 > pool_.wire_bytes()) {
        slots_[slot] = nullptr; // the message keeps the buffer; the slot gets a new one
        return m;
    }
    message* copy = pool_.acquire(bytes - sizeof(wire_header));
    copy_bytes(&copy->header(), &m->header(), bytes);
    return copy;
}

bool progress_engine::poll_headers(bool one_header) {
    repost_deferred();
    // Headers wait in MPI while this rank is behind: received messages not run yet, or a
    // backlog of handlers that the workers are working down. A backlog that does not shrink
    // may be waiting for a message (a reply its handler awaits), so it never stops receiving.
    std::int64_t backlog = hooks_.backlog ? hooks_.backlog->load(std::memory_order_relaxed) : 0;
    bool working_down = backlog > max_backlog && backlog < last_backlog_;
    last_backlog_ = backlog;
    // dispatched_ first: every message it counts is in the delivered count read after it.
    auto dispatched = dispatched_.load();
    auto in_hand = delivered_.load() - dispatched;
    if ((in_hand >= max_in_hand_ || working_down) && !draining_)
        return false;
    bool moved = false;
    for (std::size_t n = 0; n < slots_.size(); ++n) {
        int done = 0;
        MPI_Status status;
        MPI_Test(&slot_requests_[head_], &done, &status);
        if (!done)
            break;
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        message* m = take_received(head_, std::size_t(count), in_hand == 0 && !moved);
        // This slot's next receive is posted at the next look, after the message has been
        // handed over: inline, its handler runs (and its reply leaves) one MPI_Irecv sooner.
        // The other slots stay posted meanwhile, and MPI keeps what arrives for none.
        repost_deferred();
        deferred_slot_ = int(head_);
        if (++head_ == slots_.size()) // not `%`: a division costs more than the branch
            head_ = 0;
        ++wire_received_;
        on_header(m, count, status.MPI_SOURCE);
        moved = true;
        if (one_header)
            break;
    }
    return moved;
}

void progress_engine::on_op_done(const op& o) {
    if (o.kind == op_kind::payload)
        return count_received(o.msg, true);
    if (o.kind == op_kind::dropped_payload)
        return pool_.release(o.msg);
    message* m = o.msg;
    if (--m->pending_sends == 0)
        release_sent(m);
}

bool progress_engine::poll_ops() {
    if (ops_.empty())
        return false;
    int count = 0;
    done_indices_.resize(op_requests_.size());
    MPI_Testsome(int(op_requests_.size()), op_requests_.data(), &count, done_indices_.data(),
                 MPI_STATUSES_IGNORE);
    if (count <= 0)
        return false;
    for (int i = 0; i < count; ++i)
        on_op_done(ops_[std::size_t(done_indices_[std::size_t(i)])]);
    // Completed requests are MPI_REQUEST_NULL now; keep the rest in order.
    std::size_t out = 0;
    for (std::size_t i = 0; i < ops_.size(); ++i) {
        if (op_requests_[i] == MPI_REQUEST_NULL)
            continue;
        ops_[out] = ops_[i];
        op_requests_[out] = op_requests_[i];
        ++out;
    }
    ops_.resize(out);
    op_requests_.resize(out);
    return true;
}

bool progress_engine::poll_waves() {
    if (phase_decided_ || !(detector_.wave_in_flight() || detector_.may_start_wave()))
        return false;
    bool idle = hooks_.idle() && outbox_.size_approx() == 0;
    local_counts c;
    if (idle && !detector_.wave_in_flight()) {
        c = hooks_.counts();
        c.sent = sent();
        c.received = received();
    }
    auto r = detector_.poll(idle, c);
    if (r == wave_result::none)
        return false;
    phase_decided_ = r == wave_result::finished || r == wave_result::deadlock;
    hooks_.decided(r);
    return true;
}

bool progress_engine::poll(bool one_header) {
    in_poll = true;
    bool moved = flush_outbox();
    moved |= poll_headers(one_header);
    // Matches above may have freed credit for senders that wait for it.
    flow_.serve_waiting();
    if (flow_.grants_due())
        send_grants();
    moved |= poll_ops();
    // A wave moves on at every poll, as MPI moves a collective of its own on at every test:
    // tested only at the sweeps, it moved one tree level per sweep, and quiescence() took 5x
    // longer on 8 oversubscribed ranks than with MPI_Iallreduce (1.3x now).
    if (sums_.in_flight())
        sums_.test();
    if (!unreceived_payloads_.empty())
        moved |= receive_dropped_payloads();
    if (flow_.held())
        for (auto h : flow_.release_if_under()) {
            hooks_.resume(h);
            moved = true;
        }
    // A poll is mostly a wait for the next header: keep it to the tests that find it, and run
    // the periodic work (balancing, checkpoint I/O, batch ages, waves) every
    // full_sweep_every-th poll.
    if (++polls_since_sweep_ >= full_sweep_every) {
        polls_since_sweep_ = 0;
        if (hooks_.tick)
            hooks_.tick();
        moved |= flush_outbox();
        // Waves on every sweep, traffic or not. Skipped while anything moved, they starved on a
        // loaded node: a policy's periodic queries (uncounted, not work) kept arriving, and the
        // job stayed unfinished 23-116 s after 0.3 s of work (heat_diffusion, 4 ranks on 2
        // busy cores). A wave starts only while the rank is idle anyway.
        moved |= poll_waves();
    } else if (moved) {
        // Replies and migrations that urgent handlers produced during this poll leave now,
        // not one poll (in inline mode: one quantum) later.
        flush_outbox();
    }
    in_poll = false;
    return moved;
}

bool progress_engine::try_poll() {
    if (shared_polling_) {
        const std::uint64_t now = now_ticks();
        if (now - worker_polled_at_.load(std::memory_order_relaxed) >= worker_poll_note_ticks_)
            worker_polled_at_.store(now, std::memory_order_relaxed);
    }
    std::unique_lock lock(poll_mutex_, std::try_to_lock);
    if (!lock.owns_lock())
        return false;
    // A few polls back to back before the worker looks at its queues again: the message it
    // waits for is found within one MPI test, not one trip around the worker loop. It runs
    // as soon as it is found: a look for the next one would be a test of MPI on its path, and
    // the poll after it comes back to the others (a batch is many messages in one header).
    for (int i = 0; i < inline_polls; ++i)
        if (poll(true))
            return true;
    return false;
}

void progress_engine::share_polling() {
    shared_polling_ = true;
    worker_poll_note_ticks_ = std::uint64_t(double(worker_poll_cover.count()) / 4 * ticks_per_us());
}

void progress_engine::set_spin_us(std::uint64_t us) {
    spin_ticks_ = std::uint64_t(double(us) * ticks_per_us());
}

void progress_engine::run(const std::atomic<bool>& stop) {
    auto sleep = first_sleep;
    // On its own core it polls without a pause while the rank has work (a reply may come at any
    // moment) and for the spin time after that; on a shared core it yields (cheap while the
    // workers sleep, and it lets whoever has work run) for a while after the last traffic. Then
    // it sleeps, and notices a message only when its sleep ends.
    static const std::uint64_t yield_ticks =
        std::uint64_t(double(shared_core_yield_us) * ticks_per_us());
    static const std::uint64_t cover_ticks =
        std::uint64_t(double(worker_poll_cover.count()) * ticks_per_us());
    std::uint64_t idle_since = 0;
    while (!stop.load(std::memory_order_acquire)) {
        bool moved;
        if (shared_polling_) {
            if (now_ticks() - worker_polled_at_.load(std::memory_order_relaxed) < cover_ticks) {
                // A worker polls: leave MPI and the poll lock to it, and the core's neighbour
                // in peace (spinning here, even with pause instructions, made the worker's
                // hand-off 1.5x slower than inline here; asleep, 1.03x). Looks again after the
                // cover time, or at once when a worker queues a send it could not start.
                parker_.park(worker_poll_cover, [&] {
                    return outbox_.size_approx() > 0 || stop.load(std::memory_order_acquire);
                });
                idle_since = 0;
                continue;
            }
            std::unique_lock lock(poll_mutex_, std::try_to_lock);
            moved = lock.owns_lock() && poll();
        } else {
            moved = poll();
        }
        if (moved) {
            idle_since = 0;
            sleep = first_sleep;
            continue;
        }
        const std::uint64_t now = now_ticks();
        if (!idle_since)
            idle_since = now;
        if (spin_ticks_) {
            if (now - idle_since < spin_ticks_)
                continue;
            if (!hooks_.idle()) { // work in progress: keep polling
                idle_since = now;
                continue;
            }
        } else if (now - idle_since < yield_ticks) {
            sched_yield();
            continue;
        }
        parker_.park(sleep, [&] {
            return outbox_.size_approx() > 0 || stop.load(std::memory_order_acquire);
        });
        sleep = std::min(sleep * 2, longest_sleep);
    }
}

} // namespace prema::detail
