// prema::config::from_args / from_env: option forms, argv stripping, environment twins, errors;
// --prema-help against the parser and docs/reference/options.md; the rule that resolves
// --prema-progress auto, on made-up core counts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <prema/config.hpp>
#include <prema/error.hpp>

#include "base/options.hpp"
#include "runtime/core_sharing.hpp"

namespace {

// A writable argv (with the trailing null slot) built from strings.
struct args {
    std::vector<std::string> storage;
    std::vector<char*> ptrs;
    int argc = 0;

    args(std::initializer_list<std::string> a) : storage(a) {
        for (auto& s : storage)
            ptrs.push_back(s.data());
        ptrs.push_back(nullptr);
        argc = int(storage.size());
    }
    char** argv() { return ptrs.data(); }

    // What the application sees after parsing.
    std::vector<std::string> remaining() const {
        std::vector<std::string> out;
        for (int i = 0; i < argc; ++i)
            out.emplace_back(ptrs[i]);
        return out;
    }
};

// Sets an environment variable for the scope of the object, restoring the old state after.
class scoped_env {
  public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name))
            old_ = old;
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ~scoped_env() {
        if (old_)
            setenv(name_.c_str(), old_->c_str(), 1);
        else
            unsetenv(name_.c_str());
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

  private:
    std::string name_;
    std::optional<std::string> old_;
};

