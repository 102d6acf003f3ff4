// Self-scheduled (master/worker) runs: the model, the list schedule at synthesis, the
// prediction and the validation, on synthetic runs of two master shapes and on the bundled
// masterworker traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "../../phases/tests/synthetic.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/simulator/reschedule.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_traces.h"

namespace pas2p::synthesis {
namespace {

namespace fs = std::filesystem;
using phases::testing::MakeSelfScheduled;
using phases::testing::MasterShape;

constexpr int kTasks = 400;

using testing::TestMachine;

phases::Signature Analyze(TraceData data) {
  MemoryTrace trace(std::move(data));
  return phases::AnalyzeTrace(trace);
}

std::vector<phases::Signature> Train(MasterShape shape) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 6, 9, 12}) sigs.push_back(Analyze(MakeSelfScheduled(n, kTasks, shape)));
  return sigs;
}

// The CPU of the workers' tasks (ranks 1.., master 0) in `t`: their compute between a
// receive from the master and their result's send.
double WorkersTaskCpu(const TraceSource& t) {
  double cpu = 0;
  for (int r = 1; r < t.nprocs(); ++r) {
    auto s = t.OpenRank(r);
    Event e;
    bool task = false;
    while (s->Next(&e)) {
      if (e.kind == EventKind::kRecv) task = true;
      if (e.kind == EventKind::kSend) task = false;
      if (e.kind == EventKind::kCompute && task) cpu += static_cast<double>(e.cpu_ns);
    }
  }
  return cpu;
}

const PhaseModel* ScheduledPhase(const AppModel& m) {
  for (const auto& p : m.phases) {
    if (p.scheduled) return &p;
  }
  return nullptr;
}

class SelfScheduledTest : public ::testing::TestWithParam<MasterShape> {};

TEST_P(SelfScheduledTest, ModelHasAScheduledPhaseWithTheTasksAsAFunctionOfP) {
  const AppModel m = BuildModel(Train(GetParam()));
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr) << DescribeModel(m);
  EXPECT_EQ(p->master, 0);
  // Strong scaling: the workers' tasks add up to (almost) the same total at every count.
  EXPECT_NEAR(p->tasks.At(64), kTasks, 0.02 * kTasks) << DescribeModel(m, 64);
  int replies = 0;
  for (const auto& s : p->slots) replies += s.reply;
  EXPECT_EQ(replies, 1) << DescribeModel(m);
  // A saved model loads back to the same model.
  const AppModel back = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(back), ModelToJson(m));
}

TEST_P(SelfScheduledTest, ListScheduleSplitsTheMastersRepliesOverTheWorkers) {
  const AppModel m = BuildModel(Train(GetParam()));
  const SynthesizedTrace t(m, 33);
  ASSERT_GE(t.ScheduledPhase(), 0);
  const auto& tasks = t.TasksPerRank();
  ASSERT_EQ(tasks.size(), 33u);
  EXPECT_EQ(tasks[0], 0);
  // Every worker's receives from the master equal the master's sends to it.
  std::vector<std::int64_t> sent(33, 0), received(33, 0);
  for (int r = 0; r < 33; ++r) {
    auto s = t.OpenRank(r);
    Event e;
    int task_sends = 0;
    while (s->Next(&e)) {
      if (e.kind == EventKind::kSend && r == 0) ++sent[static_cast<std::size_t>(e.peer)];
      if (e.kind == EventKind::kRecv && r > 0) {
        EXPECT_EQ(e.peer, 0);
        ++received[static_cast<std::size_t>(r)];
      }
      if (e.kind == EventKind::kSend && r > 0) ++task_sends;
    }
    if (r > 0) {
      EXPECT_EQ(task_sends, tasks[static_cast<std::size_t>(r)]) << "rank " << r;
      // Uneven tasks (1..13 units) over 32 workers: about 400 / 32 each, not all equal.
      EXPECT_GE(tasks[static_cast<std::size_t>(r)], 6) << "rank " << r;
      EXPECT_LE(tasks[static_cast<std::size_t>(r)], 22) << "rank " << r;
    }
  }
  EXPECT_EQ(sent, received);
  const std::int64_t total = std::accumulate(tasks.begin(), tasks.end(), std::int64_t{0});
  EXPECT_NEAR(static_cast<double>(total), kTasks, 0.02 * kTasks);
  EXPECT_GT(t.ScheduleMakespanS(), 0);
}

