// pas2p trace: run an MPI program under mpirun with the tracer, once per process count.
#include <iostream>
#include <memory>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/signature/trace_runner.h"

namespace pas2p::cli {
namespace {

struct TraceCommandOptions {
  std::string counts;
  std::string out;
  std::string mpirun = "mpirun";
  std::string mpirun_args;
  std::vector<std::string> command;
};

int RunTrace(const TraceCommandOptions& o) {
  signature::TraceRunOptions options;
  options.counts = signature::ParseCounts(o.counts);
  options.command = o.command;
  options.out_dir = o.out;
  options.mpirun = o.mpirun;
  options.mpirun_args = signature::SplitArguments(o.mpirun_args);
  options.tracer = signature::FindTracer("/proc/self/exe");
  options.progress = &std::cerr;
  const signature::TraceRunSummary summary = signature::RunTraces(options);
  if (!summary.ok) throw UserError(summary.failure);
  for (const auto& run : summary.runs) std::cerr << "wrote " << run.dir.string() << "\n";
  return 0;
}

void SetupTrace(CLI::App& root) {
  auto o = std::make_shared<TraceCommandOptions>();
  CLI::App* cmd =
      root.add_subcommand("trace", "Run an MPI program with the tracer at several process counts");
  cmd->footer(
      "Runs Open MPI's mpirun once per count with libpas2p-trace.so preloaded (the program\n"
      "is not modified or rebuilt; C, C++ and Fortran programs are traced alike) and writes\n"
      "one trace directory per count: OUT/<app>.<count>/ with trace.json and one event\n"
      "stream per rank (read them with 'pas2p dump'). Adds --oversubscribe when a count\n"
      "exceeds the cores and --allow-run-as-root when run as root. Progress goes to stderr;\n"
      "the program's own output is passed through unchanged.\n"
      "If the program fails (non-zero exit, signal, MPI_Abort), the trace of that count is\n"
      "kept and marked 'incomplete' with the reason, and pas2p exits non-zero naming it.\n"
      "Environment: PAS2P_TRACER overrides the tracer library (default\n"
      "<pas2p dir>/../lib/libpas2p-trace.so); PAS2P_COUNTERS=0 turns PAPI counters off;\n"
      "PAS2P_VERBOSE=1 makes the tracer say what it does on stderr.\n"
      "\"{n}\" in the program or its arguments becomes the count of each run, for programs\n"
      "built for one count (the NAS Parallel Benchmarks) or inputs per count; the traces\n"
      "go to traces/<name without {n}>/ (bin/cg.S.{n} -> traces/cg.S/cg.S.16).\n"
      "The program may be a script that runs the MPI program (e.g. one that writes the input\n"
      "file of each count from $OMPI_COMM_WORLD_SIZE, then execs the solver); a run that\n"
      "writes no trace is an error.\n"
      "Example: pas2p trace -n 4,9,16 -- ./stencil2d 512\n"
      "         pas2p trace -n 4,8,16 -- bin/cg.S.{n}");
  cmd->add_option("-n,--counts", o->counts, "Process counts, comma-separated (e.g. 4,9,16)")
      ->required();
  cmd->add_option("-o,--out", o->out, "Output directory (default: traces/<app>)");
  cmd->add_option("--mpirun", o->mpirun, "MPI launcher (Open MPI's mpirun)")->capture_default_str();
  cmd->add_option("--mpirun-args", o->mpirun_args,
                  "Extra launcher arguments, quoted as one string (e.g. \"--bind-to none\")");
  cmd->add_option("command", o->command, "The program and its arguments, after --")->required();
  cmd->callback([o]() {
    const int rc = RunTrace(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

PAS2P_REGISTER_COMMAND(10, SetupTrace);

}  // namespace
}  // namespace pas2p::cli
