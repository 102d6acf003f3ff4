// BuildModel: slots, equations, regressions, presence rules, errors, JSON round trip.
#include "pas2p/synthesis/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "pas2p/core/error.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/synthesis/predict.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_traces.h"

namespace pas2p::synthesis {
namespace {

using testing::Analyze;

std::vector<phases::Signature> Sigs(TraceData (*make)(int, const testing::AppParams&),
                                    std::vector<int> counts) {
  std::vector<phases::Signature> out;
  for (int n : counts) out.push_back(Analyze(make(n, {})));
  return out;
}

TEST(ModelTest, TorusStencilHasOneRelevantPhaseWithTorusPeers) {
  const AppModel m = BuildModel(Sigs(testing::TorusStencil, {9, 16, 25, 36}));
  EXPECT_EQ(m.counts, (std::vector<int>{9, 16, 25, 36}));
  EXPECT_TRUE(m.valid.IsValid(49));
  EXPECT_FALSE(m.valid.IsValid(50));
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("torus"), std::string::npos) << text;
}

// Traces taken with more ranks than cores pass their warning to the model, naming the count
// and how crowded it was, as the untraced-calls warning does; a count traced with at most one
// rank per core adds none.
TEST(ModelTest, OversubscribedTracesWarnInTheModel) {
  // Each count traced on one host with `cores(n)` cores.
  auto crowded_warnings = [](int (*cores)(int), AppModel* model) {
    std::vector<phases::Signature> sigs;
    for (int n : {9, 16, 25, 36}) {
      TraceData d = testing::TorusStencil(n, {});
      d.metadata.hosts = {{"vm", n, cores(n)}};
      sigs.push_back(testing::Analyze(d));
    }
    *model = BuildModel(sigs);
    std::vector<std::string> crowded;
    for (const std::string& w : model->warnings) {
      if (w.find(phases::kOversubscribedWarning) != std::string::npos) crowded.push_back(w);
    }
    return crowded;
  };
  AppModel m;
  const auto crowded = crowded_warnings([](int n) { return n == 9 ? 16 : 2; }, &m);
  ASSERT_EQ(crowded.size(), 3u) << ::testing::PrintToString(m.warnings);
  EXPECT_EQ(crowded[0].rfind("at 16 processes, " + std::string(phases::kOversubscribedWarning) +
                                 ": 16 ranks on 1 host (vm: 16 ranks on 2 cores, 8 per core)",
                             0),
            0u)
      << crowded[0];
  EXPECT_EQ(crowded[2].rfind("at 36 processes, ", 0), 0u) << crowded[2];
  EXPECT_NE(crowded[2].find("18 per core"), std::string::npos) << crowded[2];
  // Saved and loaded with the model (predict prints a loaded model's warnings too).
  EXPECT_EQ(ModelFromJson(ModelToJson(m), "model.json").warnings, m.warnings);
  // One rank per core at every count: no such warning.
  EXPECT_TRUE(crowded_warnings([](int n) { return n; }, &m).empty())
      << ::testing::PrintToString(m.warnings);
}

// A training trace whose compute is off the other counts' trend (a run disturbed by other
// jobs) is named in a warning with the phase's CPU at every count; with 3 counts the traces
// cannot tell which one is off, and the warning says so. Smooth laws do not warn: strong
// scaling (constant work), weak scaling (work growing with P), and a step down that stays
// (the data fitting in cache from some count on).
TEST(ModelTest, ATrainingCountComputingOffTheTrendIsNamed) {
  // `work(n)`: the iteration's compute over all ranks at n ranks.
  auto trend_warnings = [](std::vector<int> counts, double (*work)(int)) {
    std::vector<phases::Signature> sigs;
    for (int n : counts) {
      testing::AppParams p;
      p.compute_ns = work(n);
      sigs.push_back(testing::Analyze(testing::TorusStencil(n, p)));
    }
    const AppModel m = BuildModel(sigs);
    std::vector<std::string> out;
    for (const std::string& w : m.warnings) {
      if (w.find("trend") != std::string::npos) out.push_back(w);
    }
    return out;
  };
  const auto named =
      trend_warnings({9, 16, 25, 36}, [](int n) { return n == 25 ? 2.5 * 4e9 : 4e9; });
  ASSERT_EQ(named.size(), 1u) << ::testing::PrintToString(named);
  EXPECT_EQ(named[0].rfind("at 25 processes, phase ", 0), 0u) << named[0];
  EXPECT_NE(named[0].find("computes 2.50x what the other counts' trend gives"), std::string::npos)
      << named[0];
  EXPECT_NE(named[0].find("at 9, "), std::string::npos) << named[0];
  EXPECT_NE(named[0].find("trace 25 processes again, or leave that trace out"), std::string::npos)
      << named[0];
  {  // predict --json lists it
    std::vector<phases::Signature> sigs;
    for (int n : {9, 16, 25, 36}) {
      testing::AppParams p;
      p.compute_ns = n == 25 ? 2.5 * 4e9 : 4e9;
      p.iterations = 10;
      sigs.push_back(testing::Analyze(testing::TorusStencil(n, p)));
    }
    const Prediction pred = Predict(BuildModel(sigs), 64, testing::TestMachine());
    ASSERT_FALSE(pred.model_warnings.empty());
    const std::string json = PredictionToJson(pred, "m");
    const auto at = json.find("\"model_warnings\"");
    ASSERT_NE(at, std::string::npos) << json;
    EXPECT_NE(json.find("\"at 25 processes, phase ", at), std::string::npos) << json;
    // and predict --sweep --json
    const std::string sweep =
        SweepToJson(RunSweep(BuildModel(sigs), 36, 144, testing::TestMachine(), 0.5, 2));
    const auto in_sweep = sweep.find("\"model_warnings\"");
    ASSERT_NE(in_sweep, std::string::npos) << sweep;
    EXPECT_NE(sweep.find("\"at 25 processes, phase ", in_sweep), std::string::npos) << sweep;
  }
  // The largest count too (the one the extrapolation leans on most), when far off.
  const auto last = trend_warnings({9, 16, 25, 36}, [](int n) { return n == 36 ? 3 * 4e9 : 4e9; });
  ASSERT_EQ(last.size(), 1u) << ::testing::PrintToString(last);
  EXPECT_EQ(last[0].rfind("at 36 processes, ", 0), 0u) << last[0];
  EXPECT_NE(last[0].find("computes 3.00x"), std::string::npos) << last[0];
  // 2x there could be a turn of a smooth law at the end of the range: no warning.
  EXPECT_TRUE(
      trend_warnings({9, 16, 25, 36}, [](int n) { return n == 36 ? 2 * 4e9 : 4e9; }).empty());
  // A count computing less than the trend is named too.
  const auto low = trend_warnings({9, 16, 25, 36}, [](int n) { return n == 16 ? 4e9 / 2 : 4e9; });
  ASSERT_EQ(low.size(), 1u) << ::testing::PrintToString(low);
  EXPECT_EQ(low[0].rfind("at 16 processes, ", 0), 0u) << low[0];
  EXPECT_NE(low[0].find("computes 0.50x"), std::string::npos) << low[0];

  const auto three = trend_warnings({9, 16, 25}, [](int n) { return n == 16 ? 2.5 * 4e9 : 4e9; });
  ASSERT_EQ(three.size(), 1u) << ::testing::PrintToString(three);
  EXPECT_NE(three[0].find("does not follow one trend across the counts"), std::string::npos)
      << three[0];
  EXPECT_NE(three[0].find("16 is 2.50x above the line"), std::string::npos) << three[0];
  EXPECT_NE(three[0].find("the traces cannot tell which count is off"), std::string::npos)
      << three[0];

  EXPECT_TRUE(trend_warnings({9, 16, 25, 36}, [](int) { return 4e9; }).empty());
  EXPECT_TRUE(trend_warnings({9, 16, 25, 36}, [](int n) { return 2e8 * n; }).empty());
  EXPECT_TRUE(trend_warnings({9, 16, 25, 36}, [](int n) { return 1e8 * n * n; }).empty());
  EXPECT_TRUE(
      trend_warnings({9, 16, 25, 36}, [](int n) { return n >= 25 ? 4e9 / 1.6 : 4e9; }).empty());
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// Every call of NAS CG's iteration is irecv, send, wait (row reduction, transpose exchange, two
// dot products), so its ranks repeat one block of 3 calls 4, 7, 7 times at 4, 8, 16 ranks: the
// shape of butterfly stages. But the block's partners are no one pattern (the transpose
// partner, the rank itself on the diagonal, one row partner three times), and the model failed
// with "no communication-pattern family". Modelled call by call, each exchange is a slot: the
// transpose one of them, the steps aligned on their bit across counts.
TEST(BlockModelTest, ABodyOfDifferentExchangesIsModelledCallByCall) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 16}) sigs.push_back(testing::AnalyzeSizesSplit(testing::CgIterations(n, {})));
  const AppModel m = BuildModel(sigs);
  const PhaseModel* iteration = nullptr;
  for (const PhaseModel& pm : m.phases) {
    if (pm.relevant) iteration = &pm;
  }
  ASSERT_NE(iteration, nullptr) << DescribeModel(m);
  EXPECT_FALSE(iteration->block);
  // 1 + 1 row-reduction steps, the transpose, 2 x (1 + 1) dot-product steps.
  ASSERT_EQ(iteration->slots.size(), 7u * 3) << DescribeModel(m);
  int transposes = 0, row_steps = 0;
  for (const SlotModel& s : iteration->slots) {
    if (s.kind != EventKind::kSend) continue;
    ASSERT_TRUE(s.peer.has_value());
    if (s.peer->family == patterns::Family::kXorExchange) ++row_steps;
    if (s.peer->family == patterns::Family::kBitPermute) ++transposes;
  }
  EXPECT_EQ(transposes, 1) << DescribeModel(m);
  EXPECT_EQ(row_steps, 6) << DescribeModel(m);
}

// Groups of 4 (MPI_Comm_split) traced from 4 ranks on: at 4 the one group holds every rank,
// but it is still the split's communicator (not the world), so its slot lines up with the
// same call at 8, 12, 16 and extrapolates as blocks of 4; the leaders' communicator (ranks
// 0, 4, ...) as the one group of rank 0 of every 4th rank.
TEST(CommunicatorModelTest, SplitHoldingEveryRankAtTheSmallestCountIsStillASubset) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 12, 16}) sigs.push_back(testing::Analyze(testing::GroupLeaders(n)));
  const AppModel m = BuildModel(sigs);
  std::vector<std::string> rules;
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      if (s.communicator) rules.push_back(s.communicator->name);
    }
  }
  EXPECT_NE(std::find(rules.begin(), rules.end(), "blocks of 4 consecutive ranks"), rules.end())
      << DescribeModel(m);
  EXPECT_NE(std::find(rules.begin(), rules.end(),
                      "the one group containing rank 0 of: 4 interleaved groups (rank % 4)"),
            rules.end())
      << DescribeModel(m);
  testing::MemoryTrace real(testing::GroupLeaders(24));
  const Validation v = ValidateAgainst(sigs, real, testing::TestMachine());
  EXPECT_LT(v.bytes_error, 1e-9);
  EXPECT_LT(v.time_error, 0.05) << v.predicted_time_s << " vs " << v.real_simulated_time_s;
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// The root works alone between a gather and a bcast (a constant amount, while the others'
// work shrinks as 1/P): averaged over the ranks its burst would shrink as 1/P too, and the
// bcast that everyone waits on would come early. The root is its own class instead.
TEST(RootClassTest, ARootThatWorksAloneIsNotAveragedOverTheRanks) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::GatherWorkBcast(n)));
  const AppModel m = BuildModel(sigs);
  bool root_class = false;
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      for (const auto& cc : s.class_compute) {
        root_class = root_class || (cc.mask.size() == p.slots.size() + 1 && cc.mask.back() == '1');
      }
    }
  }
  EXPECT_TRUE(root_class) << DescribeModel(m);
  testing::MemoryTrace real(testing::GatherWorkBcast(32));
  const Validation v = ValidateAgainst(sigs, real, testing::TestMachine());
  EXPECT_LT(v.compute_error, 0.01);
  EXPECT_LT(v.time_error, 0.02) << v.predicted_time_s << " vs " << v.real_simulated_time_s;
}

// QE's pw.x: rank 0 makes communicators of its own between an allreduce and two barriers
// that every rank makes. Its barriers were a phase apart from the others' and counted as
// time only, so the model's barriers were made by every rank but 0 and the synthesized run
// deadlocked at every count. Now they are rank 0's calls too.
TEST(RootClassTest, ARanksOwnCommunicatorsDoNotLeaveTheOthersWaiting) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::OwnCommunicators(n)));
  const AppModel m = BuildModel(sigs);
  testing::MemoryTrace real(testing::OwnCommunicators(24));
  const Validation v = ValidateAgainst(sigs, real, testing::TestMachine());
  EXPECT_EQ(v.collective_match, 1.0) << DescribeModel(m);
  EXPECT_LT(v.time_error, 0.02) << v.predicted_time_s << " vs " << v.real_simulated_time_s;
}

// Should the analysis ever put some members' calls of a collective in another phase, the
// model leaves that phase out and says why, rather than synthesizing a run that waits for
// ever: here rank 0's two barriers are taken out of the phase by hand.
TEST(RootClassTest, ACollectiveThatPartOfItsMembersMakeInAPhaseLeavesThePhaseOut) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) {
    sigs.push_back(testing::Analyze(testing::OwnCommunicators(n)));
    for (phases::Phase& p : sigs.back().phases) {
      for (phases::RankPhase& rp : p.ranks) {
        if (rp.rank != 0) continue;
        std::erase_if(rp.events,
                      [](const phases::PhaseEvent& e) { return e.kind == EventKind::kBarrier; });
      }
    }
  }
  const AppModel m = BuildModel(sigs);
  bool said = false;
  for (const std::string& w : m.warnings) {
    said = said || (w.find("left out") != std::string::npos &&
                    w.find("made by 3 of the 4 members of its communicator (the world)") !=
                        std::string::npos);
  }
  EXPECT_TRUE(said) << DescribeModel(m);
  EXPECT_NO_THROW(Predict(m, 24, testing::TestMachine()));
}

