// An in-memory TraceSource for the simulator tests: build TraceData, replay it directly.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/machine.h"

namespace pas2p::sim::testing {

using MemoryTrace = ::pas2p::MemoryTrace;  // core/include/pas2p/core/trace.h

// A machine with one rank per node and no link, bus or topology limits: a transfer takes
// latency + bytes / bandwidth, whatever else moves.
inline Machine OneRankPerNode(double latency_s, double bandwidth_Bps) {
  Machine m;
  m.name = "test";
  m.nodes = 0;
  m.cpus_per_node = 1;
  m.inter_latency_s = latency_s;
  m.inter_bandwidth_Bps = bandwidth_Bps;
  m.buses = 0;
  m.input_links = m.output_links = 0;
  return m;
}

inline Event Compute(double seconds) {
  return MakeCompute(static_cast<std::int64_t>(seconds * 1e9 + 0.5));
}
inline Event Wait(RequestId id) {
  Event e;
  e.kind = EventKind::kWait;
  e.requests = {id};
  e.completed = {Completion{id}};
  return e;
}
inline Event Waitall(std::vector<RequestId> ids) {
  Event e = MakeWaitall(ids);
  e.completed.clear();
  for (RequestId id : ids) e.completed.push_back(Completion{id});
  return e;
}
inline Event Sendrecv(std::int32_t dst, std::uint64_t send_bytes, std::int32_t src,
                      std::uint64_t recv_bytes, std::int32_t tag = 0) {
  Event e;
  e.kind = EventKind::kSendrecv;
  e.peer = dst;
  e.tag = tag;
  e.bytes = send_bytes;
  e.recv_peer = src;
  e.recv_tag = tag;
  e.recv_bytes = recv_bytes;
  return e;
}
inline Event CommCreate(CommId id, std::vector<std::int32_t> members) {
  Event e;
  e.kind = EventKind::kCommCreate;
  e.new_comm = id;
  e.members = std::move(members);
  e.value = 1;
  return e;
}

}  // namespace pas2p::sim::testing
