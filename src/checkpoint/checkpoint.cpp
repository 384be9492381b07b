// Checkpoint and restart (prema/checkpoint.hpp): the files of one checkpoint, the rounds in
// which the ranks agree that every step succeeded, the choice of what each rank loads.
#include "prema/checkpoint.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <deque>
#include <filesystem>
#include <optional>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/log.hpp"
#include "checkpoint/checkpoint_state.hpp"
#include "checkpoint/coordinator.hpp"
#include "checkpoint/io_reactor.hpp"
#include "checkpoint/manifest.hpp"
#include "objects/object_snapshot.hpp"
#include "objects/wire_decode.hpp"
#include "prema/quiescence.hpp"
#include "prema/transport/call.hpp"
#include "prema/transport/send.hpp"
#include "transport/transport_state.hpp"

namespace prema {
namespace detail {

namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

constexpr std::size_t chunk_bytes = std::size_t{1} << 20; // one write or read in flight

// In front of every rank file (kind 'D') and of root.bin (kind 'R').
struct file_header {
    char magic[7] = {'P', 'R', 'E', 'M', 'A', 'C', 'K'};
    char kind = 'D';
    std::uint32_t version = checkpoint_format;
    std::int32_t rank = -1;
    std::uint64_t objects = 0;
    std::uint64_t type = 0; // root.bin: hash of the root's type
};
static_assert(sizeof(file_header) == 32);

coordinator& coord() {
    return *checkpoint_layer().checkpoints;
}

void note_error(std::uint64_t round, int from, std::string what) {
    std::lock_guard lock(coord().mutex);
    coord().errors.try_emplace(round, fmt::format("rank {}: {}", from, what));
}

std::string verdict(std::uint64_t round) {
    std::lock_guard lock(coord().mutex);
    auto it = coord().errors.find(round);
    return it == coord().errors.end() ? std::string() : it->second;
}

void note_file(int from, std::string name, std::uint64_t objects, std::uint64_t bytes,
               std::uint64_t sum, std::uint64_t serial) {
    auto& c = coord();
    std::lock_guard lock(c.mutex);
    c.files.resize(std::size_t(ranks()));
    c.files[std::size_t(from)] = {std::move(name), objects, bytes, sum};
    c.serial = std::max(c.serial, serial);
}

std::uint64_t chosen_seq() {
    std::lock_guard lock(coord().mutex);
    return coord().seq;
}

bool due_at(std::uint64_t step, double seconds) {
    auto& c = coord();
    std::lock_guard lock(c.mutex);
    auto now = clock::now();
    if (!c.last)
        c.last = now;
    auto [it, fresh] = c.due.try_emplace(step, false, 0);
    if (fresh && std::chrono::duration<double>(now - *c.last).count() >= seconds) {
        it->second.first = true;
        c.last = now;
    }
    bool answer = it->second.first;
    if (++it->second.second == ranks())
        c.due.erase(it);
    return answer;
}

// Collective: every rank says whether its part failed; at quiescence each learns the first
// failure, and all throw it together (a checkpoint never counts on some ranks only).
task<> agree(const std::string& mine) {
    std::uint64_t round = 0;
    {
        std::lock_guard lock(coord().mutex);
        round = ++coord().rounds;
    }
    if (!mine.empty())
        co_await send(0, fn<&note_error>, round, rank(), mine);
    co_await quiescence();
    auto first = co_await call(0, fn<&verdict>, round);
    if (!first.empty())
        throw checkpoint_error(first);
}

std::string describe_current() {
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "a non-standard exception";
    }
}

io_reactor& io() {
    return *checkpoint_layer().io;
}

task<> run_checked(std::vector<io_op>& ops) {
    co_await io().run(ops);
    for (auto& op : ops)
        op.check();
}

// Checkpoints are dir/ckpt-NNNNNN; the highest N, among complete ones (with a manifest) or all,
// as this rank's listing shows it (see listing_view).
std::optional<std::uint64_t> newest(const fs::path& dir, bool complete) {
    std::optional<std::uint64_t> best;
    for (auto& entry : fs::directory_iterator(dir)) {
        auto name = entry.path().filename().string();
        if (name.size() < 6 || name.compare(0, 5, "ckpt-") != 0)
            continue;
        std::uint64_t n = 0;
        auto [p, ec] = std::from_chars(name.data() + 5, name.data() + name.size(), n);
        if (ec != std::errc{} || p != name.data() + name.size())
            continue;
        if (complete && !fs::exists(entry.path() / "manifest"))
            continue;
        if (!best || n > *best)
            best = n;
    }
    return listing_view ? listing_view(best) : best;
}

std::string checkpoint_path(const std::string& dir, std::uint64_t seq) {
    return fmt::format("{}/ckpt-{:06}", dir, seq);
}

// Descriptors this coroutine opened; closed with a blocking call only if a step failed.
struct open_files {
    std::vector<int> fds;
    open_files() = default;
    open_files(const open_files&) = delete;
    ~open_files() {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }
};

struct file_image {
    std::string path;
    std::span<const std::byte> bytes;
};

// Opens, writes in chunks (up to the reactor's depth in flight), fsyncs and closes `files`.
task<> write_files(const std::vector<file_image>& files, open_files& fds,
                   int flags = O_WRONLY | O_CREAT | O_TRUNC) {
    std::vector<io_op> ops;
    for (auto& f : files)
        ops.push_back(open_op(f.path, flags));
    co_await io().run(ops);
    for (auto& op : ops)
        fds.fds.push_back(int(op.result));
    for (auto& op : ops)
        op.check();
    ops.clear();
    for (std::size_t i = 0; i < files.size(); ++i)
        for (std::size_t at = 0; at < files[i].bytes.size(); at += chunk_bytes)
            ops.push_back(write_op(
                files[i].path, fds.fds[i],
                files[i].bytes.subspan(at, std::min(chunk_bytes, files[i].bytes.size() - at)), at));
    co_await run_checked(ops);
    ops.clear();
    for (std::size_t i = 0; i < files.size(); ++i)
        ops.push_back(fsync_op(files[i].path, fds.fds[i]));
    co_await run_checked(ops);
    ops.clear();
    for (std::size_t i = 0; i < files.size(); ++i)
        ops.push_back(close_op(files[i].path, std::exchange(fds.fds[i], -1)));
    co_await run_checked(ops);
}

// A rank file written while it is being packed: every piece of at least piece_bytes goes to the
// disk as soon as it is full, in chunks, while the next one fills. At most max_pieces are in
// flight: the oldest one's buffer (its pages already faulted in) then holds the next piece, so
// memory stays bounded whatever the objects weigh; the buffers stay with the runtime for the
// next checkpoint, so that only the first one pays for faulting their pages in. Chunks that start
// and end on page boundaries (all but the file's last few bytes: a piece leaves its unaligned tail
// to the next) go through an O_DIRECT descriptor when the file system takes one, around the page
// cache: the disk reads them from the piece and the fsync has little left to flush.
class streamed_file {
  public:
    static constexpr std::size_t piece_bytes = 4 * chunk_bytes;
    static constexpr std::size_t max_pieces = 8;
    static constexpr std::size_t page = 4096;

