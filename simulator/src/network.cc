// Point-to-point network model and topology hop counts (see network.h).
#include "network.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <string>

#include "pas2p/core/error.h"

namespace pas2p::sim::internal {

namespace {
int RingDistance(int a, int b, int n) {
  const int d = std::abs(a - b);
  return std::min(d, n - d);
}
}  // namespace

TopologyHops::TopologyHops(const Topology& topology, int nodes)
    : topology_(topology), nodes_(nodes) {
  auto need = [&](long long capacity, const char* what) {
    if (capacity < nodes_)
      throw UserError("topology." + std::string(what) + " offers " + std::to_string(capacity) +
                      " nodes but the run uses " + std::to_string(nodes_));
  };
  switch (topology_.kind) {
    case TopologyKind::kNone:
    case TopologyKind::kRing:
      break;
    case TopologyKind::kTorus2D:
    case TopologyKind::kTorus3D: {
      const std::size_t want = topology_.kind == TopologyKind::kTorus2D ? 2 : 3;
      if (topology_.dims.size() != want)
        throw UserError("topology.dims must have " + std::to_string(want) + " entries for a " +
                        std::to_string(want) + "-D torus");
      long long product = 1;
      for (int d : topology_.dims) {
        if (d < 1) throw UserError("topology.dims entries must be >= 1");
        product *= d;
      }
      need(product, "dims");
      break;
    }
    case TopologyKind::kHypercube:
      break;
    case TopologyKind::kFatTree:
      if (topology_.fat_tree_arity < 2) throw UserError("topology.fat_tree_arity must be >= 2");
      break;
    case TopologyKind::kLinks: {
      adjacency_.assign(nodes_, {});
      for (const auto& [a, b] : topology_.links) {
        if (a < 0 || b < 0 || a >= nodes_ || b >= nodes_) continue;  // nodes the run leaves unused
        adjacency_[a].push_back(b);
        adjacency_[b].push_back(a);
      }
      for (auto& row : adjacency_) {
        std::sort(row.begin(), row.end());
        row.erase(std::unique(row.begin(), row.end()), row.end());
      }
      bfs_rows_.assign(nodes_, {});
      break;
    }
  }
}

int TopologyHops::Hops(int a, int b) {
  if (a == b) return 0;
  switch (topology_.kind) {
    case TopologyKind::kNone:
      return 1;
    case TopologyKind::kRing:
      return RingDistance(a, b, nodes_);
    case TopologyKind::kTorus2D:
    case TopologyKind::kTorus3D: {
      int hops = 0;
      for (int d : topology_.dims) {
        hops += RingDistance(a % d, b % d, d);
        a /= d;
        b /= d;
      }
      return hops;
    }
    case TopologyKind::kHypercube:
      return std::popcount(static_cast<unsigned>(a ^ b));
    case TopologyKind::kFatTree: {
      // Nodes are the leaves; a message climbs to the lowest common switch and back down.
      const int k = topology_.fat_tree_arity;
      int level = 1;
      long long span = k;
      while (a / span != b / span) {
        span *= k;
        ++level;
      }
      return 2 * level;
    }
    case TopologyKind::kLinks: {
      auto& row = bfs_rows_[a];
      if (row.empty()) {
        constexpr std::uint16_t kUnreached = std::numeric_limits<std::uint16_t>::max();
        row.assign(nodes_, kUnreached);
        std::deque<int> queue{a};
        row[a] = 0;
        while (!queue.empty()) {
          const int u = queue.front();
          queue.pop_front();
          for (int v : adjacency_[u]) {
            if (row[v] == kUnreached) {
              row[v] = static_cast<std::uint16_t>(row[u] + 1);
              queue.push_back(v);
            }
          }
        }
      }
      if (row[b] == std::numeric_limits<std::uint16_t>::max())
        throw UserError("topology.links: node " + std::to_string(b) +
                        " cannot be reached from node " + std::to_string(a) +
                        " (the link list is not connected)");
      return row[b];
    }
  }
  return 1;
}

Network::Network(const Machine& machine, std::vector<int> node_of_rank, int nodes)
    : machine_(machine),
      node_of_rank_(std::move(node_of_rank)),
      nodes_(nodes),
      hops_(machine.topology, nodes) {
  if (machine_.half_duplex) {
    // One pool of links per node, each carrying one direction at a time.
    const int links = (machine_.input_links == 0 || machine_.output_links == 0)
                          ? 0
                          : std::max(machine_.input_links, machine_.output_links);
    limited_out_ = links > 0;
    if (limited_out_) out_ = Pools{links, std::vector<double>(std::size_t(nodes_) * links, 0.0)};
  } else {
    limited_out_ = machine_.output_links > 0;
    limited_in_ = machine_.input_links > 0;
    if (limited_out_)
      out_ = Pools{machine_.output_links,
                   std::vector<double>(std::size_t(nodes_) * machine_.output_links, 0.0)};
    if (limited_in_)
      in_ = Pools{machine_.input_links,
                  std::vector<double>(std::size_t(nodes_) * machine_.input_links, 0.0)};
  }
  limited_bus_ = machine_.buses > 0;
  for (int i = 0; i < machine_.buses; ++i) buses_.push(0.0);
}

Transfer Network::ReserveNodes(int a, int b, std::uint64_t bytes, double time_s) {
  const double size = static_cast<double>(bytes);
  Transfer t;
  if (a == b) {
    t.start_s = time_s + machine_.intra_latency_s;
    const double bw = machine_.intra_bandwidth_Bps;
    t.arrival_s = t.start_s + (std::isinf(bw) ? 0.0 : size / bw);
    return t;
  }
  double latency = machine_.inter_latency_s;
  if (hops_.enabled()) latency += machine_.topology.hop_latency_s * (hops_.Hops(a, b) - 1);
  const double bw = machine_.inter_bandwidth_Bps;
  const double duration = std::isinf(bw) ? 0.0 : size / bw;
  double start = time_s + latency;
  double* out_link = nullptr;
  double* in_link = nullptr;
  if (limited_out_) {
    out_link = out_.Earliest(a);
    start = std::max(start, *out_link);
  }
  if (machine_.half_duplex) {
    if (limited_out_) {
      in_link = out_.Earliest(b);
      start = std::max(start, *in_link);
    }
  } else if (limited_in_) {
    in_link = in_.Earliest(b);
    start = std::max(start, *in_link);
  }
  if (limited_bus_) start = std::max(start, buses_.top());
  const double end = start + duration;
  if (out_link != nullptr) *out_link = end;
  if (in_link != nullptr) *in_link = end;
  if (limited_bus_) {
    buses_.pop();
    buses_.push(end);
  }
  t.start_s = start;
  t.arrival_s = end;
  return t;
}

}  // namespace pas2p::sim::internal
