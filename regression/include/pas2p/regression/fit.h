// Fitting one quantity y(P) from a few process counts: candidate search, leave-one-out selection,
// prediction intervals. Shields the caller from the least-squares machinery (Eigen QR for the
// linear forms, Ceres Solver for the free power and exponential laws).
//
// The method (see regression/README.md for the reasoning):
//  1. Candidates: the constant; the single terms c1·P^i·log2(P)^j and the performance-model normal
//     forms c0 + c1·P^i·log2(P)^j for i in Options::exponents (quarters and thirds from −1 to 3)
//     and j in 0..max_log_exponent; the free laws a·P^b, a·P^b + c, a·exp(b·P), a·exp(b·P) + c. All
//     are fitted by least squares on RELATIVE residuals (ŷ_k − y_k)/d_k, d_k = max(|y_k|,
//     1e-6·max|y|), so a count of 4 and a count of 36 weigh the same however the quantity scales.
//  2. Overfitting guard: with n points only candidates with at most n − 1 parameters are tried
//     (so every leave-one-out fit is determined), and never more than Options::max_parameters.
//  3. Each candidate is scored by its leave-one-out error: refit without count k, predict y_k,
//     take the root mean square of the relative errors. Selection uses this, not the fit.
//  4. Occam rule: each parameter beyond the first must earn its keep by dividing the LOO error by
//     Options::occam_factor (default 2). The candidate with the lowest penalised score
//       (LOO error + occam_absolute_tolerance) · occam_factor^(parameters − 1)
//     is selected (LOO errors below occam_absolute_tolerance count as 0); exact ties (within 1e-6
//     relative) go to the fewer parameters, then to the simpler form (constant < single term <
//     normal form < power law < exponential; smaller |i|, then smaller j). So a term that does not
//     lower the LOO error clearly is rejected, and with exact data the generating model (LOO error
//     ~1e-15) beats every other form by orders of magnitude while a redundant extra term (c0 = 0)
//     loses to the simpler exact form. Values that are all identical are the exact constant,
//     whatever else would fit. Values identical at the largest counts (at least 3, spanning a
//     factor of 2 in P) while a smaller count differs are, when asked for, the exact constant
//     from there on (Options::exact_tail_min_counts).
//  5. Block laws (Options::use_block_laws): integer values that no candidate above reproduces
//     exactly are tried against c·P^a·ceil(N/s)^k and c·P^a·floor(N/s)^k, s = P, sqrt(P) or
//     cbrt(P) (the side of a 1-, 2- or 3-D process grid); one that reproduces
//     every value exactly is selected (loo_error 0), with the law at every consistent N (its
//     smallest and largest) as the interval. Searched from block_min_counts counts, or one
//     fewer when every value is at least block_large_value.
//  6. The interval (model.h, IntervalMethod).
//
// Same input and options -> bitwise identical FittedModel (single-threaded, fixed seeds). Fit keeps
// no state between calls: different quantities may be fitted on different threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pas2p/regression/model.h"

