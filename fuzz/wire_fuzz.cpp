// libFuzzer target for PREMA's wire decoders (see wire_targets.hpp and run.sh).
#include <cstddef>
#include <cstdint>

#include "wire_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    prema_fuzz::run_wire_input(data, size);
    return 0;
}
