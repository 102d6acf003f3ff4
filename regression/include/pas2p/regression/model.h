// Scaling models y(P): one quantity (bytes per message, instructions per burst, a message count,
// a phase weight, ...) as a function of the process count P, fitted from a few traced counts and
// evaluated at a count nobody has run.
//
// What flows in: training points (P, y), typically 3-6 of them (4, 9, 16, 25, 36).
// What flows out: a FittedModel, a plain value that evaluates y at any P, gives an interval for it,
// describes itself in words and saves to / loads from JSON exactly.
//
// The fitting itself (candidate search, leave-one-out selection, intervals) is in fit.h.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pas2p::regression {

// One observation: the quantity's value y at process count p (p > 0, y finite).
struct Point {
  double p = 0;
  double y = 0;
  friend bool operator==(const Point&, const Point&) = default;
};

// The functional forms a curve can take. Coefficient order is given per kind.
enum class CurveKind {
  kConstant,           // y = c0                                   coefficients {c0}
  kSingleTerm,         // y = c1 · P^i · log2(P)^j                  coefficients {c1}
  kNormalForm,         // y = c0 + c1 · P^i · log2(P)^j             coefficients {c0, c1}
  kPowerLaw,           // y = a · P^b                               coefficients {a, b}
  kPowerLawOffset,     // y = a · P^b + c                           coefficients {a, b, c}
  kExponential,        // y = a · exp(b · P)                        coefficients {a, b}
  kExponentialOffset,  // y = a · exp(b · P) + c                    coefficients {a, b, c}
  // Sizes of block-distributed data: N items split over P ranks in blocks of ceil(N/P) (padded
  // blocks, the ranks that get one more) or floor(N/P) (the ranks that get one fewer), raised to
  // the power k (1-D, 2-D, 3-D blocks of a side that is split) and scaled by c·P^a (a message
  // per rank: a = 1). The integer exponent a is exponent_numerator (denominator 1), k is
  // block_exponent, N is an integer >= 1. On a d-dimensional process grid (Curve::grid_dimension
  // d = 2, 3) the side that is split is the grid's side s(P) = P^(1/d) instead of P:
  // ceil(N / sqrt(P)) for a sqrt(P) x sqrt(P) decomposition (internal::GridSide: the integer
  // root at perfect squares / cubes, the real root elsewhere, where such a grid does not exist
  // and the law interpolates between the grids around P).
  kBlockCeil,   // y = c · P^a · ceil(N / s(P))^k               coefficients {c, N}
  kBlockFloor,  // y = c · P^a · floor(N / s(P))^k              coefficients {c, N}
};

// Stable names used in JSON and reports ("constant", "single_term", "normal_form", "power_law",
// "power_law_offset", "exponential", "exponential_offset", "block_ceil", "block_floor").
std::string_view CurveKindName(CurveKind kind);
// Throws pas2p::UserError naming the unknown kind and the valid names.
CurveKind CurveKindFromName(std::string_view name);
// How many free parameters a curve of this kind has (1, 2 or 3).
int ParameterCount(CurveKind kind);
// kBlockCeil or kBlockFloor.
bool IsBlockKind(CurveKind kind);

// One curve: a kind, its fixed exponents (for the Extra-P style normal forms: the power exponent is
// the exact fraction exponent_numerator / exponent_denominator, e.g. 2/3, and the log exponent j)
// and its coefficients. Free laws keep their exponent b among the coefficients.
struct Curve {
  CurveKind kind = CurveKind::kConstant;
  // i = numerator / denominator (kSingleTerm, kNormalForm); the integer a of a block law
  // (kBlockCeil, kBlockFloor: denominator 1).
  int exponent_numerator = 0;
  int exponent_denominator = 1;  // > 0
  int log_exponent = 0;          // j (kSingleTerm, kNormalForm only)
  std::vector<double> coefficients;
  int block_exponent = 0;  // k >= 1 of a block law; 0 for every other kind
  // d of a block law: the split side is s(P) = P^(1/d), d in {1, 2, 3}; 1 for every other kind.
  int grid_dimension = 1;

  double PowerExponent() const {
    return static_cast<double>(exponent_numerator) / exponent_denominator;
  }
  // y at p (p > 0). Not rounded; may be +-inf if an exponential law overflows far away.
  double Evaluate(double p) const;
  // The law without its block rounding: c·P^a·(N / s(P))^k for a block law (the share of the
  // N items a side of the split gets: below 1 where the split has more ranks than items along
  // a side, which ceil hides by padding to one item), Evaluate(p) for every other kind.
  double EvaluateUnrounded(double p) const;
  // The formula with 4 significant digits, e.g. "5965·P^−0.32", "12 + 3.5·P^(1/2)·log2(P)",
  // "8·P·ceil(1440/P)^2", "240·ceil(25/sqrt(P))^2", "8·ceil(100/cbrt(P))^2".
  std::string Formula() const;
  // {"kind", "exponent": [num, den], "log_exponent", "coefficients"}, plus "block_exponent" for
  // the block laws (only for them, so the other kinds' JSON is what it always was), plus
  // "grid_dimension" for a block law with d != 1 (so the 1-D block laws' JSON is unchanged).
  nlohmann::json ToJson() const;
  // Throws pas2p::UserError on a malformed object (missing key, wrong coefficient count, a
  // grid_dimension outside 1..3 or on a kind that is not a block law).
  static Curve FromJson(const nlohmann::json& json);

