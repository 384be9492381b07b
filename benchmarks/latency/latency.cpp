// Latency, bandwidth and message rate of PREMA handler messages, measured against raw MPI in the
// same binary and the same job.
//
//   mpirun -np 2 ./latency [--iters 1000] [--json latency.json]      (--help lists every option)
//
// Order of one run: --rounds rounds (default 4) of the ping-pongs, each round raw MPI on
// MPI_COMM_WORLD and then PREMA in each --modes entry, by default auto (the runtime options as
// given, the progress mode left to the runtime as any program gets it; the output names what it
// resolved to), a dedicated progress thread, and inline progress with one worker, each on a
// runtime of its own; then the forwarding hop (3+ ranks) and the message rates. A round runs
// every size with 1/rounds of its round trips, and the medians are over the round trips of all
// rounds: this machine's speed drifts within a job (raw MPI over TCP read 8 to 13.5 us at 8 B in
// successive blocks of 3,000 round trips), and alternating gives raw MPI and PREMA the same
// share of each phase, where one run of each would compare whatever phases they fell in.
//
// Latency: rank 0 sends a payload of N bytes, rank 1 sends it back. Raw MPI uses MPI_Send and
// MPI_Recv. PREMA runs the whole chain in handlers: `ping` runs on rank 1 and co_awaits a send of
// the payload (a std::vector<char>) to `pong` on rank 0, which timestamps the round trip and
// sends the next ping until the count for this size is reached; the entry coroutine then waits
// for quiescence and moves on. Every round trip is timed on its own; the table shows the MEDIAN
// round trip over all timed iterations, halved (half-RTT). Bandwidth is bytes / half-RTT.
//
// From --split-from bytes up (default the eager size), raw MPI also moves the payload as PREMA
// moves one above its eager size for the destination: the payload and a header as two MPI
// messages, the payload's receive posted once the header has arrived. That is the protocol's own
// cost, so the table "Raw MPI as two messages" separates it from what PREMA's steps add.
//
// Message rate: rank 0 sends --rate-count 16-byte messages to rank 1, which counts them. PREMA:
// an unfenced loop of fire-and-forget co_await prema::send, timed on rank 0 from the first send
// until quiescence, four times: to a plain function handler, to a coroutine handler, to a
// mobile object on rank 1, and to 64 mobile objects on rank 1 in turn (no two messages in a row
// to one object: what a message to one of many objects costs, without the runs that consecutive
// messages to one object travel in). The runtime aggregates the messages and applies
// back-pressure itself;
// --rate-fence F adds a prema::call to rank 1 after every F sends.
// Raw MPI: MPI_Isend in windows of --rate-window (MPI_Waitall per window, matching MPI_Irecv
// windows on rank 1), timed on rank 0 from the first send until rank 1's acknowledgement that it
// received them all.
//
// Hand-off: one rank alone (rank 0 on a communicator of its own, its affinity widened to every
// core of the machine, rank 1 asleep meanwhile), one worker, messages to itself sent through MPI
// (--prema-loopback mpi): with dedicated progress each message goes from the worker to the
// progress thread and back, the hand-off that every message from another node pays on a rank
// with cores of its own; inline, the worker does it all. The row is the median time of one
// message (half of a round trip of two), 8 bytes, in both modes, which take turns in --rounds.
//
// Raw MPI at PREMA's size: a PREMA message is more bytes on the wire than its payload (header,
// the vector's length, an object's header), and Open MPI's time depends on those bytes: over
// shared memory a message whose payload fits one 32-byte slot of a fast box with MPI's own
// headers (up to 10 bytes) takes less time than any larger one. Before the rounds, a short chain
// of the smallest payload learns the size of the MPI message of its hops, transport and object
// (wire_size.hpp); each round then also times raw MPI at those two sizes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <mpi.h>
#include <sched.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif
#include <sys/resource.h>
#include <thread>

#include <prema/prema.hpp>

#include "pingpong.hpp"
#include "wire_size.hpp"