// Trained on 4..12, predicted at 25 and compared with the run generated at 25, its tasks
// handed out by the simulation. The model has each task's cost (its task profile), but its
// list schedule takes messages as free while the simulated machine does not, so near-ties
// between workers resolve differently and which worker runs how many tasks differs a little
// (about 95% of the master's messages go to the same workers as many times); the time is
// within 0.2% here: checked at 5%.
TEST_P(SelfScheduledTest, ValidatesAgainstTheRunAt25) {
  MemoryTrace real(MakeSelfScheduled(25, kTasks, GetParam()));
  const Validation v = ValidateAgainst(Train(GetParam()), real, TestMachine());
  EXPECT_EQ(v.count, 25);
  EXPECT_GT(v.scheduled_messages, 0u);
  EXPECT_GT(v.pattern_match, 0.85);
  EXPECT_LT(v.pattern_match, 1.0) << "the timing decides the partners: not exact by construction";
  EXPECT_GT(v.scheduled_match, 0.85);
  // Task messages differ in size task by task (16..784 B); the model has their mean per call
  // as a function of P, fitted on 4 small counts: 3.5-3.9% here.
  EXPECT_LT(v.bytes_error, 0.05);
  EXPECT_LT(v.compute_error, 0.02);
  EXPECT_LT(v.time_error, 0.05) << "predicted " << v.predicted_time_s << " real "
                                << v.real_simulated_time_s;
}

// The same against a run at 25 whose traced assignment is skewed (the lowest busy worker
// always answered first: worker 1 ran most tasks). The plain replay of that trace keeps the
// skew; validate compares with the trace's tasks handed out by the simulation
// (sim::RescheduledTrace), which is what the prediction's list schedule models.
TEST_P(SelfScheduledTest, ValidatesAgainstASkewedRunWithItsTasksRescheduled) {
  MemoryTrace real(MakeSelfScheduled(25, kTasks, GetParam(), 100000, /*skewed=*/true));
  const Validation v = ValidateAgainst(Train(GetParam()), real, TestMachine());
  ASSERT_TRUE(v.rescheduled) << v.reschedule_note;
  EXPECT_EQ(v.rescheduled_tasks, static_cast<std::uint64_t>(kTasks));
  EXPECT_GT(v.time_error_traced_assignment, 0.5)
      << "traced assignment " << v.real_simulated_traced_assignment_s;
  EXPECT_LT(v.time_error, 0.05) << "predicted " << v.predicted_time_s << " rescheduled "
                                << v.real_simulated_time_s;
  EXPECT_GT(v.busiest_worker_cpu_s, 5 * v.rescheduled_busiest_worker_cpu_s);
  EXPECT_GT(v.scheduled_match, 0.85);
  EXPECT_LT(v.scheduled_match_traced_assignment, 0.5);
  EXPECT_GT(v.pattern_match, 0.85);
  const std::string text = FormatValidation(v, "skewed");
  EXPECT_NE(text.find("traced assignment"), std::string::npos) << text;
}

