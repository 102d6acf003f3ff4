// Micro-benchmark of pas2p::regression: fitting one quantity from a few process counts.
// Prediction fits thousands of quantities (per phase, per communication, per rank class), so the
// time per Fit() is what matters. Run:
//   build/bin/regression_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "pas2p/regression/fit.h"

namespace {

using pas2p::regression::Fit;
using pas2p::regression::FittedModel;
using pas2p::regression::IntervalMethod;
using pas2p::regression::Options;
using pas2p::regression::Point;

// 5 counts, values of c0 + c1·√P with ±1% deterministic wiggle (a typical bytes-per-message
// series).
std::vector<Point> NoisySeries() {
  const double wiggle[] = {0.006, -0.009, 0.003, 0.01, -0.004};
  std::vector<Point> points;
  int k = 0;
  for (double p : {4, 9, 16, 25, 36}) {
    points.push_back({p, (300 + 20 * std::sqrt(p)) * (1 + wiggle[k++])});
  }
  return points;
}

void BM_FitFivePointsNoisy(benchmark::State& state) {
  const auto points = NoisySeries();
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitFivePointsNoisy)->Unit(benchmark::kMicrosecond);

void BM_FitFivePointsExact(benchmark::State& state) {
  std::vector<Point> points;
  for (double p : {4, 9, 16, 25, 36})
    points.push_back({p, 2.5 * std::pow(p, 2.0 / 3) * std::log2(p)});
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitFivePointsExact)->Unit(benchmark::kMicrosecond);

void BM_FitFivePointsBootstrap(benchmark::State& state) {
  Options options;
  options.interval_method = IntervalMethod::kResidualBootstrap;
  const auto points = NoisySeries();
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points, options));
}
BENCHMARK(BM_FitFivePointsBootstrap)->Unit(benchmark::kMicrosecond);

void BM_FitFivePointsLinearFormsOnly(benchmark::State& state) {
  Options options;
  options.use_power_laws = options.use_exponentials = false;
  const auto points = NoisySeries();
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points, options));
}
BENCHMARK(BM_FitFivePointsLinearFormsOnly)->Unit(benchmark::kMicrosecond);

// Values with no law behind them (a worst case: many candidates stay within the Occam bar, so
// many leave-one-out refits run).
void BM_FitFivePointsUnstructured(benchmark::State& state) {
  const std::vector<Point> points = {{4, 812}, {9, 1450}, {16, 630}, {25, 1990}, {36, 1100}};
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitFivePointsUnstructured)->Unit(benchmark::kMicrosecond);

// Padded all-to-all blocks, 8·P·ceil(N/P)^2 bytes: no smooth law is exact, so the block laws
// are searched (and one is found). The argument is N: the larger N, the longer the scan over
// block sizes (up to Options::block_max_scan per form).
void BM_FitPaddedBlocks(benchmark::State& state) {
  const double n = static_cast<double>(state.range(0));
  std::vector<Point> points;
  for (double p : {4, 9, 16, 25, 36}) {
    const double b = std::ceil(n / p);
    points.push_back({p, 8 * p * b * b});
  }
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitPaddedBlocks)->Arg(1440)->Arg(100003)->Unit(benchmark::kMicrosecond);

// Faces of a sqrt(P) x sqrt(P) decomposition, 240·ceil(N/sqrt(P))^2 bytes at 16, 25, 36, 64: no
// smooth and no 1-D block law is exact, so the grid sides are searched (and one is found). The
// argument is N.
void BM_FitGridBlocks(benchmark::State& state) {
  const double n = static_cast<double>(state.range(0));
  std::vector<Point> points;
  for (double p : {16, 25, 36, 64}) {
    const double b = std::ceil(n / std::sqrt(p));
    points.push_back({p, 240 * b * b});
  }
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitGridBlocks)->Arg(25)->Arg(1000)->Arg(100003)->Unit(benchmark::kMicrosecond);

// BM_FitFivePointsUnstructured with the 1-D block laws only (what the search was before grid
// sides): the counts are squares, so the default search also tries sqrt(P) in vain.
void BM_FitFivePointsUnstructuredOneDBlocks(benchmark::State& state) {
  const std::vector<Point> points = {{4, 812}, {9, 1450}, {16, 630}, {25, 1990}, {36, 1100}};
  Options options;
  options.block_grid_dimensions = {1};
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points, options));
}
BENCHMARK(BM_FitFivePointsUnstructuredOneDBlocks)->Unit(benchmark::kMicrosecond);

void BM_FitConstantCount(benchmark::State& state) {
  const std::vector<Point> points = {{4, 16}, {9, 16}, {16, 16}, {25, 16}, {36, 16}};
  for (auto _ : state) benchmark::DoNotOptimize(Fit(points));
}
BENCHMARK(BM_FitConstantCount)->Unit(benchmark::kMicrosecond);

void BM_EvaluateAndInterval(benchmark::State& state) {
  const FittedModel model = Fit(NoisySeries());
  double p = 49;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.Evaluate(p));
    benchmark::DoNotOptimize(model.Interval(p));
    p = p < 1e6 ? p * 1.1 : 49;
  }
}
BENCHMARK(BM_EvaluateAndInterval);

}  // namespace

BENCHMARK_MAIN();
