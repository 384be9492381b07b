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

// SHA-1 of at most 55 bytes, one padded block: straight through nettle's compression function
// (public in <nettle/sha1.h>), without the buffering of sha1_update and sha1_digest, which
// took a fifth of a node's time.
void sha1(const std::uint8_t* in, std::size_t bytes, std::array<std::uint8_t, 20>& out) {
    std::uint8_t block[64] = {};
    std::memcpy(block, in, bytes);
    block[bytes] = 0x80;
    put_be32(block + 60, std::int32_t(bytes * 8)); // the length in bits (the high word is 0)
    std::uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    nettle_sha1_compress(h, block);
    for (int i = 0; i < 5; ++i)
        put_be32(out.data() + 4 * i, std::int32_t(h[i]));
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
