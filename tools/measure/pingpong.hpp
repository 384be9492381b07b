// Ping-pong measurements shared by the latency benchmark and prema-model --calibrate: raw MPI,
// PREMA handler messages and mobile-object messages between ranks 0 and 1. Round trips are timed
// one by one on rank 0, in microseconds.
#pragma once

#include <cstddef>
#include <vector>

#include <prema/prema.hpp>

namespace prema::measure {

struct rtt_stats {
    double median_rtt_us = 0, mean_rtt_us = 0, min_rtt_us = 0;
    int n = 0;
    double half_rtt() const { return median_rtt_us / 2; }
    double mb_per_s(std::size_t bytes) const { return double(bytes) / half_rtt(); } // B/us = MB/s
};

rtt_stats summarize(std::vector<double> rtt_us);

// MPI_Send/MPI_Recv between ranks 0 and 1 of MPI_COMM_WORLD (outside any PREMA phase); the
// round trips on rank 0, empty elsewhere. Collective over MPI_COMM_WORLD (a barrier first).
std::vector<double> mpi_pingpong(int rank, std::size_t bytes, int warmup, int iters);

// MPI moving `bytes` as PREMA moves a split-phase message: the payload, then a 48-byte header
// (PREMA's wire header and the payload's count) as a second message; the receiver keeps a header
// receive posted and posts the payload's once the header has arrived. PREMA's own steps left
// out, this is the floor of its large messages (docs/performance/latency.md). Collective over
// MPI_COMM_WORLD like mpi_pingpong; the round trips on rank 0.
std::vector<double> mpi_split_pingpong(int rank, std::size_t bytes, int warmup, int iters);

// Inside a PREMA phase, on every rank: rank 0 sends `bytes` to a handler on rank 1, which sends
// them back, warmup + iters times in a chain of handlers; every rank then awaits quiescence.
// The timed round trips on rank 0, empty elsewhere.
task<std::vector<double>> transport_pingpong(std::size_t bytes, int warmup, int iters);

// On a runtime of one rank whose messages to itself go through MPI (--prema-loopback mpi): the
// same chain from the rank to itself. With dedicated progress every message crosses from the
// worker to the progress thread and back (the hand-off a message from another node pays);
// inline, the worker that sends it also receives and runs it. The timed round trips (two
// messages each).
task<std::vector<double>> handoff_pingpong(std::size_t bytes, int warmup, int iters);

// A mobile object with no state, the end of an object ping-pong.
struct ball {
    template <class Ar> void serialize(Ar&) {}
};
using ball_ptr = mobile_ptr<ball>;

// The same chain between two objects (`mine` on rank 0, `theirs` elsewhere), every message
// through the object layer. Called on every rank; the pointers matter on rank 0 only.
task<std::vector<double>> object_pingpong(ball_ptr mine, ball_ptr theirs, std::size_t bytes,
                                          int warmup, int iters);

} // namespace prema::measure