// A root that works like the others between the gather and the bcast stays in the ranks'
// class: no extra mask character.
TEST(RootClassTest, RootsThatWorkLikeTheOthersAreNotAClass) {
  testing::AppParams same;
  same.root_compute_ns = 2000;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::GatherWorkBcast(n, same)));
  const AppModel m = BuildModel(sigs);
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      for (const auto& cc : s.class_compute) EXPECT_EQ(cc.mask.size(), p.slots.size());
    }
  }
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// Traced at 8, 12 and 18 (2 x 2 x 2, 3 x 2 x 2, 3 x 3 x 2), one grid dimension always has 2
// ranks: +1 and -1 are the same neighbour there, so each slot's equation may pick either
// sign. At 27 (3 x 3 x 3) a send and its receive that picked the same sign would never meet
// (the synthesized run deadlocked). They are paired opposite, and the model warns that the
// direction along that dimension is a guess. The guess: the pairs (dx, dy, -1) and (dx, dy,
// +1) take the order in which the code visits its neighbours along the dimensions where the
// traces tell the sign (-1 before +1), and the two calls along that dimension alone, which at
// 8, 12 and 18 ranks also fit "rank XOR 1", stay on the phase's grid: every peer at 27 is
// right (the pattern zoo's 27-point halo had 62% of them right, 10% of the bytes wrong).
// Those two calls send 64 B at every count, which a line split along the dimension (128 /
// its extent) fits as well as the constant; no call follows a line whose extent changed, so
// the constant stays (DropUnsupportedLines) and the bytes at 27 are exact.
TEST(AmbiguousDirectionTest, SendAndReceiveArePairedOppositeWhereTheTracesCannotTell) {
  testing::AppParams few;
  few.iterations = 8;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 18}) sigs.push_back(testing::Analyze(testing::Halo27(n, few)));
  const AppModel m = BuildModel(sigs);
  bool warned = false;
  for (const auto& w : m.warnings) {
    warned = warned || (w.find("cannot tell") != std::string::npos &&
                        w.find("-1 before +1") != std::string::npos);
  }
  EXPECT_TRUE(warned) << DescribeModel(m);
  for (const PhaseModel& pm : m.phases) {
    for (const SlotModel& s : pm.slots) {
      if (s.peer) {
        EXPECT_NE(s.peer->family, patterns::Family::kXorExchange) << s.Describe();
      }
    }
  }
  PredictOptions quick;
  quick.noise_draws = 0;
  quick.intervals = false;
  testing::MemoryTrace real(testing::Halo27(27, few));
  const Validation v = ValidateAgainst(sigs, real, testing::TestMachine(), quick);  // no deadlock
  EXPECT_EQ(v.count, 27);
  EXPECT_GT(v.predicted_time_s, 0);
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-9) << DescribeModel(m);
  // With a count that has 3 ranks along every dimension, nothing is ambiguous.
  sigs.push_back(testing::Analyze(testing::Halo27(27, few)));
  const AppModel full = BuildModel(sigs);
  for (const auto& w : full.warnings) EXPECT_EQ(w.find("cannot tell"), std::string::npos) << w;
  testing::MemoryTrace real36(testing::Halo27(36, few));
  EXPECT_DOUBLE_EQ(ValidateAgainst(sigs, real36, testing::TestMachine(), quick).pattern_match, 1.0);
}

// A 3-D halo on an open grid with 2 ranks along x at every traced count (8, 12, 18: PETSc's
// DMDA): each rank has one of its two x neighbours there, so that call fits "rank XOR 1",
// and the other calls fit a 2-D grid with neighbours at +-2 along its rows as well as the
// 3-D one. The phase goes to the grid on which the XOR call is a stencil too, and the XOR
// call becomes the open mesh's -1 and +1 (the other calls are open, so the x ones are too):
// at 27 (3 x 3 x 3) the ranks inside make both, and the faces along x follow the grid.
// Before, 26% of the messages of PETSc's Poisson run at 27 had the right peer, 6% at 36.
TEST(AmbiguousDirectionTest, AnOpenHaloWithTwoRanksAlongXTakesTheGridTheXorCallIsOn) {
  testing::AppParams few;
  few.iterations = 6;
  few.domain = 48;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 18}) sigs.push_back(testing::Analyze(testing::DmdaHalo3D(n, few)));
  const AppModel m = BuildModel(sigs);
  for (const PhaseModel& pm : m.phases) {
    for (const SlotModel& s : pm.slots) {
      if (s.peer) {
        EXPECT_EQ(s.peer->family, patterns::Family::kStencil) << s.Describe();
      }
    }
  }
  for (int n : {27, 36}) {
    const Validation v = testing::QuickValidate(sigs, testing::DmdaHalo3D(n, few));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << "at " << n << "\n" << DescribeModel(m);
    EXPECT_LT(v.bytes_error, 1e-3) << "at " << n;
  }
}

// The phase that holds the broadcasts of a moving root at one count (exactly one): a loop of
// `weight` occurrences in which every rank makes one call per entry of `steps`, its root
// moving as that entry says.
const phases::Phase& MovingRootLoop(const phases::Signature& sig, double weight,
                                    const std::vector<phases::RootStep>& steps) {
  const phases::Phase* found = nullptr;
  for (const auto& ph : sig.phases) {
    if (ph.description.find("moving root") == std::string::npos) continue;
    EXPECT_EQ(found, nullptr) << sig.nprocs << ": " << ph.description;
    found = &ph;
  }
  if (found == nullptr) throw std::runtime_error("no phase with a moving root");
  EXPECT_DOUBLE_EQ(found->weight, weight) << sig.nprocs;
  for (const auto& rp : found->ranks) {
    std::vector<phases::RootStep> got;
    for (const auto& e : rp.events) got.push_back(e.root_step);
    EXPECT_EQ(got, steps) << sig.nprocs << ", rank " << rp.rank << ": " << found->description;
  }
  return *found;
}

// An LU factorization's panels: the root of iteration k's broadcasts is rank k mod P, which
// factors the panel alone before them. Each root was a different call, so the loop's period
// was P iterations and its phases differed at every count ("the phases of the traces do not
// correspond"). Now the root is "the next rank" (then "the same" for the pivots), the loop
// is one phase of every iteration but the first, the root's work before the broadcast is
// apart from the others' (averaged, the ranks that wait for the panel would have computed
// it), and the roots, bytes and time are right at counts never traced, from a saved model
// and a saved signature too.
TEST(MovingRootTest, PanelOwnerKModPIsOneLoopWithTheRootsWorkApart) {
  testing::AppParams p;
  p.iterations = 30;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::PanelBroadcast(n, p)));
  for (const auto& sig : sigs) {
    const phases::Phase& loop =
        MovingRootLoop(sig, p.iterations - 1, {phases::RootStep::kNext, phases::RootStep::kSame});
    for (const auto& rp : loop.ranks) {
      ASSERT_EQ(rp.events.size(), 2u) << loop.description;
      EXPECT_EQ(rp.events[0].peer, kNoRank);
      // The panel's bytes and work at the root, none of it elsewhere.
      EXPECT_GT(rp.events[0].root_cpu_ns.mean, 0.9 * p.compute_ns / 4);
      EXPECT_LT(rp.events[0].compute.cpu_ns.mean, p.compute_ns / sig.nprocs);
      EXPECT_DOUBLE_EQ(rp.events[0].root_bytes.mean, 8 * p.domain / sig.nprocs);
      EXPECT_DOUBLE_EQ(rp.events[0].bytes.mean, 0);
      EXPECT_DOUBLE_EQ(rp.events[0].recv_bytes.mean, 8 * p.domain / sig.nprocs);
    }
    EXPECT_EQ(phases::SignatureFromJson(phases::SignatureToJson(sig), "test"), sig);
  }
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("root the next rank after the previous bcast's"), std::string::npos) << text;
  EXPECT_NE(text.find("root the same as the previous bcast's"), std::string::npos) << text;
  // What the root adds is its panel: the same at every count (the update cancels).
  EXPECT_NE(text.find("CPU ns the root adds before it ≈ 1·10^9, "), std::string::npos) << text;
  for (int target : {16, 20}) {
    const Validation v = testing::QuickValidate(sigs, testing::PanelBroadcast(target, p));
    EXPECT_DOUBLE_EQ(v.collective_match, 1.0) << target;
    EXPECT_LT(v.bytes_error, 1e-6) << target;
    EXPECT_LT(v.compute_error, 0.02) << target;
    EXPECT_LT(v.time_error, 0.02) << target << "\n" << text;
  }
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(loaded), ModelToJson(m));
}

// SUMMA's broadcasts along rows (root k mod sqrt(P)) and along columns (a root that moves
// backwards): roots are ranks of the row and column communicators, which follow from each
// rank's own communicators at a count never traced.
TEST(MovingRootTest, SummaRootsMoveAlongRowsAndBackAlongColumns) {
  testing::AppParams p;
  p.iterations = 20;
  p.domain = 2000;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25}) sigs.push_back(testing::Analyze(testing::SummaBroadcasts(n, p)));
  for (const auto& sig : sigs) {
    // On a column of 2 ranks the previous rank is the next one.
    MovingRootLoop(sig, p.iterations - 1,
                   {phases::RootStep::kNext,
                    sig.nprocs == 4 ? phases::RootStep::kNext : phases::RootStep::kPrevious});
  }
  const Validation v = testing::QuickValidate(sigs, testing::SummaBroadcasts(36, p));
  EXPECT_DOUBLE_EQ(v.collective_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-4);  // blocks of 8 x 2000^2 / 36 bytes, rounded
  EXPECT_LT(v.time_error, 0.02) << DescribeModel(BuildModel(sigs));
}

// The checks every own-order test makes: at each target, peers exact and compute and time
// within 2% of the synthetic run; and a saved model keeps the ranks' own order.
void ExpectExactAtTargets(const std::vector<phases::Signature>& sigs,
                          const std::function<TraceData(int)>& app,
                          std::initializer_list<int> targets, const std::string& text) {
  for (int target : targets) {
    const Validation v = testing::QuickValidate(sigs, app(target));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << target;
    EXPECT_LT(v.compute_error, 0.02) << target;
    EXPECT_LT(v.time_error, 0.02) << target << "\n" << text;
  }
}

void ExpectOwnOrdersSurviveJson(const AppModel& m) {
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  ASSERT_EQ(loaded.phases.size(), m.phases.size());
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    EXPECT_EQ(loaded.phases[i].reordered_ranks, m.phases[i].reordered_ranks);
    EXPECT_EQ(loaded.phases[i].own_order, m.phases[i].own_order);
  }
}

// A red-black ring (even ranks send first, odd ranks receive first, with synchronous
// sends): the odd ranks' loop body is the even ranks' seen from its second call. Synthesized
// in one order for every rank, every rank sent first and the run deadlocked; with the odd
// ranks' compute before the send averaged with the even ranks' before the receive, the
// prediction was twice the real time. Now the odd ranks start at the receive and are a
// compute class of their own, at counts never traced, and saved models keep it.
TEST(RotatedRanksTest, RedBlackRingKeepsEachRanksOrderAndCompute) {
  testing::AppParams p;
  p.iterations = 12;
  p.domain = 2e6;  // 16 KB and more per message: rendezvous on the test machine
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::RedBlackRing(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("call order: the odd ranks start at call 1"), std::string::npos) << text;
  ExpectExactAtTargets(
      sigs, [&p](int n) { return testing::RedBlackRing(n, p); }, {16, 18}, text);
  ExpectOwnOrdersSurviveJson(m);
  // Version 2 files named a rotation by its first slot.
  std::string v2 = ModelToJson(m);
  const std::size_t key = v2.find("\"own_order\": [");
  ASSERT_NE(key, std::string::npos);
  const std::size_t end = v2.find(']', key);
  v2.replace(key, end + 1 - key, "\"rotated_start\": 1");
  v2.replace(v2.find("\"reordered_ranks\""), 17, "\"rotated_ranks\"");
  const AppModel old = ModelFromJson(v2, "v2.json");
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    EXPECT_EQ(old.phases[i].reordered_ranks, m.phases[i].reordered_ranks);
    EXPECT_EQ(old.phases[i].own_order, m.phases[i].own_order);
  }
}

// A checkerboard halo with blocking calls: in each direction the ranks with x + y even on
// the grid send first, the others receive first. The black ranks' order is no rotation of
// the red ranks' (R40 S40 R41 S41 ... against S40 R40 S41 R41 ...), and aligned in order
// their calls joined slots going the other way: no family reproduced the maps. Now each
// call joins the slot going its way, the black ranks keep their own order (a permutation),
// and they are the ranks of one grid parity at every count - which on a grid with an even
// row length are not the odd ranks.
TEST(RotatedRanksTest, CheckerboardKeepsEachRanksOrderOnTheGridParity) {
  testing::AppParams p;
  p.iterations = 10;
  p.domain = 2e6;  // rendezvous-sized messages
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::Checkerboard(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("call order: the ranks with x + y odd on the MPI_Dims_create(P, 2) grid "
                      "(row-major, as MPI_Cart_create) make the calls in the order 1, 0, 3, 2, "
                      "5, 4, 7, 6"),
            std::string::npos)
      << text;
  // A receive from MPI_PROC_NULL counts no bytes: the others' receives are posted as large
  // as the messages they get (averaged in, they were smaller, and the replay reported
  // truncated receives).
  int receives = 0;
  for (const PhaseModel& ph : m.phases) {
    if (ph.reordered_ranks == RankSet::kNone) continue;
    for (const SlotModel& s : ph.slots) {
      if (s.kind != EventKind::kRecv) continue;
      ++receives;
      EXPECT_NEAR(s.bytes.At(24), 8 * p.domain / 24, 0.001 * 8 * p.domain / 24);
    }
  }
  EXPECT_EQ(receives, 4);
  ExpectExactAtTargets(
      sigs, [&p](int n) { return testing::Checkerboard(n, p); }, {16, 20, 24}, text);
  ExpectOwnOrdersSurviveJson(m);
  // An order that is not a permutation of the slots is refused, naming the phase.
  std::string bad = ModelToJson(m);
  const std::size_t at = bad.find("\"own_order\": [");
  ASSERT_NE(at, std::string::npos);
  bad.insert(at + 14, "0, ");
  try {
    (void)ModelFromJson(bad, "bad.json");
    ADD_FAILURE() << "a repeated slot in own_order was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("own_order must list each of its"), std::string::npos)
        << e.what();
  }
}

// The trees' traces: 10 iterations of rendezvous-sized messages at 4, 6, 8, 12, 16 ranks; and
// the checks at counts with more levels (peers exact, compute and time within 2%).
std::vector<phases::Signature> TreeSigs(const std::function<TraceData(int)>& app) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16}) sigs.push_back(testing::Analyze(app(n)));
  return sigs;
}
testing::AppParams TreeParams() {
  testing::AppParams p;
  p.iterations = 10;
  p.domain = 2e6;
  return p;
}

