// Decision logic of the shipped load-balancing policies, on a fake cluster of ranks inside one
// process: no MPI, no threads. Each fake rank is an lb::context over a map of fake objects
// (pending handlers, at most one running); policy messages and migrating objects travel through
// an in-process mailbox; a round is dist_balance() on every rank, delivery, then one step of
// work (a running handler finishes, free workers start pending ones).
//
// Checked: nothing is ever lost or duplicated (objects and handlers conserved every round),
// all work finishes, the receiver-initiated policies only move work from ranks that can spare
// it to idle ranks, idle ranks back off, master_worker funnels through rank 0, heat_diffusion
// moves load along mesh edges until balanced, and `none` moves nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <prema/config.hpp>
#include <prema/lb/scheduler.hpp>

#include "lb/heat_diffusion_math.hpp"
#include "lb/policies.hpp"

namespace lb = prema::lb;
using prema::object_id;

namespace {

struct fake_object {
    object_id id;
    int pending = 0;   // handlers not started
    int running = 0;   // 0 or 1: handlers of one object run one at a time
    int done = 0;      // handlers finished
    double weight = 1; // load of one pending handler
};

// One migration, with the state of both ranks at the moment the policy asked for it.
struct migration {
    int from, to;
    double load;      // pending load of the object moved
    double to_load;   // destination's pending load
    int to_running;   // destination's running handlers
    int to_incoming;  // objects already travelling to the destination
    int from_objects; // source's objects with pending work (before the move)
    int from_free;    // source's free workers
};

enum class delivery {
    all,    // every message (and migrating object) arrives before the next round, in order
    random, // each takes 0 to 2 rounds to arrive, in order per (sender, receiver) pair only
};

class cluster;

class fake_rank final : public lb::context {
  public:
    fake_rank(cluster& c, int me) : c_(c), me_(me) {}

    void send(int rank, std::span<const std::byte> bytes) override;
    bool migrate(object_id object, int rank) override;
    std::vector<lb::object_load> work_map() const override {
        std::vector<lb::object_load> v;
        for (auto& [id, o] : objects)
            if (o.pending > 0)
                v.push_back({id, o.pending * o.weight, o.pending});
        std::sort(v.begin(), v.end(), [](auto& a, auto& b) {
            return a.load != b.load ? a.load > b.load : a.object < b.object;
        });
        return v;
    }
    double local_load() const override {
        double sum = 0;
        for (auto& [id, o] : objects)
            sum += o.pending * o.weight;
        return sum;
    }
    int running() const override {
        int n = 0;
        for (auto& [id, o] : objects)
            n += o.running;
        return n;
    }
    int rank() const override { return me_; }
    int ranks() const override;
    int workers() const override;
    const prema::config& options() const override;
    void note_answer_wait(double seconds) override {
        ++answers;
        CHECK(seconds >= 0);
    }

    // One step of work: running handlers finish, then free workers start pending ones.
    void work() {
        for (auto& [id, o] : objects)
            if (o.running) {
                o.running = 0;
                ++o.done;
            }
        int free = workers();
        for (auto& [id, o] : objects)
            if (free > 0 && o.pending > 0) {
                --o.pending;
                o.running = 1;
                --free;
            }
    }

    std::map<object_id, fake_object> objects;
    int sent = 0, answers = 0;

  private:
    cluster& c_;
    int me_;
};

struct envelope {
    int from, to;
    std::vector<std::byte> bytes; // a policy message, or
    bool arrival = false;         // an object that migrates
    fake_object object;
    int due = 0; // the round it arrives in (delivery::random)
};

class cluster {
  public:
    cluster(const std::string& policy, int ranks, int workers, prema::config cfg = {},
            unsigned seed = 1)
        : cfg_(std::move(cfg)), rng_(seed) {
        cfg_.workers = workers;
        cfg_.lb = policy;
        auto make = prema::detail::builtin_policies().at(policy);
        for (int r = 0; r < ranks; ++r) {
            ranks_.push_back(std::make_unique<fake_rank>(*this, r));
            policies_.push_back(make());
            policies_.back()->attach(*ranks_.back());
        }
    }

