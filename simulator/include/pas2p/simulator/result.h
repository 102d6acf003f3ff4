// What a simulation produces: a plain value type that reports and exporters (Paraver,
// Perfetto, ASCII timeline, JSON) read. Times are seconds of simulated time since the
// start of the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pas2p/core/event.h"

namespace pas2p::sim {

// Per-rank breakdown. compute_s + communication_s + wait_s = end_s (a rank that finishes
// early is idle, not counted, until the predicted end).
struct RankTimes {
  int rank = 0;
  int node = 0;
  double end_s = 0.0;            // when the rank finished its last event
  double compute_s = 0.0;        // compute bursts
  double communication_s = 0.0;  // blocked while its own data moved (transfers, collectives)
  double wait_s = 0.0;           // blocked waiting for a partner (late sender/receiver,
                                 // collective arrival skew, network queueing)
  double utilisation = 0.0;      // compute_s / predicted_time_s
  std::uint64_t events = 0;      // trace events replayed for this rank
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;
};

// One entry per collective operation kind that occurred.
struct CollectiveTotals {
  EventKind kind = EventKind::kBarrier;
  std::uint64_t calls = 0;  // collective instances (one per call of the whole comm)
  double time_s = 0.0;      // sum over instances of FAN_IN + FAN_OUT
  double wait_s = 0.0;      // sum over members of arrival skew (waiting for the last)
  std::uint64_t bytes = 0;  // sum over members of bytes sent
};

// What a rank is doing in a timeline interval (values follow Paraver's state numbering).
enum class RankState : std::uint8_t {
  kIdle = 0,                 // finished, waiting for the rest of the run
  kRunning = 1,              // compute burst
  kWaitMessage = 3,          // blocked in a receive / wait for a message
  kBlockingSend = 4,         // blocked in a send (rendezvous)
  kSynchronization = 5,      // collective: waiting for the other members
  kTestProbe = 6,            // test* call
  kWaitRequests = 8,         // wait/waitall/waitany/waitsome
  kGroupCommunication = 13,  // collective: the FAN_IN + FAN_OUT part
  kSendReceive = 16,         // sendrecv
};
std::string_view RankStateName(RankState state);

struct StateInterval {
  std::int32_t rank = 0;
  RankState state = RankState::kRunning;
  EventKind call = EventKind::kCompute;  // the traced call that put the rank in this state
  double begin_s = 0.0;
  double end_s = 0.0;
};

// One message as it was simulated.
struct MessageRecord {
  std::int32_t source = 0;
  std::int32_t dest = 0;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  double send_posted_s = 0.0;     // logical send: the sender issued it
  double transfer_start_s = 0.0;  // physical send: data started moving (after latency and
                                  // waiting for links/buses/rendezvous)
  double recv_posted_s = 0.0;     // logical receive: the receive was posted
  double arrival_s = 0.0;         // physical receive: the last byte arrived
};

struct Timeline {
  bool recorded = false;
  std::vector<StateInterval> intervals;  // ordered by (rank, begin_s)
  std::vector<MessageRecord> messages;   // ordered by (arrival_s, source, dest)
};

struct SimResult {
  double predicted_time_s = 0.0;
  std::uint64_t events = 0;  // trace events replayed (all ranks)
  int nprocs = 0;
  int nodes = 0;  // nodes the ranks were mapped on
  std::string machine_name;
  std::string trace_description;
  std::uint64_t messages = 0;  // point-to-point messages
  std::uint64_t bytes = 0;     // point-to-point bytes
  std::vector<RankTimes> ranks;
  std::vector<CollectiveTotals> collectives;  // in EventKind order
  // How many waitany/waitsome/test* completions differed from the trace (paper 003: the
  // request that completed first in the simulation was returned and the ids remapped).
  std::uint64_t remapped_completions = 0;
  // Receives naming their source and tag that matched a message larger than they record (a
  // blocking receive or a sendrecv records the bytes it got, an irecv what it posted: in a
  // trace of a real run a message never exceeds them; MPI would report MPI_ERR_TRUNCATE).
  // Wildcard receives are not counted: they record the message the traced run gave them. The
  // transfer takes the sender's size; `first_truncated_receive` says where the first one was, in
  // words.
  std::uint64_t truncated_receives = 0;
  std::string first_truncated_receive;
  Timeline timeline;  // only with SimOptions::record_timeline
};

}  // namespace pas2p::sim