// A binomial-tree reduction and broadcast written by hand. A parent's receive from its
// child (rank + 2^b) and a child's receive from its parent (rank - 2^b) have the same bit,
// and aligned as one call no family reproduced their maps: the application was refused.
// Aligned by bit and side, each level's calls are one side of an exchange by bit (a family
// member of its own); the top level, which at the largest count only the root and one rank
// make, is arranged as the levels below it, so the levels are steps by bit that grow: at 24
// ranks (5 levels, rank 0 with rank 16) and beyond, every level is there. The burst before
// the broadcast's first send (the root's work after the reduction) is the first step's at
// every count, not the mean of a step that is first at one count and later at another.
TEST(TreeTest, HandWrittenBinomialTreeGrowsItsLevels) {
  const testing::AppParams p = TreeParams();
  const auto sigs = TreeSigs([&p](int n) { return testing::BinomialTree(n, p); });
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find("lowest first); at a count with more bits, a step like bit 3's for each "
                      "further bit (at P = 64: bits 0-5)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("highest first); at a count with more bits"), std::string::npos) << text;
  EXPECT_NE(text.find("from the ranks whose lowest set bit is b"), std::string::npos) << text;
  EXPECT_EQ(text.find("are not a run of alike steps by bit"), std::string::npos) << text;
  ExpectExactAtTargets(
      sigs, [&p](int n) { return testing::BinomialTree(n, p); }, {24, 32, 40, 64}, text);
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(loaded), ModelToJson(m));
  // The prediction's table says what a level does once per kind of call, not a receive and
  // a send per level (20 slots at 1024: 10 levels up, 10 down).
  for (const PhaseModel& pm : m.phases) {
    if (pm.slots.size() < 8) continue;
    EXPECT_EQ(DescribePhaseAt(PhaseAt(pm, m.counts, 1024), 1024),
              "20 send, 15.3 KiB each; 20 recv, 15.3 KiB each");
  }
  // One buffer per message whatever the subtree below the child: not a gather.
  EXPECT_EQ(text.find("per rank of the subtree"), std::string::npos) << text;
  for (const PhaseModel& pm : m.phases) {
    for (const SlotModel& s : pm.slots) EXPECT_FALSE(s.subtree_bytes);
  }
}

// The same tree as a gather to rank 0 and the scatter back: a message carries the blocks of
// the child's whole subtree, min(2^b, P - child) of them. Each level's bytes were the mean
// over its ranks, and the level that only the largest count has (bit 3 at 12 and 16, where
// its subtree is cut at 12) a law of two points: at 24, 51% more bytes than the run sent.
// Modelled per rank of the subtree, every level's messages, and those of the levels a larger
// count adds, are the right size at every rank.
TEST(TreeTest, HandWrittenBinomialGatherCarriesItsSubtrees) {
  const testing::AppParams p = TreeParams();
  auto app = [&p](int n) { return testing::BinomialTree(n, p, false, /*gather=*/true); };
  const auto sigs = TreeSigs(app);
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find("bytes per message per rank of the subtree it carries"), std::string::npos)
      << text;
  for (int target : {24, 32, 40, 64}) {
    const Validation v = testing::QuickValidate(sigs, app(target));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << target;
    // (The law is of P; the trace's sizes are whole doubles: a few bytes in 10^8.)
    EXPECT_LT(v.bytes_error, 1e-5) << target << "\n" << text;
    EXPECT_LT(v.compute_error, 0.02) << target;
    EXPECT_LT(v.time_error, 0.02) << target << "\n" << text;
  }
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(loaded), ModelToJson(m));
  // The largest message of a level is its first child's full subtree: at 1024, 2^9 ranks of
  // 2e6 x 8 / 1024 / 4 bytes each (1.9 MiB) at the top level (the law is of P, not rounded
  // to the trace's whole doubles).
  bool top = false;
  for (const PhaseModel& pm : m.phases) {
    if (pm.slots.size() < 8) continue;
    const PhaseModel at = PhaseAt(pm, m.counts, 1024);
    for (const SlotModel& s : at.slots) {
      if (s.subtree_bytes && s.peer->bits[0].At(10) == 9) {
        EXPECT_NEAR(s.BytesAt(1024), 512.0 * 3906.25, 512.0) << s.Describe();
        top = true;
      }
    }
  }
  EXPECT_TRUE(top) << text;
  // A saved model whose subtree law is on a call that is no tree level is refused.
  std::vector<phases::Signature> torus;
  for (int n : {4, 9, 16}) torus.push_back(testing::Analyze(testing::TorusStencil(n, {})));
  std::string bad = ModelToJson(BuildModel(torus));
  const std::size_t key = bad.find("\"face_dim\"");
  ASSERT_NE(key, std::string::npos);
  bad.insert(key, "\"subtree_bytes\": true, ");
  try {
    ModelFromJson(bad, "bad.json");
    ADD_FAILURE() << "a subtree law on a call that is no tree level was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: phase"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("subtree_bytes needs"), std::string::npos) << e.what();
  }
}

// The same tree with MPI_Isend / MPI_Irecv and an MPI_Wait after each: aligned by bit and
// side, each wait goes the way of the call whose request it completes, so a level's waits
// stay with the level (aligned freely, waits of different levels shared a slot that no rank
// set describes) and a level is one step: its calls and their waits.
TEST(TreeTest, NonblockingBinomialTreeKeepsEachLevelsWaits) {
  const testing::AppParams p = TreeParams();
  const auto sigs = TreeSigs([&p](int n) { return testing::BinomialTree(n, p, true); });
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find("lowest first); at a count with more bits, a step like bit 3's for each "
                      "further bit (at P = 64: bits 0-5)"),
            std::string::npos)
      << text;
  ExpectExactAtTargets(
      sigs, [&p](int n) { return testing::BinomialTree(n, p, true); }, {24, 64}, text);
}

// The same trees rooted elsewhere than rank 0, their ranks counted from the root as MPI
// libraries count them (v = (rank - root) mod P): at the last rank (a code's output rank)
// and at rank 2. Pairs are one bit apart in v, not in the ranks, so each level was refused
// ("no communication-pattern family reproduces the traced maps"). Aligned and fitted from
// the root the pairs show, the levels grow as rank 0's do, and a gather's messages carry
// their subtrees counted from that root.
struct RootedTreeCase {
  int root;  // BinomialTree's: negative counts from the end
  const char* named;
  bool nonblocking, gather;
};
void PrintTo(const RootedTreeCase& c, std::ostream* os) {
  *os << "root " << c.named << (c.nonblocking ? ", nonblocking" : "")
      << (c.gather ? ", gather" : "");
}
class RootedTreeTest : public ::testing::TestWithParam<RootedTreeCase> {};

TEST_P(RootedTreeTest, LevelsCountRanksFromTheRoot) {
  const RootedTreeCase c = GetParam();
  const testing::AppParams p = TreeParams();
  auto app = [&p, &c](int n) {
    return testing::BinomialTree(n, p, c.nonblocking, c.gather, c.root);
  };
  const auto sigs = TreeSigs(app);
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find(std::string("binomial tree, children (root ") + c.named + ")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(std::string("ranks counted from the root ") + c.named), std::string::npos)
      << text;
  EXPECT_NE(text.find("(at P = 64: bits 0-5)"), std::string::npos) << text;
  EXPECT_EQ(text.find("per rank of the subtree") != std::string::npos, c.gather) << text;
  for (int target : {24, 25, 33, 40}) {
    const Validation v = testing::QuickValidate(sigs, app(target));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << target << "\n" << text;
    EXPECT_LT(v.bytes_error, 1e-5) << target << "\n" << text;
    EXPECT_LT(v.time_error, 0.02) << target << "\n" << text;
  }
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(loaded), ModelToJson(m));
}

INSTANTIATE_TEST_SUITE_P(Roots, RootedTreeTest,
                         ::testing::Values(RootedTreeCase{-1, "P-1", false, false},
                                           RootedTreeCase{-1, "P-1", true, false},
                                           RootedTreeCase{-1, "P-1", false, true},
                                           RootedTreeCase{2, "2", false, true}),
                         [](const ::testing::TestParamInfo<RootedTreeCase>& param_info) {
                           const RootedTreeCase& c = param_info.param;
                           return std::string(c.root < 0 ? "Last" : "Rank2") +
                                  (c.nonblocking ? "Nonblocking" : "") + (c.gather ? "Gather" : "");
                         });

// The other tree codes write by hand: a broadcast by doubling (at step k the ranks below 2^k
// send to rank + 2^k). Each step's sends and receives are one side of an exchange by bit.
TEST(TreeTest, BroadcastByDoublingGrowsItsSteps) {
  const testing::AppParams p = TreeParams();
  const auto sigs = TreeSigs([&p](int n) { return testing::DoublingBroadcast(n, p); });
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find("from the ranks below 2^b"), std::string::npos) << text;
  EXPECT_NE(text.find("(at P = 64: bits 0-5)"), std::string::npos) << text;
  ExpectExactAtTargets(
      sigs, [&p](int n) { return testing::DoublingBroadcast(n, p); }, {24, 33, 64}, text);
}

// The broadcast by doubling rooted at the last rank, its ranks counted from it.
TEST(TreeTest, BroadcastByDoublingFromTheLastRank) {
  const testing::AppParams p = TreeParams();
  auto app = [&p](int n) { return testing::DoublingBroadcast(n, p, -1); };
  const auto sigs = TreeSigs(app);
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m, 64);
  EXPECT_NE(text.find("doubling tree, parents (root P-1)"), std::string::npos) << text;
  EXPECT_NE(text.find("(at P = 64: bits 0-5)"), std::string::npos) << text;
  ExpectExactAtTargets(sigs, app, {24, 33, 64}, text);
}

// The grid sets: on MPI_Dims_create(P, 2) = 4 x 4 (row length 4) x + y odd is ranks 1, 3, 4,
// 6, ...; on 4 x 3 (row length 3) it is the odd ranks.
TEST(RotatedRanksTest, GridParitySetsFollowMpiDimsCreate) {
  EXPECT_FALSE(InRankSet(RankSet::kGrid2Odd, 0, 16));
  EXPECT_TRUE(InRankSet(RankSet::kGrid2Odd, 1, 16));
  EXPECT_TRUE(InRankSet(RankSet::kGrid2Odd, 4, 16));
  EXPECT_FALSE(InRankSet(RankSet::kGrid2Odd, 5, 16));
  for (int r = 0; r < 12; ++r) EXPECT_EQ(InRankSet(RankSet::kGrid2Odd, r, 12), r % 2 == 1) << r;
  // 12 = 4 x 3 with the first extent fastest: rows of 4.
  EXPECT_TRUE(InRankSet(RankSet::kGrid2FastFirstEven, 5, 12));
  EXPECT_FALSE(InRankSet(RankSet::kGrid2FastFirstEven, 4, 12));
  // 3-D: 8 = 2 x 2 x 2, x + y + z even for ranks 0, 3, 5, 6.
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(InRankSet(RankSet::kGrid3Even, r, 8), r == 0 || r == 3 || r == 5 || r == 6) << r;
  }
  for (RankSet set : AllRankSets()) EXPECT_NE(RankSetName(set), "none");
}

// Odd-even transposition sort: the even ranks' step order is the odd ranks' from its second
// call, and the ranks at the ends make only one of the two calls (rank 0 never has a partner
// below it). Rank 0 fits the even ranks' order and the odd ranks' alike; counted as one of
// the odd ranks', no rank set fitted, every rank was synthesized in the odd ranks' order
// and half the messages went to the wrong partner (53% at 16 ranks, time 26% off). And the
// sort's opening burst, before the even ranks' call 1 and the odd ranks' call 0, is noise
// shared by the ranks in the same step: drawn by slot, the partners drew apart at every
// step and waited for each other.
TEST(RotatedRanksTest, OddEvenSortEndsFitEitherOrderAndShareTheirStepsNoise) {
  testing::AppParams p;
  p.iterations = 4;
  p.domain = 2e5;
  p.compute_ns = 4e8;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16}) sigs.push_back(testing::Analyze(testing::OddEvenSort(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("call order: the even ranks start at call 1"), std::string::npos) << text;
  for (int target : {24, 32}) {
    const Validation v = testing::QuickValidate(sigs, testing::OddEvenSort(target, p));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << target;
    EXPECT_LT(v.bytes_error, 1e-4) << target;
    // The per-call compute laws come from 5 counts within the noise floor's Occam rule (a
    // single power where c0 + c1 / P is exact): a few percent off at 24 and 32. The time
    // must be off by no more than that: no waiting the real run does not have.
    EXPECT_LT(v.compute_error, 0.05) << target;
    EXPECT_LT(v.time_error, v.compute_error + 0.01) << target << "\n" << text;
  }
}

// KBA sweeps: a corner rank that ends one sweep with work and begins the next with work
// computes both in one burst, once per sweep, so its bursts before that call vary by a
// quarter of their mean while every other rank's do not vary at all. Pooled over the slot
// that was a spread of every rank's own (a third of it here), drawn for every burst of every
// rank, and the pipeline waited on stragglers the real run does not have (the pattern zoo's
// KBA: 16% / 15% slow at 16 / 24 ranks). Each class of ranks now keeps its own spread.
TEST(ClassNoiseTest, ASweepCornersStructuralSpreadStaysWithTheCorners) {
  testing::AppParams p;
  p.iterations = 6;
  p.domain = 2e5;
  p.compute_ns = 4e8;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25}) sigs.push_back(testing::Analyze(testing::KbaSweeps(n, p)));
  const AppModel m = BuildModel(sigs);
  int quiet = 0, noisy = 0;
  double pooled = 0;
  for (const PhaseModel& ph : m.phases) {
    for (const SlotModel& s : ph.slots) {
      pooled = std::max(pooled, s.cpu_spread_within);
      for (const auto& cc : s.class_compute) {
        if (cc.spread_within < 0) continue;
        cc.spread_within < 1e-3 ? ++quiet : ++noisy;
      }
    }
  }
  EXPECT_GT(pooled, 0.05) << DescribeModel(m);  // what every rank drew before
  EXPECT_GT(quiet, 2 * noisy) << DescribeModel(m);
  EXPECT_GT(noisy, 0) << DescribeModel(m);
  for (int target : {36, 49}) {
    const Validation v = testing::QuickValidate(sigs, testing::KbaSweeps(target, p));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << target;
    EXPECT_LT(v.compute_error, 0.01) << target;
    EXPECT_LT(v.time_error, 0.03) << target;
  }
  // A saved model keeps the classes' spreads.
  const AppModel back = ModelFromJson(ModelToJson(m), "mem");
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    for (std::size_t k = 0; k < m.phases[i].slots.size(); ++k) {
      const auto& a = m.phases[i].slots[k].class_compute;
      const auto& b = back.phases[i].slots[k].class_compute;
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t c = 0; c < a.size(); ++c) EXPECT_EQ(a[c].spread_within, b[c].spread_within);
    }
  }
}

