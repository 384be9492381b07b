// What starting a runtime costs in resident memory, at its peak (issue 27: a rank's memory is
// its own work's, not start-up's). The runtime used to read Open MPI's `btl` setting through
// MPI_T, whose initialisation opens every component of Open MPI to register its variables: the
// peak RSS rose by 3.7 MB during the constructor and fell back after it, and every rank of a job
// kept that peak. Not run under the sanitizers, whose shadow memory makes RSS meaningless.
#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <mpi.h>

#include <prema/prema.hpp>

namespace {

// A field of /proc/self/status in KiB (VmHWM: the peak resident set; VmRSS: the current one).
long status_kb(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field + ":", 0) == 0)
            return std::stol(line.substr(field.size() + 1));
    return -1;
}

// Resets VmHWM to the current RSS (Linux 4.0 and later); false where that is not allowed.
bool reset_peak() {
    std::ofstream("/proc/self/clear_refs") << "5";
    return status_kb("VmHWM") <= status_kb("VmRSS") + 64;
}

} // namespace

TEST_CASE("starting a runtime and running a phase raise the peak RSS by less than 2 MiB") {
    // The first runtime of the process: the old code read the setting once per process. What
    // it costs includes the pages of PREMA's code it runs for the first time.
    if (!reset_peak()) {
        MESSAGE("this kernel does not reset the peak RSS (/proc/self/clear_refs): not checked");
        return;
    }
    const long before = status_kb("VmRSS");
    long started = 0;
    {
        prema::runtime rt(MPI_COMM_WORLD, prema::config{});
        started = status_kb("VmHWM") - before;
        CHECK(rt.run([]() -> prema::task<> { co_await prema::all_reduce(1, std::plus<>{}); }) == 0);
    }
    const long peak = status_kb("VmHWM") - before;
    MESSAGE("peak RSS above the start: " << started << " KiB after the constructor, " << peak
                                         << " KiB after a phase");
    CHECK(peak < 2048);
}
