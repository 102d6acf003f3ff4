// Candidate search, leave-one-out selection and intervals for one quantity y(P).
#include "pas2p/regression/fit.h"

#include <ceres/ceres.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "curve_math.h"
#include "pas2p/core/error.h"

namespace pas2p::regression {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The training data as the fits see it. Residuals are relative: (model(p_k) − y_k) / d_k with
// d_k = max(|y_k|, 1e-6 · max|y|), so a zero value (no messages at P = 1) is a strong but finite
// constraint. The free laws work in
// scaled variables u = p / p_max and z = y / y_scale so that Ceres sees numbers near 1.
struct Data {
  std::vector<double> p;
  std::vector<double> y;
  std::vector<double> d;
  double p_max = 1;
  double y_scale = 1;
};

Data MakeData(std::span<const Point> sorted) {
  Data data;
  double y_max = 0;
  for (const auto& point : sorted) y_max = std::max(y_max, std::abs(point.y));
  const double floor = y_max > 0 ? 1e-6 * y_max : 1.0;
  for (const auto& point : sorted) {
    data.p.push_back(point.p);
    data.y.push_back(point.y);
    data.d.push_back(std::max(std::abs(point.y), floor));
    data.p_max = std::max(data.p_max, point.p);
  }
  data.y_scale = y_max > 0 ? y_max : 1.0;
  return data;
}

bool IsLinear(CurveKind kind) {
  return kind == CurveKind::kConstant || kind == CurveKind::kSingleTerm ||
         kind == CurveKind::kNormalForm;
}
bool IsExponential(CurveKind kind) {
  return kind == CurveKind::kExponential || kind == CurveKind::kExponentialOffset;
}
bool HasOffset(CurveKind kind) {
  return kind == CurveKind::kPowerLawOffset || kind == CurveKind::kExponentialOffset;
}

// ---------------------------------------------------------------------------------------------
// Linear forms: weighted least squares by column-pivoting QR (Eigen).

// Fits `form` on the rows `rows` of `data`. Columns are normalised before the QR so that the rank
// decision does not depend on the quantity's units. Matrix is a fixed-capacity Eigen type for the
// usual handful of rows (no heap allocation) or MatrixXd beyond that.
template <typename Matrix, typename Vector>
bool FitLinearWith(const Curve& form, const Data& data, std::span<const int> rows, Curve* out) {
  const int m = static_cast<int>(rows.size());
  const bool has_constant = form.kind != CurveKind::kSingleTerm;
  const bool has_term = form.kind != CurveKind::kConstant;
  const int k = (has_constant ? 1 : 0) + (has_term ? 1 : 0);
  if (m < k) return false;
  Matrix a(m, k);
  Vector b(m);
  for (int r = 0; r < m; ++r) {
    const int i = rows[r];
    const double w = 1.0 / data.d[i];
    int c = 0;
    if (has_constant) a(r, c++) = w;
    if (has_term) {
      a(r, c++) = w * internal::NormalFormTerm(form.exponent_numerator, form.exponent_denominator,
                                               form.log_exponent, data.p[i]);
    }
    b(r) = w * data.y[i];
  }
  double scale[2] = {1, 1};
  for (int c = 0; c < k; ++c) {
    scale[c] = a.col(c).norm();
    if (!(scale[c] > 0) || !std::isfinite(scale[c])) return false;
    a.col(c) /= scale[c];
  }
  double x[2] = {0, 0};
  if (k == 1) {
    x[0] = a.col(0).dot(b);  // unit column: the least-squares solution is the projection
  } else {
    Eigen::ColPivHouseholderQR<Matrix> qr(a);
    qr.setThreshold(1e-10);
    if (qr.rank() < k) return false;
    const Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, 2, 1> solution = qr.solve(b);
    x[0] = solution(0);
    x[1] = solution(1);
  }
  Curve curve = form;
  curve.coefficients.assign(k, 0.0);
  for (int c = 0; c < k; ++c) {
    curve.coefficients[c] = x[c] / scale[c];
    if (!std::isfinite(curve.coefficients[c])) return false;
  }
  *out = std::move(curve);
  return true;
}

bool FitLinear(const Curve& form, const Data& data, std::span<const int> rows, Curve* out) {
  constexpr int kMaxStackRows = 32;
  if (rows.size() <= kMaxStackRows) {
    using Matrix =
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor, kMaxStackRows, 2>;
    using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, Eigen::ColMajor, kMaxStackRows, 1>;
    return FitLinearWith<Matrix, Vector>(form, data, rows, out);
  }
  return FitLinearWith<Eigen::MatrixXd, Eigen::VectorXd>(form, data, rows, out);
}

// ---------------------------------------------------------------------------------------------
// Free laws: a·P^b (+ c) and a·exp(b·P) (+ c) by Ceres, in scaled variables
//   power:       z = a'·u^b + c'          (a = a'·y_scale·p_max^−b, c = c'·y_scale)
//   exponential: z = a'·exp(b'·u) + c'    (a = a'·y_scale, b = b'/p_max, c = c'·y_scale)
// with relative residuals (model − z_k) / dz_k and analytic derivatives.

class LawCost final : public ceres::CostFunction {
 public:
  LawCost(bool exponential, bool offset, std::vector<double> u, std::vector<double> z,
          std::vector<double> dz)
      : exponential_(exponential),
        offset_(offset),
        u_(std::move(u)),
        z_(std::move(z)),
        dz_(std::move(dz)) {
    set_num_residuals(static_cast<int>(u_.size()));
    mutable_parameter_block_sizes()->push_back(offset ? 3 : 2);
  }

  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* x = parameters[0];
    const double a = x[0];
    const double b = x[1];
    const double c = offset_ ? x[2] : 0.0;
    const int np = offset_ ? 3 : 2;
    for (std::size_t k = 0; k < u_.size(); ++k) {
      const double base = exponential_ ? std::exp(b * u_[k]) : std::pow(u_[k], b);
      const double inv = 1.0 / dz_[k];
      residuals[k] = (a * base + c - z_[k]) * inv;
      if (!std::isfinite(residuals[k])) return false;
      if (jacobians != nullptr && jacobians[0] != nullptr) {
        double* row = jacobians[0] + k * np;
        row[0] = base * inv;
        row[1] = a * base * (exponential_ ? u_[k] : std::log(u_[k])) * inv;
        if (offset_) row[2] = inv;
      }
    }
    return true;
  }