// The same ring, the few us between an odd rank's two calls differing from rank to rank
// (1.5 to 4.5 us) while the main burst is the same on every rank: the spread between ranks
// is that of the CPU the call holds, not the mean of each class's relative spread (25% from
// the small bursts alone). Counted as 25% of every burst, the synthesized ranks computed
// 10-20% apart and the slowest held the ring up.
TEST(RotatedRanksTest, SmallBurstsVaryingBetweenRanksAreNoSpreadOfTheLargeOnes) {
  testing::AppParams p;
  p.iterations = 12;
  p.domain = 2e6;
  auto ring = [&](int n) {
    TraceData d = testing::RedBlackRing(n, p);
    for (int r = 1; r < n; r += 2) {
      for (Event& e : d.ranks[static_cast<std::size_t>(r)]) {
        if (e.kind == EventKind::kCompute && e.cpu_ns == 3000) e.cpu_ns = 1500 * (1 + r % 3);
      }
    }
    return d;
  };
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(ring(n)));
  const AppModel m = BuildModel(sigs);
  for (const PhaseModel& ph : m.phases) {
    for (const SlotModel& s : ph.slots) {
      EXPECT_LT(s.cpu_spread_between, 0.01) << DescribeModel(m);
    }
  }
  const Validation v = testing::QuickValidate(sigs, ring(18));
  EXPECT_LT(v.time_error, 0.02);
}

// A ring halo overlapped with work by polling (MPI_Testall after each chunk of work until
// the messages are in): the completion is a test that never blocks, found after a number of
// chunks that depends on when the messages arrived. The signature says the completions were
// tests; the model makes the call a polled one, synthesized as a test that completes
// nothing and a wait after the burst that follows it (before the rank's next call); and the
// bursts around it, cut where the messages arrived, draw no spread: drawn as noise, the cut
// made the synthesized ranks wait for each other and the run was 29% slow.
TEST(PollingTest, APolledCompletionIsATestWhoseWaitComesBeforeTheNextCall) {
  testing::AppParams p;
  p.iterations = 20;
  p.domain = 2e5;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::PolledRing(n, p)));
  bool tested = false;
  for (const phases::Phase& ph : sigs.back().phases) {
    for (const phases::PhaseEvent& e : ph.ranks.front().events) {
      tested = tested || (e.kind == EventKind::kWaitall && e.tested.n > 0 && e.tested.mean == 1);
    }
  }
  EXPECT_TRUE(tested) << phases::FormatSignatureTable(sigs.back());
  EXPECT_EQ(phases::SignatureFromJson(phases::SignatureToJson(sigs.back()), "t"), sigs.back());
  const AppModel m = BuildModel(sigs);
  bool polled = false;
  for (const PhaseModel& ph : m.phases) {
    for (const SlotModel& s : ph.slots) polled = polled || s.polled;
  }
  EXPECT_TRUE(polled) << DescribeModel(m);
  EXPECT_NE(DescribeModel(m).find("found by polling"), std::string::npos);
  EXPECT_EQ(ModelToJson(ModelFromJson(ModelToJson(m), "t")), ModelToJson(m));
  const SynthesizedTrace t(m, 16);
  auto s = t.OpenRank(3);
  Event e;
  std::vector<EventKind> kinds;
  while (s->Next(&e)) {
    if (e.kind == EventKind::kTestall) {
      EXPECT_TRUE(e.completed.empty());
    }
    kinds.push_back(e.kind);
  }
  const auto test = std::find(kinds.begin(), kinds.end(), EventKind::kTestall);
  ASSERT_NE(test, kinds.end());
  ASSERT_LT(test + 2, kinds.end());
  EXPECT_EQ(*(test + 1), EventKind::kCompute);
  EXPECT_EQ(*(test + 2), EventKind::kWaitall);
  const Validation v = testing::QuickValidate(sigs, testing::PolledRing(16, p));
  EXPECT_LT(v.time_error, 0.05) << v.predicted_time_s << " vs " << v.real_simulated_time_s;
}

// The phase with the receives of each signature: expects exactly one per signature, of
// weight `weight` (every iteration of the loop in one phase).
std::vector<const phases::Phase*> HaloPhases(const std::vector<phases::Signature>& sigs,
                                             double weight) {
  std::vector<const phases::Phase*> halos;
  for (const auto& sig : sigs) {
    int found = 0;
    for (const auto& ph : sig.phases) {
      if (ph.description.find("irecv") == std::string::npos) continue;
      ++found;
      EXPECT_DOUBLE_EQ(ph.weight, weight) << sig.nprocs << ": " << ph.description;
      halos.push_back(&ph);
    }
    EXPECT_EQ(found, 1) << sig.nprocs;
  }
  return halos;
}

// A halo whose receives name no source, closed by a waitall: a send to the rank whose
// message the waitall happened to complete last was taken for a master's reply to whoever
// answered, so the iterations' symbols changed with the arrival order and the loop fell
// into a dozen phases that did not correspond across counts. One phase, every iteration,
// partners right at a count never traced, and the time too.
TEST(WildcardHaloTest, SendsAfterAWaitallOfSeveralWildcardReceivesAreNoReplies) {
  testing::AppParams p;
  p.iterations = 12;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::AnySourceRing(n, p)));
  for (const phases::Phase* halo : HaloPhases(sigs, 12)) {
    for (const auto& rp : halo->ranks) {
      for (const auto& e : rp.events) EXPECT_FALSE(e.reply) << halo->description;
    }
  }
  // The two receives keep their own bursts (told apart by their tags): averaged, half the
  // work sat between them and the neighbours' sends waited for the second receive.
  const Validation v = testing::QuickValidate(sigs, testing::AnySourceRing(24, p));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.compute_error, 0.01);
  EXPECT_LT(v.time_error, 0.02);
}

// Receives handled with MPI_Waitsome until all are in: one call in most iterations, two in
// some (the first message alone, then the second), on some ranks. Those iterations were
// other phases, and the second waitsome a call made by a few ranks that no rule of P
// describes ("cannot tell which ranks make this call"). The calls that wait for the rest of
// the first one's requests are now one wait: one phase, predicted at a count never traced.
TEST(WaitsomeTest, AWaitsomeLoopUntilAllAreInIsOneWait) {
  testing::AppParams p;
  p.iterations = 12;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::WaitsomeRing(n, p)));
  HaloPhases(sigs, 12);
  const Validation v = testing::QuickValidate(sigs, testing::WaitsomeRing(24, p));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_LT(v.time_error, 0.03);
}

// The same loop with work after each completed receive (as codes that unpack a message as
// soon as it is in): where the first waitsome returns one message, half the work comes
// before the second; where it returns both, all of it after. The bursts around the
// waitsome are cut by when the messages arrived, not by the work, and draw no spread
// (drawn as noise, the cut made the synthesized ranks wait for each other).
TEST(WaitsomeTest, TheWorkAWaitsomeCutsIsNoNoise) {
  auto ring = [](int n) {
    testing::AppParams p;
    p.iterations = 24;
    TraceData d = testing::WaitsomeRing(n, p);
    const auto work = static_cast<std::int64_t>(4e9 / n / 4);
    for (int r = 0; r < n; ++r) {
      std::vector<Event> out;
      for (const Event& e : d.ranks[static_cast<std::size_t>(r)]) {
        if (e.kind == EventKind::kCompute && e.cpu_ns == 20000) continue;  // replaced below
        out.push_back(e);
        if (e.kind == EventKind::kWaitsome) {
          out.push_back(MakeCompute(work * static_cast<std::int64_t>(e.completed.size())));
        }
      }
      d.ranks[static_cast<std::size_t>(r)] = out;
    }
    return d;
  };
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(ring(n)));
  const Validation v = testing::QuickValidate(sigs, ring(24));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.time_error, 0.03) << v.predicted_time_s << " vs " << v.real_simulated_time_s;
}

// A pipeline along a chain of ranks that is not periodic: its pairs have the two
// displacements +1 and -1 at every count, which no grid explains with fewer, so no grid frame
// was found, the end ranks' calls were aligned without a direction, the last rank's receive
// from rank - 1 landed in the slot of the receives from rank + 1, and no family reproduced
// either slot. A line of P ranks is now a frame when it explains a few neighbours as well.
TEST(LineFrameTest, PipelineAlongAChainIsPredicted) {
  testing::AppParams p;
  p.iterations = 6;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::ChainSweeps(n, p)));
  const Validation v = testing::QuickValidate(sigs, testing::ChainSweeps(24, p));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_LT(v.time_error, 0.02);
}

// A program that picks its algorithm by the kind of count (an allreduce at powers of two, a
// recursive doubling written by hand at other counts) has other phases at 6 and 12 than at
// 4, 8 and 16: the error names the counts of one kind at which the phases correspond, and
// from those alone the model predicts 32.
TEST(CorrespondenceAdviceTest, CountsOfOneKindAreNamedWhenThePhasesDoNotCorrespond) {
  testing::AppParams p;
  p.iterations = 10;
  p.check_every = 0;
  auto program = [&p](int n) {
    TraceData d = testing::FoldedDoubling(n, p);
    if (!std::has_single_bit(static_cast<unsigned>(n))) return d;
    for (auto& events : d.ranks) {  // the exchange of each iteration becomes an allreduce
      std::vector<Event> out;
      for (const Event& e : events) {
        if (e.kind == EventKind::kIrecv) {
          if (out.empty() || out.back().kind != EventKind::kAllreduce)
            out.push_back(MakeCollective(EventKind::kAllreduce, e.bytes, e.bytes));
        } else if (e.kind != EventKind::kSend && e.kind != EventKind::kWait) {
          out.push_back(e);
        }
      }
      events = out;
    }
    return d;
  };
  std::vector<phases::Signature> mixed;
  for (int n : {4, 6, 8, 12, 16}) mixed.push_back(testing::Analyze(program(n)));
  try {
    BuildModel(mixed);
    FAIL() << "the phases of 4, 6, 8, 12 and 16 ranks were taken to correspond";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("occurs at 4, 8, 16 (the powers of two)"),
              std::string::npos)
        << e.what();
  }
  std::vector<phases::Signature> powers;
  for (int n : {4, 8, 16}) powers.push_back(testing::Analyze(program(n)));
  const Validation v = testing::QuickValidate(powers, program(32));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 0.01);
}

// The last relevant phase of a generated program's model (its loop), or nullptr.
const PhaseModel* LoopPhase(const AppModel& m) {
  const PhaseModel* loop = nullptr;
  for (const PhaseModel& pm : m.phases) {
    if (pm.relevant) loop = &pm;
  }
  return loop;
}

// Trained on `sigs`, the program `make` generates is predicted exactly at each of `counts`:
// every peer right, bytes and simulated time within 0.1%.
void ExpectExactAt(const std::vector<phases::Signature>& sigs,
                   const std::function<TraceData(int)>& make, std::initializer_list<int> counts) {
  for (const int n : counts) {
    const Validation v = testing::QuickValidate(sigs, make(n));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 0.001) << n;
    EXPECT_LT(v.time_error, 0.001) << n;
  }
}

// A recursive doubling written by hand, folded at counts that are not powers of two (the
// textbook fold): the ranks from P' = 2^floor(log2(P)) up send to rank - P', the first P' ranks
// exchange by bit, and the result goes back. Its phase sends and receives at 6 and 12 besides
// the exchange it makes at 4, 8 and 16 (one phase of the code all the same); its folds go
// another bit's way at each count (bit 2 at 6, bit 3 at 12) and are only made at some counts,
// as is their compute. Refused before ("the phases of the traces do not correspond"); now
// predicted exactly at 24 and 48 (folded, more steps) and 32 (no fold).
TEST(FoldedDoublingTest, ARecursiveDoublingWrittenByHandIsPredictedFromCountsOfBothKinds) {
  testing::AppParams p;
  p.iterations = 10;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16}) sigs.push_back(testing::Analyze(testing::FoldedDoubling(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string words = DescribeModel(m);
  EXPECT_NE(words.find("one step per bit of the rank (bits 0-3, lowest first)"), std::string::npos)
      << words;
  EXPECT_NE(words.find("fold onto the first 2^floor(log2 P) ranks"), std::string::npos) << words;
  EXPECT_NE(words.find("taken as 100% of the phase's CPU per rank"), std::string::npos) << words;
  // The share is kept in the model file.
  EXPECT_EQ(DescribeModel(ModelFromJson(ModelToJson(m), "m.json")), words);
  // What the loop does at a count: the folds where there are ranks beyond P', not at 32.
  const PhaseModel* loop = LoopPhase(m);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(DescribePhaseAt(PhaseAt(*loop, m.counts, 32), 32),
            "5 irecv, 39.4 KiB each; 5 send, 39.4 KiB each; 5 wait")
      << DescribePhaseAt(PhaseAt(*loop, m.counts, 32), 32);
  EXPECT_EQ(DescribePhaseAt(PhaseAt(*loop, m.counts, 24), 24),
            "6 send, 39.4 KiB each; 2 recv, 39.4 KiB each; 4 irecv, 39.4 KiB each; 4 wait");
  ExpectExactAt(sigs, [&p](int n) { return testing::FoldedDoubling(n, p); }, {24, 32, 48});
}

// The recursive doubling of MPICH's and Open MPI's allreduce, written by hand: of the first
// 2(P - P') ranks the even ones fold onto rank + 1, and the butterfly runs on the others
// renumbered, so at 6 and 12 its steps pair ranks that are not one bit apart (at 6, bit 0
// pairs ranks 1 and 3). Refused before ("no communication-pattern family reproduces" the
// bit-0 step); now each step is the exchange of the renumbered ranks and the fold its own
// call, predicted exactly at 24 and 48 (folded, more steps) and 32 (no fold).
TEST(FoldedDoublingTest, TheFoldOfMpiLibrariesIsPredictedFromCountsOfBothKinds) {
  testing::AppParams p;
  p.iterations = 10;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16})
    sigs.push_back(testing::Analyze(testing::PairFoldedDoubling(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string words = DescribeModel(m);
  EXPECT_NE(words.find("fold in pairs onto the odd ranks"), std::string::npos) << words;
  EXPECT_NE(words.find("pairwise exchange, folded in pairs: recursive doubling folded in pairs"),
            std::string::npos)
      << words;
  EXPECT_EQ(DescribeModel(ModelFromJson(ModelToJson(m), "m.json")), words);
  const PhaseModel* loop = LoopPhase(m);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(DescribePhaseAt(PhaseAt(*loop, m.counts, 32), 32),
            "5 irecv, 39.4 KiB each; 5 send, 39.4 KiB each; 5 wait")
      << DescribePhaseAt(PhaseAt(*loop, m.counts, 32), 32);
  ExpectExactAt(sigs, [&p](int n) { return testing::PairFoldedDoubling(n, p); }, {24, 32, 48});
}

// An all-to-all written as pairwise exchanges: step i sends to rank + i and receives from
// rank - i, blocking. The sends go round the ring one way and the receives the other: with
// the sources taken in the sends' order every rank waited for a partner that was sending
// elsewhere (a deadlock at every count). Each half keeps its own order now, and is written
// in the model file.
TEST(PairwiseExchangeTest, TheSourcesOfASendrecvKeepAnOrderOfTheirOwn) {
  testing::AppParams p;
  p.iterations = 4;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16}) sigs.push_back(testing::Analyze(testing::PairwiseExchange(n, p)));
  const AppModel m = BuildModel(sigs);
  const SlotModel* exchange = nullptr;
  for (const PhaseModel& pm : m.phases) {
    for (const SlotModel& s : pm.slots) {
      if (s.kind == EventKind::kSendrecv) exchange = &s;
    }
  }
  ASSERT_NE(exchange, nullptr);
  EXPECT_EQ(exchange->dest_order, DestOrder::kRing);
  EXPECT_EQ(exchange->recv_order, DestOrder::kRingBack);
  const std::string json = ModelToJson(m);
  EXPECT_NE(json.find("\"recv_order\": \"ring_back\""), std::string::npos);
  EXPECT_EQ(DescribeModel(ModelFromJson(json, "m.json")), DescribeModel(m));
  for (const int n : {24, 32}) {
    const Validation v = testing::QuickValidate(sigs, testing::PairwiseExchange(n, p));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 0.01) << n;
    EXPECT_LT(v.time_error, 0.01) << n;
  }
}

