// A mobile object that checks delivery order, for the tests of objects on the move: per sender,
// the number of the message expected next, and how many messages came out of order.
#pragma once

#include <cstddef>
#include <vector>

#include <prema/prema.hpp>

namespace test_ledger {

struct ledger {
    std::vector<long> next; // per rank: the index expected next
    long received = 0, out_of_order = 0;
    template <class Ar> void serialize(Ar& ar) { ar(next, received, out_of_order); }
};

// The message numbered `index` from rank `from`.
inline void note(ledger& l, int from, long index) {
    if (l.next.empty())
        l.next.assign(std::size_t(prema::ranks()), 0);
    auto& expected = l.next[std::size_t(from)];
    l.out_of_order += index != expected;
    expected = index + 1;
    ++l.received;
}

// {messages received, of which out of order}.
inline std::vector<long> totals(const ledger& l) {
    return {l.received, l.out_of_order};
}

} // namespace test_ledger
