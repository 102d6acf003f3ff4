// pas2p machine: check, print and convert machine descriptions (pas2p TOML, Dimemas .cfg).
// Wiring only: the formats live in pas2p/simulator/machine_file.h and dimemas_cfg.h.
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/simulator/dimemas_cfg.h"
#include "pas2p/simulator/machine_file.h"

namespace pas2p::cli {
namespace {

struct MachineOptions {
  std::string input;
  std::string out;
  std::string base;
  int nprocs = 0;
  bool collectives = false;
};

void RunMachine(const MachineOptions& o) {
  const bool is_cfg = std::filesystem::path(o.input).extension() == ".cfg";
  if (!o.base.empty() && !is_cfg)
    throw UserError("--base " + o.base + ": only a Dimemas .cfg input takes a base machine");
  const sim::Machine m =
      o.input.empty() ? sim::Machine{}
      : is_cfg        ? sim::LoadDimemasCfg(o.input,
                                     o.base.empty() ? sim::Machine{} : sim::LoadMachineFile(o.base))
                      : sim::LoadMachineFile(o.input);
  if (o.nprocs > 0) {
    std::string error;
    if (!m.IsValidFor(o.nprocs, &error))
      throw UserError((o.input.empty() ? std::string("default machine") : o.input) + ": " + error);
    // Ranks per node under this mapping, so a user sees where the ranks land.
    std::map<int, int> per_node;
    for (int r = 0; r < o.nprocs; ++r) ++per_node[m.NodeOf(r, o.nprocs)];
    std::fprintf(stderr, "%d ranks on %zu nodes (mapping %s):", o.nprocs, per_node.size(),
                 std::string(sim::MappingName(m.mapping)).c_str());
    int shown = 0;
    for (const auto& [node, count] : per_node) {
      if (++shown > 8) {
        std::fprintf(stderr, " ...");
        break;
      }
      std::fprintf(stderr, " node %d: %d", node, count);
    }
    std::fprintf(stderr, "\n");
  }
  if (o.collectives) {
    std::printf("%s", sim::CollectiveTableToText(m.collectives).c_str());
    return;
  }
  if (o.out.empty()) {
    std::printf("%s", sim::MachineToToml(m).c_str());
    return;
  }
  const std::string ext = std::filesystem::path(o.out).extension().string();
  if (ext == ".cfg") {
    sim::SaveDimemasCfg(m, o.out);
    std::filesystem::path table = o.out;
    table.replace_extension(".collectives");
    std::printf("wrote %s and %s\n", o.out.c_str(), table.string().c_str());
  } else if (ext == ".toml") {
    sim::SaveMachineFile(m, o.out, o.input.empty() ? "" : "Converted from " + o.input);
    std::printf("wrote %s\n", o.out.c_str());
  } else {
    throw UserError("--out " + o.out + ": expected a .toml (pas2p) or .cfg (Dimemas) file name");
  }
}

void SetupMachine(CLI::App& root) {
  auto o = std::make_shared<MachineOptions>();
  CLI::App* cmd = root.add_subcommand(
      "machine", "Check, print or convert a machine description (TOML or Dimemas .cfg)");
  cmd->footer(
      "Reads FILE (.cfg = Dimemas configuration, anything else = pas2p TOML; no FILE = the\n"
      "built-in default machine), checks it, and prints it as a complete pas2p machine file\n"
      "with every field, or writes it with --out (.toml or .cfg; a .cfg comes with its\n"
      "collective table beside it as NAME.collectives). Errors name the file, the line and\n"
      "the field. datasets/machines/default.toml documents every field.\n"
      "Examples:\n"
      "  pas2p machine datasets/machines/default.toml --out cluster.cfg   # to Dimemas\n"
      "  pas2p machine cluster.cfg --out cluster.toml                     # from Dimemas\n"
      "  pas2p machine cluster.toml --nprocs 1024     # check, and show the rank placement");
  cmd->add_option("file", o->input, "Machine file (.toml or Dimemas .cfg)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", o->out, "Write to this .toml or .cfg instead of printing");
  cmd->add_option("--base", o->base,
                  "With a .cfg input: machine file giving what Dimemas cannot express (eager "
                  "threshold, instructions/s, flop/s, half duplex, topology)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--nprocs", o->nprocs,
                  "Also check a run of this many ranks (node capacity, explicit map)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--collectives", o->collectives,
                "Print only the collective table, in Dimemas syntax");
  cmd->callback([o]() { RunMachine(*o); });
}

PAS2P_REGISTER_COMMAND(72, SetupMachine);

}  // namespace
}  // namespace pas2p::cli
