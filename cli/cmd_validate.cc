// pas2p validate: train on all but the largest traced count and check the prediction of it.
#include <algorithm>
#include <cstdio>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/predict.h"

namespace pas2p::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> traces;
  std::string machine;
  bool json = false;
};

void RunValidate(const ValidateOptions& o) {
  std::string machine_path;
  const sim::Machine machine = synthesis::LoadMachineOrDefault(o.machine, &machine_path);
  const auto inputs = synthesis::ExpandTraceArgs(o.traces);
  const auto sigs = synthesis::LoadSignatures(inputs);
  // The real trace of the largest count.
  std::size_t largest = 0;
  for (std::size_t i = 1; i < sigs.size(); ++i) {
    if (sigs[i].nprocs > sigs[largest].nprocs) largest = i;
  }
  if (inputs.empty() || inputs[largest].path.empty()) {
    throw UserError("validation needs the trace of the largest count, not only its signature");
  }
  auto real = OpenTrace(inputs[largest].path);
  const synthesis::Validation v = synthesis::Validate(sigs, *real, machine);
  const std::string app = sigs.empty() ? "" : sigs.front().application;
  if (o.json) {
    std::fputs(synthesis::ValidationToJson(v, app).c_str(), stdout);
  } else {
    std::fputs(synthesis::FormatValidation(v, app).c_str(), stdout);
    std::printf("  machine: %s (%s)\n", machine.name.c_str(), machine_path.c_str());
  }
}

void SetupValidate(CLI::App& root) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = root.add_subcommand(
      "validate", "Check predictions: train on smaller counts, predict the largest");
  cmd->footer(
      "Fits the model on every traced count but the largest, predicts the largest and\n"
      "compares with its real trace:\n"
      "  pattern_match  share of the real point-to-point messages whose predicted peer is\n"
      "                 exactly right (the i-th send of each rank compared);\n"
      "  bytes_error    |predicted - real| / real of the bytes sent (messages + collectives);\n"
      "  compute_error  the same for the CPU time of the compute bursts;\n"
      "  time_error     predicted time vs the simulation of the real trace on the same machine.\n"
      "--json prints those keys (fractions, 0.01 = 1%) and the totals behind them.\n"
      "Needs at least 4 counts. Example: pas2p validate datasets/traces/stencil2d");
  cmd->add_option("traces", o->traces, "Traces at >= 4 counts (or a directory of them)")
      ->required();
  cmd->add_option("-m,--machine", o->machine, "Machine file (default: the shipped default)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o]() { RunValidate(*o); });
}

PAS2P_REGISTER_COMMAND(65, SetupValidate);

}  // namespace
}  // namespace pas2p::cli
