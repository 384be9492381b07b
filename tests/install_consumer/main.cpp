// Every rank calls its right neighbour, which answers with its rank; rank 0 also prints the
// version it was compiled against and the one it is linked with.
#include <cstdio>
#include <string>

#include <prema/prema.hpp>

int main(int argc, char** argv) {
    return prema::run(argc, argv, []() -> prema::task<> {
        int right = (prema::rank() + 1) % prema::ranks();
        int answer = co_await prema::call(
            right, [](int) -> prema::task<int> { co_return prema::rank(); }, prema::rank());
        std::printf("consumer rank %d of %d: neighbour %d answered\n", prema::rank(),
                    prema::ranks(), answer);
        if (prema::rank() == 0)
            std::printf("consumer: headers %s, library %s\n", PREMA_VERSION, prema::version());
    });
}
