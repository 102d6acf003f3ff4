#include "pas2p/phases/logical_clock.h"

#include <gtest/gtest.h>

#include <map>

#include "synthetic.h"

namespace pas2p::phases {
namespace {

using testing::Gen;
using testing::MemoryTrace;

struct Recorded {
  int rank;
  std::uint64_t index;
  std::int64_t step;
  EventKind kind;
};

std::vector<Recorded> RunClock(const TraceData& data, LogicalTraceSummary* summary = nullptr) {
  MemoryTrace trace(data);
  std::vector<Recorded> out;
  LogicalTraceSummary s = RunLogicalClock(trace, [&](const LogicalEvent& e) {
    out.push_back(Recorded{e.rank, e.index, e.step, e.event->kind});
  });
  if (summary) *summary = s;
  return out;
}

TEST(LogicalClock, ReceiveHappensAfterItsSend) {
  // Rank 1 computes a lot before sending; rank 0 receives it, then sends back.
  TraceData d;
  d.ranks.resize(2);
  d.ranks[0] = {MakeRecv(1, 0, 8), MakeSend(1, 0, 8)};
  d.ranks[1] = {MakeSend(0, 0, 8), MakeSend(0, 5, 8), MakeSend(0, 6, 8), MakeRecv(0, 0, 8)};
  d.ranks[0].insert(d.ranks[0].begin(), MakeRecv(1, 6, 8));  // receives tag 6 first
  // rank 0: recv(tag 6) recv(tag 0) send ; rank 1: send(0) send(5) send(6) recv
  d.ranks[0].push_back(MakeRecv(1, 5, 8));
  std::map<std::pair<int, std::uint64_t>, std::int64_t> step;
  for (const Recorded& r : RunClock(d)) step[{r.rank, r.index}] = r.step;
  // tag 6 is rank 1's third call (step 3): rank 0's first recv is at step 4.
  EXPECT_EQ(step[std::make_pair(1, std::uint64_t{2})], 3);
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{0})], 4);
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{1})],
            5);  // tag 0 sent at step 1, but rank 0 is already at 4
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{2})], 6);
  EXPECT_EQ(step[std::make_pair(1, std::uint64_t{3})],
            7);  // rank 1 receives what rank 0 sent at step 6
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{3})], 7);  // tag 5 sent at step 2
}

TEST(LogicalClock, CollectiveCompletesAfterAllMembersEnter) {
  TraceData d;
  d.ranks.resize(3);
  d.ranks[0] = {MakeSend(1, 0, 8), MakeSend(1, 0, 8), MakeSend(1, 0, 8),
                MakeCollective(EventKind::kAllreduce, 8, 8)};
  d.ranks[1] = {MakeRecv(0, 0, 8), MakeRecv(0, 0, 8), MakeRecv(0, 0, 8),
                MakeCollective(EventKind::kAllreduce, 8, 8)};
  d.ranks[2] = {MakeCollective(EventKind::kAllreduce, 8, 8)};
  std::vector<std::int64_t> steps;
  for (const Recorded& r : RunClock(d)) {
    if (r.kind == EventKind::kAllreduce) steps.push_back(r.step);
  }
  ASSERT_EQ(steps.size(), 3u);
  // Rank 1 is at step 4 after its three receives: everyone leaves at 5.
  EXPECT_EQ(steps[0], 5);
  EXPECT_EQ(steps[1], 5);
  EXPECT_EQ(steps[2], 5);
}

TEST(LogicalClock, WaitCompletesIrecvAfterSendAndSubCommunicatorsUseTheirMembers) {
  TraceData d;
  d.ranks.resize(3);
  Event split;
  split.kind = EventKind::kCommCreate;
  split.new_comm = 77;
  split.members = {0, 2};
  d.ranks[0] = {split, MakeIrecv(kAnySource, kAnyTag, 4, 1), MakeWaitall({1}),
                MakeCollective(EventKind::kBarrier, 0, 0, kNoRank, 77)};
  d.ranks[0][2].completed[0].peer = 1;
  d.ranks[0][2].completed[0].tag = 3;
  d.ranks[1] = {MakeCollective(EventKind::kBarrier, 0, 0),
                MakeCollective(EventKind::kBarrier, 0, 0), MakeSend(0, 3, 4)};
  d.ranks[2] = {split, MakeCollective(EventKind::kBarrier, 0, 0, kNoRank, 77)};
  // World barriers need rank 0 and 2 too: make rank 1's barriers on a communicator of its own.
  d.ranks[1][0] = MakeCollective(EventKind::kBarrier, 0, 0, kNoRank, kCommSelf);
  d.ranks[1][1] = MakeCollective(EventKind::kBarrier, 0, 0, kNoRank, kCommSelf);
  std::map<std::pair<int, std::uint64_t>, std::int64_t> step;
  for (const Recorded& r : RunClock(d)) step[{r.rank, r.index}] = r.step;
  EXPECT_EQ(step[std::make_pair(1, std::uint64_t{2})], 3);
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{2})],
            4);  // the waitall follows the send at step 3
  EXPECT_EQ(step[std::make_pair(0, std::uint64_t{3})], 5);  // barrier on {0, 2}: rank 0 enters at 4
  EXPECT_EQ(step[std::make_pair(2, std::uint64_t{1})], 5);
}

TEST(LogicalClock, UnmatchedSendIsAnErrorNamingBothRanks) {
  TraceData d;
  d.ranks.resize(2);
  d.ranks[0] = {MakeSend(1, 4, 8)};
  d.ranks[1] = {};
  try {
    RunClock(d);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 0 sent 1 message to rank 1"), std::string::npos) << m;
    EXPECT_NE(m.find("never received"), std::string::npos) << m;
  }
}

TEST(LogicalClock, ReceiveWithoutSendIsAnErrorNamingTheRanks) {
  TraceData d;
  d.ranks.resize(3);
  d.ranks[2] = {MakeRecv(1, 0, 8)};
  try {
    RunClock(d);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 2 event #0 (recv) waits for a message from rank 1"), std::string::npos)
        << m;
  }
}

TEST(LogicalClock, DifferentCollectiveSequencesAreAnError) {
  TraceData d;
  d.ranks.resize(2);
  d.ranks[0] = {MakeCollective(EventKind::kAllreduce, 8, 8)};
  d.ranks[1] = {MakeCollective(EventKind::kBcast, 8, 8, 0)};
  try {
    RunClock(d);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 0 calls allreduce"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 1 (event #0) calls bcast"), std::string::npos) << m;
  }
}

TEST(LogicalClock, SendrecvPairsDoNotDeadlock) {
  TraceData d;
  d.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    Event e;
    e.kind = EventKind::kSendrecv;
    e.peer = 1 - r;
    e.recv_peer = 1 - r;
    e.bytes = e.recv_bytes = 16;
    d.ranks[r] = {e, e};
  }
  LogicalTraceSummary s;
  auto rec = RunClock(d, &s);
  EXPECT_EQ(s.events, 4u);
  // Each sendrecv: send half at own clock + 1, receive half one step after the peer's send.
  EXPECT_EQ(rec.back().step, 4);
}

}  // namespace
}  // namespace pas2p::phases
