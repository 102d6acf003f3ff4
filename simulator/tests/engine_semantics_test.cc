// MPI semantics of the replay: non-blocking requests and the paper-003 treatment of
// waitany/test, wildcard receives, deadlock and error reports, sub-communicator
// collectives, and determinism of every output.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "memory_trace.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/outputs.h"

namespace pas2p::sim {
namespace {

using testing::CommCreate;
using testing::Compute;
using testing::MemoryTrace;
using testing::Sendrecv;
using testing::Wait;
using testing::Waitall;

constexpr double kL = 10e-6;
constexpr double kB = 1e9;

Machine TestMachine() { return testing::OneRankPerNode(kL, kB); }

void ExpectTime(double expected, double actual) {
  EXPECT_NEAR(expected, actual, 1e-12 + 1e-12 * std::abs(expected));
}

Event Waitany(std::vector<RequestId> passed, RequestId completed, std::int32_t source) {
  Event e;
  e.kind = EventKind::kWaitany;
  e.requests = std::move(passed);
  e.completed = {Completion{completed, source, 0, 1000}};
  return e;
}

// Paper 003, Fig. 4: a master collects one message from each of three workers with
// MPI_Waitany and works on each (1.5 ms). The trace was taken when the messages arrived in
// rank order (foo grows with the rank), so the traced completions are 1, 2, 3.
MemoryTrace WaitanyBenchmark(const double foo_s[3]) {
  MemoryTrace t(4);
  auto& master = t.rank(0);
  for (int w = 1; w <= 3; ++w) master.push_back(MakeIrecv(w, 0, 1000, w));
  master.push_back(Waitany({1, 2, 3}, 1, 1));
  master.push_back(Compute(1.5e-3));
  master.push_back(Waitany({2, 3}, 2, 2));
  master.push_back(Compute(1.5e-3));
  master.push_back(Waitany({3}, 3, 3));
  master.push_back(Compute(1.5e-3));
  for (int w = 1; w <= 3; ++w) t.rank(w) = {Compute(foo_s[w - 1]), MakeSend(0, 0, 1000)};
  return t;
}

TEST(NonBlocking, WaitanyUnbalancedRunBothModesFollowTheTrace) {
  const double foo[3] = {1e-3, 2e-3, 3e-3};  // as traced: arrivals in rank order
  const double t = kL + 1000 / kB;
  for (bool det : {false, true}) {
    SimOptions o;
    o.deterministic = det;
    SimResult r = Simulate(WaitanyBenchmark(foo), TestMachine(), o);
    ExpectTime(1e-3 + t + 3 * 1.5e-3, r.predicted_time_s);
    EXPECT_EQ(r.remapped_completions, 0u);
  }
}

TEST(NonBlocking, WaitanyBalancedRunReturnsTheFirstToCompleteUnlessDeterministic) {
  // The hypothesis reverses the arrival order (paper 003, Fig. 4b).
  const double foo[3] = {3e-3, 2e-3, 1e-3};
  const double t = kL + 1000 / kB;
  SimResult nondet = Simulate(WaitanyBenchmark(foo), TestMachine());
  // Worker 3's message first (1 ms + t), work till 2.5 ms + t; worker 2's arrived at
  // 2 ms + t, work till 4 ms + t; worker 1's arrived at 3 ms + t, work till 5.5 ms + t.
  ExpectTime(5.5e-3 + t, nondet.predicted_time_s);
  EXPECT_EQ(nondet.remapped_completions, 1u);  // the first waitany was swapped
  SimOptions det;
  det.deterministic = true;
  SimResult traced = Simulate(WaitanyBenchmark(foo), TestMachine(), det);
  // Traced order: wait for worker 1 (3 ms + t), then 2 and 3 are already there.
  ExpectTime(3e-3 + t + 3 * 1.5e-3, traced.predicted_time_s);
  EXPECT_EQ(traced.remapped_completions, 0u);
  EXPECT_GT(traced.ranks[0].wait_s, nondet.ranks[0].wait_s);
}

TEST(NonBlocking, WaitsomeCompletesAsManyAsTheTraceDid) {
  // Waitsome over 3 requests that completed 2 in the trace (1 and 2); in the simulation 3
  // and 2 arrive first.
  MemoryTrace t(4);
  auto& m = t.rank(0);
  for (int w = 1; w <= 3; ++w) m.push_back(MakeIrecv(w, 0, 1000, w));
  Event some;
  some.kind = EventKind::kWaitsome;
  some.requests = {1, 2, 3};
  some.completed = {Completion{1, 1, 0, 1000}, Completion{2, 2, 0, 1000}};
  m.push_back(some);
  m.push_back(Compute(1e-3));
  m.push_back(Wait(3));
  const double foo[3] = {5e-3, 2e-3, 1e-3};
  for (int w = 1; w <= 3; ++w) t.rank(w) = {Compute(foo[w - 1]), MakeSend(0, 0, 1000)};
  const double x = kL + 1000 / kB;
  SimResult r = Simulate(t, TestMachine());
  // Two first: 3 (1 ms) and 2 (2 ms) -> 2 ms + x; work 1 ms; then the remaining (the
  // trace's "3", remapped to worker 1's request) arrives at 5 ms + x.
  ExpectTime(5e-3 + x, r.predicted_time_s);
  EXPECT_EQ(r.remapped_completions, 1u);
  SimOptions det;
  det.deterministic = true;
  // Traced: wait for 1 and 2 (5 ms + x), work 1 ms, 3 is there.
  ExpectTime(6e-3 + x, Simulate(t, TestMachine(), det).predicted_time_s);
}

TEST(NonBlocking, FailedTestIsPreDrawnWhenTheRequestHasCompleted) {
  MemoryTrace t(2);
  Event test;
  test.kind = EventKind::kTest;
  test.requests = {7};
  t.rank(0) = {MakeIrecv(1, 0, 100, 7), Compute(5e-3), test, Compute(1e-3), Wait(7)};
  t.rank(1) = {MakeSend(0, 0, 100)};
  SimResult r = Simulate(t, TestMachine());
  ExpectTime(6e-3, r.predicted_time_s);
  EXPECT_EQ(r.remapped_completions, 1u);  // the test completed it; the wait is a no-op
  SimOptions det;
  det.deterministic = true;
  SimResult d = Simulate(t, TestMachine(), det);
  ExpectTime(6e-3, d.predicted_time_s);
  EXPECT_EQ(d.remapped_completions, 0u);
}

TEST(NonBlocking, SuccessfulTestWaitsWhenTheSimulationIsNotThereYet) {
  MemoryTrace t(2);
  Event test;
  test.kind = EventKind::kTest;
  test.requests = {7};
  test.completed = {Completion{7, 1, 0, 100}};
  t.rank(0) = {MakeIrecv(1, 0, 100, 7), test, Compute(1e-3)};
  t.rank(1) = {Compute(3e-3), MakeSend(0, 0, 100)};
  SimResult r = Simulate(t, TestMachine());
  ExpectTime(3e-3 + kL + 100 / kB + 1e-3, r.predicted_time_s);
}

TEST(NonBlocking, SendrecvExchangesWithoutDeadlock) {
  const int p = 6;
  MemoryTrace t(p);
  for (int r = 0; r < p; ++r)
    t.rank(r) = {testing::Sendrecv((r + 1) % p, 1 << 20, (r + p - 1) % p, 1 << 20)};
  SimResult res = Simulate(t, TestMachine());
  ExpectTime(kL + (1 << 20) / kB, res.predicted_time_s);
}

TEST(Wildcards, AnySourceMatchesTheFirstArrivalUnlessDeterministic) {
  MemoryTrace t(3);
  Event wait1 = Wait(1);
  wait1.completed[0].peer = 1;  // traced: the first receive got rank 1's message
  Event wait2 = Wait(2);
  wait2.completed[0].peer = 2;
  t.rank(0) = {MakeIrecv(kAnySource, 0, 100, 1), MakeIrecv(kAnySource, 0, 100, 2), wait1,
               Compute(10e-3), wait2};
  t.rank(1) = {Compute(2e-3), MakeSend(0, 0, 100)};
  t.rank(2) = {Compute(1e-3), MakeSend(0, 0, 100)};
  const double x = kL + 100 / kB;
  ExpectTime(1e-3 + x + 10e-3, Simulate(t, TestMachine()).predicted_time_s);
  SimOptions det;
  det.deterministic = true;
  ExpectTime(2e-3 + x + 10e-3, Simulate(t, TestMachine(), det).predicted_time_s);
}

TEST(Wildcards, MessagesFromOneSourceDoNotOvertake) {
  // Rank 1 sends a large then a small eager message; the small one arrives first, but an
  // MPI_ANY_SOURCE receive posted after both arrived must still take the large one first.
  MemoryTrace t(2);
  t.rank(0) = {Compute(5e-3), MakeIrecv(kAnySource, 0, 60000, 1), Wait(1),
               Compute(1e-3), MakeIrecv(kAnySource, 0, 60000, 2), Wait(2)};
  t.rank(1) = {MakeIsend(0, 0, 60000, 1), MakeIsend(0, 0, 10, 2), Waitall({1, 2})};
  Machine m = TestMachine();
  m.eager_threshold_bytes = 64 * 1024;
  SimOptions o;
  o.record_timeline = true;
  SimResult r = Simulate(t, m, o);
  ASSERT_EQ(r.timeline.messages.size(), 2u);
  for (const MessageRecord& msg : r.timeline.messages) {
    if (msg.bytes == 60000) ExpectTime(5e-3, msg.recv_posted_s);
    if (msg.bytes == 10) ExpectTime(6e-3, msg.recv_posted_s);
  }
  // Physically the small one arrived first.
  EXPECT_EQ(r.timeline.messages[0].bytes, 10u);
}

TEST(Errors, DeadlockReportNamesEveryBlockedRankAndWhatItWaitsFor) {
  MemoryTrace t(3);
  t.rank(0) = {MakeRecv(1, 4, 8)};
  t.rank(1) = {MakeRecv(0, 5, 8)};
  t.rank(2) = {Compute(1e-3)};
  try {
    Simulate(t, TestMachine());
    FAIL() << "expected a deadlock";
  } catch (const SimulationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock: 2 of 3 ranks"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0 at 0 s, event #0 (recv): waits for a message from rank 1 "
                        "(tag 4, MPI_COMM_WORLD)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("rank 1 at 0 s, event #0 (recv): waits for a message from rank 0 "
                        "(tag 5, MPI_COMM_WORLD)"),
              std::string::npos)
        << what;
  }
}

