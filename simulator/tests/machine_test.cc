// Machine: the default collective table (paper 000, Table 3), validation, rank mapping.
#include "pas2p/simulator/machine.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "pas2p/core/error.h"

namespace pas2p::sim {
namespace {

using M = CollModel;
using S = CollSize;

TEST(DefaultCollectiveTable, MatchesTable3OfPaper000) {
  const CollectiveTable t = DefaultCollectiveTable();
  // Paper 000, Table 3, rows 0..12 in Dimemas ids.
  EXPECT_EQ(t[0], (CollectiveCost{M::kLinear, S::kMax, M::kLinear, S::kMax}));  // Barrier
  EXPECT_EQ(t[1], (CollectiveCost{M::kLog, S::kMax, M::kZero, S::kMax}));       // Bcast
  EXPECT_EQ(t[2], (CollectiveCost{M::kLog, S::kMean, M::kZero, S::kMax}));      // Gather
  EXPECT_EQ(t[3], t[2]);                                                        // Gatherv
  EXPECT_EQ(t[4], (CollectiveCost{M::kZero, S::kMax, M::kLog, S::kMean}));      // Scatter
  EXPECT_EQ(t[5], t[4]);                                                        // Scatterv
  EXPECT_EQ(t[6], (CollectiveCost{M::kLog, S::kMean, M::kLog, S::kMean}));      // Allgather
  EXPECT_EQ(t[7], t[6]);                                                        // Allgatherv
  EXPECT_EQ(t[8], (CollectiveCost{M::kLog, S::kMean, M::kLog, S::kMax}));       // Alltoall
  EXPECT_EQ(t[9], t[8]);                                                        // Alltoallv
  EXPECT_EQ(t[10], (CollectiveCost{M::kLog, S::k2Max, M::kZero, S::kMax}));     // Reduce
  EXPECT_EQ(t[11], (CollectiveCost{M::kLog, S::k2Max, M::kLog, S::kMax}));      // Allreduce
  EXPECT_EQ(t[12], (CollectiveCost{M::kLog, S::k2Max, M::kLog, S::kMin}));      // Reduce_scatter
  // Ids the paper numbers differently or omits.
  EXPECT_EQ(t[13], t[12]);                                                 // RS_block
  EXPECT_EQ(t[14], (CollectiveCost{M::kLog, S::kMax, M::kLog, S::kMax}));  // Scan
  EXPECT_EQ(t[15], t[9]);                                                  // Alltoallw
}

TEST(MachineNodeOf, FillPutsConsecutiveRanksTogether) {
  Machine m;
  m.nodes = 0;
  m.cpus_per_node = 4;
  m.mapping = Mapping::kFill;
  const int expected[10] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2};
  for (int r = 0; r < 10; ++r) EXPECT_EQ(m.NodeOf(r, 10), expected[r]) << "rank " << r;
  EXPECT_EQ(m.NodeCount(10), 3);
  EXPECT_EQ(m.NodeCount(8), 2);
}

TEST(MachineNodeOf, FillWithFixedNodesWrapsWhenOversubscribed) {
  Machine m;
  m.nodes = 2;
  m.cpus_per_node = 2;
  EXPECT_EQ(m.NodeOf(3, 6), 1);
  EXPECT_EQ(m.NodeOf(4, 6), 0);  // slot 5 of 4: back to node 0
  std::string error;
  EXPECT_TRUE(m.IsValidFor(4, &error)) << error;
  EXPECT_FALSE(m.IsValidFor(6, &error));
  EXPECT_NE(error.find("4 slots"), std::string::npos) << error;
}

TEST(MachineNodeOf, RoundRobinSpreadsConsecutiveRanks) {
  Machine m;
  m.cpus_per_node = 4;
  m.mapping = Mapping::kRoundRobin;
  m.nodes = 0;  // 10 ranks / 4 per node -> 3 nodes
  const int expected[10] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0};
  for (int r = 0; r < 10; ++r) EXPECT_EQ(m.NodeOf(r, 10), expected[r]) << "rank " << r;
  m.nodes = 4;
  EXPECT_EQ(m.NodeOf(5, 10), 1);
  EXPECT_EQ(m.NodeOf(7, 10), 3);
}