 private:
  bool exponential_;
  bool offset_;
  std::vector<double> u_;
  std::vector<double> z_;
  std::vector<double> dz_;
};

using Scaled = std::array<double, 3>;  // a', b', c' (c' = 0 without offset)

double LawBase(CurveKind kind, double b, double u) {
  return IsExponential(kind) ? std::exp(b * u) : std::pow(u, b);
}

double RateBound(const Options& options, CurveKind kind) {
  return IsExponential(kind) ? options.exponential_rate_bound : options.power_exponent_bound;
}

// For a fixed b the law is linear in a' (and c'): solve that by least squares (normal equations of
// at most 2 × 2; this is only a starting point for Ceres) and return the sum of squared relative
// residuals. Used to find a starting point over a grid of b.
double ProfileLinear(CurveKind kind, double b, const std::vector<double>& u,
                     const std::vector<double>& z, const std::vector<double>& dz, Scaled* x) {
  const bool offset = HasOffset(kind);
  // Columns f_k = base_k / dz_k and g_k = 1 / dz_k, right-hand side r_k = z_k / dz_k.
  double ff = 0, fg = 0, gg = 0, fr = 0, gr = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double f = LawBase(kind, b, u[k]) / dz[k];
    const double g = 1.0 / dz[k];
    const double r = z[k] / dz[k];
    ff += f * f;
    fg += f * g;
    gg += g * g;
    fr += f * r;
    gr += g * r;
  }
  if (!std::isfinite(ff) || !(ff > 0)) return kInf;
  double a = 0;
  double c = 0;
  if (offset) {
    const double det = ff * gg - fg * fg;
    if (!(det > 1e-12 * ff * gg)) return kInf;
    a = (fr * gg - gr * fg) / det;
    c = (gr * ff - fr * fg) / det;
  } else {
    a = fr / ff;
  }
  double cost = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double e = (a * LawBase(kind, b, u[k]) + c - z[k]) / dz[k];
    cost += e * e;
  }
  if (!std::isfinite(cost)) return kInf;
  *x = {a, b, c};
  return cost;
}

// Starting point: the best b of a grid (quarters for the power exponent, a geometric grid for the
// exponential rate), with the linear parameters solved exactly for it.
bool StartLaw(CurveKind kind, const std::vector<double>& u, const std::vector<double>& z,
              const std::vector<double>& dz, const Options& options, Scaled* x) {
  const double bound = RateBound(options, kind);
  std::vector<double> grid;
  if (IsExponential(kind)) {
    for (double r : {0.125, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0}) {
      if (r > bound) break;
      grid.push_back(-r);
      grid.push_back(r);
    }
  } else {
    for (int q = -16; q <= 16; ++q) {
      if (q == 0 || std::abs(q / 4.0) > bound) continue;
      grid.push_back(q / 4.0);
    }
  }
  double best = kInf;
  for (double b : grid) {
    Scaled candidate{};
    const double cost = ProfileLinear(kind, b, u, z, dz, &candidate);
    if (cost < best) {
      best = cost;
      *x = candidate;
    }
  }
  return std::isfinite(best);
}

// Fits a law on `rows`, starting from *start if given, else from the grid. Returns the scaled
// parameters in *x.
bool FitLawScaled(CurveKind kind, const Data& data, std::span<const int> rows,
                  const Options& options, const Scaled* start, Scaled* x) {
  const int np = HasOffset(kind) ? 3 : 2;
  if (static_cast<int>(rows.size()) < np) return false;
  std::vector<double> u, z, dz;
  for (int i : rows) {
    u.push_back(data.p[i] / data.p_max);
    z.push_back(data.y[i] / data.y_scale);
    dz.push_back(data.d[i] / data.y_scale);
  }
  Scaled params{};
  if (start != nullptr) {
    params = *start;
  } else if (!StartLaw(kind, u, z, dz, options, &params)) {
    return false;
  }
  const double bound = RateBound(options, kind);
  params[1] = std::clamp(params[1], -bound, bound);

  LawCost cost(IsExponential(kind), HasOffset(kind), u, z, dz);
  ceres::Problem::Options problem_options;
  problem_options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  problem.AddResidualBlock(&cost, nullptr, params.data());
  problem.SetParameterLowerBound(params.data(), 1, -bound);
  problem.SetParameterUpperBound(params.data(), 1, bound);

  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.minimizer_type = ceres::TRUST_REGION;
  solver.trust_region_strategy_type = ceres::LEVENBERG_MARQUARDT;
  solver.num_threads = 1;
  solver.max_num_iterations = 200;
  // Nearly degenerate problems (a·P^b + c with b near 0 on 3 points) can give a few invalid LM
  // steps before the damping grows enough; Ceres logs to stderr when it gives up on them, and a
  // library must not print, so let the damping do its work.
  solver.max_num_consecutive_invalid_steps = 100;
  solver.function_tolerance = 1e-16;
  solver.gradient_tolerance = 1e-16;
  solver.parameter_tolerance = 1e-14;
  solver.logging_type = ceres::SILENT;
  solver.minimizer_progress_to_stdout = false;
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  if (!summary.IsSolutionUsable()) return false;
  for (int k = 0; k < np; ++k) {
    if (!std::isfinite(params[k])) return false;
  }
  *x = params;
  return true;
}

Curve LawFromScaled(CurveKind kind, const Data& data, const Scaled& x) {
  Curve curve;
  curve.kind = kind;
  if (IsExponential(kind)) {
    curve.coefficients = {x[0] * data.y_scale, x[1] / data.p_max};
  } else {
    curve.coefficients = {x[0] * data.y_scale * std::pow(data.p_max, -x[1]), x[1]};
  }
  if (HasOffset(kind)) curve.coefficients.push_back(x[2] * data.y_scale);
  return curve;
}

Scaled ScaledFromLaw(const Curve& curve, const Data& data) {
  const auto& c = curve.coefficients;
  Scaled x{};
  if (IsExponential(curve.kind)) {
    x = {c[0] / data.y_scale, c[1] * data.p_max, 0.0};
  } else {
    x = {c[0] / data.y_scale * std::pow(data.p_max, c[1]), c[1], 0.0};
  }
  if (HasOffset(curve.kind)) x[2] = c[2] / data.y_scale;
  return x;
}

bool AllFinite(const Curve& curve) {
  return std::all_of(curve.coefficients.begin(), curve.coefficients.end(),
                     [](double v) { return std::isfinite(v); });
}

