// Least-squares L/B fits for `pas2p characterize` (see machine_fit.h).
#include "pas2p/simulator/machine_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace pas2p::sim {

double LinkFit::Predict(std::uint64_t bytes) const {
  return latency_s + (std::isinf(bandwidth_Bps) ? 0.0 : static_cast<double>(bytes) / bandwidth_Bps);
}

namespace {

void Score(std::span<const PingPongPoint> points, LinkFit* fit) {
  fit->points = points.size();
  fit->cost = 0.0;
  fit->max_relative_residual = 0.0;
  for (const auto& p : points) {
    const double r = (fit->Predict(p.bytes) - p.time_s) / p.time_s;
    fit->cost += r * r;
    fit->max_relative_residual = std::max(fit->max_relative_residual, std::abs(r));
  }
  fit->rms_relative_residual = std::sqrt(fit->cost / static_cast<double>(points.size()));
}

}  // namespace

LinkFit FitLink(std::span<const PingPongPoint> points) {
  if (points.size() < 2) throw std::invalid_argument("FitLink: need at least 2 points");
  for (const auto& p : points)
    if (!(p.time_s > 0.0) || !std::isfinite(p.time_s))
      throw std::invalid_argument("FitLink: times must be positive and finite");
  const auto n = static_cast<Eigen::Index>(points.size());
  // Rows scaled by 1/t: minimise sum(((L + S g - t) / t)^2) over (L, g = 1/B).
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = points[static_cast<std::size_t>(i)];
    a(i, 0) = 1.0 / p.time_s;
    a(i, 1) = static_cast<double>(p.bytes) / p.time_s;
  }
  // Scale the columns so that QR sees comparable magnitudes (sizes reach 2^22).
  const double s0 = a.col(0).norm(), s1 = std::max(a.col(1).norm(), 1e-300);
  a.col(0) /= s0;
  a.col(1) /= s1;
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(b);
  double latency = x(0) / s0, inv_bw = x(1) / s1;
  if (latency < 0.0) {  // physically meaningless: refit through the origin
    latency = 0.0;
    const Eigen::VectorXd col = a.col(1);
    inv_bw = col.dot(b) / col.squaredNorm() / s1;
  }
  // No size dependence (a slope below rounding noise at the largest size counts as none):
  // latency only, the weighted mean of the times.
  std::uint64_t max_bytes = 0;
  for (const auto& p : points) max_bytes = std::max(max_bytes, p.bytes);
  if (inv_bw * static_cast<double>(max_bytes) <= 1e-12 * std::abs(latency)) {
    inv_bw = 0.0;
    const Eigen::VectorXd col = a.col(0);
    latency = col.dot(b) / col.squaredNorm() / s0;
  }
  LinkFit fit;
  fit.latency_s = latency;
  fit.bandwidth_Bps = inv_bw > 0.0 ? 1.0 / inv_bw : std::numeric_limits<double>::infinity();
  Score(points, &fit);
  return fit;
}

namespace {

// FitProtocols without outlier rejection; `sorted` by size.
ProtocolFit FitSorted(const std::vector<PingPongPoint>& sorted, const ProtocolFitOptions& o) {
  ProtocolFit out;
  out.single = FitLink(sorted);
  out.eager = out.single;
  out.eager_threshold_bytes = sorted.back().bytes;
  const std::size_t n = sorted.size(), min_seg = std::max<std::size_t>(o.min_segment_points, 2);
  double best_cost = std::numeric_limits<double>::infinity();
  const std::span<const PingPongPoint> all(sorted);
  for (std::size_t k = min_seg; k + min_seg <= n; ++k) {
    if (sorted[k - 1].bytes == sorted[k].bytes) continue;  // a size stays in one segment
    const LinkFit lo = FitLink(all.subspan(0, k));
    const LinkFit hi = FitLink(all.subspan(k));
    if (lo.cost + hi.cost < best_cost) {
      best_cost = lo.cost + hi.cost;
      out.eager = lo;
      out.rendezvous = hi;
      out.eager_threshold_bytes = sorted[k - 1].bytes;
    }
  }
  if (best_cost * o.min_improvement < out.single.cost) {
    out.split = true;
  } else {
    out.split = false;
    out.eager = out.single;
    out.rendezvous = LinkFit{};
    out.eager_threshold_bytes = sorted.back().bytes;
  }
  return out;
}

double RelativeResidual(const ProtocolFit& f, const PingPongPoint& p) {
  const bool eager = !f.split || p.bytes <= f.eager_threshold_bytes;
  return ((eager ? f.eager : f.rendezvous).Predict(p.bytes) - p.time_s) / p.time_s;
}

}  // namespace

ProtocolFit FitProtocols(std::span<const PingPongPoint> points, const ProtocolFitOptions& o) {
  std::vector<PingPongPoint> sorted(points.begin(), points.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  ProtocolFit fit = FitSorted(sorted, o);
  const auto max_drops =
      static_cast<std::size_t>(o.max_outlier_fraction * static_cast<double>(points.size()));
  std::vector<PingPongPoint> dropped;
  while (dropped.size() < max_drops && sorted.size() > 2) {
    std::vector<double> abs_r;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      abs_r.push_back(std::abs(RelativeResidual(fit, sorted[i])));
      if (abs_r[i] > abs_r[worst]) worst = i;
    }
    const double worst_r = abs_r[worst];
    const double median = MedianOfMeans(abs_r);
    if (worst_r <= o.outlier_min_residual || worst_r <= o.outlier_factor * median) break;
    dropped.push_back(sorted[worst]);
    sorted.erase(sorted.begin() + static_cast<std::ptrdiff_t>(worst));
    fit = FitSorted(sorted, o);
  }
  std::sort(dropped.begin(), dropped.end(),
            [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  fit.outliers = std::move(dropped);
  return fit;
}

std::string ProtocolFit::Report() const {
  char buf[512];
  auto line = [&buf](const std::string& what, const LinkFit& f) {
    std::snprintf(buf, sizeof buf,
                  "%s: L = %.4g us, B = %.4g GB/s over %zu sizes (rms residual %.2f%%, max "
                  "%.2f%%)\n",
                  what.c_str(), f.latency_s * 1e6, f.bandwidth_Bps / 1e9, f.points,
                  100 * f.rms_relative_residual, 100 * f.max_relative_residual);
    return std::string(buf);
  };
  std::string out = line("one line", single);
  if (split) {
    out += line("eager (<= " + std::to_string(eager_threshold_bytes) + " B)", eager);
    out += line("rendezvous", rendezvous);
  } else {
    out += "no protocol change found (a split would not lower the residual clearly)\n";
  }
  if (!outliers.empty()) {
    out += "outliers left out of the fit (bytes):";
    for (const auto& p : outliers) out += " " + std::to_string(p.bytes);
    out += "\n";
  }
  return out;
}

double MedianOfMeans(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

}  // namespace pas2p::sim
