// pas2p simulate: replay a trace on a machine model (wiring only; the engine is
// pas2p/simulator/engine.h, the writers pas2p/simulator/outputs.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/machine_file.h"
#include "pas2p/simulator/outputs.h"
#include "pas2p/simulator/reschedule.h"

namespace pas2p::cli {
namespace {

namespace fs = std::filesystem;

struct SimulateOptions {
  std::string trace;
  std::string machine;
  bool json = false;
  bool deterministic = false;
  bool reschedule = false;
  std::string paraver;
  std::string perfetto;
  bool timeline = false;
  int timeline_width = 100;
  int timeline_rows = 64;
  bool progress = false;
};

// The shipped default machine: $PAS2P_DATA_DIR/machines/default.toml, else
// <prefix>/share/pas2p/machines/default.toml next to an installed binary, else the
// datasets/ directory of the build tree the binary sits in.
std::string DefaultMachinePath() {
  std::error_code ec;
  if (const char* env = std::getenv("PAS2P_DATA_DIR"); env && *env)
    return (fs::path(env) / "machines" / "default.toml").string();
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path share = exe.parent_path().parent_path() / "share" / "pas2p" / "machines";
  if (fs::exists(share / "default.toml", ec)) return (share / "default.toml").string();
  for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    const fs::path candidate = dir / "datasets" / "machines" / "default.toml";
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return {};
}

void RunSimulate(const SimulateOptions& o) {
  std::string machine_path = o.machine;
  if (machine_path.empty()) {
    machine_path = DefaultMachinePath();
    if (machine_path.empty())
      throw UserError(
          "no --machine given and the default machine file (datasets/machines/default.toml) "
          "was not found; give one with --machine FILE or set PAS2P_DATA_DIR");
  }
  const sim::Machine machine = sim::LoadAnyMachine(machine_path);
  auto trace = OpenTrace(o.trace);

  sim::SimOptions so;
  so.deterministic = o.deterministic;
  so.record_timeline = !o.paraver.empty() || !o.perfetto.empty() || o.timeline;
  so.progress_every_events = 1u << 20;
  const auto start = std::chrono::steady_clock::now();
  bool printed = false;
  const bool tty = isatty(STDERR_FILENO) != 0;
  so.progress = [&](const sim::SimProgress& p) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!o.progress && !(tty && elapsed > 2.0)) return;
    std::fprintf(
        stderr,
        "%ssimulating: %.1f M events, %d/%d ranks finished, t = %.6f s simulated, %.1f s elapsed%s",
        tty ? "\r" : "", p.events / 1e6, p.ranks_finished, p.nprocs, p.simulated_time_s, elapsed,
        tty ? "" : "\n");
    std::fflush(stderr);
    printed = true;
  };
  if (o.reschedule && o.deterministic)
    throw UserError(
        "--reschedule and --deterministic exclude each other: the rescheduled "
        "replay hands tasks to whoever answers first in the simulation");
  std::unique_ptr<sim::RescheduledTrace> rescheduled;
  if (o.reschedule) rescheduled = std::make_unique<sim::RescheduledTrace>(*trace);
  const sim::SimResult result = rescheduled
                                    ? sim::Simulate(*rescheduled, machine, rescheduled->Attach(so))
                                    : sim::Simulate(*trace, machine, so);
  if (printed && tty) std::fputc('\n', stderr);
  if (rescheduled) {
    const sim::SelfScheduledRun& run = rescheduled->run();
    if (run.rescheduled) {
      std::fprintf(stderr,
                   "rescheduled: master rank %d, %llu tasks (%llu messages to whoever answered "
                   "first, in the simulation) over %zu workers\n",
                   run.master, static_cast<unsigned long long>(run.tasks),
                   static_cast<unsigned long long>(run.replies), run.workers.size());
    } else {
      std::fprintf(stderr, "not rescheduled, replayed as traced: %s\n", run.note.c_str());
    }
  }

  if (!o.paraver.empty()) sim::WriteParaver(result, o.paraver);
  if (!o.perfetto.empty()) sim::WritePerfettoFile(result, o.perfetto);
  if (o.json) {
    std::fputs(sim::ResultToJson(result).c_str(), stdout);
    return;
  }
  std::printf("trace %s\nmachine %s (%s)\n", trace->description().c_str(), machine.name.c_str(),
              machine_path.c_str());
  std::fputs(sim::FormatReport(result).c_str(), stdout);
  if (o.timeline) {
    std::fputc('\n', stdout);
    std::fputs(sim::FormatAsciiTimeline(result, {o.timeline_width, o.timeline_rows}).c_str(),
               stdout);
  }
  if (!o.paraver.empty()) std::printf("\nParaver trace: %s.prv (.pcf, .row)\n", o.paraver.c_str());
  if (!o.perfetto.empty())
    std::printf("Perfetto trace: %s (open in https://ui.perfetto.dev)\n", o.perfetto.c_str());
}