// Bruck's allgather: step k = 1, 2, 4, ... < P sends to (rank - k) mod P. At 4-12 ranks the
// sends were also a ring with offsets {-4, -2, -1, +4} (-4 and +4 the rank itself at 4),
// which sends to rank + 4 instead of rank - 8 at 16; the sources, fitted alone, were a ring
// of +1, +2, +4, +8 that lacks rank + 16 at 24 (a deadlock). Now both halves are the
// dissemination, and the sources the inverse of the sends.
TEST(DisseminationTest, BrucksAllgatherIsPredictedAtCountsWithMoreSteps) {
  testing::AppParams p;
  p.iterations = 4;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::Dissemination(n, p)));
  const AppModel m = BuildModel(sigs);
  const std::string words = DescribeModel(m);
  EXPECT_NE(words.find("sendrecv to dissemination: (src - 2^b) mod P for every b with 2^b < P"),
            std::string::npos)
      << words;
  EXPECT_NE(words.find("receives from dissemination: (src + 2^b) mod P"), std::string::npos)
      << words;
  // The block's bytes per message, (P - 1) blocks over ceil(log2 P) steps, are a staircase of
  // P (a law per message was 7.4%, 1.1% and 5.5% off at 16, 24, 33); per occurrence they are
  // (P - 1) blocks, split over the steps at the target.
  EXPECT_NE(words.find("bytes sent over an occurrence, split over its messages"), std::string::npos)
      << words;
  EXPECT_EQ(DescribeModel(ModelFromJson(ModelToJson(m), "m.json")), words);
  // At a count past the ranks MeanPartners counts one by one, a message still carries the
  // occurrence's bytes over the rank's 14 steps (2^13 < 8197).
  const PhaseModel* block = nullptr;
  for (const PhaseModel& pm : m.phases) {
    if (pm.block) block = &pm;
  }
  ASSERT_NE(block, nullptr) << words;
  const SlotModel& steps_slot = block->slots.front();
  ASSERT_TRUE(steps_slot.bytes_per_occurrence) << words;
  constexpr std::int64_t kLarge = 8197;
  EXPECT_NEAR(steps_slot.BytesAt(kLarge) * 14, steps_slot.bytes.At(double(kLarge)),
              1e-6 * steps_slot.bytes.At(double(kLarge)));
  for (const int n : {16, 24, 33}) {
    const Validation v = testing::QuickValidate(sigs, testing::Dissemination(n, p));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 0.001) << n;
    EXPECT_LT(v.time_error, 0.01) << n;
  }
  // With an allreduce after the steps the phase is no block of one exchange: its calls are
  // aligned by dissemination step (each its own call, rank - 1 and rank - 4 apart at 6 ranks,
  // where rank - 4 is also rank + 2) and the steps extend to the bits of the target, each step
  // with its own blocks (one law per block: a copy of the top step's law of P was 115% off
  // in bytes at 24 and 351% at 33).
  p.check_every = 1;
  sigs.clear();
  for (int n : {4, 6, 8, 12, 16}) sigs.push_back(testing::Analyze(testing::Dissemination(n, p)));
  const AppModel steps = BuildModel(sigs);
  EXPECT_NE(DescribeModel(steps).find("one step per bit"), std::string::npos)
      << DescribeModel(steps);
  EXPECT_NE(DescribeModel(steps).find("bytes sent per block (x min(2^b, P - 2^b) blocks"),
            std::string::npos)
      << DescribeModel(steps);
  EXPECT_EQ(DescribeModel(ModelFromJson(ModelToJson(steps), "m.json")), DescribeModel(steps));
  // A file that splits a step's bytes both ways is refused, naming the call.
  std::string both = ModelToJson(steps);
  const std::size_t at = both.find("\"step_blocks\": true");
  ASSERT_NE(at, std::string::npos);
  both.insert(at, "\"bytes_per_occurrence\": true, ");
  try {
    ModelFromJson(both, "both.json");
    FAIL() << "bytes_per_occurrence with step_blocks was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes_per_occurrence needs a repeated block"),
              std::string::npos)
        << e.what();
  }
  ExpectExactAt(sigs, [&p](int n) { return testing::Dissemination(n, p); }, {24, 33});
}

// A butterfly among the largest power of two of ranks, the others idle in it: at 6 and 12
// ranks 4-5 and 8-11 make no exchange, though rank XOR 2^k is a rank (an exchange among all
// ranks, partners >= P dropped, gives them partners). Each step is the exchange among the
// first 2^floor(log2 P) ranks (a folded exchange), so 24 and 48 (the steps of 16 and 32,
// more idle ranks) and 32 (one more step) are predicted exactly. No family fitted it before.
TEST(FoldedExchangeTest, AButterflyAmongTheFirstPowerOfTwoRanksIsPredicted) {
  testing::AppParams p;
  p.iterations = 20;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16})
    sigs.push_back(testing::Analyze(testing::PowerOfTwoButterfly(n, p)));
  const AppModel m = BuildModel(sigs);
  EXPECT_NE(DescribeModel(m).find("among the first P' ranks, src XOR 2^b for b in {0}"),
            std::string::npos)
      << DescribeModel(m);
  for (const int n : {24, 32, 48}) {
    const Validation v = testing::QuickValidate(sigs, testing::PowerOfTwoButterfly(n, p));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 0.01) << n;
    EXPECT_LT(v.time_error, 0.05) << n;
  }
}

// NAS MG: traced at 4, 8, 16, 32 (2 x 2 x 1, 2 x 2 x 2, 4 x 2 x 2, 4 x 4 x 2) the fastest
// dimension always has 1 or 2 ranks, where the receive from +1 (tag 1100) and the one from -1 (tag
// 1300) name one rank. Predicted at 64 (4 x 4 x 4): each call has one partner (not both neighbours:
// the messages along x doubled), the two receives come from opposite sides, and each send goes
// where the receive of its tag expects it (they deadlocked with both receives tagged 1100).
TEST(AmbiguousDirectionTest, TwoTaggedReceivesAlongAnAmbiguousDimensionComeFromBothSides) {
  testing::AppParams few;
  few.iterations = 8;
  few.check_every = 4;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 16, 32}) sigs.push_back(testing::Analyze(testing::MgHalo(n, few)));
  const Validation v = testing::QuickValidate(sigs, testing::MgHalo(64, few));
  EXPECT_EQ(v.count, 64);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << DescribeModel(BuildModel(sigs));
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// A torus stencil's iteration of 10 (no allreduce), its work split over two bursts as
// `split` says, traced at 4-36: its model, which must take the phase's total compute, and
// the compute of the prediction at 64 against the program generated there.
AppModel ExpectTotalledAndComputeRightAt64(const testing::AppParams& split) {
  testing::AppParams p = split;
  p.iterations = 10;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25, 36}) sigs.push_back(testing::Analyze(testing::TorusStencil(n, p)));
  AppModel m = BuildModel(sigs);
  bool totalled = false;
  for (const auto& ph : m.phases) totalled = totalled || ph.cpu_total.present;
  EXPECT_TRUE(totalled) << DescribeModel(m);
  const Validation v = testing::QuickValidate(sigs, testing::TorusStencil(64, p));
  EXPECT_LT(v.compute_error, 0.01) << DescribeModel(m);
  return m;
}

// The iteration's work (a fixed total split over P ranks) is computed in two bursts whose
// split changes from count to count (a loop whose end moves past the waitall): each burst
// follows no smooth law in P, their sum does. The phase's compute is fitted as one quantity
// and the prediction's compute is right; fitted call by call it is not.
TEST(PhaseComputeTest, BurstsThatTradeWorkAreFittedAsTheirSum) {
  testing::AppParams wobble;
  wobble.split_wobble = 0.3;
  const AppModel m = ExpectTotalledAndComputeRightAt64(wobble);
  EXPECT_NE(DescribeModel(m).find("summed over the calls"), std::string::npos);
  // Saved and loaded, the model predicts the same.
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    EXPECT_EQ(loaded.phases[i].cpu_total.present, m.phases[i].cpu_total.present);
    EXPECT_DOUBLE_EQ(loaded.phases[i].CpuScaleAt(64), m.phases[i].CpuScaleAt(64));
  }
}

// The same work split evenly between the two bursts at every count but 25, where a fifth
// more of it is before the waitall (a halo overlapped by polling that found its messages
// after more chunks of work in that run). The calls' laws, bent by 25, miss 36 by 17% when
// it is left out, and 64 by 22%; over all the counts their sum's leave-one-out error (10%)
// was not twice the phase total's (exact, floored at the 5% noise), so the total was not
// taken. Left out, the largest count is where they part: the total is taken, and the
// compute at 64 is right.
TEST(PhaseComputeTest, TheTotalIsTakenWhereTheCallsMissTheLargestCount) {
  testing::AppParams jump;
  jump.split_jump = 0.2;
  jump.split_jump_at = 25;
  ExpectTotalledAndComputeRightAt64(jump);
}

// Bursts that each follow a smooth law keep their own models (the paper's BT shift: the
// same burst before every exchange at every count).
TEST(PhaseComputeTest, SmoothBurstsKeepTheirOwnModels) {
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(testing::EastShift(n, 2892, 10)));
  const AppModel m = BuildModel(sigs);
  for (const auto& p : m.phases) EXPECT_FALSE(p.cpu_total.present) << DescribeModel(m);
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// Traced at 4, 6 and 8 (grids 2 x 2, 3 x 2, 4 x 2) and 12 (4 x 3): along a dimension of 2
// ranks the receives from -1 and +1 come from one rank, so the alignment cannot tell which is
// which there and puts the tag-2 receive in the tag-3 slot on some ranks. Voted over every
// call, both slots took tag 3 and the synthesized run at 16 deadlocked (every rank waiting
// for a tag-3 message its neighbour sent as tag 2). A slot's tag is voted where the partner
// tells the calls apart.
// A world split in two halves, each with a periodic MPI_Dims_create(P/2, 2) grid of its own,
// traced at 4-16: its halo is also an MPI_Dims_create(P, 3) grid at every one of those
// counts (2 x 4 x 2 at 16 either way), and that grid is the simpler rule. At 24 the two part
// (3 x 4 x 2 against 2 x 4 x 3) and only the first keeps each half's partners in its half.
// The calls are made on each half's communicator, and that decides: the model takes the
// components' grid. The same traces with the calls on the world keep the simpler rule
// (partners and faces wrong at 24: nothing in the traces tells them apart).
// The halves as blocks (`interleaved` false) or as the even and the odd ranks.
namespace {
void CheckCoupledHalves(bool interleaved) {
  testing::AppParams few;
  few.iterations = 6;
  few.check_every = 3;
  const patterns::GridShape components =
      interleaved ? patterns::GridShape::kInterleavedComponents : patterns::GridShape::kComponents;
  const std::string groups =
      interleaved ? "2 interleaved groups (rank % 2)" : "2 blocks of consecutive ranks";
  for (const bool on_world : {false, true}) {
    SCOPED_TRACE(on_world ? "calls on the world" : "calls on each half's communicator");
    std::vector<phases::Signature> sigs;
    for (int n : {4, 6, 8, 12, 16}) {
      sigs.push_back(testing::Analyze(testing::CoupledHalves(n, few, on_world, interleaved)));
    }
    const AppModel m = BuildModel(sigs);
    int halo_calls = 0;
    for (const auto& p : m.phases) {
      for (const auto& s : p.slots) {
        if (s.kind != EventKind::kIrecv && s.kind != EventKind::kIsend) continue;
        ASSERT_TRUE(s.peer.has_value());
        ++halo_calls;
        const patterns::GridShape shape = s.peer->grid.shape;
        if (on_world) {
          EXPECT_EQ(shape, patterns::GridShape::kDimsCreate) << s.peer->Describe();
        } else {
          EXPECT_EQ(shape, components) << s.peer->Describe();
          EXPECT_EQ(s.peer->grid.fixed, 2);
        }
      }
    }
    EXPECT_EQ(halo_calls, 8) << DescribeModel(m);
    // The choice is said, with the count from which the other grid leaves the halves.
    bool said = false;
    for (const std::string& w : m.warnings) {
      said = said || (w.find("made on sub-communicators (" + groups + ")") != std::string::npos &&
                      w.find("outside them from 18 ranks") != std::string::npos);
    }
    EXPECT_EQ(said, !on_world) << DescribeModel(m);
    for (const int n : {24, 36}) {
      const Validation v =
          testing::QuickValidate(sigs, testing::CoupledHalves(n, few, on_world, interleaved));
      if (on_world) {
        EXPECT_LT(v.pattern_match, 0.9) << n;  // and the faces are measured on the wrong grid
      } else {
        EXPECT_EQ(v.pattern_match, 1.0) << n << "\n" << DescribeModel(m);
        EXPECT_LT(v.bytes_error, 1e-9) << n;
      }
    }
  }
}
}  // namespace

