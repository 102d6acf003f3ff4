// The occurrence-shared part of the compute spread: kept by the model beside the per-rank
// part, drawn once per occurrence for every rank by the synthesis.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "pas2p/simulator/engine.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
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

// The last relevant phase of the model (the stencil's halo exchange), -1 if none.
int LastRelevantPhase(const AppModel& model) {
  int last = -1;
  for (const auto& ph : model.phases) {
    if (ph.relevant) last = ph.index;
  }
  return last;
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
  many.only_phase = LastRelevantPhase(model);
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
  const int main_phase = LastRelevantPhase(model);
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

// Sets the shape of every burst's own noise (phases::ComputeStats::residual_shape, in ns:
// `shape` x the burst's mean) where occurrence statistics were measured.
void SetShape(std::vector<phases::Signature>* sigs, const std::vector<double>& shape) {
  for (phases::Signature& sig : *sigs) {
    for (phases::Phase& p : sig.phases) {
      for (phases::RankPhase& rp : p.ranks) {
        for (phases::PhaseEvent& e : rp.events) {
          phases::ComputeStats& c = e.compute;
          if (c.occurrence_ranks < 2) continue;
          c.residual_shape.clear();
          for (double b : shape) {
            c.residual_shape.push_back(static_cast<float>(b * c.cpu_ns.mean));
          }
        }
      }
    }
  }
}

// A right-skewed shape: most bursts a little under the mean, one in 16 far above it.
std::vector<double> LongTail(double sign = 1) {
  std::vector<double> bins(phases::kNoiseShapeBins, -0.02 * sign);
  bins[sign > 0 ? bins.size() - 1 : 0] = 0.3 * sign;
  return bins;
}

// The shape of each rank's own noise is the largest count's (as its spread is), the ranks'
// bins standardized and averaged; model files keep it, files without it read as symmetric,
// and a shape of fewer than 2 bins is an error that names the file and phase.
TEST(SpreadTest, ModelKeepsTheShapeOfEachRanksOwnNoise) {
  std::vector<phases::Signature> sigs = Stencils();  // 9, 16, 25, 36
  SetSpread(&sigs, 0.5, 0.4);
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    std::vector<phases::Signature> one{sigs[i]};
    SetShape(&one, LongTail(i + 1 < sigs.size() ? -1 : 1));
    sigs[i] = one.front();
  }
  const AppModel m = BuildModel(sigs);
  const std::vector<double>& shape = MainBurst(m).cpu_noise_shape;
  ASSERT_EQ(shape.size(), phases::kNoiseShapeBins);
  // Standardized: 15 bins at -1/sqrt(15), the last at sqrt(15).
  for (std::size_t j = 0; j + 1 < shape.size(); ++j) EXPECT_NEAR(shape[j], -0.2582, 1e-3) << j;
  EXPECT_NEAR(shape.back(), 3.873, 1e-3);
  // `pas2p model` says it: the own spread is 0.3, its top bin 3.873 standard deviations.
  const std::string words = MainBurst(m).Describe();
  EXPECT_NE(
      words.find("30% each rank's own (its slowest 1/16 of bursts +116%, its fastest -7.75%)"),
      std::string::npos)
      << words;

  const AppModel back = ModelFromJson(ModelToJson(m), "mem");
  EXPECT_EQ(MainBurst(back).cpu_noise_shape, shape);
  EXPECT_EQ(ModelToJson(back), ModelToJson(m));
  std::string json = ModelToJson(m);
  const std::size_t at = json.find("\"cpu_noise_shape\"");
  ASSERT_NE(at, std::string::npos);
  const std::size_t end = json.find(']', at) + 1;
  std::string old = json;
  old.erase(at, end + 1 - at);  // the key, its array and the comma after it
  EXPECT_TRUE(MainBurst(ModelFromJson(old, "old.json")).cpu_noise_shape.empty());
  std::string bad = json;
  bad.replace(at, end - at, "\"cpu_noise_shape\": [1.5]");
  try {
    ModelFromJson(bad, "bad.json");
    FAIL() << "a shape of one bin was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: phase"), std::string::npos) << e.what();
  }

  SetSpread(&sigs, 0.5, -1);  // no occurrence statistics: no shape, drawn symmetric
  EXPECT_TRUE(MainBurst(BuildModel(sigs)).cpu_noise_shape.empty());
}