// ---------------------------------------------------------------------------------------------
// Block laws y = c·P^a·ceil(N/S)^k (or floor), N an integer >= 1, S = P^(1/d) the side of a
// d-dimensional process grid (S = P for d = 1).
//
// With z_i = y_i / P_i^a and the block b_i = ceil(N/S_i) of count i, z_i = c·b_i^k. Relative to a
// reference count r (the largest P with y > 0), b_i = b_r·ρ_i with ρ_i = (z_i / z_r)^(1/k).
// Count i confines N to ((b_i − 1)·S_i, b_i·S_i] (ceil) or [b_i·S_i, (b_i + 1)·S_i) (floor).
// These intervals can only meet when, for every pair i, j, b_r·(s_i − s_j) < S_i (ceil; S_j for
// floor) with s_i = ρ_i·S_i: that bounds b_r from above unless every s_i is the same (then the
// data is the smooth law c·N^k·P^(a−k/d), no quantization shows and the block law is not tried).
// A grid law (d > 1) is tried only when every count is a perfect d-th power (integer sides S_i):
// a code that decomposes on a square or cubic grid runs only there, and at other counts the real
// root is no grid the constraints could describe.
// Each b_r from 1 to the bound is tried: c = z_r / b_r^k, b_i = round(b_r·ρ_i), kept when
// c·P_i^a·b_i^k reproduces every y_i (relative 1e-10) and the intervals of N meet. The bound is
// a few times the true b_r for quantized data, so the scan is short; beyond
// Options::block_max_scan the form is skipped.

constexpr double kBlockExact = 1e-10;  // relative: a block law must reproduce the values

struct BlockSolution {
  Curve curve;  // with the N used for predictions
  double n_low = 0;
  double n_high = 0;
};

double IntPower(double x, int k) {
  double out = 1;
  for (int i = 0; i < k; ++i) out *= x;
  return out;
}

// Appends every (c, N interval) of the form (kind, a, k) that reproduces `rows` exactly, smallest
// b_r (largest c) first, until *out holds max_solutions.
void SolveBlock(CurveKind kind, int a, int k, int d, const Data& data, std::span<const int> rows,
                const Options& options, std::size_t max_solutions,
                std::vector<BlockSolution>* out) {
  const bool ceil = kind == CurveKind::kBlockCeil;
  int ref = -1;
  int nonzero = 0;
  std::vector<double> side(data.p.size(), 0.0);
  for (int i : rows) {
    const double p = data.p[i];
    if (p < 1 || p != std::floor(p) || !(data.y[i] >= 0)) return;
    if (!internal::IsPerfectPower(p, d)) return;
    side[i] = internal::GridSide(p, d);
    if (data.y[i] == 0) {
      if (ceil) return;  // a ceil block is >= 1 for N >= 1
      continue;
    }
    ++nonzero;
    if (ref < 0 || p > data.p[ref]) ref = i;
  }
  if (nonzero < 2) return;
  auto z = [&](int i) { return data.y[i] / internal::NormalFormTerm(a, 1, 0, data.p[i]); };
  const double z_ref = z(ref);
  std::vector<double> rho(data.p.size(), 0.0);
  for (int i : rows) {
    if (data.y[i] == 0) continue;
    const double ratio = z(i) / z_ref;
    rho[i] = k == 1   ? ratio
             : k == 2 ? std::sqrt(ratio)
             : k == 3 ? std::cbrt(ratio)
                      : std::pow(ratio, 1.0 / k);
  }
  double bound = kInf;
  for (int i : rows) {
    for (int j : rows) {
      if (data.y[i] == 0 || data.y[j] == 0) continue;
      const double si = rho[i] * side[i];
      const double sj = rho[j] * side[j];
      if (si - sj > 1e-12 * si) bound = std::min(bound, (ceil ? side[i] : side[j]) / (si - sj));
    }
  }
  if (!std::isfinite(bound)) return;
  const double scan = std::floor(bound * (1 + 1e-9)) + 1;
  if (scan > options.block_max_scan) return;
  for (int b = 1; b <= static_cast<int>(scan) && out->size() < max_solutions; ++b) {
    const double c_raw = z_ref / IntPower(b, k);
    bool exact = false;
    double n_low = 1;
    double n_high = kInf;
    // Tries c; on success sets the interval of N.
    auto reproduces = [&](double c) {
      n_low = 1;
      n_high = kInf;
      for (int i : rows) {
        const double bi = data.y[i] == 0 ? 0.0 : std::round(b * rho[i]);
        if (data.y[i] > 0 && bi < 1) return false;
        const double v = c * internal::NormalFormTerm(a, 1, 0, data.p[i]) * IntPower(bi, k);
        if (!(std::abs(v - data.y[i]) <= kBlockExact * data.y[i])) return false;
        const double s = side[i];
        if (ceil) {
          n_low = std::max(n_low, (bi - 1) * s + 1);
          n_high = std::min(n_high, bi * s);
        } else {
          n_low = std::max(n_low, bi * s);
          n_high = std::min(n_high, (bi + 1) * s - 1);
        }
        if (n_low > n_high) return false;
      }
      return true;
    };
    // An integer c (8 bytes a double) when it reproduces the values as well.
    const double c_int = std::round(c_raw);
    double c = c_raw;
    if (c_int >= 1 && std::abs(c_int - c_raw) <= 1e-9 * c_raw && reproduces(c_int)) {
      c = c_int;
      exact = true;
    } else {
      exact = reproduces(c_raw);
    }
    if (!exact) continue;
    // The N some traced count divides: the largest consistent N for ceil, the smallest for
    // floor (the interval of N ends where N / P_i is an integer).
    const double n_used = ceil ? n_high : n_low;
    Curve curve{kind, a, 1, 0, {c, n_used}, k, d};
    out->push_back({std::move(curve), n_low, n_high});
  }
}

// The solution from `begin` on with the middle N (the lower median).
int MiddleByN(const std::vector<BlockSolution>& solutions, std::size_t begin) {
  std::vector<int> order(solutions.size() - begin);
  std::iota(order.begin(), order.end(), static_cast<int>(begin));
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return solutions[x].curve.coefficients[1] < solutions[y].curve.coefficients[1];
  });
  return order[(order.size() - 1) / 2];
}

