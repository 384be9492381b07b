// What the model predicts for: objects with a weight (seconds of work) on their initial rank,
// each rank starting its objects in the listed order, and `workers` threads per rank.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace prema::model {

struct workload {
    int ranks = 1;
    int workers = 1;
    // Per rank, the weights of its objects in the order its workers start them.
    std::vector<std::vector<double>> weights;
    // What the policies weigh each object by (--prema-lb-load), laid out as `weights`: its
    // declared load(), in seconds, for `declared`. Empty: the weights themselves, as the
    // runtime's measured (and hybrid) load has them once the objects have run.
    std::vector<std::vector<double>> estimates;

    std::vector<double> all_weights() const;
    double total_s() const;
    std::size_t objects() const;
};

// Checks ranks/workers and that every weight (and estimate) is finite and >= 0 and every rank
// has an object; throws usage_error naming what is wrong.
void validate(const workload& w);

// A CSV with a header naming at least `rank` and `column` (e.g. lb_synthetic --csv:
// object,rank,weight_s,measured_s,declared_s), and `estimate_column` unless it is empty (the
// estimates). Rows of one rank keep their file order. `ranks` is the largest rank + 1. `what`
// names the input in errors (file name).
workload read_csv(std::istream& in, const std::string& column, int workers, const std::string& what,
                  const std::string& estimate_column = "");

// Weights dealt round robin: object i starts on rank i % ranks (lb_synthetic's placement).
workload round_robin(const std::vector<double>& weights, int ranks, int workers);

// The same work at another granularity: each rank's weight sequence, seen as a step function
// over its objects, cut into objects_per_worker x workers pieces of equal length. Per-rank
// totals and the shape inside a rank are kept; estimates are cut alike.
workload regranulate(const workload& w, int objects_per_worker);

} // namespace prema::model
