#include "runtime/gather_parts.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "transport/wire_check.hpp"

namespace prema::detail {

void gather_parts(MPI_Comm comm, std::string_view part,
                  const std::function<void(int, std::string_view)>& take, std::size_t piece) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != 0) {
        std::uint64_t n = part.size();
        MPI_Send(&n, 1, MPI_UINT64_T, 0, tag_gather, comm);
        for (std::size_t at = 0; at < part.size(); at += piece)
            MPI_Send(part.data() + at, int(std::min(piece, part.size() - at)), MPI_CHAR, 0,
                     tag_gather, comm);
        return;
    }
    take(0, part);
    std::string buffer;
    for (int r = 1; r < size; ++r) {
        std::uint64_t n = 0;
        MPI_Recv(&n, 1, MPI_UINT64_T, r, tag_gather, comm, MPI_STATUS_IGNORE);
        buffer.resize(std::size_t(n));
        for (std::size_t at = 0; at < buffer.size(); at += piece)
            MPI_Recv(buffer.data() + at, int(std::min(piece, buffer.size() - at)), MPI_CHAR, r,
                     tag_gather, comm, MPI_STATUS_IGNORE);
        take(r, buffer);
    }
}

} // namespace prema::detail
