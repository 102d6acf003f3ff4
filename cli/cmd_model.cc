// pas2p model: fit the scaling model of an application from its traces at several counts.
#include <cstdio>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"

namespace pas2p::cli {
namespace {

struct ModelOptions {
  std::vector<std::string> traces;
  std::string out;
  std::int64_t at = 0;
  bool quiet = false;
  double bytes_tolerance = -1;  // < 0: pas2p chooses (synthesis::AnalyzeForModel)
  bool allow_remainder = false;
  int threads = 0;
};

void RunModel(const ModelOptions& o) {
  const auto inputs = synthesis::ExpandTraceArgs(o.traces);
  const synthesis::AppModel model =
      synthesis::AnalyzeForModel(inputs, AnalyzeOptionsOf(o.bytes_tolerance), o.bytes_tolerance < 0,
                                 nullptr, o.allow_remainder, o.threads)
          .model;
  if (!o.out.empty()) synthesis::SaveModel(model, o.out);
  if (!o.quiet) std::fputs(synthesis::DescribeModel(model, o.at).c_str(), stdout);
  if (!o.out.empty()) std::printf("\nmodel written to %s\n", o.out.c_str());
}

void SetupModel(CLI::App& root) {
  auto o = std::make_shared<ModelOptions>();
  CLI::App* cmd =
      root.add_subcommand("model", "Fit how each phase scales from traces at several counts");
  cmd->footer(
      "Analyzes each trace into phases (or loads saved signatures), matches the phases across\n"
      "the counts, and fits for every phase present at every count: its weight as a function\n"
      "of P, and for each of its calls (slots) the general equation of its peers (torus,\n"
      "mesh, butterfly, master-worker, ...), the communicator rule of its collectives, and\n"
      "regressions of bytes and compute. Prints the model in words, e.g.\n"
      "  call 4: isend to torus: +1 along x ...; bytes per message ≈ 5965·P^−0.32, from 4\n"
      "  counts, LOO error 1.1%\n"
      "With --out the model is saved as JSON (format in synthesis/include/pas2p/synthesis/\n"
      "model.h) for `pas2p synthesize` and `pas2p predict`.\n"
      "TRACES: trace directories, SimGrid TI traces, saved signatures, or a directory of\n"
      "traces (datasets/traces/stencil2d). At least 3 counts of one application.\n"
      "When no phase corresponds at every count (a loop whose iterations grow with P, a\n"
      "pipeline of sqrt(P) - 1 stages, is part of the phase around it at the smallest\n"
      "counts), the model is built from the largest counts whose phases correspond (at\n"
      "least 3) and its first warning names the counts left out.\n"
      "A phase that no model fits (communication no pattern family reproduces) is left out\n"
      "with a warning, its time kept as the unmodelled remainder, when it takes at most 20%\n"
      "of every traced run; a larger one is an error, unless --allow-remainder, which\n"
      "leaves out such phases whatever their share (only when no model builds otherwise).\n"
      "Exit status 1 with an explanation on bad input (too few counts, mixed applications,\n"
      "phases that do not correspond, a pattern no family fits).\n"
      "Example: pas2p model datasets/traces/stencil2d --out stencil2d.model.json");
  cmd->add_option("traces", o->traces, "Traces (or a directory of traces) at >= 3 counts")
      ->required();
  cmd->add_option("-o,--out", o->out, "Write the model as JSON to this file");
  cmd->add_option("--at", o->at, "Also print each weight's value and interval at this count");
  AddBytesToleranceOption(cmd, &o->bytes_tolerance);
  AddThreadsOption(cmd, &o->threads, "");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the model");
  cmd->add_flag("--allow-remainder", o->allow_remainder,
                "Leave out phases that no model fits whatever their share of the run (their time "
                "is the model's unmodelled remainder; an error otherwise)");
  cmd->callback([o]() { RunModel(*o); });
}

PAS2P_REGISTER_COMMAND(50, SetupModel);

}  // namespace
}  // namespace pas2p::cli
