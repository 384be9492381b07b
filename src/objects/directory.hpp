// directory: where this rank believes each mobile object lives.
//
// An unknown object is looked for at its home, home_of(id): its creator, or after a restart on
// fewer ranks, creator mod ranks (a restart tells every home where its objects are). Entries
// change only on the ranks a creation or migration involves, and lazily on a sender when a
// forwarded message of its arrives (update_if_newer, which discards updates older than what it
// knows by the object's move count). Sharded, one mutex per shard: workers never share a global
// lock.
//
// An entry also holds this rank's numbering of its messages to the object (next_send). Entries
// are collected at epochs (collect): what remains is the objects living here, the objects whose
// home this rank is, and what changed or was used in the last two epochs
// (docs/design/ordering-and-forwarding.md says why that is safe).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "coro/light_mutex.hpp"
#include "objects/object_record.hpp"
#include "transport/transport_state.hpp"

namespace prema::detail {

// creator mod ranks: the creator itself unless a restart shrank the job.
int home_of(object_id id) noexcept;

struct location {
    int rank = -1; // best guess
    std::uint64_t moves = 0;
    record_ptr local; // set when the object lives here
    bool destroyed = false;
    bool known = false; // false: never heard of it (rank is its home)
};

class directory {
  public:
    directory() { erasures_.fetch_add(1, std::memory_order_relaxed); }

    location find(object_id id);

    // The record of `id` if it lives here, else null. Repeated looks from one thread cost no
    // lock: the thread keeps its last answers (one per slot of a small table, by id, so that
    // messages to many objects in turn find theirs too) while no record was installed and the
    // directory was not cleared since. An answer may name a record the object has since left
    // or that was destroyed: callers check gone_to under the record's lock, as they must
    // anyway. The thread's table holds a reference until its next look; a caller that keeps the
    // record longer holds access to it (which keeps the object here, and so the directory's
    // reference) or takes one of its own (shared_from_this).
    object_record* local_record(object_id id);

    // What a message to an object needs from the directory, without a reference to the record:
    // the next outgoing sequence number from this rank to `id` (in its stream) and where to send
    // it.
    struct send_slot {
        std::uint64_t seq;
        std::uint64_t stream;
        int rank;            // best guess
        std::uint64_t moves; // of the object when it reached `rank`
        bool routed_here;    // the object lives here, was destroyed, or the guess names no rank
    };
    // With `ahead` (a worker thread, which calls close_block after each item), a thread that
    // sends message after message to one object takes their numbers in blocks, doubling up to
    // max_block: its next messages to the object take the block's numbers without the shard's
    // lock, whose locked instruction was a third of a flood's sending time (2026-11-29), and
    // with the block's `where`, which may grow stale as any belief in flight does (routing
    // forwards). A block serves while its thread's item runs, in one epoch (no quiescence can
    // be decided meanwhile, so the entry stays), and while nobody else numbered a message to
    // the object after it. Gives the number in `seq` and the place the block was taken with
    // (its own seq unused); null if there is none: call close_block first, then next_send.
    // Inline, and no slot built: a slot returned through memory was read back by wider loads
    // than the stores that had just written it, which wait for those stores to reach the
    // cache (a quarter of a flood's sending time, 2026-11-29).
    const send_slot* next_from_block(object_id id, std::uint64_t& seq) noexcept {
        auto& b = block_;
        // An epoch or an erasure since the block was taken: the shard's entry has the word.
        if (b.next == b.end || b.id != id ||
            b.erasures != erasures_.load(std::memory_order_relaxed) || b.epoch != current_epoch() ||
            b.entry_next->load(std::memory_order_acquire) != b.end)
            return nullptr;
        seq = b.next++;
        return &b.where;
    }
    send_slot next_send(object_id id, bool ahead);
    static constexpr std::uint64_t max_block = 64;

    // The numbers of the calling thread's block that it did not use: given back if nobody
    // numbered a message to the object since the block was taken, else returned, as the slot
    // of the first and their count, for the caller to skip (object_op::skip). None: nothing
    // to skip.
    struct unused_numbers {
        object_id id;
        send_slot first;
        std::uint64_t count;
    };
    std::optional<unused_numbers> close_block();
    // Whether the calling thread has numbers left in a block (close_block has work).
    static bool block_open() noexcept { return block_.next != block_.end; }
    // The calling thread's streak ends (its item did): its next block is of one number, so
    // that a thread sending one message per item to an object never takes numbers ahead.
    static void end_streak() noexcept { block_.size = 0; }

    void set_local(object_id id, int here, record_ptr r, std::uint64_t moves);
    void set_remote(object_id id, int rank, std::uint64_t moves);
    void set_destroyed(object_id id);
    void update_if_newer(object_id id, int rank, std::uint64_t moves);

    // The objects that live here now.
    std::vector<record_ptr> local_records();
    bool empty();
    // Entries, and how many of them are objects living here.
    std::pair<std::size_t, std::size_t> size();

    // Forgets, at `epoch`, every entry that is neither an object living here nor a live object
    // whose home is here and that has not changed nor numbered a message in the last two epochs.
    void collect(std::uint64_t epoch);

    // Forgets everything (runtime shutdown); returns the local records.
    std::vector<record_ptr> clear();

  private:
    static constexpr std::uint64_t never = ~std::uint64_t(0);
    struct entry {
        location where;
        // Written under the shard's lock; read without it by the thread whose block ends here
        // (next_from_block), to see whether anyone numbered a message after its block.
        std::atomic<std::uint64_t> next_seq{0};
        std::uint64_t stream = 0;        // the epoch at which next_seq last started from 0
        std::uint64_t last_send = never; // epoch of this rank's last message to the object
        std::uint64_t changed = 0;       // epoch at which `where` last changed
    };
    // The calling thread's block (see next_from_block): numbers [next, end) of its stream.
    struct send_block {
        std::uint64_t erasures = ~std::uint64_t(0);
        object_id id;
        std::uint64_t epoch = 0;
        std::uint64_t next = 0, end = 0;
        std::uint64_t size = 0; // how many numbers it took
        send_slot where{};      // seq unused
        // The entry's next_seq: while it is still `end`, nobody has numbered a message to the
        // object since, so none that the block's next message might follow (a thread may send
        // after another one's message by waiting for it, without ending its item).
        const std::atomic<std::uint64_t>* entry_next = nullptr;
    };
    static thread_local send_block block_;
    struct alignas(64) shard {
        light_mutex mutex;
        std::unordered_map<object_id, entry> map;
    };
    shard& shard_of(object_id id) { return shards_[std::hash<object_id>{}(id) % shards_.size()]; }
    static entry& at(shard& s, object_id id, std::uint64_t epoch);
    // Sets `where` (shard locked).
    static void place(entry& e, const location& where, std::uint64_t epoch);

    std::array<shard, 64> shards_;
    std::atomic<std::uint64_t> installs_{0}; // set_local and clear calls: see local_record
    // Calls that may erase entries (collect, clear), and directories made: see next_send. One
    // count for every directory, so that a directory made where an old one was is not taken for
    // it.
    static inline std::atomic<std::uint64_t> erasures_{0};
};

// Defined here, constant-initialised, so that next_from_block reaches it without a call.
inline thread_local directory::send_block directory::block_;

} // namespace prema::detail