// Every block form that reproduces `rows` exactly, in a fixed order: d in
// Options::block_grid_dimensions order, then k ascending, a in Options::block_power_exponents
// order, ceil before floor; at most 16 solutions. Only the first d that has any is kept: a grid
// side (sqrt(P), cbrt(P)) is the less simple hypothesis and is claimed only when no block of P
// itself reproduces the values. (Padded blocks of P often have a grid twin at square counts:
// 8·P·ceil(1440/P)^2 and 800·ceil(144/sqrt(P))^2 agree at 4..49; the 1-D law and its interval
// stay what they were without grid laws.) *chosen is the
// one that predicts: among the solutions of the first form that has any, the middle one by N
// (the lower median). Several (c, N) of one form reproduce the values when the blocks of every
// traced count share a factor or N / P is close enough to an integer (8·P·ceil(1440/P)^2 and
// 32·P·ceil(720/P)^2 agree at 4, 9, 16, 25 and 36); nothing in the data tells them apart, and
// the middle one keeps the prediction inside their spread, which the interval holds.
std::vector<BlockSolution> FindBlockLaws(const Data& data, std::span<const int> rows,
                                         const Options& options, int* chosen) {
  constexpr std::size_t kMaxSolutions = 16;
  std::vector<BlockSolution> out;
  *chosen = -1;
  for (int d : options.block_grid_dimensions) {
    for (int k = 1; k <= options.block_max_exponent; ++k) {
      for (int a : options.block_power_exponents) {
        for (CurveKind kind : {CurveKind::kBlockCeil, CurveKind::kBlockFloor}) {
          // A floor block reaches 0 once P > N: not a law for a positive quantity.
          if (kind == CurveKind::kBlockFloor && options.positive) continue;
          const std::size_t begin = out.size();
          SolveBlock(kind, a, k, d, data, rows, options, kMaxSolutions, &out);
          if (*chosen < 0 && out.size() > begin) *chosen = MiddleByN(out, begin);
        }
      }
    }
    if (!out.empty()) break;
  }
  return out;
}

// One fit of `form` on `rows`. For free laws `start` (a curve of the same kind) is the warm start.
bool FitOn(const Curve& form, const Data& data, std::span<const int> rows, const Options& options,
           const Curve* start, Curve* out) {
  if (IsLinear(form.kind)) return FitLinear(form, data, rows, out);
  if (IsBlockKind(form.kind)) {
    std::vector<BlockSolution> solutions;
    SolveBlock(form.kind, form.exponent_numerator, form.block_exponent, form.grid_dimension, data,
               rows, options, 16, &solutions);
    if (solutions.empty()) return false;
    *out = std::move(solutions[MiddleByN(solutions, 0)].curve);
    return true;
  }
  Scaled x{};
  Scaled warm{};
  if (start != nullptr) warm = ScaledFromLaw(*start, data);
  if (!FitLawScaled(form.kind, data, rows, options, start != nullptr ? &warm : nullptr, &x)) {
    return false;
  }
  Curve curve = LawFromScaled(form.kind, data, x);
  if (!AllFinite(curve)) return false;
  *out = std::move(curve);
  return true;
}

double RelativeError(const Curve& curve, const Data& data, int i) {
  const double predicted = curve.Evaluate(data.p[i]);
  if (!std::isfinite(predicted)) return kInf;
  return (predicted - data.y[i]) / data.d[i];
}

double FitError(const Curve& curve, const Data& data) {
  double sum = 0;
  for (std::size_t i = 0; i < data.p.size(); ++i) {
    const double e = RelativeError(curve, data, static_cast<int>(i));
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(data.p.size()));
}

// Leave-one-out: refit without each point, predict it. Returns +inf if any refit is not
// determined. The refitted curves go to *jackknife when it is not null.
double LooError(const Curve& full, const Data& data, const Options& options,
                std::vector<Curve>* jackknife) {
  const int n = static_cast<int>(data.p.size());
  std::vector<int> rows;
  rows.reserve(n);
  double sum = 0;
  for (int left_out = 0; left_out < n; ++left_out) {
    rows.clear();
    for (int i = 0; i < n; ++i) {
      if (i != left_out) rows.push_back(i);
    }
    Curve refit;
    if (!FitOn(full, data, rows, options, &full, &refit)) return kInf;
    const double e = RelativeError(refit, data, left_out);
    if (!std::isfinite(e)) return kInf;
    sum += e * e;
    if (jackknife != nullptr) jackknife->push_back(std::move(refit));
  }
  return std::sqrt(sum / n);
}

// Grows faster than P far out (Options::steep_needs_exact).
bool IsSteep(const Curve& c) {
  switch (c.kind) {
    case CurveKind::kSingleTerm:
    case CurveKind::kNormalForm:
      return c.PowerExponent() > 1 || (c.PowerExponent() == 1 && c.log_exponent > 0);
    case CurveKind::kPowerLaw:
      return c.coefficients.size() > 1 && c.coefficients[1] > 1;
    case CurveKind::kPowerLawOffset:
      return c.coefficients.size() > 1 && c.coefficients[1] > 1;
    case CurveKind::kExponential:
    case CurveKind::kExponentialOffset:
      return c.coefficients.size() > 1 && c.coefficients[1] > 0;
    case CurveKind::kConstant:
      return false;
    case CurveKind::kBlockCeil:
    case CurveKind::kBlockFloor:
      return c.exponent_numerator > 1;  // c·P^a once P > N
  }
  return false;
}

// Simplicity order for ties: constant < single term < normal form < power law < exponential,
// then the smaller |i|, then the smaller j.
std::tuple<int, double, int> SimplicityKey(const Curve& c) {
  int kind_rank = 0;
  switch (c.kind) {
    case CurveKind::kConstant:
      kind_rank = 0;
      break;
    case CurveKind::kSingleTerm:
      kind_rank = 1;
      break;
    case CurveKind::kNormalForm:
      kind_rank = 2;
      break;
    case CurveKind::kPowerLaw:
      kind_rank = 3;
      break;
    case CurveKind::kPowerLawOffset:
      kind_rank = 4;
      break;
    case CurveKind::kExponential:
      kind_rank = 5;
      break;
    case CurveKind::kExponentialOffset:
      kind_rank = 6;
      break;
    case CurveKind::kBlockCeil:
      kind_rank = 7;
      break;
    case CurveKind::kBlockFloor:
      kind_rank = 8;
      break;
  }
  return {kind_rank, std::abs(c.PowerExponent()), c.log_exponent};
}

std::string FormatCount(double p) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", p);
  return buffer;
}

