#include "lb/model/machine.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <ostream>
#include <utility>

#include <fmt/format.h>

#include "prema/error.hpp"

namespace prema::model {

namespace {

using field = std::pair<const char*, double machine::*>;
constexpr std::array<field, 6> fields{{
    {"startup_s", &machine::startup_s},
    {"per_byte_s", &machine::per_byte_s},
    {"migrate_s", &machine::migrate_s},
    {"poll_s", &machine::poll_s},
    {"decision_s", &machine::decision_s},
    {"quiescence_s", &machine::quiescence_s},
}};

std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

machine read_machine(std::istream& in, const std::string& what) {
    machine m;
    std::array<bool, fields.size()> seen{};
    std::string line;
    for (int lineno = 1; std::getline(in, line); ++lineno) {
        line = trim(line.substr(0, line.find('#')));
        if (line.empty())
            continue;
        auto where = fmt::format("{}:{}: ", what, lineno);
        auto eq = line.find('=');
        if (eq == std::string::npos)
            throw usage_error(where + "expected 'key = value', got '" + line + "'");
        std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
        std::size_t i = 0;
        while (i < fields.size() && key != fields[i].first)
            ++i;
        if (i == fields.size())
            throw usage_error(where + "unknown key '" + key + "'");
        if (seen[i])
            throw usage_error(where + "'" + key + "' given twice");
        char* end = nullptr;
        double x = std::strtod(value.c_str(), &end);
        if (value.empty() || *end || !std::isfinite(x) || x < 0)
            throw usage_error(where + key + " = '" + value + "' is not a time >= 0 in seconds");
        m.*fields[i].second = x;
        seen[i] = true;
    }
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (!seen[i])
            throw usage_error(what + ": no value for '" + fields[i].first + "'");
    return m;
}

void write_machine(std::ostream& out, const machine& m, const std::string& comment) {
    out << "# PREMA model machine parameters (seconds)." << (comment.empty() ? "" : " ") << comment
        << "\n";
    for (auto& [key, member] : fields)
        out << fmt::format("{} = {:.9g}\n", key, m.*member);
}

} // namespace prema::model
