// Writers of a SimResult: the text report and JSON that `pas2p simulate` prints, Paraver
// .prv/.pcf/.row, Chrome/Perfetto trace-event JSON, and the ASCII timeline of paper 002.
// Every writer is deterministic: the same SimResult gives the same bytes.
#pragma once

#include <ostream>
#include <string>

#include "pas2p/simulator/result.h"

namespace pas2p::sim {

struct ReportOptions {
  // Runs with more ranks than this get min/mean/max rows plus the slowest ranks instead of
  // one row per rank.
  int max_rank_rows = 32;
  int slowest_ranks = 5;
};

// Predicted time, per-rank table (compute, communication, wait, utilisation) and
// per-collective totals, as plain text.
std::string FormatReport(const SimResult& result, const ReportOptions& options = {});

// One JSON object: predicted_time_s, events, nprocs, nodes, machine, trace, messages, bytes,
// remapped_completions, truncated_receives, ranks (list of {rank, node, end_s, compute_s,
// communication_s, wait_s, utilisation, events, messages_sent, bytes_sent}) and collectives (list
// of {name, calls, time_s, wait_s, bytes}).
std::string ResultToJson(const SimResult& result);

// Paraver trace of the simulated run: PREFIX.prv (states, MPI call events, communications),
// PREFIX.pcf (state and event names) and PREFIX.row (node and rank names). Needs a
// recorded timeline. Throws UserError if a file cannot be written.
void WriteParaver(const SimResult& result, const std::string& prefix);

// Chrome / Perfetto trace-event JSON (load in ui.perfetto.dev or chrome://tracing): one
// process per node, one thread per rank, one slice per state interval, a flow arrow per
// message. Needs a recorded timeline.
void WritePerfetto(const SimResult& result, std::ostream& out);
void WritePerfettoFile(const SimResult& result, const std::string& path);

struct AsciiTimelineOptions {
  int width = 100;    // columns for the whole run
  int max_rows = 64;  // more ranks: this many, evenly spread (first and last included)
};

// One line per rank: '#' computing, '-' blocked in point-to-point (send, receive, wait,
// test), '.' waiting for the other members of a collective, '=' in the collective's
// transfers, ' ' finished. Each column shows what took most of its time slice.
std::string FormatAsciiTimeline(const SimResult& result, const AsciiTimelineOptions& options = {});

}  // namespace pas2p::sim
