// `pas2p trace`: runs an unmodified MPI program under Open MPI's mpirun with the pas2p
// tracer preloaded, once per process count, and leaves one trace directory per count.
//
// In:  the program and its arguments, the process counts, where to write.
// Out: traces/<app>/<app>.<count>/ (trace.json + rank-<N>.p2t), progress on stderr. A run
//      whose application fails keeps what was traced, marked "incomplete" with the reason
//      (exit status, signals, MPI_Abort), and RunTraces stops there and says so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace pas2p::signature {

struct TraceRunOptions {
  std::vector<int> counts;               // process counts, in the order run
  std::vector<std::string> command;      // program and its arguments ("{n}": the count)
  std::filesystem::path out_dir;         // empty: traces/<app>
  std::string mpirun = "mpirun";         // Open MPI's launcher (name or path)
  std::vector<std::string> mpirun_args;  // extra launcher arguments
  std::filesystem::path tracer;          // libpas2p-trace.so
  std::ostream* progress = nullptr;      // progress lines (usually std::cerr); null: quiet

  // Checks what can be checked without running: counts, program (exists, executable, an
  // MPI program), launcher, tracer, writable output directory. Returns false and says why.
  bool IsValid(std::string* error) const;
};

struct TraceRunResult {
  int count = 0;
  std::filesystem::path dir;
  double wall_s = 0;
  std::uint64_t events = 0;
  bool ok = false;
  std::string failure;  // why the run is incomplete
};

struct TraceRunSummary {
  std::vector<TraceRunResult> runs;  // the runs made, the failing one last
  bool ok = true;
  std::string failure;  // names the count, the reason and where the partial trace is
};

// Runs the traced program once per count. Throws UserError if the options are not valid
// (see IsValid); a failing application is reported in the summary, not thrown.
TraceRunSummary RunTraces(const TraceRunOptions& options);

// The tracer library: $PAS2P_TRACER if set, else <dir of executable>/../lib/libpas2p-trace.so.
std::filesystem::path FindTracer(const std::filesystem::path& executable);

// "4,9,16" -> {4, 9, 16}. Throws UserError naming the bad item.
std::vector<int> ParseCounts(const std::string& text);

// Splits a launcher argument string like a shell does for words and quotes ("a 'b c'").
std::vector<std::string> SplitArguments(const std::string& text);

// The command run at `count`: every "{n}" in the program and its arguments becomes the
// count, for programs built for one count (the NAS Parallel Benchmarks' bin/cg.S.16) or
// inputs per count (`-- ./app in.{n}`). Other words are unchanged.
std::vector<std::string> CommandForCount(const std::vector<std::string>& command, int count);

// The application's name for the output directories: the program's file name, with "{n}"
// and one '.', '_' or '-' beside it removed (bin/cg.S.{n} -> "cg.S", ./app -> "app").
std::string ApplicationName(const std::vector<std::string>& command);

// The directory a count's trace goes to: <out>/<app>.<count>.
std::filesystem::path TraceDirFor(const std::filesystem::path& out_dir, const std::string& app,
                                  int count);

// Throws UserError unless `program` (a path, or a name found on PATH) is an executable
// whose dynamic dependencies include libmpi. Returns its resolved path.
std::filesystem::path CheckMpiProgram(const std::string& program);

}  // namespace pas2p::signature