// Mean, standard deviation and skewness of xs.
struct Moments {
  double mean = 0, sd = 0, skew = 0;
};
Moments MomentsOf(const std::vector<double>& xs) {
  Moments m;
  for (double x : xs) m.mean += x;
  m.mean /= static_cast<double>(xs.size());
  double m2 = 0, m3 = 0;
  for (double x : xs) {
    m2 += (x - m.mean) * (x - m.mean);
    m3 += (x - m.mean) * (x - m.mean) * (x - m.mean);
  }
  m2 /= static_cast<double>(xs.size());
  m3 /= static_cast<double>(xs.size());
  m.sd = std::sqrt(m2);
  m.skew = m2 > 0 ? m3 / std::pow(m2, 1.5) : 0;
  return m;
}

// Synthesis draws each rank's own factor from the model's shape, and its mean and spread stay
// the model's whatever the shape (a long tail is paid for by a mode below the mean).
TEST(SpreadTest, OwnNoiseIsDrawnFromItsShapeAndKeepsTheMeanAndSpread) {
  AppModel model = BuildModel(Stencils());
  const int main_phase = LastRelevantPhase(model);
  ASSERT_GE(main_phase, 0);
  for (const double tail : {0.0, 1.0, -1.0}) {
    for (auto& ph : model.phases) {
      for (auto& s : ph.slots) {
        s.cpu_spread_between = 0;
        s.cpu_spread_shared = 0;
        s.cpu_spread_within = 0.15;
        s.cpu_noise_shape = tail == 0 ? std::vector<double>{} : LongTail(tail);
      }
    }
    SynthOptions run;
    run.only_phase = main_phase;
    run.repetitions = 3000;
    SynthOptions flat = run;
    flat.spread = false;
    const SynthesizedTrace drawn(model, 64, run), plain(model, 64, flat);
    std::vector<double> factors;
    for (int r : {0, 9, 33, 63}) {
      const std::vector<std::int64_t> a = Bursts(drawn, r), b = Bursts(plain, r);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (b[i] > 1000) factors.push_back(static_cast<double>(a[i]) / static_cast<double>(b[i]));
      }
    }
    ASSERT_GT(factors.size(), 10000u);
    const Moments m = MomentsOf(factors);
    EXPECT_NEAR(m.mean, 1.0, 0.01) << "tail " << tail;
    EXPECT_NEAR(m.sd, 0.15, 0.008) << "tail " << tail;
    if (tail == 0) {
      EXPECT_NEAR(m.skew, 0, 0.1);
    } else {
      EXPECT_GT(m.skew * tail, 2.5) << "tail " << tail;
    }
  }
}

// Per rank, the compute before each call of the run (0 where a burst was drawn at 0).
std::vector<std::int64_t> ComputeBeforeCalls(const TraceSource& trace, int rank) {
  std::vector<std::int64_t> out;
  auto source = trace.OpenRank(rank);
  Event e;
  std::int64_t pending = 0;
  while (source->Next(&e)) {
    if (e.kind == EventKind::kCompute) {
      pending += e.cpu_ns;
    } else {
      out.push_back(pending);
      pending = 0;
    }
  }
  return out;
}

