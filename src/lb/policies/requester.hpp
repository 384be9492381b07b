// requester: what the receiver-initiated policies share. A rank with nothing pending and a
// worker free asks someone for one object; the asked rank gives its heaviest object whose
// handlers have not started, if it has more pending objects than free workers, else says no.
// Consecutive refusals back off exponentially so that an idle job does not flood the network.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "prema/lb/scheduler.hpp"

namespace prema::detail {

class requester : public lb::scheduler {
  protected:
    enum class kind : std::uint8_t { request, granted, refused, query, load };
    struct msg {
        kind k;
        double load;
    };
    using clock = std::chrono::steady_clock;

    // Requests are served, replies noted; policies with more message kinds extend this.
    void receive(int from, std::span<const std::byte> bytes) override {
        auto m = decode<msg>(bytes);
        if (m.k == kind::request)
            serve(from);
        else
            answered(m.k);
    }

    // Whether this rank should look for work now.
    bool hungry() const {
        return !waiting_ && clock::now() >= quiet_until_ && local_load() == 0 &&
               running() < workers() && ranks() > 1;
    }

    void ask(int victim) {
        waiting_ = true;
        asked_at_ = clock::now();
        send_to(victim, msg{kind::request, 0});
    }

    // Gives one object to `to` if this rank can spare it; answers either way.
    void serve(int to) {
        auto objects = work_map();
        int spare = int(objects.size()) - (workers() - running());
        if (spare > 0)
            for (auto& o : objects)
                if (migrate(o.object, to)) {
                    send_to(to, msg{kind::granted, 0});
                    return;
                }
        send_to(to, msg{kind::refused, local_load()});
    }

    // A reply to ask().
    void answered(kind k) {
        waiting_ = false;
        note_answer_wait(std::chrono::duration<double>(clock::now() - asked_at_).count());
        if (k == kind::granted)
            refusals_ = 0;
        else
            back_off(1);
    }

    // `n` ranks had nothing to give: after as many refusals as there are other ranks, pause
    // for a number of periods that doubles (up to 32) with each further refusal.
    void back_off(int n) {
        refusals_ += n;
        if (refusals_ >= ranks() - 1) {
            auto pause = std::chrono::microseconds(options().lb_period_us) *
                         (1 << std::min(refusals_ - ranks() + 1, 5));
            quiet_until_ = clock::now() + pause;
        }
    }

    // The other ranks in a random order, one per call, reshuffled after each full sweep: a
    // refusal streak long enough to back off has then asked every rank once.
    int next_victim() {
        if (sweep_.empty()) {
            for (int r = 0; r < ranks(); ++r)
                if (r != rank())
                    sweep_.push_back(r);
            std::shuffle(sweep_.begin(), sweep_.end(), rng_);
        }
        int r = sweep_.back();
        sweep_.pop_back();
        return r;
    }

    // Another rank than this one, at random.
    int random_other() {
        std::uniform_int_distribution<int> d(0, ranks() - 2);
        int r = d(rng_);
        return r >= rank() ? r + 1 : r;
    }

    std::mt19937 rng_{std::random_device{}()};

  private:
    std::vector<int> sweep_;
    bool waiting_ = false;
    int refusals_ = 0;
    clock::time_point asked_at_{}, quiet_until_{};
};

} // namespace prema::detail
