// Least-squares L/B fits and the median-of-means statistic (machine_fit.h).
#include "pas2p/simulator/machine_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace pas2p::sim {
namespace {

std::vector<PingPongPoint> Line(double latency_s, double bandwidth_Bps, std::uint64_t from,
                                std::uint64_t to) {
  std::vector<PingPongPoint> out;
  for (std::uint64_t s = from; s <= to; s *= 2)
    out.push_back({s, latency_s + static_cast<double>(s) / bandwidth_Bps});
  return out;
}

// Deterministic +-amplitude multiplicative noise (no RNG: the test must not flake).
void Perturb(std::vector<PingPongPoint>& points, double amplitude) {
  for (std::size_t i = 0; i < points.size(); ++i)
    points[i].time_s *= 1.0 + amplitude * std::sin(1.7 * static_cast<double>(i) + 0.3);
}

TEST(FitLink, RecoversLatencyAndBandwidthExactly) {
  const auto points = Line(1.3e-6, 7.5e9, 1, 1 << 22);
  const LinkFit f = FitLink(points);
  EXPECT_NEAR(f.latency_s, 1.3e-6, 1.3e-6 * 1e-9);
  EXPECT_NEAR(f.bandwidth_Bps, 7.5e9, 7.5e9 * 1e-9);
  EXPECT_LT(f.rms_relative_residual, 1e-12);
  EXPECT_EQ(f.points, points.size());
}

TEST(FitLink, NoSizeDependenceGivesInfiniteBandwidth) {
  const std::vector<PingPongPoint> p = {{1, 2e-6}, {2, 2e-6}, {4, 2e-6}};
  const LinkFit f = FitLink(p);
  EXPECT_NEAR(f.latency_s, 2e-6, 1e-15);
  EXPECT_TRUE(std::isinf(f.bandwidth_Bps));
}

TEST(FitLink, RejectsTooFewOrBadPoints) {
  const std::vector<PingPongPoint> one = {{1, 1e-6}};
  EXPECT_THROW(FitLink(one), std::invalid_argument);
  const std::vector<PingPongPoint> zero = {{1, 1e-6}, {2, 0.0}};
  EXPECT_THROW(FitLink(zero), std::invalid_argument);
}

TEST(FitProtocols, FindsTheEagerRendezvousJump) {
  // Eager up to 64 KiB: L = 0.8 us, B = 6 GB/s; rendezvous: L = 6 us, B = 11 GB/s.
  auto points = Line(0.8e-6, 6e9, 1, 65536);
  const auto large = Line(6e-6, 11e9, 131072, 1 << 22);
  points.insert(points.end(), large.begin(), large.end());
  const ProtocolFit f = FitProtocols(points);
  ASSERT_TRUE(f.split) << f.Report();
  EXPECT_EQ(f.eager_threshold_bytes, 65536u);
  EXPECT_NEAR(f.eager.latency_s, 0.8e-6, 0.8e-6 * 0.01);
  EXPECT_NEAR(f.eager.bandwidth_Bps, 6e9, 6e9 * 0.01);
  EXPECT_NEAR(f.rendezvous.latency_s, 6e-6, 6e-6 * 0.01);
  EXPECT_NEAR(f.rendezvous.bandwidth_Bps, 11e9, 11e9 * 0.01);
  EXPECT_DOUBLE_EQ(f.model_latency_s(), f.eager.latency_s);
  EXPECT_DOUBLE_EQ(f.model_bandwidth_Bps(), f.rendezvous.bandwidth_Bps);
}

TEST(FitProtocols, FindsTheJumpThroughNoise) {
  auto points = Line(1.5e-6, 8e9, 1, 4096);
  const auto large = Line(4e-6, 10e9, 8192, 1 << 22);
  points.insert(points.end(), large.begin(), large.end());
  Perturb(points, 0.005);  // +-0.5 %
  const ProtocolFit f = FitProtocols(points);
  ASSERT_TRUE(f.split) << f.Report();
  EXPECT_EQ(f.eager_threshold_bytes, 4096u);
  EXPECT_NEAR(f.eager.latency_s, 1.5e-6, 1.5e-6 * 0.01);
  EXPECT_NEAR(f.rendezvous.bandwidth_Bps, 10e9, 10e9 * 0.01);
}

TEST(FitProtocols, KeepsOneLineWhenThereIsNoJump) {
  auto points = Line(2e-6, 5e9, 1, 1 << 22);
  Perturb(points, 0.02);
  const ProtocolFit f = FitProtocols(points);
  EXPECT_FALSE(f.split) << f.Report();
  EXPECT_NEAR(f.model_latency_s(), 2e-6, 2e-6 * 0.05);
  EXPECT_NEAR(f.model_bandwidth_Bps(), 5e9, 5e9 * 0.05);
  EXPECT_EQ(f.eager_threshold_bytes, std::uint64_t{1} << 22);
}

TEST(FitProtocols, UnsortedInputIsSorted) {
  auto points = Line(1e-6, 4e9, 1, 1024);
  const auto large = Line(9e-6, 9e9, 2048, 1 << 20);
  points.insert(points.begin(), large.begin(), large.end());
  const ProtocolFit f = FitProtocols(points);
  ASSERT_TRUE(f.split);
  EXPECT_EQ(f.eager_threshold_bytes, 1024u);
}

TEST(FitProtocols, RejectsOutliersWhenAsked) {
  // A jump at 8 KiB plus two sizes hit by a disturbance (x10 and x4).
  auto points = Line(0.5e-6, 3e9, 1, 8192);
  const auto large = Line(3e-6, 9e9, 16384, 1 << 22);
  points.insert(points.end(), large.begin(), large.end());
  points[5].time_s *= 10;  // 32 bytes
  points[18].time_s *= 4;  // 256 KiB
  ProtocolFitOptions plain;
  const ProtocolFit messy = FitProtocols(points, plain);
  EXPECT_TRUE(messy.outliers.empty());
  EXPECT_GT(std::abs(messy.eager.latency_s - 0.5e-6), 0.5e-6 * 0.01);  // really disturbed
  ProtocolFitOptions robust;
  robust.max_outlier_fraction = 0.25;
  const ProtocolFit f = FitProtocols(points, robust);
  ASSERT_EQ(f.outliers.size(), 2u) << f.Report();
  EXPECT_EQ(f.outliers[0].bytes, 32u);
  EXPECT_EQ(f.outliers[1].bytes, 262144u);
  ASSERT_TRUE(f.split) << f.Report();
  EXPECT_EQ(f.eager_threshold_bytes, 8192u);
  EXPECT_NEAR(f.eager.latency_s, 0.5e-6, 0.5e-6 * 0.01);
  EXPECT_NEAR(f.eager.bandwidth_Bps, 3e9, 3e9 * 0.01);
  EXPECT_NEAR(f.rendezvous.latency_s, 3e-6, 3e-6 * 0.01);
  EXPECT_NEAR(f.rendezvous.bandwidth_Bps, 9e9, 9e9 * 0.01);
  // Clean data loses nothing.
  EXPECT_TRUE(FitProtocols(Line(1e-6, 5e9, 1, 1 << 20), robust).outliers.empty());
}

TEST(MedianOfMeans, TakesTheMedianOfBatchMeans) {
  EXPECT_DOUBLE_EQ(MedianOfMeans({3.0, 1.0, 100.0}), 3.0);       // an outlier batch is ignored
  EXPECT_DOUBLE_EQ(MedianOfMeans({4.0, 1.0, 2.0, 100.0}), 3.0);  // even: mean of middle two
  EXPECT_DOUBLE_EQ(MedianOfMeans({}), 0.0);
}

}  // namespace
}  // namespace pas2p::sim
