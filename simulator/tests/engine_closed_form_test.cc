// Closed-form checks of the engine: every expected time below is written out by hand from
// T = L + S/B (paper 000, eq. 1) and the FAN_IN + FAN_OUT model (eq. 2-4), not computed by
// the code under test.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "memory_trace.h"
#include "pas2p/simulator/engine.h"

namespace pas2p::sim {
namespace {

using testing::Compute;
using testing::MemoryTrace;
using testing::Sendrecv;
using testing::Wait;
using testing::Waitall;

constexpr double kL = 5e-6;     // inter-node latency
constexpr double kB = 1e9;      // inter-node bandwidth
constexpr double kLi = 0.5e-6;  // intra-node latency
constexpr double kBi = 8e9;     // intra-node bandwidth

// One rank per node, no contention unless a test asks for it.
Machine OnePerNode() {
  Machine m = testing::OneRankPerNode(kL, kB);
  m.intra_latency_s = kLi;
  m.intra_bandwidth_Bps = kBi;
  return m;
}

void ExpectTime(double expected, double actual) {
  EXPECT_NEAR(expected, actual, 1e-12 + 1e-12 * std::abs(expected))
      << "expected " << expected << " s, simulated " << actual << " s";
}

MemoryTrace PingPong(std::uint64_t bytes) {
  MemoryTrace t(2);
  t.rank(0) = {MakeSend(1, 0, bytes), MakeRecv(1, 0, bytes)};
  t.rank(1) = {MakeRecv(0, 0, bytes), MakeSend(0, 0, bytes)};
  return t;
}

TEST(ClosedForm, PingPongIsTwiceLatencyPlusSizeOverBandwidth) {
  for (std::uint64_t bytes : {0ull, 1000ull, 64ull * 1024, 1ull << 20, 10ull << 20}) {
    SimResult r = Simulate(PingPong(bytes), OnePerNode());
    ExpectTime(2.0 * (kL + bytes / kB), r.predicted_time_s);
    EXPECT_EQ(r.events, 4u);
    EXPECT_EQ(r.messages, 2u);
  }
}

TEST(ClosedForm, PingPongWithDefaultLinksIsUnchanged) {
  Machine m = OnePerNode();
  m.input_links = m.output_links = 1;
  m.buses = 1;
  m.half_duplex = true;
  SimResult r = Simulate(PingPong(1 << 20), m);
  ExpectTime(2.0 * (kL + (1 << 20) / kB), r.predicted_time_s);
}

TEST(ClosedForm, RanksSharingANodeUseIntraNodeParameters) {
  Machine m = OnePerNode();
  m.cpus_per_node = 2;  // fill: ranks 0 and 1 on node 0
  const std::uint64_t bytes = 1 << 20;
  SimResult r = Simulate(PingPong(bytes), m);
  ExpectTime(2.0 * (kLi + bytes / kBi), r.predicted_time_s);
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.ranks[1].node, 0);

