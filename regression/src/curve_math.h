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

}  // namespace pas2p::regression::internal
