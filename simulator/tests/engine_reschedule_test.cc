// RescheduledTrace: a self-scheduled trace whose traced assignment of tasks is skewed (the
// lowest busy worker always answered first, so it ran almost every task) is replayed with
// the tasks handed to whoever answers first in the simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "memory_trace.h"
#include "pas2p/core/error.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/reschedule.h"

namespace pas2p::sim {
namespace {

using testing::MemoryTrace;

enum class Shape { kWaitany, kWaitanyPolling, kBlockingRecv };

constexpr std::int64_t kUnitNs = 100000;  // 0.1 ms per cost unit
std::int64_t CostNs(int t) { return kUnitNs * (1 + (t * 7) % 13); }
std::uint64_t TaskBytes(int t) { return static_cast<std::uint64_t>(16 + 64 * ((t * 7) % 13)); }

Machine TestMachine() { return testing::OneRankPerNode(2e-6, 1e9); }

// A master (rank 0) hands `tasks` tasks per round to nprocs - 1 workers: one to each worker
// (a stop, tag 2 with 0 bytes, when the tasks run out), then the next to the worker whose
// result (tag 3) it received, a stop when none is left. The traced run is skewed on
// purpose: the lowest busy worker always answered first. Every round ends with an allreduce
// of all ranks.
MemoryTrace MakeSkewedSelfScheduled(int nprocs, int tasks, Shape shape, int rounds = 1) {
  MemoryTrace trace(nprocs);
  trace.data().metadata.application = "skewed_selfsched";
  for (int r = 0; r < nprocs; ++r) {
    trace.rank(r).push_back(MakeCollective(EventKind::kBarrier, 0, 0));
  }
  auto& master = trace.rank(0);
  RequestId next_request = 1;
  int polls = 0;
  for (int round = 0; round < rounds; ++round) {
    int next = 0;
    std::vector<int> busy;
    std::map<int, RequestId> slot;
    auto hand = [&](int w) {
      master.push_back(MakeCompute(2000));
      auto& worker = trace.rank(w);
      if (next < tasks) {
        const int t = next++;
        master.push_back(MakeSend(w, 1, TaskBytes(t)));
        worker.push_back(MakeRecv(0, 1, TaskBytes(t)));
        worker.push_back(MakeCompute(CostNs(t)));
        worker.push_back(MakeSend(0, 3, 48));
        if (shape != Shape::kBlockingRecv) {
          slot[w] = next_request++;
          master.push_back(MakeIrecv(kAnySource, 3, 48, slot[w]));
        }
        return true;
      }
      master.push_back(MakeSend(w, 2, 0));
      worker.push_back(MakeRecv(0, 2, 0));
      return false;
    };
    for (int w = 1; w < nprocs; ++w) {
      if (hand(w)) busy.push_back(w);
    }
    while (!busy.empty()) {
      const int w = busy.front();  // skewed: the lowest busy worker answers first
      if (shape == Shape::kBlockingRecv) {
        Event e = MakeRecv(w, 3, 48);
        e.recv_peer = kAnySource;
        master.push_back(e);
      } else {
        std::vector<RequestId> passed;
        for (int b : busy) passed.push_back(slot[b]);
        if (shape == Shape::kWaitanyPolling && polls++ % 2 == 0) {
          Event test;
          test.kind = EventKind::kTestany;
          test.requests = passed;
          master.push_back(test);  // found nothing
        }
        Event e;
        e.kind = EventKind::kWaitany;
        e.requests = passed;
        e.completed = {Completion{slot[w], w, 3, 48}};
        master.push_back(e);
      }
      if (!hand(w)) busy.erase(busy.begin());
    }
    for (int r = 0; r < nprocs; ++r) {
      trace.rank(r).push_back(MakeCompute(1000));
      trace.rank(r).push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
    }
  }
  for (int r = 0; r < nprocs; ++r) {
    Event fin;
    fin.kind = EventKind::kFinalize;
    trace.rank(r).push_back(fin);
  }
  return trace;
}

// The makespan of a list schedule of the tasks (in order, each to the worker that is free
// first) with compute only: what a machine with a core per worker achieves at best.
double ListScheduleS(int workers, int tasks) {
  std::vector<double> free_at(static_cast<std::size_t>(workers), 0.0);
  for (int t = 0; t < tasks; ++t) {
    auto it = std::min_element(free_at.begin(), free_at.end());
    *it += static_cast<double>(CostNs(t)) * 1e-9;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

double TracedBusiestS(const MemoryTrace& trace) {
  double busiest = 0;
  for (int r = 1; r < trace.nprocs(); ++r) {
    std::int64_t cpu = 0;
    for (const Event& e : trace.data().ranks[static_cast<std::size_t>(r)]) {
      if (e.kind == EventKind::kCompute) cpu += e.cpu_ns;
    }
    busiest = std::max(busiest, static_cast<double>(cpu) * 1e-9);
  }
  return busiest;
}

struct Totals {
  double compute_s = 0;
  std::uint64_t bytes = 0, messages = 0;
};
Totals Sum(const SimResult& r) {
  Totals t;
  for (const RankTimes& rank : r.ranks) {
    t.compute_s += rank.compute_s;
    t.bytes += rank.bytes_sent;
    t.messages += rank.messages_sent;
  }
  return t;
}

void ExpectBalanced(Shape shape, int nprocs, int tasks, int rounds) {
  const MemoryTrace trace = MakeSkewedSelfScheduled(nprocs, tasks, shape, rounds);
  const Machine machine = TestMachine();
  const SimResult plain = Simulate(trace, machine);
  const RescheduledReplay replay = SimulateRescheduled(trace, machine);
  ASSERT_TRUE(replay.run.rescheduled) << replay.run.note;
  EXPECT_EQ(replay.run.master, 0);
  EXPECT_EQ(replay.run.tasks, static_cast<std::uint64_t>(tasks * rounds));
  EXPECT_EQ(replay.run.workers.size(), static_cast<std::size_t>(nprocs - 1));
  const double bound = rounds * ListScheduleS(nprocs - 1, tasks);
  const double t = replay.result.predicted_time_s;
  // The traced run's busiest worker ran almost everything; the plain replay keeps that.
  EXPECT_GT(plain.predicted_time_s, 0.95 * TracedBusiestS(trace));
  // Rescheduled: the list schedule's makespan plus the messages and the master's 2 us per
  // hand-out (a few percent here), never less than the tasks' compute over the workers.
  EXPECT_GE(t, bound * 0.999);
  EXPECT_LE(t, bound * 1.10) << "plain replay " << plain.predicted_time_s;
  // Every task's compute and bytes are replayed once: the totals do not change.
  const Totals a = Sum(plain), b = Sum(replay.result);
  EXPECT_NEAR(a.compute_s, b.compute_s, 1e-9);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.messages, b.messages);
  // The master sends one message per task and one stop per worker and round.
  EXPECT_EQ(replay.send_peers_by_rank[0].size(),
            static_cast<std::size_t>(rounds * (tasks + nprocs - 1)));
}

TEST(Reschedule, WaitanyMasterBalancesASkewedTracedAssignment) {
  ExpectBalanced(Shape::kWaitany, 9, 64, 1);
}

TEST(Reschedule, PollingTestanyMasterBalances) { ExpectBalanced(Shape::kWaitanyPolling, 7, 40, 1); }

TEST(Reschedule, BlockingRecvMasterBalances) { ExpectBalanced(Shape::kBlockingRecv, 9, 64, 1); }

TEST(Reschedule, SeveralRoundsWithAllreduceBetween) {
  ExpectBalanced(Shape::kWaitany, 6, 30, 3);
  ExpectBalanced(Shape::kBlockingRecv, 6, 30, 3);
}

TEST(Reschedule, FewerTasksThanWorkersLeavesStopOnlyWorkers) {
  // 3 tasks, 7 workers: workers 4..7 only ever get a stop.
  const MemoryTrace trace = MakeSkewedSelfScheduled(8, 3, Shape::kWaitany, 2);
  const RescheduledReplay replay = SimulateRescheduled(trace, TestMachine());
  ASSERT_TRUE(replay.run.rescheduled) << replay.run.note;
  EXPECT_EQ(replay.run.tasks, 6u);
  EXPECT_EQ(replay.run.stops, 14u);
  const double costliest = static_cast<double>(std::max({CostNs(0), CostNs(1), CostNs(2)})) * 1e-9;
  EXPECT_GE(replay.result.predicted_time_s, 2 * costliest);
  EXPECT_LE(replay.result.predicted_time_s, 2 * costliest * 1.10);
}

// Each message the master sends carries its task: the worker that receives a task of
// cost c (its bytes say which) computes c next, whoever ran it in the trace.
TEST(Reschedule, TaskBodiesMoveWithTheirMessages) {
  const MemoryTrace trace = MakeSkewedSelfScheduled(5, 24, Shape::kWaitany);
  const Machine machine = TestMachine();
  const RescheduledTrace rescheduled(trace);
  ASSERT_TRUE(rescheduled.run().rescheduled) << rescheduled.run().note;
  SimOptions options;
  options.record_timeline = true;
  const SimResult result = Simulate(rescheduled, machine, rescheduled.Attach(options));
  std::map<int, int> tasks_per_worker;
  int checked = 0;
  for (const MessageRecord& m : result.timeline.messages) {
    if (m.source != 0 || m.tag != 1) continue;
    ++tasks_per_worker[m.dest];
    const double cost_s = static_cast<double>(kUnitNs) * 1e-9 * (1 + (m.bytes - 16) / 64);
    // The worker's first compute interval after the task arrived.
    const StateInterval* next = nullptr;
    for (const StateInterval& s : result.timeline.intervals) {
      if (s.rank == m.dest && s.state == RankState::kRunning && s.begin_s >= m.arrival_s - 1e-12 &&
          (next == nullptr || s.begin_s < next->begin_s)) {
        next = &s;
      }
    }
    ASSERT_NE(next, nullptr) << "worker " << m.dest;
    EXPECT_NEAR(next->end_s - next->begin_s, cost_s, 1e-12) << "worker " << m.dest;
    ++checked;
  }
  EXPECT_EQ(checked, 24);
  // Not the traced assignment (worker 1 ran 21 of the 24 tasks there).
  EXPECT_LT(tasks_per_worker[1], 12);
  EXPECT_EQ(tasks_per_worker.size(), 4u);
}

TEST(Reschedule, ReplayIsDeterministic) {
  const MemoryTrace trace = MakeSkewedSelfScheduled(7, 50, Shape::kWaitanyPolling, 2);
  const RescheduledReplay a = SimulateRescheduled(trace, TestMachine());
  const RescheduledReplay b = SimulateRescheduled(trace, TestMachine());
  EXPECT_EQ(a.result.predicted_time_s, b.result.predicted_time_s);
  EXPECT_EQ(a.send_peers_by_rank, b.send_peers_by_rank);
  // The same object replayed twice gives the same too (Attach resets it).
  const RescheduledTrace rescheduled(trace);
  const double t1 = Simulate(rescheduled, TestMachine(), rescheduled.Attach({})).predicted_time_s;
  const double t2 = Simulate(rescheduled, TestMachine(), rescheduled.Attach({})).predicted_time_s;
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(t1, a.result.predicted_time_s);
}

TEST(Reschedule, TraceThatIsNotSelfScheduledIsUnchanged) {
  // A ring whose ranks receive with MPI_ANY_SOURCE and send on: every rank "replies" to the
  // one it heard from, so there is no single master.
  MemoryTrace ring(4);
  for (int r = 0; r < 4; ++r) {
    const int left = (r + 3) % 4, right = (r + 1) % 4;
    auto& ev = ring.rank(r);
    ev.push_back(MakeCompute(1000 * (r + 1)));
    ev.push_back(MakeIsend(right, 0, 64, 1));
    ev.push_back(MakeIrecv(kAnySource, 0, 64, 2));
    Event w = MakeWaitall({1, 2});
    w.completed = {Completion{1}, Completion{2, left, 0, 64}};
    ev.push_back(w);
    ev.push_back(MakeSend(left, 1, 8));
    ev.push_back(MakeRecv(right, 1, 8));
  }
  const RescheduledTrace rescheduled(ring);
  EXPECT_FALSE(rescheduled.run().rescheduled);
  EXPECT_NE(rescheduled.run().note.find("more than one master"), std::string::npos)
      << rescheduled.run().note;
  EXPECT_EQ(ReadTrace(rescheduled).ranks, ring.data().ranks);
  const RescheduledReplay replay = SimulateRescheduled(ring, TestMachine());
  EXPECT_EQ(replay.result.predicted_time_s, Simulate(ring, TestMachine()).predicted_time_s);

  // Plain point-to-point without wildcards: no master at all.
  MemoryTrace pair(2);
  pair.rank(0) = {MakeCompute(5000), MakeSend(1, 0, 100), MakeRecv(1, 0, 100)};
  pair.rank(1) = {MakeRecv(0, 0, 100), MakeCompute(7000), MakeSend(0, 0, 100)};
  const RescheduledTrace plain(pair);
  EXPECT_FALSE(plain.run().rescheduled);
  EXPECT_NE(plain.run().note.find("not self-scheduled"), std::string::npos);
  EXPECT_EQ(ReadTrace(plain).ranks, pair.data().ranks);
}

TEST(Reschedule, ShapesItCannotMoveAreReplayedAsTracedWithAReason) {
  // A worker that receives its tasks with an irecv.
  MemoryTrace irecv = MakeSkewedSelfScheduled(4, 8, Shape::kWaitany);
  auto& w2 = irecv.rank(2);
  for (std::size_t i = 0; i < w2.size(); ++i) {
    if (w2[i].kind == EventKind::kRecv && w2[i].peer == 0) {
      Event in = MakeIrecv(0, w2[i].tag, w2[i].bytes, 900);
      Event wait;
      wait.kind = EventKind::kWait;
      wait.requests = {900};
      wait.completed = {Completion{900, 0, w2[i].tag, w2[i].bytes}};
      w2[i] = in;
      w2.insert(w2.begin() + static_cast<std::ptrdiff_t>(i) + 1, wait);
      break;
    }
  }
  const RescheduledTrace a(irecv);
  EXPECT_FALSE(a.run().rescheduled);
  EXPECT_NE(a.run().note.find("rank 2 (event"), std::string::npos) << a.run().note;
  EXPECT_NE(a.run().note.find("irecv"), std::string::npos) << a.run().note;

  // A task body that talks to another worker.
  MemoryTrace chatty = MakeSkewedSelfScheduled(4, 8, Shape::kBlockingRecv);
  auto& w1 = chatty.rank(1);
  for (std::size_t i = 0; i < w1.size(); ++i) {
    if (w1[i].kind == EventKind::kRecv && w1[i].peer == 0 && w1[i].tag == 1) {
      w1.insert(w1.begin() + static_cast<std::ptrdiff_t>(i) + 1, MakeSend(3, 7, 8));
      break;
    }
  }
  const RescheduledTrace b(chatty);
  EXPECT_FALSE(b.run().rescheduled);
  EXPECT_NE(b.run().note.find("a task body must be compute and sends to the master only"),
            std::string::npos)
      << b.run().note;

  EXPECT_THROW(a.Attach([] {
    SimOptions o;
    o.deterministic = true;
    return o;
  }()),
               UserError);
}

}  // namespace
}  // namespace pas2p::sim
