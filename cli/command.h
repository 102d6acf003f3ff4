// Subcommand registration. Each `cmd_<name>.cc` defines a setup function that adds its
// CLI11 subcommand (options + callback) and registers it with PAS2P_REGISTER_COMMAND;
// main.cc only wires them together. No algorithm lives in the CLI layer.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "pas2p/phases/analyze.h"

namespace pas2p::cli {

using SetupFn = void (*)(CLI::App& root);

struct CommandEntry {
  int order;  // position in `pas2p --help`
  SetupFn setup;
};

std::vector<CommandEntry>& CommandRegistry();

struct CommandRegistrar {
  CommandRegistrar(int order, SetupFn setup) { CommandRegistry().push_back({order, setup}); }
};

// A fraction >= 0 (--bytes-tolerance).
inline CLI::Validator NonNegativeFraction() {
  return CLI::Validator(
      [](std::string& value) {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !(x >= 0)) {
          return "expected a fraction >= 0 (e.g. 0.1), got " + value;
        }
        return std::string();
      },
      "FRACTION>=0");
}

// --bytes-tolerance of the commands that build a model (model, predict, validate); *value
// stays < 0 when it is not given (AnalyzeOptionsOf).
inline void AddBytesToleranceOption(CLI::App* cmd, double* value) {
  cmd->add_option("--bytes-tolerance", *value,
                  "Message sizes ending loops, as `pas2p analyze --bytes-tolerance` (default: "
                  "loops are found on the calls alone, and when no model builds from that the "
                  "traces are analyzed again with 0.1, with a warning saying so)")
      ->check(NonNegativeFraction());
}

// --threads of the commands that build a model (model, predict, validate): traces analyzed,
// phases built and simulations run at once; 0 (the default) is the hardware threads, up to
// 4. Results are the same whatever the number; `what` says what else it runs at once.
inline void AddThreadsOption(CLI::App* cmd, int* value, const std::string& what) {
  cmd->add_option("--threads", *value,
                  "Traces analyzed and phases built" + what +
                      " at once (default 0: the hardware threads, up to 4; the result is the "
                      "same whatever the number)")
      ->check(CLI::Range(0, 256));
}

// The analysis options of a command that builds a model, from its --bytes-tolerance (< 0:
// not given, the default options; synthesis::AnalyzeForModel then chooses).
inline phases::AnalyzeOptions AnalyzeOptionsOf(double bytes_tolerance) {
  phases::AnalyzeOptions options;
  if (bytes_tolerance > 0) options.bytes_tolerance = bytes_tolerance;
  return options;
}

}  // namespace pas2p::cli

#define PAS2P_CONCAT_INNER(a, b) a##b
#define PAS2P_CONCAT(a, b) PAS2P_CONCAT_INNER(a, b)
// PAS2P_REGISTER_COMMAND(30, SetupSimulate);
#define PAS2P_REGISTER_COMMAND(order, fn) \
  static ::pas2p::cli::CommandRegistrar PAS2P_CONCAT(pas2p_command_, __LINE__)(order, fn)
