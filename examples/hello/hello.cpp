// The shortest PREMA program: every rank greets its right neighbour, who answers back.
//   mpirun -np 2 ./hello
#include <cstdio>

#include <prema/prema.hpp>

int main(int argc, char** argv) {
    return prema::run(argc, argv, []() -> prema::task<> {
        int right = (prema::rank() + 1) % prema::ranks();
        std::string reply = co_await prema::call(
            right,
            [](int from) -> prema::task<std::string> {
                std::printf("rank %d: hello from rank %d\n", prema::rank(), from);
                co_return "rank " + std::to_string(prema::rank()) + " says hi";
            },
            prema::rank());
        std::printf("rank %d: %s\n", prema::rank(), reply.c_str());
    });
}
