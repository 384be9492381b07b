#include "cli.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include <mpi.h>

#include <prema/error.hpp>
#include <prema/version.hpp>

namespace example {
namespace {

std::string shown(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// `text` as lines of at most 96 columns, the first starting at column `first`, the others
// indented to `indent`.
std::string wrapped(const std::string& text, std::size_t first, std::size_t indent) {
    constexpr std::size_t width = 96;
    std::istringstream words(text);
    std::string out, word;
    std::size_t column = first;
    bool line_empty = true;
    while (words >> word) {
        if (!line_empty && column + 1 + word.size() > width) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
            line_empty = true;
        }
        if (!line_empty)
            out += ' ', ++column;
        out += word;
        column += word.size();
        line_empty = false;
    }
    return out + "\n";
}

} // namespace

cli::cli(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void cli::add(const std::string& name, const std::string& meta, const std::string& help, int& v,
              long lo, long hi) {
    std::string def = v >= lo && v <= hi ? std::to_string(v) : "";
    options_.push_back({name, meta, help, def, [&v, name, lo, hi](auto& s) {
                            char* end = nullptr;
                            long x = std::strtol(s.c_str(), &end, 10);
                            if (s.empty() || *end || x < lo || x > hi)
                                throw prema::usage_error(
                                    name + ": '" + s + "' is not an integer in " +
                                    std::to_string(lo) + ".." + std::to_string(hi));
                            v = int(x);
                        }});
}

void cli::add(const std::string& name, const std::string& meta, const std::string& help, double& v,
              double lo, double hi) {
    std::string def = v >= lo && v <= hi ? shown(v) : "";
    options_.push_back({name, meta, help, def, [&v, name, lo, hi](auto& s) {
                            char* end = nullptr;
                            double x = std::strtod(s.c_str(), &end);
                            if (s.empty() || *end || !(x >= lo && x <= hi))
                                throw prema::usage_error(name + ": '" + s +
                                                         "' is not a number in " + shown(lo) +
                                                         ".." + shown(hi));
                            v = x;
                        }});
}

void cli::add(const std::string& name, const std::string& meta, const std::string& help,
              std::string& v) {
    options_.push_back({name, meta, help, v, [&v](auto& s) { v = s; }});
}

void cli::add(const std::string& name, const std::string& help, std::string& v,
              std::vector<std::string> choices) {
    std::string meta;
    for (auto& c : choices)
        meta += (meta.empty() ? "" : "|") + c;
    options_.push_back({name, meta, help, v, [&v, name, meta, choices](auto& s) {
                            if (std::find(choices.begin(), choices.end(), s) == choices.end())
                                throw prema::usage_error(name + ": expected " + meta + ", not '" +
                                                         s + "'");
                            v = s;
                        }});
}

void cli::add_flag(const std::string& name, const std::string& help, bool& v) {
    options_.push_back({name, "", help, "", [&v](auto&) { v = true; }});
}

bool cli::parse(int argc, char** argv) const {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], value;
        bool has_value = false;
        if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = a.substr(eq + 1);
            a.resize(eq);
            has_value = true;
        }
        if (a == "--help" || a == "-h")
            return false;
        const option* o = nullptr;
        for (auto& candidate : options_)
            if (candidate.name == a)
                o = &candidate;
        if (!o)
            throw prema::usage_error("unknown option '" + a + "' (see --help)");
        if (o->meta.empty() && has_value)
            throw prema::usage_error(a + " takes no value");
        if (!o->meta.empty() && !has_value) {
            if (i + 1 >= argc)
                throw prema::usage_error(a + " needs a value (" + o->meta + ")");
            value = argv[++i];
        }
        o->set(value);
    }
    for (auto& check : checks_)
        check();
    return true;
}

std::string cli::usage() const {
    std::string u = "usage: mpirun [--oversubscribe] -np P " + program_ +
                    " [options] [--prema-* runtime options]\n\n" + description_ + "\n\n";
    for (auto& o : options_) {
        std::string left = "  " + o.name + (o.meta.empty() ? "" : " " + o.meta);
        left.resize(std::max<std::size_t>(left.size() + 1, 26), ' ');
        std::string help = o.help;
        if (!o.meta.empty() && !o.shown_default.empty())
            help += " (default " + o.shown_default + ")";
        u += left + wrapped(help, left.size(), 26);
    }
    u += "  --help                  this text\n\nRuntime options (--prema-workers, --prema-lb, "
         "...): --prema-help lists them.\n";
    return u;
}

int main(int argc, char** argv, const cli& options,
         const std::function<int(const prema::config&)>& body) {
    int provided = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = 0;
    prema::config cfg;
    bool run = false;
    try {
        cfg = prema::config::from_args(argc, argv);
        run = options.parse(argc, argv) && !cfg.show_version && !cfg.show_help;
        if (cfg.show_version && rank == 0)
            std::printf("prema %s\n", prema::version());
        else if (cfg.show_help && rank == 0)
            std::fputs(prema::config::help().c_str(), stdout);
        else if (!run && rank == 0)
            std::fputs(options.usage().c_str(), stdout);
    } catch (const prema::usage_error& e) {
        if (rank == 0)
            std::fprintf(stderr, "%s: %s\n", options.program().c_str(), e.what());
        rc = 2;
    }
    if (run) {
        try {
            rc = body(cfg);
        } catch (const prema::usage_error& e) {
            // Thrown by checks of the options that every rank makes alike.
            if (rank == 0)
                std::fprintf(stderr, "%s: %s\n", options.program().c_str(), e.what());
            rc = 2;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: rank %d: %s\n", options.program().c_str(), rank, e.what());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Finalize();
    return rc;
}

} // namespace example
