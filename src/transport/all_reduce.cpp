// all_reduce's rounds: each rank keeps, by call number, what its call and its children's
// messages brought, folds once all are in, and sends the fold up (or, on rank 0, the result
// down). One handler carries both directions:
//   [u64 call][u8 up][u8 failed] then, up: [u64 kind id][str type][str op]; then
//   failed == 0: [u64 n][n bytes: the value]; failed == 1: [i32 rank][str handler, type, what].
#include "prema/transport/all_reduce.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "prema/detail/transport/tree.hpp"
#include "prema/error.hpp"
#include "prema/transport/handler.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

namespace {

// An error on its way to every rank.
struct failure {
    int rank = 0;
    std::string handler, type, what;
};

// A child's message: its subtree's fold, or why there is none.
struct part {
    bool arrived = false;
    std::uint64_t kind = 0;
    std::string type, op; // mangled, for the error of a mismatch
    byte_vector value;
    std::optional<failure> failed;
};

struct round {
    const all_reduce_kind* kind = nullptr; // set by this rank's call
    std::shared_ptr<all_reduce_slot> local;
    byte_vector own;
    std::vector<part> children; // in fold order
    std::size_t arrived = 0;
    bool folded = false; // sent up; waits for the result
};

// The tree (prema/detail/transport/tree.hpp) over the ranks, rank 0 at its root.
std::vector<int> children_of(int rank, int size) {
    std::vector<int> out;
    for (const tree_run& child : tree_place(std::size_t(rank), std::size_t(size)).children())
        out.push_back(int(child.begin));
    return out;
}
int parent_of(int rank, int size) {
    return int(tree_place(std::size_t(rank), std::size_t(size)).parent);
}

std::mutex g_mutex;
std::map<std::uint64_t, round> g_rounds; // by call number (ordered: the report lists them so)
std::atomic<std::uint64_t> g_next_call{0};

std::string show(std::string_view type, std::string_view op) {
    return fmt::format("all_reduce({}, {})", demangle(std::string(type).c_str()),
                       demangle(std::string(op).c_str()));
}

failure failure_here(std::exception_ptr e, const all_reduce_kind& kind) {
    failure f{state().rank, show(kind.type, kind.op), "unknown exception", ""};
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& x) {
        f.type = current_exception_type();
        f.what = x.what();
    } catch (...) {
        f.type = current_exception_type();
    }
    return f;
}

std::exception_ptr to_exception(const failure& f) {
    return std::make_exception_ptr(remote_error(f.rank, f.handler, f.type, f.what));
}

std::uint64_t message_id();

void write_bytes(byte_writer& w, std::span<const std::byte> bytes) {
    std::uint64_t n = bytes.size();
    w.write(&n, sizeof n);
    w.write(bytes.data(), n);
}

void write_outcome(byte_writer& w, std::span<const std::byte> value, const failure* failed) {
    if (!failed)
        return write_bytes(w, value);
    std::int32_t rank = failed->rank;
    w.write(&rank, sizeof rank);
    write_value(w, failed->handler);
    write_value(w, failed->type);
    write_value(w, failed->what);
}

void send(int dest, std::uint64_t call, bool up, const all_reduce_kind* kind,
          std::span<const std::byte> value, const failure* failed) {
    post_new(dest, message_id(), 0, [&](byte_writer& w) {
        std::uint8_t flags[2] = {std::uint8_t(up), std::uint8_t(failed != nullptr)};
        w.write(&call, sizeof call);
        w.write(flags, sizeof flags);
        if (up) {
            w.write(&kind->id, sizeof kind->id);
            write_value(w, std::string(kind->type));
            write_value(w, std::string(kind->op));
        }
        write_outcome(w, value, failed);
    });
}

// The result reached this rank: on to its children, then to its call.
void deliver(std::uint64_t call, round& rd, std::span<const std::byte> value,
             const failure* failed) {
    auto& st = state();
    for (int c : children_of(st.rank, st.size))
        send(c, call, false, nullptr, value, failed);
    rd.local->complete(value, failed ? to_exception(*failed) : nullptr);
}

