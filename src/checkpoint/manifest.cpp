#include "checkpoint/manifest.hpp"

#include <charconv>
#include <new>

#include <fmt/format.h>
#include <xxhash.h>

#include "prema/error.hpp"

namespace prema::detail {

namespace {

constexpr std::string_view homes = "creator-mod-ranks";

// Reads the manifest line by line; every complaint names the file and the line.
class reader {
  public:
    reader(std::string_view text, const std::string& path) : text_(text), path_(path) {}

    [[noreturn]] void fail(const std::string& why) const {
        throw checkpoint_error(fmt::format("{}: line {}: {}", path_, line_, why));
    }

    // The next line's words; the first must be `key`.
    std::vector<std::string_view> line(std::string_view key, std::size_t words) {
        ++line_;
        auto end = text_.find('\n', pos_);
        if (end == std::string_view::npos)
            fail(fmt::format("expected '{}', found the end of the file (truncated manifest)", key));
        std::string_view l = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        std::vector<std::string_view> w;
        for (std::size_t i = 0; i < l.size();) {
            auto j = l.find(' ', i);
            if (j == std::string_view::npos)
                j = l.size();
            if (j > i)
                w.push_back(l.substr(i, j - i));
            i = j + 1;
        }
        if (w.empty() || w[0] != key)
            fail(fmt::format("expected '{}', found '{}'", key, l));
        if (w.size() != words + 1)
            fail(fmt::format("'{}' needs {} value(s), has {}", key, words, w.size() - 1));
        return w;
    }

    std::uint64_t number(std::string_view word, int base = 10) const {
        std::uint64_t v = 0;
        auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v, base);
        if (ec != std::errc{} || p != word.data() + word.size())
            fail(fmt::format("'{}' is not a number", word));
        return v;
    }

    checkpoint_file file(std::string_view key) {
        auto w = line(key, 4);
        if (w[1].find('/') != std::string_view::npos || w[1] == "." || w[1] == "..")
            fail(fmt::format("file name '{}' leaves the checkpoint directory", w[1]));
        return {std::string(w[1]), number(w[2]), number(w[3]), number(w[4], 16)};
    }

    std::size_t pos() const noexcept { return pos_; }
    bool at_end() const noexcept { return pos_ == text_.size(); }

  private:
    std::string_view text_;
    const std::string& path_;
    std::size_t pos_ = 0;
    int line_ = 0;
};

std::string file_line(std::string_view key, const checkpoint_file& f) {
    return fmt::format("{} {} {} {} {:016x}\n", key, f.name, f.objects, f.bytes, f.checksum);
}

} // namespace

std::uint64_t checksum(std::span<const std::byte> bytes) noexcept {
    return XXH3_64bits(bytes.data(), bytes.size());
}

checksum_stream::checksum_stream() : state_(XXH3_createState()) {
    if (!state_)
        throw std::bad_alloc();
    XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}

checksum_stream::~checksum_stream() {
    XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void checksum_stream::add(std::span<const std::byte> bytes) noexcept {
    XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), bytes.data(), bytes.size());
}

std::uint64_t checksum_stream::value() const noexcept {
    return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

std::string format_manifest(const manifest& m) {
    std::string s = fmt::format("prema-checkpoint {}\nranks {}\nobjects {}\nserial {}\nhomes {}\n",
                                checkpoint_format, m.ranks, m.objects, m.serial, homes);
    s += file_line("root", m.root);
    for (auto& f : m.files)
        s += file_line("file", f);
    s += fmt::format("checksum {:016x}\n", checksum(std::as_bytes(std::span(s))));
    return s;
}

manifest parse_manifest(std::string_view text, const std::string& path) {
    reader r(text, path);
    manifest m;
    auto version = r.number(r.line("prema-checkpoint", 1)[1]);
    if (version != std::uint64_t(checkpoint_format))
        r.fail(fmt::format("format version {} is not the version this build reads ({})", version,
                           checkpoint_format));
    auto ranks = r.number(r.line("ranks", 1)[1]);
    if (ranks < 1 || ranks > (1u << 24))
        r.fail(fmt::format("{} ranks is not a job size", ranks));
    m.ranks = int(ranks);
    m.objects = r.number(r.line("objects", 1)[1]);
    m.serial = r.number(r.line("serial", 1)[1]);
    if (auto w = r.line("homes", 1); w[1] != homes)
        r.fail(
            fmt::format("directory homes '{}' are not the ones this build uses ({})", w[1], homes));
    m.root = r.file("root");
    std::uint64_t objects = 0;
    for (int i = 0; i < m.ranks; ++i) {
        m.files.push_back(r.file("file"));
        objects += m.files.back().objects;
    }
    std::size_t body = r.pos();
    auto sum = r.number(r.line("checksum", 1)[1], 16);
    if (sum != checksum(std::as_bytes(std::span(text.substr(0, body)))))
        r.fail("checksum mismatch: the manifest is corrupt");
    if (!r.at_end())
        r.fail("unexpected text after the checksum");
    if (objects != m.objects)
        r.fail(fmt::format("the files hold {} objects, the header says {}", objects, m.objects));
    return m;
}

} // namespace prema::detail
