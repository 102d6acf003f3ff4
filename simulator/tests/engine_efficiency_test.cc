// The POP efficiency metrics of a simulated run (efficiency.h), written out by hand: rank 0
// computes 3 ms, rank 1 computes 1 ms and then sends rank 0 1 MB (rendezvous: the transfer
// starts when rank 0 posts its receive at 3 ms and takes L + S/B = 5 us + 1 ms).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "memory_trace.h"
#include "pas2p/simulator/efficiency.h"
#include "pas2p/simulator/engine.h"

namespace pas2p::sim {
namespace {

using testing::Compute;
using testing::MemoryTrace;

Machine TwoNodes() { return testing::OneRankPerNode(5e-6, 1e9); }

MemoryTrace LateReceiver() {
  MemoryTrace t(2);
  t.rank(0) = {Compute(3e-3), MakeRecv(1, 0, 1'000'000)};
  t.rank(1) = {Compute(1e-3), MakeSend(0, 0, 1'000'000)};
  return t;
}

TEST(Efficiency, LoadBalanceCommunicationAndTheirProductByHand) {
  const SimResult r = Simulate(LateReceiver(), TwoNodes());
  const double runtime = 3e-3 + 5e-6 + 1e-3;
  ASSERT_NEAR(r.predicted_time_s, runtime, 1e-12);
  Efficiency e = EfficiencyOf(r);
  EXPECT_NEAR(e.compute_mean_s, 2e-3, 1e-12);
  EXPECT_NEAR(e.compute_max_s, 3e-3, 1e-12);
  EXPECT_NEAR(e.LoadBalance(), 2.0 / 3.0, 1e-9);
  EXPECT_NEAR(e.Communication(), 3e-3 / runtime, 1e-9);
  EXPECT_NEAR(e.Parallel(), e.LoadBalance() * e.Communication(), 1e-12);
  EXPECT_FALSE(e.HasTransfer());
  // On the ideal network the message is instant: the run is rank 0's compute, so the
  // communication efficiency is all transfer (serialization 100%).
  e.ideal_runtime_s = Simulate(LateReceiver(), IdealNetwork(TwoNodes())).predicted_time_s;
  EXPECT_NEAR(e.ideal_runtime_s, 3e-3, 1e-12);
  EXPECT_NEAR(e.Serialization(), 1.0, 1e-9);
  EXPECT_NEAR(e.Transfer(), 3e-3 / runtime, 1e-9);
  EXPECT_NEAR(e.Serialization() * e.Transfer(), e.Communication(), 1e-12);
  EXPECT_EQ(FormatEfficiency(e),
            "parallel 49.9% = load balance 66.7% x communication 74.9% (serialization 100.0% x "
            "transfer 74.9%)");
}

TEST(Efficiency, TheIdealNetworkKeepsTheCpuAndTheMappingAndFreesTheRest) {
  Machine m = TwoNodes();
  m.cpu_ratio = 0.5;
  m.buses = 2;
  m.half_duplex = true;
  const Machine ideal = IdealNetwork(m);
  EXPECT_EQ(ideal.cpu_ratio, 0.5);
  EXPECT_EQ(ideal.cpus_per_node, m.cpus_per_node);
  EXPECT_EQ(ideal.eager_threshold_bytes, m.eager_threshold_bytes);
  EXPECT_EQ(ideal.inter_latency_s, 0);
  EXPECT_TRUE(std::isinf(ideal.inter_bandwidth_Bps));
  EXPECT_EQ(ideal.buses, 0);
  EXPECT_FALSE(ideal.half_duplex);
  for (const CollectiveCost& c : ideal.collectives) EXPECT_EQ(c, CollectiveCost{});
  std::string error;
  EXPECT_TRUE(ideal.IsValid(&error)) << error;
}

TEST(Efficiency, AnEmptyRunHasNoEfficiencyRatherThanADivisionByZero) {
  const Efficiency e = EfficiencyOf(SimResult{});
  EXPECT_EQ(e.Parallel(), 0);
  EXPECT_EQ(e.LoadBalance(), 0);
  EXPECT_EQ(e.Communication(), 0);
}

}  // namespace
}  // namespace pas2p::sim
