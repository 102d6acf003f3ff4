// The occurrence-shared part of the compute spread: kept by the model beside the per-rank
// part, drawn once per occurrence for every rank by the synthesis.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_traces.h"

namespace pas2p::synthesis {
namespace {

std::vector<phases::Signature> Stencils() {
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(testing::TorusStencil(n)));
  return sigs;
}

// Sets every burst's statistics to a within-rank spread `within` (standard deviation / mean)
// of which `shared` is shared by the ranks in an occurrence (measured over 50 occurrences
// with all the phase's ranks in each occurrence mean); shared < 0: no occurrence statistics
// (an older signature).
void SetSpread(std::vector<phases::Signature>* sigs, double within, double shared) {
  for (phases::Signature& sig : *sigs) {
    for (phases::Phase& p : sig.phases) {
      for (phases::RankPhase& rp : p.ranks) {
        for (phases::PhaseEvent& e : rp.events) {
          phases::ComputeStats& c = e.compute;
          const double m = c.cpu_ns.mean;
          if (c.cpu_ns.n < 2 || m <= 0) continue;
          c.cpu_ns.m2 = within * within * m * m * static_cast<double>(c.cpu_ns.n);
          if (shared < 0) {
            c.occurrence_cpu_ns = c.residual_cpu_ns = {};
            c.occurrence_ranks = 0;
            continue;
          }
          const double r = static_cast<double>(p.ranks.size());
          const double own = within * within - shared * shared;
          c.occurrence_ranks = static_cast<std::int32_t>(p.ranks.size());
          c.occurrence_cpu_ns.n = c.residual_cpu_ns.n = 50;
          c.occurrence_cpu_ns.mean = m;
          c.occurrence_cpu_ns.m2 = (shared * shared + own / r) * m * m * 49;
          c.residual_cpu_ns.m2 = own * (1 - 1 / r) * m * m * 49;
        }
      }
    }
  }
}

// The slot with the largest burst in the relevant phase.
const SlotModel& MainBurst(const AppModel& m) {
  const SlotModel* best = nullptr;
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      if (!best || s.cpu_ns.At(36) > best->cpu_ns.At(36)) best = &s;
    }
  }
  return *best;
}

TEST(SpreadTest, ModelSeparatesTheSharedPartOfTheWithinRankSpread) {
  std::vector<phases::Signature> sigs = Stencils();
  SetSpread(&sigs, 0.5, 0.4);
  const AppModel m = BuildModel(sigs);
  const SlotModel& s = MainBurst(m);
  EXPECT_NEAR(s.cpu_spread_shared, 0.4, 1e-6);
  EXPECT_NEAR(s.cpu_spread_within, 0.3, 1e-6);  // sqrt(0.5^2 - 0.4^2)

  // A saved model keeps it; a model file without the field has none.
  const AppModel back = ModelFromJson(ModelToJson(m), "mem");
  EXPECT_EQ(MainBurst(back).cpu_spread_shared, s.cpu_spread_shared);
  EXPECT_EQ(ModelToJson(back), ModelToJson(m));
}

// Each rank's own part is the one measured at the largest count, not what is left of the
// total after the shared part of the other counts is taken away: when the shared part is
// almost all of the spread at the smaller counts, the difference would be mostly noise.
TEST(SpreadTest, OwnSpreadIsMeasuredNotTheRestOfTheShared) {
  std::vector<phases::Signature> sigs = Stencils();  // 9, 16, 25, 36
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    std::vector<phases::Signature> one{sigs[i]};
    SetSpread(&one, 0.5, i + 1 < sigs.size() ? 0.49 : 0.4);
    sigs[i] = one.front();
  }
  const AppModel m = BuildModel(sigs);
  const SlotModel& s = MainBurst(m);
  EXPECT_NEAR(s.cpu_spread_shared, 0.49, 1e-6);  // the median over the counts
  EXPECT_NEAR(s.cpu_spread_within, 0.3, 1e-6);   // at 36: sqrt(0.5^2 - 0.4^2)
}

TEST(SpreadTest, IndependentNoiseIsNotShared) {
  std::vector<phases::Signature> sigs = Stencils();
  SetSpread(&sigs, 0.5, 0.0);
  const AppModel m = BuildModel(sigs);
  const SlotModel& s = MainBurst(m);
  EXPECT_NEAR(s.cpu_spread_shared, 0, 1e-6);
  EXPECT_NEAR(s.cpu_spread_within, 0.5, 1e-6);
}

TEST(SpreadTest, SignaturesWithoutOccurrenceStatisticsKeepEverySpreadPerRank) {
  std::vector<phases::Signature> sigs = Stencils();
  SetSpread(&sigs, 0.5, -1);
  const AppModel m = BuildModel(sigs);
  const SlotModel& s = MainBurst(m);
  EXPECT_EQ(s.cpu_spread_shared, 0);
  EXPECT_NEAR(s.cpu_spread_within, 0.5, 1e-6);
}

