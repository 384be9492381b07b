// The random numbers of the Unbalanced Tree Search benchmark (UTS; Olivier et al., LCPC 2006):
// every node carries a 20-byte SHA-1 digest as its state, from which its child count and its
// children's states follow. The tree is therefore the same whoever expands which node, in any
// order, on any number of ranks.
//
//   root state        SHA-1 of 20 bytes: 16 zero bytes, then the seed (32-bit big-endian)
//   child i's state   SHA-1 of 24 bytes: the parent's 20 state bytes, then i (32-bit big-endian)
//   random number     state bytes 16..19 as a big-endian 32-bit number with the top bit cleared
//
// SHA-1 is nettle's (Debian nettle-dev), which uses the CPU's SHA instructions where present.
// Pure functions: safe on any thread.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

namespace uts {

struct node {
    std::array<std::uint8_t, 20> state;
    std::int32_t height; // the root is at 0
};
static_assert(sizeof(node) == 24 && std::is_trivially_copyable_v<node>);

node root_node(std::int32_t seed);
node child_node(const node& parent, std::int32_t i);

// A number in [0, 2^31) drawn from the node's state (no hashing).
inline std::int32_t rand31(const node& n) {
    const auto& s = n.state;
    std::uint32_t v = std::uint32_t(s[16]) << 24 | std::uint32_t(s[17]) << 16 |
                      std::uint32_t(s[18]) << 8 | std::uint32_t(s[19]);
    return std::int32_t(v & 0x7fffffffu);
}

// rand31(n) / 2^31, in [0, 1).
inline double uniform(const node& n) {
    return double(rand31(n)) / 2147483648.0;
}

} // namespace uts