// The traced own spread is what is left of a burst around its occurrence's mean, relative to
// the mean burst; the synthesized burst is the model's value times the shared factor times
// the own one. Drawn as traced, the own deviations would be the shared factor times the own
// spread: sqrt(E[s^2]) = 1.28 times too wide with a shared spread of 1 (a ring whose bursts
// are one large one and many small ones per iteration waited 3x longer than its trace).
// The residual around each occurrence's mean over the ranks keeps the traced own spread.
TEST(SpreadTest, OwnNoiseUnderASharedFactorKeepsTheTracedResidual) {
  AppModel model = BuildModel(Stencils());
  const int main_phase = LastRelevantPhase(model);
  ASSERT_GE(main_phase, 0);
  for (const double shared : {0.0, 0.5, 1.0}) {
    for (auto& ph : model.phases) {
      for (auto& s : ph.slots) {
        s.cpu_spread_between = s.cpu_spread_persistent = 0;
        s.cpu_spread_shared = shared;
        s.cpu_spread_within = 0.3;
        s.cpu_noise_shape.clear();
      }
    }
    SynthOptions run;
    run.only_phase = main_phase;
    run.repetitions = 400;
    SynthOptions flat = run;
    flat.spread = false;
    const SynthesizedTrace drawn(model, 64, run), plain(model, 64, flat);
    const std::vector<std::int64_t> mean_bursts = ComputeBeforeCalls(plain, 0);
    std::vector<std::vector<std::int64_t>> ranks;
    for (int r = 0; r < 64; ++r) {
      ranks.push_back(ComputeBeforeCalls(drawn, r));
      ASSERT_EQ(ranks.back().size(), mean_bursts.size()) << "rank " << r;
      ASSERT_EQ(ComputeBeforeCalls(plain, r), mean_bursts) << "rank " << r;  // every rank alike
    }
    // Bursts i of every rank are one occurrence of one slot: their mean over the ranks is
    // the shared draw, the rest is each rank's own.
    double residual = 0, mean = 0;
    int n = 0;
    std::vector<double> occurrence_means;
    for (std::size_t i = 0; i < mean_bursts.size(); ++i) {
      if (mean_bursts[i] < 1000) continue;
      double sum = 0;
      for (const auto& b : ranks) sum += static_cast<double>(b[i]);
      const double occ = sum / 64;
      occurrence_means.push_back(occ / static_cast<double>(mean_bursts[i]));
      for (const auto& b : ranks) {
        const double d = (static_cast<double>(b[i]) - occ) / static_cast<double>(mean_bursts[i]);
        residual += d * d;
        mean += static_cast<double>(b[i]) / static_cast<double>(mean_bursts[i]);
        ++n;
      }
    }
    ASSERT_GT(n, 10000);
    EXPECT_NEAR(mean / n, 1.0, 0.02) << "shared " << shared;
    // Over 64 ranks the residual around their own mean is sqrt(63 / 64) of the spread.
    EXPECT_NEAR(std::sqrt(residual / n * 64 / 63), 0.3, 0.02) << "shared " << shared;
    // The shared draws are still the traced shared spread (clipped at 0 and normed: the
    // spread of max(0, 1 + z) x norm is 0.80 for a spread of 1).
    const Moments m = MomentsOf(occurrence_means);
    EXPECT_NEAR(m.mean, 1.0, 0.02) << "shared " << shared;
    if (shared > 0) {
      EXPECT_GT(m.sd, 0.7 * shared) << "shared " << shared;
    }
  }
}

// TorusStencil (60 iterations) whose bursts are now and then held up: 1 in 8 bursts takes an
// exponentially distributed delay, 50% of the burst on average (an OS daemon, a page fault).
TraceData HeldUpStencil(int n) {
  testing::AppParams params;
  params.iterations = 60;
  TraceData d = testing::TorusStencil(n, params);
  std::mt19937_64 rng(static_cast<std::uint64_t>(n));
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& events : d.ranks) {
    for (Event& e : events) {
      if (e.kind != EventKind::kCompute || e.cpu_ns < 1000) continue;
      const double hit = u(rng), delay = -0.5 * std::log(1 - u(rng));
      if (hit < 1.0 / 8) e.cpu_ns += std::llround(static_cast<double>(e.cpu_ns) * delay);
    }
  }
  return d;
}

// A stencil whose bursts are now and then held up (1 in 8 bursts takes an exponentially
// distributed delay, 50% of the burst on average: an OS daemon, a page fault), at 9-36 ranks
// and at 49. The stragglers make every neighbour wait, so the run at 49 is slower than its
// mean compute says; a model that drew the same spread symmetrically (the traces' shapes
// removed, as older signatures read) makes fewer and milder stragglers and predicts
// it too fast.
TEST(SpreadTest, ALongTailOfBurstsCostsWhatItCostInTheTracedRuns) {
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(HeldUpStencil(n)));
  const TraceData real = HeldUpStencil(49);
  const AppModel m = BuildModel(sigs);
  ASSERT_FALSE(MainBurst(m).cpu_noise_shape.empty());
  const Validation skewed = testing::QuickValidate(sigs, real);
  std::vector<phases::Signature> symmetric = sigs;
  for (phases::Signature& sig : symmetric) {
    for (phases::Phase& p : sig.phases) {
      for (phases::RankPhase& rp : p.ranks) {
        for (phases::PhaseEvent& e : rp.events) e.compute.residual_shape.clear();
      }
    }
  }
  const Validation plain = testing::QuickValidate(symmetric, real);
  EXPECT_LT(skewed.compute_error, 0.02);
  EXPECT_LT(skewed.time_error, 0.03) << "predicted " << skewed.predicted_time_s << " s, real "
                                     << skewed.real_simulated_time_s << " s";
  EXPECT_LT(plain.predicted_time_s, skewed.predicted_time_s);
  EXPECT_GT(plain.time_error, 1.5 * skewed.time_error);
}

