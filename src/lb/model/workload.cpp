#include "lb/model/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "prema/error.hpp"

namespace prema::model {

std::vector<double> workload::all_weights() const {
    std::vector<double> all;
    for (auto& r : weights)
        all.insert(all.end(), r.begin(), r.end());
    return all;
}

double workload::total_s() const {
    double t = 0;
    for (auto& r : weights)
        t = std::accumulate(r.begin(), r.end(), t);
    return t;
}

std::size_t workload::objects() const {
    std::size_t n = 0;
    for (auto& r : weights)
        n += r.size();
    return n;
}

void validate(const workload& w) {
    if (w.ranks < 1 || w.workers < 1)
        throw usage_error("workload: needs at least 1 rank and 1 worker (got " +
                          std::to_string(w.ranks) + " ranks, " + std::to_string(w.workers) +
                          " workers)");
    if (int(w.weights.size()) != w.ranks)
        throw usage_error("workload: weights given for " + std::to_string(w.weights.size()) +
                          " ranks, expected " + std::to_string(w.ranks));
    for (int r = 0; r < w.ranks; ++r) {
        if (w.weights[std::size_t(r)].empty())
            throw usage_error("workload: rank " + std::to_string(r) + " has no object");
        for (double x : w.weights[std::size_t(r)])
            if (!std::isfinite(x) || x < 0)
                throw usage_error("workload: rank " + std::to_string(r) + " has weight " +
                                  std::to_string(x) + " (must be finite and >= 0)");
    }
    if (w.estimates.empty())
        return;
    if (w.estimates.size() != w.weights.size())
        throw usage_error("workload: estimates given for " + std::to_string(w.estimates.size()) +
                          " ranks, expected " + std::to_string(w.ranks));
    for (int r = 0; r < w.ranks; ++r) {
        const auto& e = w.estimates[std::size_t(r)];
        if (e.size() != w.weights[std::size_t(r)].size())
            throw usage_error("workload: rank " + std::to_string(r) +
                              " has estimates that do not match its objects");
        for (double x : e)
            if (!std::isfinite(x) || x < 0)
                throw usage_error("workload: rank " + std::to_string(r) + " has estimate " +
                                  std::to_string(x) + " (must be finite and >= 0)");
    }
}

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ','))
        cells.push_back(cell);
    if (!line.empty() && line.back() == ',')
        cells.emplace_back();
    for (auto& c : cells) {
        auto b = c.find_first_not_of(" \t\r"), e = c.find_last_not_of(" \t\r");
        c = b == std::string::npos ? "" : c.substr(b, e - b + 1);
    }
    return cells;
}

} // namespace

workload read_csv(std::istream& in, const std::string& column, int workers, const std::string& what,
                  const std::string& estimate_column) {
    std::string line;
    if (!std::getline(in, line))
        throw usage_error(what + ": empty, expected a header line naming 'rank' and '" + column +
                          "'");
    auto header = split_csv_line(line);
    auto find = [&](const std::string& name) {
        auto it = std::find(header.begin(), header.end(), name);
        if (it == header.end())
            throw usage_error(what + ": the header has no column '" + name + "' (it has: " + line +
                              ")");
        return std::size_t(it - header.begin());
    };
    std::size_t rank_col = find("rank"), weight_col = find(column);
    const bool estimated = !estimate_column.empty();
    std::size_t estimate_col = estimated ? find(estimate_column) : weight_col;
    struct row {
        int rank;
        double weight, estimate;
    };
    std::vector<row> rows;
    for (int lineno = 2; std::getline(in, line); ++lineno) {
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        auto cells = split_csv_line(line);
        auto where = what + ":" + std::to_string(lineno) + ": ";
        if (cells.size() <= std::max({rank_col, weight_col, estimate_col}))
            throw usage_error(where + "expected " + std::to_string(header.size()) +
                              " columns, got " + std::to_string(cells.size()));
        char* end = nullptr;
        long r = std::strtol(cells[rank_col].c_str(), &end, 10);
        if (cells[rank_col].empty() || *end || r < 0 || r > 1'000'000)
            throw usage_error(where + "rank '" + cells[rank_col] + "' is not a rank number");
        auto seconds = [&](std::size_t col, const std::string& name) {
            double x = std::strtod(cells[col].c_str(), &end);
            if (cells[col].empty() || *end || !std::isfinite(x) || x < 0)
                throw usage_error(where + name + " '" + cells[col] +
                                  "' is not a time >= 0 in seconds");
            return x;
        };
        rows.push_back({int(r), seconds(weight_col, column),
                        estimated ? seconds(estimate_col, estimate_column) : 0});
    }
    if (rows.empty())
        throw usage_error(what + ": no object rows after the header");
    workload w;
    w.workers = workers;
    for (auto& x : rows)
        w.ranks = std::max(w.ranks, x.rank + 1);
    w.weights.resize(std::size_t(w.ranks));
    if (estimated)
        w.estimates.resize(std::size_t(w.ranks));
    for (auto& x : rows) {
        w.weights[std::size_t(x.rank)].push_back(x.weight);
        if (estimated)
            w.estimates[std::size_t(x.rank)].push_back(x.estimate);
    }
    validate(w);
    return w;
}

workload round_robin(const std::vector<double>& weights, int ranks, int workers) {
    if (ranks < 1)
        throw usage_error("workload: needs at least 1 rank");
    workload w;
    w.ranks = ranks;
    w.workers = workers;
    w.weights.resize(std::size_t(ranks));
    for (std::size_t i = 0; i < weights.size(); ++i)
        w.weights[i % std::size_t(ranks)].push_back(weights[i]);
    validate(w);
    return w;
}

namespace {
// `in` seen as a step function over its objects (value in[i] on [i, i+1)), cut into k pieces
// of equal length.
std::vector<double> cut(const std::vector<double>& in, std::size_t k) {
    const double m = double(in.size());
    // Integral of the step function from 0 to x.
    auto integral = [&](double x) {
        auto whole = std::size_t(std::min(std::floor(x), m));
        double sum = std::accumulate(in.begin(), in.begin() + std::ptrdiff_t(whole), 0.0);
        if (whole < in.size())
            sum += in[whole] * (x - double(whole));
        return sum;
    };
    std::vector<double> piece(k, 0.0);
    for (std::size_t j = 0; j < k; ++j)
        piece[j] = integral(m * double(j + 1) / double(k)) - integral(m * double(j) / double(k));
    return piece;
}
} // namespace

workload regranulate(const workload& w, int objects_per_worker) {
    if (objects_per_worker < 1)
        throw usage_error("regranulate: objects per worker must be >= 1");
    workload out = w;
    const std::size_t k = std::size_t(objects_per_worker) * std::size_t(w.workers);
    for (std::size_t r = 0; r < w.weights.size(); ++r)
        out.weights[r] = cut(w.weights[r], k);
    for (std::size_t r = 0; r < w.estimates.size(); ++r)
        out.estimates[r] = cut(w.estimates[r], k);
    return out;
}

} // namespace prema::model