  // Round robin over two nodes puts them apart again.
  m.mapping = Mapping::kRoundRobin;
  m.nodes = 2;
  r = Simulate(PingPong(bytes), m);
  ExpectTime(2.0 * (kL + bytes / kB), r.predicted_time_s);
}

TEST(ClosedForm, TokenRingOfPRanks) {
  for (int p : {2, 3, 8, 33}) {
    const std::uint64_t bytes = 4096;
    MemoryTrace t(p);
    t.rank(0) = {MakeSend(1, 7, bytes), MakeRecv(p - 1, 7, bytes)};
    for (int r = 1; r < p; ++r)
      t.rank(r) = {MakeRecv(r - 1, 7, bytes), MakeSend((r + 1) % p, 7, bytes)};
    SimResult res = Simulate(t, OnePerNode());
    ExpectTime(p * (kL + bytes / kB), res.predicted_time_s);
  }
}

TEST(ClosedForm, RingExchangeWithComputeIsPerIterationComputePlusTransfer) {
  // Every rank: K times { compute c; isend right; irecv left; waitall }. With one link in
  // and one out per node (full duplex) nothing contends.
  const int p = 16, k = 5;
  const double c = 1e-3;
  const std::uint64_t bytes = 1 << 20;
  MemoryTrace t(p);
  for (int r = 0; r < p; ++r) {
    RequestId id = 1;
    for (int i = 0; i < k; ++i) {
      t.rank(r).push_back(Compute(c));
      t.rank(r).push_back(MakeIsend((r + 1) % p, 0, bytes, id));
      t.rank(r).push_back(MakeIrecv((r + p - 1) % p, 0, bytes, id + 1));
      t.rank(r).push_back(Waitall({id, id + 1}));
      id += 2;
    }
  }
  Machine m = OnePerNode();
  m.input_links = m.output_links = 1;
  SimResult res = Simulate(t, m);
  ExpectTime(k * (c + kL + bytes / kB), res.predicted_time_s);
  for (const RankTimes& rt : res.ranks) {
    ExpectTime(k * c, rt.compute_s);
    ExpectTime(k * (kL + bytes / kB), rt.communication_s + rt.wait_s);
  }
}

TEST(ClosedForm, EagerSenderContinuesRendezvousSenderWaitsForTheReceiver) {
  const double late = 2e-3, after = 1e-3;
  for (std::uint64_t bytes : {1000ull, 1ull << 20}) {
    MemoryTrace t(2);
    t.rank(0) = {MakeSend(1, 0, bytes), Compute(after)};
    t.rank(1) = {Compute(late), MakeRecv(0, 0, bytes)};
    Machine m = OnePerNode();
    m.eager_threshold_bytes = 64 * 1024;
    SimResult r = Simulate(t, m);
    const double transfer = kL + bytes / kB;
    if (bytes <= m.eager_threshold_bytes) {
      ExpectTime(after, r.ranks[0].end_s);                     // send returned at once
      ExpectTime(std::max(late, transfer), r.ranks[1].end_s);  // message waited for it
    } else {
      ExpectTime(late + transfer + after, r.ranks[0].end_s);  // blocked until received
      ExpectTime(late + transfer, r.ranks[1].end_s);
      ExpectTime(late, r.ranks[0].wait_s);
      ExpectTime(transfer, r.ranks[0].communication_s);
    }
  }
}

TEST(ClosedForm, SynchronousSendIsRendezvousEvenWhenSmall) {
  MemoryTrace t(2);
  Event ssend = MakeSend(1, 0, 8);
  ssend.sync = true;
  t.rank(0) = {ssend};
  t.rank(1) = {Compute(1e-3), MakeRecv(0, 0, 8)};
  SimResult r = Simulate(t, OnePerNode());
  ExpectTime(1e-3 + kL + 8 / kB, r.ranks[0].end_s);
}

// Two simultaneous transfers 0->1 and 2->3, on four nodes.
MemoryTrace TwoPairs(std::uint64_t bytes) {
  MemoryTrace t(4);
  t.rank(0) = {MakeSend(1, 0, bytes)};
  t.rank(1) = {MakeRecv(0, 0, bytes)};
  t.rank(2) = {MakeSend(3, 0, bytes)};
  t.rank(3) = {MakeRecv(2, 0, bytes)};
  return t;
}

TEST(ClosedForm, OneBusSerialisesConcurrentInterNodeTransfers) {
  const std::uint64_t bytes = 1 << 20;
  const double s = bytes / kB;
  Machine m = OnePerNode();
  m.buses = 0;
  ExpectTime(kL + s, Simulate(TwoPairs(bytes), m).predicted_time_s);
  m.buses = 2;
  ExpectTime(kL + s, Simulate(TwoPairs(bytes), m).predicted_time_s);
  m.buses = 1;
  SimResult r = Simulate(TwoPairs(bytes), m);
  ExpectTime(kL + 2 * s, r.predicted_time_s);
  // The first sender in rank order gets the bus.
  ExpectTime(kL + s, r.ranks[1].end_s);
  ExpectTime(kL + 2 * s, r.ranks[3].end_s);
}

TEST(ClosedForm, BusesDoNotApplyInsideANode) {
  Machine m = OnePerNode();
  m.cpus_per_node = 4;
  m.buses = 1;
  const std::uint64_t bytes = 1 << 20;
  ExpectTime(kLi + bytes / kBi, Simulate(TwoPairs(bytes), m).predicted_time_s);
}

TEST(ClosedForm, HalfDuplexLinkCarriesOneDirectionAtATime) {
  const std::uint64_t bytes = 1 << 20;
  const double s = bytes / kB;
  MemoryTrace t(2);
  t.rank(0) = {MakeIsend(1, 0, bytes, 1), MakeIrecv(1, 0, bytes, 2), Waitall({1, 2})};
  t.rank(1) = {MakeIsend(0, 0, bytes, 1), MakeIrecv(0, 0, bytes, 2), Waitall({1, 2})};
  Machine m = OnePerNode();
  m.input_links = m.output_links = 1;
  m.half_duplex = false;
  ExpectTime(kL + s, Simulate(t, m).predicted_time_s);
  m.half_duplex = true;
  ExpectTime(kL + 2 * s, Simulate(t, m).predicted_time_s);
  m.input_links = m.output_links = 2;  // two half-duplex links: both directions at once
  ExpectTime(kL + s, Simulate(t, m).predicted_time_s);
}

TEST(ClosedForm, OutputAndInputLinksLimitInjection) {
  const std::uint64_t bytes = 1 << 20;
  const double s = bytes / kB;
  // Rank 0 sends to 1 and 2 at once.
  MemoryTrace out(3);
  out.rank(0) = {MakeIsend(1, 0, bytes, 1), MakeIsend(2, 0, bytes, 2), Waitall({1, 2})};
  out.rank(1) = {MakeRecv(0, 0, bytes)};
  out.rank(2) = {MakeRecv(0, 0, bytes)};
  // Ranks 1 and 2 send to 0 at once.
  MemoryTrace in(3);
  in.rank(0) = {MakeIrecv(1, 0, bytes, 1), MakeIrecv(2, 0, bytes, 2), Waitall({1, 2})};
  in.rank(1) = {MakeSend(0, 0, bytes)};
  in.rank(2) = {MakeSend(0, 0, bytes)};
  Machine m = OnePerNode();
  m.output_links = 1;
  m.input_links = 0;
  ExpectTime(kL + 2 * s, Simulate(out, m).predicted_time_s);
  ExpectTime(kL + s, Simulate(in, m).predicted_time_s);
  m.output_links = 0;
  m.input_links = 1;
  ExpectTime(kL + s, Simulate(out, m).predicted_time_s);
  ExpectTime(kL + 2 * s, Simulate(in, m).predicted_time_s);
  m.input_links = 2;
  ExpectTime(kL + s, Simulate(in, m).predicted_time_s);
}

// A link idle while its message waits for the receiver's link carries other messages
// meanwhile (no head-of-line blocking cascading from node to node). At t = 0 rank 0 sends
// M1 to rank 2; rank 1 sends M2 to rank 2 (which waits for rank 2's input link until
// L + S/B) and then M3 to rank 3. M3 uses rank 1's output link before M2 does.
TEST(ClosedForm, WaitingForTheReceiversLinkLeavesTheSendersLinkFreeMeanwhile) {
  const std::uint64_t bytes = 32 << 10;  // eager
  const double s = bytes / kB;
  MemoryTrace t(4);
  t.rank(0) = {MakeSend(2, 0, bytes)};
  t.rank(1) = {MakeIsend(2, 0, bytes, 1), MakeIsend(3, 0, bytes, 2), Waitall({1, 2})};
  t.rank(2) = {MakeRecv(0, 0, bytes), MakeRecv(1, 0, bytes)};
  t.rank(3) = {MakeRecv(1, 0, bytes)};
  Machine m = OnePerNode();
  m.input_links = m.output_links = 1;
  const SimResult r = Simulate(t, m);
  ExpectTime(kL + s, r.ranks[3].end_s);      // M3 did not queue behind M2
  ExpectTime(kL + 2 * s, r.ranks[2].end_s);  // M2 after M1 on rank 2's input link
  // A message that does not fit in the gap still goes after it.
  MemoryTrace big(4);
  big.rank(0) = {MakeSend(2, 0, bytes)};
  big.rank(1) = {MakeIsend(2, 0, bytes, 1), MakeIsend(3, 0, 2 * bytes, 2), Waitall({1, 2})};
  big.rank(2) = {MakeRecv(0, 0, bytes), MakeRecv(1, 0, bytes)};
  big.rank(3) = {MakeRecv(1, 0, 2 * bytes)};
  ExpectTime(kL + 2 * s + 2 * s, Simulate(big, m).ranks[3].end_s);
}

TEST(ClosedForm, TopologyAddsHopLatencyAlongShortestRoutes) {
  const double h = 1e-6;
  const std::uint64_t bytes = 1000;
  auto one_way = [&](int nodes, int dst, Topology topo) {
    MemoryTrace t(nodes);
    t.rank(0) = {MakeSend(dst, 0, bytes)};
    t.rank(dst) = {MakeRecv(0, 0, bytes)};
    Machine m = OnePerNode();
    m.topology = topo;
    m.topology.hop_latency_s = h;
    return Simulate(t, m).predicted_time_s;
  };
  const double base = kL + bytes / kB;
  auto topo = [](TopologyKind kind, std::vector<int> dims = {}) {
    Topology t;
    t.kind = kind;
    t.dims = std::move(dims);
    return t;
  };
  Topology ring = topo(TopologyKind::kRing);
  ExpectTime(base + 3 * h, one_way(8, 4, ring));  // 4 hops either way
  ExpectTime(base + 1 * h, one_way(8, 6, ring));  // 2 hops going backwards
  Topology cube = topo(TopologyKind::kHypercube);
  ExpectTime(base + 2 * h, one_way(8, 7, cube));  // 0b000 -> 0b111: 3 hops
  Topology torus = topo(TopologyKind::kTorus2D, {4, 4});
  ExpectTime(base + 3 * h, one_way(16, 10, torus));  // (0,0) -> (2,2): 4 hops
  ExpectTime(base + 1 * h, one_way(16, 15, torus));  // (0,0) -> (3,3): wraps, 2 hops
  Topology torus3 = topo(TopologyKind::kTorus3D, {2, 2, 2});
  ExpectTime(base + 2 * h, one_way(8, 7, torus3));
  Topology tree = topo(TopologyKind::kFatTree);
  tree.fat_tree_arity = 4;
  ExpectTime(base + 1 * h, one_way(16, 3, tree));   // same leaf switch: 2 hops
  ExpectTime(base + 3 * h, one_way(16, 5, tree));   // one level up: 4 hops
  ExpectTime(base + 5 * h, one_way(32, 17, tree));  // two levels up: 6 hops
  Topology chain = topo(TopologyKind::kLinks);
  chain.links = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}};
  ExpectTime(base + 1 * h, one_way(5, 3, chain));  // 0-4-3
}

