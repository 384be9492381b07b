// Decision logic of the shipped load-balancing policies, on a fake cluster of ranks inside one
// process: no MPI, no threads. Each fake rank is an lb::context over a map of fake objects
// (pending handlers, at most one running); policy messages and migrating objects travel through
// an in-process mailbox; a round is dist_balance() on every rank, delivery, then one step of
// work (a running handler finishes, free workers start pending ones).
//
// Checked: nothing is ever lost or duplicated (objects and handlers conserved every round),
// all work finishes, the receiver-initiated policies only move work from ranks that can spare
// it to idle ranks, idle ranks back off, master_worker funnels through rank 0, heat_diffusion
// moves load along mesh edges until balanced, lifeline's idle ranks go quiet and are pushed work
// along their lifelines, and `none` moves nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
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
#include "lb/work_index.hpp"

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
    // The runtime answers heaviest() and work_objects() from an ordered index; this fake sorts
    // every time, but counts as `touched` only the entries it hands the policy: the policy's
    // share of the cost.
    std::vector<lb::object_load> work_map() const override {
        auto v = sorted();
        touched += long(v.size());
        return v;
    }
    std::vector<lb::object_load> heaviest(std::size_t k, double at_most) const override {
        std::vector<lb::object_load> v;
        for (auto& l : sorted())
            if (v.size() < k && l.load <= at_most)
                v.push_back(l);
        touched += long(v.size());
        return v;
    }
    std::size_t work_objects() const override {
        return std::size_t(std::count_if(objects.begin(), objects.end(),
                                         [](auto& o) { return o.second.pending > 0; }));
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
        if (seconds < 0)
            FAIL_CHECK("rank " << me_ << " waited " << seconds << " s for an answer");
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
    int sent = 0, received = 0, answers = 0;
    mutable long touched = 0; // work-map entries handed to the policy

  private:
    std::vector<lb::object_load> sorted() const {
        std::vector<lb::object_load> v;
        for (auto& [id, o] : objects)
            if (o.pending > 0)
                v.push_back({id, o.pending * o.weight, o.pending});
        std::sort(v.begin(), v.end(), [](auto& a, auto& b) {
            return a.load != b.load ? a.load > b.load : a.object < b.object;
        });
        return v;
    }

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
                if (n >= 100000)
                    FAIL("policy messages never stop");
                auto e = std::move(mail_.front());
                mail_.pop_front();
                arrive(std::move(e));
            }
            return;
        }
        std::deque<envelope> kept;
        for (int n = 0; !mail_.empty(); ++n) { // includes messages sent while delivering
            if (n >= 100000)
                FAIL("policy messages never stop");
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
        links.insert({e.from, e.to});
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
            if (++rounds >= limit)
                FAIL("work never finishes");
            round(mode);
        }
        deliver(); // answers still travelling
        check();
        return rounds;
    }

    // Every object exactly once (on a rank or travelling), every handler pending, running or
    // done exactly once. The checks of the harness's invariants, here and below, run millions
    // of times: they test with `if` and report a failure rather than make a doctest assertion
    // each, and allocate nothing per object, since the sanitizers unwind the stack at every
    // allocation (this check's std::set took 20 of the test's 50 s under ASan).
    void check() {
        seen_.clear(); // kept between rounds: no allocation per round or object
        long objects = 0, handlers = 0, misfiled = 0;
        auto count = [&](const fake_object& o) {
            seen_.push_back(o.id);
            ++objects;
            handlers += o.pending + o.running + o.done;
        };
        for (auto& r : ranks_)
            for (auto& [id, o] : r->objects) {
                misfiled += id != o.id;
                count(o);
            }
        for (auto& e : mail_)
            if (e.arrival)
                count(e.object);
        std::sort(seen_.begin(), seen_.end());
        const long duplicates = std::distance(std::unique(seen_.begin(), seen_.end()), seen_.end());
        if (duplicates || misfiled || objects != objects_ || handlers != handlers_) {
            FAIL_CHECK("lost or duplicated work: "
                       << objects << " objects (want " << objects_ << "), " << handlers
                       << " handlers (want " << handlers_ << "), " << duplicates << " duplicates, "
                       << misfiled << " under another object's id");
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
    std::set<std::pair<int, int>> links; // (from, to) of every message and object sent
    std::deque<envelope> mail_;

  private:
    void arrive(envelope e) {
        auto& to = *ranks_[std::size_t(e.to)];
        if (e.arrival) {
            if (to.objects.count(e.object.id))
                FAIL_CHECK("object " << e.object.id.serial << " arrived at rank " << e.to
                                     << ", which holds it already");
            to.objects[e.object.id] = e.object;
        } else {
            ++to.received;
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
    std::vector<object_id> seen_; // check()'s list of every object, sorted
};

void fake_rank::send(int rank, std::span<const std::byte> bytes) {
    if (rank < 0 || rank >= c_.size() || rank == me_)
        FAIL("rank " << me_ << " sent a policy message to rank " << rank << " (of " << c_.size()
                     << ")");
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
                             to.running(), c_.incoming(rank), int(work_objects()),
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
                                            "heat_diffusion", "lifeline"};

} // namespace

TEST_CASE("the shipped policies are all there") {
    auto p = prema::detail::builtin_policies();
    for (auto name : balancing)
        CHECK(p.count(name) == 1);
    CHECK(p.count("none") == 1);
}

// The balancer's ordered work map: what heaviest(), work_objects() and local_load() read.
TEST_CASE("work_index: heaviest first, updated in place, its total exactly 0 when empty") {
    prema::detail::work_index idx;
    auto id = [](std::uint64_t n) { return object_id{0, 0, n}; };
    const double inf = std::numeric_limits<double>::infinity();
    for (std::uint64_t n = 1; n <= 5; ++n)
        idx.update({id(n), 0.25 * double(n), 1}); // exact in binary
    CHECK(idx.size() == 5);
    auto top = idx.heaviest(2, inf);
    REQUIRE(top.size() == 2);
    CHECK(top[0].object == id(5));
    CHECK(top[1].object == id(4));
    idx.update({id(1), 7.0, 3}); // the lightest becomes the heaviest
    CHECK(idx.heaviest(1, inf)[0].object == id(1));
    CHECK(idx.heaviest(1, inf)[0].pending == 3);
    CHECK(idx.size() == 5);
    // Bounded: the heaviest no heavier than 0.8 are 0.75 and 0.5.
    auto fit = idx.heaviest(5, 0.8);
    REQUIRE(fit.size() == 2);
    CHECK(fit[0].object == id(3));
    CHECK(fit[1].object == id(2));
    // Equal loads: by id.
    idx.update({id(9), 0.75, 1});
    auto tie = idx.heaviest(5, 0.75);
    REQUIRE(tie.size() >= 2);
    CHECK(tie[0].object == id(3));
    CHECK(tie[1].object == id(9));
    CHECK(idx.total() == 7.0 + 0.5 + 0.75 + 1.0 + 1.25 + 0.75);
    for (std::uint64_t n : {1, 2, 3, 4, 5, 9})
        idx.update({id(n), 0, 0});
    idx.update({id(42), 0, 0}); // not there: nothing happens
    CHECK(idx.size() == 0);
    CHECK(idx.total() == 0.0); // no rounding left over
    CHECK(idx.heaviest(3, inf).empty());
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
                // Without work, every idle rank gets objects and then stops asking.
                for (int i = 0; i < 200; ++i)
                    c.round(mode, false);
                c.deliver();
                for (int r = 1; r < 5; ++r)
                    CHECK(!c.at(r).objects.empty());
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
                }
            }
}