    // A new object on `rank` with `handlers` pending handlers of `weight` each.
    void add(int rank, int handlers = 1, double weight = 1) {
        object_id id{rank, 0, ++serial_};
        ranks_[std::size_t(rank)]->objects[id] = fake_object{id, handlers, 0, 0, weight};
        objects_ += 1;
        handlers_ += handlers;
    }

    void balance() {
        for (auto& p : policies_)
            p->dist_balance();
    }

    // Delivers every message (delivery::all), or those due by this round (random); either way
    // including the ones sent while delivering.
    void deliver(delivery mode = delivery::all) {
        if (mode == delivery::all) {
            for (int n = 0; !mail_.empty(); ++n) {
                REQUIRE_MESSAGE(n < 100000, "policy messages never stop");
                auto e = std::move(mail_.front());
                mail_.pop_front();
                arrive(std::move(e));
            }
            return;
        }
        std::deque<envelope> kept;
        for (int n = 0; !mail_.empty(); ++n) { // includes messages sent while delivering
            REQUIRE_MESSAGE(n < 100000, "policy messages never stop");
            auto e = std::move(mail_.front());
            mail_.pop_front();
            if (e.due > now_)
                kept.push_back(std::move(e));
            else
                arrive(std::move(e));
        }
        mail_ = std::move(kept);
    }

    // Queues a message or a migrating object, due 0 to 2 rounds from now, not before anything
    // queued earlier between the same two ranks.
    void post(envelope e) {
        int& last = due_[{e.from, e.to}];
        e.due = last = std::max(last, now_ + int(rng_() % 3));
        mail_.push_back(std::move(e));
    }

    void work() {
        for (auto& r : ranks_)
            r->work();
    }

    // One round, with a short sleep so that every policy timer (1 us periods) has expired.
    void round(delivery mode = delivery::all, bool with_work = true) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        ++now_;
        balance();
        deliver(mode);
        if (with_work)
            work();
        check();
    }

    bool finished() const {
        for (auto& r : ranks_)
            for (auto& [id, o] : r->objects)
                if (o.pending || o.running)
                    return false;
        for (auto& e : mail_)
            if (e.arrival)
                return false;
        return true;
    }

    // Rounds until all work is done; returns how many it took.
    int run(delivery mode = delivery::all, int limit = 20000) {
        int rounds = 0;
        while (!finished()) {
            REQUIRE_MESSAGE(++rounds < limit, "work never finishes");
            round(mode);
        }
        deliver(); // answers still travelling
        check();
        return rounds;
    }

    // Every object exactly once (on a rank or travelling), every handler pending, running or
    // done exactly once.
    void check() {
        std::set<object_id> seen;
        long objects = 0, handlers = 0, duplicates = 0;
        auto count = [&](const fake_object& o) {
            duplicates += !seen.insert(o.id).second;
            ++objects;
            handlers += o.pending + o.running + o.done;
        };
        for (auto& r : ranks_)
            for (auto& [id, o] : r->objects) {
                CHECK(id == o.id);
                count(o);
            }
        for (auto& e : mail_)
            if (e.arrival)
                count(e.object);
        if (duplicates || objects != objects_ || handlers != handlers_) {
            FAIL_CHECK("lost or duplicated work: "
                       << objects << " objects (want " << objects_ << "), " << handlers
                       << " handlers (want " << handlers_ << "), " << duplicates << " duplicates");
        }
    }

    int incoming(int rank) const {
        return int(std::count_if(mail_.begin(), mail_.end(),
                                 [&](auto& e) { return e.arrival && e.to == rank; }));
    }

    long done() const {
        long n = 0;
        for (auto& r : ranks_)
            for (auto& [id, o] : r->objects)
                n += o.done;
        return n;
    }

    int messages() const {
        int n = 0;
        for (auto& r : ranks_)
            n += r->sent;
        return n;
    }

    fake_rank& at(int r) { return *ranks_[std::size_t(r)]; }
    int size() const { return int(ranks_.size()); }
    const prema::config& options() const { return cfg_; }
    long handlers() const { return handlers_; }

    std::vector<double> loads() const {
        std::vector<double> v;
        for (auto& r : ranks_)
            v.push_back(r->local_load());
        return v;
    }

