// Command-line handling shared by the examples. The runtime takes its own `--prema-*` options
// out of argv (prema::config::from_args); an example declares the rest here and gets --help,
// "--name value" / "--name=value" and range-checked values with clear errors for free.
//
//   example::cli cli("heat2d", "2-D heat equation over mobile blocks, against plain MPI");
//   cli.add("--steps", "N", "time steps", steps, 1, 1'000'000);
//   return example::main(argc, argv, cli, [&](const prema::config& cfg) { ...; return 0; });
//
// Everything here runs on the thread that called main(), outside any runtime phase.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <prema/config.hpp>

namespace example {

class cli {
  public:
    cli(std::string program, std::string description);

    // Each option writes into the variable it is given (which must outlive parse()); the
    // variable's value when add() is called is the default shown by --help (a number outside
    // the accepted range is not shown: the program chooses the default, say so in `help`).
    void add(const std::string& name, const std::string& meta, const std::string& help, int& v,
             long lo, long hi);
    void add(const std::string& name, const std::string& meta, const std::string& help, double& v,
             double lo, double hi);
    void add(const std::string& name, const std::string& meta, const std::string& help,
             std::string& v);
    // A string that must be one of `choices` (shown by --help as meta: a|b|c).
    void add(const std::string& name, const std::string& help, std::string& v,
             std::vector<std::string> choices);
    void add_flag(const std::string& name, const std::string& help, bool& v);

    // A check of the options together (for example two that exclude each other), run by
    // parse() after the last option; it throws prema::usage_error to reject them.
    void check(std::function<void()> f) { checks_.push_back(std::move(f)); }

    // Parses what the runtime left in argv. Returns false if --help was given. Throws
    // prema::usage_error naming the option and the accepted values on anything else.
    bool parse(int argc, char** argv) const;

    std::string usage() const;
    const std::string& program() const { return program_; }

  private:
    struct option {
        std::string name, meta, help, shown_default;
        std::function<void(const std::string&)> set; // throws usage_error on a bad value
    };
    std::string program_, description_;
    std::vector<option> options_;
    std::vector<std::function<void()>> checks_;
};

// An example's main(): initialises MPI (MPI_THREAD_SERIALIZED, what every progress mode
// accepts), reads the runtime's options and the example's, then runs `body` on every rank.
// --help prints the usage on rank 0 and returns 0, --prema-help the runtime's options and
// --prema-version its version likewise; a bad option prints "program: reason" on
// rank 0 and returns 2, and so does a prema::usage_error out of `body` (which must then come
// from a check every rank makes alike); any other exception aborts the job with its message.
int main(int argc, char** argv, const cli& options,
         const std::function<int(const prema::config&)>& body);

} // namespace example