// A thief says how many objects it wants (16 per free worker); the victim grants half of its
// spare objects (beyond one per free worker of its own), at most that many, in one answer.
// Before, every grant was one object: a hot spot drained one object per request.
TEST_CASE("a steal grant is half the victim's surplus, at most what the thief asks for") {
    struct shape {
        int objects, workers, want;
    };
    for (auto s : {shape{10, 1, 5}, shape{2, 1, 1}, shape{100, 1, 16}, shape{100, 2, 32},
                   shape{41, 2, 20}}) {
        CAPTURE(s.objects);
        CAPTURE(s.workers);
        cluster c("work_stealing", 2, s.workers, fast());
        for (int i = 0; i < s.objects; ++i)
            c.add(0);
        c.at(0).work(); // rank 0's workers each start one object's handler
        c.balance();    // rank 1 is hungry and asks
        c.deliver();
        CHECK(int(c.migrations.size()) == s.want);
        CHECK(int(c.at(1).objects.size()) == s.want);
        CHECK(c.at(1).answers == 1);
    }
}

// serve() copied and sorted the whole work map for every request: a rank with n objects paid
// O(n log n) on the MPI thread per request whatever it granted.
TEST_CASE("serving a request touches the objects granted, not all of them") {
    for (std::string name : {"work_stealing", "diffusion", "lifeline"}) {
        CAPTURE(name);
        cluster c(name, 2, 1, fast());
        for (int i = 0; i < 20000; ++i)
            c.add(0);
        for (int i = 0; i < 4; ++i)
            c.round(delivery::all, false);
        long granted = long(c.migrations.size());
        CHECK(granted > 0);
        CHECK(c.at(0).touched <= 2 * granted + 8);
    }
}