std::string ListCounts(std::span<const Point> points) {
  std::string out;
  for (const auto& point : points) {
    if (!out.empty()) out += ", ";
    out += FormatCount(point.p);
  }
  return out;
}

std::vector<Point> CheckedSortedPoints(std::span<const Point> points, std::string_view quantity) {
  const std::string what(quantity);
  if (points.size() < 3) {
    throw UserError("at least 3 process counts are needed to fit " + what + ", got " +
                    std::to_string(points.size()) +
                    (points.empty() ? std::string() : " (" + ListCounts(points) + ")") +
                    "; trace the application at more counts");
  }
  for (const auto& point : points) {
    if (!std::isfinite(point.p) || point.p <= 0) {
      throw UserError("cannot fit " + what + ": process count " + FormatCount(point.p) +
                      " is not a positive number");
    }
    if (!std::isfinite(point.y)) {
      throw UserError("cannot fit " + what + ": its value at P = " + FormatCount(point.p) + " is " +
                      FormatCount(point.y) + " (a finite number is needed)");
    }
  }
  std::vector<Point> sorted(points.begin(), points.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Point& a, const Point& b) { return a.p < b.p; });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].p == sorted[i - 1].p) {
      throw UserError("cannot fit " + what + ": process count " + FormatCount(sorted[i].p) +
                      " appears twice; give one value per count (e.g. the mean of repeated runs)");
    }
  }
  return sorted;
}

// Rounds coefficients that are integers up to rounding noise (4·P^(1/2) − 4 rather than
// 3.9999999999999996·P^(1/2) − 4.000000000000001), when that does not make the fit worse.
void SnapIntegerCoefficients(const Data& data, Curve* curve) {
  Curve snapped = *curve;
  bool changed = false;
  for (auto& c : snapped.coefficients) {
    const double r = std::round(c);
    if (r != c && std::abs(r - c) <= 1e-9 * std::max(1.0, std::abs(c))) {
      c = r;
      changed = true;
    }
  }
  if (changed && FitError(snapped, data) <= FitError(*curve, data) + 1e-13) *curve = snapped;
}

// splitmix64: a tiny fixed generator, so the bootstrap gives the same draws on every platform.
std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<std::array<int, 2>> Options::DefaultExponents() {
  // Quarters and thirds from −1 to 3, as exact fractions in increasing order.
  std::vector<std::array<int, 2>> out;
  for (int q = -4; q <= 12; ++q) out.push_back({q, 4});
  for (int t = -3; t <= 9; ++t) {
    if (t % 3 != 0) out.push_back({t, 3});
  }
  for (auto& e : out) {
    const int g = std::gcd(e[0], e[1]);
    if (g > 1) e = {e[0] / g, e[1] / g};
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return static_cast<double>(a[0]) / a[1] < static_cast<double>(b[0]) / b[1];
  });
  return out;
}

namespace {

// Options::no_turn_beyond: the direction at the largest training count holds up to 2^20
// times it (steps that change the value by less than 1e-9 of it count as flat). `quotient`:
// of the curve divided by P (Options::turn_of_quotient).
bool NoTurnBeyond(const Curve& curve, double p_max, bool quotient) {
  const auto value = [&](double p) { return quotient ? curve.Evaluate(p) / p : curve.Evaluate(p); };
  double prev = value(p_max);
  const double before = value(p_max / 1.25);
  const double tolerance = 1e-9 * std::max(std::fabs(prev), std::fabs(before));
  int direction = prev > before + tolerance ? 1 : (prev < before - tolerance ? -1 : 0);
  double p = p_max;
  for (int k = 0; k < 20; ++k) {
    p *= 2;
    const double v = value(p);
    const double step_tolerance = 1e-9 * std::max(std::fabs(prev), std::fabs(v));
    const int step = v > prev + step_tolerance ? 1 : (v < prev - step_tolerance ? -1 : 0);
    if (step != 0 && direction != 0 && step != direction) return false;
    if (direction == 0) direction = step;
    prev = v;
  }
  return true;
}

// True when the curve stays above zero from `p_max` on (checked at p_max x 2^k up to ~10^15
// x p_max: every term is monotone in P far out, so a sign change shows up on this grid).
bool PositiveBeyond(const Curve& curve, double p_max) {
  double p = p_max;
  for (int k = 0; k <= 50; ++k, p *= 2) {
    const double v = curve.Evaluate(p);
    if (!(v > 0)) return false;
  }
  return true;
}

// Options::exact_tail_min_counts: how many of the largest counts share one value (within
// occam_absolute_tolerance, relative) when they are at least that many, span a factor of
// exact_tail_min_span in P and leave a smaller count that differs; else 0.
int ExactTail(std::span<const Point> sorted, const Options& options) {
  if (options.exact_tail_min_counts <= 0) return 0;
  const double last = sorted.back().y;
  const auto same = [&](double y) {
    return std::fabs(y - last) <= options.occam_absolute_tolerance * std::fabs(last);
  };
  int tail = 0;
  while (tail < static_cast<int>(sorted.size()) && same(sorted[sorted.size() - 1 - tail].y)) {
    ++tail;
  }
  if (tail == static_cast<int>(sorted.size()) || tail < options.exact_tail_min_counts) return 0;
  const double first_p = sorted[sorted.size() - tail].p;
  return sorted.back().p >= options.exact_tail_min_span * first_p ? tail : 0;
}

}  // namespace

