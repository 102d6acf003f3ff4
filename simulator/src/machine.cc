// Machine model: the default collective table (paper 000, Table 3), validation and the
// rank-to-node mapping.
#include "pas2p/simulator/machine.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "pas2p/core/error.h"

namespace pas2p::sim {

CollectiveTable DefaultCollectiveTable() {
  using M = CollModel;
  using S = CollSize;
  CollectiveTable t{};
  // Rows 0-12 are Table 3 of Girona, Labarta, Badia (paper 000) verbatim. The paper's ids
  // stop at 13 (its row 13 is MPI_Scan); Dimemas' current ids insert Reduce_Scatter_block
  // at 13 and move Scan to 14, so the paper's Scan row becomes id 14, and the two ids the
  // paper does not list take the row of their closest relative.
  t[0] = {M::kLinear, S::kMax, M::kLinear, S::kMax};  // Barrier: Table 3 row 0
  t[1] = {M::kLog, S::kMax, M::kZero, S::kMax};       // Bcast: Table 3 row 1
  t[2] = {M::kLog, S::kMean, M::kZero, S::kMax};      // Gather: Table 3 row 2
  t[3] = {M::kLog, S::kMean, M::kZero, S::kMax};      // Gatherv: Table 3 row 3
  t[4] = {M::kZero, S::kMax, M::kLog, S::kMean};      // Scatter: Table 3 row 4
  t[5] = {M::kZero, S::kMax, M::kLog, S::kMean};      // Scatterv: Table 3 row 5
  t[6] = {M::kLog, S::kMean, M::kLog, S::kMean};      // Allgather: Table 3 row 6
  t[7] = {M::kLog, S::kMean, M::kLog, S::kMean};      // Allgatherv: Table 3 row 7
  t[8] = {M::kLog, S::kMean, M::kLog, S::kMax};       // Alltoall: Table 3 row 8
  t[9] = {M::kLog, S::kMean, M::kLog, S::kMax};       // Alltoallv: Table 3 row 9
  t[10] = {M::kLog, S::k2Max, M::kZero, S::kMax};     // Reduce: Table 3 row 10
  t[11] = {M::kLog, S::k2Max, M::kLog, S::kMax};      // Allreduce: Table 3 row 11
  t[12] = {M::kLog, S::k2Max, M::kLog, S::kMin};      // Reduce_Scatter: Table 3 row 12
  // Reduce_Scatter_block: not in the paper; the same operation as Reduce_Scatter with equal
  // blocks, so row 12.
  t[13] = {M::kLog, S::k2Max, M::kLog, S::kMin};
  t[14] = {M::kLog, S::kMax, M::kLog, S::kMax};  // Scan: Table 3 row 13 (paper's Scan id)
  // Alltoallw: not in the paper; Alltoallv with per-peer datatypes, so row 9.
  t[15] = {M::kLog, S::kMean, M::kLog, S::kMax};
  return t;
}

namespace {

bool Fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
  return false;
}

bool NonNegativeFinite(double v) { return std::isfinite(v) && v >= 0.0; }
// Bandwidth: > 0; +infinity means instantaneous transfer (Dimemas "0 MB/s").
bool ValidBandwidth(double v) { return !std::isnan(v) && v > 0.0; }

bool IsPowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

bool Machine::IsValid(std::string* error) const {
  if (nodes < 0)
    return Fail(error,
                "nodes.count must be >= 0 (0 = as many as needed), got " + std::to_string(nodes));
  if (cpus_per_node < 1)
    return Fail(error, "nodes.cpus_per_node must be >= 1, got " + std::to_string(cpus_per_node));
  if (mapping == Mapping::kExplicit) {
    if (rank_to_node.empty())
      return Fail(error, "nodes.mapping is \"explicit\" but nodes.rank_to_node is empty");
    for (std::size_t r = 0; r < rank_to_node.size(); ++r) {
      const int n = rank_to_node[r];
      if (n < 0 || (nodes > 0 && n >= nodes))
        return Fail(error, "nodes.rank_to_node[" + std::to_string(r) + "] = " + std::to_string(n) +
                               " is not a node id in [0, " +
                               (nodes > 0 ? std::to_string(nodes) : std::string("inf")) + ")");
    }
  } else if (!rank_to_node.empty()) {
    return Fail(error,
                "nodes.rank_to_node is given but nodes.mapping is not \"explicit\" (the list "
                "would be ignored)");
  }
  if (!NonNegativeFinite(intra_latency_s))
    return Fail(error, "intra_node.latency_s must be a finite number >= 0");
  if (!NonNegativeFinite(inter_latency_s))
    return Fail(error, "inter_node.latency_s must be a finite number >= 0");
  if (!ValidBandwidth(intra_bandwidth_Bps))
    return Fail(error, "intra_node.bandwidth_Bps must be > 0 (inf = instantaneous)");
  if (!ValidBandwidth(inter_bandwidth_Bps))
    return Fail(error, "inter_node.bandwidth_Bps must be > 0 (inf = instantaneous)");
  if (buses < 0) return Fail(error, "inter_node.buses must be >= 0 (0 = unlimited)");
  if (input_links < 0) return Fail(error, "inter_node.input_links must be >= 0 (0 = unlimited)");
  if (output_links < 0) return Fail(error, "inter_node.output_links must be >= 0 (0 = unlimited)");
  if (!NonNegativeFinite(instructions_per_second))
    return Fail(error, "cpu.instructions_per_second must be a finite number >= 0 (0 = unused)");
  if (!NonNegativeFinite(cpu_ratio))
    return Fail(error, "cpu.cpu_ratio must be a finite number >= 0");
  if (!NonNegativeFinite(flops_per_second))
    return Fail(error, "cpu.flops_per_second must be a finite number >= 0 (0 = unknown)");
  for (const auto& c : collectives) {
    for (auto m : {c.model_in, c.model_out})
      if (m > CollModel::kLog) return Fail(error, "collectives: model out of range");
    for (auto s : {c.size_in, c.size_out})
      if (s > CollSize::kSendPlusRecv) return Fail(error, "collectives: size out of range");
  }

  const Topology& t = topology;
  if (!NonNegativeFinite(t.hop_latency_s))
    return Fail(error, "topology.hop_latency_s must be a finite number >= 0");
  auto product = [&t] {
    long long p = 1;
    for (int d : t.dims) p *= d;
    return p;
  };
  switch (t.kind) {
    case TopologyKind::kNone:
    case TopologyKind::kRing:
    case TopologyKind::kHypercube:
      if (!t.dims.empty()) return Fail(error, "topology.dims is only for torus2d / torus3d");
      if (!t.links.empty()) return Fail(error, "topology.links is only for kind = \"links\"");
      if (t.kind == TopologyKind::kHypercube && nodes > 0 && !IsPowerOfTwo(nodes))
        return Fail(error, "topology \"hypercube\" needs a power-of-two nodes.count, got " +
                               std::to_string(nodes));
      break;
    case TopologyKind::kTorus2D:
    case TopologyKind::kTorus3D: {
      const std::size_t want = t.kind == TopologyKind::kTorus2D ? 2 : 3;
      if (t.dims.size() != want)
        return Fail(error, "topology.dims must list " + std::to_string(want) +
                               " dimensions for this torus, got " + std::to_string(t.dims.size()));
      for (int d : t.dims)
        if (d < 1) return Fail(error, "topology.dims entries must be >= 1");
      if (nodes > 0 && product() < nodes)
        return Fail(error, "topology.dims multiply to " + std::to_string(product()) +
                               ", fewer than nodes.count = " + std::to_string(nodes));
      break;
    }
    case TopologyKind::kFatTree:
      if (t.fat_tree_arity < 2)
        return Fail(error, "topology.fat_tree_arity must be >= 2 for a fat tree");
      break;
    case TopologyKind::kLinks:
      if (t.links.empty())
        return Fail(error, "topology kind \"links\" needs a non-empty topology.links list");
      for (const auto& [a, b] : t.links) {
        if (a < 0 || b < 0 || (nodes > 0 && (a >= nodes || b >= nodes)))
          return Fail(error, "topology.links entry [" + std::to_string(a) + ", " +
                                 std::to_string(b) + "] names a node outside [0, nodes.count)");
        if (a == b)
          return Fail(error, "topology.links entry [" + std::to_string(a) + ", " +
                                 std::to_string(b) + "] links a node to itself");
      }
      break;
  }
  if (t.kind != TopologyKind::kFatTree && t.fat_tree_arity != 0)
    return Fail(error, "topology.fat_tree_arity is only for kind = \"fat_tree\"");
  return true;
}

bool Machine::IsValidFor(int nprocs, std::string* error) const {
  if (!IsValid(error)) return false;
  if (nprocs < 1) return Fail(error, "a run needs at least one rank");
  if (mapping == Mapping::kExplicit) {
    if (rank_to_node.size() < static_cast<std::size_t>(nprocs))
      return Fail(error, "nodes.rank_to_node maps " + std::to_string(rank_to_node.size()) +
                             " ranks but the run has " + std::to_string(nprocs));
    return true;
  }
  if (nodes > 0 && static_cast<long long>(nodes) * cpus_per_node < nprocs)
    return Fail(error, "the machine has " + std::to_string(nodes) + " nodes x " +
                           std::to_string(cpus_per_node) + " cpus = " +
                           std::to_string(static_cast<long long>(nodes) * cpus_per_node) +
                           " slots but the run has " + std::to_string(nprocs) +
                           " ranks (set nodes.count = 0 to use as many nodes as needed)");
  const int used = NodeCount(nprocs);
  if (topology.kind == TopologyKind::kTorus2D || topology.kind == TopologyKind::kTorus3D) {
    long long p = 1;
    for (int d : topology.dims) p *= d;
    if (p < used)
      return Fail(error, "topology.dims offer " + std::to_string(p) + " nodes but the run uses " +
                             std::to_string(used));
  }
  if (topology.kind == TopologyKind::kHypercube && !IsPowerOfTwo(used))
    return Fail(error, "topology \"hypercube\" needs a power-of-two node count, the run uses " +
                           std::to_string(used));
  return true;
}

int Machine::NodeCount(int nprocs) const {
  if (nodes > 0) return nodes;
  if (mapping == Mapping::kExplicit) {
    int max_node = 0;
    const std::size_t n =
        std::min(rank_to_node.size(), static_cast<std::size_t>(std::max(nprocs, 0)));
    for (std::size_t r = 0; r < n; ++r) max_node = std::max(max_node, rank_to_node[r]);
    return max_node + 1;
  }
  const int per = std::max(cpus_per_node, 1);
  return std::max(1, (nprocs + per - 1) / per);
}

int Machine::NodeOf(int rank, int nprocs) const {
  if (rank < 0 || rank >= nprocs)
    throw UserError("rank " + std::to_string(rank) + " is outside [0, " + std::to_string(nprocs) +
                    ")");
  switch (mapping) {
    case Mapping::kFill: {
      const int node = rank / std::max(cpus_per_node, 1);
      return nodes > 0 ? node % nodes : node;
    }
    case Mapping::kRoundRobin:
      return rank % NodeCount(nprocs);
    case Mapping::kExplicit:
      if (static_cast<std::size_t>(rank) >= rank_to_node.size())
        throw UserError("machine '" + name + "': nodes.rank_to_node maps " +
                        std::to_string(rank_to_node.size()) + " ranks, rank " +
                        std::to_string(rank) + " has no node");
      return rank_to_node[rank];
  }
  return 0;
}

}  // namespace pas2p::sim
