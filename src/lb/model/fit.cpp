#include "lb/model/fit.hpp"

#include <algorithm>
#include <limits>

#include "prema/error.hpp"

namespace prema::model {

two_class_fit fit_two_classes(std::vector<double> w) {
    if (w.empty())
        throw usage_error("two-class fit: no object weights");
    std::sort(w.begin(), w.end());
    const std::size_t n = w.size();
    // Prefix sums of weights and squares: the squared error of a class is
    // sum(x^2) - (sum x)^2 / count, so each candidate split costs O(1).
    std::vector<double> s(n + 1, 0.0), q(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        s[i + 1] = s[i] + w[i];
        q[i + 1] = q[i] + w[i] * w[i];
    }
    auto sse = [&](std::size_t from, std::size_t to) {
        double sum = s[to] - s[from];
        return std::max(0.0, q[to] - q[from] - sum * sum / double(to - from));
    };
    two_class_fit f;
    f.objects = n;
    f.gamma = n;
    f.error = sse(0, n);
    // Both classes non-empty; a split between equal weights would cut one value in two.
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t g = 1; g < n; ++g) {
        if (w[g] == w[g - 1])
            continue;
        double e = sse(0, g) + sse(g, n);
        if (e < best) {
            best = e;
            f.gamma = g;
        }
    }
    if (f.gamma < n)
        f.error = best;
    f.light_s = s[f.gamma] / double(f.gamma);
    f.light_min = w.front();
    f.light_max = w[f.gamma - 1];
    if (f.gamma < n) {
        f.heavy_s = (s[n] - s[f.gamma]) / double(n - f.gamma);
        f.heavy_min = w[f.gamma];
        f.heavy_max = w.back();
    } else {
        f.heavy_s = f.heavy_min = f.heavy_max = f.light_s;
    }
    f.split = f.light_max;
    return f;
}

} // namespace prema::model
