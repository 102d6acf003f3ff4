// Fitting the point-to-point model T = L + S / B to ping-pong measurements, as the network
// evaluator of Demaine (paper 002) does, extended to two segments where the MPI library
// switches protocol (eager below a size, rendezvous above it). `pas2p characterize` feeds
// it; tests feed it synthetic points.
//
// The fit minimises relative residuals, sum(((L + S/B - t) / t)^2), rather than absolute
// ones: message sizes span 1 B .. 4 MiB, and an absolute fit would let the largest sizes
// decide the latency. Solved as linear least squares with Eigen.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pas2p::sim {

// One message size: the one-way time (round-trip time / 2).
struct PingPongPoint {
  std::uint64_t bytes = 0;
  double time_s = 0.0;
};

struct LinkFit {
  double latency_s = 0.0;      // L (>= 0: a negative intercept is refitted with L = 0)
  double bandwidth_Bps = 0.0;  // B (+inf when the points show no size dependence)
  std::size_t points = 0;
  double rms_relative_residual = 0.0;  // sqrt(mean(((fit - t) / t)^2))
  double max_relative_residual = 0.0;
  double cost = 0.0;  // sum of squared relative residuals
  double Predict(std::uint64_t bytes) const;
};

struct ProtocolFitOptions {
  // Each segment of a split needs at least this many points.
  std::size_t min_segment_points = 3;
  // A split is kept only when it lowers the cost by at least this factor ("clearly").
  double min_improvement = 4.0;
  // Outlier rejection, as paper 002 does by hand: after each fit the point with the largest
  // relative residual is dropped, if that residual exceeds both `outlier_min_residual` and
  // `outlier_factor` x the median absolute residual, and the fit is redone; at most
  // max_outlier_fraction of the points are dropped. 0 = keep every point.
  double max_outlier_fraction = 0.0;
  double outlier_factor = 5.0;
  double outlier_min_residual = 0.05;
};

struct ProtocolFit {
  LinkFit single;  // one line through all points
  bool split = false;
  LinkFit eager;       // sizes <= eager_threshold_bytes (all points when !split)
  LinkFit rendezvous;  // sizes > eager_threshold_bytes (only when split)
  std::uint64_t eager_threshold_bytes = 0;  // the largest size of the eager segment
  std::vector<PingPongPoint> outliers;      // points dropped by outlier rejection
  // What a one-line machine model should use: the eager latency (small messages are
  // latency-bound) and the rendezvous bandwidth (large messages are bandwidth-bound).
  double model_latency_s() const { return eager.latency_s; }
  double model_bandwidth_Bps() const {
    return split ? rendezvous.bandwidth_Bps : eager.bandwidth_Bps;
  }
  std::string Report() const;  // a few lines for humans
};

// Least-squares fit of one segment; needs >= 2 points with distinct sizes and times > 0
// (throws std::invalid_argument otherwise).
LinkFit FitLink(std::span<const PingPongPoint> points);
// Tries every split point (sizes sorted), keeps the best if it improves the single fit
// clearly. Points need not be sorted.
ProtocolFit FitProtocols(std::span<const PingPongPoint> points,
                         const ProtocolFitOptions& options = {});

// The mixed median-of-means statistic of paper 002: the median of per-batch means (each
// batch times several round trips together). Empty input gives 0.
double MedianOfMeans(std::vector<double> batch_means);

}  // namespace pas2p::sim