    std::vector<migration> migrations;
    std::deque<envelope> mail_;

  private:
    void arrive(envelope e) {
        auto& to = *ranks_[std::size_t(e.to)];
        if (e.arrival) {
            CHECK(to.objects.count(e.object.id) == 0);
            to.objects[e.object.id] = e.object;
        } else {
            policies_[std::size_t(e.to)]->receive(e.from, e.bytes);
        }
    }

    prema::config cfg_;
    std::mt19937 rng_;
    std::vector<std::unique_ptr<fake_rank>> ranks_;
    std::vector<std::unique_ptr<lb::scheduler>> policies_;
    std::uint64_t serial_ = 0;
    long objects_ = 0, handlers_ = 0;
    int now_ = 0;
    std::map<std::pair<int, int>, int> due_;
};

void fake_rank::send(int rank, std::span<const std::byte> bytes) {
    REQUIRE(rank >= 0);
    REQUIRE(rank < c_.size());
    CHECK(rank != me_);
    ++sent;
    c_.post({me_, rank, {bytes.begin(), bytes.end()}, false, {}});
}

// As the runtime: only an object that lives here, has pending work and runs nothing moves.
bool fake_rank::migrate(object_id id, int rank) {
    auto it = objects.find(id);
    if (it == objects.end() || rank == me_ || rank < 0 || rank >= c_.size() ||
        it->second.pending == 0 || it->second.running)
        return false;
    auto& to = c_.at(rank);
    c_.migrations.push_back({me_, rank, it->second.pending * it->second.weight, to.local_load(),
                             to.running(), c_.incoming(rank), int(work_map().size()),
                             workers() - running()});
    c_.post({me_, rank, {}, true, it->second});
    objects.erase(it);
    return true;
}

int fake_rank::ranks() const {
    return c_.size();
}
int fake_rank::workers() const {
    return c_.options().workers;
}
const prema::config& fake_rank::options() const {
    return c_.options();
}

prema::config fast() {
    prema::config cfg;
    cfg.lb_period_us = 1; // back-off pauses and heat_diffusion rounds of microseconds
    return cfg;
}

// Rounds a static placement takes: each object's handlers run one after another, and the last
// round only finishes the last handlers.
int static_rounds(cluster& c) {
    int worst = 0;
    for (int r = 0; r < c.size(); ++r) {
        int total = 0, longest = 0;
        for (auto& [id, o] : c.at(r).objects) {
            total += o.pending;
            longest = std::max(longest, o.pending);
        }
        worst = std::max(
            worst, std::max(longest, (total + c.options().workers - 1) / c.options().workers));
    }
    return worst + 1;
}

const std::vector<std::string> balancing = {"work_stealing", "diffusion", "master_worker",
                                            "heat_diffusion"};

} // namespace

TEST_CASE("the shipped policies are all there") {
    auto p = prema::detail::builtin_policies();
    for (auto name : balancing)
        CHECK(p.count(name) == 1);
    CHECK(p.count("none") == 1);
}

TEST_CASE("the default scheduler is one FIFO") {
    struct handler : lb::ready_handler {
        explicit handler(std::uint64_t n) : ready_handler(object_id{0, 0, n}, double(n)) {}
    };
    lb::scheduler s;
    handler a(1), b(2), c(3);
    s.push(0, &a);
    s.push(1, &b);
    CHECK(s.pop(1) == &a);
    s.push(0, &c);
    CHECK(s.pop(0) == &b);
    CHECK(s.pop(0) == &c);
    CHECK(s.pop(0) == nullptr);
}

TEST_CASE("none never moves anything and sends nothing") {
    cluster c("none", 4, 1, fast());
    for (int i = 0; i < 40; ++i)
        c.add(0);
    int want = static_rounds(c);
    CHECK(c.run() == want);
    CHECK(c.migrations.empty());
    CHECK(c.messages() == 0);
    CHECK(c.done() == 40);
}