// Task t costs 1 + (7t mod 13) units at every count, handed out in the order t = 0, 1, ...:
// the model keeps the costs in that order (PhaseModel::task_profile) and their mean as a
// function of P, and the list schedule at synthesis gives the i-th task handed out the
// i-th cost, so the prediction runs the real sequence of tasks.
TEST_P(SelfScheduledTest, TaskCostsAreKeptInTheOrderTheMasterHandsThemOut) {
  const std::vector<phases::Signature> sigs = Train(GetParam());
  for (const phases::Signature& s : sigs) {
    ASSERT_EQ(s.scheduled_task_cpu_ns.size(), static_cast<std::size_t>(kTasks)) << s.nprocs;
    for (int t = 0; t < kTasks; ++t) {
      EXPECT_EQ(s.scheduled_task_cpu_ns[static_cast<std::size_t>(t)], 100000 * (1 + (t * 7) % 13))
          << "task " << t << " at " << s.nprocs;
    }
  }
  const AppModel m = BuildModel(sigs);
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->task_profile.size(), static_cast<std::size_t>(kTasks)) << DescribeModel(m);
  double mean = 0;
  for (int t = 0; t < kTasks; ++t) mean += 100000.0 * (1 + (t * 7) % 13) / kTasks;
  for (int t = 0; t < kTasks; ++t) {
    EXPECT_NEAR(p->task_profile[static_cast<std::size_t>(t)], 100000.0 * (1 + (t * 7) % 13) / mean,
                1e-4)
        << "task " << t;
  }
  EXPECT_NEAR(p->task_cpu_ns.At(25), mean, 1e-6 * mean);
  EXPECT_NE(DescribeModel(m).find("task costs: the same 400 tasks"), std::string::npos)
      << DescribeModel(m);
  // The i-th task handed out at 25 costs the i-th cost: the workers' task bursts, taken in
  // the master's order of sends to them, are the traced costs.
  const SynthesizedTrace syn(m, 25);
  std::vector<std::vector<std::int64_t>> burst(25);
  for (int r = 1; r < 25; ++r) {
    auto s = syn.OpenRank(r);
    Event e;
    std::int64_t cpu = 0;
    bool open = false;
    while (s->Next(&e)) {
      if (e.kind == EventKind::kRecv) {
        cpu = 0;
        open = true;
      } else if (e.kind == EventKind::kCompute && open) {
        cpu += e.cpu_ns;
      } else if (e.kind == EventKind::kSend && open) {
        burst[static_cast<std::size_t>(r)].push_back(cpu);
        open = false;
      }
    }
  }
  auto master = syn.OpenRank(0);
  std::vector<std::size_t> next(25, 0);
  Event e;
  int handed = 0;
  while (master->Next(&e) && handed < kTasks) {
    if (e.kind != EventKind::kSend) continue;
    const auto w = static_cast<std::size_t>(e.peer);
    if (next[w] >= burst[w].size()) continue;  // a stop
    const double want = 100000.0 * (1 + (handed * 7) % 13);
    EXPECT_NEAR(static_cast<double>(burst[w][next[w]++]), want, 0.01 * want) << "task " << handed;
    ++handed;
  }
  EXPECT_EQ(handed, kTasks);
  // Against the run generated at 25 (a list schedule of the same costs).
  MemoryTrace real(MakeSelfScheduled(25, kTasks, GetParam()));
  const Validation v = ValidateAgainst(sigs, real, TestMachine());
  EXPECT_LT(v.compute_error, 0.002);
  EXPECT_LT(v.time_error, 0.02);
  EXPECT_GT(v.pattern_match, 0.9);
}

// The synthesized master names the source of each wildcard receive (the worker its next
// reply goes to), as a traced master does, so the synthesized run can itself be replayed
// with its tasks handed out by the simulation (pas2p simulate --reschedule).
TEST_P(SelfScheduledTest, SynthesizedRunCanBeRescheduledLikeATracedOne) {
  const AppModel m = BuildModel(Train(GetParam()));
  const SynthesizedTrace syn(m, 17);
  const sim::RescheduledTrace rescheduled(syn);
  ASSERT_TRUE(rescheduled.run().rescheduled) << rescheduled.run().note;
  EXPECT_EQ(rescheduled.run().master, 0);
  EXPECT_EQ(rescheduled.run().tasks, static_cast<std::uint64_t>(kTasks));
  const sim::SimResult r = sim::Simulate(rescheduled, TestMachine(), rescheduled.Attach({}));
  EXPECT_NEAR(r.predicted_time_s, sim::Simulate(syn, TestMachine()).predicted_time_s,
              0.02 * r.predicted_time_s);
}