TEST(CommunicatorGridTest, CallsOnEachHalfsCommunicatorChooseTheComponentsGrid) {
  CheckCoupledHalves(/*interleaved=*/false);
}

// The same halves made of the even and the odd ranks (MPI_Comm_split by rank % 2): at 4-16
// their grid is again an MPI_Dims_create(P, 3) grid in some order, parting from it at 18.
TEST(CommunicatorGridTest, InterleavedHalvesChooseTheInterleavedComponentsGrid) {
  CheckCoupledHalves(/*interleaved=*/true);
}

// The halves' exchanges made on the world (partners computed in world ranks), each half
// also reducing a norm over its own communicator every iteration: the norm's communicators
// hold every traced pair, so they decide as the calls' own would (blocks and interleaved).
TEST(CommunicatorGridTest, ANormOnEachHalfsCommunicatorChoosesTheGridForCallsOnTheWorld) {
  testing::AppParams few;
  few.iterations = 6;
  few.check_every = 3;
  few.part_norm = true;
  for (const bool interleaved : {false, true}) {
    SCOPED_TRACE(interleaved ? "interleaved" : "blocks");
    std::vector<phases::Signature> sigs;
    for (int n : {4, 6, 8, 12, 16}) {
      sigs.push_back(
          testing::Analyze(testing::CoupledHalves(n, few, /*on_world=*/true, interleaved)));
    }
    const AppModel m = BuildModel(sigs);
    bool said = false;
    for (const std::string& w : m.warnings) {
      said = said || (w.find("are made on the world, but at every traced count each partner "
                             "is in the caller's group of the sub-communicators its allreduce "
                             "runs on") != std::string::npos &&
                      w.find("from 18 ranks") != std::string::npos);
    }
    EXPECT_TRUE(said) << DescribeModel(m);
    for (const int n : {24, 36}) {
      const Validation v = testing::QuickValidate(
          sigs, testing::CoupledHalves(n, few, /*on_world=*/true, interleaved));
      EXPECT_EQ(v.pattern_match, 1.0) << n << "\n" << DescribeModel(m);
      EXPECT_LT(v.bytes_error, 1e-9) << n;
    }
  }
}

// The same, with each half's norm reduced only in the iterations that end with the world's
// check: the norm and the check are a phase of their own, and the exchanges' phase holds no
// collective of the halves. The other phase's norm decides; without it (no norm at all) the
// simpler grid stays, so the test fails if the evidence is ignored.
TEST(CommunicatorGridTest, ANormInAnotherPhaseChoosesTheGridForCallsOnTheWorld) {
  testing::AppParams few;
  few.iterations = 9;
  few.check_every = 3;
  few.part_norm_at_check = true;
  testing::AppParams none = few;
  none.part_norm_at_check = false;
  for (const bool interleaved : {false, true}) {
    SCOPED_TRACE(interleaved ? "interleaved" : "blocks");
    std::vector<phases::Signature> sigs, plain;
    for (int n : {4, 6, 8, 12, 16}) {
      sigs.push_back(
          testing::Analyze(testing::CoupledHalves(n, few, /*on_world=*/true, interleaved)));
      plain.push_back(
          testing::Analyze(testing::CoupledHalves(n, none, /*on_world=*/true, interleaved)));
    }
    const AppModel m = BuildModel(sigs);
    int said = 0;
    for (const std::string& w : m.warnings) {
      if (w.find("are made on the world, but at every traced count each partner is in the "
                 "caller's group of the sub-communicators phase ") != std::string::npos &&
          w.find("'s allreduce runs on") != std::string::npos &&
          w.find("from 18 ranks") != std::string::npos) {
        ++said;
      }
    }
    EXPECT_GE(said, 1) << DescribeModel(m);
    const AppModel p = BuildModel(plain);
    for (const int n : {24, 36}) {
      const Validation v = testing::QuickValidate(
          sigs, testing::CoupledHalves(n, few, /*on_world=*/true, interleaved));
      EXPECT_EQ(v.pattern_match, 1.0) << n << "\n" << DescribeModel(m);
      EXPECT_LT(v.bytes_error, 1e-9) << n;
      const Validation u = testing::QuickValidate(
          plain, testing::CoupledHalves(n, none, /*on_world=*/true, interleaved));
      EXPECT_LT(u.pattern_match, 0.9) << n << "\n" << DescribeModel(p);
    }
    EXPECT_EQ(ModelToJson(BuildModel(sigs)), ModelToJson(m));  // deterministic
  }
}

// A world split at P/4 into two components, each with a periodic 2-D halo on a grid of its
// own ranks: their groups make no one grid of world ranks. The groups are blocks of
// consecutive ranks, P/4 and the rest, so the calls are components each with a pattern of
// its own ranks, one pattern for both: the small component alone (2-6 ranks, an extent of 1
// or 2 along one dimension) cannot tell +1 from -1 there, and fitted alone it deadlocked at
// 1024. Sizes that are neither fixed nor a fraction of P are refused, saying why.
TEST(CommunicatorGridTest, ComponentsOfUnequalSizesArePredicted) {
  testing::AppParams few;
  few.iterations = 6;
  few.check_every = 3;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 16, 20}) {
    sigs.push_back(testing::Analyze(testing::CoupledHalves(n, few, false, false, n / 4)));
  }
  const AppModel m = BuildModel(sigs);
  const std::string words = DescribeModel(m);
  EXPECT_NE(words.find("components: blocks of consecutive ranks, each with partners in its own "
                       "ranks only: P/4 ranks and the other ranks, each"),
            std::string::npos)
      << words;
  EXPECT_NE(words.find("valid counts: multiples of 4 >= 8"), std::string::npos) << words;
  EXPECT_NE(words.find("; in component 1, on its own grid: bytes per message ≈ 40320 x the "
                       "product of 1/extent over the grid's other dimensions"),
            std::string::npos)
      << words;
  EXPECT_EQ(DescribeModel(ModelFromJson(ModelToJson(m), "m.json")), words);
  for (const int n : {24, 36, 48}) {
    const Validation v =
        testing::QuickValidate(sigs, testing::CoupledHalves(n, few, false, false, n / 4));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    // Each component sends the faces of its own grid: a law per component, each the face
    // of its own grid (one law of P over both was 7.5%, 17% and 12% off).
    EXPECT_LT(v.bytes_error, 1e-9) << n;
    EXPECT_LT(v.time_error, 0.05) << n;
  }
  EXPECT_GT(Predict(m, 1024, testing::TestMachine()).predicted_time_s, 0);  // no deadlock
  {
    // A model file whose call on components has fewer bytes laws than components is refused.
    nlohmann::json j = nlohmann::json::parse(ModelToJson(m));
    nlohmann::json& laws = j.at("phases").at(1).at("slots").at(0).at("component_bytes");
    ASSERT_EQ(laws.size(), 2u);
    laws.erase(1);
    try {
      ModelFromJson(j.dump(), "cut.json");
      FAIL() << "a call on 2 components with 1 bytes law was read";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.json: phase 1 call 0: component_bytes needs a "
                                           "call on components"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("(2 here)"), std::string::npos) << e.what();
    }
  }
  // Each component on a domain of its own (the second twice the first's side): its own faces.
  testing::AppParams domains = few;
  domains.second_domain = 2 * few.domain;
  std::vector<phases::Signature> own;
  for (int n : {8, 12, 16, 20}) {
    own.push_back(testing::Analyze(testing::CoupledHalves(n, domains, false, false, n / 4)));
  }
  for (const int n : {24, 36}) {
    const Validation v =
        testing::QuickValidate(own, testing::CoupledHalves(n, domains, false, false, n / 4));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 1e-9) << n;
  }
  // predict names both sizes: at 1024 the components are 16 x 16 and 32 x 24 grids, faces of
  // 8 x 5040 / 16 = 2520 B, and 8 x 10080 / 32 = 2520 B or / 24 = 3360 B.
  const std::string at1024 = DescribePhaseAt(BuildModel(own).phases.at(1), 1024);
  EXPECT_NE(at1024.find("2 isend on components of 256 and 768 ranks, 2.5 KiB to 3.3 KiB each; "
                        "2 isend on components of 256 and 768 ranks, 2.5 KiB each"),
            std::string::npos)
      << at1024;
  // A component of 2 ranks at every count (its messages a law of P, its grid the same) before
  // the rest (a grid of P - 2 ranks).
  own.clear();
  for (int n : {8, 12, 16, 20}) {
    own.push_back(testing::Analyze(testing::CoupledHalves(n, domains, false, false, 2)));
  }
  const std::string fixed_words = DescribeModel(BuildModel(own));
  EXPECT_NE(fixed_words.find("; in component 0: bytes per message = 4.032·10^4 (constant)"),
            std::string::npos)
      << fixed_words;
  for (const int n : {24, 36}) {
    const Validation v =
        testing::QuickValidate(own, testing::CoupledHalves(n, domains, false, false, 2));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    // (The traced faces are whole bytes cut down, 80640 / 11 -> 7330; the face law's 7331.)
    EXPECT_LT(v.bytes_error, 1e-4) << n;
  }
  try {
    Predict(m, 1026, testing::TestMachine());
    FAIL() << "1026 ranks, not a multiple of 4, were predicted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("multiples of 4"), std::string::npos) << e.what();
  }
  // Each component reducing a norm over its own communicator: an allreduce on blocks of
  // unequal sizes, every member of each block in its collective.
  testing::AppParams norms = few;
  norms.part_norm = true;
  sigs.clear();
  for (int n : {8, 12, 16, 20}) {
    sigs.push_back(testing::Analyze(testing::CoupledHalves(n, norms, false, false, n / 4)));
  }
  const AppModel normed = BuildModel(sigs);
  EXPECT_NE(DescribeModel(normed).find("allreduce on blocks of consecutive ranks of unequal "
                                       "sizes (P/4, the rest)"),
            std::string::npos)
      << DescribeModel(normed);
  for (const int n : {24, 36}) {
    const Validation v =
        testing::QuickValidate(sigs, testing::CoupledHalves(n, norms, false, false, n / 4));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_DOUBLE_EQ(v.collective_match, 1.0) << n;
    EXPECT_LT(v.time_error, 0.05) << n;
  }
  EXPECT_GT(Predict(normed, 1024, testing::TestMachine()).predicted_time_s, 0);
  sigs.clear();
  for (int n : {8, 12, 16, 20}) {
    sigs.push_back(testing::Analyze(testing::CoupledHalves(n, few, false, false, n / 4 + 1)));
  }
  try {
    BuildModel(sigs);
    FAIL() << "components of 3 and 5 ranks at 8, 4 and 8 at 12 built a model";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no communication-pattern family reproduces"), std::string::npos) << what;
    EXPECT_NE(what.find("made on sub-communicators of unequal sizes (at 8: groups of 3 and 5 "
                        "ranks; at 12: groups of 4 and 8 ranks"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("component 1's size is neither fixed nor 3P/8 at every count"),
              std::string::npos)
        << what;
  }
}

// A ring allreduce written by hand (pattern zoo mode 46): its one sendrecv is made 2(P - 1)
// times per iteration, and its mean burst, (2P + 8) / (2P (P - 1)) of the work, follows no
// law of P; a rank's work over the run, (2 + 8 / P) per iteration, does (c0 + c1 / P). The
// phase's compute is fitted over the run and split over its occurrences at N.
TEST(PhaseCpuTest, WorkOverTheRunOfAPhaseMadeMoreOftenAtMoreRanks) {
  testing::AppParams few;
  few.iterations = 3;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12, 16})
    sigs.push_back(testing::Analyze(testing::RingAllreduceByHand(n, few)));
  const AppModel m = BuildModel(sigs);
  const PhaseModel* ring = nullptr;
  for (const PhaseModel& p : m.phases) {
    if (!p.slots.empty() && p.slots[0].kind == EventKind::kSendrecv) ring = &p;
  }
  ASSERT_NE(ring, nullptr) << DescribeModel(m);
  EXPECT_TRUE(ring->cpu_total_per_run) << DescribeModel(m);
  EXPECT_NE(DescribeModel(m).find("CPU ns per rank over the run (all the phase's occurrences)"),
            std::string::npos)
      << DescribeModel(m);
  for (const int n : {64, 256}) {
    const double truth = few.iterations * (2.0 * n + 8) * std::floor(few.compute_ns / n);
    EXPECT_NEAR(testing::SynthesizedCpu(m, n, 0), truth, 0.01 * truth) << n;
  }
  const AppModel loaded = ModelFromJson(ModelToJson(m), "ring.json");
  EXPECT_EQ(DescribeModel(loaded), DescribeModel(m));
  EXPECT_EQ(testing::SynthesizedCpu(loaded, 256, 3), testing::SynthesizedCpu(m, 256, 3));
}

TEST(SlotTagTest, TagsAreTakenWhereThePartnerTellsTheCallsApart) {
  testing::AppParams few;
  few.iterations = 6;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 8, 12}) sigs.push_back(testing::Analyze(testing::CartHalo2D(n, few)));
  const AppModel m = BuildModel(sigs);
  std::map<EventKind, std::set<std::int32_t>> tags;
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      if (s.kind == EventKind::kIrecv || s.kind == EventKind::kIsend) tags[s.kind].insert(s.tag);
    }
  }
  EXPECT_EQ(tags[EventKind::kIrecv], (std::set<std::int32_t>{0, 1, 2, 3})) << DescribeModel(m);
  EXPECT_EQ(tags[EventKind::kIsend], (std::set<std::int32_t>{0, 1, 2, 3})) << DescribeModel(m);
  const Validation v = testing::QuickValidate(sigs, testing::CartHalo2D(16, few));  // no deadlock
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-9);
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// Traced at 8, 12 and 18 ranks (2 x 2 x 2, 3 x 2 x 2, 3 x 3 x 2: the last extent is 2 at
// every count), a face along the last dimension is 1 / (d0 d1) = 2 / P of the domain: the face
// law and c / P fit exactly alike. At 27 (3 x 3 x 3) only the face is right; c / P sent a
// third less.
TEST(FaceBytesTest, AFaceAndOneOverPThatAgreeAtEveryTracedCountGoToTheFace) {
  testing::AppParams few;
  few.iterations = 6;
  few.domain = 96;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 18}) sigs.push_back(testing::Analyze(testing::CartHalo3D(n, few)));
  const Validation v = testing::QuickValidate(sigs, testing::CartHalo3D(27, few));
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-6) << DescribeModel(BuildModel(sigs));
}

