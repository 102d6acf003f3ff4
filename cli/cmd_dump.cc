// pas2p dump: print a trace (any supported format) as text, or summarize it.
#include <cstdio>
#include <map>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"

namespace pas2p::cli {
namespace {

struct DumpOptions {
  std::string trace;
  std::vector<int> ranks;
  std::size_t limit = 0;
  bool summary = false;
};

const char* StatusName(StreamStatus s) {
  switch (s) {
    case StreamStatus::kComplete:
      return "complete";
    case StreamStatus::kTruncated:
      return "cut";
    case StreamStatus::kCorrupt:
      return "corrupt";
    default:
      return "reading";
  }
}

int RunDump(const DumpOptions& o) {
  auto source = OpenTrace(o.trace);
  const TraceMetadata& m = source->metadata();
  std::vector<int> ranks = o.ranks;
  if (ranks.empty())
    for (int r = 0; r < m.nprocs; ++r) ranks.push_back(r);
  for (int r : ranks)
    if (r < 0 || r >= m.nprocs)
      throw UserError("--rank " + std::to_string(r) + " is not a rank of " + o.trace + " (0.." +
                      std::to_string(m.nprocs - 1) + ")");
  std::string command;
  for (const auto& word : m.command) command += (command.empty() ? "" : " ") + word;
  std::printf("# trace %s\n# application %s, %d ranks, source %s, status %s%s%s\n",
              source->description().c_str(), m.application.c_str(), m.nprocs, m.source.c_str(),
              m.status.c_str(), m.status_reason.empty() ? "" : ": ", m.status_reason.c_str());
  // Where the ranks ran: more ranks than cores means compute measured under contention.
  std::printf("# placement %s%s\n", m.DescribePlacement().c_str(),
              m.IsOversubscribed() ? " -- more ranks than cores" : "");
  if (!command.empty()) std::printf("# command %s\n", command.c_str());
  if (!m.mpi_library.empty()) std::printf("# mpi %s\n", m.mpi_library.c_str());
  std::string counters;
  for (const auto& c : m.counters) counters += (counters.empty() ? "" : ",") + c;
  std::printf("# counters %s%s%s\n", counters.empty() ? "none" : counters.c_str(),
              m.counters_note.empty() ? "" : " -- ", m.counters_note.c_str());
  bool damaged = false;
  std::map<std::string, std::uint64_t> total_by_kind;
  std::uint64_t total_events = 0, total_bytes = 0;
  double total_cpu_s = 0;
  if (o.summary)
    std::printf("%6s %10s %12s %14s %10s  %s\n", "rank", "events", "cpu_s", "sent_bytes", "wall_s",
                "stream");
  for (int r : ranks) {
    auto reader = source->OpenRankAsRecorded(r);
    Event e;
    std::size_t n = 0;
    std::uint64_t bytes = 0;
    std::int64_t cpu_ns = 0, wall_end = 0;
    while (reader->Next(&e)) {
      ++n;
      if (o.summary) {
        ++total_by_kind[std::string(EventKindName(e.kind))];
        bytes += e.SentBytes();
        if (e.kind == EventKind::kCompute) cpu_ns += e.cpu_ns;
        wall_end = std::max(wall_end, e.wall_end_ns);
      } else if (o.limit == 0 || n <= o.limit) {
        std::printf("%d %zu %s\n", r, n - 1, FormatEvent(e).c_str());
      }
    }
    if (o.summary) {
      std::printf("%6d %10zu %12.6f %14llu %10.6f  %s\n", r, n, cpu_ns * 1e-9,
                  static_cast<unsigned long long>(bytes), wall_end * 1e-9,
                  StatusName(reader->status()));
      total_events += n;
      total_bytes += bytes;
      total_cpu_s += cpu_ns * 1e-9;
    }
    if (reader->status() != StreamStatus::kComplete) {
      damaged = true;
      std::fprintf(stderr, "pas2p dump: warning: %s\n", reader->message().c_str());
    }
  }
  if (o.summary) {
    std::printf("%6s %10llu %12.6f %14llu\n", "total",
                static_cast<unsigned long long>(total_events), total_cpu_s,
                static_cast<unsigned long long>(total_bytes));
    std::printf("\n%-16s %12s\n", "event", "count");
    for (const auto& [kind, count] : total_by_kind)
      std::printf("%-16s %12llu\n", kind.c_str(), static_cast<unsigned long long>(count));
  }
  if (damaged) {
    std::fprintf(stderr,
                 "pas2p dump: the trace is incomplete: the output above is the readable prefix\n");
    return 2;
  }
  return 0;
}

void SetupDump(CLI::App& root) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* cmd = root.add_subcommand("dump", "Print a trace as text, or summarize it");
  cmd->footer(
      "Prints one event per line ('RANK INDEX KIND fields... t=[start,end]'),\n"
      "or with --summary a per-rank table (events, CPU seconds, bytes sent, wall seconds) and\n"
      "event counts by kind. Reads pas2p trace directories and SimGrid TI traces.\n"
      "The header ('# ...' lines) gives the run: application, ranks, status, where the ranks\n"
      "ran ('# placement 49 ranks on 1 host (vm: 49 ranks on 2 cores, 24.5 per core)';\n"
      "cores = CPUs the ranks' affinity masks allow), command, MPI library, counters.\n"
      "Exit status 2 if a stream is cut or damaged (its readable prefix is printed).");
  cmd->add_option("trace", o->trace, "Trace directory or SimGrid TI list file")->required();
  cmd->add_option("-r,--rank", o->ranks, "Only these ranks (repeatable; default: all)");
  cmd->add_option("-n,--limit", o->limit, "At most this many events per rank (0 = all)");
  cmd->add_flag("-s,--summary", o->summary, "Per-rank summary instead of every event");
  cmd->callback([o]() {
    int rc = RunDump(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

PAS2P_REGISTER_COMMAND(90, SetupDump);

}  // namespace
}  // namespace pas2p::cli
