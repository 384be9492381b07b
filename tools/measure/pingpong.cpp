#include "pingpong.hpp"

#include <algorithm>
#include <chrono>

#include <mpi.h>

namespace prema::measure {

namespace {

using clk = std::chrono::steady_clock;

double micros(clk::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

// One chain at a time per process: rank 0's handlers stamp every pong.
struct chain_state {
    int far = 1;                         // where pings go: rank 1, or 0 itself (hand-off)
    int left = 0;                        // pongs still expected
    std::vector<clk::time_point> stamps; // [0]: first ping sent; then one per pong
} chain;

void start_chain(int pongs, int far) {
    chain.far = far;
    chain.left = pongs;
    chain.stamps.clear();
    chain.stamps.reserve(std::size_t(pongs) + 1);
    chain.stamps.push_back(clk::now());
}

std::vector<double> timed_round_trips(int warmup) {
    std::vector<double> rtt;
    for (std::size_t i = std::size_t(warmup) + 1; i < chain.stamps.size(); ++i)
        rtt.push_back(micros(chain.stamps[i] - chain.stamps[i - 1]));
    return rtt;
}

task<> pong(std::vector<char> payload);

// Runs on the far rank: bounce the payload straight back.
task<> ping(std::vector<char> payload) {
    co_await send(0, fn<&pong>, std::move(payload));
}

// Runs on rank 0: one round trip done; start the next one.
task<> pong(std::vector<char> payload) {
    chain.stamps.push_back(clk::now());
    if (--chain.left > 0)
        co_await send(chain.far, fn<&ping>, std::move(payload));
}

task<> ball_pong(ball&, ball_ptr to, ball_ptr me, std::vector<char> payload);

// On the far ball: bounce straight back to the ball that sent it.
task<> ball_ping(ball&, ball_ptr to, ball_ptr me, std::vector<char> payload) {
    co_await send(to, fn<&ball_pong>, me, to, std::move(payload));
}

// On rank 0's ball: one round trip done; start the next one.
task<> ball_pong(ball&, ball_ptr to, ball_ptr me, std::vector<char> payload) {
    chain.stamps.push_back(clk::now());
    if (--chain.left > 0)
        co_await send(to, fn<&ball_ping>, me, to, std::move(payload));
}

} // namespace

rtt_stats summarize(std::vector<double> rtt) {
    rtt_stats s;
    s.n = int(rtt.size());
    if (rtt.empty())
        return s;
    std::sort(rtt.begin(), rtt.end());
    std::size_t m = rtt.size() / 2;
    s.median_rtt_us = rtt.size() % 2 ? rtt[m] : (rtt[m - 1] + rtt[m]) / 2;
    s.min_rtt_us = rtt.front();
    double sum = 0;
    for (double x : rtt)
        sum += x;
    s.mean_rtt_us = sum / double(rtt.size());
    return s;
}

// warmup + iters round trips between ranks 0 and 1 (a barrier first): rank 0 sends and then
// receives, timing each round trip; rank 1 receives and then sends; other ranks only join the
// barrier.
template <class Send, class Receive>
std::vector<double> raw_round_trips(int rank, int warmup, int iters, Send send, Receive receive) {
    std::vector<double> rtt;
    rtt.reserve(std::size_t(iters));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; rank <= 1 && i < warmup + iters; ++i) {
        if (rank == 0) {
            auto t0 = clk::now();
            send();
            receive();
            if (i >= warmup)
                rtt.push_back(micros(clk::now() - t0));
        } else {
            receive();
            send();
        }
    }
    return rtt;
}

std::vector<double> mpi_pingpong(int rank, std::size_t bytes, int warmup, int iters) {
    std::vector<char> buf(bytes, 'x');
    const int peer = 1 - rank;
    return raw_round_trips(
        rank, warmup, iters,
        [&] { MPI_Send(buf.data(), int(bytes), MPI_CHAR, peer, 0, MPI_COMM_WORLD); },
        [&] {
            MPI_Recv(buf.data(), int(bytes), MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        });
}

std::vector<double> mpi_split_pingpong(int rank, std::size_t bytes, int warmup, int iters) {
    constexpr int payload_tag = 1, header_tag = 2, header_bytes = 48;
    std::vector<char> buf(bytes, 'x'), out_header(header_bytes), in_header(header_bytes);
    const int peer = 1 - rank;
    MPI_Request header_recv = MPI_REQUEST_NULL;
    if (rank <= 1)
        MPI_Irecv(in_header.data(), header_bytes, MPI_CHAR, peer, header_tag, MPI_COMM_WORLD,
                  &header_recv);
    auto send = [&] {
        MPI_Request sent[2];
        MPI_Isend(buf.data(), int(bytes), MPI_CHAR, peer, payload_tag, MPI_COMM_WORLD, &sent[0]);
        MPI_Isend(out_header.data(), header_bytes, MPI_CHAR, peer, header_tag, MPI_COMM_WORLD,
                  &sent[1]);
        MPI_Waitall(2, sent, MPI_STATUSES_IGNORE);
    };
    auto receive = [&] {
        MPI_Wait(&header_recv, MPI_STATUS_IGNORE);
        MPI_Irecv(in_header.data(), header_bytes, MPI_CHAR, peer, header_tag, MPI_COMM_WORLD,
                  &header_recv);
        MPI_Recv(buf.data(), int(bytes), MPI_CHAR, peer, payload_tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    };
    auto rtt = raw_round_trips(rank, warmup, iters, send, receive);
    if (header_recv != MPI_REQUEST_NULL) { // the next header never comes
        MPI_Cancel(&header_recv);
        MPI_Wait(&header_recv, MPI_STATUS_IGNORE);
    }
    return rtt;
}

task<std::vector<double>> transport_pingpong(std::size_t bytes, int warmup, int iters) {
    if (rank() == 0) {
        start_chain(warmup + iters, 1);
        co_await send(1, fn<&ping>, std::vector<char>(bytes, 'x'));
    }
    co_await quiescence(); // every rank: the chain has ended
    co_return rank() == 0 ? timed_round_trips(warmup) : std::vector<double>{};
}

task<std::vector<double>> handoff_pingpong(std::size_t bytes, int warmup, int iters) {
    start_chain(warmup + iters, 0);
    co_await send(0, fn<&ping>, std::vector<char>(bytes, 'x'));
    co_await quiescence();
    co_return timed_round_trips(warmup);
}

task<std::vector<double>> object_pingpong(ball_ptr mine, ball_ptr theirs, std::size_t bytes,
                                          int warmup, int iters) {
    if (rank() == 0) {
        start_chain(warmup + iters, 1);
        co_await send(theirs, fn<&ball_ping>, mine, theirs, std::vector<char>(bytes, 'x'));
    }
    co_await quiescence();
    co_return rank() == 0 ? timed_round_trips(warmup) : std::vector<double>{};
}

} // namespace prema::measure
