// A JSON object built key by key, for the examples' `--json FILE` output: the figures they
// print, in the order they were set. Not thread-safe; strings are escaped.
#pragma once

#include <string>
#include <vector>

namespace example {

class json {
  public:
    json& set(const std::string& key, double v);
    json& set(const std::string& key, long long v);
    json& set(const std::string& key, int v) { return set(key, (long long)v); }
    json& set(const std::string& key, bool v);
    json& set(const std::string& key, const std::string& v);
    json& set(const std::string& key, const char* v) { return set(key, std::string(v)); }
    json& set(const std::string& key, const json& v); // a nested object
    json& set(const std::string& key, const std::vector<json>& v);
    json& set(const std::string& key, const std::vector<double>& v);

    std::string str() const { return "{" + body_ + "}"; }
    // Writes str() and a newline to `path`; on failure prints why on stderr and returns false.
    bool write(const std::string& path) const;

  private:
    json& raw(const std::string& key, const std::string& value);
    std::string body_;
};

} // namespace example