// A load that follows the rank (rank r computes 2 (r + 1) / (P + 1) of the mean share) in an
// all-to-all, at 4-12 ranks.
testing::AppParams RampParams() {
  testing::AppParams p;
  p.iterations = 20;
  p.compute_ns = 4e8;
  p.domain = 1e5;
  return p;
}
std::vector<phases::Signature> RampSignatures() {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12})
    sigs.push_back(testing::Analyze(testing::RampAlltoall(n, RampParams())));
  return sigs;
}

// HpcgHalo in 4-level V-cycles (24 iterations, an allreduce every 6) and its signatures at
// 4-24 ranks.
testing::AppParams LevelCycles() {
  testing::AppParams p = testing::SmallHpcgHalo();
  p.level_cycle = 4;
  p.iterations = 24;
  p.check_every = 6;
  return p;
}
std::vector<phases::Signature> LevelCycleSignatures() {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 12, 16, 24}) {
    sigs.push_back(testing::Analyze(testing::HpcgHalo(n, LevelCycles())));
  }
  return sigs;
}

// HPCG's halo exchanges in multigrid V-cycles of 4 levels: each iteration's bursts (the work
// before the receives, the packing before each send, the unpacking after each wait) are an
// eighth of the level above's. What the ranks share in an occurrence is its level, in every
// burst of it; each rank sends to its neighbours in ascending order, which differs from rank
// to rank, so a partner's send comes after a different number of its bursts. Synthesis draws
// one quantile of the shared part per occurrence for all its slots, so the bursts of an
// occurrence are all of one size, as traced: 2.6% over the trace at 32 ranks, 2.4% under it
// at 48. Drawn slot by slot, a rank packed one face at a fine level's cost and the next at a
// coarse one's, its partners waited for the large ones, and the runs came out 2.2 and 2.0
// times as long as the traces.
TEST(SpreadTest, OccurrencesThatAreMultigridLevelsCostWhatTheyCostInTheTrace) {
  const testing::AppParams p = LevelCycles();
  const std::vector<phases::Signature> sigs = LevelCycleSignatures();
  for (int target : {32, 48}) {
    const Validation v = testing::QuickValidate(sigs, testing::HpcgHalo(target, p));
    EXPECT_EQ(v.pattern_match, 1.0) << target;
    EXPECT_LT(v.compute_error, 0.03) << target;
    EXPECT_LT(v.time_error, 0.04) << target << ": predicted " << v.predicted_time_s << " s, real "
                                  << v.real_simulated_time_s << " s";
  }
}