// Everything of the round is in: the first child's failure in fold order, a child whose call
// differs from this rank's, or op's fold.
void fold_round(std::uint64_t call, round& rd) {
    auto& st = state();
    const all_reduce_kind& kind = *rd.kind;
    std::optional<failure> failed;
    byte_vector result;
    for (std::size_t i = 0; i < rd.children.size() && !failed; ++i) {
        part& p = rd.children[i];
        if (p.failed)
            failed = std::move(p.failed);
        else if (p.kind != kind.id)
            failed = failure{
                st.rank, "prema::all_reduce", "prema::usage_error",
                fmt::format("call #{} of this phase is {} on rank {} but {} on rank {}: every "
                            "rank must make the same all_reduce calls, in the same order",
                            call, show(kind.type, kind.op), st.rank, show(p.type, p.op),
                            children_of(st.rank, st.size)[i])};
    }
    if (!failed) {
        try {
            if (rd.children.empty()) {
                result = std::move(rd.own);
            } else {
                std::vector<byte_vector> parts;
                parts.reserve(rd.children.size() + 1);
                parts.push_back(std::move(rd.own));
                for (part& p : rd.children)
                    parts.push_back(std::move(p.value));
                result = kind.fold(parts);
            }
        } catch (...) {
            failed = failure_here(std::current_exception(), kind);
        }
    }
    rd.children = {};
    const failure* f = failed ? &*failed : nullptr;
    if (st.rank != 0)
        return send(parent_of(st.rank, st.size), call, true, &kind, result, f);
    deliver(call, rd, result, f);
}

// Whether the round is complete: then it is taken out of g_rounds into `out` (a non-root keeps
// a marker that it waits for the result), and the caller folds it outside the lock.
bool take_if_complete(std::uint64_t call, round& rd, round& out) {
    if (!rd.kind || rd.folded || rd.arrived < rd.children.size())
        return false;
    out.kind = rd.kind;
    out.local = rd.local;
    out.own = std::move(rd.own);
    out.children = std::move(rd.children);
    rd.children.clear();
    rd.folded = true;
    if (state().rank == 0)
        g_rounds.erase(call);
    return true;
}

round& round_of(std::uint64_t call) {
    auto [it, fresh] = g_rounds.try_emplace(call);
    if (fresh) {
        auto& st = state();
        it->second.children.resize(children_of(st.rank, st.size).size());
    }
    return it->second;
}

std::optional<failure> read_failure(byte_reader& r) {
    failure f;
    std::int32_t rank = 0;
    r.read(&rank, sizeof rank);
    f.rank = rank;
    f.handler = read_value<std::string>(r);
    f.type = read_value<std::string>(r);
    f.what = read_value<std::string>(r);
    return f;
}

void on_message(const incoming& in) {
    auto& st = state();
    byte_reader r(in.payload);
    std::uint64_t call = 0;
    std::uint8_t flags[2] = {};
    r.read(&call, sizeof call);
    r.read(flags, sizeof flags);
    const bool up = flags[0], failed = flags[1];
    if (!up) {
        if (in.source != parent_of(st.rank, st.size) || st.rank == 0)
            throw wire_error(
                fmt::format("all_reduce result from rank {}, not this rank's parent", in.source));
        std::optional<failure> f;
        std::span<const std::byte> value;
        if (failed)
            f = read_failure(r);
        else
            value = r.take(read_value<std::uint64_t>(r));
        r.expect_end();
        round rd;
        {
            std::lock_guard lock(g_mutex);
            auto it = g_rounds.find(call);
            if (it == g_rounds.end() || !it->second.folded)
                throw wire_error(fmt::format("all_reduce result for call #{}, which this rank "
                                             "has not sent up",
                                             call));
            rd = std::move(it->second);
            g_rounds.erase(it);
        }
        return deliver(call, rd, value, f ? &*f : nullptr);
    }
    const auto kids = children_of(st.rank, st.size);
    std::size_t at = 0;
    while (at < kids.size() && kids[at] != in.source)
        ++at;
    if (at == kids.size())
        throw wire_error(
            fmt::format("all_reduce value from rank {}, not a child of this rank", in.source));
    part p;
    p.arrived = true;
    r.read(&p.kind, sizeof p.kind);
    p.type = read_value<std::string>(r);
    p.op = read_value<std::string>(r);
    if (failed) {
        p.failed = read_failure(r);
    } else {
        auto bytes = r.take(read_value<std::uint64_t>(r));
        p.value.assign(bytes.begin(), bytes.end());
    }
    r.expect_end();
    round ready;
    {
        std::lock_guard lock(g_mutex);
        round& rd = round_of(call);
        if (rd.folded || rd.children[at].arrived)
            throw wire_error(fmt::format("a second all_reduce value for call #{} from rank {}",
                                         call, in.source));
        rd.children[at] = std::move(p);
        ++rd.arrived;
        if (!take_if_complete(call, rd, ready))
            return;
    }
    fold_round(call, ready);
}

