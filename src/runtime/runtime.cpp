#include "prema/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <utility>

#include "base/log.hpp"
#include "checkpoint/coordinator.hpp"
#include "checkpoint/io_reactor.hpp"
#include "lb/balancer.hpp"
#include "objects/measured_load.hpp"
#include "objects/object_record.hpp"
#include "objects/requests.hpp"
#include "prema/coro/spawn.hpp"
#include "prema/coro/yield.hpp"
#include "prema/error.hpp"
#include "prema/quiescence.hpp"
#include "prema/transport/all_reduce.hpp"
#include "prema/version.hpp"
#include "runtime/core_sharing.hpp"
#include "runtime/observe_report.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/start_agreement.hpp"
#include "transport/observe.hpp"

namespace prema {
namespace detail {

namespace {

// A worker item: the listener's index in epoch_listeners() is its argument.
void run_epoch_listener(void* index) {
    epoch_listeners()[reinterpret_cast<std::uintptr_t>(index)](current_epoch());
}

const char* thread_level_name(int level) {
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    default:
        return "MPI_THREAD_MULTIPLE";
    }
}

// The thread level the configuration needs from MPI, given that the calling thread (the one
// that constructs the runtime) becomes the progress thread or worker 0.
int required_thread_level(const config& c) {
    if (c.progress == progress_mode::inline_ && c.workers > 1)
        return MPI_THREAD_SERIALIZED;
    return MPI_THREAD_FUNNELED;
}

detached run_entry(runtime_state& st) {
    try {
        co_await st.entry();
    } catch (...) {
        report_detached_error("the entry coroutine", std::current_exception());
    }
    st.entries.fetch_sub(1, std::memory_order_release);
}

// At quiescence no message is in flight and nothing runs, so a call still waiting for its
// reply waits for ever: name each (caller, handler, object, rank) so that the cycle shows.
void report_unanswered_calls(runtime_state& st) {
    constexpr std::size_t listed = 20;
    std::vector<std::string> lines;
    std::size_t waiting = 0;
    {
        std::lock_guard lock(st.calls_mutex);
        waiting = st.calls.size();
        for (auto& [token, call] : st.calls) {
            if (lines.size() == listed)
                break;
            lines.push_back(describe_awaited_call(*call));
        }
    }
    std::sort(lines.begin(), lines.end());
    auto reduces = describe_open_all_reduces();
    waiting += reduces.size();
    for (auto& line : reduces)
        if (lines.size() < listed)
            lines.push_back(std::move(line));
    if (waiting == 0)
        return;
    report_error(fmt::format("the whole job is quiescent, but {} call(s) made on this rank still "
                             "await a reply that nothing can send now:\n  {}{}",
                             waiting, fmt::join(lines, "\n  "),
                             waiting > listed ? fmt::format("\n  and {} more", waiting - listed)
                                              : std::string()));
}

// With more threads than cores, handing a message to an idle worker costs a futex wake and a
// context switch, or waits for the idle worker's turn on the core (2-3 us here, more than the
// message's whole path inline). The progress thread runs it instead, with a quantum like a
// worker's: a coroutine that yields or suspends continues on the workers. MPI waits meanwhile, as
// it does for an inline worker (progress_thread_runs_message marks it, for only_work_here).
void run_on_progress_thread(runtime_state& st, message* m) {
    // A message it sends to this rank meanwhile goes to the workers.
    bool& running = progress_thread_runs_message;
    if (running || worker_pool::current())
        return st.workers->push({&dispatch_message, m});
    running = true;
    auto quantum = st.workers->quantum_ticks();
    slice_deadline = quantum ? now_ticks() + quantum : std::numeric_limits<std::uint64_t>::max();
    dispatch_message(m);
    slice_deadline = std::numeric_limits<std::uint64_t>::max();
    running = false;
}

void on_decision(runtime_state& st, wave_result r) {
    switch (r) {
    case wave_result::none:
        return;
    case wave_result::quiescence: {
        st.epoch.fetch_add(1, std::memory_order_release);
        for (std::uintptr_t i = 0; i < epoch_listeners().size(); ++i)
            st.workers->push({&run_epoch_listener, reinterpret_cast<void*>(i)});
        std::vector<std::coroutine_handle<>> ready;
        {
            std::lock_guard lock(st.waiters_mutex);
            ready.swap(st.waiters);
        }
        for (auto h : ready)
            reschedule(h);
        return;
    }
    case wave_result::deadlock:
        if (st.entries.load() > 0)
            report_error("the entry coroutine is still suspended, but the whole job is quiescent: "
                         "nothing can resume it (does it await a reply nobody sends?)");
        [[fallthrough]];
    case wave_result::finished:
        report_unanswered_calls(st);
        st.phase_over.store(true, std::memory_order_release);
        st.workers->request_stop();
        return;
    }
}
} // namespace

runtime_state::runtime_state(MPI_Comm c, config cf) : transport_state(c, std::move(cf)) {}

runtime_state::~runtime_state() = default;

} // namespace detail

