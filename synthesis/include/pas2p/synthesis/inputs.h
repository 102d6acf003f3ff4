// What the prediction commands read: traces (or saved signatures) given on the command line,
// and the shipped data files (the default machine).
//
// A trace argument may be a trace directory (trace.json + rank streams), a SimGrid TI trace,
// a saved signature (`pas2p analyze --out`, JSON), or a directory whose sub-directories are
// traces (e.g. datasets/traces/stencil2d holding stencil2d.4, stencil2d.9, ...).
#pragma once

#include <array>
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

// Analyzes (or loads) every input, on up to `threads` threads (0: the hardware threads, at
// most 4); `progress` (may be null) gets one line per input.
std::vector<phases::Signature> LoadSignatures(const std::vector<TraceInput>& inputs,
                                              const phases::AnalyzeOptions& options = {},
                                              std::vector<std::string>* progress = nullptr,
                                              int threads = 0);

// How the traces were analyzed for a model, and the model built from them.
struct ModelInputs {
  // The inputs the model is built from, in their order (all of them, unless counts whose
  // run has another shape were left out: see AnalyzeForModel), and one signature per input.
  std::vector<TraceInput> inputs;
  std::vector<phases::Signature> signatures;
  phases::AnalyzeOptions options;  // what the traces were analyzed with
  AppModel model;                  // BuildModel(signatures)
  // Why `options` is not what was asked for (the second analysis below); empty otherwise.
  // Also in model.warnings, so that `model` and `predict` print it.
  std::string note;
};

// The similarities (as fractions of the one asked for) AnalyzeForModel tries, in order, when
// the runs' shapes differ across counts: kept apart first, then from near the one asked for
// down; then merging more (kMergingLadder).
inline constexpr std::array<double, 5> kSimilarityLadder = {0.0, 2.0 / 3, 1.0 / 2, 1.0 / 3,
                                                            1.0 / 6};
// After kSimilarityLadder, similarities above the one asked for (those of them above it):
// twice it, and 1, which merges runs of one structure whatever their compute. A burst that
// differs by more than the similarity at the small counts and less than the compute floor at
// the larger ones (NAS LU's last sweep of a run, whose bursts shrink with P) splits a phase
// at some counts only, whichever similarity below is used.
inline constexpr std::array<double, 2> kMergingLadder = {2.0, 0.0};  // x asked; 0: 1 (all)

// The message-size tolerance of the second analysis of AnalyzeForModel.
inline constexpr double kSizesEndLoopsTolerance = 0.10;

// Analyzes (or loads) the inputs with `options` and builds their model. Loops are found on
// structure by default, message sizes being statistics of the calls (sizes that drift with
// the data, ghost atoms, must not cut loops). But a code whose steps differ only by their
// sizes and partner (a vector exchange and the 8-byte reductions of dot products with one
// partner, as CG's) folds into loops that hold different steps at different counts. When
// `choose_loop_sizes` (the user did not set a size tolerance), no model builds from the
// first analysis and every input is a trace, the traces are analyzed once more with
// message sizes ending loops (bytes_tolerance = kSizesEndLoopsTolerance) and that model is
// kept, with a note saying so. When neither builds from every count, the first analysis
// builds from its largest counts whose phases correspond, if there are min_counts of them
// (BuildModel; the model's first warning names the counts left out). When nothing builds,
// the first analysis's error is thrown, with the second's first line added.
// Before that, the runs' shapes (phases::SequenceShape) are compared across the counts. A code
// does not change its phases with P, but separate runs of one structure merge into one phase
// where their compute is within `similarity`, which can come out differently at each count.
// When the shapes differ, the traces are analyzed again with such runs kept apart
// (similarity 0) and with fractions of the similarity asked for (kSimilarityLadder): a burst
// near the threshold can split one count's phase whichever single similarity is used
// (LAMMPS's last re-neighbouring step at 27 ranks). Each count's run can then take several
// shapes; the shape that most counts can take (ties: one the largest count can take) is kept,
// each count analyzed with the first similarity (asked for, then the ladder's) that gives it
// that shape, and `options` is the largest count's. When some counts cannot take it, they
// are left out if those that can are more than half of them and at least 3, with a note
// naming them: their phases would be matched with phases of another shape (a LAMMPS run
// synthesized at 64 from such counts deadlocked); otherwise the analysis asked for is kept,
// with a note saying phases may be matched wrongly.
// With `allow_remainder` (the user's --allow-remainder), when nothing builds that way, it is
// all tried again with any phase that no model fits left out whatever its share of the run
// (ModelOptions::max_dropped_share = 1; the time of such phases is the model's unmodelled
// remainder), and the model's first warning says so, with the error it had without.
// Traces are analyzed and phases built on up to `threads` threads (0: the hardware threads,
// at most 4); the model is the same whatever the number.
ModelInputs AnalyzeForModel(const std::vector<TraceInput>& inputs,
                            const phases::AnalyzeOptions& options, bool choose_loop_sizes,
                            std::vector<std::string>* progress = nullptr,
                            bool allow_remainder = false, int threads = 0);

// The model the prediction commands work from: one saved model file (`pas2p model --out`,
// recognised by its "pas2p-model" format tag), or else the model built from the traces and
// signatures the arguments name (ExpandTraceArgs, AnalyzeForModel).
AppModel ModelFromArgs(const std::vector<std::string>& args);
// Is `args` one saved model file (what ModelFromArgs loads instead of building)?
bool IsModelFile(const std::vector<std::string>& args);

// The directory of shipped data (datasets/): $PAS2P_DATA_DIR if set, else found relative to
// the running executable (<prefix>/share/pas2p, or the source tree the build came from).
std::filesystem::path DataDir();
// The machine of --machine FILE, or datasets/machines/default.toml. *used receives the path.
sim::Machine LoadMachineOrDefault(const std::string& file, std::string* used);

}  // namespace pas2p::synthesis