// Costs that change from count to count task by task (a task's cost depends on the run, not
// on its number) give no profile: the per-task draws stay.
TEST(SelfScheduledProfileTest, CostsThatDoNotRepeatAcrossCountsGiveNoProfile) {
  std::vector<phases::Signature> sigs = Train(MasterShape::kWaitany);
  std::uint64_t x = 12345;
  for (phases::Signature& s : sigs) {
    for (std::int64_t& c : s.scheduled_task_cpu_ns) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      c = 100000 + static_cast<std::int64_t>((x >> 33) % 1200000);
    }
  }
  const AppModel m = BuildModel(sigs);
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->task_profile.empty()) << DescribeModel(m);
  // And counts that ran different numbers of tasks give none either.
  sigs = Train(MasterShape::kWaitany);
  sigs.back().scheduled_task_cpu_ns.pop_back();
  EXPECT_TRUE(ScheduledPhase(BuildModel(sigs))->task_profile.empty());
}

// Without a profile (costs in no order the counts agree on, or too many tasks to keep each)
// the model still has the mean task's CPU over all tasks, exactly, and the workers' compute
// at 25 is the tasks' total. (These synthetic workers get evenly mixed tasks, so their
// per-call means are not biased here; the bundled traces below, whose are, show the
// scaling itself.)
TEST(SelfScheduledProfileTest, WithoutAProfileTheModelHasTheMeanTask) {
  std::vector<phases::Signature> sigs = Train(MasterShape::kWaitany);
  for (phases::Signature& s : sigs) {
    EXPECT_EQ(s.scheduled_tasks, kTasks);
    s.scheduled_task_cpu_ns.clear();
  }
  const AppModel m = BuildModel(sigs);
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->task_profile.empty());
  ASSERT_TRUE(p->task_cpu_ns.present) << DescribeModel(m);
  double mean = 0;
  for (int t = 0; t < kTasks; ++t) mean += 100000.0 * (1 + (t * 7) % 13) / kTasks;
  EXPECT_NEAR(p->task_cpu_ns.At(25), mean, 1e-6 * mean);
  EXPECT_NEAR(WorkersTaskCpu(SynthesizedTrace(m, 25)), kTasks * mean, 0.03 * kTasks * mean);
}

INSTANTIATE_TEST_SUITE_P(Shapes, SelfScheduledTest,
                         ::testing::Values(MasterShape::kWaitany, MasterShape::kIrecvWait,
                                           MasterShape::kBlockingRecv),
                         [](const auto& param_info) {
                           return std::string(param_info.param == MasterShape::kWaitany ? "Waitany"
                                              : param_info.param == MasterShape::kIrecvWait
                                                  ? "IrecvWait"
                                                  : "BlockingRecv");
                         });

// A master that hands out a new pool of 120 tasks in each of 3 rounds (as once per time
// step), with a bcast of the new state between rounds, at 4, 8, 16 and 32 ranks: the
// signature is one round's phases in a loop of the rounds, the model fits the rounds and the
// tasks per round, synthesis schedules each round's pool on its own, and the prediction at
// 64 is compared with a run at 64 (its tasks rescheduled by the simulation).
constexpr int kRounds = 3;
constexpr int kRoundTasks = 120;

std::vector<phases::Signature> TrainRounds(MasterShape shape) {
  std::vector<phases::Signature> sigs;
  for (int n : {4, 8, 16, 32}) {
    sigs.push_back(Analyze(MakeSelfScheduled(n, kRoundTasks, shape, 100000, false, kRounds)));
  }
  return sigs;
}

// The loop of the rounds in a sequence (at its top level), or null.
const phases::SequenceItem* RoundsLoop(const phases::Sequence& seq) {
  for (const auto& item : seq) {
    if (item.is_loop()) return &item;
  }
  return nullptr;
}

class SelfScheduledRoundsTest : public ::testing::TestWithParam<MasterShape> {};