void SetupSimulate(CLI::App& root) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = root.add_subcommand(
      "simulate", "Replay a trace on a machine model: predicted time and where it goes");
  cmd->footer(
      "Replays TRACE (a pas2p trace directory or a SimGrid TI trace: the list file or a\n"
      "directory holding it) on the machine model of --machine (TOML machine file or Dimemas\n"
      ".cfg; default: the shipped datasets/machines/default.toml, $PAS2P_DATA_DIR overrides\n"
      "the datasets directory). The model is Dimemas': compute bursts scaled by the CPU speed,\n"
      "point-to-point T = L + S/B (eager below the eager threshold, rendezvous above) with\n"
      "links and buses, collectives as FAN_IN + FAN_OUT from the collective table.\n"
      "\n"
      "Prints the predicted time, a per-rank table (end, compute, communication = blocked\n"
      "while its data moved, wait = blocked waiting for a partner, utilisation = compute /\n"
      "predicted time; min/mean/max and the slowest ranks when there are more than 32 ranks)\n"
      "and per-collective totals. --json prints one object instead: {predicted_time_s, events,\n"
      "nprocs, nodes, machine, trace, messages, bytes, remapped_completions,\n"
      "truncated_receives, ranks: [{rank, node, end_s, compute_s, communication_s, wait_s,\n"
      "utilisation, events, messages_sent, bytes_sent}], collectives: [{name, calls, time_s,\n"
      "wait_s, bytes}]}.\n"
      "\n"
      "Waitany/waitsome/test return what completes first in the simulation (Boehme et al.);\n"
      "--deterministic follows the traced completions and wildcard sources instead. A trace\n"
      "that cannot complete stops with a deadlock report naming each blocked rank and what it\n"
      "waits for. A receive naming its source that gets a message larger than it records\n"
      "(MPI_ERR_TRUNCATE in a real run) is counted (truncated_receives) and the first one\n"
      "named in a warning; the transfer takes the sender's size.\n"
      "\n"
      "--reschedule: for a self-scheduled (master/worker) trace, hand the tasks out the way\n"
      "the simulated machine would: the master's replies go to whichever worker answers first\n"
      "in the simulation and every task's body (the worker's compute and result sends after\n"
      "the master's message) moves with its task, in the master's traced order (see\n"
      "simulator/include/pas2p/simulator/reschedule.h). A line on stderr says what was\n"
      "rescheduled, or why the trace was replayed as traced (not self-scheduled, or a shape\n"
      "it does not handle). Examples:\n"
      "  pas2p simulate traces/stencil2d.16 --machine cluster.toml --timeline\n"
      "  pas2p simulate run.list --json --paraver out/run --perfetto out/run.json");
  cmd->add_option("trace", o->trace, "Trace directory or SimGrid TI list file")->required();
  cmd->add_option("-m,--machine", o->machine, "Machine file (TOML or Dimemas .cfg)");
  cmd->add_flag("--json", o->json, "Print the result as one JSON object");
  cmd->add_flag("--deterministic", o->deterministic,
                "Follow the traced order of waitany/test completions and wildcard sources");
  cmd->add_flag("--reschedule", o->reschedule,
                "Self-scheduled traces: hand tasks to whoever answers first in the simulation");
  cmd->add_option("--paraver", o->paraver,
                  "Write the simulated run as Paraver PREFIX.prv/.pcf/.row");
  cmd->add_option("--perfetto", o->perfetto,
                  "Write the simulated run as Chrome/Perfetto trace-event JSON");
  cmd->add_flag("--timeline", o->timeline, "Print an ASCII timeline of the simulated run");
  cmd->add_option("--timeline-width", o->timeline_width, "Columns of the ASCII timeline (100)");
  cmd->add_option("--timeline-rows", o->timeline_rows,
                  "At most this many ranks in the ASCII timeline (64), evenly spread");
  cmd->add_flag("--progress", o->progress,
                "Always report progress on stderr (default: when a terminal run passes 2 s)");
  cmd->callback([o]() { RunSimulate(*o); });
}

PAS2P_REGISTER_COMMAND(58, SetupSimulate);

}  // namespace
}  // namespace pas2p::cli