bool Options::IsValid(std::string* error) const {
  auto fail = [&](const std::string& message) {
    if (error != nullptr) *error = message;
    return false;
  };
  for (const auto& e : exponents) {
    if (e[1] <= 0) {
      return fail("exponents: denominator of " + std::to_string(e[0]) + "/" + std::to_string(e[1]) +
                  " must be positive");
    }
  }
  if (max_log_exponent < 0 || max_log_exponent > 8) {
    return fail("max_log_exponent must be in 0..8, got " + std::to_string(max_log_exponent));
  }
  if (!use_constant && !use_single_terms && !use_normal_forms && !use_power_laws &&
      !use_exponentials) {
    return fail("no candidate model family is enabled");
  }
  if (block_min_counts < 3) {
    return fail("block_min_counts must be at least 3, got " + std::to_string(block_min_counts));
  }
  if (block_max_exponent < 1 || block_max_exponent > 8) {
    return fail("block_max_exponent must be in 1..8, got " + std::to_string(block_max_exponent));
  }
  for (int a : block_power_exponents) {
    if (a < -8 || a > 8) {
      return fail("block_power_exponents must be in -8..8, got " + std::to_string(a));
    }
  }
  if (block_max_scan < 1) return fail("block_max_scan must be positive");
  if (!(block_large_value >= 0)) return fail("block_large_value must be >= 0");
  for (int d : block_grid_dimensions) {
    if (d < 1 || d > 3) {
      return fail("block_grid_dimensions must be in 1..3, got " + std::to_string(d));
    }
  }
  if (max_parameters < 1 || max_parameters > 3) {
    return fail("max_parameters must be in 1..3, got " + std::to_string(max_parameters));
  }
  if (!(occam_factor >= 1)) return fail("occam_factor must be >= 1");
  if (!(occam_absolute_tolerance >= 0)) return fail("occam_absolute_tolerance must be >= 0");
  if (exact_tail_min_counts != 0 && exact_tail_min_counts < 3) {
    return fail("exact_tail_min_counts must be 0 (off) or at least 3, got " +
                std::to_string(exact_tail_min_counts));
  }
  if (!(exact_tail_min_span >= 1)) return fail("exact_tail_min_span must be >= 1");
  if (!(level_off_share >= 0 && level_off_share <= 1)) {
    return fail("level_off_share must be in [0, 1]");
  }
  if (!(interval_model_factor >= 1)) return fail("interval_model_factor must be >= 1");
  if (interval_max_competitors < 0) return fail("interval_max_competitors must be >= 0");
  if (bootstrap_samples < 10) {
    return fail("bootstrap_samples must be at least 10, got " + std::to_string(bootstrap_samples));
  }
  if (!(interval_coverage > 0 && interval_coverage < 1)) {
    return fail("interval_coverage must be in (0, 1)");
  }
  if (!(power_exponent_bound > 0) || !(exponential_rate_bound > 0)) {
    return fail("free-law bounds must be positive");
  }
  return true;
}

bool FitCurve(const Curve& form, std::span<const Point> points, const Options& options,
              Curve* out) {
  if (points.empty()) return false;
  for (const auto& point : points) {
    if (!std::isfinite(point.p) || point.p <= 0 || !std::isfinite(point.y)) return false;
  }
  const Data data = MakeData(points);
  std::vector<int> rows(points.size());
  std::iota(rows.begin(), rows.end(), 0);
  const bool warm = !IsLinear(form.kind) &&
                    static_cast<int>(form.coefficients.size()) == ParameterCount(form.kind) &&
                    AllFinite(form);
  return FitOn(form, data, rows, options, warm ? &form : nullptr, out);
}

