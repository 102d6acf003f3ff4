// Point-to-point network model and topology hop counts (see network.h).
#include "network.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <iterator>
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

double Network::Pools::UnitFit(std::size_t unit, double s, double d, double now_s) {
  const Busy last = latest[unit];
  if (s >= last.end) return s;  // after every booking
  Earlier& e = earlier[unit];
  // Drop what ended before the request; intervals are disjoint and sorted, so their ends
  // are sorted too.
  while (e.head < e.busy.size() && e.busy[e.head].end <= now_s) ++e.head;
  if (e.head == e.busy.size()) {
    e.busy.clear();
    e.head = 0;
  } else if (e.head > 16 && e.head * 2 > e.busy.size()) {
    e.busy.erase(e.busy.begin(), e.busy.begin() + e.head);
    e.head = 0;
  }
  auto it = std::partition_point(e.busy.begin() + e.head, e.busy.end(),
                                 [s](const Busy& b) { return b.end <= s; });
  for (; it != e.busy.end(); ++it) {
    if (s + d <= it->begin) return s;
    s = std::max(s, it->end);
  }
  if (s + d <= last.begin) return s;
  return std::max(s, last.end);
}

double Network::Pools::EarliestFit(int node, double s, double d, double now_s, std::size_t* unit) {
  const std::size_t first = static_cast<std::size_t>(node) * units;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t u = first; u < first + units; ++u) {
    const double fit = UnitFit(u, s, d, now_s);
    if (fit < best) {
      best = fit;
      *unit = u;
    }
  }
  return best;
}

void Network::Pools::Book(std::size_t unit, double begin, double end, double now_s) {
  if (!(end > begin)) return;
  Busy& last = latest[unit];
  if (begin >= last.end) {  // after every booking
    if (begin == last.end) {
      last.end = end;
    } else {
      // The latest booking becomes an earlier one unless it is over.
      if (last.end > now_s && last.end > last.begin) earlier[unit].busy.push_back(last);
      last = Busy{begin, end};
    }
    return;
  }
  // In a gap before the latest booking.
  std::vector<Busy>& busy = earlier[unit].busy;
  const auto first = busy.begin() + earlier[unit].head;
  if (end == last.begin) {
    last.begin = begin;
    if (busy.end() != first && busy.back().end == begin) {
      last.begin = busy.back().begin;
      busy.pop_back();
    }
    return;
  }
  auto it =
      std::partition_point(first, busy.end(), [begin](const Busy& b) { return b.begin < begin; });
  const bool join_prev = it != first && std::prev(it)->end == begin;
  const bool join_next = it != busy.end() && it->begin == end;
  if (join_prev && join_next) {
    std::prev(it)->end = it->end;
    busy.erase(it);
  } else if (join_prev) {
    std::prev(it)->end = end;
  } else if (join_next) {
    it->begin = begin;
  } else {
    busy.insert(it, Busy{begin, end});
  }
}

Network::Network(const Machine& machine, std::vector<int> node_of_rank, int nodes)
    : machine_(machine),
      node_of_rank_(std::move(node_of_rank)),
      nodes_(nodes),
      hops_(machine.topology, nodes) {
  auto pools = [](int per_node, int count) {
    Pools p;
    p.units = per_node;
    p.latest.resize(static_cast<std::size_t>(count) * per_node);
    p.earlier.resize(static_cast<std::size_t>(count) * per_node);
    return p;
  };
  if (machine_.half_duplex) {
    // One pool of links per node, each carrying one direction at a time.
    const int links = (machine_.input_links == 0 || machine_.output_links == 0)
                          ? 0
                          : std::max(machine_.input_links, machine_.output_links);
    limited_out_ = links > 0;
    if (limited_out_) out_ = pools(links, nodes_);
  } else {
    limited_out_ = machine_.output_links > 0;
    limited_in_ = machine_.input_links > 0;
    if (limited_out_) out_ = pools(machine_.output_links, nodes_);
    if (limited_in_) in_ = pools(machine_.input_links, nodes_);
  }
  limited_bus_ = machine_.buses > 0;
  if (limited_bus_) buses_ = pools(machine_.buses, 1);
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
  // The pools this transfer needs, and the unit of each it will book.
  Pools* need[3];
  int node[3];
  int count = 0;
  if (limited_out_) {
    need[count] = &out_;
    node[count++] = a;
    if (machine_.half_duplex) {
      need[count] = &out_;
      node[count++] = b;
    }
  }
  if (!machine_.half_duplex && limited_in_) {
    need[count] = &in_;
    node[count++] = b;
  }
  if (limited_bus_) {
    need[count] = &buses_;
    node[count++] = 0;
  }
  std::size_t unit[3] = {0, 0, 0};
  double start = time_s + latency;
  // Move the start to the earliest fit of each pool in turn until all agree (it only
  // grows, and only to the end of some booking, so this ends).
  for (int agreed = 0; agreed < count;) {
    for (int i = 0; i < count; ++i) {
      const double fit = need[i]->EarliestFit(node[i], start, duration, time_s, &unit[i]);
      if (fit > start) {
        start = fit;
        agreed = 0;
      } else {
        ++agreed;
      }
      if (agreed == count) break;
    }
  }
  const double end = start + duration;
  for (int i = 0; i < count; ++i) need[i]->Book(unit[i], start, end, time_s);
  t.start_s = start;
  t.arrival_s = end;
  return t;
}

}  // namespace pas2p::sim::internal