// Runs from_args and returns the usage_error message ("" if none was thrown).
std::string usage_message(args& a) {
    try {
        prema::config::from_args(a.argc, a.argv());
    } catch (const prema::usage_error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

// Every test starts without PREMA_* variables that would change the defaults.
struct clean_env {
    scoped_env w{"PREMA_WORKERS", nullptr};
    scoped_env q{"PREMA_QUANTUM_US", nullptr};
    scoped_env p{"PREMA_PROGRESS", nullptr};
    scoped_env l{"PREMA_LB", nullptr};
    scoped_env ll{"PREMA_LB_LOAD", nullptr};
    scoped_env g{"PREMA_LOG", nullptr};
    scoped_env e{"PREMA_EAGER_BYTES", nullptr};
};

} // namespace

TEST_SUITE("config") {

    TEST_CASE("defaults") {
        clean_env env;
        args a{"prog"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.workers == 1);
        CHECK(c.progress == prema::progress_mode::automatic);
        CHECK(c.quantum_us == 1000);
        CHECK(c.lb == "none");
        CHECK(c.log == "warn");
        CHECK(a.argc == 1);
        CHECK(a.remaining() == std::vector<std::string>{"prog"});
        CHECK(a.argv()[1] == nullptr);
    }

    TEST_CASE("--prema-workers 3 and --prema-workers=3 are the same") {
        clean_env env;
        args sep{"prog", "--prema-workers", "3"};
        auto c1 = prema::config::from_args(sep.argc, sep.argv());
        CHECK(c1.workers == 3);
        CHECK(sep.argc == 1);

        args eq{"prog", "--prema-workers=3"};
        auto c2 = prema::config::from_args(eq.argc, eq.argv());
        CHECK(c2.workers == 3);
        CHECK(eq.argc == 1);
    }

    TEST_CASE("runtime flags are stripped; application arguments stay in order") {
        clean_env env;
        args a{"prog",    "input.dat", "--prema-workers",    "2",   "-v",  "--prema-lb=x",
               "--other", "value",     "--prema-quantum-us", "250", "last"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.workers == 2);
        CHECK(c.lb == "x");
        CHECK(c.quantum_us == 250);
        CHECK(a.remaining() ==
              std::vector<std::string>{"prog", "input.dat", "-v", "--other", "value", "last"});
        CHECK(a.argc == 6);
        CHECK(a.argv()[a.argc] == nullptr);
    }

    TEST_CASE("a value that looks like an option is taken as the value") {
        clean_env env;
        args a{"prog", "--prema-lb", "--prema-workers=2"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.lb == "--prema-workers=2");
        CHECK(c.workers == 1);
        CHECK(a.argc == 1);
    }

    TEST_CASE("the environment twin is used, and the flag overrides it") {
        clean_env env;
        scoped_env w("PREMA_WORKERS", "4");
        {
            args a{"prog", "app-arg"};
            auto c = prema::config::from_args(a.argc, a.argv());
            CHECK(c.workers == 4);
            CHECK(a.remaining() == std::vector<std::string>{"prog", "app-arg"});
            CHECK(prema::config::from_env().workers == 4);
        }
        {
            args a{"prog", "--prema-workers", "2"};
            CHECK(prema::config::from_args(a.argc, a.argv()).workers == 2);
        }
        {
            args a{"prog", "--prema-workers=7"};
            CHECK(prema::config::from_args(a.argc, a.argv()).workers == 7);
        }
    }

    TEST_CASE("PREMA_QUANTUM_US and other environment twins") {
        clean_env env;
        scoped_env q("PREMA_QUANTUM_US", "0");
        scoped_env p("PREMA_PROGRESS", "inline");
        scoped_env e("PREMA_EAGER_BYTES", "4096");
        auto c = prema::config::from_env();
        CHECK(c.quantum_us == 0);
        CHECK(c.progress == prema::progress_mode::inline_);
        CHECK(c.eager_bytes == 4096);
        args a{"prog", "--prema-quantum-us=123456"};
        auto d = prema::config::from_args(a.argc, a.argv());
        CHECK(d.quantum_us == 123456);
        CHECK(d.progress == prema::progress_mode::inline_);
    }

    TEST_CASE("--prema-progress auto / inline / dedicated") {
        clean_env env;
        args x{"prog", "--prema-progress", "inline", "--prema-progress=auto"};
        CHECK(prema::config::from_args(x.argc, x.argv()).progress ==
              prema::progress_mode::automatic);
        {
            scoped_env p("PREMA_PROGRESS", "auto");
            CHECK(prema::config::from_env().progress == prema::progress_mode::automatic);
        }
        args a{"prog", "--prema-progress", "inline"};
        CHECK(prema::config::from_args(a.argc, a.argv()).progress == prema::progress_mode::inline_);
        args b{"prog", "--prema-progress=dedicated"};
        CHECK(prema::config::from_args(b.argc, b.argv()).progress ==
              prema::progress_mode::dedicated);
        CHECK(prema::to_string(prema::progress_mode::inline_) == "inline");
        CHECK(prema::to_string(prema::progress_mode::dedicated) == "dedicated");
        CHECK(prema::to_string(prema::progress_mode::automatic) == "auto");
    }

    TEST_CASE("--prema-lb-load declared / measured / hybrid, PREMA_LB_LOAD its twin") {
        clean_env env;
        CHECK(prema::config{}.lb_load == prema::load_mode::hybrid);
        args a{"prog", "--prema-lb-load", "declared"};
        CHECK(prema::config::from_args(a.argc, a.argv()).lb_load == prema::load_mode::declared);
        {
            scoped_env l("PREMA_LB_LOAD", "measured");
            CHECK(prema::config::from_env().lb_load == prema::load_mode::measured);
            args flag_wins{"prog", "--prema-lb-load=hybrid"};
            CHECK(prema::config::from_args(flag_wins.argc, flag_wins.argv()).lb_load ==
                  prema::load_mode::hybrid);
        }
        args bad{"prog", "--prema-lb-load", "guessed"};
        auto m = usage_message(bad);
        CHECK(contains(m, "--prema-lb-load"));
        CHECK(contains(m, "guessed"));
        CHECK(contains(m, "declared, measured, hybrid"));
        scoped_env l("PREMA_LB_LOAD", "Measured");
        CHECK_THROWS_WITH_AS(prema::config::from_env(),
                             "option --prema-lb-load: 'Measured' is not one of declared, "
                             "measured, hybrid",
                             prema::usage_error);
        CHECK(prema::to_string(prema::load_mode::declared) == "declared");
        CHECK(prema::to_string(prema::load_mode::measured) == "measured");
        CHECK(prema::to_string(prema::load_mode::hybrid) == "hybrid");
    }

    TEST_CASE("errors name the option") {
        clean_env env;
        SUBCASE("unknown option") {
            args a{"prog", "--prema-foo", "1"};
            auto m = usage_message(a);
            CHECK(contains(m, "--prema-foo"));
            args b{"prog", "--prema-foo=1"};
            CHECK(contains(usage_message(b), "--prema-foo"));
        }
        SUBCASE("bad number") {
            for (const char* bad : {"abc", "3x", "", "-1", "1.5"}) {
                CAPTURE(bad);
                args a{"prog", std::string("--prema-workers=") + bad};
                auto m = usage_message(a);
                CHECK(contains(m, "--prema-workers"));
            }
            args q{"prog", "--prema-quantum-us", "soon"};
            CHECK(contains(usage_message(q), "--prema-quantum-us"));
        }
        SUBCASE("a word that is not one of the two") {
            args a{"prog", "--prema-pin=maybe"};
            CHECK(contains(usage_message(a), "--prema-pin: 'maybe' is not one of on, off"));
            args b{"prog", "--prema-loopback", "tcp"};
            CHECK(contains(usage_message(b), "--prema-loopback: 'tcp' is not one of mpi, direct"));
            args c{"prog", "--prema-pin=off", "--prema-loopback=mpi"};
            auto cfg = prema::config::from_args(c.argc, c.argv());
            CHECK_FALSE(cfg.pin);
            CHECK(cfg.loopback_mpi);
        }
        SUBCASE("number out of range") {
            args s{"prog", "--prema-spin-us=20000000"};
            CHECK(contains(usage_message(s), "--prema-spin-us: 20000000 is above 10 s"));
            args a{"prog", "--prema-workers=0"};
            CHECK(contains(usage_message(a), "--prema-workers"));
            args b{"prog", "--prema-workers=100000"};
            CHECK(contains(usage_message(b), "--prema-workers"));
            args r{"prog", "--prema-remote-eager-bytes=2097152"};
            CHECK(contains(usage_message(r), "--prema-remote-eager-bytes: 2097152 is above 1 MiB"));
            args ok{"prog", "--prema-remote-eager-bytes", "65536"};
            CHECK(prema::config::from_args(ok.argc, ok.argv()).remote_eager_bytes == 65536);
        }
        SUBCASE("missing value") {
            args a{"prog", "app", "--prema-workers"};
            auto m = usage_message(a);
            CHECK(contains(m, "--prema-workers"));
            CHECK(contains(m, "value"));
        }
        SUBCASE("bad progress value") {
            args a{"prog", "--prema-progress", "fast"};
            auto m = usage_message(a);
            CHECK(contains(m, "--prema-progress"));
            CHECK(contains(m, "fast"));
            CHECK(contains(m, "auto, dedicated, inline"));
            scoped_env p("PREMA_PROGRESS", "automatic");
            CHECK_THROWS_WITH_AS(prema::config::from_env(),
                                 "option --prema-progress: 'automatic' is not one of auto, "
                                 "dedicated, inline",
                                 prema::usage_error);
        }
        SUBCASE("bad log level") {
            args a{"prog", "--prema-log=loud"};
            CHECK(contains(usage_message(a), "--prema-log"));
        }
        SUBCASE("bad environment value") {
            scoped_env w("PREMA_WORKERS", "many");
            CHECK_THROWS_AS(prema::config::from_env(), prema::usage_error);
        }
    }

    TEST_CASE("arguments that merely resemble runtime flags are left alone") {
        clean_env env;
        args a{"prog", "--prema", "-prema-workers=3", "--premature", "prema-workers"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.workers == 1);
        CHECK(a.remaining() == std::vector<std::string>{"prog", "--prema", "-prema-workers=3",
                                                        "--premature", "prema-workers"});
    }

    TEST_CASE("--prema-version is a flag without a value, stripped like the others") {
        clean_env env;
        args a{"prog", "--prema-version", "input.dat", "--prema-workers", "2"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.show_version);
        CHECK(c.workers == 2);
        CHECK(a.remaining() == std::vector<std::string>{"prog", "input.dat"});
        args none{"prog"};
        CHECK_FALSE(prema::config::from_args(none.argc, none.argv()).show_version);
    }

    TEST_CASE("--prema-help is a flag without a value, PREMA_HELP=1 its twin") {
        clean_env env;
        args a{"prog", "--prema-help", "input.dat", "--prema-workers", "2"};
        auto c = prema::config::from_args(a.argc, a.argv());
        CHECK(c.show_help);
        CHECK(c.workers == 2);
        CHECK(a.remaining() == std::vector<std::string>{"prog", "input.dat"});
        args none{"prog"};
        CHECK_FALSE(prema::config::from_args(none.argc, none.argv()).show_help);
        {
            scoped_env h("PREMA_HELP", "1");
            CHECK(prema::config::from_env().show_help);
        }
        args off{"prog", "--prema-help=0"};
        CHECK_FALSE(prema::config::from_args(off.argc, off.argv()).show_help);
    }

    TEST_CASE("--prema-help lists every option the parser takes, with its twin and default") {
        const auto help = prema::config::help();
        const auto list = prema::detail::option_list();
        std::vector<std::unique_ptr<scoped_env>> unset; // the defaults, whatever the shell says
        for (auto& o : list)
            if (!o.env.empty())
                unset.push_back(std::make_unique<scoped_env>(o.env.c_str(), nullptr));
        // Every field of prema::config has its option; a name dropped from the table would no
        // longer parse, and one added to it is listed by construction.
        for (const char* name : {"workers",
                                 "progress",
                                 "quantum-us",
                                 "spin-us",
                                 "pin",
                                 "loopback",
                                 "lb",
                                 "lb-period-us",
                                 "lb-neighbours",
                                 "lb-alpha",
                                 "lb-load",
                                 "log",
                                 "eager-bytes",
                                 "remote-eager-bytes",
                                 "max-message-bytes",
                                 "aggregate-bytes",
                                 "aggregate-us",
                                 "max-outstanding-bytes",
                                 "pool-messages",
                                 "recv-slots",
                                 "stats",
                                 "restart",
                                 "trace",
                                 "version",
                                 "help"}) {
            CAPTURE(name);
            CHECK(std::count_if(list.begin(), list.end(),
                                [&](auto& o) { return o.name == name; }) == 1);
        }
        CHECK(list.size() == 25);
        for (auto& o : list) {
            CAPTURE(o.name);
            CHECK(contains(help, "--prema-" + o.name + (o.value.empty() ? "" : " " + o.value)));
            if (!o.env.empty())
                CHECK(contains(help, o.env));
            CHECK(contains(help, "default " + (o.fallback.empty() ? "none" : o.fallback)));
            // The default shown is the default: giving it changes nothing.
            if (!o.fallback.empty()) {
                args a{"prog", "--prema-" + o.name + "=" + o.fallback};
                CHECK(prema::config::from_args(a.argc, a.argv()) == prema::config{});
            }
            // The twin is the one from_env reads.
            if (!o.env.empty() && !o.fallback.empty()) {
                scoped_env e(o.env.c_str(), o.fallback.c_str());
                CHECK(prema::config::from_env() == prema::config{});
            }
        }
        args unknown{"prog", "--prema-helps"};
        CHECK(contains(usage_message(unknown), "--prema-helps"));
    }

    TEST_CASE("docs/reference/options.md's table is the one --prema-help prints") {
        std::ifstream in(PREMA_OPTIONS_DOC);
        REQUIRE(in);
        std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto table = prema::detail::options_markdown();
        CHECK_MESSAGE(contains(page, table), "docs/reference/options.md's table should read:\n"
                                                 << table);
    }

} // TEST_SUITE("config")

TEST_SUITE("progress auto") {

    using prema::progress_mode;
    using prema::detail::core_sharing;
    using prema::detail::resolve_progress;

    core_sharing node(int node_ranks, int node_cores, int own_cores) {
        core_sharing s;
        s.node_ranks = node_ranks;
        s.node_cores = node_cores;
        s.own_cores = own_cores;
        return s;
    }

    TEST_CASE("dedicated only when workers + 1 threads per rank fit the node and the mask") {
        // 2 ranks x (1 worker + progress thread) on 2 cores: the thread would share a core.
        CHECK(resolve_progress(node(2, 2, 2), 1) == progress_mode::inline_);
        CHECK(resolve_progress(node(1, 8, 8), 1) == progress_mode::dedicated);
        // The node has room, but the rank is bound to one core.
        CHECK(resolve_progress(node(1, 8, 1), 1) == progress_mode::inline_);
        // Exactly full still fits; one thread more does not.
        CHECK(resolve_progress(node(2, 4, 4), 1) == progress_mode::dedicated);
        CHECK(resolve_progress(node(2, 4, 4), 2) == progress_mode::inline_);
        CHECK(resolve_progress(node(1, 8, 4), 3) == progress_mode::dedicated);
        CHECK(resolve_progress(node(1, 8, 4), 4) == progress_mode::inline_);
        CHECK(resolve_progress(node(4, 16, 16), 3) == progress_mode::dedicated);
        CHECK(resolve_progress(node(4, 16, 16), 4) == progress_mode::inline_);
    }

    TEST_CASE("reports name the requested and the resolved mode") {
        using prema::detail::describe_progress;
        CHECK(describe_progress(progress_mode::automatic, progress_mode::inline_) ==
              "auto -> inline");
        CHECK(describe_progress(progress_mode::automatic, progress_mode::dedicated) ==
              "auto -> dedicated");
        CHECK(describe_progress(progress_mode::dedicated, progress_mode::dedicated) == "dedicated");
        CHECK(describe_progress(progress_mode::inline_, progress_mode::inline_) == "inline");
    }

} // TEST_SUITE("progress auto")
