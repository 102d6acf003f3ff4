// Helpers for the end-to-end tests: run a command, find the built tools and mini-apps,
// trace a mini-app with `pas2p trace` under a real mpirun, and read the result.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/core/trace.h"

namespace pas2p::testing {

struct RunResult {
  int exit_code = -1;  // the command's exit status, 128 + signal if it was killed
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `argv` (no shell) with a time limit, capturing stdout and stderr. Extra environment
// entries ("NAME=value") are added to the inherited environment.
RunResult RunCommand(const std::vector<std::string>& argv, int timeout_s = 300,
                     const std::vector<std::string>& extra_env = {});

// A fresh directory under the system temp dir, removed by the destructor unless the test
// failed (then it is kept, and its path printed, for a post-mortem).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::filesystem::path SourceDir();  // the repository
std::filesystem::path BinaryDir();  // the build directory
// A mini-app or tool in the build's bin/ (fails the test if missing).
std::filesystem::path Binary(const std::string& name);

// mpirun with the flags this machine needs (oversubscribe; allow-run-as-root when root).
std::vector<std::string> MpirunPrefix(int nprocs);

struct TracedRun {
  RunResult run;                    // what `pas2p trace` returned
  std::filesystem::path trace_dir;  // the trace directory it wrote
};

// `pas2p trace -n <nprocs> --out <out_dir> -- <bin>/<app> <args>`; the test fails (and
// the returned trace_dir is empty) if the command fails or writes no trace.
TracedRun TraceApp(const std::string& app, int nprocs, const std::vector<std::string>& args,
                   const std::filesystem::path& out_dir);

// The application's checksum line ("<app> nprocs=... checksum=...") from its stdout, or "".
std::string ChecksumLine(const std::string& app, const std::string& out);
// The number after "checksum=" in that line (NaN if absent).
double ChecksumValue(const std::string& line);

// Every rank's events, with compute bursts dropped (MPI events only).
std::vector<std::vector<Event>> MpiEvents(const TraceData& data);

// Point-to-point consistency of a whole trace: every message sent from a to b with tag t
// on communicator c is received by b from a with tag t on c, as many times, and the
// receive's buffer is at least the message (wildcard receives are resolved first from
// their completions). Returns "" or a description of every mismatch.
std::string CheckPointToPointMatching(const TraceData& data);

// Two event sequences side by side (kinds only), for failure messages.
std::string DescribeSequences(const std::vector<Event>& got, const std::vector<Event>& want);

// Lines of a multi-line string.
std::vector<std::string> Lines(const std::string& text);

}  // namespace pas2p::testing
