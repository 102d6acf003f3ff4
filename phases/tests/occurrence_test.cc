// The occurrence-shared part of the compute bursts (ComputeStats::occurrence_cpu_ns and
// residual_cpu_ns): a spread that every rank shares in an occurrence shows in the
// occurrence means and not in the residuals; independent per-rank noise the other way round.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "../src/compressor.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/signature.h"
#include "synthetic.h"

namespace pas2p::phases {
namespace {

using internal::OccurrenceSample;

Signature Analyze(TraceData data) {
  testing::MemoryTrace trace(std::move(data));
  return AnalyzeTrace(trace);
}

// The event with the largest mean CPU burst before it on `rank` in the heaviest phase.
const PhaseEvent& MainBurst(const Signature& sig, int rank) {
  const Phase& main =
      *std::max_element(sig.phases.begin(), sig.phases.end(),
                        [](const Phase& a, const Phase& b) { return a.share < b.share; });
  const RankPhase& rp = main.ranks.at(static_cast<std::size_t>(rank));
  return *std::max_element(rp.events.begin(), rp.events.end(),
                           [](const PhaseEvent& a, const PhaseEvent& b) {
                             return a.compute.cpu_ns.mean < b.compute.cpu_ns.mean;
                           });
}

double Cv(const Stats& s, double mean) { return s.stddev() / mean; }

TEST(Occurrence, SharedNoiseIsInTheOccurrenceMeansNotInTheResiduals) {
  testing::StencilSpec spec;  // 4 x 4 ranks, 200 iterations
  spec.noise = 0;
  spec.shared_noise = 0.3;  // every rank slow or fast together, iteration by iteration
  const Signature sig = Analyze(MakeStencil(spec));
  for (int rank : {0, 5, 15}) {
    const ComputeStats& c = MainBurst(sig, rank).compute;
    const double mean = c.cpu_ns.mean;
    ASSERT_EQ(c.occurrence_cpu_ns.n, static_cast<std::int64_t>(kOccurrenceSamples));
    EXPECT_EQ(c.occurrence_ranks, 16);
    const double within = Cv(c.cpu_ns, mean);
    EXPECT_GT(within, 0.1);  // 0.3 / sqrt(3) for a uniform factor
    // The first 64 occurrences spread like all 200, and all of it is shared.
    EXPECT_NEAR(Cv(c.occurrence_cpu_ns, mean), within, 0.3 * within);
    EXPECT_LT(Cv(c.residual_cpu_ns, mean), 0.01 * within);
    EXPECT_NEAR(c.residual_cpu_ns.mean, 0, 1e-3 * mean);
  }
}

TEST(Occurrence, IndependentNoiseAveragesOutInTheOccurrenceMeans) {
  testing::StencilSpec spec;
  spec.noise = 0.3;  // each rank on its own
  const Signature sig = Analyze(MakeStencil(spec));
  for (int rank : {0, 5, 15}) {
    const ComputeStats& c = MainBurst(sig, rank).compute;
    const double mean = c.cpu_ns.mean;
    ASSERT_GT(c.occurrence_cpu_ns.n, 1);
    EXPECT_EQ(c.occurrence_ranks, 16);
    const double within = Cv(c.cpu_ns, mean);
    // The mean of 16 independent bursts spreads 1 / sqrt(16) as much; the residual keeps
    // sqrt(15 / 16) of it.
    EXPECT_NEAR(Cv(c.occurrence_cpu_ns, mean), within / 4, 0.4 * within / 4);
    EXPECT_NEAR(Cv(c.residual_cpu_ns, mean), within * std::sqrt(15.0 / 16), 0.2 * within);
  }
}

// Ranks whose bursts before the same call differ in size (a checkerboard exchange: the ranks
// that send first work before the send, the others only pass through it): what an
// occurrence shares is a factor on both, and the large bursts keep none of it as their own.
// With a plain mean over the ranks, half of the large bursts' shared spread was left in
// their residuals, and a prediction drew it for every burst of every rank on its own.
TEST(Occurrence, SharedNoiseOfUnequalBurstsIsAFactor) {
  testing::StencilSpec spec;  // 4 x 4 ranks, 200 iterations
  spec.noise = 0;
  TraceData data = MakeStencil(spec);
  for (std::size_t r = 0; r < data.ranks.size(); ++r) {
    int k = 0;
    for (Event& e : data.ranks[r]) {
      if (e.kind != EventKind::kCompute || e.cpu_ns < spec.cpu_ns / 2) continue;
      const double factor = (1 + 0.3 * std::sin(1.7 * k++)) * (r % 2 == 1 ? 0.01 : 1.0);
      e.cpu_ns = std::llround(static_cast<double>(e.cpu_ns) * factor);
    }
  }
  const Signature sig = Analyze(std::move(data));
  for (int rank : {0, 6, 10}) {
    const ComputeStats& c = MainBurst(sig, rank).compute;
    const double mean = c.cpu_ns.mean;
    ASSERT_GT(c.occurrence_cpu_ns.n, 1) << "rank " << rank;
    const double within = Cv(c.cpu_ns, mean);
    EXPECT_GT(within, 0.1) << "rank " << rank;
    EXPECT_NEAR(Cv(c.occurrence_cpu_ns, mean), within, 0.05 * within) << "rank " << rank;
    EXPECT_LT(Cv(c.residual_cpu_ns, mean), 0.02 * within) << "rank " << rank;
  }
}

// The shape of a rank's own noise: one burst in 16 held up to three times its length, on
// each rank in other occurrences than its neighbours'. Each occurrence mean then holds one
// such burst of 16, so the residuals are -1/8 of a burst 15 times in 16 and +15/8 once: the
// 16 bins of the 64 sampled occurrences are exactly that, and the signature file keeps them.
TEST(Occurrence, ResidualShapeKeepsALongTail) {
  testing::StencilSpec spec;  // 4 x 4 ranks, 200 iterations, 200 us bursts
  spec.noise = 0;
  TraceData data = MakeStencil(spec);
  for (std::size_t r = 0; r < data.ranks.size(); ++r) {
    std::size_t k = 0;
    for (Event& e : data.ranks[r]) {
      if (e.kind != EventKind::kCompute || e.cpu_ns < spec.cpu_ns / 2) continue;
      if ((k++ + r) % 16 == 0) e.cpu_ns *= 3;
    }
  }
  const Signature sig = Analyze(std::move(data));
  const Signature back = SignatureFromJson(SignatureToJson(sig), "mem");
  for (int rank : {0, 7, 15}) {
    const ComputeStats& c = MainBurst(sig, rank).compute;
    ASSERT_EQ(c.residual_shape.size(), kNoiseShapeBins) << "rank " << rank;
    const auto base = static_cast<double>(spec.cpu_ns);
    for (std::size_t j = 0; j + 1 < kNoiseShapeBins; ++j) {
      EXPECT_NEAR(c.residual_shape[j], -base / 8, 1e-3 * base) << "rank " << rank << " bin " << j;
    }
    EXPECT_NEAR(c.residual_shape.back(), 15 * base / 8, 1e-3 * base) << "rank " << rank;
    EXPECT_EQ(MainBurst(back, rank).compute.residual_shape, c.residual_shape);
  }
}

TEST(Occurrence, PlainCallsCarryNoOccurrenceStatistics) {
  const Signature sig = Analyze(MakeStencil(testing::StencilSpec{}));
  for (const Phase& p : sig.phases) {
    if (p.weight > 1.5) continue;
    for (const RankPhase& rp : p.ranks) {
      for (const PhaseEvent& e : rp.events) EXPECT_EQ(e.compute.occurrence_cpu_ns.n, 0);
    }
  }
}

TEST(Occurrence, SampleKeepsTheFirstOccurrencesInOrder) {
  OccurrenceSample a;
  for (int i = 0; i < 100; ++i) a.Add(i);
  EXPECT_EQ(a.seen, 100);
  ASSERT_EQ(a.kept, kOccurrenceSamples);
  EXPECT_EQ(a.at(0), 0.0f);
  EXPECT_EQ(a.at(63), 63.0f);

  // Appending continues the indices; after a gap (occurrences not kept) nothing is added.
  OccurrenceSample b, c;
  b.Add(1);
  b.Add(2);
  c.Add(3);
  b.Append(c);
  EXPECT_EQ(b.kept, 3u);
  EXPECT_EQ(b.at(2), 3.0f);
  OccurrenceSample gap = b.Every(2, 1);  // 3 occurrences are not whole 2-iteration loops
  EXPECT_EQ(gap.kept, 0u);
  gap.Append(c);
  EXPECT_EQ(gap.kept, 0u);  // the index of c's occurrence is not known
  EXPECT_EQ(gap.seen, 2);

  // An unrolled 2-iteration loop: copy i takes the occurrences i, i + 2, ...
  OccurrenceSample loop;
  for (int i = 0; i < 10; ++i) loop.Add(i % 2 ? 100 + i : i);
  const OccurrenceSample even = loop.Every(2, 0), odd = loop.Every(2, 1);
  EXPECT_EQ(even.seen, 5);
  ASSERT_EQ(even.kept, 5u);
  ASSERT_EQ(odd.kept, 5u);
  EXPECT_EQ(even.at(4), 8.0f);
  EXPECT_EQ(odd.at(0), 101.0f);
  EXPECT_EQ(odd.at(4), 109.0f);
}

// Every iteration: a bcast, a burst shared by all ranks (20% spread) before a first
// allreduce, a constant burst before a second one. The two allreduces are a 2-iteration loop
// that is unrolled into the phase: each copy keeps its own iteration's bursts.
TEST(Occurrence, UnrolledCopiesKeepTheirOwnIterations) {
  const int n = 4, iterations = 30;
  testing::Gen g(n, "unrolled");
  g.Init();
  std::vector<int> all{0, 1, 2, 3};
  for (int it = 0; it < iterations; ++it) {
    const double shared = 1 + 0.2 * g.Noise();
    for (int r = 0; r < n; ++r) g.Compute(r, 50000);
    g.Collective(all, EventKind::kBcast, 8, 0);
    for (int r = 0; r < n; ++r) g.Compute(r, static_cast<std::int64_t>(400000 * shared));
    g.Collective(all, EventKind::kAllreduce, 8);
    for (int r = 0; r < n; ++r) g.Compute(r, 100000);
    g.Collective(all, EventKind::kAllreduce, 8);
  }
  g.Finalize();
  const Signature sig = Analyze(g.Take());
  const Phase* loop = nullptr;
  for (const Phase& p : sig.phases) {
    if (p.weight == iterations) loop = &p;
  }
  ASSERT_NE(loop, nullptr) << FormatSignatureTable(sig);
  const RankPhase& rp = loop->ranks.at(2);
  ASSERT_EQ(rp.events.size(), 3u) << FormatSignatureTable(sig);
  EXPECT_EQ(rp.events[0].kind, EventKind::kBcast);
  const ComputeStats& first = rp.events[1].compute;
  const ComputeStats& second = rp.events[2].compute;
  ASSERT_EQ(first.occurrence_cpu_ns.n, iterations);
  ASSERT_EQ(second.occurrence_cpu_ns.n, iterations);
  EXPECT_NEAR(first.occurrence_cpu_ns.mean, 400000, 40000);
  EXPECT_GT(first.occurrence_cpu_ns.stddev(), 0.05 * 400000);
  EXPECT_NEAR(second.occurrence_cpu_ns.mean, 100000, 1);
  EXPECT_LT(second.occurrence_cpu_ns.stddev(), 1);
}

// The same loop with bursts that differ by design (400 us before the first allreduce, 100 us
// before the second, a little noise of each rank's own): each copy takes its own compute,
// not the loop's mean of 250 us +- 150 us (which made the synthesized run draw an imbalance
// the run never had). Copies whose bursts differ only by noise keep the loop's statistics.
TEST(Occurrence, UnrolledCopiesThatDifferByDesignKeepTheirOwnCompute) {
  const int n = 4, iterations = 30;
  for (const bool differ : {true, false}) {
    testing::Gen g(n, "unrolled");
    g.Init();
    std::vector<int> all{0, 1, 2, 3};
    const double first_ns = differ ? 400000 : 200000, second_ns = differ ? 100000 : 200000;
    for (int it = 0; it < iterations; ++it) {
      for (int r = 0; r < n; ++r) g.Compute(r, 50000);
      g.Collective(all, EventKind::kBcast, 8, 0);
      for (int r = 0; r < n; ++r) {
        g.Compute(r, static_cast<std::int64_t>(first_ns * (1 + 0.02 * g.Noise())));
      }
      g.Collective(all, EventKind::kAllreduce, 8);
      for (int r = 0; r < n; ++r) {
        g.Compute(r, static_cast<std::int64_t>(second_ns * (1 + 0.02 * g.Noise())));
      }
      g.Collective(all, EventKind::kAllreduce, 8);
    }
    g.Finalize();
    const Signature sig = Analyze(g.Take());
    const Phase* loop = nullptr;
    for (const Phase& p : sig.phases) {
      if (p.weight == iterations) loop = &p;
    }
    ASSERT_NE(loop, nullptr) << FormatSignatureTable(sig);
    for (const RankPhase& rp : loop->ranks) {
      ASSERT_EQ(rp.events.size(), 3u) << FormatSignatureTable(sig);
      const Stats& first = rp.events[1].compute.cpu_ns;
      const Stats& second = rp.events[2].compute.cpu_ns;
      if (differ) {
        EXPECT_NEAR(first.mean, first_ns, 0.03 * first_ns) << "rank " << rp.rank;
        EXPECT_NEAR(second.mean, second_ns, 0.03 * second_ns) << "rank " << rp.rank;
        EXPECT_LT(first.stddev(), 0.05 * first_ns) << "rank " << rp.rank;
        EXPECT_LT(second.stddev(), 0.05 * second_ns) << "rank " << rp.rank;
        EXPECT_GE(first.min, 0.9 * first_ns);
        EXPECT_LE(second.max, 1.1 * second_ns);
      } else {
        EXPECT_EQ(first, second) << "rank " << rp.rank;  // the loop's statistics, both
      }
    }
  }
}

TEST(Occurrence, StatisticsSurviveSaveAndLoad) {
  testing::StencilSpec spec;
  spec.iterations = 40;
  spec.shared_noise = 0.2;
  const Signature sig = Analyze(MakeStencil(spec));
  const Signature back = SignatureFromJson(SignatureToJson(sig), "mem");
  EXPECT_EQ(back, sig);
  EXPECT_GT(MainBurst(back, 3).compute.occurrence_cpu_ns.n, 1);
}

}  // namespace
}  // namespace pas2p::phases