namespace {

namespace measure = prema::measure;
using measure::ball;
using measure::ball_ptr;
using measure::mpi_pingpong;
using measure::mpi_split_pingpong;
using measure::summarize;
using stats = measure::rtt_stats;

using clk = std::chrono::steady_clock;

double micros(clk::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

// ---------------------------------------------------------------------------------------------
// Options

struct options {
    int iters = 1000;             // timed round trips per size (fewer above the byte budget)
    int warmup = 100;             // untimed round trips per size, in each round
    int rounds = 4;               // raw MPI and PREMA alternate this many times
    std::size_t budget_mib = 256; // bytes each way per size and layer, caps iters of big sizes
    std::size_t min_bytes = 8, max_bytes = std::size_t{1} << 20;
    int step = 2; // size multiplier
    long rate_count = 1'000'000;
    int rate_window = 256; // raw MPI: MPI_Isend requests per MPI_Waitall
    long rate_fence = 0;   // PREMA: a prema::call round trip to rank 1 every so many sends
    bool latency = true, rate = true, handoff = true;
    std::vector<prema::progress_mode> modes = {prema::progress_mode::automatic,
                                               prema::progress_mode::dedicated,
                                               prema::progress_mode::inline_};
    std::size_t object_max_bytes = 4096; // object ping-pong sizes stop here
    int hop_calls = 500;                 // forwarding measurement (3+ ranks): calls per kind
    std::size_t split_from = 0;          // raw MPI as two messages from here (0: the eager size)
    std::string json;
};

const char* usage_text =
    "usage: mpirun -np 2 latency [options] [--prema-* runtime options]\n"
    "\n"
    "Half round-trip time and bandwidth of raw MPI_Send/MPI_Recv against PREMA handler\n"
    "ping-pong (auto, dedicated and inline progress), and the rate of 16-byte fire-and-forget\n"
    "messages to a function, a coroutine, a mobile object and 64 mobile objects in turn.\n"
    "Latencies are medians over the timed round trips of each size.\n"
    "\n"
    "  --iters N          timed round trips per size (default 1000)\n"
    "  --warmup N         untimed round trips before each size, in each round (default 100)\n"
    "  --rounds R         raw MPI and the PREMA modes take turns R times, each round with\n"
    "                     1/R of the round trips of every size; medians over all rounds\n"
    "                     (default 4)\n"
    "  --budget-mib M     at most M MiB each way per size: sizes above M MiB / iters run\n"
    "                     fewer iterations, never fewer than 100 (default 256)\n"
    "  --min-bytes N      smallest payload (default 8)\n"
    "  --max-bytes N      largest payload (default 1048576)\n"
    "  --step 2|4         size multiplier (default 2)\n"
    "  --rate-count N     messages in the message-rate test (default 1000000)\n"
    "  --rate-window W    raw MPI: MPI_Isend requests per MPI_Waitall (default 256)\n"
    "  --rate-fence F     PREMA: after every F sends, co_await a prema::call to rank 1\n"
    "                     (default 0: none; the runtime's back-pressure bounds memory)\n"
    "  --object-max-bytes N  largest payload of the mobile-object ping-pong (default 4096)\n"
    "  --hop-calls N      with 3+ ranks: calls timed to measure one forwarding hop (default 500)\n"
    "  --split-from N     from N bytes up, also time raw MPI moving the payload as PREMA\n"
    "                     moves a split-phase message: payload, then header, the payload's\n"
    "                     receive posted when the header arrives (default: --prema-eager-bytes)\n"
    "  --no-latency       skip the ping-pong\n"
    "  --no-rate          skip the message rate\n"
    "  --no-handoff       skip the hand-off between a worker and the progress thread\n"
    "  --modes LIST       PREMA progress modes to run, in this order, from auto, dedicated,\n"
    "                     inline (default auto,dedicated,inline); auto reports what it\n"
    "                     resolved to\n"
    "  --json FILE        also write the results as JSON\n"
    "  --help             this text\n"
    "\n"
    "Runtime options (--prema-workers, --prema-eager-bytes, ...) apply to every PREMA run,\n"
    "except that each run sets its progress mode and the inline run always uses 1 worker.\n";

struct bad_option : std::runtime_error {
    using std::runtime_error::runtime_error;
};

long parse_number(std::string_view name, const char* v, long lo, long hi) {
    char* end = nullptr;
    long x = std::strtol(v, &end, 10);
    if (!*v || *end || x < lo || x > hi)
        throw bad_option(std::string(name) + ": '" + v + "' is not an integer in " +
                         std::to_string(lo) + ".." + std::to_string(hi));
    return x;
}

// "auto,inline" -> {automatic, inline_}: each mode once, in the order given.
std::vector<prema::progress_mode> parse_modes(std::string_view list) {
    std::vector<prema::progress_mode> modes;
    for (std::size_t from = 0; from <= list.size();) {
        auto comma = std::min(list.find(',', from), list.size());
        auto name = list.substr(from, comma - from);
        from = comma + 1;
        prema::progress_mode m;
        if (name == "auto")
            m = prema::progress_mode::automatic;
        else if (name == "dedicated")
            m = prema::progress_mode::dedicated;
        else if (name == "inline")
            m = prema::progress_mode::inline_;
        else
            throw bad_option("--modes: '" + std::string(name) +
                             "' is not one of auto, dedicated, inline");
        if (std::find(modes.begin(), modes.end(), m) != modes.end())
            throw bad_option("--modes: " + std::string(name) + " is given twice");
        modes.push_back(m);
    }
    return modes;
}

// Returns false if --help was asked for.
bool parse_options(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto value = [&]() -> const char* {
            if (i + 1 >= argc)
                throw bad_option(std::string(a) + " needs a value");
            return argv[++i];
        };
        if (a == "--help" || a == "-h")
            return false;
        else if (a == "--iters")
            o.iters = int(parse_number(a, value(), 1, 100'000'000));
        else if (a == "--warmup")
            o.warmup = int(parse_number(a, value(), 0, 100'000'000));
        else if (a == "--rounds")
            o.rounds = int(parse_number(a, value(), 1, 1000));
        else if (a == "--budget-mib")
            o.budget_mib = std::size_t(parse_number(a, value(), 1, 1 << 20));
        else if (a == "--min-bytes")
            o.min_bytes = std::size_t(parse_number(a, value(), 1, 1 << 30));
        else if (a == "--max-bytes")
            o.max_bytes = std::size_t(parse_number(a, value(), 1, 1 << 30));
        else if (a == "--step")
            o.step = int(parse_number(a, value(), 2, 4));
        else if (a == "--rate-count")
            o.rate_count = parse_number(a, value(), 1, 1'000'000'000);
        else if (a == "--rate-window")
            o.rate_window = int(parse_number(a, value(), 1, 1 << 20));
        else if (a == "--rate-fence")
            o.rate_fence = parse_number(a, value(), 0, 1'000'000'000);
        else if (a == "--object-max-bytes")
            o.object_max_bytes = std::size_t(parse_number(a, value(), 0, 1 << 30));
        else if (a == "--hop-calls")
            o.hop_calls = int(parse_number(a, value(), 1, 1'000'000));
        else if (a == "--split-from")
            o.split_from = std::size_t(parse_number(a, value(), 1, 1 << 30));
        else if (a == "--no-latency")
            o.latency = false;
        else if (a == "--no-rate")
            o.rate = false;
        else if (a == "--no-handoff")
            o.handoff = false;
        else if (a == "--json")
            o.json = value();
        else if (a == "--modes")
            o.modes = parse_modes(value());
        else
            throw bad_option("unknown option " + std::string(a) + " (see --help)");
    }
    if (o.min_bytes > o.max_bytes)
        throw bad_option("--min-bytes is above --max-bytes");
    return true;
}

std::vector<std::size_t> payload_sizes(const options& o) {
    std::vector<std::size_t> v;
    for (std::size_t s = o.min_bytes; s <= o.max_bytes; s *= std::size_t(o.step))
        v.push_back(s);
    return v;
}

int iterations(const options& o, std::size_t bytes) {
    std::size_t budget = (o.budget_mib << 20) / bytes;
    return int(std::clamp<std::size_t>(budget, std::min(100, o.iters), std::size_t(o.iters)));
}

// One round's share (the rounds together run at least iterations(o, bytes)).
int round_iterations(const options& o, std::size_t bytes) {
    return (iterations(o, bytes) + o.rounds - 1) / o.rounds;
}

// Every timed round trip of one layer, per size (in the order of payload_sizes), of all rounds.
using samples = std::vector<std::vector<double>>;

std::vector<stats> summarize_all(samples s) {
    std::vector<stats> out;
    for (auto& rtt : s)
        if (!rtt.empty())
            out.push_back(summarize(std::move(rtt)));
    return out;
}

// ---------------------------------------------------------------------------------------------
// Raw MPI message rate (the ping-pongs are in tools/measure/pingpong.hpp)

struct sixteen {
    std::uint64_t seq, pad;
};
static_assert(sizeof(sixteen) == 16);

// Messages per second, on rank 0 (0 elsewhere).
double mpi_rate(int rank, long count, int window) {
    std::vector<sixteen> bufs(static_cast<std::size_t>(window), sixteen{0, 0});
    std::vector<MPI_Request> reqs(static_cast<std::size_t>(window));
    MPI_Barrier(MPI_COMM_WORLD);
    auto t0 = clk::now();
    if (rank == 0) {
        for (long done = 0; done < count;) {
            int n = int(std::min<long>(window, count - done));
            for (int j = 0; j < n; ++j) {
                bufs[std::size_t(j)].seq = std::uint64_t(done + j);
                MPI_Isend(&bufs[std::size_t(j)], sizeof(sixteen), MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                          &reqs[std::size_t(j)]);
            }
            MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
            done += n;
        }
        MPI_Recv(nullptr, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return double(count) / (micros(clk::now() - t0) * 1e-6);
    }
    if (rank == 1) {
        for (long done = 0; done < count;) {
            int n = int(std::min<long>(window, count - done));
            for (int j = 0; j < n; ++j)
                MPI_Irecv(&bufs[std::size_t(j)], sizeof(sixteen), MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                          &reqs[std::size_t(j)]);
            MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
            done += n;
        }
        MPI_Send(nullptr, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// PREMA ping-pong (transport and mobile objects): the chains run entirely in handlers
// (tools/measure/pingpong.cpp); rank 0 timestamps every pong.

// Adds one round's round trips of `bytes` to `all`, and shows the round's median.
void note_round(const char* layer, const char* mode, std::size_t bytes, int n,
                const std::vector<double>& rtt, std::vector<double>& all) {
    if (int(rtt.size()) != n)
        std::fprintf(stderr, "latency: %s %s %zu B: expected %d round trips, timed %zu\n", layer,
                     mode, bytes, n, rtt.size());
    all.insert(all.end(), rtt.begin(), rtt.end());
    std::fprintf(stderr, "  %s/%-9s %8zu B  %9.2f us half-RTT  (%d iters)\n", layer, mode, bytes,
                 summarize(rtt).half_rtt(), n);
}

prema::task<> latency_entry(const options& o, const std::vector<std::size_t>& sizes,
                            const char* mode, samples& out) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        int n = round_iterations(o, sizes[i]);
        auto rtt = co_await measure::transport_pingpong(sizes[i], o.warmup, n);
        if (prema::rank() == 0)
            note_round("prema", mode, sizes[i], n, rtt, out[i]);
    }
}

// Rank 0's two balls for an object ping-pong: one here, one on rank 1 (null on other ranks).
prema::task<std::pair<ball_ptr, ball_ptr>> make_balls() {
    if (prema::rank() != 0)
        co_return std::pair<ball_ptr, ball_ptr>{};
    ball_ptr mine = prema::make_mobile<ball>();
    co_return std::pair{mine, co_await prema::create<ball>(1)};
}

// Mobile-object ping-pong: the same chain between two objects, one on rank 0 and one on rank 1;
// every message goes through the object layer (directory, ordering, scheduler).
prema::task<> object_entry(const options& o, const std::vector<std::size_t>& sizes,
                           const char* mode, samples& out) {
    auto [mine, theirs] = co_await make_balls();
    for (std::size_t i = 0; i < sizes.size() && sizes[i] <= o.object_max_bytes; ++i) {
        int n = round_iterations(o, sizes[i]);
        auto rtt = co_await measure::object_pingpong(mine, theirs, sizes[i], o.warmup, n);
        if (prema::rank() == 0)
            note_round("object", mode, sizes[i], n, rtt, out[i]);
    }
}

// The size of PREMA's MPI message for a payload of `bytes`, to another rank's function handler
// and to an object there: the size most of the MPI_BYTE sends rank 0 makes in a chain of
// probe_round_trips has. Those are the hops a ping-pong times; the chain's first message leaves
// from a task, in a batch (32 bytes more), and control messages are few. Rank 0's figures.
struct wire_bytes {
    long transport = 0, object = 0;
};

constexpr int probe_round_trips = 8;

prema::task<> wire_entry(std::size_t bytes, bool objects, wire_bytes& out) {
    wire_size::watch(prema::rank() == 0);
    co_await measure::transport_pingpong(bytes, 0, probe_round_trips);
    out.transport = wire_size::most_common();
    wire_size::watch(false);
    if (!objects)
        co_return;
    auto [mine, theirs] = co_await make_balls();
    co_await prema::quiescence();
    wire_size::watch(prema::rank() == 0);
    co_await measure::object_pingpong(mine, theirs, bytes, 0, probe_round_trips);
    out.object = wire_size::most_common();
    wire_size::watch(false);
}

// Forwarding: rank 0 calls objects that rank 1 created and then moved to rank 2, so rank 0's
// directory still points at rank 1, which forwards once; beside calls to objects rank 2 created
// (direct), and the forwarded ones again once the lazy update has collapsed the chain.
struct hop_results {
    stats direct, forwarded, collapsed;
};

int noop(const ball&) {
    return 0;
}

prema::task<> forwarding_entry(int count, hop_results& out) {
    static std::vector<ball_ptr> moved, direct;
    if (prema::rank() == 1) {
        moved.clear();
        for (int i = 0; i < count; ++i) {
            moved.push_back(prema::make_mobile<ball>());
            co_await prema::migrate(moved.back(), 2);
        }
    }
    if (prema::rank() == 2) {
        direct.clear();
        for (int i = 0; i < count; ++i)
            direct.push_back(prema::make_mobile<ball>());
    }
    co_await prema::quiescence();
    if (prema::rank() == 0) {
        // Rank 0 learns the ids without learning where the objects are.
        moved = co_await prema::call(1, [] { return moved; });
        direct = co_await prema::call(2, [] { return direct; });
        auto time_calls = [](const std::vector<ball_ptr>& objs) -> prema::task<stats> {
            std::vector<double> rtt;
            for (auto mp : objs) {
                auto t0 = clk::now();
                co_await prema::call(mp, prema::fn<&noop>);
                rtt.push_back(micros(clk::now() - t0));
            }
            co_return summarize(std::move(rtt));
        };
        out.direct = co_await time_calls(direct);
        out.forwarded = co_await time_calls(moved);
        out.collapsed = co_await time_calls(moved);
    }
}

// ---------------------------------------------------------------------------------------------
// PREMA message rate

struct sink_state {
    long expected = 0;
    std::atomic<long> got{0};
    clk::time_point first, last;
    // Function and coroutine handlers may run on several workers at once: one atomic add each.
    void count() { stamp(got.fetch_add(1, std::memory_order_relaxed) + 1); }
    // The object handler has its object to itself and counts there, with no atomic add, as
    // YGM's handler does (`++received`): the same work in both handlers' bodies.
    void counted_at(long k) {
        got.store(k, std::memory_order_relaxed);
        stamp(k);
    }
    void stamp(long k) {
        if (k == 1)
            first = clk::now();
        if (k == expected)
            last = clk::now();
    }
} sink;

// The three receivers of the rate test: a plain function, a coroutine, a mobile object.
constexpr auto count_one = [](sixteen) { sink.count(); };
constexpr auto count_one_task = [](sixteen) -> prema::task<> {
    sink.count();
    co_return;
};
struct counter {
    long n = 0;
    template <class Ar> void serialize(Ar& ar) { ar(n); }
};
void count_at(counter& c, sixteen) {
    sink.counted_at(++c.n);
}
// One of many objects: the count is the sink's, shared, as the function handler's.
void count_in(counter& c, sixteen) {
    ++c.n;
    sink.count();
}
constexpr int scattered_objects = 64;

// Runs on rank 1: how many messages it has counted (the optional --rate-fence).
constexpr auto counted = []() { return sink.got.load(std::memory_order_relaxed); };

enum class rate_kind { function, coroutine, object, objects };
constexpr rate_kind rate_kinds[] = {rate_kind::function, rate_kind::coroutine, rate_kind::object,
                                    rate_kind::objects};
const char* layer_of(rate_kind k) {
    return k == rate_kind::object || k == rate_kind::objects ? "object" : "transport";
}
// The mobile objects the messages go to (0: a transport handler).
int targets_of(rate_kind k) {
    return k == rate_kind::objects ? scattered_objects : k == rate_kind::object ? 1 : 0;
}
const char* handler_of(rate_kind k) {
    return k == rate_kind::coroutine ? "coroutine" : "function";
}
// How the text names the receiver: "object function handler", "64 objects' function handler".
std::string receiver_of(rate_kind k) {
    return k == rate_kind::objects
               ? std::to_string(scattered_objects) + " objects' " + handler_of(k) + " handler"
               : std::string(layer_of(k)) + " " + handler_of(k) + " handler";
}

prema::task<> rate_entry(rate_kind kind, long count, long fence, double& seconds) {
    std::vector<prema::mobile_ptr<counter>> targets;
    if (targets_of(kind) > 0) {
        if (prema::rank() == 0)
            for (int i = 0; i < targets_of(kind); ++i)
                targets.push_back(co_await prema::create<counter>(1));
        co_await prema::quiescence();
    }
    if (prema::rank() == 0) {
        auto t0 = clk::now();
        std::size_t next = 0;
        for (long i = 0; i < count; ++i) {
            sixteen m{std::uint64_t(i), 0};
            if (kind == rate_kind::function)
                co_await prema::send(1, count_one, m);
            else if (kind == rate_kind::coroutine)
                co_await prema::send(1, count_one_task, m);
            else if (kind == rate_kind::object)
                co_await prema::send(targets[0], prema::fn<&count_at>, m);
            else
                co_await prema::send(targets[std::exchange(next, (next + 1) % targets.size())],
                                     prema::fn<&count_in>, m);
            if (fence > 0 && (i + 1) % fence == 0)
                co_await prema::call(1, counted);
        }
        co_await prema::quiescence();
        seconds = micros(clk::now() - t0) * 1e-6;
    } else {
        co_await prema::quiescence();
    }
}

struct rate_result {
    rate_kind kind;
    double rate = 0;          // rank 0: first send to quiescence
    double receiver_rate = 0; // rank 1: first to last message counted
};

// ---------------------------------------------------------------------------------------------
// One PREMA configuration: latency sweep and message rate.

struct prema_results {
    std::string mode;                 // as requested: auto, dedicated or inline
    std::string resolved;             // what the runtime ran: dedicated or inline
    std::string label;                // "auto -> inline", or the mode
    samples latency_rtt, objects_rtt; // every round's round trips, per size
    std::vector<stats> latency;       // their medians, once every round has run
    std::vector<stats> objects;       // the first sizes, up to --object-max-bytes
    hop_results hops;                 // 3+ ranks only
    bool have_hops = false;
    std::vector<rate_result> rates;
    bool ok = true;
    // The JSON members that name the progress mode of a row.
    std::string json_progress() const {
        return "\"progress\": \"" + mode + "\", " +
               (mode == resolved ? "" : "\"resolved\": \"" + resolved + "\", ");
    }
    // On a runtime of `requested` mode, now running: what it resolved to.
    const char* name(prema::progress_mode requested) {
        mode = prema::to_string(requested);
        resolved = prema::to_string(prema::resolved_progress());
        label = mode == resolved ? mode : mode + " -> " + resolved;
        return label.c_str();
    }
};

// One round of the ping-pongs, transport and object, on a runtime of its own.
void prema_pingpong_round(const options& o, const std::vector<std::size_t>& sizes,
                          const prema::config& cfg, prema_results& r) {
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    const char* mode = r.name(cfg.progress);
    r.latency_rtt.resize(sizes.size());
    r.objects_rtt.resize(sizes.size());
    if (prema::rank() == 0)
        std::fprintf(stderr, "[prema %s] ping-pong, %zu sizes\n", mode, sizes.size());
    r.ok &= rt.run([&] { return latency_entry(o, sizes, mode, r.latency_rtt); }) == 0;
    if (prema::rank() == 0)
        std::fprintf(stderr, "[prema %s] object ping-pong\n", mode);
    r.ok &= rt.run([&] { return object_entry(o, sizes, mode, r.objects_rtt); }) == 0;
}

// Before the rounds, on a runtime of its own: the size of PREMA's MPI messages for a payload of
// `bytes`, known to both ranks (both take part in raw MPI's ping-pong at those sizes).
wire_bytes probe_wire(const prema::config& cfg, std::size_t bytes, bool objects) {
    wire_bytes w;
    {
        prema::runtime rt(MPI_COMM_WORLD, cfg);
        if (rt.run([&] { return wire_entry(bytes, objects, w); }) != 0)
            throw std::runtime_error("the probe of PREMA's message size reported errors");
    }
    long both[2] = {w.transport, w.object};
    MPI_Bcast(both, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    return {both[0], both[1]};
}

// After the rounds, on one more runtime: the forwarding hop (3+ ranks) and the message rates.
void prema_hop_and_rates(const options& o, const prema::config& cfg, prema_results& r) {
    prema::runtime rt(MPI_COMM_WORLD, cfg);
    const int rank = prema::rank();
    const char* mode = r.name(cfg.progress);
    if (o.latency && prema::ranks() >= 3) {
        if (rank == 0)
            std::fprintf(stderr, "[prema %s] forwarding hop, %d calls each\n", mode, o.hop_calls);
        r.ok &= rt.run([&] { return forwarding_entry(o.hop_calls, r.hops); }) == 0;
        r.have_hops = true;
    }
    for (rate_kind kind : rate_kinds) {
        if (!o.rate)
            break;
        if (rank == 0)
            std::fprintf(stderr, "[prema %s] message rate, %ld messages to a %s\n", mode,
                         o.rate_count, receiver_of(kind).c_str());
        sink.expected = o.rate_count;
        sink.got = 0;
        double seconds = 0;
        r.ok &= rt.run([&] { return rate_entry(kind, o.rate_count, o.rate_fence, seconds); }) == 0;
        rate_result res{kind};
        if (rank == 0)
            res.rate = seconds > 0 ? double(o.rate_count) / seconds : 0;
        // Receiver-side view: rank 1 reports first-to-last over plain MPI.
        if (rank == 1) {
            double s = micros(sink.last - sink.first) * 1e-6;
            if (sink.got.load() != o.rate_count) {
                std::fprintf(stderr, "rank 1: counted %ld of %ld messages\n", sink.got.load(),
                             o.rate_count);
                r.ok = false;
            }
            double recv_rate = s > 0 ? double(o.rate_count - 1) / s : 0;
            MPI_Send(&recv_rate, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&res.receiver_rate, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            std::fprintf(stderr, "  prema/%-9s %.3g msgs/s (receiver side %.3g)\n", mode, res.rate,
                         res.receiver_rate);
        }
        r.rates.push_back(res);
    }
}

// ---------------------------------------------------------------------------------------------
// The hand-off between a worker and the progress thread, on rank 0 alone.

struct handoff_result {
    std::string mode; // dedicated or inline
    stats one_way;    // per message: half of a round trip
};

constexpr std::size_t handoff_bytes = 8;

// Collective over MPI_COMM_WORLD. Rank 0 runs, the others sleep in a barrier, so that rank 0's
// two threads (worker, progress thread) have the machine's cores to themselves.
std::vector<handoff_result> run_handoff(const options& o, const prema::config& base, int rank) {
    std::vector<handoff_result> out;
    MPI_Comm solo;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    if (rank == 0) {
        cpu_set_t bound, all;
        sched_getaffinity(0, sizeof bound, &bound);
        CPU_ZERO(&all);
        for (unsigned c = 0; c < std::thread::hardware_concurrency(); ++c)
            CPU_SET(c, &all);
        sched_setaffinity(0, sizeof all, &all); // the runtime's threads inherit it
        // Dedicated and inline take turns too, as raw MPI and PREMA do in the ping-pongs.
        const prema::progress_mode modes[] = {prema::progress_mode::dedicated,
                                              prema::progress_mode::inline_};
        samples rtt(std::size(modes));
        const int n = round_iterations(o, handoff_bytes);
        for (int round = 0; round < o.rounds; ++round)
            for (std::size_t k = 0; k < std::size(modes); ++k) {
                prema::config c = base;
                c.progress = modes[k];
                c.workers = 1;
                c.loopback_mpi = true;
                const std::string mode = prema::to_string(modes[k]);
                std::fprintf(stderr, "[prema %s] hand-off, one rank, messages to itself\n",
                             mode.c_str());
                prema::runtime rt(solo, c);
                std::vector<double> round_rtt;
                if (rt.run([&]() -> prema::task<> {
                        round_rtt = co_await measure::handoff_pingpong(handoff_bytes, o.warmup, n);
                    }) != 0)
                    std::fprintf(stderr, "latency: the hand-off phase reported errors\n");
                note_round("handoff", mode.c_str(), handoff_bytes, n, round_rtt, rtt[k]);
            }
        for (std::size_t k = 0; k < std::size(modes); ++k)
            out.push_back({prema::to_string(modes[k]), summarize(std::move(rtt[k]))});
        sched_setaffinity(0, sizeof bound, &bound);
        MPI_Comm_free(&solo);
    }
    // The others wait without spinning: Open MPI's blocking barrier polls.
    MPI_Request barrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    for (int done = 0; !done;) {
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
        if (!done && rank != 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Output

void print_table(const std::vector<std::size_t>& sizes, const std::vector<stats>& mpi,
                 const std::vector<prema_results>& runs) {
    std::printf("\nHalf round-trip time (median over the timed round trips of each size in all "
                "rounds, us)\nand bandwidth (bytes / half-RTT, MB/s); 'x' is PREMA / raw MPI "
                "half-RTT.\n\n");
    std::printf("%9s %20s", "", "raw MPI");
    for (auto& r : runs)
        std::printf(" | %26s", ("PREMA " + r.label).c_str());
    std::printf("\n%9s %10s %9s", "bytes", "us", "MB/s");
    for (std::size_t i = 0; i < runs.size(); ++i)
        std::printf(" | %9s %6s %9s", "us", "x", "MB/s");
    std::printf("\n");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        double raw = mpi[i].half_rtt();
        std::printf("%9zu %10.2f %9.1f", sizes[i], raw, mpi[i].mb_per_s(sizes[i]));
        for (auto& r : runs) {
            const stats& s = r.latency[i];
            std::printf(" | %9.2f %6.2f %9.1f", s.half_rtt(), s.half_rtt() / raw,
                        s.mb_per_s(sizes[i]));
        }
        std::printf("\n");
    }
    std::printf("\nMean half-RTT (us), for comparison with the medians above:\n%9s %10s", "bytes",
                "mpi");
    for (auto& r : runs)
        std::printf(" %17s", r.label.c_str());
    std::printf("\n");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        std::printf("%9zu %10.2f", sizes[i], mpi[i].mean_rtt_us / 2);
        for (auto& r : runs)
            std::printf(" %17.2f", r.latency[i].mean_rtt_us / 2);
        std::printf("\n");
    }
}

// Mobile-object ping-pong beside raw MPI and the transport; the forwarding hop with 3+ ranks.
void print_objects(const std::vector<std::size_t>& sizes, const std::vector<stats>& mpi,
                   const std::vector<prema_results>& runs) {
    std::printf("\nMobile-object ping-pong (two objects, on ranks 0 and 1), median half-RTT us;\n"
                "'x' is object / raw MPI:\n%9s %10s",
                "bytes", "mpi");
    for (auto& r : runs)
        std::printf(" | %9s %9s %6s", (r.mode.substr(0, 6) + " tx").c_str(), "object", "x");
    std::printf("\n");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (runs.empty() || i >= runs.front().objects.size())
            break;
        double raw = mpi[i].half_rtt();
        std::printf("%9zu %10.2f", sizes[i], raw);
        for (auto& r : runs)
            std::printf(" | %9.2f %9.2f %6.2f", r.latency[i].half_rtt(), r.objects[i].half_rtt(),
                        r.objects[i].half_rtt() / raw);
        std::printf("\n");
    }
    for (auto& r : runs)
        if (r.have_hops)
            std::printf("\nForwarding (%s): call to an object, median us: direct %.2f, through one "
                        "forwarding hop %.2f (one hop costs %.2f), after the lazy update %.2f\n",
                        r.label.c_str(), r.hops.direct.median_rtt_us,
                        r.hops.forwarded.median_rtt_us,
                        r.hops.forwarded.median_rtt_us - r.hops.direct.median_rtt_us,
                        r.hops.collapsed.median_rtt_us);
}

// PREMA's smallest message against raw MPI moving as many bytes (the first mode's run: auto by
// default).
void print_wire(std::size_t payload, const wire_bytes& wire, const stats (&at_wire)[2],
                const stats& mpi_payload, const std::vector<prema_results>& runs) {
    if (runs.empty() || wire.transport == 0)
        return;
    const auto& r = runs.front();
    const std::string raw_payload = "raw MPI " + std::to_string(payload) + " B";
    std::printf("\nRaw MPI at the size of PREMA's own MPI message for a %zu-byte payload, median "
                "half-RTT us;\n'x there' is PREMA / raw MPI at that size:\n"
                "%11s %12s %14s %12s %22s %8s\n",
                payload, "", "on the wire", "raw MPI there", raw_payload.c_str(),
                ("PREMA " + r.label).c_str(), "x there");
    auto line = [&](const char* what, long bytes, const stats& raw, const stats& prema) {
        std::printf("%11s %10ld B %14.2f %12.2f %22.2f %8.2f\n", what, bytes, raw.half_rtt(),
                    mpi_payload.half_rtt(), prema.half_rtt(), prema.half_rtt() / raw.half_rtt());
    };
    line("transport", wire.transport, at_wire[0], r.latency.front());
    if (wire.object > 0 && !r.objects.empty())
        line("object", wire.object, at_wire[1], r.objects.front());
}

// Large messages against raw MPI moving them as PREMA does, in two messages (the first mode's
// run): what PREMA's own steps add to the protocol's cost.
void print_split(const std::vector<std::size_t>& sizes, const std::vector<stats>& mpi,
                 const std::vector<stats>& split, const std::vector<prema_results>& runs) {
    if (runs.empty() || std::none_of(split.begin(), split.end(), [](auto& s) { return s.n > 0; }))
        return;
    const auto& r = runs.front();
    std::printf("\nRaw MPI as two messages, as PREMA sends a payload above its eager size for the\n"
                "destination (the payload, then a 48-byte header; the payload's receive posted "
                "when the\nheader arrives), median half-RTT us; 'x' is over raw MPI in one "
                "message:\n%9s %10s %16s %6s %22s %6s %11s\n",
                "bytes", "raw MPI", "two messages", "x", ("PREMA " + r.label).c_str(), "x",
                "x two msgs");
    for (std::size_t i = 0; i < sizes.size() && i < r.latency.size(); ++i) {
        if (split[i].n == 0)
            continue;
        const double raw = mpi[i].half_rtt(), two = split[i].half_rtt(),
                     prema = r.latency[i].half_rtt();
        std::printf("%9zu %10.2f %16.2f %6.2f %22.2f %6.2f %11.2f\n", sizes[i], raw, two, two / raw,
                    prema, prema / raw, prema / two);
    }
}

void print_handoff(const std::vector<handoff_result>& handoff) {
    if (handoff.size() != 2)
        return;
    std::printf("\nHand-off: one rank, one worker, %zu-byte messages to itself through MPI, median "
                "us per message:\n  dedicated %.2f, inline %.2f: dedicated / inline %.2fx\n",
                handoff_bytes, handoff[0].one_way.half_rtt(), handoff[1].one_way.half_rtt(),
                handoff[0].one_way.half_rtt() / handoff[1].one_way.half_rtt());
}

void write_json(const std::string& path, const std::vector<std::size_t>& sizes,
                const std::vector<stats>& mpi, const std::vector<stats>& mpi_split,
                double mpi_rate_value, const std::vector<prema_results>& runs,
                const std::vector<handoff_result>& handoff, const wire_bytes& wire,
                const stats (&mpi_at_wire)[2], const options& o) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(("latency: cannot write " + path).c_str());
        return;
    }
    std::fprintf(f, "{\n  \"statistic\": \"median\",\n  \"results\": [");
    const char* sep = "\n";
    auto row = [&](const char* layer, const std::string& progress, std::size_t bytes,
                   const stats& s) {
        std::fprintf(f, "%s    {\"layer\": \"%s\", %s", sep, layer, progress.c_str());
        std::fprintf(f,
                     "\"bytes\": %zu, \"half_rtt_us\": %.4f, \"mb_per_s\": %.2f, "
                     "\"mean_half_rtt_us\": %.4f, \"iterations\": %d}",
                     bytes, s.half_rtt(), s.mb_per_s(bytes), s.mean_rtt_us / 2, s.n);
        sep = ",\n";
    };
    for (std::size_t i = 0; i < mpi.size(); ++i)
        row("mpi", "", sizes[i], mpi[i]);
    for (std::size_t i = 0; i < mpi_split.size(); ++i)
        if (mpi_split[i].n > 0)
            row("mpi_split", "", sizes[i], mpi_split[i]);
    for (auto& r : runs)
        for (std::size_t i = 0; i < r.latency.size(); ++i)
            row("transport", r.json_progress(), sizes[i], r.latency[i]);
    for (auto& r : runs)
        for (std::size_t i = 0; i < r.objects.size(); ++i)
            row("object", r.json_progress(), sizes[i], r.objects[i]);
    const long at_wire[] = {wire.transport, wire.object};
    const char* of[] = {"transport", "object"};
    for (std::size_t j = 0; j < std::size(at_wire); ++j)
        if (at_wire[j] > 0 && mpi_at_wire[j].n > 0)
            row("mpi_at_wire",
                "\"of\": \"" + std::string(of[j]) +
                    "\", \"payload_bytes\": " + std::to_string(sizes.front()) + ", ",
                std::size_t(at_wire[j]), mpi_at_wire[j]);
    for (auto& h : handoff)
        row("handoff", "\"progress\": \"" + h.mode + "\", ", handoff_bytes, h.one_way);
    for (auto& r : runs)
        if (r.have_hops)
            std::fprintf(f,
                         ",\n    {\"layer\": \"object\", %s"
                         "\"direct_call_us\": %.4f, \"forwarded_call_us\": %.4f, "
                         "\"forwarding_hop_us\": %.4f, \"collapsed_call_us\": %.4f}",
                         r.json_progress().c_str(), r.hops.direct.median_rtt_us,
                         r.hops.forwarded.median_rtt_us,
                         r.hops.forwarded.median_rtt_us - r.hops.direct.median_rtt_us,
                         r.hops.collapsed.median_rtt_us);
    if (o.rate) {
        std::fprintf(f,
                     "%s    {\"layer\": \"mpi\", \"rate_msgs_per_s\": %.0f, \"messages\": %ld, "
                     "\"window\": %d}",
                     sep, mpi_rate_value, o.rate_count, o.rate_window);
        sep = ",\n";
        for (auto& r : runs)
            for (auto& x : r.rates)
                std::fprintf(f,
                             ",\n    {\"layer\": \"%s\", \"handler\": \"%s\", %s"
                             "\"rate_msgs_per_s\": %.0f, \"vs_mpi\": %.3f, "
                             "\"receiver_rate_msgs_per_s\": %.0f, \"messages\": %ld, "
                             "\"fence\": %ld, \"objects\": %d}",
                             layer_of(x.kind), handler_of(x.kind), r.json_progress().c_str(),
                             x.rate, x.rate / mpi_rate_value, x.receiver_rate, o.rate_count,
                             o.rate_fence, targets_of(x.kind));
    }
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
}

// Mean microseconds of `copy` moving 8 KiB to `ahead` bytes past the source modulo 4 KiB.
template <class Copy> double copy_us(Copy copy, std::size_t ahead) {
    constexpr std::size_t bytes = 8192, page = 4096;
    constexpr int copies = 2000;
    std::vector<std::byte> area(4 * bytes + 2 * page);
    auto* base = area.data() + (page - reinterpret_cast<std::uintptr_t>(area.data()) % page);
    std::byte* src = base + 256;
    std::byte* dst = base + 2 * bytes + 256 + ahead;
    copy(dst, src, bytes); // the pages touched before the clock starts
    auto t0 = clk::now();
    for (int i = 0; i < copies; ++i) {
        copy(dst, src, bytes);
        asm volatile("" : : "r"(dst) : "memory"); // every copy happens
    }
    return micros(clk::now() - t0) / copies;
}

// Payloads below the eager size are copied with memcpy, whose `rep movsb` crawls on some
// processors when the destination lies a few bytes past the source within a page; PREMA steps
// around that case (prema/detail/transport/copy_bytes.hpp). The run says what its node does.
void print_c_library() {
    auto memcpy_fn = [](void* d, const void* s, std::size_t n) { std::memcpy(d, s, n); };
    auto prema_fn = [](void* d, const void* s, std::size_t n) {
        prema::detail::copy_bytes(d, s, n);
    };
    const double apart = copy_us(memcpy_fn, 64), near = copy_us(memcpy_fn, 16);
    const double prema_near = copy_us(prema_fn, 16);
#ifdef __GLIBC__
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    std::printf("C library: glibc %s, GLIBC_TUNABLES %s\n", gnu_get_libc_version(),
                tunables && *tunables ? tunables : "unset");
#endif
    std::printf("8 KiB memcpy: %.2f us, %.2f us with the destination 16 bytes past the source "
                "in its page (PREMA's copy there: %.2f us)\n",
                apart, near, prema_near);
}

int bench_main(int argc, char** argv, int rank, int size) {
    prema::config base;
    options o;
    try {
        base = prema::config::from_args(argc, argv);
        if (!parse_options(argc, argv, o)) {
            if (rank == 0)
                std::fputs(usage_text, stdout);
            return 0;
        }
    } catch (const std::exception& e) {
        if (rank == 0)
            std::fprintf(stderr, "latency: %s\n", e.what());
        return 2;
    }
    if (size < 2) {
        if (rank == 0)
            std::fprintf(stderr, "latency: needs 2 ranks (mpirun -np 2)\n");
        return 2;
    }
    auto sizes = payload_sizes(o);
    if (rank == 0)
        std::printf("PREMA latency benchmark: %d ranks (only 0 and 1 talk), %zu sizes %zu..%zu B, "
                    "%d iters per size in %d rounds (+%d warm-up in each), capped at %zu MiB per "
                    "size; eager limit %zu B, %d worker(s) (inline: 1)\n",
                    size, sizes.size(), sizes.front(), sizes.back(), o.iters, o.rounds, o.warmup,
                    o.budget_mib, base.eager_bytes, base.workers);
    if (rank == 0)
        print_c_library();

    // The ping-pongs in rounds, raw MPI and each PREMA mode by turns; then the PREMA modes'
    // forwarding hops and rates, and the hand-off.
    auto config_of = [&](prema::progress_mode mode) {
        prema::config c = base;
        c.progress = mode;
        if (mode == prema::progress_mode::inline_)
            c.workers = 1;
        return c;
    };
    samples mpi_rtt(sizes.size());
    std::vector<prema_results> runs(o.modes.size());
    std::vector<handoff_result> handoff;
    wire_bytes wire;
    samples wire_rtt(2);             // raw MPI at wire.transport and wire.object bytes
    samples split_rtt(sizes.size()); // raw MPI as two messages, from split_from up
    const std::size_t split_from = o.split_from ? o.split_from : base.eager_bytes;
    try {
        if (o.latency)
            wire = probe_wire(config_of(o.modes.front()), sizes.front(),
                              sizes.front() <= o.object_max_bytes);
        for (int round = 1; o.latency && round <= o.rounds; ++round) {
            if (rank == 0)
                std::fprintf(stderr, "round %d of %d\n[mpi] ping-pong, %zu sizes\n", round,
                             o.rounds, sizes.size());
            for (std::size_t i = 0; i < sizes.size(); ++i) {
                int n = round_iterations(o, sizes[i]);
                auto rtt = mpi_pingpong(rank, sizes[i], o.warmup, n);
                if (rank == 0)
                    note_round("mpi", "", sizes[i], n, rtt, mpi_rtt[i]);
                if (sizes[i] < split_from)
                    continue;
                rtt = mpi_split_pingpong(rank, sizes[i], o.warmup, n);
                if (rank == 0)
                    note_round("mpi", "split", sizes[i], n, rtt, split_rtt[i]);
            }
            const long at_wire[] = {wire.transport, wire.object};
            for (std::size_t j = 0; j < std::size(at_wire); ++j) {
                if (at_wire[j] == 0)
                    continue;
                int n = round_iterations(o, sizes.front());
                auto rtt = mpi_pingpong(rank, std::size_t(at_wire[j]), o.warmup, n);
                if (rank == 0)
                    note_round("mpi", "wire", std::size_t(at_wire[j]), n, rtt, wire_rtt[j]);
            }
            for (std::size_t k = 0; k < o.modes.size(); ++k)
                prema_pingpong_round(o, sizes, config_of(o.modes[k]), runs[k]);
        }
        if (o.rate || (o.latency && size >= 3))
            for (std::size_t k = 0; k < o.modes.size(); ++k)
                prema_hop_and_rates(o, config_of(o.modes[k]), runs[k]);
        if (o.handoff)
            handoff = run_handoff(o, base, rank);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "latency: rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    bool ok = true;
    for (auto& r : runs) {
        ok &= r.ok;
        r.latency = summarize_all(std::move(r.latency_rtt));
        r.objects = summarize_all(std::move(r.objects_rtt));
    }
    const auto mpi = summarize_all(std::move(mpi_rtt));
    std::vector<stats> mpi_split; // n == 0 below split_from
    for (auto& rtt : split_rtt)
        mpi_split.push_back(summarize(std::move(rtt)));
    const stats mpi_at_wire[] = {summarize(std::move(wire_rtt[0])),
                                 summarize(std::move(wire_rtt[1]))};
    double mpi_rate_value = 0;
    if (o.rate) {
        if (rank == 0)
            std::fprintf(stderr, "[mpi] message rate, %ld messages, window %d\n", o.rate_count,
                         o.rate_window);
        mpi_rate_value = mpi_rate(rank, o.rate_count, o.rate_window);
    }

    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    long rss_kib = ru.ru_maxrss, rss[2] = {0, 0};
    if (rank == 1)
        MPI_Send(&rss_kib, 1, MPI_LONG, 0, 4, MPI_COMM_WORLD);
    if (rank == 0) {
        rss[0] = rss_kib;
        MPI_Recv(&rss[1], 1, MPI_LONG, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    if (rank != 0)
        return ok ? 0 : 1;
    if (o.latency) {
        print_table(sizes, mpi, runs);
        print_objects(sizes, mpi, runs);
        print_wire(sizes.front(), wire, mpi_at_wire, mpi.front(), runs);
        print_split(sizes, mpi, mpi_split, runs);
    }
    print_handoff(handoff);
    if (o.rate) {
        std::printf("\nMessage rate, %ld x 16-byte messages rank 0 -> rank 1:\n", o.rate_count);
        std::printf("  %-26s %12.0f msgs/s  (MPI_Isend windows of %d, until rank 1 acks)\n", "mpi",
                    mpi_rate_value, o.rate_window);
        std::printf("  PREMA: first send to quiescence%s; receiver: its first to last message\n",
                    o.rate_fence
                        ? (", a call every " + std::to_string(o.rate_fence) + " sends").c_str()
                        : ", no fence");
        for (auto& r : runs)
            for (auto& x : r.rates)
                std::printf("  %-26s %12.0f msgs/s  %6.2fx mpi  (%s; receiver %.0f msgs/s)\n",
                            ("prema " + r.label).c_str(), x.rate, x.rate / mpi_rate_value,
                            receiver_of(x.kind).c_str(), x.receiver_rate);
    }
    std::printf("\nPeak RSS: rank 0 %.1f MiB, rank 1 %.1f MiB\n", double(rss[0]) / 1024,
                double(rss[1]) / 1024);
    if (!o.json.empty()) {
        write_json(o.json, sizes, mpi, mpi_split, mpi_rate_value, runs, handoff, wire, mpi_at_wire,
                   o);
        std::printf("wrote %s\n", o.json.c_str());
    }
    if (!ok)
        std::fprintf(stderr, "latency: a PREMA phase reported errors (see the log above)\n");
    return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    int provided = 0, rank = 0, size = 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = bench_main(argc, argv, rank, size);
    MPI_Finalize();
    return rc;
}