// Traced at 4, 9 and 16 ranks a 3-D halo on MPI_Dims_create(P, 3) (2 x 2 x 1, 3 x 3 x 1,
// 4 x 2 x 2) is also a square one with as many offsets: at 4 and 9 the third dimension has
// one rank, and at 16 the pairs of the second dimension are two apart along the square's x.
// On the square the second dimension's calls at 9 went the way of the third's at 16, the
// calls were aligned across those, and no family reproduced them: the model was refused. The
// grid whose pairs are nearest neighbours is tried first.
TEST(FaceBytesTest, AThreeDHaloTracedWhereItIsAlsoSquareKeepsItsGrid) {
  testing::AppParams few;
  few.iterations = 6;
  few.domain = 96;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16}) sigs.push_back(testing::Analyze(testing::CartHalo3D(n, few)));
  const Validation v = testing::QuickValidate(sigs, testing::CartHalo3D(49, few));
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-3) << DescribeModel(BuildModel(sigs));
  EXPECT_NE(DescribeModel(BuildModel(sigs)).find("MPI_Dims_create(P, 3)"), std::string::npos);
}

// A 27-point halo on an open grid (LULESH, miniGhost): each rank calls only the neighbours
// it has, so a corner's first receive is from (0, 0, +1) and the centre's from (-1, -1, -1).
// Only the grid's directions align the ranks' calls (26 receive and 26 send slots, one offset
// each), but traced up to 27 ranks the grid has 26 offsets and the ranks 26 displacements,
// and a grid was only taken with fewer: the calls were aligned by displacement and no family
// reproduced the first receive.
TEST(OpenHaloTest, ATwentySevenPointHaloOnAnOpenGridAlignsByDirection) {
  const testing::AppParams p = testing::SmallOpenHalo27();
  const std::vector<phases::Signature> sigs = testing::AnalyzeOpenHalo27({8, 12, 18, 27});
  const AppModel model = BuildModel(sigs);
  std::size_t widest = 0;
  for (const PhaseModel& pm : model.phases) widest = std::max(widest, pm.slots.size());
  EXPECT_EQ(widest, 53u) << DescribeModel(model);
  const Validation v = testing::QuickValidate(sigs, testing::OpenHalo27(36, p));
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_LT(v.compute_error, 0.02);
}

// A 27-point halo's edge (an offset along two dimensions) carries a line of the local block:
// 8 B x the extent of the block along the dimension it does not cross. A law of P fitted
// those through the small counts (172 P^-1 log2(P)^2 for the zoo's periodic halo, 33% short
// at 36 ranks); the face law takes the product of 1/extent over the dimensions the call
// does not cross, and a saved model reads it back the same.
TEST(OpenHaloTest, AnEdgeOfTheHaloCarriesTheLineItDoesNotCross) {
  const std::vector<phases::Signature> sigs = testing::AnalyzeOpenHalo27({8, 12, 18, 27});
  const AppModel model = BuildModel(sigs);
  const std::string words = DescribeModel(model);
  EXPECT_NE(words.find("over the grid's dimensions but 1 and 2 (an edge of the local block; "
                       "exchanged across dimensions 1 and 2)"),
            std::string::npos)
      << words;
  int edges = 0;
  for (const PhaseModel& pm : model.phases) {
    for (const SlotModel& s : pm.slots) {
      if (s.face_dim < 0 || !s.peer || s.peer->offsets.size() != 1) continue;
      const auto& off = s.peer->offsets.front();
      edges += std::count(off.begin(), off.end(), 0) == 1;
    }
  }
  EXPECT_EQ(edges, 24) << words;  // 12 edges, a receive and a send each
  const Validation v =
      testing::QuickValidate(sigs, testing::OpenHalo27(36, testing::SmallOpenHalo27()));
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-9);
  const AppModel loaded = ModelFromJson(ModelToJson(model), "edges.json");
  EXPECT_EQ(DescribeModel(loaded), words);
  // Traced at 8, 12 and 18 only, x has 2 ranks at each: the edges across y and z sent the
  // same share of the block at every count, as messages of a fixed size would. The faces
  // follow the grid, so those edges keep its law too, and are right at 27 (3 x 3 x 3). (A
  // halo of fixed messages keeps its constants: AmbiguousDirectionTest.)
  const std::vector<phases::Signature> three = testing::AnalyzeOpenHalo27({8, 12, 18});
  const Validation at27 =
      testing::QuickValidate(three, testing::OpenHalo27(27, testing::SmallOpenHalo27()));
  EXPECT_LT(at27.bytes_error, 1e-9) << DescribeModel(BuildModel(three));
}

// Traced at 8, 12 and 18 ranks only, no rank of the 27-point halo has neighbours both ways
// along z (an extent of 2): ranks with z = 0 call up where those with z = 1 call down, and
// matched call for call no family reproduces the first receive. The second try aligns them by
// exact direction on the open grid (52 point-to-point slots). At 27 the centre rank makes
// every call, which no traced rank did: its burst is the phase's main one once (the burst
// of the ranks whose first call its first call is), not once per call that was some traced
// class's first. Which of (0, 0, -1) and (0, 0, +1) comes first the traces cannot say: the
// model warns, and the messages of the ranks that have both may be paired the other way.
TEST(OpenHaloTest, TracedWithoutAnInteriorRankItIsAlignedByExactDirection) {
  const testing::AppParams p = testing::SmallOpenHalo27();
  const std::vector<phases::Signature> sigs = testing::AnalyzeOpenHalo27({8, 12, 18});
  const Validation v = testing::QuickValidate(sigs, testing::OpenHalo27(27, p));
  EXPECT_GE(v.pattern_match, 0.9);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_LT(v.compute_error, 0.05) << DescribeModel(BuildModel(sigs));
}

// HPCG's halo: a 27-point open halo on its own process grid (ComputeOptimalShapeXYZ: 12 ->
// 2 x 3 x 2, 24 -> 2 x 4 x 3, where MPI_Dims_create gives the same extents in another order),
// each receive completed by its own MPI_Wait. Traced at 4-24, only the 16-rank run (4 x 2 x 2)
// has ranks with neighbours both ways along x; the classes aligned before it had put (+1, 0,
// 0) before (-1, 0, 0), so its ranks opened a second (-1, 0, 0) slot that only 16 made, and
// the model was refused. The same call going the same way is now one slot wherever every
// rank can keep its order. Before both changes HPCG was refused at every set of counts.
TEST(OpenHaloTest, HpcgsHaloOnItsOwnGridIsModelled) {
  const testing::AppParams p = testing::SmallHpcgHalo();
  const std::vector<phases::Signature> sigs = testing::AnalyzeHpcgHalo({4, 8, 12, 16, 24});
  const AppModel model = BuildModel(sigs);
  EXPECT_NE(DescribeModel(model).find("HPCG ComputeOptimalShapeXYZ(P) grid"), std::string::npos)
      << DescribeModel(model);
  for (int target : {32, 48}) {
    const Validation v = testing::QuickValidate(sigs, testing::HpcgHalo(target, p));
    EXPECT_EQ(v.pattern_match, 1.0) << target << "\n" << DescribeModel(model);
    EXPECT_LT(v.bytes_error, 1e-6) << target;
    EXPECT_LT(v.compute_error, 0.02) << target;
  }
}

// A code that runs at cube counts only (LULESH) is traced at 1, 8 and 27 ranks. The lone rank
// makes no call of the halo, only its waitall: its phases still correspond to the others'
// (point-to-point calls left out of the comparison), its compute counts, and the bytes,
// known at 8 and 27 only, follow the power law through both: a face P^(-2/3), an edge
// P^(-1/3), exactly what the grid gives at 64. Before, the phases did not correspond and the
// run was refused; then two counts of bytes gave their mean (2.8x a face at 64).
TEST(OpenHaloTest, ALoneRankRunCountsWithTheCubeCounts) {
  const testing::AppParams p = testing::SmallOpenHalo27();
  const std::vector<phases::Signature> sigs = testing::AnalyzeOpenHalo27({1, 8, 27});
  const Validation v = testing::QuickValidate(sigs, testing::OpenHalo27(64, p));
  EXPECT_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-6) << DescribeModel(BuildModel(sigs));
  EXPECT_LT(v.compute_error, 0.02);
}

// A halo that packs its faces before each sendrecv and unpacks what it received (halo3d's
// bursts between its sendrecvs): the bursts are a cost per byte of faces, which no power of
// P follows when the grid changes shape. Traced at 8 to 36 ranks (2 x 2 x 2 to 4 x 3 x 3), at
// 49 (7 x 7 x 1) the faces along the 7s are 1.7x the 36's and the volume 0.73x: the bursts
// come from the bytes laws (the first with the sweep over the block, a share of a fixed
// total), where laws of P missed by 8%.
TEST(DataBoundCpuTest, PackingBurstsFollowTheFacesWhenTheGridChangesShape) {
  testing::AppParams p;
  p.iterations = 6;
  p.check_every = 0;
  p.domain = 160;
  p.compute_ns = 1e6;  // the volume's work: a few us per rank, the packing dominates
  p.pack_ns_per_byte = 0.5;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 9, 16, 25, 27, 36})
    sigs.push_back(testing::Analyze(testing::CartHalo3D(n, p)));
  const AppModel model = BuildModel(sigs);
  const TraceData real = testing::CartHalo3D(49, p);
  int packing = 0;
  for (const PhaseModel& pm : model.phases) {
    for (const SlotModel& s : pm.slots) packing += s.cpu_ns_per_byte > 0 ? 1 : 0;
  }
  EXPECT_GE(packing, 4) << DescribeModel(model);
  // The mean over the ranks (a corner of the 7 x 7 grid unpacks two faces, the centre four:
  // the model keeps the slot's mean and the spread between its ranks, not which rank is where).
  double want = 0, got = 0;
  for (int rank = 0; rank < 49; ++rank) {
    want += testing::TracedCpu(real, rank);
    got += testing::SynthesizedCpu(model, 49, rank);
  }
  EXPECT_NEAR(got / want, 1.0, 0.01) << DescribeModel(model);
  EXPECT_NE(DescribeModel(model).find("x the bytes the call moves"), std::string::npos);
  // Saved and loaded (`pas2p model --out`), the same model.
  const AppModel loaded = ModelFromJson(ModelToJson(model), "test");
  EXPECT_EQ(DescribeModel(loaded), DescribeModel(model));
  EXPECT_NEAR(testing::SynthesizedCpu(loaded, 49, 24), testing::SynthesizedCpu(model, 49, 24), 1);
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// A burst of a few microseconds that is run-to-run noise (2.4, 0.8, 3.8 and 3.9 us at 4, 9,
// 16 and 25 ranks, as NAS MG's before its 80 allreduces): no law predicts the left-out counts
// within 30%, and the one that missed least extrapolated the noise (MG: 9 us at 64 ranks,
// where the burst took 3.4 us). Such a burst keeps the median of its traced values.
TEST(NoLawTest, ANoisyBurstKeepsItsMedian) {
  const double per_rank_ns[4] = {2411, 809, 3784, 3880};
  const int counts[4] = {4, 9, 16, 25};
  testing::AppParams p;
  p.iterations = 10;
  p.check_every = 0;
  std::vector<phases::Signature> sigs;
  for (int k = 0; k < 4; ++k) {
    p.compute_ns = per_rank_ns[k] * counts[k];
    sigs.push_back(testing::Analyze(testing::TorusStencil(counts[k], p)));
  }
  p.compute_ns = 3400.0 * 36;
  const Validation v = testing::QuickValidate(sigs, testing::TorusStencil(36, p));
  // The median is as good as the noise lets it be (26% here); the law was 94% off.
  EXPECT_LT(v.compute_error, 0.35) << DescribeModel(BuildModel(sigs));
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// A halo swapped swap by swap with tag 0 everywhere (LAMMPS's forward communication), traced
// at 8, 12 and 16 (2 x 2 x 2, 3 x 2 x 2, 4 x 2 x 2: two dimensions are 2 at every count).
// Along it the traces cannot tell -1 from +1, and when several receives shared a send's tag
// the send kept the sign of its own receive: at 36 (4 x 3 x 3) every rank sent to +1 and
// waited for a message from +1 (deadlock). Each send is now paired with its own swap's
// receive.
TEST(AmbiguousDirectionTest, SwapsWithOneTagArePairedSwapBySwap) {
  testing::AppParams few;
  few.iterations = 6;
  few.domain = 96;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 16}) sigs.push_back(testing::Analyze(testing::SwapHalo3D(n, few)));
  const Validation v = testing::QuickValidate(sigs, testing::SwapHalo3D(36, few));  // no deadlock
  // Which families the traces leave open (a dimension of 2 everywhere is also an exchange
  // with rank XOR 1) and which way each swap goes along it are guesses; no deadlock is not.
  EXPECT_GT(v.pattern_match, 0.4) << DescribeModel(BuildModel(sigs));
}

// The same with swaps two ranks away along a dimension of 4 at every traced count (8, 12,
// 16 on MPI_Dims_create(P, 2) grids): +2 and -2 are one rank there. A send and its receive
// that picked the same sign deadlocked at 24 (4 x 6: every rank waiting for the rank it had
// sent to). They are paired opposite, with the warning, and the swaps are right at 24.
TEST(AmbiguousDirectionTest, SwapsTwoRanksAwayAlongADimensionOfFourArePairedOpposite) {
  testing::AppParams few;
  few.iterations = 6;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 12, 16}) sigs.push_back(testing::Analyze(testing::SwapFar2D(n, few)));
  const AppModel m = BuildModel(sigs);
  bool warned = false;
  for (const auto& w : m.warnings) {
    warned = warned || w.find("cannot tell a neighbour at +2 from one at -2") != std::string::npos;
  }
  EXPECT_TRUE(warned) << DescribeModel(m);
  const Validation v = testing::QuickValidate(sigs, testing::SwapFar2D(24, few));  // no deadlock
  EXPECT_EQ(v.count, 24);
  EXPECT_LT(v.bytes_error, 0.01);
  EXPECT_GE(v.pattern_match, 0.5) << DescribeModel(m);
  // Saved and loaded, the model keeps the pairing (its equations were refitted from the maps
  // on load, one slot at a time, and the run at 24 deadlocked again).
  PredictOptions quick;
  quick.noise_draws = 0;
  quick.intervals = false;
  const AppModel loaded = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(loaded), ModelToJson(m));
  double saved_s = 0;
  ASSERT_NO_THROW(saved_s = Predict(loaded, 24, testing::TestMachine(), quick).predicted_time_s);
  EXPECT_DOUBLE_EQ(saved_s, Predict(m, 24, testing::TestMachine(), quick).predicted_time_s);
}

