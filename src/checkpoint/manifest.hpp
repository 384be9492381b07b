// manifest: the table of contents of one checkpoint, written last (write, fsync, rename) so
// that a checkpoint without one is incomplete and ignored. Plain text, one field per line,
// ending with the checksum of the lines above it:
//
//   prema-checkpoint 1
//   ranks 4                 (ranks that wrote it)
//   objects 1024
//   serial 300              (highest object serial any rank issued: new names start above it)
//   homes creator-mod-ranks (where an object's directory entry lives after a restart)
//   root root.bin 0 <bytes> <xxh64>
//   file rank-0.bin <objects> <bytes> <xxh64>      (one line per rank, in rank order)
//   checksum <xxh64>
//
// Pure functions, no MPI: the tests parse damaged manifests directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace prema::detail {

// 2: an object's record carries its measured load (pack_record), so format 1 files would be
// misread; they are refused by version instead. 3: each ordering entry carries its stream and
// the epoch it was last written in. 4: a record names the moves its install completes (a count
// and a list) where it named one reply.
inline constexpr int checkpoint_format = 4;

struct checkpoint_file {
    std::string name; // relative to the checkpoint directory
    std::uint64_t objects = 0;
    std::uint64_t bytes = 0;
    std::uint64_t checksum = 0;
};

struct manifest {
    int ranks = 0;
    std::uint64_t objects = 0;
    std::uint64_t serial = 0;
    checkpoint_file root;
    std::vector<checkpoint_file> files; // files[r]: what rank r wrote
};

std::uint64_t checksum(std::span<const std::byte> bytes) noexcept;

// The same checksum over bytes that come in pieces.
class checksum_stream {
  public:
    checksum_stream();
    ~checksum_stream();
    checksum_stream(const checksum_stream&) = delete;
    checksum_stream& operator=(const checksum_stream&) = delete;
    void add(std::span<const std::byte> bytes) noexcept;
    std::uint64_t value() const noexcept;

  private:
    void* state_; // XXH3_state_t
};

std::string format_manifest(const manifest& m);

// Throws checkpoint_error naming `path` and what is wrong (truncated, checksum mismatch,
// unknown format version, inconsistent counts).
manifest parse_manifest(std::string_view text, const std::string& path);

} // namespace prema::detail