// The shared factor is the occurrence's: in each occurrence of a phase, every slot with a
// shared spread takes the same quantile of it, so one slot's factors and another's rise and
// fall together from one occurrence to the next (with the same spread, they are equal).
TEST(SpreadTest, EverySlotOfAnOccurrenceTakesTheOccurrencesSharedFactor) {
  AppModel model = BuildModel(LevelCycleSignatures());
  for (auto& ph : model.phases) {
    for (auto& s : ph.slots) {
      s.cpu_spread_between = s.cpu_spread_persistent = s.cpu_spread_within = 0;
      for (auto& c : s.class_compute) c.spread_within = -1;  // the slot's: none
      s.cpu_spread_shared = 0.4;
    }
  }
  const int main_phase = LastRelevantPhase(model);
  ASSERT_GE(main_phase, 0);
  SynthOptions run;
  run.only_phase = main_phase;
  run.repetitions = 50;
  SynthOptions flat = run;
  flat.spread = false;
  const SynthesizedTrace drawn(model, 32, run), plain(model, 32, flat);
  for (int rank : {0, 13}) {
    const std::vector<std::int64_t> bursts = ComputeBeforeCalls(drawn, rank);
    const std::vector<std::int64_t> mean = ComputeBeforeCalls(plain, rank);
    ASSERT_EQ(bursts.size(), mean.size());
    // MPI_Init, 50 occurrences of the phase, MPI_Finalize.
    ASSERT_GE(mean.size(), 2u);
    const std::size_t calls = (mean.size() - 2) / 50;
    ASSERT_EQ(calls * 50 + 2, mean.size());
    std::vector<double> factors;  // per occurrence: each slot's factor (bursts of >= 1 us)
    int slots = 0, distinct = 0;
    for (std::size_t k = 0; k < 50; ++k) {
      std::vector<double> in_occurrence;
      for (std::size_t i = 1 + k * calls; i < 1 + (k + 1) * calls; ++i) {
        if (mean[i] < 1000) continue;
        in_occurrence.push_back(static_cast<double>(bursts[i]) / static_cast<double>(mean[i]));
      }
      ASSERT_GE(in_occurrence.size(), 2u) << "rank " << rank;
      slots = static_cast<int>(in_occurrence.size());
      for (double f : in_occurrence) {
        EXPECT_NEAR(f, in_occurrence.front(), 2e-3) << "rank " << rank << " occurrence " << k;
      }
      if (k > 0 && std::fabs(in_occurrence.front() - factors.back()) > 1e-3) ++distinct;
      factors.push_back(in_occurrence.front());
    }
    EXPECT_GE(slots, 2);
    EXPECT_GT(distinct, 40) << "rank " << rank;  // it still changes from one to the next
    EXPECT_NEAR(MomentsOf(factors).mean, 1.0, 0.02) << "rank " << rank;
  }
}

// A rank's traced mean is the mean of its n bursts, and their noise alone spreads such means
// by the noise over sqrt(n): the held-up stencil's ranks differ by 3% for that reason only,
// and the model keeps almost none of it as their lasting difference; a load that follows the
// rank (RampAlltoall, bursts without noise) is all lasting. Model files keep it, and one
// without it reads the whole spread between ranks.
TEST(SpreadTest, TheRanksLastingDifferenceIsWhatTheirOwnNoiseDoesNotExplain) {
  std::vector<phases::Signature> held;
  for (int n : {9, 16, 25, 36}) held.push_back(testing::Analyze(HeldUpStencil(n)));
  const AppModel m = BuildModel(held);
  const SlotModel& burst = MainBurst(m);
  EXPECT_GT(burst.cpu_spread_between, 0.02);
  EXPECT_LT(burst.cpu_spread_persistent, 0.4 * burst.cpu_spread_between);
  EXPECT_NE(DescribeModel(m).find("beyond what their own noise explains"), std::string::npos);

  const AppModel ramp_model = BuildModel(RampSignatures());
  const SlotModel& loaded = MainBurst(ramp_model);
  EXPECT_GT(loaded.cpu_spread_between, 0.4);
  EXPECT_DOUBLE_EQ(loaded.cpu_spread_persistent, loaded.cpu_spread_between);

  nlohmann::json j = nlohmann::json::parse(ModelToJson(m));
  EXPECT_DOUBLE_EQ(MainBurst(ModelFromJson(j.dump(), "m.json")).cpu_spread_persistent,
                   burst.cpu_spread_persistent);
  for (auto& phase : j.at("phases")) {
    for (auto& slot : phase.at("slots")) slot.erase("cpu_spread_persistent");
  }
  const AppModel old_model = ModelFromJson(j.dump(), "m.json");
  const SlotModel& old = MainBurst(old_model);
  EXPECT_DOUBLE_EQ(old.cpu_spread_persistent, old.cpu_spread_between);
}

// The same stencil with every burst of at least 1 us at the held-up ones' mean, 1 + 0.5 / 8
// of it, and no noise.
TraceData EvenStencil(int n) {
  testing::AppParams params;
  params.iterations = 60;
  TraceData d = testing::TorusStencil(n, params);
  for (auto& events : d.ranks) {
    for (Event& e : events) {
      if (e.kind == EventKind::kCompute && e.cpu_ns >= 1000) {
        e.cpu_ns = std::llround(static_cast<double>(e.cpu_ns) * (1 + 0.5 / 8));
      }
    }
  }
  return d;
}