TEST_P(SelfScheduledRoundsTest, ModelHasTheRoundsAndTheTasksPerRound) {
  const std::vector<phases::Signature> sigs = TrainRounds(GetParam());
  for (const auto& sig : sigs) {
    EXPECT_EQ(sig.scheduled_rounds, kRounds) << "at " << sig.nprocs;
    EXPECT_TRUE(sig.rounds_separated) << "at " << sig.nprocs;
    const phases::SequenceItem* loop = RoundsLoop(sig.sequence);
    ASSERT_NE(loop, nullptr) << "at " << sig.nprocs;
    EXPECT_EQ(loop->total, kRounds) << "at " << sig.nprocs;
  }
  const AppModel m = BuildModel(sigs);
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr) << DescribeModel(m);
  EXPECT_EQ(p->master, 0);
  ASSERT_TRUE(p->rounds.present) << DescribeModel(m, 64);
  EXPECT_NEAR(p->rounds.At(64), kRounds, 0.01) << DescribeModel(m, 64);
  EXPECT_NEAR(p->tasks.At(64), kRoundTasks, 0.03 * kRoundTasks) << DescribeModel(m, 64);
  // The bcast between rounds is a phase of the round, run once per round.
  bool bcast = false;
  for (const auto& ph : m.phases) {
    if (ph.slots.size() == 1 && ph.slots[0].kind == EventKind::kBcast) {
      bcast = true;
      EXPECT_NEAR(ph.weight.At(64), kRounds, 0.01) << DescribeModel(m, 64);
    }
  }
  EXPECT_TRUE(bcast) << DescribeModel(m);
  const AppModel back = ModelFromJson(ModelToJson(m), "test");
  EXPECT_EQ(ModelToJson(back), ModelToJson(m));
}

TEST_P(SelfScheduledRoundsTest, EachRoundIsScheduledOnItsOwn) {
  const AppModel m = BuildModel(TrainRounds(GetParam()));
  const SynthesizedTrace t(m, 64);
  ASSERT_GE(t.ScheduledPhase(), 0);
  const auto& tasks = t.TasksPerRank();
  const std::int64_t total = std::accumulate(tasks.begin(), tasks.end(), std::int64_t{0});
  EXPECT_NEAR(static_cast<double>(total), kRounds * kRoundTasks, 0.03 * kRounds * kRoundTasks);
  // Every worker's receives from the master equal the master's sends to it, and every
  // rank makes the run's bcasts (one per round: the real run's 2 between rounds and its
  // last one, which the rounds' phases hold too). Each round hands out its own pool: the
  // workers receive that round's tasks and one stop each before the round's bcast.
  std::vector<std::int64_t> sent(64, 0), received(64, 0);
  std::vector<std::int64_t> round_receives(kRounds + 1, 0);
  for (int r = 0; r < 64; ++r) {
    auto s = t.OpenRank(r);
    Event e;
    std::size_t bcasts = 0;
    while (s->Next(&e)) {
      if (e.kind == EventKind::kSend && r == 0) ++sent[static_cast<std::size_t>(e.peer)];
      if (e.kind == EventKind::kRecv && r > 0) {
        EXPECT_EQ(e.peer, 0);
        ++received[static_cast<std::size_t>(r)];
        ++round_receives[std::min<std::size_t>(bcasts, kRounds)];
      }
      if (e.kind == EventKind::kBcast) ++bcasts;
    }
    EXPECT_EQ(bcasts, static_cast<std::size_t>(kRounds)) << "rank " << r;
  }
  for (int r = 1; r < 64; ++r) EXPECT_EQ(sent[r], received[r]) << "worker " << r;
  for (int k = 0; k < kRounds; ++k) {
    EXPECT_NEAR(static_cast<double>(round_receives[static_cast<std::size_t>(k)]), kRoundTasks + 63,
                0.03 * kRoundTasks)
        << "round " << k;
  }
}

TEST_P(SelfScheduledRoundsTest, ValidatesAgainstTheRunAt64) {
  const std::vector<phases::Signature> sigs = TrainRounds(GetParam());
  MemoryTrace real(MakeSelfScheduled(64, kRoundTasks, GetParam(), 100000, false, kRounds));
  const Validation v = ValidateAgainst(sigs, real, TestMachine());
  EXPECT_EQ(v.count, 64);
  ASSERT_TRUE(v.rescheduled) << v.reschedule_note;
  // The master's replies mix task messages (16..784 B) with one stop per worker, so their
  // mean falls with P by no law of the candidates. 402 - 3.3 P fitted it best (0.8% off at
  // 64) but reaches 0 bytes at 121 ranks; a size law must now stay positive beyond the traced
  // counts unless it is exact (regression::Options::positive_unless_exact): 6.6%.
  EXPECT_LT(v.bytes_error, 0.08) << DescribeModel(BuildModel(sigs), 64);
  EXPECT_LT(v.compute_error, 0.05);
  EXPECT_LT(v.time_error, 0.12) << "predicted " << v.predicted_time_s << " rescheduled "
                                << v.real_simulated_time_s;
}