TEST(Errors, BlockingSendsDeadlockOnlyAboveTheEagerThreshold) {
  for (std::uint64_t bytes : {1024ull, 1ull << 20}) {
    MemoryTrace t(2);
    t.rank(0) = {MakeSend(1, 0, bytes), MakeRecv(1, 0, bytes)};
    t.rank(1) = {MakeSend(0, 0, bytes), MakeRecv(0, 0, bytes)};
    if (bytes <= TestMachine().eager_threshold_bytes) {
      EXPECT_NO_THROW(Simulate(t, TestMachine()));
    } else {
      try {
        Simulate(t, TestMachine());
        FAIL() << "expected a deadlock";
      } catch (const SimulationError& e) {
        EXPECT_NE(std::string(e.what()).find("a matching receive at rank 1 for its rendezvous "
                                             "send"),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(Errors, CollectiveDeadlockNamesTheMissingMembers) {
  MemoryTrace t(3);
  t.rank(0) = {MakeCollective(EventKind::kBarrier, 0, 0)};
  t.rank(1) = {MakeCollective(EventKind::kBarrier, 0, 0)};
  t.rank(2) = {Compute(1e-3)};
  try {
    Simulate(t, TestMachine());
    FAIL();
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 3 members arrived; missing: 2"), std::string::npos)
        << e.what();
  }
}

TEST(Errors, UnmatchedSendAndReceiveNameRankAndEvent) {
  MemoryTrace t(2);
  t.rank(0) = {Compute(1e-3), MakeIsend(1, 9, 64, 1)};
  t.rank(1) = {MakeIrecv(0, 3, 64, 1)};
  try {
    Simulate(t, TestMachine());
    FAIL();
  } catch (const SimulationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 0, event #1: send to rank 1 (tag 9, MPI_COMM_WORLD, 64 bytes) "
                        "was never received"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("rank 1, event #0: receive from rank 0 (tag 3, MPI_COMM_WORLD) was "
                        "never matched"),
              std::string::npos)
        << what;
  }
}

TEST(Errors, PeerOutOfRangeUnknownCommAndUnknownRequest) {
  MemoryTrace a(2);
  a.rank(0) = {MakeSend(5, 0, 8)};
  EXPECT_THROW(
      {
        try {
          Simulate(a, TestMachine());
        } catch (const SimulationError& e) {
          EXPECT_NE(std::string(e.what()).find(
                        "rank 0, event #0 (send): peer rank 5 is outside the run (ranks 0..1)"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      SimulationError);
  MemoryTrace b(2);
  b.rank(0) = {MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, 77)};
  b.rank(1) = {MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, 77)};
  try {
    Simulate(b, TestMachine());
    FAIL();
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown communicator 77"), std::string::npos);
  }
  MemoryTrace c(1);
  c.rank(0) = {Wait(3)};
  try {
    Simulate(c, TestMachine());
    FAIL();
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("request 3 was never started"), std::string::npos);
  }
  MemoryTrace d(2);
  d.rank(0) = {MakeCollective(EventKind::kBcast, 8, 0, 0)};
  d.rank(1) = {MakeCollective(EventKind::kReduce, 8, 0, 0)};
  try {
    Simulate(d, TestMachine());
    FAIL();
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("collective mismatch"), std::string::npos);
  }
}

TEST(Collectives, SubCommunicatorsSynchroniseOnlyTheirMembers) {
  MemoryTrace t(4);
  const CommId lo = 10, hi = 11;
  const double arrive[4] = {1e-3, 2e-3, 5e-3, 6e-3};
  for (int r = 0; r < 4; ++r) {
    const CommId c = r < 2 ? lo : hi;
    t.rank(r) = {
        CommCreate(c, r < 2 ? std::vector<std::int32_t>{0, 1} : std::vector<std::int32_t>{2, 3}),
        Compute(arrive[r]), MakeCollective(EventKind::kAllreduce, 1000, 1000, kNoRank, c),
        MakeCollective(EventKind::kBarrier, 0, 0)};
  }
  Machine m = TestMachine();
  m.collectives[0] = {CollModel::kZero, CollSize::kMax, CollModel::kZero, CollSize::kMax};
  SimOptions o;
  o.record_timeline = true;
  SimResult r = Simulate(t, m, o);
  // C = 2: one LOG stage each way: (L + 2000/B) + (L + 1000/B).
  const double t2 = (kL + 2000 / kB) + (kL + 1000 / kB);
  // Ranks 0 and 1 left the allreduce at 2 ms + t2, 2 and 3 at 6 ms + t2; the free world
  // barrier then waits for everyone.
  ExpectTime(6e-3 + t2, r.predicted_time_s);
  ExpectTime(1e-3, r.ranks[0].wait_s - (6e-3 - 2e-3));  // 1 ms in allreduce + 4 ms barrier
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[1].kind, EventKind::kAllreduce);
  EXPECT_EQ(r.collectives[1].calls, 2u);
  // Timeline: rank 0's group communication of the allreduce ends at 2 ms + t2.
  bool found = false;
  for (const StateInterval& s : r.timeline.intervals)
    if (s.rank == 0 && s.state == RankState::kGroupCommunication) {
      ExpectTime(2e-3 + t2, s.end_s);
      found = true;
    }
  EXPECT_TRUE(found);
}

// A trace with a bit of everything, for the determinism test.
MemoryTrace Mixed(int p) {
  MemoryTrace t(p);
  for (int r = 0; r < p; ++r) {
    auto& ev = t.rank(r);
    ev.push_back(CommCreate(100 + r % 2, [&] {
      std::vector<std::int32_t> m;
      for (int i = r % 2; i < p; i += 2) m.push_back(i);
      return m;
    }()));
    RequestId id = 1;
    for (int it = 0; it < 6; ++it) {
      ev.push_back(Compute(1e-4 * (1 + (r * 7 + it * 3) % 5)));
      ev.push_back(MakeIsend((r + 1) % p, it, 4096 << (it % 3) * 6, id));
      ev.push_back(MakeIrecv(kAnySource, it, 4096 << (it % 3) * 6, id + 1));
      Event w = Waitany({id, id + 1}, id + 1, (r + p - 1) % p);
      ev.push_back(w);
      ev.push_back(Wait(id));
      id += 2;
      if (it % 2 == 0)
        ev.push_back(MakeCollective(EventKind::kAllreduce, 64, 64, kNoRank, 100 + r % 2));
    }
    ev.push_back(MakeCollective(EventKind::kAlltoall, 512 * p, 512 * p));
  }
  return t;
}

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// More live requests and a longer wait list than a rank keeps inline (4): the rest go to the
// engine's shared request map and spill vectors, with the same results. Rank 0 receives
// from 10 ranks (request ids far apart), worker w sending after w x 10 us, so the last
// worker's message (at 100 us + L + S/B) ends the waitall; after a 1 ms burst rank 0
// replies to each, and with unlimited links every reply takes L + S/B.
TEST(NonBlocking, ManyRequestsAndLongWaitListsMatchTheClosedForm) {
  constexpr int kWorkers = 10;
  constexpr std::uint64_t kBytes = 4000;
  MemoryTrace t(kWorkers + 1);
  std::vector<RequestId> ids;
  for (int w = 1; w <= kWorkers; ++w) {
    const RequestId id = 1000003ull * static_cast<RequestId>(w);
    ids.push_back(id);
    t.rank(0).push_back(MakeIrecv(w, 7, kBytes, id));
    t.rank(w) = {Compute(1e-5 * w), MakeIsend(0, 7, kBytes, 1), MakeIrecv(0, 8, kBytes, 2),
                 Waitall({1, 2})};
  }
  t.rank(0).push_back(Waitall(ids));
  t.rank(0).push_back(Compute(1e-3));
  std::vector<RequestId> sends;
  for (int w = 1; w <= kWorkers; ++w) {
    sends.push_back(static_cast<RequestId>(w));
    t.rank(0).push_back(MakeIsend(w, 8, kBytes, static_cast<RequestId>(w)));
  }
  t.rank(0).push_back(Waitall(sends));
  const SimResult r = Simulate(t, TestMachine());
  const double hop = kL + kBytes / kB;
  const double replies_s = 1e-5 * kWorkers + hop + 1e-3;
  ExpectTime(replies_s, r.ranks[0].end_s);  // eager sends: rank 0 does not wait for them
  for (int w = 1; w <= kWorkers; ++w) ExpectTime(replies_s + hop, r.ranks[w].end_s);
  ExpectTime(replies_s + hop, r.predicted_time_s);
  EXPECT_EQ(r.ranks[0].messages_sent, static_cast<std::uint64_t>(kWorkers));
  EXPECT_EQ(r.ranks[0].bytes_sent, kWorkers * kBytes);
}

// The progress callback (behind `pas2p simulate`'s progress line) sees the event count grow
// to the total and the simulated time never go back.
TEST(Progress, CallbackReportsGrowingEventCountsAndTime) {
  constexpr int kRanks = 8, kIterations = 200;
  MemoryTrace t(kRanks);
  for (int r = 0; r < kRanks; ++r)
    for (int i = 0; i < kIterations; ++i) {
      t.rank(r).push_back(Compute(1e-6 * (1 + r % 3)));
      t.rank(r).push_back(Sendrecv((r + 1) % kRanks, 100, (r + kRanks - 1) % kRanks, 100));
    }
  std::vector<SimProgress> seen;
  SimOptions options;
  options.progress_every_events = 100;
  options.progress = [&](const SimProgress& p) { seen.push_back(p); };
  const SimResult r = Simulate(t, TestMachine(), options);
  ASSERT_EQ(r.events, static_cast<std::uint64_t>(kRanks * kIterations * 2));
  ASSERT_EQ(seen.size(), r.events / 100);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].events, 100 * (i + 1));
    EXPECT_EQ(seen[i].nprocs, kRanks);
    if (i > 0) {
      EXPECT_GE(seen[i].simulated_time_s, seen[i - 1].simulated_time_s);
      EXPECT_GE(seen[i].ranks_finished, seen[i - 1].ranks_finished);
    }
    EXPECT_LE(seen[i].simulated_time_s, r.predicted_time_s);
  }
}

