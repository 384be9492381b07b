#include "checkpoint/io_reactor.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "prema/coro/yield.hpp"
#include "prema/error.hpp"

namespace prema::detail {

namespace {

const char* verb(io_op::kind k) {
    switch (k) {
    case io_op::kind::open:
        return "open";
    case io_op::kind::write:
        return "write";
    case io_op::kind::read:
        return "read";
    case io_op::kind::fsync:
        return "fsync";
    case io_op::kind::close:
        return "close";
    case io_op::kind::rename:
        return "rename";
    case io_op::kind::mkdir:
        return "mkdir";
    case io_op::kind::unlink:
        return "unlink";
    }
    return "?";
}

bool transfers(const io_op& op) {
    return op.op == io_op::kind::write || op.op == io_op::kind::read;
}

// Takes one of `n` pending injected faults, if any.
bool take_fault(std::atomic<int>& n) {
    int left = n.load(std::memory_order_relaxed);
    while (left > 0 && !n.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
    }
    return left > 0;
}

} // namespace

void io_op::check() const {
    if (unsubmitted)
        throw checkpoint_error(fmt::format("{}: {} could not be submitted to io_uring: {}", path,
                                           verb(op), std::strerror(int(-result))));
    if (result < 0)
        throw checkpoint_error(
            fmt::format("{}: {} failed: {}", path, verb(op), std::strerror(int(-result))));
    if (transfers(*this) && done != len)
        throw checkpoint_error(
            fmt::format("{}: {} of {} bytes at offset {} stopped after {} (file truncated?)", path,
                        verb(op), len, offset, done));
}

namespace {
io_op make_op(io_op::kind k, std::string path) {
    io_op op;
    op.op = k;
    op.path = std::move(path);
    return op;
}
io_op transfer_op(io_op::kind k, std::string path, int fd, std::byte* buf, std::size_t len,
                  std::uint64_t offset) {
    io_op op = make_op(k, std::move(path));
    op.fd = fd;
    op.buf = buf;
    op.len = len;
    op.offset = offset;
    return op;
}
} // namespace

io_op open_op(std::string path, int flags, mode_t mode) {
    io_op op = make_op(io_op::kind::open, std::move(path));
    op.flags = flags | O_CLOEXEC;
    op.mode = mode;
    return op;
}
io_op write_op(std::string path, int fd, std::span<const std::byte> bytes, std::uint64_t offset) {
    return transfer_op(io_op::kind::write, std::move(path), fd,
                       const_cast<std::byte*>(bytes.data()), bytes.size(), offset);
}
io_op read_op(std::string path, int fd, std::span<std::byte> into, std::uint64_t offset) {
    return transfer_op(io_op::kind::read, std::move(path), fd, into.data(), into.size(), offset);
}
io_op fsync_op(std::string path, int fd) {
    io_op op = make_op(io_op::kind::fsync, std::move(path));
    op.fd = fd;
    return op;
}
io_op close_op(std::string path, int fd) {
    io_op op = make_op(io_op::kind::close, std::move(path));
    op.fd = fd;
    return op;
}
io_op rename_op(std::string from, std::string to) {
    io_op op = make_op(io_op::kind::rename, std::move(from));
    op.path2 = std::move(to);
    return op;
}
io_op mkdir_op(std::string path, mode_t mode) {
    io_op op = make_op(io_op::kind::mkdir, std::move(path));
    op.mode = mode;
    return op;
}
io_op unlink_op(std::string path, bool directory) {
    io_op op = make_op(io_op::kind::unlink, std::move(path));
    op.flags = directory ? AT_REMOVEDIR : 0;
    return op;
}

int run_blocking(io_op& op) {
    long r = 0;
    auto at = op.offset + op.done;
    switch (op.op) {
    case io_op::kind::open:
        r = ::open(op.path.c_str(), op.flags, op.mode);
        break;
    case io_op::kind::write:
        r = ::pwrite(op.fd, op.buf + op.done, op.len - op.done, off_t(at));
        break;
    case io_op::kind::read:
        r = ::pread(op.fd, op.buf + op.done, op.len - op.done, off_t(at));
        break;
    case io_op::kind::fsync:
        r = ::fsync(op.fd);
        break;
    case io_op::kind::close:
        r = ::close(op.fd);
        break;
    case io_op::kind::rename:
        r = ::rename(op.path.c_str(), op.path2.c_str());
        break;
    case io_op::kind::mkdir:
        r = ::mkdir(op.path.c_str(), op.mode);
        break;
    case io_op::kind::unlink:
        r = ::unlinkat(AT_FDCWD, op.path.c_str(), op.flags);
        break;
    }
    return r < 0 ? -errno : int(r);
}

struct io_reactor::ring {
    io_uring r;
};

io_reactor::io_reactor(unsigned depth) : depth_(depth) {}

io_reactor::~io_reactor() {
    if (ring_)
        io_uring_queue_exit(&ring_->r);
}

bool io_reactor::uses_uring() {
    std::call_once(setup_, [this] {
        auto r = std::make_unique<ring>();
        if (int e = io_uring_queue_init(depth_, &r->r, 0); e < 0)
            log().warn("io_uring is not available ({}): checkpoint I/O blocks worker threads",
                       std::strerror(-e));
        else
            ring_ = std::move(r);
    });
    return ring_ != nullptr && !broken_.load(std::memory_order_acquire);
}

void io_reactor::start(io_batch& b) {
    if (b.ops->empty()) {
        b.state.store(io_batch::done, std::memory_order_release);
        return;
    }
    auto intercept = io_fault_injection.intercept.load(std::memory_order_relaxed);
    for (auto& op : *b.ops)
        op.batch = &b;
    if (!uses_uring()) {
        for (auto& op : *b.ops) {
            if (int e = intercept ? intercept(op) : 0; e < 0)
                complete(op, e);
            else
                while (complete(op, run_blocking(op))) {
                }
        }
        b.state.store(io_batch::done, std::memory_order_release);
        return;
    }
    for (auto& op : *b.ops) {
        if (int e = intercept ? intercept(op) : 0; e < 0)
            complete(op, e);
        else
            b.todo.push_back(&op);
    }
    batches_.fetch_add(1, std::memory_order_acq_rel);
    std::lock_guard lock(incoming_mutex_);
    incoming_.push_back(&b);
}

bool io_reactor::awaiter::await_suspend(std::coroutine_handle<> h) noexcept {
    b.waiter = h;
    int expected = io_batch::running;
    // False (resume at once) if the batch finished meanwhile.
    return b.state.compare_exchange_strong(expected, io_batch::waiting, std::memory_order_acq_rel);
}

// Records one completion. A read or write that moved fewer bytes than asked is resubmitted for
// the rest: then complete() returns true. A read that reaches the end of the file stops short
// and check() says so.
bool io_reactor::complete(io_op& op, int res) {
    if (res > 4096 && op.op == io_op::kind::write && take_fault(io_fault_injection.short_writes))
        res -= 100;
    if (res >= 0 && transfers(op)) {
        op.done += std::size_t(res);
        if (res > 0 && op.done < op.len) {
            // Through O_DIRECT the rest may start off alignment, which is EINVAL there.
            if (op.buffered_fd >= 0)
                op.fd = op.buffered_fd;
            return true;
        }
        res = 0;
    }
    op.result = res;
    ++op.batch->finished;
    return false;
}

void io_reactor::fail_unsubmitted(io_op& op) {
    op.unsubmitted = true;
    complete(op, submit_error_);
}

void io_reactor::submit() {
    if (broken_.load(std::memory_order_relaxed)) {
        for (auto* b : active_)
            for (; !b->todo.empty(); b->todo.pop_front())
                fail_unsubmitted(*b->todo.front());
        return;
    }
    for (auto* b : active_) {
        while (in_flight_ < depth_ && !b->todo.empty()) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring_->r);
            if (!sqe)
                break;
            io_op& op = *b->todo.front();
            b->todo.pop_front();
            auto at = op.offset + op.done;
            switch (op.op) {
            case io_op::kind::open:
                io_uring_prep_openat(sqe, AT_FDCWD, op.path.c_str(), op.flags, op.mode);
                break;
            case io_op::kind::write:
                io_uring_prep_write(sqe, op.fd, op.buf + op.done, unsigned(op.len - op.done), at);
                break;
            case io_op::kind::read:
                io_uring_prep_read(sqe, op.fd, op.buf + op.done, unsigned(op.len - op.done), at);
                break;
            case io_op::kind::fsync:
                io_uring_prep_fsync(sqe, op.fd, 0);
                break;
            case io_op::kind::close:
                io_uring_prep_close(sqe, op.fd);
                break;
            case io_op::kind::rename:
                io_uring_prep_renameat(sqe, AT_FDCWD, op.path.c_str(), AT_FDCWD, op.path2.c_str(),
                                       0);
                break;
            case io_op::kind::mkdir:
                io_uring_prep_mkdirat(sqe, AT_FDCWD, op.path.c_str(), op.mode);
                break;
            case io_op::kind::unlink:
                io_uring_prep_unlinkat(sqe, AT_FDCWD, op.path.c_str(), op.flags);
                break;
            }
            io_uring_sqe_set_data(sqe, &op);
            ++in_flight_;
            unsubmitted_.push_back(&op);
        }
    }
    if (unsubmitted_.empty())
        return;
    int taken = submit_to_kernel(unsigned(unsubmitted_.size()));
    if (taken >= 0) {
        // The kernel takes entries in ring order; the rest stay there for the next submit.
        unsubmitted_.erase(unsubmitted_.begin(),
                           unsubmitted_.begin() +
                               std::ptrdiff_t(std::min(std::size_t(taken), unsubmitted_.size())));
        return;
    }
    log().error("io_uring_submit failed ({}): {} operation(s) and those waiting fail; checkpoint "
                "I/O blocks worker threads from now on",
                std::strerror(-taken), unsubmitted_.size());
    submit_error_ = taken;
    broken_.store(true, std::memory_order_release);
    for (auto* op : unsubmitted_)
        fail_unsubmitted(*op);
    in_flight_ -= unsigned(unsubmitted_.size());
    unsubmitted_.clear();
    submit(); // fails the operations still waiting
}