INSTANTIATE_TEST_SUITE_P(Shapes, SelfScheduledRoundsTest,
                         ::testing::Values(MasterShape::kWaitany, MasterShape::kIrecvWait,
                                           MasterShape::kBlockingRecv),
                         [](const auto& param_info) {
                           return std::string(param_info.param == MasterShape::kWaitany ? "Waitany"
                                              : param_info.param == MasterShape::kIrecvWait
                                                  ? "IrecvWait"
                                                  : "BlockingRecv");
                         });

// The bundled masterworker (datasets/apps/masterworker.c: T = 700 tasks over P - 1 workers,
// Irecv(MPI_ANY_SOURCE) + Waitany/Testany master) is modelled, predicted and validated. Its
// traces were taken with up to 49 ranks on 2 cores, so which worker got how many tasks in
// them follows the OS scheduler (a few workers ran most tasks); the simulation of such a
// real trace keeps that imbalance, which a self-scheduled run on a machine with a core per
// rank would not have. So the time is checked against the balanced schedule's range, not
// against the real trace's simulation (reported by `pas2p validate`).
std::vector<phases::Signature> BundledMasterworker(std::vector<int> counts) {
  std::vector<phases::Signature> sigs;
  for (int n : counts) {
    const fs::path dir = fs::path(PAS2P_SOURCE_DIR) / "datasets" / "traces" / "masterworker" /
                         ("masterworker." + std::to_string(n));
    auto trace = OpenTrace(dir);
    sigs.push_back(phases::AnalyzeTrace(*trace));
  }
  return sigs;
}

