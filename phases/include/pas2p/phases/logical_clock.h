// The logical trace: a Lamport clock over the events of all ranks of a run.
//
// Every event gets a logical step. On one rank steps never decrease; an MPI call ticks the
// clock, a compute burst takes the step of the call before it. A receive (blocking recv,
// the receive half of a sendrecv, or the wait/test that completes an irecv) happens after
// its matching send: step = max(own clock, step of the send) + 1. A collective completes
// after every member of its communicator entered it: all members leave it at
// max(entry clocks) + 1. Sends and receives are matched as MPI does: per (source,
// destination, communicator), in order, with the actual source and tag of wildcard
// receives taken from their completion.
//
// The ranks are read together, each at most `max_lead_events` ahead of the others, so the
// memory used is the messages in flight plus one event per rank, whatever the trace
// length. Ranks whose streams cannot both be right (a receive with no send, a collective
// that the members of a communicator call differently, messages never received) are a
// TraceError naming the ranks. A cut trace (a stream that ends early) is processed up to
// the point where the cut blocks the other ranks, with a warning.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/core/trace.h"

namespace pas2p::phases {

struct LogicalClockOptions {
  // How many events one rank may run ahead before the others get a turn.
  std::size_t max_lead_events = 4096;
  bool operator==(const LogicalClockOptions&) const = default;
};

// One event of the logical trace, handed to the consumer in an order where every event
// comes after everything it depends on (and every rank's events in program order).
struct LogicalEvent {
  int rank = 0;
  std::uint64_t index = 0;  // position in the rank's stream (0-based)
  std::int64_t step = 0;    // logical step (Lamport time)
  const Event* event = nullptr;
};

struct LogicalTraceSummary {
  int nprocs = 0;
  std::uint64_t events = 0;    // events delivered
  std::int64_t last_step = 0;  // highest logical step
  bool cut = false;            // the trace ended early; analysis stopped at the cut
  std::vector<std::string> warnings;
  // Per rank: events delivered, and whether its stream was read to its end.
  std::vector<std::uint64_t> rank_events;
  std::vector<bool> rank_finished;
};

using LogicalEventSink = std::function<void(const LogicalEvent&)>;

// Runs the Lamport clock over `source` and calls `sink` for every event.
// Throws TraceError when ranks disagree (the message names them and what each expected).
LogicalTraceSummary RunLogicalClock(const TraceSource& source, const LogicalEventSink& sink,
                                    const LogicalClockOptions& options = {});

}  // namespace pas2p::phases
