// The runtime options' table seen from outside the parser (config.cpp owns it): what
// test_config checks --prema-help, the defaults and docs/reference/options.md against.
#pragma once

#include <string>
#include <vector>

namespace prema::detail {

struct option_summary {
    std::string name;     // --prema-NAME
    std::string value;    // what follows the flag ("" for a switch)
    std::string fallback; // the default as --prema-help shows it ("" for none)
    std::string env;      // the environment twin ("" for none)
};

// Every option --prema-NAME accepts, in the order --prema-help lists them.
std::vector<option_summary> option_list();

// The table as docs/reference/options.md shows it (header and one row per option).
std::string options_markdown();

} // namespace prema::detail
