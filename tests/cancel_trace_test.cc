// Receives that are cancelled (tests/programs/cancel_recv.c: every iteration a receive from
// MPI_ANY_SOURCE that no rank sends to, cancelled after a ring exchange), traced under a real
// mpirun: the tracer records each cancellation (MPI_Test_cancelled), every reader leaves the
// cancelled receives out, and the traces analyze, simulate, model and predict as the ring
// alone would (before: "completes a wildcard receive without saying which rank sent it",
// and deadlocks in the simulation waiting for a message from any source).
#include <gtest/gtest.h>

#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kIterations = 12;

TEST(CancelledReceives, AreRecordedAndLeftOutOfEveryReader) {
  TempDir tmp;
  std::vector<phases::Signature> sigs;
  std::unique_ptr<TraceSource> largest;
  std::string used;
  const sim::Machine machine = synthesis::LoadMachineOrDefault("", &used);
  for (int n : {3, 4, 5, 6}) {
    auto traced = TraceApp("cancel_recv", n, {std::to_string(kIterations), "2048"},
                           tmp.path() / ("t" + std::to_string(n)));
    ASSERT_FALSE(traced.trace_dir.empty());
    auto trace = OpenTrace(traced.trace_dir);
    for (int r = 0; r < n; ++r) {
      // As recorded: one cancelled completion per iteration.
      auto recorded = trace->OpenRankAsRecorded(r);
      int cancelled = 0, listening = 0;
      Event e;
      while (recorded->Next(&e)) {
        listening += e.kind == EventKind::kIrecv && e.peer == kAnySource;
        for (const Completion& c : e.completed) cancelled += c.peer == kCancelled;
      }
      EXPECT_EQ(cancelled, kIterations) << "rank " << r << " at " << n;
      EXPECT_EQ(listening, kIterations) << "rank " << r << " at " << n;
      // As read: no trace of them, and every wait still names what it waits for.
      auto read = trace->OpenRank(r);
      int irecvs = 0, empty_waits = 0;
      while (read->Next(&e)) {
        irecvs += e.kind == EventKind::kIrecv;
        empty_waits += IsCompletion(e.kind) && e.requests.empty();
        for (const Completion& c : e.completed) EXPECT_NE(c.peer, kCancelled);
      }
      EXPECT_EQ(irecvs, 0) << "rank " << r << " at " << n;
      EXPECT_EQ(empty_waits, 0) << "rank " << r << " at " << n;
    }
    EXPECT_GT(sim::Simulate(*trace, machine).predicted_time_s, 0) << "at " << n;
    sigs.push_back(phases::AnalyzeTrace(*trace));
    if (n == 6) largest = std::move(trace);
  }
  const synthesis::Validation v = synthesis::Validate(sigs, *largest, machine);
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-9);
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  EXPECT_GT(synthesis::Predict(m, 64, machine).predicted_time_s, 0);
}

}  // namespace
}  // namespace pas2p::testing