    // `buffered` must be open; `direct` is -1 if O_DIRECT was refused.
    streamed_file(std::string path, int buffered, int direct)
        : path_(std::move(path)), buffered_(buffered), direct_(direct) {}

    // Where the next bytes go; co_await next_record() between records.
    byte_writer& writer() noexcept { return w_; }

    task<> next_record() {
        if (w_.size() < piece_bytes)
            co_return;
        if (in_flight_.size() < max_pieces)
            co_return flush(spare_buffer(), false);
        auto oldest = std::move(in_flight_.front());
        in_flight_.pop_front();
        co_await io().wait(oldest->batch);
        check(*oldest);
        oldest->bytes.clear();
        flush(std::move(oldest->bytes), false);
    }

    // Writes what is left and waits for every piece, also after a failure (the pieces must
    // outlive their writes); then throws for a failed or short write.
    task<> finish() {
        flush({}, true);
        for (auto& p : in_flight_)
            co_await io().wait(p->batch);
        for (auto& p : in_flight_)
            check(*p);
        std::lock_guard lock(coord().mutex);
        auto& pool = coord().buffers;
        for (auto& p : in_flight_)
            if (pool.size() < max_pieces + 1)
                pool.push_back(std::move(p->bytes));
    }

    std::uint64_t bytes() const noexcept { return offset_; }
    std::uint64_t checksum() const noexcept { return sum_.value(); }