TEST(MachineNodeOf, ExplicitFollowsTheList) {
  Machine m;
  m.mapping = Mapping::kExplicit;
  m.nodes = 0;
  m.rank_to_node = {3, 0, 3, 1};
  EXPECT_EQ(m.NodeOf(0, 4), 3);
  EXPECT_EQ(m.NodeOf(1, 4), 0);
  EXPECT_EQ(m.NodeOf(3, 4), 1);
  EXPECT_EQ(m.NodeCount(4), 4);
  std::string error;
  EXPECT_TRUE(m.IsValidFor(4, &error)) << error;
  EXPECT_FALSE(m.IsValidFor(5, &error));
  EXPECT_NE(error.find("maps 4 ranks but the run has 5"), std::string::npos) << error;
  EXPECT_THROW(m.NodeOf(4, 5), UserError);
}

TEST(MachineNodeOf, RankOutsideTheRunThrows) {
  Machine m;
  EXPECT_THROW(m.NodeOf(-1, 4), UserError);
  EXPECT_THROW(m.NodeOf(4, 4), UserError);
}

TEST(MachineIsValid, DefaultIsValid) {
  std::string error;
  EXPECT_TRUE(Machine{}.IsValid(&error)) << error;
}

// Each broken field is reported by name.
TEST(MachineIsValid, NamesTheBrokenField) {
  struct Case {
    const char* field;
    void (*breakit)(Machine&);
  };
  const Case cases[] = {
      {"nodes.count", [](Machine& m) { m.nodes = -1; }},
      {"nodes.cpus_per_node", [](Machine& m) { m.cpus_per_node = 0; }},
      {"nodes.rank_to_node",
       [](Machine& m) {
         m.rank_to_node = {0, 1};
       }},
      {"nodes.rank_to_node", [](Machine& m) { m.mapping = Mapping::kExplicit; }},
      {"nodes.rank_to_node[1]",
       [](Machine& m) {
         m.mapping = Mapping::kExplicit;
         m.nodes = 2;
         m.rank_to_node = {0, 2};
       }},
      {"intra_node.latency_s", [](Machine& m) { m.intra_latency_s = -1e-6; }},
      {"intra_node.bandwidth_Bps", [](Machine& m) { m.intra_bandwidth_Bps = 0; }},
      {"inter_node.latency_s",
       [](Machine& m) { m.inter_latency_s = std::numeric_limits<double>::infinity(); }},
      {"inter_node.bandwidth_Bps", [](Machine& m) { m.inter_bandwidth_Bps = -5; }},
      {"inter_node.buses", [](Machine& m) { m.buses = -1; }},
      {"inter_node.input_links", [](Machine& m) { m.input_links = -1; }},
      {"inter_node.output_links", [](Machine& m) { m.output_links = -1; }},
      {"cpu.instructions_per_second", [](Machine& m) { m.instructions_per_second = -1; }},
      {"cpu.cpu_ratio", [](Machine& m) { m.cpu_ratio = -0.5; }},
      {"cpu.flops_per_second", [](Machine& m) { m.flops_per_second = -1; }},
      {"topology.dims",
       [](Machine& m) {
         m.topology.kind = TopologyKind::kTorus2D;
         m.topology.dims = {2, 2, 2};
       }},
      {"topology.dims",
       [](Machine& m) {
         m.nodes = 9;
         m.topology.kind = TopologyKind::kTorus2D;
         m.topology.dims = {2, 2};
       }},
      {"hypercube",
       [](Machine& m) {
         m.nodes = 6;
         m.topology.kind = TopologyKind::kHypercube;
       }},
      {"topology.fat_tree_arity", [](Machine& m) { m.topology.kind = TopologyKind::kFatTree; }},
      {"topology.links", [](Machine& m) { m.topology.kind = TopologyKind::kLinks; }},
      {"topology.links",
       [](Machine& m) {
         m.topology.kind = TopologyKind::kLinks;
         m.topology.links = {{1, 1}};
       }},
      {"topology.hop_latency_s", [](Machine& m) { m.topology.hop_latency_s = -1; }},
  };
  for (const Case& c : cases) {
    Machine m;
    c.breakit(m);
    std::string error;
    EXPECT_FALSE(m.IsValid(&error)) << c.field;
    EXPECT_NE(error.find(c.field), std::string::npos) << "want '" << c.field << "' in: " << error;
  }
}

TEST(MachineIsValid, InfiniteBandwidthMeansInstantaneous) {
  Machine m;
  m.inter_bandwidth_Bps = std::numeric_limits<double>::infinity();
  std::string error;
  EXPECT_TRUE(m.IsValid(&error)) << error;
}

}  // namespace
}  // namespace pas2p::sim