// Padded faces (ghost corners included: 8 (N/e1 + 2h)(N/e2 + 2h) bytes, a halo 8 wide on a
// domain of 96) traced at 27, 36, 45 and 48 (3 x 3 x 3 ... 4 x 4 x 3): the bare face law
// c / (e1 e2) fits 3 x 3 faces and misses the 4 x 3 ones, and the bytes it gave were 14% low at
// 64 (4 x 4 x 4) and 20% at 100. The face with its halo, c (1/e1 + g)(1/e2 + g), is right at
// both.
// The signatures of `gen` at 27, 36, 45 and 48 ranks (3 or more along every dimension of
// MPI_Dims_create(P, 3)), and the slots of a model that `has` something.
template <typename Generator>
std::vector<phases::Signature> AnalyzeAtCubicCounts(Generator gen, const testing::AppParams& p) {
  std::vector<phases::Signature> sigs;
  for (int n : {27, 36, 45, 48}) sigs.push_back(testing::Analyze(gen(n, p)));
  return sigs;
}
int SlotsWith(const AppModel& m, const std::function<bool(const SlotModel&)>& has) {
  int count = 0;
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) count += has(s);
  }
  return count;
}

TEST(FaceBytesTest, PaddedFacesKeepTheirHaloAtLargerCounts) {
  testing::AppParams padded;
  padded.iterations = 4;
  padded.domain = 96;
  padded.halo = 8;
  const auto sigs = AnalyzeAtCubicCounts(testing::SwapHalo3D, padded);
  const AppModel m = BuildModel(sigs);
  const auto with_halo = [](const SlotModel& s) { return s.face_margin > 0; };
  EXPECT_GT(SlotsWith(m, with_halo), 0) << DescribeModel(m);
  EXPECT_NE(DescribeModel(m).find("with a halo"), std::string::npos);
  for (const int n : {64, 100}) {
    const Validation v = testing::QuickValidate(sigs, testing::SwapHalo3D(n, padded));
    EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << n;
    EXPECT_LT(v.bytes_error, 0.01) << n;
  }
  // Bare faces keep the bare law.
  testing::AppParams bare = padded;
  bare.halo = 0;
  EXPECT_EQ(SlotsWith(BuildModel(AnalyzeAtCubicCounts(testing::SwapHalo3D, bare)), with_halo), 0);
}

// SwapHaloSteps' parameters in the carried-request tests: 40 steps, a re-neighbouring every 10.
testing::AppParams ReneighbouringSteps() {
  testing::AppParams steps;
  steps.iterations = 40;
  steps.check_every = 0;
  steps.domain = 96;
  steps.reneighbor_every = 10;
  return steps;
}

// Steps of halo swaps (irecv, send, wait, tag 0) with a re-neighbouring step every 10 (its
// forward swaps after sendrecvs of counts), as LAMMPS's: the phases cut the swaps where the
// loop of steps meets the re-neighbouring step, a swap's receive at the end of one phase and
// its send and wait at the start of the next. Those calls were left out to keep each phase
// balanced alone, and every such boundary lost a swap (LAMMPS at 64: 6 messages per rank, and
// 72% of the messages to the wrong peer by position). They are kept when the phases around
// carry the same requests, and left out only when a phase is simulated alone.
TEST(CarriedRequestTest, SwapsCutByAPhaseBoundaryAreKept) {
  const testing::AppParams steps = ReneighbouringSteps();
  const auto sigs = AnalyzeAtCubicCounts(testing::SwapHaloSteps, steps);
  const AppModel m = BuildModel(sigs);
  EXPECT_GT(SlotsWith(m, [](const SlotModel& s) { return s.carried; }), 0) << DescribeModel(m);
  // At 64: every rank makes the real run's 504 sends (it made 3 fewer) and every message has
  // the right partner by position (45% before; 82.5% while the loop of steps between two
  // re-neighbourings, 9 then 2 iterations in the two executions the signature merged, was
  // replayed as 5 then 6: SequenceItem::first keeps the first execution's count).
  const Validation v = testing::QuickValidate(sigs, testing::SwapHaloSteps(64, steps));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << DescribeModel(m);
  EXPECT_LT(v.bytes_error, 0.09);
}

// The same steps, whose re-neighbouring pairs the ranks as the data decides (its sendrecvs of
// counts go to a shuffled partner, the same permutation at every step of a run, another at
// every count): no pattern family reproduces them, so the phases that hold them are left out
// as remainder. The loop of steps was built to carry a swap's receive into such a phase;
// with those phases gone it is built again from the phases kept (the model's `again` pass),
// the calls that crossed into them left out with them (named in the model's warnings), and
// the synthesized run replays balanced at 64. Without that pass 4 calls stayed carried and
// the replay at 64 stopped on receives that no phase sends to.
TEST(CarriedRequestTest, ALoopIsBuiltAgainWhenThePhaseItCarriedIntoIsLeftOut) {
  const testing::AppParams steps = ReneighbouringSteps();
  // The analysis of the real steps, then the re-neighbouring's partners shuffled in the
  // signature (the phases stay those of the steps: a shuffle in the trace would change where
  // the analysis cuts them).
  std::vector<phases::Signature> sigs;
  for (int n : {27, 36, 45, 48}) {
    phases::Signature sig = testing::Analyze(testing::SwapHaloSteps(n, steps));
    std::vector<std::int32_t> to(static_cast<std::size_t>(n)), from(to.size());
    for (int r = 0; r < n; ++r) to[static_cast<std::size_t>(r)] = r;
    std::mt19937 rng(static_cast<unsigned>(n));
    bool alone = true;  // until no rank is its own partner
    while (alone) {
      std::shuffle(to.begin(), to.end(), rng);
      alone = false;
      for (int r = 0; r < n; ++r) alone = alone || to[static_cast<std::size_t>(r)] == r;
    }
    for (int r = 0; r < n; ++r) from[static_cast<std::size_t>(to[static_cast<std::size_t>(r)])] = r;
    for (phases::Phase& ph : sig.phases) {
      for (phases::RankPhase& rp : ph.ranks) {
        for (phases::PhaseEvent& e : rp.events) {
          if (e.kind != EventKind::kSendrecv) continue;
          e.peer = to[static_cast<std::size_t>(rp.rank)];
          e.recv_peer = from[static_cast<std::size_t>(rp.rank)];
        }
      }
    }
    sigs.push_back(std::move(sig));
  }
  const AppModel m = BuildModel(sigs);
  std::string warnings;
  for (const std::string& w : m.warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("is left out and counted as remainder"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("left out of the model"), std::string::npos)
      << warnings << DescribeModel(m);
  EXPECT_GT(m.unmodelled_share, 0) << warnings;
  EXPECT_EQ(SlotsWith(m, [](const SlotModel& s) { return s.carried; }), 0) << DescribeModel(m);
  // Replayed whole at 64: no unmatched message (the simulation would throw).
  const SynthesizedTrace run(m, 64);
  EXPECT_GT(sim::Simulate(run, testing::TestMachine(), {}).predicted_time_s, 0);
}

// The same steps, each re-neighbouring an exchange followed by the borders (LAMMPS's): per
// dimension, the exchange makes two sendrecvs of counts and then two swaps, the borders a
// sendrecv and a swap, twice. The same calls in another order, each starting with the same
// sendrecv: the compressor took the borders for a second iteration of the exchange in another
// order (as it does for completions that come in arrival order) and replayed the exchange's
// order twice, the borders' sends after both sendrecvs (LAMMPS at 64: 2.7% of the messages to
// the wrong peer by position). Only non-blocking posts and completions may change places.
TEST(CarriedRequestTest, BordersAfterTheExchangeKeepTheirOrder) {
  testing::AppParams steps = ReneighbouringSteps();
  steps.borders = true;
  const auto sigs = AnalyzeAtCubicCounts(testing::SwapHaloSteps, steps);
  const Validation v = testing::QuickValidate(sigs, testing::SwapHaloSteps(64, steps));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0) << DescribeModel(BuildModel(sigs));
  EXPECT_LT(v.bytes_error, 0.09);
}

// A time step of forward and reverse halo swaps traced at 27, 36, 45 and 48 ranks
// (SwapHaloSteps), predicted at 64:
// - The reverse swaps' last swap along x and the next step's first are one swap repeated, as
//   are the forward swaps' last and the reverse's first: each pair folds into a loop of two
//   iterations, unrolled into the step, whose copies have the step's small and large bursts
//   before them. Each copy held their mean (and the alternation as spread), so every rank drew
//   its bursts on its own: 151% too slow. Each copy now keeps its own compute.
// - The y extent is 3 at every traced count, so the y faces are 73728 / (ex ez) = 221184 / P
//   exactly; 8 x 96^2 / 15 is 4915.2 at 45, traced as 4915, and bytes ~ N/P won by that
//   rounding. At 64 (4 x 4 x 4) it was 25% low on those faces. The face is now taken when it
//   is within the traced sizes' rounding of the best law.
TEST(StepPhaseTest, SwapStepsPredictTheirTimeAndFaces) {
  testing::AppParams steps;
  steps.iterations = 40;
  steps.check_every = 0;
  steps.domain = 96;
  const auto sigs = AnalyzeAtCubicCounts(testing::SwapHaloSteps, steps);
  const AppModel m = BuildModel(sigs);
  const Validation v = testing::QuickValidate(sigs, testing::SwapHaloSteps(64, steps));
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-3) << DescribeModel(m);
  EXPECT_LT(v.compute_error, 1e-3) << DescribeModel(m);
  EXPECT_LT(v.time_error, 0.01) << DescribeModel(m);
  const int p2p = SlotsWith(m, [](const SlotModel& s) { return IsPointToPoint(s.kind); });
  EXPECT_GT(p2p, 0);
  EXPECT_EQ(SlotsWith(m, [](const SlotModel& s) { return s.face_dim >= 0; }), p2p)
      << DescribeModel(m);
}

// A time step of forward and reverse halo swaps (SwapHaloSteps). Where an extent is 2 the
// step's last swaps and the next step's first are one swap repeated, and where none is (9 =
// 3 x 3 x 1, 27 = 3 x 3 x 3) the reverse communication's last swap pair repeats the forward
// one's first: the compressor folds those repeats before it sees the step, and the step phase
// began at a different swap at each count (8: with the reverse communication's last swaps,
// 9 and 27: at the second swap), so the phases of 9 and 27 did not correspond to those of 8
// and 12 and no model built from all four. Every count now has one step phase, one
// occurrence per step, starting with the step's first swap.
TEST(StepPhaseTest, HaloSwapsThatStraddleStepsGiveOneStepPhaseAtEveryCount) {
  testing::AppParams steps;
  steps.iterations = 30;
  steps.check_every = 0;
  steps.domain = 96;
  std::vector<phases::Signature> sigs;
  for (int n : {8, 9, 12, 27}) {
    sigs.push_back(Analyze(testing::SwapHaloSteps(n, steps)));
    const phases::Signature& sig = sigs.back();
    const phases::Phase* step = nullptr;
    for (const phases::Phase& ph : sig.phases) {
      if (step == nullptr || ph.weight > step->weight) step = &ph;
    }
    ASSERT_NE(step, nullptr);
    EXPECT_NEAR(step->weight, steps.iterations, 1) << "at " << n;
    // The first swap of a step: along the first dimension of extent > 1 (d0 fastest), the
    // receive from -1. Rank 0's -1 neighbour along d0 is rank extent - 1.
    const std::vector<std::int64_t> dims = patterns::DimsCreate(n, 3);
    ASSERT_GT(dims[0], 1);
    const phases::RankPhase* rank0 = nullptr;
    for (const phases::RankPhase& rp : step->ranks) {
      if (rp.rank == 0) rank0 = &rp;
    }
    ASSERT_NE(rank0, nullptr);
    ASSERT_FALSE(rank0->events.empty());
    EXPECT_EQ(rank0->events.front().kind, EventKind::kIrecv) << "at " << n;
    EXPECT_EQ(rank0->events.front().peer, dims[0] - 1) << "at " << n;
  }
  const AppModel model = BuildModel(sigs);
  EXPECT_FALSE(model.phases.empty());
}

// Padded all-to-all blocks (8 P ceil(N/P)^2 bytes, N = 1440) traced at 4..36: 25 does not
// divide N, so no smooth law reproduces the sizes and the best one (~1.66e7 / P) is 3.8% low
// at 49, where the block is 30 rows; the block law reproduces the traced sizes exactly and
// predicts 49 and 100 exactly too.
TEST(BlockLawModelTest, PaddedAlltoallBytesFollowCeilOfNOverP) {
  testing::AppParams params;
  params.domain = 1440;
  params.iterations = 10;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25, 36}) {
    sigs.push_back(testing::Analyze(testing::PaddedTranspose(n, params)));
  }
  const AppModel m = BuildModel(sigs);
  EXPECT_NE(DescribeModel(m).find("bytes sent = 8·P·ceil(N/P)^2, N in [1437, 1440]"),
            std::string::npos)
      << DescribeModel(m);
  for (int target : {49, 100}) {
    testing::MemoryTrace real(testing::PaddedTranspose(target, params));
    const Validation v = ValidateAgainst(sigs, real, testing::TestMachine());
    EXPECT_LT(v.bytes_error, 1e-9)
        << target << ": " << v.predicted_bytes << " predicted, " << v.real_bytes << " real";
  }
}

}  // namespace
}  // namespace pas2p::synthesis

namespace pas2p::synthesis {
namespace {

// LU-like sweeps traced at 4, 8 and 16 ranks (2 x 2, 4 x 2, 4 x 4): a rank's plane is
// computed before its first send, so the burst before "send south" is the whole work on
// ranks with a south neighbour and nothing on the others. Ranks of the middle rows in the
// first column exist only at 16; the slot's mean mixes them with the other ranks in
// proportions that change with P. Taken as a share of the phase's CPU per rank, every rank
// at 32 (8 x 4) computes what it does in the real run, within 10%; as a ratio to the slot's
// mean ranks 1, 2 and 29 computed 20% too little.
TEST(RankTotalTest, ClassesSeenAtOneCountTakeTheirShareOfTheRanksWork) {
  testing::AppParams p;
  p.iterations = 6;
  p.check_every = 0;
  p.compute_ns = 2e8;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 16}) sigs.push_back(testing::Analyze(testing::MeshSweeps(n, p)));
  const AppModel model = BuildModel(sigs);
  const TraceData real = testing::MeshSweeps(32, p);
  for (int rank = 0; rank < 32; ++rank) {
    EXPECT_NEAR(testing::SynthesizedCpu(model, 32, rank) / testing::TracedCpu(real, rank), 1.0, 0.1)
        << "rank " << rank << "\n"
        << DescribeModel(model);
  }
  const AppModel loaded = ModelFromJson(ModelToJson(model), "test");
  EXPECT_EQ(DescribeModel(loaded), DescribeModel(model));
}

}  // namespace
}  // namespace pas2p::synthesis