progress_mode resolved_progress() {
    return detail::state().cfg.progress;
}

struct runtime::impl {
    detail::runtime_state st;
    impl(MPI_Comm c, config cfg) : st(c, std::move(cfg)) {}
};

runtime::runtime(MPI_Comm comm, config cfg) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
        throw usage_error("prema::runtime needs MPI to be initialised first (or use prema::run)");
    int provided = MPI_THREAD_SINGLE, is_main = 0;
    MPI_Query_thread(&provided);
    MPI_Is_thread_main(&is_main);
    const progress_mode requested = cfg.progress;
    auto thread_level_problem = [&](const config& c) -> std::string {
        int needed = detail::required_thread_level(c);
        if (provided >= needed && (provided != MPI_THREAD_FUNNELED || is_main))
            return {};
        return fmt::format("--prema-progress={} with {} worker(s) needs MPI initialised with {} "
                           "(from the thread that creates the runtime), but MPI provides {}",
                           detail::describe_progress(requested, c.progress), c.workers,
                           detail::thread_level_name(needed), detail::thread_level_name(provided));
    };
    // Counting cores is collective, so this thread must be allowed to call MPI first: every
    // mode needs FUNNELED, auto the level of the mode it resolves to (checked again below).
    if (auto why = thread_level_problem(cfg); !why.empty())
        throw usage_error(why);
    detail::check_policy(cfg.lb);
    impl_ = std::make_unique<impl>(comm, std::move(cfg));
    auto& st = impl_->st;
    st.requested_progress = requested;
    auto fail = [&st](const std::string& why) {
        MPI_Comm_free(&st.comm);
        throw usage_error(why);
    };
    // On the runtime's communicators, before anything else travels on them.
    const auto cores = detail::detect_core_sharing(st.node.get());
    const auto agreed =
        detail::agree_at_start(st.comm, st.cfg, detail::resolve_progress(cores, st.cfg.workers));
    // Ranks that disagree on message sizes would crash or hang later, on the load mode balance
    // wrongly: every rank says so now, together.
    if (!agreed.mismatch.empty())
        fail(agreed.mismatch);
    if (requested == progress_mode::automatic) {
        // Every rank takes the same mode, inline if any rank is short of cores: then a missing
        // MPI thread level fails the constructor on every rank together instead of leaving the
        // others waiting in its collectives, and rank 0's report holds for the whole job.
        st.cfg.progress = agreed.all_dedicated ? progress_mode::dedicated : progress_mode::inline_;
        if (auto why = thread_level_problem(st.cfg); !why.empty())
            fail(why);
    }
    if (detail::transport_state* expected = nullptr; !detail::set_state(&st, expected))
        fail("a PREMA runtime already runs in this process");
    detail::init_log(st.rank, st.cfg.log);
    if (requested == progress_mode::automatic && st.rank == 0)
        detail::log().info("progress {}: {} rank(s) x {} thread(s) on {} core(s) (rank 0 may use "
                           "{}){}",
                           detail::describe_progress(requested, st.cfg.progress), cores.node_ranks,
                           st.cfg.workers + 1, cores.node_cores, cores.own_cores,
                           st.cfg.progress == detail::resolve_progress(cores, st.cfg.workers)
                               ? ""
                               : " (another rank is short of cores)");
    detail::observe_start(st, agreed.observe);
    // Handlers are timed only for a reader: a policy, or the stats and trace (measured_load.hpp).
    detail::start_measuring(st.cfg.lb != "none" || detail::observing(), st.cfg.lb_load);
    bool inline_mode = st.cfg.progress == progress_mode::inline_;
    st.io = std::make_unique<detail::io_reactor>();
    st.checkpoints = std::make_unique<detail::coordinator>();
    detail::g_checkpoint_state.store(&st, std::memory_order_release);
    st.engine = std::make_unique<detail::progress_engine>(
        st.comm, st.cfg, st.pool,
        detail::progress_engine::hooks{
            // Inline progress: the worker whose idle poll received the message runs it next.
            // Dedicated progress on shared cores: while no worker has work, the progress thread
            // runs the message itself (see run_on_progress_thread).
            .deliver =
                [&st](detail::message* m) {
                    if (st.progress_runs_handlers && st.workers->active() == 0)
                        return detail::run_on_progress_thread(st, m);
                    st.workers->push_here({&detail::dispatch_message, m});
                },
            // Pending object handlers first: one moves from there to active, never back. A
            // coroutine waiting for checkpoint I/O is not idle: it will be queued.
            .idle =
                [&st] {
                    return std::ranges::none_of(st.batches,
                                                [](auto& b) { return b->open_count() > 0; }) &&
                           st.engine->flow().held() == 0 && st.lb->pending() == 0 &&
                           st.workers->active() == 0 && st.io->idle();
                },
            .counts =
                [&st] {
                    detail::local_counts c;
                    std::lock_guard lock(st.waiters_mutex);
                    c.waiters = st.waiters.size();
                    c.entries = st.entries.load(std::memory_order_acquire);
                    return c;
                },
            .decided = [&st](detail::wave_result r) { detail::on_decision(st, r); },
            .error = [](const std::string& what) { detail::report_error(what); },
            .urgent = [](detail::message* m) { detail::dispatch_message(m); },
            .tick =
                [&st] {
                    st.lb->tick();
                    st.io->poll();
                    if (!st.batches.empty()) {
                        auto now = detail::now_ticks();
                        for (auto& b : st.batches)
                            b->request_flush_if_open_for(now, st.aggregate_ticks);
                    }
                },
            .resume = [](std::coroutine_handle<> h) { detail::reschedule(h); },
            .backlog = &detail::ready_backlog(),
        });
    const int threads = st.cfg.workers + (inline_mode ? 0 : 1);
    const bool shares_core = cores.shared(threads);
    const std::uint64_t spin_us = detail::idle_spin_us(cores, threads, st.cfg.spin_us);
    st.progress_runs_handlers = shares_core && !inline_mode;
    if (st.cfg.pin)
        st.pin_cpus = detail::pin_plan(cores, threads);
    st.engine->set_spin_us(spin_us);
    if (shares_core) {
        if (st.rank == 0)
            detail::log().info("{} rank(s) x {} thread(s) on {} core(s) ({} for this rank): "
                               "idle threads sleep instead of spinning{}",
                               cores.node_ranks, threads, cores.node_cores, cores.own_cores,
                               inline_mode ? "" : "; --prema-progress inline saves a thread");
    }
    // Dedicated progress on cores of its own: spinning workers poll too, so that a message for
    // an idle worker involves no hand-off (progress_engine::share_polling), if MPI lets several
    // threads call it in turn.
    const bool workers_poll = !inline_mode && spin_us > 0 && provided >= MPI_THREAD_SERIALIZED;
    if (workers_poll)
        st.engine->share_polling();
    std::function<bool()> idle_poll;
    if (inline_mode || workers_poll)
        idle_poll = [e = st.engine.get()] { return e->try_poll(); };
    using poll_when = detail::worker_pool::poll_when;
    st.workers = std::make_unique<detail::worker_pool>(
        st.cfg.workers, st.cfg.quantum_us, std::move(idle_poll), spin_us,
        inline_mode ? poll_when::always : poll_when::while_spinning);
    st.workers->measure_times(detail::stats_on());
    detail::worker_pool::set_home(st.workers.get());
    st.lb = std::make_unique<detail::balancer>(st.cfg, *st.workers, st.held_above);
    // A batch is one message: it must fit a receive slot and the largest message allowed.
    std::size_t batch_bytes =
        std::min({st.cfg.aggregate_bytes, st.cfg.eager_bytes, st.cfg.max_message_bytes});
    if (batch_bytes >= detail::min_batch_bytes) {
        for (int i = 0; i < st.cfg.workers; ++i)
            st.batches.push_back(std::make_unique<detail::batch_set>(st.pool, *st.engine, st.size,
                                                                     st.rank, batch_bytes));
        st.aggregate_ticks = std::uint64_t(double(st.cfg.aggregate_us) * detail::ticks_per_us());
    }
    // After each item and on each idle round: the object layer's part (the numbers a worker took
    // ahead for its messages to an object go back or are skipped, its direct runs are counted)
    // before its batches leave with what it sent.
    st.workers->set_item_hook(
        [](void* context, int worker, bool idle) {
            detail::after_worker_item();
            auto& batches = static_cast<detail::runtime_state*>(context)->batches;
            if (batches.empty())
                return;
            auto& b = *batches[std::size_t(worker)];
            if (idle)
                b.flush_all();
            else
                b.flush_if_requested();
        },
        &st);
    for (int i = 0; i < st.cfg.workers; ++i)
        st.outboxes.push_back(detail::worker_outbox{
            .lanes = st.batches.empty() ? nullptr : st.batches[std::size_t(i)]->lanes(),
            .eager_bytes = st.cfg.eager_bytes,
            .ranks = st.size,
            .self = st.rank,
            .observing = detail::observing(),
            .flush_requested =
                st.batches.empty() ? nullptr : st.batches[std::size_t(i)]->flush_requested(),
            .senders_held = st.engine->flow().over_flag(),
        });
    st.workers->set_thread_hook(
        [](void* context, int worker, bool starting) {
            auto& st = *static_cast<detail::runtime_state*>(context);
            detail::tls_outbox = starting ? &st.outboxes[std::size_t(worker)] : nullptr;
            thread_local std::unique_ptr<detail::thread_pin> pin;
            if (starting && !st.pin_cpus.empty())
                pin = std::make_unique<detail::thread_pin>(st.pin_cpus[std::size_t(worker)]);
            else
                pin.reset();
        },
        &st);
    st.workers->set_app_source(
        [lb = st.lb.get()](int worker, detail::work_item& w) { return lb->next(worker, w); },
        [lb = st.lb.get()] { return lb->has_work(); });
    detail::log().debug(
        "runtime up: {} ranks, {} workers, {} progress, quantum {} us", st.size, st.cfg.workers,
        detail::describe_progress(st.requested_progress, st.cfg.progress), st.cfg.quantum_us);
    if (st.cfg.show_help && st.rank == 0)
        std::fputs(config::help().c_str(), stdout);
}

