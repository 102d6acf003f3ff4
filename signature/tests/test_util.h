// Helpers for the tracer tests: run commands and mpirun, read traces.
#pragma once

#include <string>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/core/trace.h"

namespace pas2p::testing {

struct CommandResult {
  int exit_code = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// A fresh (emptied) directory for one test's output under the build tree.
std::string FreshDir(const std::string& name);
// Runs a shell command line, capturing stdout and stderr.
CommandResult Run(const std::string& command_line);
// mpirun -np N [tracer] program args; `trace_dir` empty: untraced.
CommandResult RunMpi(int np, const std::string& program, const std::vector<std::string>& args,
                     const std::string& trace_dir);
std::string Program(const std::string& name);  // path of a test program
std::string Quote(const std::string& word);
// The events of one rank that are not compute bursts.
std::vector<Event> CallEvents(const std::vector<Event>& events);

}  // namespace pas2p::testing
