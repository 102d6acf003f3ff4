// A non-blocking consensus (tests/programs/nbx_consensus.c: MPI_Issend to two partners,
// MPI_Iprobe and MPI_Recv of whatever arrives, MPI_Ibarrier once the sends are matched),
// traced under a real mpirun: the barrier is recorded where it completes, after every
// message the rank received while it ran, so the trace replays. Recorded where it started,
// a rank waited in the replay's barrier for a rank whose synchronous send waited for that
// rank's receive (DOLFINx's traces deadlocked so).
#include <gtest/gtest.h>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/synthesis/inputs.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kRounds = 3;

TEST(NonBlockingConsensus, EachBarrierIsRecordedAfterTheMessagesItsRankReceivedAndReplays) {
  TempDir tmp;
  std::string used;
  const sim::Machine machine = synthesis::LoadMachineOrDefault("", &used);
  for (int n : {4, 6}) {
    SCOPED_TRACE("at " + std::to_string(n));
    auto traced = TraceApp("nbx_consensus", n, {std::to_string(kRounds)},
                           tmp.path() / ("t" + std::to_string(n)));
    ASSERT_FALSE(traced.trace_dir.empty());
    EXPECT_NE(traced.run.out.find("nbx checksum"), std::string::npos) << traced.run.out;
    auto trace = OpenTrace(traced.trace_dir);
    for (int r = 0; r < n; ++r) {
      auto events = trace->OpenRank(r);
      Event e;
      int received = 0, barriers = 0;
      while (events->Next(&e)) {
        if (e.kind == EventKind::kRecv && e.tag == 5 + barriers) ++received;
        if (e.kind == EventKind::kBarrier) {
          ++barriers;
          // Every round's 2 messages are in before the round's barrier.
          EXPECT_EQ(received, 2 * barriers) << "rank " << r << ", barrier " << barriers;
        }
      }
      EXPECT_EQ(barriers, kRounds) << "rank " << r;
      EXPECT_EQ(received, 2 * kRounds) << "rank " << r;
    }
    EXPECT_EQ(CheckPointToPointMatching(ReadTrace(*trace)), "");
    EXPECT_GT(sim::Simulate(*trace, machine).predicted_time_s, 0);
  }
}

}  // namespace
}  // namespace pas2p::testing