TEST_CASE("every policy does all work exactly once, whatever the cluster and delivery") {
    auto names = balancing;
    names.push_back("none");
    for (auto& name : names)
        for (int ranks : {1, 2, 3, 4, 7, 9})
            for (int workers : {1, 2})
                for (auto mode : {delivery::all, delivery::random}) {
                    CAPTURE(name);
                    CAPTURE(ranks);
                    CAPTURE(workers);
                    CAPTURE(int(mode));
                    cluster c(name, ranks, workers, fast(), unsigned(ranks * 31 + workers));
                    // Skewed: rank 0 gets most objects, a few objects carry several handlers,
                    // weights differ.
                    std::mt19937 rng(unsigned(ranks * 7 + workers));
                    for (int i = 0; i < 60; ++i) {
                        int r = rng() % 4 ? 0 : int(rng() % unsigned(ranks));
                        c.add(r, rng() % 5 ? 1 : 3, 0.5 + double(rng() % 4));
                    }
                    int fixed = static_rounds(c);
                    int rounds = c.run(mode);
                    CHECK(c.done() == c.handlers());
                    if (name == "none" || ranks == 1) {
                        CHECK(c.migrations.empty());
                        CHECK(rounds == fixed);
                    } else if (ranks >= 3) {
                        MESSAGE(name << " " << ranks << "x" << workers << " mode " << int(mode)
                                     << ": " << rounds << " rounds vs " << fixed << " static, "
                                     << c.migrations.size() << " migrations, " << c.messages()
                                     << " messages");
                        CHECK(!c.migrations.empty());
                        CHECK(rounds < fixed);
                    }
                }
}

TEST_CASE("work_stealing and diffusion move work from a loaded rank to idle ranks only") {
    for (std::string name : {"work_stealing", "diffusion"})
        for (int workers : {1, 2})
            for (auto mode : {delivery::all, delivery::random}) {
                CAPTURE(name);
                CAPTURE(workers);
                CAPTURE(int(mode));
                cluster c(name, 5, workers, fast(), unsigned(workers));
                for (int i = 0; i < 50; ++i)
                    c.add(0);
                // Without work, every idle rank gets exactly one object and then stops asking.
                for (int i = 0; i < 200; ++i)
                    c.round(mode, false);
                c.deliver();
                for (int r = 1; r < 5; ++r)
                    CHECK(c.at(r).objects.size() == 1);
                CHECK(c.at(0).objects.size() == 46);
                int before = c.messages();
                for (int i = 0; i < 50; ++i)
                    c.round(mode, false);
                CHECK(c.messages() == before); // nobody is hungry: silence
                // Then the work runs out everywhere.
                c.run(mode);
                for (auto& m : c.migrations) {
                    CHECK(m.to_load == 0);               // the receiver had nothing pending
                    CHECK(m.to_running < workers);       // and a free worker
                    CHECK(m.from_objects > m.from_free); // the giver could spare it
                    if (mode == delivery::all)
                        CHECK(m.to_incoming == 0);
                }
            }
}

TEST_CASE("a rank with nothing to spare is never robbed") {
    for (std::string name : {"work_stealing", "diffusion", "master_worker"}) {
        CAPTURE(name);
        cluster c(name, 4, 2, fast());
        c.add(0, 5); // one object with a long queue: one worker can run it, nobody else
        c.add(0, 5);
        for (int i = 0; i < 100; ++i)
            c.round(delivery::all, false);
        CHECK(c.migrations.empty());
        CHECK(c.at(0).objects.size() == 2);
    }
}

// Runs `name` on `ranks` idle ranks for 1000 rounds and returns the messages sent. Back-off
// pauses last a second and more: far longer than this.
int idle_messages(const std::string& name, int ranks) {
    prema::config slow;
    slow.lb_period_us = 1000000;
    cluster c(name, ranks, 1, slow);
    for (int i = 0; i < 1000; ++i) {
        c.balance();
        c.deliver();
    }
    return c.messages();
}

TEST_CASE("idle ranks back off: refusals do not flood the network") {
    for (std::string name : {"work_stealing", "master_worker"})
        for (int ranks : {1, 2, 4, 8}) {
            CAPTURE(name);
            CAPTURE(ranks);
            // Before its first pause a rank asks about once per other rank; each question
            // gets one answer.
            int n = idle_messages(name, ranks);
            CHECK(n <= 2 * ranks * (ranks - 1));
            CHECK((ranks == 1 ? n == 0 : n > 0));
        }
}