// The run on a quiet machine (PredictOptions::quiet_replay) leaves out the noise that varies
// in time and keeps every mean: the held-up stencil's quiet run at 64 is the run of a stencil
// whose bursts all take the held-up ones' mean, and the prediction, where stragglers make
// their neighbours wait, is slower. Text and JSON say so; without the replay, neither does.
TEST(SpreadTest, AQuietMachineLeavesOutTheNoiseThatVariesInTimeAndKeepsTheMeans) {
  std::vector<phases::Signature> held, even;
  for (int n : {9, 16, 25, 36}) {
    held.push_back(testing::Analyze(HeldUpStencil(n)));
    even.push_back(testing::Analyze(EvenStencil(n)));
  }
  PredictOptions options;
  options.intervals = false;
  const Prediction p = Predict(BuildModel(held), 64, testing::TestMachine(), options);
  const Prediction e = Predict(BuildModel(even), 64, testing::TestMachine(), options);
  ASSERT_EQ(p.method, "full replay of the synthesized run");
  ASSERT_GT(p.quiet_time_s, 0);
  EXPECT_GT(p.predicted_time_s, 1.02 * p.quiet_time_s) << "the stragglers cost nothing";
  EXPECT_NEAR(p.quiet_time_s / e.predicted_time_s, 1, 0.04)
      << "quiet " << p.quiet_time_s << " s, even bursts " << e.predicted_time_s << " s";
  // A run without noise is its own quiet run.
  EXPECT_NEAR(e.quiet_time_s / e.predicted_time_s, 1, 0.005);
  EXPECT_NE(FormatPrediction(p, "m").find("quiet machine: "), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(PredictionToJson(p, "m")).at("quiet_time_s").get<double>(),
            p.quiet_time_s);
  options.quiet_replay = false;
  const Prediction loud = Predict(BuildModel(held), 64, testing::TestMachine(), options);
  EXPECT_EQ(loud.quiet_time_s, -1);
  EXPECT_EQ(loud.predicted_time_s, p.predicted_time_s);
  EXPECT_EQ(FormatPrediction(loud, "m").find("quiet machine"), std::string::npos);
  EXPECT_TRUE(nlohmann::json::parse(PredictionToJson(loud, "m")).at("quiet_time_s").is_null());
}

