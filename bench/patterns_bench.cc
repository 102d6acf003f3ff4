// patterns_bench: cost of fitting communication equations and of evaluating them at large
// counts (Google Benchmark). The figure that matters for `pas2p predict --target 1048576`:
// BM_EvaluateEveryRank/<family> walks every rank's destinations and sources at 2^20 ranks.
//   build-*/bin/patterns_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "pas2p/patterns/communicators.h"
#include "pas2p/patterns/general_equation.h"

namespace {

using pas2p::patterns::CommMap;
using pas2p::patterns::DimsCreate;
using pas2p::patterns::GeneralEquation;

CommMap TorusEast(int p) {
  const int s = static_cast<int>(std::lround(std::sqrt(p)));
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) m.dests[r] = {(r / s) * s + (r % s + 1) % s};
  return m;
}

// 7-point halo, non-periodic, on MPI_Cart_create's layout of MPI_Dims_create(p, 3).
CommMap Halo3D(int p) {
  std::vector<std::int64_t> d = DimsCreate(p, 3);
  const int d0 = static_cast<int>(d[0]), d1 = static_cast<int>(d[1]), d2 = static_cast<int>(d[2]);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    int c0 = r / (d1 * d2), c1 = (r / d2) % d1, c2 = r % d2;
    if (c0 > 0) m.dests[r].push_back(r - d1 * d2);
    if (c0 < d0 - 1) m.dests[r].push_back(r + d1 * d2);
    if (c1 > 0) m.dests[r].push_back(r - d2);
    if (c1 < d1 - 1) m.dests[r].push_back(r + d2);
    if (c2 > 0) m.dests[r].push_back(r - 1);
    if (c2 < d2 - 1) m.dests[r].push_back(r + 1);
  }
  return m.Normalized();
}

CommMap Butterfly(int p) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    for (int b = 1; b < p; b <<= 1) m.dests[r].push_back(r ^ b);
  }
  return m.Normalized();
}

std::vector<CommMap> Maps(CommMap (*make)(int), std::vector<int> counts) {
  std::vector<CommMap> maps;
  for (int p : counts) maps.push_back(make(p));
  return maps;
}

void BM_FitTorusBt(benchmark::State& state) {
  std::vector<CommMap> maps = Maps(TorusEast, {9, 16, 25, 36});
  for (auto _ : state) benchmark::DoNotOptimize(pas2p::patterns::FitGeneralEquation(maps));
}
BENCHMARK(BM_FitTorusBt)->Unit(benchmark::kMillisecond);

// Fitting from traces at larger counts: 3-D halo traced at 8 counts up to state.range(0).
void BM_FitHalo3D(benchmark::State& state) {
  std::vector<int> counts;
  for (int p = static_cast<int>(state.range(0)) / 8; p <= state.range(0);
       p += static_cast<int>(state.range(0)) / 8) {
    counts.push_back(p);
  }
  std::vector<CommMap> maps = Maps(Halo3D, counts);
  for (auto _ : state) benchmark::DoNotOptimize(pas2p::patterns::FitGeneralEquation(maps));
}
BENCHMARK(BM_FitHalo3D)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond);

// Every rank's destinations and sources at 2^20 ranks.
void EvaluateEveryRank(benchmark::State& state, const GeneralEquation& eq) {
  const std::int64_t n = 1048576;
  GeneralEquation inverse = eq.Inverse();
  for (auto _ : state) {
    GeneralEquation::AtCount at = eq.At(n);
    GeneralEquation::AtCount inv = inverse.At(n);
    std::int64_t sum = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      at.ForEachDest(r, [&sum](std::int64_t d) { sum += d; });
      inv.ForEachDest(r, [&sum](std::int64_t d) { sum -= d; });
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_EvaluateEveryRank_Torus(benchmark::State& state) {
  EvaluateEveryRank(state, pas2p::patterns::FitGeneralEquation(Maps(TorusEast, {9, 16, 25, 36})));
}
void BM_EvaluateEveryRank_Halo3D(benchmark::State& state) {
  EvaluateEveryRank(state, pas2p::patterns::FitGeneralEquation(Maps(Halo3D, {8, 12, 16, 24})));
}
void BM_EvaluateEveryRank_Hypercube(benchmark::State& state) {
  EvaluateEveryRank(state, pas2p::patterns::FitGeneralEquation(Maps(Butterfly, {4, 8, 16, 32})));
}
BENCHMARK(BM_EvaluateEveryRank_Torus)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluateEveryRank_Halo3D)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluateEveryRank_Hypercube)->Unit(benchmark::kMillisecond);

// Nearest valid counts around 2^20 for an MPI_Dims_create(P, 3) grid.
void BM_NearestValidDimsCreate(benchmark::State& state) {
  pas2p::patterns::GeneralEquation eq =
      pas2p::patterns::FitGeneralEquation(Maps(Halo3D, {8, 12, 16, 24}));
  pas2p::patterns::ValidCountSet set(eq.ValidRules());
  for (auto _ : state) {
    benchmark::DoNotOptimize(pas2p::patterns::CheckTarget(set, 1048573, false));
  }
}
BENCHMARK(BM_NearestValidDimsCreate)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
