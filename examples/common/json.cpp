#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace example {
namespace {

std::string quoted(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            q += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            q += esc;
        } else {
            q += c;
        }
    }
    return q + "\"";
}

std::string number(double v) {
    if (!std::isfinite(v)) // JSON has no inf/nan
        return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

} // namespace

json& json::raw(const std::string& key, const std::string& value) {
    body_ += (body_.empty() ? "" : ", ") + quoted(key) + ": " + value;
    return *this;
}

json& json::set(const std::string& key, double v) {
    return raw(key, number(v));
}

json& json::set(const std::string& key, long long v) {
    return raw(key, std::to_string(v));
}

json& json::set(const std::string& key, bool v) {
    return raw(key, v ? "true" : "false");
}

json& json::set(const std::string& key, const std::string& v) {
    return raw(key, quoted(v));
}

json& json::set(const std::string& key, const json& v) {
    return raw(key, v.str());
}

json& json::set(const std::string& key, const std::vector<json>& v) {
    std::string list = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        list += (i ? ",\n  " : "\n  ") + v[i].str();
    return raw(key, list + "]");
}

json& json::set(const std::string& key, const std::vector<double>& v) {
    std::string list = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        list += (i ? ", " : "") + number(v[i]);
    return raw(key, list + "]");
}

bool json::write(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        std::perror(("cannot write " + path).c_str());
        return false;
    }
    bool ok = std::fprintf(f, "%s\n", str().c_str()) > 0;
    ok &= std::fclose(f) == 0;
    if (!ok)
        std::perror(("cannot write " + path).c_str());
    return ok;
}

} // namespace example
