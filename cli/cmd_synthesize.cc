// pas2p synthesize: write the logical trace of an application at a target count.
#include <cstdio>
#include <filesystem>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/synthesize.h"

namespace pas2p::cli {
namespace {

struct SynthesizeOptions {
  std::vector<std::string> inputs;
  std::int64_t target = 0;
  std::string out;
  std::string format = "pas2p";
  double flops_per_second = 1e9;
};

void RunSynthesize(const SynthesizeOptions& o) {
  if (o.target < 1) throw UserError("--target must be a positive process count");
  const synthesis::AppModel model = synthesis::ModelFromArgs(o.inputs);
  synthesis::SynthesizedTrace trace(model, o.target);
  const std::string written =
      synthesis::WriteSynthesized(trace, o.out, o.format, o.flops_per_second);
  std::printf("synthesized %s at %lld processes (%s format): %s\n", model.application.c_str(),
              static_cast<long long>(o.target), o.format.c_str(), written.c_str());
}

void SetupSynthesize(CLI::App& root) {
  auto o = std::make_shared<SynthesizeOptions>();
  CLI::App* cmd = root.add_subcommand(
      "synthesize", "Write the logical trace of the application at a target count");
  cmd->footer(
      "Evaluates the scaling model at --target N and writes every rank's events: MPI_Init, the\n"
      "communicators, the run's phases (repetitions scaled by the weight models; peers from\n"
      "the general equations; bytes and compute from the regressions) and MPI_Finalize.\n"
      "The input is a model file (`pas2p model --out`) or the traces themselves.\n"
      "Formats: pas2p (a trace directory, readable by every pas2p command) or simgrid-ti\n"
      "(rank-<N>.txt + traces.list for `smpirun -replay`; compute as flops at\n"
      "--flops-per-second). N must be a valid count of the application (the error names the\n"
      "nearest ones). Ranks are generated one at a time, so the memory does not grow with N.\n"
      "Example: pas2p synthesize model.json --target 1024 --out synth.1024");
  cmd->add_option("inputs", o->inputs, "Model file, or traces at >= 3 counts")->required();
  cmd->add_option("-t,--target", o->target, "Process count to synthesize")->required();
  cmd->add_option("-o,--out", o->out, "Output directory")->required();
  cmd->add_option("-f,--format", o->format, "pas2p or simgrid-ti")
      ->check(CLI::IsMember({"pas2p", "simgrid-ti"}));
  cmd->add_option("--flops-per-second", o->flops_per_second,
                  "simgrid-ti: flops per CPU second of compute (default 1e9)");
  cmd->callback([o]() { RunSynthesize(*o); });
}

PAS2P_REGISTER_COMMAND(55, SetupSynthesize);

}  // namespace
}  // namespace pas2p::cli