TEST(Determinism, TwoRunsGiveIdenticalBytesInEveryOutput) {
  const auto dir = std::filesystem::temp_directory_path() / "pas2p_sim_determinism";
  std::filesystem::create_directories(dir);
  std::string outputs[2];
  for (int run = 0; run < 2; ++run) {
    Machine m = TestMachine();
    m.cpus_per_node = 2;
    m.input_links = m.output_links = 1;
    m.half_duplex = true;
    m.buses = 3;
    SimOptions o;
    o.record_timeline = true;
    SimResult r = Simulate(Mixed(12), m, o);
    const std::string prefix = (dir / ("run" + std::to_string(run))).string();
    WriteParaver(r, prefix);
    WritePerfettoFile(r, prefix + ".json");
    outputs[run] = FormatReport(r) + ResultToJson(r) + FormatAsciiTimeline(r) +
                   ReadFile(prefix + ".prv") + ReadFile(prefix + ".pcf") +
                   ReadFile(prefix + ".row") + ReadFile(prefix + ".json");
    EXPECT_GT(r.timeline.intervals.size(), 100u);
    EXPECT_GT(r.predicted_time_s, 0.0);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  std::filesystem::remove_all(dir);
}

TEST(Outputs, ParaverHeaderAndRecordsAreWellFormed) {
  MemoryTrace t(2);
  t.rank(0) = {Compute(1e-3), MakeSend(1, 3, 1000)};
  t.rank(1) = {MakeRecv(0, 3, 1000)};
  SimOptions o;
  o.record_timeline = true;
  SimResult r = Simulate(t, TestMachine(), o);
  const auto dir = std::filesystem::temp_directory_path() / "pas2p_sim_paraver";
  std::filesystem::create_directories(dir);
  WriteParaver(r, (dir / "x").string());
  std::istringstream prv(ReadFile(dir / "x.prv"));
  std::string header;
  std::getline(prv, header);
  const long long end_ns = std::llround(r.predicted_time_s * 1e9);
  EXPECT_EQ(header,
            "#Paraver (01/01/70 at 00:00):" + std::to_string(end_ns) + "_ns:2(1,1):1:2(1:1,1:2)");
  std::string line;
  bool comm = false, running = false;
  while (std::getline(prv, line)) {
    if (line.rfind("1:1:1:1:1:0:1000000:1", 0) == 0) running = true;
    if (line.rfind("3:1:1:1:1:1000000:", 0) == 0) {
      comm = true;
      EXPECT_NE(line.find(":1000:3"), std::string::npos) << line;
    }
  }
  EXPECT_TRUE(running);
  EXPECT_TRUE(comm);
  EXPECT_NE(ReadFile(dir / "x.pcf").find("STATES"), std::string::npos);
  EXPECT_NE(ReadFile(dir / "x.row").find("LEVEL THREAD SIZE 2"), std::string::npos);
  const std::string timeline = FormatAsciiTimeline(r, {20, 8});
  EXPECT_NE(timeline.find("rank 0|####################|"), std::string::npos) << timeline;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pas2p::sim

namespace pas2p::sim {
namespace {

// A receive that records fewer bytes than the message it matches (MPI_ERR_TRUNCATE in a real
// run, so never in a trace of one; a model's laws for a send and its receive fitted apart
// can do it) is counted and the first one named; the transfer takes the sender's size. A
// wildcard receive records the message the traced run gave it, which the replay may swap
// for another: it is not counted.
TEST(Semantics, ReceivesSmallerThanTheirMessageAreReported) {
  MemoryTrace t(3);
  t.rank(0) = {MakeSend(1, 5, 1000), MakeSend(2, 5, 1000)};
  t.rank(1) = {MakeIrecv(0, 5, 600, 1), Waitall({1})};
  t.rank(2) = {MakeRecv(kAnySource, 5, 10)};
  const SimResult r = Simulate(t, TestMachine());
  EXPECT_EQ(r.truncated_receives, 1u);
  EXPECT_NE(r.first_truncated_receive.find("rank 1"), std::string::npos)
      << r.first_truncated_receive;
  EXPECT_NE(r.first_truncated_receive.find("600 bytes got a message of 1000 bytes from rank 0"),
            std::string::npos)
      << r.first_truncated_receive;
  EXPECT_NE(FormatReport(r, {}).find("MPI_ERR_TRUNCATE"), std::string::npos);
  ExpectTime(kL + 1000 / kB, r.ranks[1].end_s);  // the sender's size

  MemoryTrace ok(2);
  ok.rank(0) = {MakeSend(1, 5, 1000)};
  ok.rank(1) = {MakeIrecv(0, 5, 4096, 1), Waitall({1})};
  const SimResult fine = Simulate(ok, TestMachine());
  EXPECT_EQ(fine.truncated_receives, 0u);
  EXPECT_EQ(FormatReport(fine, {}).find("MPI_ERR_TRUNCATE"), std::string::npos);
}

}  // namespace
}  // namespace pas2p::sim