  private:
    struct piece {
        byte_vector bytes;
        std::vector<io_op> ops;
        io_batch batch{ops};
    };

    // A buffer for the next piece from the runtime's pool, or a new one (its capacity is
    // reserved up front: growing it would copy and fault in the pages twice).
    static byte_vector spare_buffer() {
        {
            std::lock_guard lock(coord().mutex);
            auto& pool = coord().buffers;
            if (!pool.empty()) {
                auto b = std::move(pool.back());
                pool.pop_back();
                b.clear();
                return b;
            }
        }
        byte_vector b;
        b.reserve(2 * piece_bytes);
        return b;
    }

    static void check(const piece& p) {
        for (auto& op : p.ops)
            op.check();
    }

    // Starts writing what the writer holds (the last piece: all of it; otherwise up to a page
    // boundary, the rest begins `next`).
    void flush(byte_vector next, bool last) {
        auto p = std::make_unique<piece>();
        p->bytes = std::move(w_.heap());
        std::size_t n = w_.size(), keep = last ? n : n / page * page;
        w_ = byte_writer(nullptr, 0);
        w_.heap() = std::move(next);
        w_.write(p->bytes.data() + keep, n - keep);
        p->bytes.resize(keep);
        std::span<const std::byte> all(p->bytes);
        sum_.add(all);
        for (std::size_t at = 0; at < all.size(); at += chunk_bytes) {
            auto part = all.subspan(at, std::min(chunk_bytes, all.size() - at));
            bool aligned = reinterpret_cast<std::uintptr_t>(part.data()) % page == 0 &&
                           part.size() % page == 0; // offsets are: pieces are whole pages
            auto op = write_op(path_, buffered_, part, offset_ + at);
            if (aligned && direct_ >= 0) {
                op.fd = direct_;
                op.buffered_fd = buffered_;
            }
            p->ops.push_back(std::move(op));
        }
        offset_ += all.size();
        io().start(p->batch);
        in_flight_.push_back(std::move(p));
    }

    std::string path_;
    int buffered_, direct_;
    byte_writer w_ = first_writer();
    std::uint64_t offset_ = 0;
    checksum_stream sum_;
    std::deque<std::unique_ptr<piece>> in_flight_;

