// io_reactor: file I/O for checkpoints through io_uring, completed on the progress thread.
//
// A worker hands a batch of independent operations (open, write, read, fsync, close, rename,
// mkdir, unlink) to run(), or to start() now and wait() for it later (a checkpoint keeps
// packing objects while their first bytes are being written); the awaiting coroutine suspends
// and no thread blocks. poll(), called
// from the progress engine's tick (the one reactor loop), keeps up to `depth` operations in
// flight, reaps completions without blocking, resubmits the rest of a short read or write,
// and requeues the coroutine on a worker when its whole batch is done. Operations that must
// follow others (fsync after writes, rename after fsync) go in the next batch.
//
// The ring is set up on the first batch. If the kernel or the container refuses io_uring,
// batches run synchronously on the calling worker instead (blocking it), with one warning in
// the log: a checkpoint that blocks is better than a long run that cannot save its state.
// Entries a submit leaves in the ring go with the next poll's submit. A submit that fails
// leaves entries nothing can take back out of the ring, so the ring takes no more: those
// operations and every one still waiting for it fail with an error that says so, and later
// batches run synchronously, as without io_uring (one error in the log).
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <sys/types.h>

namespace prema::detail {

struct io_batch;

struct io_op {
    enum class kind : std::uint8_t { open, write, read, fsync, close, rename, mkdir, unlink };
    kind op;
    std::string path;  // the file (or directory) it concerns; the source of a rename
    std::string path2; // the target of a rename
    int fd = -1;
    std::byte* buf = nullptr; // write: const in effect
    std::size_t len = 0;
    std::uint64_t offset = 0;
    int flags = 0; // open, unlink
    mode_t mode = 0;
    int buffered_fd = -1; // write through O_DIRECT: the same file without it

    long result = 0;          // open: the descriptor; otherwise 0; -errno on failure
    std::size_t done = 0;     // read, write: bytes transferred so far
    bool unsubmitted = false; // failed because io_uring took no more entries
    io_batch* batch = nullptr;

    // Throws checkpoint_error naming the operation and the file if it failed or was short.
    void check() const;
};

io_op open_op(std::string path, int flags, mode_t mode = 0644);
io_op write_op(std::string path, int fd, std::span<const std::byte> bytes, std::uint64_t offset);
io_op read_op(std::string path, int fd, std::span<std::byte> into, std::uint64_t offset);
io_op fsync_op(std::string path, int fd);
io_op close_op(std::string path, int fd);
io_op rename_op(std::string from, std::string to);
io_op mkdir_op(std::string path, mode_t mode = 0755);
io_op unlink_op(std::string path, bool directory = false);

// Operations in flight together; started with io_reactor::start, awaited with wait().
struct io_batch {
    explicit io_batch(std::vector<io_op>& o) noexcept : ops(&o) {}
    io_batch(const io_batch&) = delete;

    enum : int { running, waiting, done };
    std::vector<io_op>* ops;
    std::deque<io_op*> todo;  // progress thread (after start)
    std::size_t finished = 0; // progress thread (after start)
    std::coroutine_handle<> waiter;
    std::atomic<int> state{running};
};

class io_reactor {
  public:
    explicit io_reactor(unsigned depth = 64);
    ~io_reactor();
    io_reactor(const io_reactor&) = delete;
    io_reactor& operator=(const io_reactor&) = delete;

    // Hands `b` to the progress thread (or, without io_uring, runs it now). `b` and its ops
    // must stay put until it is done. Any thread.
    void start(io_batch& b);

    // Resumes (on a worker) once `b` is done, each op with its result set. Does not throw for
    // failed operations: check() them. One waiter per batch.
    struct awaiter {
        io_batch& b;
        bool await_ready() const noexcept {
            return b.state.load(std::memory_order_acquire) == io_batch::done;
        }
        bool await_suspend(std::coroutine_handle<> h) noexcept;
        void await_resume() const noexcept {}
    };
    awaiter wait(io_batch& b) noexcept { return {b}; }

    // start + wait, for ops that must outlive the co_await.
    struct run_awaiter {
        io_reactor& reactor;
        io_batch b;
        bool await_ready() {
            reactor.start(b);
            return reactor.wait(b).await_ready();
        }
        bool await_suspend(std::coroutine_handle<> h) noexcept {
            return reactor.wait(b).await_suspend(h);
        }
        void await_resume() const noexcept {}
    };
    run_awaiter run(std::vector<io_op>& ops) { return {*this, io_batch(ops)}; }

    // Progress thread: submits and reaps; true if anything completed.
    bool poll();

    // No batch in flight (quiescence must wait for the coroutines they will resume).
    bool idle() const noexcept { return batches_.load(std::memory_order_acquire) == 0; }

    // Whether batches go through io_uring (false after a refused setup or a failed submit).
    // Sets the ring up.
    bool uses_uring();

  private:
    struct ring;
    void submit();
    int submit_to_kernel(unsigned entries);
    void fail_unsubmitted(io_op& op);
    bool complete(io_op& op, int res);

    unsigned depth_;
    std::once_flag setup_;
    std::unique_ptr<ring> ring_; // null: io_uring refused, batches run synchronously
    std::mutex incoming_mutex_;
    std::vector<io_batch*> incoming_;
    std::deque<io_batch*> active_;    // progress thread only
    unsigned in_flight_ = 0;          // progress thread only: prepared or in the kernel
    std::deque<io_op*> unsubmitted_;  // progress thread only: prepared, not yet taken, in order
    int submit_error_ = 0;            // progress thread only: why the ring takes no more
    std::atomic<bool> broken_{false}; // a submit failed
    std::atomic<int> batches_{0};
};

// Test-only faults (tests/test_checkpoint.cpp). All off in a normal run, where they cost a
// relaxed load per batch, per io_uring submit and per read or write completed.
struct io_faults {
    // Sees every operation as its batch starts; a negative errno fails it without running it.
    std::atomic<int (*)(const io_op&)> intercept{nullptr};
    // The next N io_uring submits of several entries hand the kernel only the first.
    std::atomic<int> partial_submits{0};
    // The next N io_uring submits fail with EBUSY; the kernel takes none of their entries.
    std::atomic<int> failed_submits{0};
    // The next N writes of more than 4 KiB report 100 bytes fewer than they wrote.
    std::atomic<int> short_writes{0};
};
inline io_faults io_fault_injection;

// Runs one operation now, blocking the calling thread; returns the result as io_uring would.
int run_blocking(io_op& op);

} // namespace prema::detail