namespace pas2p::regression {

struct Options {
  // Power exponents i of the normal forms as fractions {numerator, denominator}. Default: every
  // quarter and third from −1 to 3 (25 values).
  std::vector<std::array<int, 2>> exponents = DefaultExponents();
  int max_log_exponent = 2;  // j in 0..max_log_exponent
  bool use_constant = true;
  bool use_single_terms = true;
  bool use_normal_forms = true;
  bool use_power_laws = true;    // a·P^b and a·P^b + c (Ceres)
  bool use_exponentials = true;  // a·exp(b·P) and a·exp(b·P) + c (Ceres)
  // The quantity is positive at every count (a CPU time, a size): candidates that reach zero
  // or below anywhere from the largest training count on (c0 − c1·P^i with c1, i > 0 fitted
  // to a decreasing series crosses zero at a finite P) are not tried, so extrapolation never
  // predicts a non-positive value from positive data.
  bool positive = false;
  // Weaker: a candidate that reaches zero or below from the largest training count on, fitted
  // to positive data, is kept only when it reproduces every value exactly (a count that is
  // truly N − P). Message sizes mixing cases whose proportions change with P are fitted by
  // near-cancelling terms otherwise (−1.43·10^7 + 3.5·10^6·P^(−1/2)·log2(P)^2 to 0.98-1.52
  // MB at 27-48 ranks, 2% off left out), which reach 0 bytes by a few hundred ranks.
  bool positive_unless_exact = false;
  // Candidates that turn beyond the largest training count (rise again after falling there,
  // or fall after rising, anywhere up to 2^20 times that count) are not tried: the turn is
  // the basis function's, not the data's. c0 − c1·P^(−1/4)·log2(P) fitted to a burst that
  // falls from 4 to 36 ranks has its log term peak at P = e^4 and the burst grow back to c0
  // beyond: bursts of the bundled cg and transpose, whose compute falls as 1/P over
  // 4-36 ranks, came back to 7-10 ms per rank at 1024, 25-29 times the traced runs' total.
  bool no_turn_beyond = false;
  // The values fitted are P times the quantity (a total over the ranks): no_turn_beyond then
  // looks at the fitted curve divided by P, the quantity itself.
  bool turn_of_quotient = false;
  // Never more parameters than this (on top of the n − 1 rule). 3 is the most any candidate has.
  int max_parameters = 3;
  // A law that grows faster than P (P^i with i > 1, P log2(P)^j with j > 0, a free power
  // law with b > 1, an exponential) is only selected when its leave-one-out error is below
  // occam_absolute_tolerance: it reproduces the left-out counts exactly. From a few counts
  // that no form fits exactly (sizes that mix cases whose proportions change with P), the
  // steepest form that happens to predict the left-out points best extrapolates wildly (a
  // P^3 log2(P)^2 term fitted to a jump at the largest count). Exact data keep any law.
  bool steep_needs_exact = false;
  // Block laws c·P^a·ceil(N/P)^k and c·P^a·floor(N/P)^k (model.h, kBlockCeil / kBlockFloor):
  // sizes of block-distributed data, which no smooth law reproduces. Searched only when every
  // value is an integer >= 0, there are at least block_min_counts counts (or one fewer, all
  // values >= block_large_value) and no other
  // candidate reproduces the training values exactly (LOO error below
  // occam_absolute_tolerance); one is selected only when it reproduces every value exactly.
  // a is taken from block_power_exponents, k from 1..block_max_exponent, N >= 1 from the
  // intervals that each count's ceil (floor) constraint leaves (see fit.cc, SolveBlock); at most
  // block_max_scan block sizes are tried per form, else the form is skipped. The split side is
  // P or, on a process grid, P^(1/d) for d in block_grid_dimensions (model.h,
  // Curve::grid_dimension); a grid law is tried only when every count is a perfect d-th power.
  bool use_block_laws = true;
  int block_min_counts = 4;
  // With block_min_counts - 1 counts, block laws are searched when every value is at least
  // this (sizes in bytes of real blocks, not small counts that round like a block).
  double block_large_value = 1000;
  std::vector<int> block_power_exponents = {0, 1, -1, 2};
  int block_max_exponent = 3;
  int block_max_scan = 1 << 16;
  std::vector<int> block_grid_dimensions = {1, 2, 3};

  // See rule 4 above. occam_absolute_tolerance is the LOO error (as a fraction) below which two
  // fits count as equally exact.
  double occam_factor = 2.0;
  double occam_absolute_tolerance = 1e-9;
  // > 0: a selected curve that falls towards 0 (FallsToZero) gives way to the candidate that
  // falls towards a level (FallingLevel) and predicts the left-out counts better, when that
  // level is at least this share of its value at the largest count. Under the Occam rule a
  // noisy series (occam_absolute_tolerance of a few %) keeps its one-term law whenever that
  // is within the noise, and a burst that falls as 1/P towards a fixed overhead (a rank's
  // work split over more calls as P grows) is then a power that keeps falling: 16x too little
  // at 1024 from 4-16. A level that large is no noise the constant fitted. 0: off.
  double level_off_share = 0;

