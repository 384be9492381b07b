// Static placement of numbered items (blocks, chunks) on ranks in contiguous runs: rank r gets
// items [first_item(r), first_item(r + 1)), run lengths differing by at most one.
#pragma once

namespace example {

inline int first_item(int rank, int ranks, int items) {
    return int(long(items) * rank / ranks);
}

inline int owner_of(int item, int ranks, int items) {
    int r = int(long(item) * ranks / items); // close; first_item's rounding decides
    while (r + 1 < ranks && first_item(r + 1, ranks, items) <= item)
        ++r;
    while (first_item(r, ranks, items) > item)
        --r;
    return r;
}

} // namespace example
