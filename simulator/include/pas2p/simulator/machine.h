// The machine model the simulator replays a trace on, as in Dimemas (paper 000) with the
// optional direct-network topologies of paper 002. A plain value type: machine files
// (TOML), Dimemas .cfg files and `pas2p characterize` all produce one.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pas2p::sim {

// How collective fan-in / fan-out phases scale with the communicator size C (paper 000).
enum class CollModel : std::uint8_t { kZero, kConstant, kLinear, kLog };
// Which message size a collective phase is charged for (paper 000).
enum class CollSize : std::uint8_t { kMin, kMax, kMean, k2Max, kSendPlusRecv };

struct CollectiveCost {
  CollModel model_in = CollModel::kZero;
  CollSize size_in = CollSize::kMax;
  CollModel model_out = CollModel::kZero;
  CollSize size_out = CollSize::kMax;
  bool operator==(const CollectiveCost&) const = default;
};

// Dimemas collective ids: 0 Barrier, 1 Bcast, 2 Gather, 3 Gatherv, 4 Scatter, 5 Scatterv,
// 6 Allgather, 7 Allgatherv, 8 Alltoall, 9 Alltoallv, 10 Reduce, 11 Allreduce,
// 12 Reduce_Scatter, 13 Reduce_Scatter_block, 14 Scan, 15 Alltoallw.
inline constexpr int kDimemasCollectiveCount = 16;
using CollectiveTable = std::array<CollectiveCost, kDimemasCollectiveCount>;
// Table 3 of paper 000 (the default).
CollectiveTable DefaultCollectiveTable();

enum class Mapping : std::uint8_t { kFill, kRoundRobin, kExplicit };
enum class TopologyKind : std::uint8_t {
  kNone,
  kRing,
  kTorus2D,
  kTorus3D,
  kHypercube,
  kFatTree,
  kLinks
};

struct Topology {
  TopologyKind kind = TopologyKind::kNone;
  std::vector<int> dims;                   // torus dimensions (product = nodes)
  int fat_tree_arity = 0;                  // fat tree: switch radix (down links)
  std::vector<std::pair<int, int>> links;  // kLinks: undirected node-node links
  double hop_latency_s = 0.0;              // added per hop beyond the first
  bool operator==(const Topology&) const = default;
};

struct Machine {
  std::string name = "default";
  int nodes = 1;          // 0 = as many as the ranks need
  int cpus_per_node = 1;  // ranks per node under kFill / kRoundRobin
  Mapping mapping = Mapping::kFill;
  std::vector<int> rank_to_node;  // kExplicit: node of each rank

  // Point-to-point: T = latency + bytes / bandwidth.
  double intra_latency_s = 1e-6;
  double intra_bandwidth_Bps = 10e9;
  double inter_latency_s = 5e-6;
  double inter_bandwidth_Bps = 1e9;
  int buses = 0;             // concurrent inter-node transfers (0 = unlimited)
  int input_links = 1;       // per node (0 = unlimited)
  int output_links = 1;      // per node (0 = unlimited)
  bool half_duplex = false;  // a node's link carries one direction at a time
  std::uint64_t eager_threshold_bytes = 64 * 1024;  // above: rendezvous

  // CPU: compute bursts take instructions / instructions_per_second when the trace has
  // instructions and this is > 0, else traced CPU time x cpu_ratio.
  double instructions_per_second = 0.0;
  double cpu_ratio = 1.0;
  // Floating-point rate of one core (flop/s), used when a trace is exported as SimGrid TI
  // (`compute FLOPS`): 0 = unknown. `pas2p characterize` measures it.
  double flops_per_second = 0.0;

  CollectiveTable collectives = DefaultCollectiveTable();
  Topology topology;

  bool operator==(const Machine&) const = default;
  // Checks ranges and consistency; on failure fills `error` with what and why.
  bool IsValid(std::string* error) const;
  // IsValid plus what depends on the run size: an explicit mapping must list every rank,
  // and a fixed node count must offer cpus_per_node x nodes >= nprocs slots under kFill /
  // kRoundRobin (more ranks than slots would silently oversubscribe nodes).
  bool IsValidFor(int nprocs, std::string* error) const;
  // Node of a rank for a run of `nprocs` ranks (0 <= rank < nprocs):
  //   kFill       rank / cpus_per_node (consecutive ranks share a node);
  //   kRoundRobin rank % NodeCount(nprocs) (consecutive ranks on different nodes);
  //   kExplicit   rank_to_node[rank].
  // With more ranks than slots (see IsValidFor), kFill wraps around the nodes.
  // Throws pas2p::UserError for a rank outside [0, nprocs) or missing from rank_to_node.
  int NodeOf(int rank, int nprocs) const;
  // Nodes a run of `nprocs` ranks uses: `nodes` when > 0, else as many as the mapping
  // needs (ceil(nprocs / cpus_per_node), or 1 + the largest explicit node id).
  int NodeCount(int nprocs) const;
};

}  // namespace pas2p::sim