int io_reactor::submit_to_kernel(unsigned entries) {
    if (take_fault(io_fault_injection.failed_submits))
        return -EBUSY;
    if (entries > 1 && take_fault(io_fault_injection.partial_submits)) {
        // What io_uring_submit does, but with the kernel told to take one entry only.
        auto& sq = ring_->r.sq;
        sq.sqe_head = sq.sqe_tail;
        io_uring_smp_store_release(sq.ktail, sq.sqe_tail);
        return io_uring_enter(unsigned(ring_->r.ring_fd), 1, 0, 0, nullptr);
    }
    return io_uring_submit(&ring_->r);
}

bool io_reactor::poll() {
    if (batches_.load(std::memory_order_acquire) == 0)
        return false;
    {
        std::lock_guard lock(incoming_mutex_);
        active_.insert(active_.end(), incoming_.begin(), incoming_.end());
        incoming_.clear();
    }
    bool moved = false;
    io_uring_cqe* cqe = nullptr;
    while (in_flight_ > 0 && io_uring_peek_cqe(&ring_->r, &cqe) == 0) {
        auto& op = *static_cast<io_op*>(io_uring_cqe_get_data(cqe));
        int res = cqe->res;
        io_uring_cqe_seen(&ring_->r, cqe);
        --in_flight_;
        moved = true;
        if (complete(op, res))
            op.batch->todo.push_front(&op);
    }
    // A finished batch leaves before its coroutine is queued (once that runs, the batch may be
    // gone), and counts as in flight until then, so that the rank never looks idle between.
    for (auto it = active_.begin(); it != active_.end();) {
        io_batch* b = *it;
        if (b->finished == b->ops->size()) {
            it = active_.erase(it);
            // Waiting: its coroutine stays suspended (and the batch alive) until queued here.
            if (b->state.exchange(io_batch::done, std::memory_order_acq_rel) == io_batch::waiting)
                reschedule(b->waiter);
            batches_.fetch_sub(1, std::memory_order_acq_rel);
        } else {
            ++it;
        }
    }
    submit();
    return moved;
}

} // namespace prema::detail