TEST(BundledMasterworkerTest, ModelPredictAndValidate) {
  const std::vector<phases::Signature> sigs = BundledMasterworker({4, 9, 16, 25, 36});
  const AppModel m = BuildModel(sigs);
  const PhaseModel* p = ScheduledPhase(m);
  ASSERT_NE(p, nullptr) << DescribeModel(m);
  EXPECT_EQ(p->master, 0);
  EXPECT_NEAR(p->tasks.At(1024), 700, 14) << DescribeModel(m, 1024);
  // At 1024 ranks there are fewer tasks than workers: 700 workers run one task each.
  const SynthesizedTrace t(m, 1024);
  const auto& tasks = t.TasksPerRank();
  const std::int64_t total = std::accumulate(tasks.begin(), tasks.end(), std::int64_t{0});
  EXPECT_NEAR(static_cast<double>(total), 700, 14);
  EXPECT_LE(*std::max_element(tasks.begin(), tasks.end()), 1);
  const Prediction pred = Predict(m, 1024, TestMachine());
  EXPECT_GT(pred.predicted_time_s, 0);
  // 36 workers of the largest task: at least the largest task's time; at most all tasks on
  // one worker.
  double task_s = 0;
  for (const auto& s : p->slots) task_s += s.cpu_ns.At(1024) * 1e-9;
  EXPECT_GT(pred.predicted_time_s, 0.5 * task_s);

  // The interval holds the span with each task's cost drawn within how far the traced
  // counts disagreed on it (1% rms here): near-ties between workers move the span.
  EXPECT_GT(p->task_profile_spread, 0);
  const Prediction at49 = Predict(m, 49, TestMachine());
  const double span = SynthesizedTrace(m, 49).ScheduleMakespanS();
  bool moved = false;
  for (int d = 1; d <= 8; ++d) {
    SynthOptions o;
    o.task_draw = d;
    const double drawn = SynthesizedTrace(m, 49, o).ScheduleMakespanS();
    moved = moved || drawn != span;
  }
  EXPECT_TRUE(moved);
  EXPECT_LT(at49.interval_low_s, at49.predicted_time_s);
  EXPECT_GT(at49.interval_high_s, at49.predicted_time_s);

  // Leave-largest-out and held-out both run; the master's partners are compared per worker.
  const Validation v = Validate(sigs,
                                *OpenTrace(fs::path(PAS2P_SOURCE_DIR) / "datasets" / "traces" /
                                           "masterworker" / "masterworker.36"),
                                TestMachine());
  EXPECT_EQ(v.count, 36);
  EXPECT_GT(v.scheduled_messages, 0u);
  EXPECT_LT(v.bytes_error, 0.05);
  // Task t costs 1 + (7t mod 13) units at every count: the model keeps the 700 costs in
  // hand-out order and their mean over tasks, so the workers' compute is right to well
  // under 1% (3.9% when it came from the workers' per-call means).
  EXPECT_EQ(p->task_profile.size(), 700u) << DescribeModel(m);
  EXPECT_LT(v.compute_error, 0.01);
  // Which worker gets how many tasks moves with the traced timing noise: the prediction
  // matches the master's partners about as well as the real trace with its noise shuffled
  // matches itself (both about 94% here).
  ASSERT_GE(v.scheduled_match_floor, 0);
  EXPECT_LT(v.scheduled_match_floor, 1);
  EXPECT_GT(v.scheduled_match, v.scheduled_match_floor - 0.03)
      << "floor " << v.scheduled_match_floor;
  // Compared with the real trace's tasks handed out by the simulation (the traced run's
  // assignment, a few workers running most tasks, is reported apart).
  ASSERT_TRUE(v.rescheduled) << v.reschedule_note;
  EXPECT_LT(v.predicted_time_s, v.real_simulated_traced_assignment_s * 0.5)
      << "a balanced schedule is much faster than the traced imbalanced one";
  EXPECT_LT(v.time_error, 0.10) << "predicted " << v.predicted_time_s << " rescheduled "
                                << v.real_simulated_time_s;
  const auto held = OpenTrace(fs::path(PAS2P_SOURCE_DIR) / "datasets" / "heldout" / "masterworker" /
                              "masterworker.49");
  const Validation h = ValidateAgainst(sigs, *held, TestMachine());
  EXPECT_EQ(h.count, 49);
  ASSERT_TRUE(h.rescheduled) << h.reschedule_note;
  EXPECT_LT(h.time_error, 0.10) << "predicted " << h.predicted_time_s << " rescheduled "
                                << h.real_simulated_time_s;
  EXPECT_LT(h.bytes_error, 0.05);
  EXPECT_LT(h.compute_error, 0.01);
  EXPECT_GT(h.scheduled_match, h.scheduled_match_floor - 0.03)
      << "floor " << h.scheduled_match_floor;
}

// The same on the bundled masterworker traces with their profiles left out: the workers'
// per-call means put the mean task 4% high at 49; scaled to the mean over tasks, the tasks'
// compute at 49 (averaged over 8 draws of the noise, each off by about 2% alone) is that of
// the held-out run.
TEST(SelfScheduledProfileTest, WithoutAProfileTheBundledRunComputesItsTasksTotal) {
  std::vector<phases::Signature> sigs = BundledMasterworker({4, 9, 16, 25, 36});
  for (phases::Signature& s : sigs) s.scheduled_task_cpu_ns.clear();
  const AppModel m = BuildModel(sigs);
  ASSERT_TRUE(ScheduledPhase(m)->task_profile.empty());
  const auto held = OpenTrace(fs::path(PAS2P_SOURCE_DIR) / "datasets" / "heldout" / "masterworker" /
                              "masterworker.49");
  const phases::Signature real = phases::AnalyzeTrace(*held);
  ASSERT_EQ(real.scheduled_tasks, 700);
  double cpu = 0;
  constexpr int kDraws = 8;
  for (int d = 1; d <= kDraws; ++d) {
    SynthOptions o;
    o.noise_seed = static_cast<std::uint64_t>(d);
    cpu += WorkersTaskCpu(SynthesizedTrace(m, 49, o)) / kDraws;
  }
  const auto total = static_cast<double>(real.scheduled_task_cpu_sum_ns);
  EXPECT_NEAR(cpu, total, 0.015 * total);
}

}  // namespace
}  // namespace pas2p::synthesis