FittedModel Fit(std::span<const Point> points, const Options& options, std::string_view quantity,
                FitSummary* summary) {
  std::string invalid;
  if (!options.IsValid(&invalid)) {
    throw UserError("invalid regression options for " + std::string(quantity) + ": " + invalid);
  }
  const std::vector<Point> sorted = CheckedSortedPoints(points, quantity);
  const Data data = MakeData(sorted);
  const int n = static_cast<int>(sorted.size());

  FittedModel model;
  model.training = sorted;
  model.interval_method = options.interval_method;
  model.integer_valued = std::all_of(sorted.begin(), sorted.end(), [](const Point& point) {
    return point.y == std::round(point.y);
  });
  if (summary != nullptr) *summary = FitSummary{};

  // Identical values: the exact constant (message counts, weights that do not change with P).
  if (std::all_of(sorted.begin(), sorted.end(),
                  [&](const Point& point) { return point.y == sorted.front().y; })) {
    model.curve = Curve{CurveKind::kConstant, 0, 1, 0, {sorted.front().y}};
    if (summary != nullptr) summary->occam_rule = "all values identical: exact constant";
    return model;
  }
  // Identical values at the largest counts over a range of P (Options::exact_tail_min_counts):
  // the exact constant from there on, the smaller counts left as what they are.
  if (const int tail = ExactTail(sorted, options); tail > 0) {
    model.curve = Curve{CurveKind::kConstant, 0, 1, 0, {sorted.back().y}};
    model.fit_error = FitError(model.curve, data);
    if (summary != nullptr) {
      summary->occam_rule = "the " + std::to_string(tail) +
                            " largest counts have identical values: exact constant from P = " +
                            FormatCount(sorted[n - tail].p) + " on";
    }
    return model;
  }

  // 1. Candidate forms, in search order.
  const int max_parameters = std::min(options.max_parameters, n - 1);
  std::vector<Curve> forms;
  auto add = [&](CurveKind kind, int numerator, int denominator, int log_exponent) {
    if (ParameterCount(kind) <= max_parameters) {
      forms.push_back(Curve{kind, numerator, denominator, log_exponent, {}});
    }
  };
  if (options.use_constant) add(CurveKind::kConstant, 0, 1, 0);
  for (const CurveKind kind : {CurveKind::kSingleTerm, CurveKind::kNormalForm}) {
    if (kind == CurveKind::kSingleTerm ? !options.use_single_terms : !options.use_normal_forms) {
      continue;
    }
    for (int j = 0; j <= options.max_log_exponent; ++j) {
      for (const auto& e : options.exponents) {
        if (e[0] == 0 && j == 0) continue;  // that is the constant
        add(kind, e[0], e[1], j);
      }
    }
  }
  if (options.use_power_laws) {
    add(CurveKind::kPowerLaw, 0, 1, 0);
    add(CurveKind::kPowerLawOffset, 0, 1, 0);
  }
  if (options.use_exponentials) {
    add(CurveKind::kExponential, 0, 1, 0);
    add(CurveKind::kExponentialOffset, 0, 1, 0);
  }

  // 2.-3. Fit the forms to all points, then leave-one-out, most promising first. The LOO error of
  // a least-squares fit is never below its fit error (PRESS residuals e_k / (1 − h_kk) ≥ e_k), so a
  // candidate whose penalised fit error already exceeds what could still be selected or join the
  // interval is pruned without its n refits. The linear forms go first: a free law scores at least
  // occam_absolute_tolerance · its penalty (LOO error ≥ 0), so when a linear form already fits
  // exactly (integer counts, exact formulas) the Ceres fits are skipped altogether.
  auto penalty = [&](const Curve& c) {
    return std::pow(options.occam_factor, ParameterCount(c.kind) - 1);
  };
  // Errors below occam_absolute_tolerance count as exact (0): exact forms then tie on the
  // parameter penalty alone and the simpler one wins.
  auto penalised = [&](double error, const Curve& c) {
    const double counted = error < options.occam_absolute_tolerance ? 0.0 : error;
    return (counted + options.occam_absolute_tolerance) * penalty(c);
  };
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  const bool positive = options.positive && std::all_of(sorted.begin(), sorted.end(),
                                                        [](const Point& q) { return q.y > 0; });
  const bool positive_unless_exact =
      options.positive_unless_exact &&
      std::all_of(sorted.begin(), sorted.end(), [](const Point& q) { return q.y > 0; });
  std::vector<CandidateScore> candidates;
  double best_score = kInf;
  auto score_forms = [&](bool free_laws) {
    const std::size_t begin = candidates.size();
    for (const auto& form : forms) {
      if (IsLinear(form.kind) == free_laws) continue;
      Curve curve;
      if (!FitOn(form, data, all, options, nullptr, &curve)) continue;
      const double fit_error = FitError(curve, data);
      if (!std::isfinite(fit_error)) continue;
      if ((positive ||
           (positive_unless_exact && !(fit_error < options.occam_absolute_tolerance))) &&
          !PositiveBeyond(curve, sorted.back().p)) {
        continue;
      }
      if (options.no_turn_beyond &&
          !NoTurnBeyond(curve, sorted.back().p, options.turn_of_quotient)) {
        continue;
      }
      candidates.push_back({std::move(curve), kInf, fit_error, kInf, true});
    }
    std::vector<int> order(candidates.size() - begin);
    std::iota(order.begin(), order.end(), static_cast<int>(begin));
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return penalised(candidates[a].fit_error, candidates[a].curve) <
             penalised(candidates[b].fit_error, candidates[b].curve);
    });
    for (int index : order) {
      auto& candidate = candidates[index];
      if (penalised(candidate.fit_error, candidate.curve) >=
          best_score * options.interval_model_factor) {
        continue;
      }
      candidate.loo_error = LooError(candidate.curve, data, options, nullptr);
      candidate.pruned = false;
      candidate.score = penalised(candidate.loo_error, candidate.curve);
      best_score = std::min(best_score, candidate.score);
    }
  };
  score_forms(/*free_laws=*/false);
  const bool laws_can_compete = std::any_of(forms.begin(), forms.end(), [&](const Curve& form) {
    return !IsLinear(form.kind) && penalised(0, form) < best_score * options.interval_model_factor;
  });
  if (laws_can_compete) score_forms(/*free_laws=*/true);

  // Steep laws that are not exact leave the race (Options::steep_needs_exact). Without them
  // the best score rises: candidates pruned against the old one are scored after all, and
  // the free laws join if they were left out and can now compete.
  if (options.steep_needs_exact) {
    auto drop_steep = [&]() {
      best_score = kInf;
      for (auto& c : candidates) {
        if (IsSteep(c.curve) && !(c.loo_error < options.occam_absolute_tolerance)) {
          c.pruned = true;
          c.score = kInf;
        } else if (!c.pruned) {
          best_score = std::min(best_score, c.score);
        }
      }
      for (auto& c : candidates) {
        if (!c.pruned || IsSteep(c.curve) || std::isfinite(c.loo_error)) continue;
        if (penalised(c.fit_error, c.curve) >= best_score * options.interval_model_factor) continue;
        c.loo_error = LooError(c.curve, data, options, nullptr);
        c.pruned = false;
        c.score = penalised(c.loo_error, c.curve);
        best_score = std::min(best_score, c.score);
      }
    };
    drop_steep();
    const bool laws_now =
        !laws_can_compete && std::any_of(forms.begin(), forms.end(), [&](const Curve& f) {
          return !IsLinear(f.kind) && penalised(0, f) < best_score * options.interval_model_factor;
        });
    if (laws_now) {
      score_forms(/*free_laws=*/true);
      drop_steep();
    }
  }

  // Block laws (fit.h, rule 5), before the Occam rule: integer values that no candidate reproduces
  // exactly get the block law that does, if any. Its LOO error is not computed: with a count left
  // out N may no longer be determined (the one count N is not a multiple of pins it down).
  const bool smooth_exact = std::any_of(candidates.begin(), candidates.end(), [&](const auto& c) {
    return !c.pruned && c.loo_error < options.occam_absolute_tolerance;
  });
  // With one count fewer than block_min_counts, only values of at least block_large_value:
  // a two-parameter law reproduces large integers exactly by chance almost never (regression/
  // README.md, rule 5).
  const bool enough_counts =
      n >= options.block_min_counts || (n + 1 == options.block_min_counts &&
                                        std::all_of(data.y.begin(), data.y.end(), [&](double y) {
                                          return y >= options.block_large_value;
                                        }));
  if (options.use_block_laws && model.integer_valued && enough_counts && !smooth_exact) {
    int chosen = -1;
    std::vector<BlockSolution> solutions = FindBlockLaws(data, all, options, &chosen);
    if (!solutions.empty()) {
      model.curve = solutions[chosen].curve;
      model.loo_error = 0;
      model.fit_error = FitError(model.curve, data);
      model.interval_method = IntervalMethod::kLooEnvelope;
      model.interval_margin = 0;
      for (const auto& solution : solutions) {
        Curve low = solution.curve;
        Curve high = solution.curve;
        low.coefficients[1] = solution.n_low;
        high.coefficients[1] = solution.n_high;
        model.interval_curves.push_back(std::move(low));
        model.interval_curves.push_back(std::move(high));
      }
      if (summary != nullptr) {
        candidates.push_back({model.curve, 0.0, model.fit_error, penalised(0, model.curve), false});
        summary->candidates = candidates;
        summary->selected = static_cast<int>(candidates.size()) - 1;
        summary->occam_rule =
            "selected: a block law that reproduces every count exactly (" +
            std::to_string(solutions.size()) +
            " exact (c, N) ranges, the middle one predicts); no smooth candidate does";
      }
      return model;
    }
  }

  // 4. Occam rule: lowest penalised LOO error; exact ties to fewer parameters, then simpler forms.
  int selected = -1;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    const auto& c = candidates[i];
    if (c.pruned || penalised(c.loo_error, c.curve) > best_score * (1 + 1e-6)) continue;
    if (selected < 0) {
      selected = i;
      continue;
    }
    const auto& s = candidates[selected];
    const auto key =
        std::make_tuple(ParameterCount(c.curve.kind), SimplicityKey(c.curve), c.loo_error);
    const auto best_key =
        std::make_tuple(ParameterCount(s.curve.kind), SimplicityKey(s.curve), s.loo_error);
    if (key < best_key) selected = i;
  }
  if (selected < 0) {
    // Only possible when no LOO refit was determined at all; cannot happen with n >= 3 and the
    // constant enabled, but say so plainly if the options removed every usable family.
    throw UserError("cannot fit " + std::string(quantity) + " at counts " + ListCounts(sorted) +
                    ": no candidate model could be fitted with one count left out");
  }
  // A falling law that keeps falling gives way to one that levels off (Options::
  // level_off_share), its left-out counts predicted better (its LOO error computed here if
  // its fit error pruned it).
  bool levelled = false;
  if (options.level_off_share > 0 && FallsToZero(candidates[selected].curve)) {
    const double p_max = sorted.back().p;
    int level = -1;
    for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
      auto& c = candidates[i];
      const std::optional<double> at = FallingLevel(c.curve);
      if (!at || !(*at >= options.level_off_share * c.curve.Evaluate(p_max))) continue;
      if (!std::isfinite(c.loo_error)) {
        c.loo_error = LooError(c.curve, data, options, nullptr);
        c.score = penalised(c.loo_error, c.curve);
        c.pruned = !std::isfinite(c.loo_error);
      }
      if (c.pruned || !(c.loo_error < candidates[selected].loo_error)) continue;
      if (level < 0 || c.loo_error < candidates[level].loo_error) level = i;
    }
    if (level >= 0) {
      selected = level;
      levelled = true;
    }
  }
  const CandidateScore& chosen = candidates[selected];
  model.curve = chosen.curve;
  SnapIntegerCoefficients(data, &model.curve);
  model.loo_error = chosen.loo_error;
  model.fit_error = FitError(model.curve, data);

  // 6. Interval. Competitors: other candidates whose penalised score is within
  // interval_model_factor of the selected one (model-selection uncertainty), best first.
  std::vector<int> competitors;
  for (int i = 0; i < static_cast<int>(candidates.size()); ++i) {
    if (i == selected || candidates[i].pruned || !std::isfinite(candidates[i].loo_error)) continue;
    if (candidates[i].score < best_score * options.interval_model_factor) competitors.push_back(i);
  }
  std::stable_sort(competitors.begin(), competitors.end(),
                   [&](int a, int b) { return candidates[a].score < candidates[b].score; });
  if (static_cast<int>(competitors.size()) > options.interval_max_competitors) {
    competitors.resize(options.interval_max_competitors);
  }
  if (options.interval_method == IntervalMethod::kLooEnvelope) {
    LooError(chosen.curve, data, options, &model.interval_curves);
    for (int i : competitors) model.interval_curves.push_back(candidates[i].curve);
    model.interval_margin = model.loo_error;
  } else {
    // Residual bootstrap with re-selection among the finalists (the selected form and its
    // competitors): each resample is refitted with every finalist and the lowest penalised fit
    // error wins, so the spread holds both noise and model-selection uncertainty.
    std::vector<const Curve*> finalists = {&chosen.curve};
    for (int i : competitors) finalists.push_back(&candidates[i].curve);
    const int k = ParameterCount(chosen.curve.kind);
    const double inflate = std::sqrt(static_cast<double>(n) / std::max(1, n - k));
    std::vector<double> fitted(n), residual(n);
    for (int i = 0; i < n; ++i) {
      fitted[i] = chosen.curve.Evaluate(data.p[i]);
      residual[i] = inflate * (data.y[i] - fitted[i]) / data.d[i];
    }
    std::uint64_t state = options.bootstrap_seed;
    std::vector<Point> resampled(n);
    for (int s = 0; s < options.bootstrap_samples; ++s) {
      for (int i = 0; i < n; ++i) {
        const auto draw = static_cast<int>(SplitMix64(state) % static_cast<std::uint64_t>(n));
        resampled[i] = {data.p[i], fitted[i] + data.d[i] * residual[draw]};
      }
      const Data resampled_data = MakeData(resampled);
      Curve best;
      double best_resampled = kInf;
      for (const Curve* finalist : finalists) {
        Curve refit;
        if (!FitOn(*finalist, resampled_data, all, options,
                   IsLinear(finalist->kind) ? nullptr : finalist, &refit)) {
          continue;
        }
        const double score = penalised(FitError(refit, resampled_data), refit);
        if (score < best_resampled) {
          best_resampled = score;
          best = std::move(refit);
        }
      }
      if (std::isfinite(best_resampled)) model.interval_curves.push_back(std::move(best));
    }
    model.interval_quantile = (1 - options.interval_coverage) / 2;
  }

  if (summary != nullptr) {
    summary->candidates = candidates;
    summary->selected = selected;
    char buffer[256];
    std::snprintf(
        buffer, sizeof buffer,
        "selected: lowest (LOO error + %.1e) x %.3g^(parameters - 1) = %.4g%% among %d "
        "candidates (%d pruned by their fit error)",
        options.occam_absolute_tolerance, options.occam_factor, 100 * best_score,
        static_cast<int>(candidates.size()),
        static_cast<int>(std::count_if(candidates.begin(), candidates.end(),
                                       [](const CandidateScore& c) { return c.pruned; })));
    summary->occam_rule = buffer;
    if (levelled) {
      summary->occam_rule +=
          "; then a law that levels off, which predicts the left-out counts better, over one "
          "that keeps falling (level_off_share)";
    }
  }
  return model;
}

std::string FitSummary::FullReport() const {
  std::vector<int> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return candidates[a].score < candidates[b].score; });
  std::string out = occam_rule + "\n";
  for (int i : order) {
    const auto& c = candidates[i];
    char buffer[96];
    if (c.pruned) {
      std::snprintf(buffer, sizeof buffer, "  %d params  fit %9.4g%%  (pruned)                    ",
                    ParameterCount(c.curve.kind), 100 * c.fit_error);
    } else {
      std::snprintf(buffer, sizeof buffer, "  %d params  fit %9.4g%%  LOO %9.4g%%  score %9.4g%%  ",
                    ParameterCount(c.curve.kind), 100 * c.fit_error, 100 * c.loo_error,
                    100 * c.score);
    }
    out += i == selected ? '*' : ' ';
    out += buffer;
    out += c.curve.Formula();
    out += '\n';
  }
  return out;
}

}  // namespace pas2p::regression
