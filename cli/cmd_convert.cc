// pas2p convert: between pas2p trace directories and SimGrid time-independent traces.
#include <cstdio>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/simgrid_ti.h"
#include "pas2p/core/trace.h"

namespace pas2p::cli {
namespace {

struct ConvertOptions {
  std::string input;
  std::string out;
  std::string to = "simgrid-ti";
  double flops_per_second = 1e9;
};

void RunConvert(const ConvertOptions& o) {
  TiOptions ti;
  ti.flops_per_second = o.flops_per_second;
  if (o.to == "simgrid-ti") {
    auto source = OpenTrace(o.input);
    auto list = ExportSimgridTi(*source, o.out, ti);
    std::printf(
        "wrote %d TI rank files; replay with:\n  smpirun -np %d -platform PLATFORM.xml "
        "-hostfile HOSTS -replay %s\n(host speed %.6g flop/s matches the exported "
        "compute actions)\n",
        source->nprocs(), source->nprocs(), list.c_str(), o.flops_per_second);
  } else if (o.to == "pas2p") {
    auto source = IsSimgridTi(o.input) ? OpenSimgridTi(o.input, ti) : OpenTrace(o.input);
    TraceData data = ReadTrace(*source);
    WriteTrace(o.out, data);
    std::printf("wrote pas2p trace %s (%d ranks)\n", o.out.c_str(), source->nprocs());
  } else {
    throw UserError("--to " + o.to + ": unknown format (expected simgrid-ti or pas2p)");
  }
}

void SetupConvert(CLI::App& root) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = root.add_subcommand(
      "convert", "Convert between pas2p traces and SimGrid time-independent traces");
  cmd->footer(
      "--to simgrid-ti writes one TI file per rank plus traces.list for\n"
      "'smpirun -replay' (compute bursts become flops at --flops; collectives on\n"
      "sub-communicators, which SimGrid cannot replay, become point-to-point messages).\n"
      "--to pas2p reads a SimGrid TI trace (list file or directory) into a pas2p trace.");
  cmd->add_option("input", o->input, "Trace directory or TI list file")->required();
  cmd->add_option("-o,--out", o->out, "Output directory")->required();
  cmd->add_option("--to", o->to, "simgrid-ti (default) or pas2p")
      ->check(CLI::IsMember({"simgrid-ti", "pas2p"}));
  cmd->add_option("--flops", o->flops_per_second,
                  "Compute rate: flops per CPU second (default 1e9)")
      ->check(CLI::PositiveNumber);
  cmd->callback([o]() { RunConvert(*o); });
}

PAS2P_REGISTER_COMMAND(91, SetupConvert);

}  // namespace
}  // namespace pas2p::cli