// A sweep gives each count's quiet time beside its predicted time, and the recommendation
// the same rule makes on the quiet times: where the traced noise costs more at the larger
// counts, a threshold between the two efficiencies of the largest count makes them differ,
// and the sweep says so.
TEST(SpreadTest, ASweepGivesTheQuietTimesAndTheirRecommendation) {
  std::vector<phases::Signature> held;
  for (int n : {9, 16, 25, 36}) held.push_back(testing::Analyze(HeldUpStencil(n)));
  const AppModel m = BuildModel(held);
  Sweep s = RunSweep(m, 16, 1024, testing::TestMachine(), 0.5, 4);
  ASSERT_EQ(s.rows.size(), 4u);
  for (const SweepRow& r : s.rows) {
    EXPECT_GT(r.quiet_time_s, 0) << r.count;
    EXPECT_LT(r.quiet_time_s, 0.9 * r.time_s) << r.count;
  }
  const std::string text = FormatSweep(s);
  EXPECT_NE(text.find("quiet"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(SweepToJson(s));
  EXPECT_EQ(j.at("sweep").at(0).at("quiet_time_s").get<double>(), s.rows[0].quiet_time_s);
  EXPECT_EQ(j.at("recommended_quiet").get<std::int64_t>(), s.recommended_quiet);
  // The largest count's efficiency relative to the first, predicted and quiet.
  const SweepRow &first = s.rows.front(), &last = s.rows.back();
  const double scale = static_cast<double>(first.count) / static_cast<double>(last.count);
  const double loud = first.time_s / last.time_s * scale;
  const double quiet = first.quiet_time_s / last.quiet_time_s * scale;
  ASSERT_GT(quiet, loud + 0.02) << text;  // the noise costs more at 1024 than at 16
  s = RunSweep(m, 16, 1024, testing::TestMachine(), (loud + quiet) / 2, 4);
  EXPECT_EQ(s.recommended_quiet, 1024) << FormatSweep(s);
  EXPECT_LT(s.recommended, 1024) << FormatSweep(s);
  EXPECT_NE(FormatSweep(s).find("on a quiet machine (the quiet column) the same rule recommends "
                                "1024 processes"),
            std::string::npos)
      << FormatSweep(s);
}

// validate compares the quiet runs too: the prediction's quiet replay against the real
// trace with each rank's bursts at their mean (of the ranks' spread, the part their noise
// does not explain). The held-up stencil's real quiet run is the even stencil's (2%: its
// ranks keep 3% of sampled differences before that part is taken out, and their slowest
// sets the pace), and the predicted one agrees with it. Without noise draws (which split
// the real bursts) there is no such figure.
TEST(SpreadTest, ValidateComparesTheQuietRuns) {
  std::vector<phases::Signature> held;
  for (int n : {9, 16, 25, 36}) held.push_back(testing::Analyze(HeldUpStencil(n)));
  PredictOptions options;
  options.intervals = false;
  options.noise_draws = 1;
  const MemoryTrace real(HeldUpStencil(49)), even(EvenStencil(49));
  const Validation v = ValidateAgainst(held, real, testing::TestMachine(), options);
  ASSERT_GT(v.real_quiet_s, 0);
  EXPECT_LT(v.real_quiet_s, v.real_simulated_time_s);
  EXPECT_NEAR(v.real_quiet_s / sim::Simulate(even, testing::TestMachine()).predicted_time_s, 1,
              0.03);
  EXPECT_LT(v.quiet_error, 0.04) << "quiet: predicted " << v.predicted_quiet_s << " s, real "
                                 << v.real_quiet_s << " s";
  EXPECT_NE(FormatValidation(v, "a").find("  quiet  "), std::string::npos)
      << FormatValidation(v, "a");
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(ValidationToJson(v, "a")).at("real_quiet_s").get<double>(),
                   v.real_quiet_s);
  options.noise_draws = 0;
  const Validation none = ValidateAgainst(held, real, testing::TestMachine(), options);
  EXPECT_EQ(none.real_quiet_s, -1);
  EXPECT_TRUE(nlohmann::json::parse(ValidationToJson(none, "a")).at("quiet_error").is_null());
}

// With held-up bursts a straggler's delay spreads over several occurrences, so a phase's
// steady cost per occurrence is taken from runs of 1 and 3 occurrences, not 1 and 2: the PET
// (the sum of the phases simulated alone, which predicts beyond the full replay's reach) then
// comes nearer the full replay of the run (12% above it from 2 occurrences, 6.6% below from 3).
TEST(SpreadTest, ThePetOfHeldUpBurstsStaysNearTheFullReplay) {
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(HeldUpStencil(n)));
  const AppModel model = BuildModel(sigs);
  PredictOptions options;
  options.intervals = false;
  ASSERT_EQ(options.steady_occurrences, 3);
  const Prediction at = Predict(model, 256, testing::TestMachine(), options);
  ASSERT_EQ(at.method, "full replay of the synthesized run");
  options.steady_occurrences = 2;
  const Prediction two = Predict(model, 256, testing::TestMachine(), options);
  const double error = std::fabs(at.pet_s / at.predicted_time_s - 1);
  EXPECT_LT(error, 0.08) << "PET " << at.pet_s << " s, full replay " << at.predicted_time_s;
  EXPECT_LT(error, std::fabs(two.pet_s / two.predicted_time_s - 1)) << "from 2: " << two.pet_s;
}

// A load imbalance that follows the rank (rank r computes 2 (r + 1) / (P + 1) of the mean
// share) is no class of ranks: the model keeps it as a spread between ranks (over 50%).
// Drawn at random per rank, P factors averaged 1 +- spread / sqrt(P) and the synthesized
// run computed several percent more or less than the model; the ranks now take the
// spread's quantiles, one stratum each, so the total is the model's and the slowest rank
// (which every all-to-all waits for) is where the spread puts it.
TEST(SpreadTest, RanksTakeTheSpreadBetweenThemStratumByStratum) {
  const testing::AppParams p = RampParams();
  const std::vector<phases::Signature> sigs = RampSignatures();
  const AppModel m = BuildModel(sigs);
  EXPECT_GT(MainBurst(m).cpu_spread_between, 0.4) << DescribeModel(m);
  for (int target : {16, 24}) {
    const Validation v = testing::QuickValidate(sigs, testing::RampAlltoall(target, p));
    EXPECT_LT(v.compute_error, 0.01) << target << "\n" << DescribeModel(m);
    EXPECT_LT(v.time_error, 0.1) << target;
  }
}

}  // namespace
}  // namespace pas2p::synthesis
