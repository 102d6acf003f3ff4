// Shared helpers for the regression tests: generating models and portable deterministic noise.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pas2p/regression/model.h"

namespace pas2p::regression::testing {

// splitmix64 + Box-Muller, so the "random" noise is the same on every platform.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : state_(seed) {}
  double Uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  }
  double Normal() {
    const double u1 = Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  }

 private:
  std::uint64_t state_;
};

inline std::vector<Point> Sample(const std::function<double(double)>& f,
                                 const std::vector<double>& counts, double relative_noise = 0,
                                 Noise* noise = nullptr) {
  std::vector<Point> points;
  for (double p : counts) {
    double y = f(p);
    if (noise != nullptr) y *= 1 + relative_noise * noise->Normal();
    points.push_back({p, y});
  }
  return points;
}

inline double RelativeError(double value, double truth) {
  return std::abs(value - truth) / std::abs(truth);
}

}  // namespace pas2p::regression::testing
