// The point-to-point network of the machine model (private to the engine):
// T = L + S/B, with the S/B part holding the sender node's output link, the receiver
// node's input link (one shared pool per node when half-duplex) and one of the buses.
// Resources are reserved first come first served: a transfer requested at time t starts
// at max(t + L, the earliest time one unit of every pool it needs is free) and keeps those
// units until it ends. Requests must come in non-decreasing time order (the engine
// processes them in simulated-time order), which makes every pool a FIFO queue.
// Topologies (paper 002) add hop_latency_s per hop beyond the first along a shortest
// route between the two nodes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

#include "pas2p/simulator/machine.h"

namespace pas2p::sim::internal {

// Hop counts between nodes of a topology.
class TopologyHops {
 public:
  // Throws UserError when the topology does not fit `nodes` (e.g. torus dims whose product
  // is smaller than the node count).
  TopologyHops(const Topology& topology, int nodes);
  bool enabled() const { return topology_.kind != TopologyKind::kNone; }
  // Links crossed from node a to node b (0 when a == b). Throws UserError when an explicit
  // link list leaves b unreachable from a.
  int Hops(int a, int b);

 private:
  Topology topology_;
  int nodes_;
  std::vector<std::vector<int>> adjacency_;           // kLinks
  std::vector<std::vector<std::uint16_t>> bfs_rows_;  // kLinks: cached per source node
};

struct Transfer {
  double start_s = 0.0;    // data starts moving (after latency and queueing)
  double arrival_s = 0.0;  // last byte arrives
};

class Network {
 public:
  // `node_of_rank` maps every rank to its node; `nodes` is the node count.
  Network(const Machine& machine, std::vector<int> node_of_rank, int nodes);
  // Reserves the transfer of `bytes` from rank `src` to rank `dst` requested at `time_s`.
  Transfer Reserve(int src, int dst, std::uint64_t bytes, double time_s) {
    return ReserveNodes(node_of_rank_[src], node_of_rank_[dst], bytes, time_s);
  }
  // The same from node `a` to node `b`.
  Transfer ReserveNodes(int a, int b, std::uint64_t bytes, double time_s);
  int NodeOf(int rank) const { return node_of_rank_[rank]; }
  bool SameNode(int a, int b) const { return node_of_rank_[a] == node_of_rank_[b]; }

 private:
  // The links of every node, one flat array: node n's `units` link free times are
  // free_at[n * units ..]. A transfer takes the link that frees first.
  struct Pools {
    int units = 0;
    std::vector<double> free_at;
    double* Earliest(int node) {
      double* row = free_at.data() + static_cast<std::size_t>(node) * units;
      double* best = row;
      for (int u = 1; u < units; ++u)
        if (row[u] < *best) best = row + u;
      return best;
    }
  };

  const Machine& machine_;
  std::vector<int> node_of_rank_;
  int nodes_;
  TopologyHops hops_;
  bool limited_out_ = false, limited_in_ = false, limited_bus_ = false;
  Pools out_;  // half-duplex: the node's only pool
  Pools in_;   // unused when half-duplex
  std::priority_queue<double, std::vector<double>, std::greater<double>> buses_;
};

}  // namespace pas2p::sim::internal