    static byte_writer first_writer() {
        byte_writer w(nullptr, 0);
        w.heap() = spare_buffer();
        return w;
    }
};

// Packs this rank's objects into `path` as they are written; returns what the manifest lists.
task<checkpoint_file> write_rank_file(const std::string& path, std::string name) {
    auto objects = objects_to_save();
    open_files fds;
    std::vector<io_op> ops{open_op(path, O_WRONLY | O_CREAT | O_TRUNC)};
    co_await run_checked(ops);
    fds.fds.push_back(int(ops[0].result));
    ops = {open_op(path, O_WRONLY | O_DIRECT)};
    co_await io().run(ops);
    if (ops[0].result != -EINVAL) // EINVAL: the file system has no O_DIRECT (tmpfs)
        ops[0].check();
    fds.fds.push_back(int(ops[0].result));
    streamed_file file(path, fds.fds[0], fds.fds[1]);
    file_header h;
    h.rank = rank();
    h.objects = objects.size();
    std::exception_ptr failed; // a type's serialize() threw: wait for the writes started
    try {
        file.writer().write(&h, sizeof h);
        for (auto& rec : objects) {
            auto& w = file.writer();
            std::uint64_t n = 0;
            std::size_t at = w.size();
            w.write(&n, sizeof n);
            pack_object(w, *rec);
            n = w.size() - at - sizeof n;
            w.patch(at, &n, sizeof n);
            co_await file.next_record();
        }
    } catch (...) {
        failed = std::current_exception();
    }
    co_await file.finish();
    if (failed)
        std::rethrow_exception(failed);
    ops = {fsync_op(path, fds.fds[0])};
    co_await run_checked(ops);
    ops.clear();
    for (int& fd : fds.fds)
        if (fd >= 0)
            ops.push_back(close_op(path, std::exchange(fd, -1)));
    co_await run_checked(ops);
    co_return checkpoint_file{std::move(name), objects.size(), file.bytes(), file.checksum()};
}

// fsync of directories, so that the names created or renamed in them are durable.
task<> sync_directories(const std::vector<std::string>& paths) {
    std::vector<file_image> dirs;
    for (auto& p : paths)
        dirs.push_back({p, {}});
    open_files fds;
    co_await write_files(dirs, fds, O_RDONLY | O_DIRECTORY);
}

task<> write_manifest(const std::string& ck, const std::string& dir) {
    manifest m;
    {
        auto& c = coord();
        std::lock_guard lock(c.mutex);
        m.ranks = ranks();
        m.serial = c.serial;
        m.root = c.root;
        m.files = std::exchange(c.files, {});
        c.serial = 0;
    }
    for (auto& f : m.files)
        m.objects += f.objects;
    std::string text = format_manifest(m);
    open_files fds;
    std::vector<file_image> files{{ck + "/manifest.tmp", std::as_bytes(std::span(text))}};
    co_await write_files(files, fds);
    std::vector<io_op> ops{rename_op(ck + "/manifest.tmp", ck + "/manifest")};
    co_await run_checked(ops);
    std::vector<std::string> dirs{ck, dir}; // (a braced list inside co_await trips GCC 12)
    co_await sync_directories(dirs);
}

// Removes the checkpoints older than `seq` (complete or not); failures are only logged.
task<> remove_older(const std::string& dir, std::uint64_t seq) {
    std::vector<io_op> files, dirs;
    std::error_code ec;
    for (auto& entry : fs::directory_iterator(dir, ec)) {
        auto name = entry.path().filename().string();
        std::uint64_t n = 0;
        if (name.compare(0, 5, "ckpt-") != 0 ||
            std::from_chars(name.data() + 5, name.data() + name.size(), n).ec != std::errc{} ||
            n >= seq)
            continue;
        for (auto& f : fs::directory_iterator(entry.path(), ec))
            files.push_back(unlink_op(f.path().string()));
        dirs.push_back(unlink_op(entry.path().string(), true));
    }
    co_await io().run(files);
    co_await io().run(dirs);
    for (auto* ops : {&files, &dirs})
        for (auto& op : *ops)
            if (op.result < 0)
                log().warn("removing an old checkpoint: {}: {}", op.path,
                           std::strerror(-int(op.result)));
}

byte_vector with_header(const file_header& h, std::span<const std::byte> body) {
    byte_vector v(sizeof h + body.size());
    std::memcpy(v.data(), &h, sizeof h);
    if (!body.empty())
        std::memcpy(v.data() + sizeof h, body.data(), body.size());
    return v;
}

// Reads a whole file in chunks; its size must be `bytes` (from the manifest) if given.
task<byte_vector> read_file(const std::string& path, std::optional<std::uint64_t> bytes) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    if (ec)
        throw checkpoint_error(fmt::format("{}: {}", path, ec.message()));
    if (bytes && size != *bytes)
        throw checkpoint_error(fmt::format("{}: {} bytes, the manifest says {} ({})", path, size,
                                           *bytes, size < *bytes ? "truncated" : "too long"));
    byte_vector v(size);
    open_files fds;
    std::vector<io_op> ops{open_op(path, O_RDONLY)};
    co_await io().run(ops);
    fds.fds.push_back(int(ops[0].result));
    ops[0].check();
    ops.clear();
    for (std::size_t at = 0; at < size; at += chunk_bytes)
        ops.push_back(read_op(path, fds.fds[0],
                              std::span(v).subspan(at, std::min(chunk_bytes, size - at)), at));
    co_await run_checked(ops);
    ops = {close_op(path, std::exchange(fds.fds[0], -1))};
    co_await run_checked(ops);
    co_return v;
}

