// A self-scheduled master/worker whose master receives with a blocking MPI_Recv
// (MPI_ANY_SOURCE) (tests/programs/selfsched_recv.c), traced under a real mpirun at 3..6
// ranks and predicted at 8: the tracer keeps that the receive was a wildcard, the phases
// find the master's replies and the workers' own task counts, the model has a self-scheduled
// phase, and the synthesized run at 8 completes with every task run once. The time is not
// checked: the traces are taken with up to 8 ranks on a shared machine, so which worker ran
// how many tasks follows the OS scheduler (see `pas2p validate --help`).
#include <gtest/gtest.h>

#include <numeric>

#include "pas2p/core/error.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/simulator/reschedule.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kTasks = 90;

// The model's self-scheduled phase, or null.
const synthesis::PhaseModel* ScheduledPhase(const synthesis::AppModel& m) {
  for (const auto& p : m.phases) {
    if (p.scheduled) return &p;
  }
  return nullptr;
}

// The real trace replayed with its tasks handed out by the simulation (what `pas2p validate`
// compares with): every task is found and run once, with the same compute and bytes.
void ExpectRescheduled(const TraceSource& trace, int tasks, const std::string& what) {
  std::string used;
  const sim::Machine machine = synthesis::LoadMachineOrDefault("", &used);
  const sim::RescheduledReplay replay = sim::SimulateRescheduled(trace, machine);
  ASSERT_TRUE(replay.run.rescheduled) << what << ": " << replay.run.note;
  EXPECT_EQ(replay.run.master, 0) << what;
  EXPECT_EQ(replay.run.tasks, static_cast<std::uint64_t>(tasks)) << what;
  EXPECT_EQ(replay.run.workers.size(), static_cast<std::size_t>(trace.nprocs() - 1)) << what;
  const sim::SimResult plain = sim::Simulate(trace, machine);
  double compute_a = 0, compute_b = 0;
  std::uint64_t bytes_a = 0, bytes_b = 0;
  for (const auto& r : plain.ranks) {
    compute_a += r.compute_s;
    bytes_a += r.bytes_sent;
  }
  for (const auto& r : replay.result.ranks) {
    compute_b += r.compute_s;
    bytes_b += r.bytes_sent;
  }
  EXPECT_NEAR(compute_a, compute_b, 1e-9 * compute_a) << what;
  EXPECT_EQ(bytes_a, bytes_b) << what;
}

TEST(SelfScheduledTrace, BlockingWildcardMasterIsModelledAndPredicted) {
  TempDir tmp;
  std::vector<phases::Signature> sigs;
  std::unique_ptr<TraceSource> held_out;
  for (int n : {3, 4, 5, 6, 8}) {
    auto traced = TraceApp("selfsched_recv", n, {std::to_string(kTasks), "4000"},
                           tmp.path() / ("t" + std::to_string(n)));
    ASSERT_FALSE(traced.trace_dir.empty());
    auto trace = OpenTrace(traced.trace_dir);
    if (n == 8) {
      held_out = std::move(trace);
      continue;
    }
    // The master's receives say they were posted as MPI_ANY_SOURCE.
    const TraceData data = ReadTrace(*trace);
    int wildcard = 0;
    for (const Event& e : data.ranks[0])
      wildcard += e.kind == EventKind::kRecv && e.recv_peer == kAnySource;
    EXPECT_EQ(wildcard, kTasks) << "rank 0 at " << n;
    sigs.push_back(phases::AnalyzeTrace(*trace));
    EXPECT_EQ(sigs.back().scheduled_rounds, 1) << "at " << n;
  }
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  const synthesis::PhaseModel* scheduled = ScheduledPhase(m);
  ASSERT_NE(scheduled, nullptr) << synthesis::DescribeModel(m);
  EXPECT_EQ(scheduled->master, 0);
  EXPECT_NEAR(scheduled->tasks.At(8), kTasks, 2) << synthesis::DescribeModel(m, 8);
  const synthesis::SynthesizedTrace t(m, 8);
  const auto& per_rank = t.TasksPerRank();
  EXPECT_NEAR(std::accumulate(per_rank.begin(), per_rank.end(), 0.0), kTasks, 2);
  std::string used;
  const sim::Machine machine = synthesis::LoadMachineOrDefault("", &used);
  const synthesis::Validation v = synthesis::ValidateAgainst(sigs, *held_out, machine);
  EXPECT_EQ(v.count, 8);
  EXPECT_GT(v.scheduled_messages, 0u);
  EXPECT_LT(v.bytes_error, 0.05);
  EXPECT_GT(v.predicted_time_s, 0);
  EXPECT_GT(v.real_simulated_time_s, 0);
  EXPECT_TRUE(v.rescheduled) << v.reschedule_note;
  ExpectRescheduled(*held_out, kTasks, "held-out run at 8");
}

// The same master finding the next result with MPI_Probe(MPI_ANY_SOURCE), or by polling
// MPI_Iprobe(MPI_ANY_SOURCE), then receiving from the source the probe found: that receive
// names a source, but the probe chose it, so the tracer records it as a wildcard one and the
// model finds the same self-scheduled phase.
class ProbingMaster : public ::testing::TestWithParam<const char*> {};

