#include "rng.hpp"

#include <cstddef>
#include <cstring>

#include <nettle/sha1.h>

namespace uts {

namespace {

void put_be32(std::uint8_t* to, std::int32_t v) {
    auto u = std::uint32_t(v);
    to[0] = std::uint8_t(u >> 24);
    to[1] = std::uint8_t(u >> 16);
    to[2] = std::uint8_t(u >> 8);
    to[3] = std::uint8_t(u);
}

void sha1(const std::uint8_t* in, std::size_t bytes, std::array<std::uint8_t, 20>& out) {
    sha1_ctx ctx;
    sha1_init(&ctx);
    sha1_update(&ctx, bytes, in);
    sha1_digest(&ctx, SHA1_DIGEST_SIZE, out.data());
}

} // namespace

node root_node(std::int32_t seed) {
    std::uint8_t in[20] = {};
    put_be32(in + 16, seed);
    node n{};
    sha1(in, sizeof in, n.state);
    return n;
}

node child_node(const node& parent, std::int32_t i) {
    std::uint8_t in[24];
    std::memcpy(in, parent.state.data(), 20);
    put_be32(in + 20, i);
    node c;
    sha1(in, sizeof in, c.state);
    c.height = parent.height + 1;
    return c;
}

} // namespace uts
