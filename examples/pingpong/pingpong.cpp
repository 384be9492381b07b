// Ping-pong: ranks 0 and 1 bounce a counter back and forth with co_await prema::send.
//   mpirun -np 2 ./pingpong [round trips]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <prema/prema.hpp>

using clk = std::chrono::steady_clock;

int round_trips = 10000;
clk::time_point start;

// Runs on the rank that receives the ball; sends it back until `n` reaches 2 * round_trips.
prema::task<> bounce(int n) {
    if (n < 2 * round_trips) {
        co_await prema::send(1 - prema::rank(), prema::fn<&bounce>, n + 1);
    } else {
        double us = std::chrono::duration<double, std::micro>(clk::now() - start).count();
        std::printf("%d round trips, %.2f us each on average\n", round_trips, us / round_trips);
    }
}

int main(int argc, char** argv) {
    // The entry runs after prema::run has taken its --prema-* flags out of argv.
    return prema::run(argc, argv, [&]() -> prema::task<> {
        if (argc > 1)
            round_trips = std::atoi(argv[1]);
        if (prema::rank() == 0) {
            start = clk::now();
            co_await prema::send(1, prema::fn<&bounce>, 1);
        }
    });
}