const std::uint64_t g_message_id = register_handler("prema::all_reduce", &on_message);
std::uint64_t message_id() {
    return g_message_id;
}

} // namespace

all_reduce_kind make_all_reduce_kind(const char* type, const char* op,
                                     byte_vector (*fold)(std::span<const byte_vector>)) {
    return {stable_hash(std::string(type) + '|' + op), type, op, fold};
}

void all_reduce_slot::complete(std::span<const std::byte> result, std::exception_ptr error) {
    std::coroutine_handle<> waiter;
    {
        std::lock_guard lock(mutex_);
        result_.assign(result.begin(), result.end());
        error_ = std::move(error);
        done_ = true;
        waiter = std::exchange(waiter_, nullptr);
    }
    if (waiter)
        waiter.resume(); // on this worker, as a call's reply resumes its caller
}

bool all_reduce_slot::done() const {
    std::lock_guard lock(mutex_);
    return done_;
}

bool all_reduce_slot::wait(std::coroutine_handle<> h) {
    std::lock_guard lock(mutex_);
    if (done_)
        return false;
    waiter_ = h;
    return true;
}

std::shared_ptr<all_reduce_slot> start_all_reduce(const all_reduce_kind& kind, byte_vector value) {
    auto slot = std::make_shared<all_reduce_slot>();
    const std::uint64_t call = g_next_call.fetch_add(1, std::memory_order_relaxed);
    round ready;
    {
        std::lock_guard lock(g_mutex);
        round& rd = round_of(call);
        rd.kind = &kind;
        rd.local = slot;
        rd.own = std::move(value);
        if (!take_if_complete(call, rd, ready))
            return slot;
    }
    fold_round(call, ready);
    return slot;
}

void reset_all_reduces() {
    std::lock_guard lock(g_mutex);
    g_rounds.clear();
    g_next_call.store(0, std::memory_order_relaxed);
}

std::vector<std::string> describe_open_all_reduces() {
    auto& st = state();
    const auto kids = children_of(st.rank, st.size);
    std::vector<std::string> lines;
    std::lock_guard lock(g_mutex);
    for (auto& [call, rd] : g_rounds) {
        std::string what = rd.kind ? show(rd.kind->type, rd.kind->op) : "all_reduce";
        std::vector<int> missing;
        for (std::size_t i = 0; i < rd.children.size(); ++i)
            if (!rd.children[i].arrived)
                missing.push_back(kids[i]);
        if (!rd.kind)
            lines.push_back(fmt::format("all_reduce call #{} of this phase: not called on this "
                                        "rank, which other ranks' values wait for",
                                        call));
        else if (rd.folded)
            lines.push_back(fmt::format("{} call #{} of this phase: awaits the result from rank {}",
                                        what, call, parent_of(st.rank, st.size)));
        else
            lines.push_back(fmt::format("{} call #{} of this phase: awaits the value(s) of rank(s) "
                                        "{} (and of the ranks below them in the tree)",
                                        what, call, fmt::join(missing, ", ")));
    }
    return lines;
}

} // namespace prema::detail