TEST_CASE("a rank with nothing to spare is never robbed") {
    for (std::string name : {"work_stealing", "diffusion", "master_worker", "lifeline"}) {
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
        for (int ranks : {1, 2, 4, 8, 32}) {
            CAPTURE(name);
            CAPTURE(ranks);
            // Before its first pause a rank asks at most 4 times (not once per other rank: in a
            // job of 10,000 ranks that was 9,999 requests); each question gets one answer.
            int n = idle_messages(name, ranks);
            CHECK(n <= 2 * ranks * std::min(ranks - 1, 4));
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

// The master of rank r in a job of p ranks: groups of ceil(sqrt(p)) ranks, the first of each
// is its group's master, rank 0 the master of the group masters.
int master_of(int r, int p) {
    int g = int(std::ceil(std::sqrt(double(p))));
    return r % g != 0 ? r / g * g : r != 0 ? 0 : -1;
}

TEST_CASE("master_worker pools extra objects at the masters and hands them out on request") {
    for (int ranks : {4, 9, 16})
        for (int workers : {1, 2})
            for (auto mode : {delivery::all, delivery::random}) {
                CAPTURE(ranks);
                CAPTURE(workers);
                CAPTURE(int(mode));
                cluster c("master_worker", ranks, workers, fast());
                const int loaded = ranks - 1; // not a master in any of these shapes
                REQUIRE(master_of(loaded, ranks) > 0);
                for (int i = 0; i < 30 * ranks; ++i)
                    c.add(loaded);
                c.balance();
                c.deliver();
                // The loaded rank keeps one object per worker, the rest went to its master.
                CHECK(c.at(loaded).work_map().size() == std::size_t(workers));
                for (int i = 0; i < 100; ++i)
                    c.round(mode, false);
                c.deliver();
                for (int r = 0; r < ranks; ++r)
                    CHECK(c.at(r).local_load() > 0); // every rank has work now
                c.run(mode);
                bool handed_out = false;
                for (auto& m : c.migrations) {
                    // Everything moves between a rank and its master, in either direction.
                    CHECK((master_of(m.from, ranks) == m.to || master_of(m.to, ranks) == m.from));
                    if (master_of(m.to, ranks) == m.from) {
                        handed_out = true;
                        CHECK(m.to_load == 0); // only to a rank that ran dry and asked
                    }
                }
                CHECK(handed_out);
            }
}

// Before, every rank sent its surplus to rank 0 and asked rank 0 for work: rank 0 heard from
// all P - 1 ranks.
TEST_CASE("master_worker: rank 0 hears from about 2 sqrt(P) ranks, not all of them") {
    const int ranks = 64, workers = 1;
    cluster c("master_worker", ranks, workers, fast());
    for (int r = 0; r < ranks; ++r)
        for (int i = 0; i < 3 + r % 5; ++i)
            c.add(r);
    c.run();
    std::set<int> heard; // ranks that sent rank 0 a message or an object
    for (auto [from, to] : c.links)
        if (to == 0)
            heard.insert(from);
    MESSAGE("rank 0 heard from " << heard.size() << " of " << ranks - 1 << " ranks");
    CHECK(heard.size() <= 2 * 8 - 2);
    CHECK(!heard.empty());
}

TEST_CASE("heat_diffusion moves load along mesh edges until balanced") {
    struct shape {
        int ranks, hot;
        double weight;
    };
    for (auto s : {shape{9, 0, 1}, shape{9, 8, 1}, shape{6, 2, 0.5}, shape{5, 0, 1},
                   shape{16, 5, 2}, shape{7, 6, 1}, shape{13, 0, 1}, shape{31, 15, 1}}) {
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
        // Once balanced it settles (a few objects smooth what is left, rounds run on measured
        // loads) and then stays put: no object ping-pongs between neighbours.
        const std::size_t moved = c.migrations.size();
        for (int i = 0; i < 100; ++i)
            c.round(delivery::all, false);
        std::size_t settled = c.migrations.size();
        CHECK(settled <= moved + std::size_t(2 * s.ranks));
        for (int i = 0; i < 300; ++i)
            c.round(delivery::all, false);
        CHECK(c.migrations.size() == settled);
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

// Before, rank 0 queried every rank each round (P - 1 answers) and diffused the whole mesh;
// now each rank exchanges values with its (at most 4) mesh neighbours: what the busiest rank
// handles per round does not grow with P.
TEST_CASE("heat_diffusion: the busiest rank's messages per round do not grow with the job") {
    std::map<int, int> busiest;
    for (int ranks : {4, 7, 8, 13, 16, 64}) {
        CAPTURE(ranks);
        cluster c("heat_diffusion", ranks, 1, fast());
        for (int i = 0; i < 10 * ranks; ++i)
            c.add(ranks / 2);
        std::vector<int> handled(std::size_t(ranks), 0);
        for (int i = 0; i < 40; ++i) {
            for (int r = 0; r < ranks; ++r)
                handled[std::size_t(r)] = c.at(r).sent + c.at(r).received;
            c.round(delivery::all, false);
            for (int r = 0; r < ranks; ++r)
                busiest[ranks] = std::max(busiest[ranks], c.at(r).sent + c.at(r).received -
                                                              handled[std::size_t(r)]);
        }
        MESSAGE(ranks << " ranks: the busiest rank sent and received " << busiest[ranks]
                      << " policy messages in a round");
    }
    CHECK(busiest[64] <= busiest[16]);
    CHECK(busiest[16] <= 100);
}

// The messages each rank sent in every one of `rounds` rounds.
std::vector<std::vector<int>> sent_per_round(cluster& c, int rounds, delivery mode) {
    std::vector<std::vector<int>> out;
    for (int i = 0; i < rounds; ++i) {
        std::vector<int> before;
        for (int r = 0; r < c.size(); ++r)
            before.push_back(c.at(r).sent);
        c.round(mode);
        out.emplace_back();
        for (int r = 0; r < c.size(); ++r)
            out.back().push_back(c.at(r).sent - before[std::size_t(r)]);
    }
    return out;
}

int sum(const std::vector<int>& v) {
    int n = 0;
    for (int x : v)
        n += x;
    return n;
}

// An idle rank makes at most 4 random requests, then one request along each lifeline (at most
// ceil(log2 P)), then sends nothing until work reaches it: no polling of a finished job, and
// none of a rank whose only object cannot be split. work_stealing keeps asking (after pauses).
TEST_CASE("lifeline: idle ranks go quiet once their steals fail") {
    for (int ranks : {2, 3, 7, 8, 13, 32})
        for (auto mode : {delivery::all, delivery::random}) {
            CAPTURE(ranks);
            CAPTURE(int(mode));
            int lifelines = 0;
            while ((1 << lifelines) < ranks)
                ++lifelines;
            const int budget = std::min(ranks - 1, 4) + lifelines;
            SUBCASE("all work done") {
                cluster c("lifeline", ranks, 1, fast(), unsigned(ranks));
                for (int i = 0; i < 3 * ranks; ++i)
                    c.add(0);
                c.run(mode);
                auto per_round = sent_per_round(c, 200, mode);
                for (int i = 20; i < 200; ++i)
                    CHECK(sum(per_round[std::size_t(i)]) == 0);
            }
            SUBCASE("one rank busy with work it cannot spare") {
                cluster c("lifeline", ranks, 1, fast(), unsigned(ranks));
                c.add(0, 1000); // one object, 1000 handlers in a row: nothing to give away
                auto per_round = sent_per_round(c, 200, mode);
                // Each idle rank's requests, and at most one answer to each.
                CHECK(c.messages() <= 2 * (ranks - 1) * budget);
                for (int i = 20; i < 200; ++i)
                    CHECK(sum(per_round[std::size_t(i)]) == 0);
                CHECK(c.migrations.empty());
            }
        }
}

// What the lifelines buy on a finished job of 32 ranks: work_stealing's idle ranks keep asking
// (after pauses of up to 32 periods), lifeline's fall silent after their first idle stretch.
TEST_CASE("a finished job: lifeline falls silent, work_stealing keeps polling") {
    std::map<std::string, int> early, late;
    for (std::string name : {"work_stealing", "lifeline"}) {
        cluster c(name, 32, 1, fast());
        c.run();
        auto per_round = sent_per_round(c, 400, delivery::all);
        for (int i = 0; i < 400; ++i)
            (i < 200 ? early : late)[name] += sum(per_round[std::size_t(i)]);
        MESSAGE(name << ", 32 idle ranks: " << early[name] << " policy messages in rounds 0-199, "
                     << late[name] << " in rounds 200-399");
    }
    CHECK(late["work_stealing"] > 0);
    CHECK(late["lifeline"] == 0);
}

// Ranks 1 and 2 are rank 0's lifeline buddies (hypercube: r xor 2^k), rank 3 is the buddy of 1
// and 2. All go quiet on an empty cluster; then work appears on rank 0 only. Rank 0 pushes it to
// 1 and 2, which push some on to 3: rank 3 says nothing before its work arrives, and no work
// goes back to rank 0 (it withdrew its own lifeline requests).
TEST_CASE("lifeline: a buddy that gets work later pushes it to the waiting rank unasked") {
    for (int workers : {1, 2})
        for (auto mode : {delivery::all, delivery::random}) {
            CAPTURE(workers);
            CAPTURE(int(mode));
            cluster c("lifeline", 4, workers, fast());
            for (int i = 0; i < 50; ++i)
                c.round(mode, false);
            c.deliver();
            const int quiet_3 = c.at(3).sent;
            for (int i = 0; i < 200; ++i)
                c.add(0);
            int rounds = 0;
            while (rounds < 50 && c.at(3).objects.empty()) {
                c.round(mode, false);
                ++rounds;
            }
            CHECK(!c.at(3).objects.empty());
            CHECK(c.at(3).sent == quiet_3);
            c.deliver();
            std::set<std::pair<int, int>> moved;
            for (auto& m : c.migrations)
                moved.insert({m.from, m.to});
            CHECK(moved.count({0, 1}) == 1);
            CHECK(moved.count({0, 2}) == 1);
            for (auto& m : moved) {
                const int from = m.first, to = m.second;
                CAPTURE(from);
                CAPTURE(to);
                CHECK(to != 0);
                CHECK(((from == 0 && to < 3) || (from > 0 && to == 3)));
            }
            c.run(mode);
            CHECK(c.done() == 200);
        }
}