TEST(ClosedForm, ComputeUsesInstructionsWhenTheMachineHasARate) {
  MemoryTrace t(1);
  t.rank(0) = {MakeCompute(2'000'000, 6'000'000), MakeCompute(1'000'000)};
  Machine m = OnePerNode();
  m.cpu_ratio = 0.5;
  ExpectTime(0.5 * 3e-3, Simulate(t, m).predicted_time_s);
  m.instructions_per_second = 3e9;
  // 6e6 instructions / 3e9 = 2 ms; the burst without counters stays 1 ms x 0.5.
  ExpectTime(2e-3 + 0.5e-3, Simulate(t, m).predicted_time_s);
}

// ---- collectives: FAN_IN + FAN_OUT of paper 000 -----------------------------------------

struct CollCase {
  EventKind kind;
  int id;  // Dimemas id
};

constexpr CollCase kCollectives[] = {
    {EventKind::kBarrier, 0},        {EventKind::kBcast, 1},      {EventKind::kGather, 2},
    {EventKind::kGatherv, 3},        {EventKind::kScatter, 4},    {EventKind::kScatterv, 5},
    {EventKind::kAllgather, 6},      {EventKind::kAllgatherv, 7}, {EventKind::kAlltoall, 8},
    {EventKind::kAlltoallv, 9},      {EventKind::kReduce, 10},    {EventKind::kAllreduce, 11},
    {EventKind::kReduceScatter, 12}, {EventKind::kScan, 14},      {EventKind::kExscan, 14},
};

