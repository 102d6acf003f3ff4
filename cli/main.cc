// pas2p: the command-line entry point. Wiring only: every subcommand lives in cmd_*.cc.
#include <algorithm>
#include <cstdio>
#include <exception>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/core/version.h"

namespace pas2p::cli {
std::vector<CommandEntry>& CommandRegistry() {
  static std::vector<CommandEntry> registry;
  return registry;
}
}  // namespace pas2p::cli

int main(int argc, char** argv) {
  CLI::App app{
      "pas2p predicts how an MPI application performs at process counts you have not run.\n"
      "Trace it at a few small counts, analyze the traces into phases, fit how each phase\n"
      "scales, and simulate the run at the target count on a machine model.",
      "pas2p"};
  app.set_version_flag("--version", std::string("pas2p ") + pas2p::kVersion);
  app.require_subcommand(1);
  app.footer("Run 'pas2p COMMAND --help' for the options of one command.");
  auto& registry = pas2p::cli::CommandRegistry();
  std::stable_sort(registry.begin(), registry.end(),
                   [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& entry : registry) entry.setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const pas2p::TraceError& e) {
    std::fprintf(stderr, "pas2p: trace error: %s\n", e.what());
    return 1;
  } catch (const pas2p::UserError& e) {
    std::fprintf(stderr, "pas2p: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pas2p: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