  friend bool operator==(const Curve&, const Curve&) = default;
};

// A curve that falls towards a level beyond the traced counts: c0 + c1·P^i with i < 0 and no
// log factor, or a·P^b + c with b < 0, their falling term and their level both > 0. Returns
// the level (c0, c); nullopt for every other curve.
std::optional<double> FallingLevel(const Curve& c);
// A curve that falls towards 0 beyond the traced counts: c1·P^i·log2(P)^j with i < 0, or
// a·P^b with b < 0 (a > 0).
bool FallsToZero(const Curve& c);

// How FittedModel::Interval was built.
enum class IntervalMethod {
  // Envelope of (a) the selected form refitted with each training count left out (the jackknife
  // curves), and (b) every other candidate whose LOO error is within Options::interval_model_factor
  // of the best one (model-selection uncertainty); widened on both sides by LOO error × |y(P)|.
  // Deterministic, needs no random numbers. Zero width for data the model fits exactly.
  kLooEnvelope,
  // Residual bootstrap: refit the selected form on fitted values plus resampled (rescaled)
  // relative residuals, Options::bootstrap_samples times with a fixed seed; the interval is the
  // central Options::interval_coverage quantile range of the refitted curves at P.
  kResidualBootstrap,
};
std::string_view IntervalMethodName(IntervalMethod method);
IntervalMethod IntervalMethodFromName(std::string_view name);

struct PredictionInterval {
  double low = 0;
  double high = 0;
};

// The result of fitting one quantity: a plain value type, cheap to copy, saved as JSON.
struct FittedModel {
  Curve curve;                  // the selected model
  std::vector<Point> training;  // the points it was fitted to, sorted by p
  // Root mean square of the relative leave-one-out errors (y_pred(-k) - y_k) / |y_k|, as a fraction
  // (0.011 = 1.1%). 0 for an exact constant and for a block law (selected only when it
  // reproduces every training value exactly; a count left out can leave N undetermined).
  double loo_error = 0;
  // Root mean square relative residual of the fit to all points (as a fraction).
  double fit_error = 0;
  // Every training value is an integer (message counts, weights): callers that need an integer
  // (a count of messages) round Evaluate(); the model itself is not rounded.
  bool integer_valued = false;

  IntervalMethod interval_method = IntervalMethod::kLooEnvelope;
  // Curves whose spread at P gives the interval (jackknife fits / competing models, or bootstrap
  // refits). Empty for an exact constant. For a block law: the law at the smallest and the
  // largest N that reproduce the training values (ceil(N/P) is monotone in N, so these bound
  // every consistent N), and likewise for any other block form that reproduces them.
  std::vector<Curve> interval_curves;
  // kResidualBootstrap: the interval is the [q, 1 - q] quantile range of the curves at P.
  double interval_quantile = 0;
  // kLooEnvelope: relative half-width added on both sides (the LOO error).
  double interval_margin = 0;

  double Evaluate(double p) const { return curve.Evaluate(p); }
  // [low, high] around Evaluate(p); always low <= Evaluate(p) <= high.
  PredictionInterval Interval(double p) const;
  int ParameterCount() const { return regression::ParameterCount(curve.kind); }

  // "bytes per message ≈ 5965·P^−0.32, from 4 counts, LOO error 1.1%"; a block law:
  // "bytes sent = 8·P·ceil(N/P)^2, N in [1437, 1440] (1440 used), from 5 counts (4–36), exact;
  // also exact (in the interval): c = 32, N in [717, 720]" (other exact (c, N), if any).
  std::string Describe(std::string_view quantity) const;
  // Describe() plus "; at P = 49: 1704 [1650, 1760]".
  std::string Describe(std::string_view quantity, double target_p) const;

  // Exact round trip: FromJson(ToJson()) == *this, and the JSON text is the same bytes for the same
  // model (keys are sorted, doubles printed shortest-exact).
  nlohmann::json ToJson() const;
  // Throws pas2p::UserError with the offending key when the JSON is not a model of this format.
  static FittedModel FromJson(const nlohmann::json& json);

  friend bool operator==(const FittedModel&, const FittedModel&) = default;
};

}  // namespace pas2p::regression