// C = 8 ranks on 8 nodes; rank i sends 1000 (i + 1) bytes and receives 300 (i + 1), so the
// largest send is S = 8000 and the largest receive R = 2400.
MemoryTrace OneCollective(EventKind kind, int c, double skew_s = 0.0) {
  MemoryTrace t(c);
  for (int r = 0; r < c; ++r) {
    if (skew_s > 0) t.rank(r).push_back(Compute(skew_s * r));
    t.rank(r).push_back(
        MakeCollective(kind, 1000 * (r + 1), 300 * (r + 1), IsRooted(kind) ? 0 : kNoRank));
  }
  return t;
}

// The per-phase sizes, by hand: MIN = 2400, MAX = 8000, MEAN = 5200, 2MAX = 16000,
// S+R = 10400.
double SizeByHand(CollSize size) {
  switch (size) {
    case CollSize::kMin:
      return 2400;
    case CollSize::kMax:
      return 8000;
    case CollSize::kMean:
      return 5200;
    case CollSize::k2Max:
      return 16000;
    case CollSize::kSendPlusRecv:
      return 10400;
  }
  return -1;
}

// MODEL_FACTOR for C = 8, by hand: 0, 1, 8, and LOG = 3 stages (4, 2, 1 transfers): 3
// steps with unlimited buses, ceil(4/3) + 1 + 1 = 4 with 3 buses.
double FactorByHand(CollModel model, int buses) {
  switch (model) {
    case CollModel::kZero:
      return 0;
    case CollModel::kConstant:
      return 1;
    case CollModel::kLinear:
      return 8;
    case CollModel::kLog:
      return buses == 3 ? 4 : 3;
  }
  return -1;
}

