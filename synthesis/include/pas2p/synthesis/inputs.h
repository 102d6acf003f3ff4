// What the prediction commands read: traces (or saved signatures) given on the command line,
// and the shipped data files (the default machine).
//
// A trace argument may be a trace directory (trace.json + rank streams), a SimGrid TI trace,
// a saved signature (`pas2p analyze --out`, JSON), or a directory whose sub-directories are
// traces (e.g. datasets/traces/stencil2d holding stencil2d.4, stencil2d.9, ...).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pas2p/phases/analyze.h"
#include "pas2p/phases/signature.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/synthesis/model.h"

namespace pas2p::synthesis {

struct TraceInput {
  std::filesystem::path path;            // the trace (empty for a signature file without its trace)
  std::filesystem::path signature_file;  // when given as a saved signature
};

// Expands the arguments into one input per run. Throws UserError naming an argument that is
// neither a trace, a signature nor a directory of traces.
std::vector<TraceInput> ExpandTraceArgs(const std::vector<std::string>& args);

// Analyzes (or loads) every input; `progress` (may be null) gets one line per input.
std::vector<phases::Signature> LoadSignatures(const std::vector<TraceInput>& inputs,
                                              const phases::AnalyzeOptions& options = {},
                                              std::vector<std::string>* progress = nullptr);

// The model the prediction commands work from: one saved model file (`pas2p model --out`,
// recognised by its "pas2p-model" format tag), or else the model built from the traces and
// signatures the arguments name (ExpandTraceArgs, LoadSignatures, BuildModel).
AppModel ModelFromArgs(const std::vector<std::string>& args);
// Is `args` one saved model file (what ModelFromArgs loads instead of building)?
bool IsModelFile(const std::vector<std::string>& args);

// The directory of shipped data (datasets/): $PAS2P_DATA_DIR if set, else found relative to
// the running executable (<prefix>/share/pas2p, or the source tree the build came from).
std::filesystem::path DataDir();
// The machine of --machine FILE, or datasets/machines/default.toml. *used receives the path.
sim::Machine LoadMachineOrDefault(const std::string& file, std::string* used);

}  // namespace pas2p::synthesis
