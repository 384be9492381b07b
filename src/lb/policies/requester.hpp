// requester: what the receiver-initiated policies share. A rank with nothing pending and a
// worker free asks someone for work, saying how many objects it wants; the asked rank grants
// half of its spare objects (those beyond one per free worker), heaviest first, at most as many
// as asked, or says no. Its cost is O(k log n) on the MPI thread for k objects granted out of n.
// Refusals back off: after a few in a row (not one per other rank: that is thousands in a large
// job) the rank pauses for a number of periods that doubles with each further refusal.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

#include "prema/lb/scheduler.hpp"

namespace prema::detail {

class requester : public lb::scheduler {
  protected:
    // lifeline, dealt, withdrawn: a request along a lifeline, the work pushed back on it, and
    // the request taken back (lifeline.cpp).
    enum class kind : std::uint8_t {
        request,
        granted,
        refused,
        query,
        load,
        lifeline,
        dealt,
        withdrawn
    };
    struct msg {
        kind k;
        std::int32_t count; // request, lifeline: objects wanted; granted, dealt: objects sent
        double load;        // refused, load: the sender's pending load
    };
    using clock = std::chrono::steady_clock;

    // Refusals in a row (fewer in a smaller job) before an idle rank pauses.
    static constexpr int attempts = 4;

    // Requests are served, replies noted; policies with more message kinds extend this.
    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        if (m.k == kind::request)
            serve(from, m.count);
        else
            answered(m.k);
    }

    // Whether this rank may send a request now: no answer awaited, no pause.
    bool may_ask() const { return !waiting_ && clock::now() >= quiet_until_ && ranks() > 1; }
    // Whether this rank should look for work now.
    bool hungry() const { return may_ask() && local_load() == 0 && running() < workers(); }

    // What a thief asks for: objects per free worker, enough to keep it busy for a while
    // without a round trip per object; the victim halves its surplus at most.
    int steal_batch() const { return batch_per_worker * std::max(workers() - running(), 1); }
    static constexpr int batch_per_worker = 16;

    // Asks `victim` for up to `want` objects (at least 1).
    void ask(int victim, int want) {
        waiting_ = true;
        asked_at_ = clock::now();
        send_to(victim, msg{kind::request, std::max(want, 1), 0});
    }

    // Grants `to` up to `want` objects, half of this rank's spare ones rounded up; answers
    // either way. A refused thief is noted as demand (prema::lb::demand), a served one as fed.
    void serve(int to, int want) {
        const int granted = give(to, want);
        if (granted > 0) {
            note_fed(to);
            send_to(to, msg{kind::granted, granted, 0});
        } else {
            note_demand(to, want);
            send_to(to, msg{kind::refused, 0, local_load()});
        }
    }

    // Migrates to `to` up to `want` objects, half of this rank's spare ones (those beyond one
    // per free worker) rounded up, and returns how many moved. Only objects that run nothing
    // move, and at most running() of the heaviest run something, so that many more candidates
    // are enough.
    int give(int to, int want) {
        const int free = workers() - running();
        const auto spare = std::int64_t(work_objects()) - std::max(free, 0);
        int given = 0;
        if (spare > 0) {
            const auto n = std::min<std::int64_t>(std::max(want, 1), (spare + 1) / 2);
            for (auto& o : heaviest(std::size_t(n) + std::size_t(std::max(running(), 0))))
                if (given < n && migrate(o.object, to))
                    ++given;
        }
        return given;
    }

    // A reply to ask() came: another request may go out.
    void replied() {
        waiting_ = false;
        note_answer_wait(std::chrono::duration<double>(clock::now() - asked_at_).count());
    }

    // A reply to ask(), noted for the back-off.
    void answered(kind k) {
        replied();
        if (k == kind::granted)
            refusals_ = 0;
        else
            back_off(1);
    }

    // `n` ranks had nothing to give: after `attempts` refusals in a row (every other rank's
    // in a smaller job), pause for a number of periods that doubles (up to 32) with each
    // further refusal.
    void back_off(int n) {
        refusals_ += n;
        const int tries = std::min(attempts, ranks() - 1);
        if (refusals_ >= tries) {
            auto pause = std::chrono::microseconds(options().lb_period_us) *
                         (1 << std::min(refusals_ - tries, 5));
            quiet_until_ = clock::now() + pause;
        }
    }

    // Another rank than this one, at random.
    int random_other() {
        std::uniform_int_distribution<int> d(0, ranks() - 2);
        int r = d(rng_);
        return r >= rank() ? r + 1 : r;
    }

    std::mt19937 rng_{std::random_device{}()};

  private:
    bool waiting_ = false;
    int refusals_ = 0;
    clock::time_point asked_at_{}, quiet_until_{};
};

} // namespace prema::detail
