// Private helpers shared by model.cc and fit.cc.
#pragma once

#include <cmath>

namespace pas2p::regression::internal {

// P^(num/den) · log2(P)^j, with the integer power of the log taken by multiplication so that the
// same inputs always give the same bits.
inline double NormalFormTerm(int numerator, int denominator, int log_exponent, double p) {
  double term = 1.0;
  if (numerator != 0) {
    if (denominator == 1) {
      term = std::pow(p, static_cast<double>(numerator));
    } else {
      term = std::pow(p, static_cast<double>(numerator) / denominator);
    }
  }
  if (log_exponent > 0) {
    const double l = std::log2(p);
    for (int k = 0; k < log_exponent; ++k) term *= l;
  }
  return term;
}

// ceil(N / P)^k or floor(N / P)^k. Integer division when both are integers (process counts
// and item counts are), so the quotient is never a rounding off.
inline double BlockTerm(bool ceil, double n, double p, int k) {
  constexpr double kExactInt = 9007199254740992.0;  // 2^53
  double block = 0;
  if (n >= 0 && p >= 1 && n < kExactInt && p < kExactInt && n == std::floor(n) &&
      p == std::floor(p)) {
    const auto ni = static_cast<long long>(n);
    const auto pi = static_cast<long long>(p);
    block = static_cast<double>(ceil ? (ni + pi - 1) / pi : ni / pi);
  } else {
    block = ceil ? std::ceil(n / p) : std::floor(n / p);
  }
  double term = 1.0;
  for (int i = 0; i < k; ++i) term *= block;
  return term;
}

}  // namespace pas2p::regression::internal
