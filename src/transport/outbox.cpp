// The sending side of a worker's messages (prema/detail/transport/outbox.hpp): message
// buffers, payload checks, the worker's open batches, and posting to the progress engine.
#include "prema/detail/transport/outbox.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "prema/detail/transport/copy_bytes.hpp"
#include "prema/error.hpp"
#include "prema/transport/handler.hpp"
#include "prema/transport/send.hpp"
#include "transport/observe.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

message* acquire_message(std::size_t payload_bytes) {
    return state().pool.acquire(payload_bytes);
}

void release_message(message* m) noexcept {
    state_or_null()->pool.release(m);
}

std::byte* grow_message(void* context, std::size_t need, std::size_t kept, std::size_t& capacity) {
    auto& g = *static_cast<growing_message*>(context);
    if (need > g.eager)
        return nullptr;
    auto& pool = state_or_null()->pool;
    // At least twice the room: a payload written in many small pieces moves a few times, not
    // at every piece.
    message* bigger = pool.acquire(std::min(std::max(need, 2 * g.m->inline_capacity()), g.eager));
    copy_bytes(bigger->inline_data(), g.m->inline_data(), kept);
    pool.release(std::exchange(g.m, bigger));
    capacity = g.m->inline_capacity();
    return g.m->inline_data();
}

std::size_t eager_capacity() noexcept {
    return state_or_null()->cfg.eager_bytes;
}

std::size_t eager_capacity(int dest) noexcept {
    return state_or_null()->eager_to(dest);
}

void check_rank_slow(int rank) {
    auto& st = state();
    if (rank < 0 || rank >= st.size)
        throw usage_error(fmt::format("rank {} does not exist: the job has {} ranks (0..{})", rank,
                                      st.size, st.size - 1));
}

void check_payload(std::uint64_t handler, const byte_writer& payload) {
    auto& st = state();
    if (auto bytes = payload.size() + payload.bulk().size(); bytes > st.cfg.max_message_bytes)
        throw usage_error(fmt::format(
            "a message for handler {} carries {} bytes, above --prema-max-message-bytes={}",
            handler_name(handler), bytes, st.cfg.max_message_bytes));
}

batch_set* my_batches(transport_state& st) noexcept {
    if (st.batches.empty() || worker_pool::current() != st.workers.get())
        return nullptr;
    return st.batches[std::size_t(worker_pool::current_index())].get();
}

batch_lane* open_batch(int dest) {
    auto* st = state_or_null();
    batch_set* b = st ? my_batches(*st) : nullptr;
    if (!b || dest == st->rank || std::exchange(tls_outbox->send_now, false))
        return nullptr;
    std::size_t room = 0;
    b->begin(dest, room);
    return find_lane(b->lanes(), dest);
}

void batch_commit(int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload) {
    auto& st = *state_or_null();
    batch_set& b = *my_batches(st);
    if (payload.size() + payload.bulk().size() > st.cfg.max_message_bytes)
        check_payload(handler, payload);
    if (!payload.spilled() && !payload.bulk())
        return b.commit(dest, handler, token, payload.size());
    // Too big for the room left: the batch's buffer grows if the batch can take it, else a
    // fresh batch if it fits one, else on its own (after the batch, which it must not
    // overtake). A bulk always leaves on its own.
    if (!payload.bulk()) {
        std::byte* at = b.room_for(dest, payload.size());
        if (!at && payload.size() <= b.max_payload()) {
            b.flush(dest);
            at = b.room_for(dest, payload.size());
        }
        if (at) {
            copy_bytes(at, payload.data(), payload.size());
            return b.commit(dest, handler, token, payload.size());
        }
    }
    post(nullptr, dest, handler, token, payload);
}

void batch_committed(int dest, std::uint64_t handler, std::size_t bytes) {
    my_batches(*state_or_null())->committed(dest, handler, bytes);
}

namespace {
// A message whose inline area holds what travels inline of `payload` to `dest`: `m` if the
// payload was written there and fits, else a buffer sized to it (`m` goes back).
[[gnu::noinline]] message* fit(transport_state& st, message* m, int dest, byte_writer& payload) {
    const std::size_t eager = st.eager_to(dest);
    // A bulk travels beside an inline part that fits the message; to a remote rank it travels
    // inline itself if all of it fits (node_peers.hpp says why).
    if (payload.bulk() &&
        (payload.size() > eager || payload.size() + payload.bulk().size() <= eager))
        payload.fold_bulk();
    std::size_t inline_bytes = payload.size() <= eager ? payload.size() : 0;
    message* fitted = st.pool.acquire(inline_bytes);
    if (payload.bulk())
        payload.relocate(fitted->inline_data(), fitted->inline_capacity());
    else if (inline_bytes)
        copy_bytes(fitted->inline_data(), payload.data(), inline_bytes);
    if (m)
        st.pool.release(m);
    return fitted;
}
} // namespace

void post(message* m, int dest, std::uint64_t handler, std::uint64_t token, byte_writer& payload,
          std::uint32_t flags) {
    check_payload(handler, payload);
    auto& st = *state_or_null();
    // Before the flush below: the payload may lie in the room of the batch it hands over.
    if (!m || payload.spilled() || payload.bulk() || payload.data() != m->inline_data())
        [[unlikely]]
        m = fit(st, m, dest, payload);
    // A counted message leaves behind what its worker batched for the same rank; control
    // traffic overtakes batches on purpose.
    if (!(flags & (flag_urgent | flag_uncounted)))
        if (batch_set* b = my_batches(st); b && b->open(dest))
            b->flush(dest);
    auto& h = m->header();
    h.magic = wire_magic;
    h.flags = flags;
    h.handler = handler;
    h.token = token;
    h.payload_bytes = payload.size();
    h.source = st.rank;
    h.payload_tag = 0;
    if (payload.bulk()) {
        h.flags |= flag_split | flag_bulk;
        h.payload_bytes = payload.bulk().size();
        m->inline_bytes = std::uint32_t(payload.size());
        m->split = std::move(payload.bulk());
    } else if (payload.size() > m->inline_capacity()) {
        h.flags |= flag_split;
        m->split.hold(std::move(payload.heap()));
    }
    m->peer = dest;
    if (observing())
        note_send(dest, handler, sizeof(wire_header) + m->inline_bytes + h.payload_bytes);
    st.engine->post(m);
}

bool sends_held_slow() noexcept {
    auto* st = state_or_null();
    return st && st->engine->flow().over();
}

bool hold_sender(std::coroutine_handle<> h) {
    return state().engine->flow().hold(h);
}

} // namespace prema::detail