TEST(ClosedForm, EveryCollectiveUnderEveryModelAndSize) {
  const CollModel models[] = {CollModel::kZero, CollModel::kConstant, CollModel::kLinear,
                              CollModel::kLog};
  const CollSize sizes[] = {CollSize::kMin, CollSize::kMax, CollSize::kMean, CollSize::k2Max,
                            CollSize::kSendPlusRecv};
  int checked = 0;
  for (int buses : {0, 3}) {
    for (const CollCase& cc : kCollectives) {
      const MemoryTrace trace = OneCollective(cc.kind, 8);
      for (CollModel model : models) {
        for (CollSize size : sizes) {
          // Fan-in only, then fan-out only, then both with different choices.
          for (int phase = 0; phase < 3; ++phase) {
            Machine m = OnePerNode();
            m.buses = buses;
            CollectiveCost cost;
            double expected = 0;
            const double in = (kL + SizeByHand(size) / kB) * FactorByHand(model, buses);
            const double out_other =
                (kL + SizeByHand(CollSize::kMin) / kB) * FactorByHand(CollModel::kLinear, buses);
            if (phase == 0) {
              cost = {model, size, CollModel::kZero, CollSize::kMax};
              expected = in;
            } else if (phase == 1) {
              cost = {CollModel::kZero, CollSize::kMax, model, size};
              expected = in;
            } else {
              cost = {model, size, CollModel::kLinear, CollSize::kMin};
              expected = in + out_other;
            }
            m.collectives[cc.id] = cost;
            SimResult r = Simulate(trace, m);
            ExpectTime(expected, r.predicted_time_s);
            ASSERT_EQ(r.collectives.size(), 1u);
            EXPECT_EQ(r.collectives[0].kind, cc.kind);
            EXPECT_EQ(r.collectives[0].calls, 1u);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 15 * 4 * 5 * 3);
}

TEST(ClosedForm, DefaultTableAllreduceWithArrivalSkew) {
  // Table 3: allreduce = LOG 2MAX / LOG MAX. C = 5 ranks (3 stages: 2, 1, 1 transfers),
  // unlimited buses; rank i arrives at i ms; all leave at 4 ms + T.
  const int c = 5;
  MemoryTrace t(c);
  for (int r = 0; r < c; ++r)
    t.rank(r) = {Compute(1e-3 * r), MakeCollective(EventKind::kAllreduce, 800, 800)};
  SimResult res = Simulate(t, OnePerNode());
  const double expected_t = (kL + 1600 / kB) * 3 + (kL + 800 / kB) * 3;
  ExpectTime(4e-3 + expected_t, res.predicted_time_s);
  for (int r = 0; r < c; ++r) {
    ExpectTime(4e-3 - 1e-3 * r, res.ranks[r].wait_s);
    ExpectTime(expected_t, res.ranks[r].communication_s);
  }
  ExpectTime(expected_t, res.collectives[0].time_s);
  ExpectTime(4e-3 + 3e-3 + 2e-3 + 1e-3, res.collectives[0].wait_s);
}

TEST(ClosedForm, LogModelCountsBusStepsPerStage) {
  // C = 6, 2 buses: stages of 3, 1, 1 transfers -> 2 + 1 + 1 = 4 steps. Barrier as CTE-free
  // LOG MAX with zero bytes: 4 latencies.
  Machine m = OnePerNode();
  m.buses = 2;
  m.collectives[0] = {CollModel::kLog, CollSize::kMax, CollModel::kZero, CollSize::kMax};
  MemoryTrace t(6);
  for (int r = 0; r < 6; ++r) t.rank(r) = {MakeCollective(EventKind::kBarrier, 0, 0)};
  ExpectTime(4 * kL, Simulate(t, m).predicted_time_s);
}

TEST(ClosedForm, SingleNodeCollectiveUsesIntraNodeParameters) {
  Machine m = OnePerNode();
  m.cpus_per_node = 8;
  m.buses = 1;  // not applied inside a node
  MemoryTrace t = OneCollective(EventKind::kAllreduce, 8);
  // Default table allreduce: LOG 2MAX + LOG MAX, 3 stages each.
  ExpectTime((kLi + 16000 / kBi) * 3 + (kLi + 8000 / kBi) * 3, Simulate(t, m).predicted_time_s);
}

}  // namespace
}  // namespace pas2p::sim
