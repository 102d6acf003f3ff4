// The point-to-point network of the machine model (private to the engine):
// T = L + S/B, with the S/B part holding the sender node's output link, the receiver
// node's input link (one shared pool per node when half-duplex) and one of the buses.
// Every link and bus keeps the intervals it is booked for. A transfer requested at time t
// starts at the earliest s >= t + L at which one unit of every pool it needs is free for
// the whole [s, s + S/B), and books those units for it: a link idle while a message waits
// for the receiver's link carries other messages meanwhile, so waiting does not cascade
// from node to node. Requests must come in non-decreasing time order (the engine processes
// them in simulated-time order), so bookings that end before a request are dropped.
// Topologies (paper 002) add hop_latency_s per hop beyond the first along a shortest
// route between the two nodes.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // The links (and buses) of every node, `units` per node, node n's at
  // [n * units, (n + 1) * units). A unit's bookings are sorted, disjoint intervals, merged
  // when they touch (a link kept busy has one interval, not one per message). The latest
  // one is in `latest` (16 bytes per unit: a link without gaps in its bookings costs one
  // cache access per message); earlier ones, gaps left while a message waited for the
  // receiver's link, are in `earlier`, whose entries before `head` ended before the
  // current request.
  struct Busy {
    double begin = 0.0, end = 0.0;  // empty when equal
  };
  struct Earlier {
    std::vector<Busy> busy;
    std::uint32_t head = 0;
  };
  struct Pools {
    int units = 0;
    std::vector<Busy> latest;
    std::vector<Earlier> earlier;
    // The earliest s' >= s at which one of the node's units is free for [s', s' + d);
    // *unit gets that unit. `now_s`: the request time (bookings ending before it are
    // dropped).
    double EarliestFit(int node, double s, double d, double now_s, std::size_t* unit);
    void Book(std::size_t unit, double begin, double end, double now_s);

   private:
    double UnitFit(std::size_t unit, double s, double d, double now_s);
  };

  const Machine& machine_;
  std::vector<int> node_of_rank_;
  int nodes_;
  TopologyHops hops_;
  bool limited_out_ = false, limited_in_ = false, limited_bus_ = false;
  Pools out_;  // half-duplex: the node's only pool
  Pools in_;   // unused when half-duplex
  Pools buses_;
};

}  // namespace pas2p::sim::internal