// Reads `f` from `ck`, checks its size, checksum and header; returns the bytes after the header.
task<byte_vector> load_checked(const std::string& ck, const checkpoint_file& f, char kind,
                               std::uint64_t type) {
    auto path = ck + "/" + f.name;
    auto bytes = co_await read_file(path, f.bytes);
    if (checksum(bytes) != f.checksum)
        throw checkpoint_error(
            fmt::format("{}: checksum mismatch (the file is corrupt): {:016x}, the manifest says "
                        "{:016x}",
                        path, checksum(bytes), f.checksum));
    file_header h, want;
    want.kind = kind;
    if (bytes.size() < sizeof h)
        throw checkpoint_error(fmt::format("{}: shorter than its header", path));
    std::memcpy(&h, bytes.data(), sizeof h);
    if (std::memcmp(h.magic, want.magic, sizeof h.magic) != 0 || h.kind != kind)
        throw checkpoint_error(
            fmt::format("{}: not a PREMA checkpoint {} file", path, kind == 'R' ? "root" : "data"));
    if (h.version != want.version)
        throw checkpoint_error(fmt::format("{}: format version {}, this build reads {}", path,
                                           h.version, want.version));
    if (h.objects != f.objects)
        throw checkpoint_error(
            fmt::format("{}: holds {} objects, the manifest says {}", path, h.objects, f.objects));
    if (h.type != type)
        throw checkpoint_error(
            fmt::format("{}: the root was saved from another type than restart<> asks for", path));
    co_return byte_vector(bytes.begin() + sizeof h, bytes.end());
}

// Decodes the records [from, to) of a rank file's body (records numbered from 0 in the file).
std::vector<record_ptr> decode_records(const std::string& path, std::span<const std::byte> body,
                                       std::uint64_t from, std::uint64_t to) {
    std::vector<record_ptr> recs;
    try {
        byte_reader r(body);
        for (std::uint64_t i = 0; i < to; ++i) {
            std::uint64_t n = 0;
            r.read(&n, sizeof n);
            if (n > r.remaining())
                throw wire_error(fmt::format("object {} of {} bytes truncated", i, n));
            auto rec = r.rest().first(n);
            if (i >= from) {
                try {
                    recs.push_back(decode_install(rec).record);
                } catch (const wire_error& e) {
                    throw wire_error(fmt::format("object {}: {}", i, e.what()));
                }
            }
            r = byte_reader(r.rest().subspan(n));
        }
    } catch (const wire_error& e) {
        for (auto& rec : recs)
            rec->type->destroy(rec->object);
        throw checkpoint_error(fmt::format("{}: {} (incompatible or corrupt)", path, e.what()));
    }
    return recs;
}

} // namespace

task<> write_checkpoint(std::string dir, byte_vector root, std::uint64_t root_type) {
    auto start = clock::now();
    checkpoint_stats stats;
    int me = rank();
    std::string err;
    try {
        fs::create_directories(dir);
        // One rank picks the number: listings of a shared file system can lag on some ranks,
        // and a rank that took the previous checkpoint's number would truncate its files.
        if (me == 0) {
            auto found = newest(dir, false);
            auto seq = found.value_or(0) + 1;
            std::lock_guard lock(coord().mutex);
            coord().seq = seq;
        }
    } catch (...) {
        err = fmt::format("checkpoint directory {}: {}", dir, describe_current());
    }
    co_await agree(err); // rank 0 has chosen seq before any rank asks or creates it
    auto seq = co_await call(0, fn<&chosen_seq>);
    auto ck = checkpoint_path(dir, seq);
    try {
        std::vector<io_op> ops{mkdir_op(ck)};
        co_await io().run(ops);
        if (ops[0].result != -EEXIST)
            ops[0].check();
        auto writing = clock::now();
        auto mine = co_await write_rank_file(fmt::format("{}/rank-{}.bin", ck, me),
                                             fmt::format("rank-{}.bin", me));
        stats.write_s = std::chrono::duration<double>(clock::now() - writing).count();
        stats.objects = mine.objects;
        stats.bytes = mine.bytes;
        if (me == 0) {
            file_header rh;
            rh.kind = 'R';
            rh.type = root_type;
            auto image = with_header(rh, root);
            {
                std::lock_guard lock(coord().mutex);
                coord().root = {"root.bin", 0, image.size(), checksum(image)};
            }
            std::vector<file_image> files{{ck + "/root.bin", image}};
            open_files fds;
            co_await write_files(files, fds);
        }
        co_await send(0, fn<&note_file>, me, mine.name, mine.objects, mine.bytes, mine.checksum,
                      issued_serial());
    } catch (...) {
        err = describe_current();
    }
    co_await agree(err);
    if (me == 0) {
        try {
            co_await write_manifest(ck, dir);
            {
                std::lock_guard lock(coord().mutex);
                coord().last = clock::now();
            }
            co_await remove_older(dir, seq);
        } catch (...) {
            err = describe_current();
        }
    }
    co_await agree(err);
    stats.total_s = std::chrono::duration<double>(clock::now() - start).count();
    std::lock_guard lock(coord().mutex);
    coord().stats = stats;
}