TEST_P(ProbingMaster, IsModelledAsSelfScheduled) {
  TempDir tmp;
  std::vector<phases::Signature> sigs;
  for (int n : {3, 4, 5}) {
    auto traced = TraceApp("selfsched_recv", n, {std::to_string(kTasks), "4000", GetParam()},
                           tmp.path() / ("t" + std::to_string(n)));
    ASSERT_FALSE(traced.trace_dir.empty());
    auto trace = OpenTrace(traced.trace_dir);
    const TraceData data = ReadTrace(*trace);
    int wildcard = 0;
    for (const Event& e : data.ranks[0])
      wildcard += e.kind == EventKind::kRecv && e.recv_peer == kAnySource;
    EXPECT_EQ(wildcard, kTasks) << "rank 0 at " << n;
    sigs.push_back(phases::AnalyzeTrace(*trace));
    if (n == 5) ExpectRescheduled(*trace, kTasks, std::string(GetParam()) + " at 5");
  }
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  const synthesis::PhaseModel* scheduled = ScheduledPhase(m);
  ASSERT_NE(scheduled, nullptr) << synthesis::DescribeModel(m);
  EXPECT_EQ(scheduled->master, 0);
  EXPECT_NEAR(scheduled->tasks.At(6), kTasks, 2) << synthesis::DescribeModel(m, 6);
}

INSTANTIATE_TEST_SUITE_P(Probes, ProbingMaster, ::testing::Values("probe", "iprobe"));

// The master hands the task pool out 3 times (a new pool per round, as once per time step).
// Traces of the rounds at 3, 4 and 5 ranks.
std::vector<phases::Signature> TraceRounds(const TempDir& tmp, const char* sync) {
  std::vector<phases::Signature> sigs;
  for (int n : {3, 4, 5}) {
    auto traced = TraceApp("selfsched_recv", n, {"60", "4000", "recv", "3", sync},
                           tmp.path() / ("t" + std::to_string(n)));
    EXPECT_FALSE(traced.trace_dir.empty());
    if (traced.trace_dir.empty()) return {};
    sigs.push_back(phases::AnalyzeTrace(*OpenTrace(traced.trace_dir)));
    EXPECT_EQ(sigs.back().scheduled_rounds, 3) << "at " << n;
    // Every round's stops end the workers' rounds in the rescheduled replay too.
    if (n == 5) ExpectRescheduled(*OpenTrace(traced.trace_dir), 3 * 60, "3 rounds at 5");
  }
  return sigs;
}

// Each round ends with an MPI_Allreduce: the model is one round's phases repeated, with the
// rounds and the tasks per round fitted over P. (The synthesized run is checked on generated
// traces, synthesis/tests/selfsched_test.cc: on these real ones the compressor sometimes cuts
// a worker's task between two of its pieces, and that half task is left out of the model.)
TEST(RoundsMaster, EndedByAnAllreduceIsModelledPerRound) {
  TempDir tmp;
  const std::vector<phases::Signature> sigs = TraceRounds(tmp, "1");
  ASSERT_EQ(sigs.size(), 3u);
  for (const auto& s : sigs) EXPECT_TRUE(s.rounds_separated) << "at " << s.nprocs;
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  const synthesis::PhaseModel* scheduled = ScheduledPhase(m);
  ASSERT_NE(scheduled, nullptr) << synthesis::DescribeModel(m);
  ASSERT_TRUE(scheduled->rounds.present) << synthesis::DescribeModel(m, 8);
  EXPECT_NEAR(scheduled->rounds.At(8), 3, 0.01) << synthesis::DescribeModel(m, 8);
  EXPECT_NEAR(scheduled->tasks.At(8), 60, 2) << synthesis::DescribeModel(m, 8);
  // The allreduce ending each round is a phase of the round: once per round.
  bool allreduce = false;
  for (const auto& ph : m.phases) {
    if (ph.slots.size() == 1 && ph.slots[0].kind == EventKind::kAllreduce) {
      allreduce = true;
      EXPECT_NEAR(ph.weight.At(8), 3, 0.01) << synthesis::DescribeModel(m, 8);
    }
  }
  EXPECT_TRUE(allreduce) << synthesis::DescribeModel(m);
}

// Without a collective ending each round the workers' calls cannot be told apart by round:
// the model says so plainly (rather than failing on phases that do not correspond, or on a
// synthesized run that deadlocks).
TEST(RoundsMaster, NotEndedByACollectiveIsRefusedWithTheRoundsNamed) {
  TempDir tmp;
  const std::vector<phases::Signature> sigs = TraceRounds(tmp, "0");
  ASSERT_EQ(sigs.size(), 3u);
  try {
    synthesis::BuildModel(sigs);
    ADD_FAILURE() << "a model of rounds that cannot be told apart was built";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("in 3 separate rounds"), std::string::npos) << what;
    EXPECT_NE(what.find("no collective of all ranks ends every round"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace pas2p::testing
