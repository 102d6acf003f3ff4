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

// The side s(P) = P^(1/d) of a d-dimensional process grid (d = 1, 2, 3). Exact for perfect
// powers: the integer root r when r^d == P (16 -> 4, 27 -> 3), so ceil(N / s) is an integer
// division; the real root otherwise (a count the square or cubic grid does not exist at, where
// the block law becomes an interpolation between the grids around it).
inline double GridSide(double p, int d) {
  if (d <= 1) return p;
  const double root = d == 2 ? std::sqrt(p) : d == 3 ? std::cbrt(p) : std::pow(p, 1.0 / d);
  if (p >= 1 && p < 9007199254740992.0 && p == std::floor(p)) {
    const double r = std::round(root);
    double power = 1;
    for (int i = 0; i < d; ++i) power *= r;
    if (power == p) return r;
  }
  return root;
}

// True when p is a positive integer that is an exact d-th power (every p for d = 1).
inline bool IsPerfectPower(double p, int d) {
  if (!(p >= 1) || p != std::floor(p)) return false;
  const double side = GridSide(p, d);
  return side == std::floor(side);
}

// ceil(N / s)^k or floor(N / s)^k, s = GridSide(P, d). Integer division when both are integers
// (process counts, their integer roots and item counts are), so the quotient is never a
// rounding off.
inline double BlockTerm(bool ceil, double n, double p, int k, int d = 1) {
  constexpr double kExactInt = 9007199254740992.0;  // 2^53
  const double s = GridSide(p, d);
  double block = 0;
  if (n >= 0 && s >= 1 && n < kExactInt && s < kExactInt && n == std::floor(n) &&
      s == std::floor(s)) {
    const auto ni = static_cast<long long>(n);
    const auto si = static_cast<long long>(s);
    block = static_cast<double>(ceil ? (ni + si - 1) / si : ni / si);
  } else {
    block = ceil ? std::ceil(n / s) : std::floor(n / s);
  }
  double term = 1.0;
  for (int i = 0; i < k; ++i) term *= block;
  return term;
}

}  // namespace pas2p::regression::internal