task<> read_checkpoint(std::string dir, std::uint64_t root_type,
                       std::function<void(byte_reader&)> decode_root) {
    if (holds_objects())
        throw usage_error("prema::restart must come first in the entry coroutine, before this "
                          "rank creates or receives any object");
    int me = rank(), n = ranks();
    std::string err;
    std::vector<record_ptr> recs;
    manifest m;
    // One rank picks the checkpoint, as for writing: a rank whose listing lags would load an
    // older one than the others, and the job would go on from a mixed state without noticing.
    try {
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            throw checkpoint_error(fmt::format("{}: no such checkpoint directory", dir));
        if (me == 0) {
            auto seq = newest(dir, true);
            if (!seq)
                throw checkpoint_error(fmt::format(
                    "{}: no complete checkpoint (no ckpt-N directory with a manifest)", dir));
            std::lock_guard lock(coord().mutex);
            coord().seq = *seq;
        }
    } catch (...) {
        err = describe_current();
    }
    co_await agree(err); // rank 0 has chosen before any rank asks
    const std::uint64_t seq = co_await call(0, fn<&chosen_seq>);
    try {
        auto ck = checkpoint_path(dir, seq);
        auto text = co_await read_file(ck + "/manifest", std::nullopt);
        m = parse_manifest(
            std::string_view(reinterpret_cast<const char*>(text.data()), text.size()),
            ck + "/manifest");
        auto root = co_await load_checked(ck, m.root, 'R', root_type);
        try {
            byte_reader r(root);
            decode_root(r);
            if (r.remaining())
                throw wire_error(fmt::format("{} bytes left over", r.remaining()));
        } catch (const wire_error& e) {
            throw checkpoint_error(fmt::format("{}/{}: root: {}", ck, m.root.name, e.what()));
        }
        // Same rank count: each rank takes its own file back. Otherwise blocks of the saved order.
        std::uint64_t lo = 0, hi = 0, start = 0;
        if (m.ranks == n) {
            for (int r = 0; r < me; ++r)
                lo += m.files[std::size_t(r)].objects;
            hi = lo + m.files[std::size_t(me)].objects;
        } else {
            lo = m.objects * std::uint64_t(me) / std::uint64_t(n);
            hi = m.objects * std::uint64_t(me + 1) / std::uint64_t(n);
        }
        for (auto& f : m.files) {
            std::uint64_t end = start + f.objects;
            if (std::max(lo, start) < std::min(hi, end)) {
                auto body = co_await load_checked(ck, f, 'D', 0);
                auto got = decode_records(ck + "/" + f.name, body, std::max(lo, start) - start,
                                          std::min(hi, end) - start);
                recs.insert(recs.end(), got.begin(), got.end());
            }
            start = end;
        }
    } catch (...) {
        err = describe_current();
    }
    try {
        co_await agree(err);
    } catch (...) {
        for (auto& rec : recs)
            rec->type->destroy(rec->object);
        throw;
    }
    reserve_serials(m.serial);
    install_restored(std::move(recs));
    co_await quiescence(); // every home knows where its objects are before anyone sends
}

} // namespace detail

checkpoint_stats last_checkpoint_stats() {
    auto& c = detail::coord();
    std::lock_guard lock(c.mutex);
    return c.stats;
}

const std::string& restart_dir() {
    return current_config().restart;
}

task<bool> checkpoint_due(checkpoint_policy p, std::uint64_t step) {
    if (p.every_steps > 0 && step > 0 && step % p.every_steps == 0)
        co_return true;
    if (p.every_seconds <= 0)
        co_return false;
    co_return co_await call(0, fn<&detail::due_at>, step, p.every_seconds);
}

} // namespace prema
