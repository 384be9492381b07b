#include "bag.hpp"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include <cereal/cereal.hpp>
#include <prema/prema.hpp>

namespace uts {

namespace {

bag_settings settings;
std::atomic<std::uint64_t> nodes_counted{0}, leaves_counted{0};
std::atomic<std::int32_t> deepest{0};
// Bags whose next chunk this rank queued and that have not started it here: what an idle rank
// could take from this one. A bag the balancer moves away is counted down by its new rank.
std::atomic<int> waiting{0};
std::atomic<std::uint64_t> given{0};

struct bag {
    std::vector<node> nodes; // a stack: the newest (deepest) at the back

    bag() = default;
    explicit bag(std::vector<node> n) : nodes(std::move(n)) {}

    // What the balancer weighs a pending chunk by (a node's subtree is unknown: one each).
    double load() const { return double(nodes.size()); }

    // The oldest eighth of the stack (at least one node), nearest the root: where a tree whose
    // subtrees shrink with depth keeps most of its work, so the new bag is worth taking. The
    // running bag keeps enough to go on with: when it gave half, it kept only deep nodes, emptied
    // within its turn, and each turn made and destroyed a bag (T1L, 2 ranks: 16,000 to 23,000
    // bags a rank against 200, and 4% of the efficiency).
    std::vector<node> split() {
        auto oldest = std::ptrdiff_t(std::max<std::size_t>(1, nodes.size() / 8));
        std::vector<node> given(nodes.begin(), nodes.begin() + oldest);
        nodes.erase(nodes.begin(), nodes.begin() + oldest);
        return given;
    }

    // Nodes are trivially copyable: they migrate as one block of bytes, not field by field.
    template <class Archive> void serialize(Archive& ar) {
        std::uint64_t n = nodes.size();
        ar(n);
        nodes.resize(n);
        ar(cereal::binary_data(nodes.data(), n * sizeof(node)));
    }
};

void counted_down() {
    waiting.fetch_sub(1, std::memory_order_relaxed);
}

prema::task<> expand(bag& b, prema::mobile_ptr<bag> self, int queued_on);

// Queues the bag's next chunk. Sent, not awaited: the handler that calls this is about to end,
// and a yield point here would only hold the bag (and keep it from moving) longer.
void queue(prema::mobile_ptr<bag> b) {
    waiting.fetch_add(1, std::memory_order_relaxed);
    (void)prema::send(b, prema::fn<&expand>, b, prema::rank());
}

void add(const tally& t) {
    nodes_counted.fetch_add(t.nodes, std::memory_order_relaxed);
    leaves_counted.fetch_add(t.leaves, std::memory_order_relaxed);
    auto d = deepest.load(std::memory_order_relaxed);
    while (t.max_height > d && !deepest.compare_exchange_weak(d, t.max_height))
        ;
}

// Part of a bag handed to this rank as a task: it becomes a bag here.
void start_bag(std::vector<node> nodes) {
    queue(prema::make_mobile<bag>(std::move(nodes)));
}

// A bag's turn: chunks until the bag is empty or the quantum is over, topping up the waiting
// bags after each. Then it sends itself the rest, as a message any policy may move. Between
// chunks should_yield() also serves steal requests (from the waiting bags). A turn per quantum,
// not per chunk: every message to a bag costs a few microseconds when its data has gone cold (its
// route, its place in the balancer's index, its frame), 6% of a 100 us chunk on 2 ranks.
// `queued_on` is the rank that counted this turn as waiting.
prema::task<> expand(bag& b, prema::mobile_ptr<bag> self, int queued_on) {
    if (queued_on == prema::rank())
        counted_down();
    else // the balancer moved the bag here
        (void)prema::send(queued_on, prema::fn<&counted_down>);
    tally t;
    do {
        settings.shape->expand(b.nodes, t, settings.chunk);
        if (settings.give_on_demand && b.nodes.size() >= 2 && prema::lb::demand() > 0) {
            given.fetch_add(1, std::memory_order_relaxed);
            prema::spawn_anywhere(prema::fn<&start_bag>, b.split());
        }
        while (waiting.load(std::memory_order_relaxed) < settings.reserve && b.nodes.size() >= 2)
            queue(prema::make_mobile<bag>(b.split()));
    } while (!b.nodes.empty() && !prema::should_yield());
    add(t);
    if (b.nodes.empty()) {
        co_await prema::destroy(self); // once this handler ends
        co_return;
    }
    queue(self);
}

} // namespace

void prepare(const bag_settings& s) {
    settings = s;
    nodes_counted = 0;
    leaves_counted = 0;
    deepest = 0;
    waiting = 0;
    given = 0;
}

void plant_root() {
    queue(prema::make_mobile<bag>(std::vector<node>{settings.shape->root()}));
}

tally local_tally() {
    return {nodes_counted.load(), leaves_counted.load(), deepest.load()};
}

std::uint64_t local_given() {
    return given.load();
}

} // namespace uts
