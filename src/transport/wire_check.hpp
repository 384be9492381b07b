// Pure checks and decoders of wire data, callable without MPI (the fuzzer and unit tests use
// them; the progress engine and the handlers do too).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "prema/config.hpp"
#include "prema/detail/transport/message.hpp"

namespace prema::detail {

// The MPI tags of PREMA's communicator. Every receive names its tag, so one kind of traffic
// never matches another's receives: headers (tag_header); what travels PREMA's tree outside
// handler messages (tag_tree: the start-up's exchanges of tree_blocking.hpp, over before the
// progress engine starts, then the sums of the termination waves, the phase barrier and the
// drain of tree_sum.hpp); and the trace gathered at shutdown (gather_parts) share it.
enum wire_tag : int { tag_tree = 0, tag_header = 1, tag_gather = 2 };
// Split-phase payloads travel on MPI tags from this one up to MPI_TAG_UB, then again from it.
inline constexpr int wire_first_payload_tag = 3;

// Why a received header of `byte_count` bytes from rank `source` must be rejected, or empty
// when it is valid. Reads header fields only once `byte_count` covers the header.
std::string check_header(const wire_header& h, int byte_count, int source, const config& cfg);

// Whether the sender of a refused header sent a split-phase payload after it (which must be
// received, or the sender's send never completes): the header is whole, comes from `source`,
// and names a payload tag no greater than `max_tag`.
bool payload_follows(const wire_header& h, int byte_count, int source, int max_tag);

// How many messages the sender of these `byte_count` header bytes (and the payload after them)
// counted as sent for quiescence: none if uncounted, a batch's item count, else one (see
// progress_engine::post). Reads only bytes that arrived: too short for the flags, or for a
// batch's prefix, counts one. A receiver that refuses a message counts it received as this
// many, so that the job's counts still balance and its end is still detected.
std::uint32_t counted_by_sender(const wire_header& h, int byte_count);

// Why the payload of a batch (flag_batch) must be rejected, or empty when every item lies
// within it and its items and runs hold the messages its prefix counts; `count` gets that
// number.
std::string check_batch(std::span<const std::byte> payload, std::uint32_t& count);

// A broadcast relay: [root, inner handler id, inner payload]. Throws wire_error when short or
// when `root` is not a rank of a world of `ranks` ranks.
struct relay_parts {
    std::int32_t root = 0;
    std::uint64_t inner = 0;
    std::span<const std::byte> body;
};
relay_parts decode_relay(std::span<const std::byte> payload, int ranks);

} // namespace prema::detail