runtime::~runtime() {
    auto& st = impl_->st;
    for (auto& f : st.at_shutdown)
        f();
    st.lb->warn_if_held_off();
    // Before the stats: a policy message sent at the very end is received there, not lost.
    st.engine->drain_uncounted();
    detail::observe_finish(st); // collective, on st.comm
    st.workers.reset();
    st.batches.clear();
    st.lb.reset();
    st.engine.reset();
    st.io.reset();
    detail::g_checkpoint_state.store(nullptr, std::memory_order_release);
    detail::clear_pools();
    MPI_Comm_free(&st.comm);
    detail::set_state(nullptr, &st);
}

int runtime::run(entry_fn entry) {
    auto& st = impl_->st;
    if (st.cfg.show_help) // the constructor printed it; every rank returns alike
        return 0;
    st.entry = std::move(entry);
    st.errors.store(0);
    st.phase_over.store(false);
    st.entries.store(1);
    detail::reset_all_reduces(); // before the barrier: no rank's next call can arrive yet
    st.engine->begin_phase();
    auto phase_start = detail::now_ticks();
    st.workers->push(
        {[](void* a) {
             detail::run_entry(*static_cast<detail::runtime_state*>(a)).handle.resume();
         },
         &st});
    if (st.cfg.progress == progress_mode::dedicated) {
        st.workers->start(0);
        {
            detail::thread_pin pin(st.pin_cpus.empty() ? -1 : st.pin_cpus.back());
            st.engine->run(st.phase_over);
        }
        st.workers->stop();
    } else {
        st.workers->start(1);
        st.workers->run_worker(0);
        st.workers->stop();
    }
    st.entry = nullptr;
    st.lb->phase_over();
    if (detail::observing())
        detail::note_phase(detail::now_ticks() - phase_start);
    return st.errors.load() > 0 ? 1 : 0;
}

int run(int& argc, char**& argv, entry_fn entry) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    }
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int rc = 0;
    try {
        config cfg = config::from_args(argc, argv);
        if (cfg.show_version) {
            if (world_rank == 0)
                std::printf("prema %s\n", version());
        } else if (cfg.show_help) {
            if (world_rank == 0)
                std::fputs(config::help().c_str(), stdout);
        } else {
            runtime rt(MPI_COMM_WORLD, std::move(cfg));
            rc = rt.run(std::move(entry));
        }
    } catch (const usage_error& e) {
        if (world_rank == 0)
            std::fprintf(stderr, "prema: %s\n", e.what());
        rc = 2;
    }
    if (!initialized)
        MPI_Finalize();
    return rc;
}

} // namespace prema