  // Rule 4, its end (opt-in): when at least this many of the largest counts have the same
  // value (within occam_absolute_tolerance, relative), spanning a factor of
  // exact_tail_min_span in P, and a smaller count differs, the value is the exact constant
  // from there on (loo_error 0, no interval). Small counts are where partners coincide (P x
  // bytes of an MPI_Alltoallv to r+-1 and r+-3 mod P: 2, 3, then 4 distinct partners from 8
  // ranks on); a smooth law through them bends the extrapolation (15% too many bytes at 24
  // from 4-16). Not for quantities that follow a process grid's extents: MPI_Dims_create(P, 2)
  // has a first extent of 4 at 8, 12 and 16 ranks and of 6 at 24, so a face is equal at three
  // counts and then shrinks. 0: off (the default); 3 or more: on.
  int exact_tail_min_counts = 0;
  double exact_tail_min_span = 2.0;

  IntervalMethod interval_method = IntervalMethod::kLooEnvelope;
  // Competing candidates whose penalised score is below this factor times the selected one's join
  // the interval (model-selection uncertainty); 1 leaves them out.
  double interval_model_factor = 2.0;
  // At most this many competing candidates (the best by LOO error) join the envelope.
  int interval_max_competitors = 8;
  // kResidualBootstrap.
  int bootstrap_samples = 200;
  std::uint64_t bootstrap_seed = 0x5eed2025u;
  double interval_coverage = 0.9;

  // Free-law bounds (Ceres): power exponent b in [−power_exponent_bound, power_exponent_bound];
  // exponential rate |b| · max training P <= exponential_rate_bound.
  double power_exponent_bound = 4;
  double exponential_rate_bound = 20;

  // True when every field is usable; otherwise false and *error (if not null) says which field and
  // why.
  bool IsValid(std::string* error) const;

  static std::vector<std::array<int, 2>> DefaultExponents();
};

// One candidate as scored during the search (for reports and tests).
struct CandidateScore {
  Curve curve;           // fitted to all points
  double loo_error = 0;  // +inf when a leave-one-out fit was not determined
  double fit_error = 0;
  double score = 0;     // penalised LOO error (rule 4); the lowest is selected
  bool pruned = false;  // fit error already too large to compete; LOO not computed
};

struct FitSummary {
  std::vector<CandidateScore> candidates;  // in search order
  int selected = -1;                       // index into candidates, -1 for the exact-constant path
  std::string occam_rule;                  // which rule decided, in words
  // One line per candidate sorted by LOO error: formula, parameters, fit and LOO error.
  std::string FullReport() const;
};

// Fits y(P). `quantity` names what is fitted in error messages ("bytes per message").
// Throws pas2p::UserError when there are fewer than 3 points ("at least 3 process counts are needed
// to fit bytes per message, got 2 (4, 9)"), when a process count is not positive or appears twice,
// when a value is not finite, or when the options are invalid.
FittedModel Fit(std::span<const Point> points, const Options& options = {},
                std::string_view quantity = "the quantity", FitSummary* summary = nullptr);

// Refits a given form (kind and fixed exponents taken from `form`) to the points, by relative
// least squares; used for the jackknife and bootstrap, and by callers that want one form for all
// classes. For a free law, form.coefficients (if complete) are the starting point; otherwise a
// grid over the exponent / rate picks one. Returns false (and leaves *out untouched) when the fit
// is not determined or not finite.
bool FitCurve(const Curve& form, std::span<const Point> points, const Options& options, Curve* out);

}  // namespace pas2p::regression