// Per rank, the compute bursts of the run in order.
std::vector<std::int64_t> Bursts(const TraceSource& trace, int rank) {
  std::vector<std::int64_t> out;
  auto source = trace.OpenRank(rank);
  Event e;
  while (source->Next(&e)) {
    if (e.kind == EventKind::kCompute) out.push_back(e.cpu_ns);
  }
  return out;
}

TEST(SpreadTest, SharedFactorIsTheSameOnEveryRankInAnOccurrenceAndKeepsTheMean) {
  AppModel model = BuildModel(Stencils());
  for (auto& ph : model.phases) {
    for (auto& s : ph.slots) {
      s.cpu_spread_between = 0;
      s.cpu_spread_within = 0;
      s.cpu_spread_shared = 0.5;
    }
  }
  const SynthesizedTrace trace(model, 64);
  const std::vector<std::int64_t> first = Bursts(trace, 0);
  ASSERT_GT(first.size(), 10u);
  for (int r : {1, 17, 63}) EXPECT_EQ(Bursts(trace, r), first) << "rank " << r;
  // It changes from one occurrence to the next (each run of the phase's repetitions takes
  // the same strata in another order: SharedFactorsOfARunAddUpToTheModelsMean).
  std::map<std::int64_t, int> distinct;
  for (std::int64_t b : first) ++distinct[b];
  EXPECT_GT(distinct.size(), first.size() / 4);
  // The mean compute is the model's, over the run's few dozen occurrences (stratified)...
  SynthOptions flat_run;
  flat_run.spread = false;
  double run = 0, flat_sum = 0;
  for (std::int64_t b : first) run += static_cast<double>(b);
  for (std::int64_t b : Bursts(SynthesizedTrace(model, 64, flat_run), 0)) {
    flat_sum += static_cast<double>(b);
  }
  EXPECT_NEAR(run / flat_sum, 1.0, 0.02);
  // ... and over many occurrences of the main phase.
  SynthOptions many;
  many.only_phase = -1;
  for (const auto& ph : model.phases) {
    if (ph.relevant) many.only_phase = ph.index;
  }
  ASSERT_GE(many.only_phase, 0);
  many.repetitions = 4000;
  SynthOptions flat = many;
  flat.spread = false;
  double sum = 0, plain_sum = 0;
  for (std::int64_t b : Bursts(SynthesizedTrace(model, 64, many), 5)) {
    sum += static_cast<double>(b);
  }
  for (std::int64_t b : Bursts(SynthesizedTrace(model, 64, flat), 5)) {
    plain_sum += static_cast<double>(b);
  }
  ASSERT_GT(plain_sum, 0);
  EXPECT_NEAR(sum / plain_sum, 1.0, 0.03);

  // With a per-rank part as well, the ranks differ.
  for (auto& ph : model.phases) {
    for (auto& s : ph.slots) s.cpu_spread_within = 0.2;
  }
  const SynthesizedTrace mixed(model, 64);
  EXPECT_NE(Bursts(mixed, 1), Bursts(mixed, 0));
}

// A run of R repetitions of a phase takes its shared factors from R strata of their
// distribution, in a permuted order, not from R independent draws: the run's total compute
// is the model's whatever R (independent antithetic pairs left the unpaired one and the
// clipped ones: several percent at R = 5 or 29 with a spread of 0.5), and the factors still
// differ from one repetition to the next. One and two repetitions (predict times a phase
// alone from them, the second's cost as the difference) cost one and two means.
TEST(SpreadTest, SharedFactorsOfARunAddUpToTheModelsMean) {
  AppModel model = BuildModel(Stencils());
  int main_phase = -1;
  for (const auto& ph : model.phases) {
    if (ph.relevant) main_phase = ph.index;
  }
  ASSERT_GE(main_phase, 0);
  for (const double spread : {0.1, 0.5}) {
    for (auto& ph : model.phases) {
      for (auto& s : ph.slots) {
        s.cpu_spread_between = 0;
        s.cpu_spread_within = 0;
        s.cpu_spread_shared = spread;
      }
    }
    for (const std::int64_t reps : {1, 2, 5, 29, 100}) {
      SynthOptions run;
      run.only_phase = main_phase;
      run.repetitions = reps;
      SynthOptions flat = run;
      flat.spread = false;
      const std::vector<std::int64_t> drawn = Bursts(SynthesizedTrace(model, 64, run), 3);
      double sum = 0, plain = 0;
      for (std::int64_t b : drawn) sum += static_cast<double>(b);
      for (std::int64_t b : Bursts(SynthesizedTrace(model, 64, flat), 3)) {
        plain += static_cast<double>(b);
      }
      ASSERT_GT(plain, 0);
      EXPECT_NEAR(sum / plain, 1.0, 0.001) << "spread " << spread << ", " << reps << " reps";
      if (reps < 5) continue;
      std::map<std::int64_t, int> distinct;
      for (std::int64_t b : drawn) ++distinct[b];
      EXPECT_GT(distinct.size(), drawn.size() / 2) << "spread " << spread << ", " << reps;
    }
  }
}

}  // namespace
}  // namespace pas2p::synthesis