// Regression: when every neighbour reported load 0, diffusion asked nobody and so never
// counted a refusal: each idle rank queried its whole neighbourhood every period, forever.
TEST_CASE("diffusion: idle ranks back off too") {
    for (int ranks : {2, 4, 8}) {
        CAPTURE(ranks);
        // A query round costs 2 messages per neighbour: allow a few rounds per rank.
        CHECK(idle_messages("diffusion", ranks) <= 4 * ranks * (ranks - 1));
    }
}

TEST_CASE("master_worker funnels extra objects to rank 0 and hands them out on request") {
    for (int workers : {1, 2})
        for (auto mode : {delivery::all, delivery::random}) {
            CAPTURE(workers);
            CAPTURE(int(mode));
            cluster c("master_worker", 4, workers, fast());
            for (int i = 0; i < 30; ++i)
                c.add(2);
            c.balance();
            c.deliver();
            // Rank 2 keeps one object per worker, the rest went to the master.
            CHECK(c.at(2).work_map().size() == std::size_t(workers));
            for (auto& m : c.migrations)
                if (m.from == 2)
                    CHECK(m.to == 0);
            for (int i = 0; i < 100; ++i)
                c.round(mode, false);
            c.deliver();
            // Every rank has work now; the master holds the pool.
            for (int r = 1; r < 4; ++r)
                CHECK(c.at(r).local_load() > 0);
            CHECK(c.at(0).objects.size() >= 30 - 3 * std::size_t(workers));
            c.run(mode);
            bool handed_out = false;
            for (auto& m : c.migrations) {
                CHECK((m.from == 0 || m.to == 0)); // everything goes through the master
                if (m.from == 0) {
                    handed_out = true;
                    CHECK(m.to_load == 0); // only to a rank that ran dry and asked
                }
            }
            CHECK(handed_out);
        }
}

TEST_CASE("heat_diffusion moves load along mesh edges until balanced") {
    struct shape {
        int ranks, hot;
        double weight;
    };
    for (auto s :
         {shape{9, 0, 1}, shape{9, 8, 1}, shape{6, 2, 0.5}, shape{5, 0, 1}, shape{16, 5, 2}}) {
        CAPTURE(s.ranks);
        CAPTURE(s.hot);
        cluster c("heat_diffusion", s.ranks, 1, fast());
        for (int i = 0; i < 10 * s.ranks; ++i)
            c.add(s.hot, 1, s.weight);
        auto mesh = prema::detail::heat::make_mesh(s.ranks);
        auto imbalance = [&] {
            auto l = c.loads();
            double sum = 0, most = 0;
            for (double x : l) {
                sum += x;
                most = std::max(most, x);
            }
            return most / (sum / double(l.size()));
        };
        CHECK(imbalance() == doctest::Approx(s.ranks));
        int rounds = 0;
        while (imbalance() > 1.25 && rounds < 500) {
            c.round(delivery::all, false);
            ++rounds;
        }
        MESSAGE(s.ranks << " ranks, hot rank " << s.hot << ": balanced to " << imbalance() << " in "
                        << rounds << " rounds, " << c.migrations.size() << " migrations");
        CHECK(imbalance() <= 1.25);
        for (auto& m : c.migrations) {
            auto nb = mesh.neighbours(m.from);
            CHECK(std::find(nb.begin(), nb.end(), m.to) != nb.end());
        }
        // Once balanced it stays put: no object ping-pongs between neighbours.
        std::size_t moved = c.migrations.size();
        for (int i = 0; i < 100; ++i)
            c.round(delivery::all, false);
        CHECK(c.migrations.size() <= moved + std::size_t(s.ranks));
        CHECK(imbalance() <= 1.25);
    }
}

TEST_CASE("heat_diffusion finishes sooner than static placement") {
    cluster c("heat_diffusion", 9, 1, fast());
    for (int i = 0; i < 90; ++i)
        c.add(4);
    int fixed = static_rounds(c);
    int rounds = c.run();
    CHECK(c.done() == 90);
    CHECK(rounds < fixed / 2);
}
