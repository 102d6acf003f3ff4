// pas2p predict: the predicted run time at a target count (or a sweep of counts).
#include <cstdio>
#include <filesystem>
#include <memory>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"

namespace pas2p::cli {
namespace {

struct PredictCliOptions {
  std::vector<std::string> inputs;
  std::int64_t target = -1;  // -1: not given
  std::string machine;
  std::string sweep;
  double efficiency = 0.5;
  std::size_t sweep_points = 12;
  bool json = false;
  bool csv = false;
  bool allow_idle = false;
  bool allow_remainder = false;
  double bytes_tolerance = -1;  // < 0: pas2p chooses (synthesis::AnalyzeForModel)
  bool self_check = true;
  int threads = 0;
  int noise_replays = 4;
};

// The flags are checked before the traces are read (which may take minutes).
void RunPredict(const PredictCliOptions& o) {
  if (o.target == -1 && o.sweep.empty()) throw UserError("give --target N or --sweep A:B");
  if (o.target != -1 && !o.sweep.empty())
    throw UserError("give either --target N or --sweep A:B, not both");
  if (o.target == -1) {
    if (!(o.efficiency > 0 && o.efficiency <= 1)) throw UserError("--efficiency must be in (0, 1]");
    if (o.sweep_points < 2) throw UserError("--points must be at least 2 (the sweep's two ends)");
  } else if (o.target < 1) {
    throw UserError("--target must be a positive process count");
  }
  long long sweep_low = 0, sweep_high = 0;
  if (!o.sweep.empty()) {
    int used = 0;
    if (std::sscanf(o.sweep.c_str(), "%lld:%lld%n", &sweep_low, &sweep_high, &used) != 2 ||
        static_cast<std::size_t>(used) != o.sweep.size()) {
      throw UserError("--sweep " + o.sweep + ": expected A:B, e.g. --sweep 64:4096");
    }
  }
  if (o.noise_replays < 0) throw UserError("--noise-replays must be >= 0 (0: none)");
  std::string machine_path;
  const sim::Machine machine = synthesis::LoadMachineOrDefault(o.machine, &machine_path);
  // The model, and (from traces at >= 4 counts) the traces of the largest count for the
  // self-check.
  synthesis::AppModel model;
  std::vector<phases::Signature> sigs;
  std::unique_ptr<TraceSource> largest;
  if (synthesis::IsModelFile(o.inputs)) {
    model = synthesis::ModelFromArgs(o.inputs);
  } else {
    auto analyzed = synthesis::AnalyzeForModel(
        synthesis::ExpandTraceArgs(o.inputs), AnalyzeOptionsOf(o.bytes_tolerance),
        o.bytes_tolerance < 0, nullptr, o.allow_remainder, o.threads);
    const auto& inputs = analyzed.inputs;  // those the model is built from
    sigs = std::move(analyzed.signatures);
    model = std::move(analyzed.model);
    std::size_t top = 0;
    for (std::size_t i = 1; i < sigs.size(); ++i) {
      if (sigs[i].nprocs > sigs[top].nprocs) top = i;
    }
    if (o.self_check && o.sweep.empty() && !inputs.empty() && !inputs[top].path.empty()) {
      largest = OpenTrace(inputs[top].path);
    }
  }
  // What limits every prediction of this model (phases not followed across counts, calls
  // that are not modelled), on stderr so that --json output stays clean.
  for (const auto& w : model.warnings) std::fprintf(stderr, "pas2p: warning: %s\n", w.c_str());
  synthesis::PredictOptions po;
  po.allow_idle = o.allow_idle;
  po.allow_remainder = o.allow_remainder;
  po.threads = o.threads;
  po.noise_replays = o.noise_replays;
  if (!o.sweep.empty()) {
    const synthesis::Sweep sweep = synthesis::RunSweep(model, sweep_low, sweep_high, machine,
                                                       o.efficiency, o.sweep_points, po);
    if (o.json) {
      std::fputs(synthesis::SweepToJson(sweep).c_str(), stdout);
    } else if (o.csv) {
      // The table alone on stdout; what the text output says around it on stderr.
      std::fputs(synthesis::SweepToCsv(sweep).c_str(), stdout);
      for (const auto& n : sweep.notes) std::fprintf(stderr, "pas2p: note: %s\n", n.c_str());
      std::fprintf(stderr, "pas2p: rule: %s; recommended: %s\n", sweep.rule.c_str(),
                   sweep.recommended > 0 ? std::to_string(sweep.recommended).c_str() : "none");
    } else {
      std::printf("sweep of %s on %s (%s)\n", model.application.c_str(), machine.name.c_str(),
                  machine_path.c_str());
      std::fputs(synthesis::FormatSweep(sweep).c_str(), stdout);
    }
    return;
  }
  synthesis::Prediction p = synthesis::Predict(model, o.target, machine, po);
  synthesis::SelfCheck check;
  if (!o.self_check) {
    check.note = "--no-self-check";
  } else if (sigs.empty()) {
    check.note = "a saved model holds no traces to check against";
  } else {
    check = synthesis::CheckLargestCount(sigs, largest.get(), machine, po);
  }
  synthesis::WidenBySelfCheck(check, &p);
  if (o.json) {
    std::fputs(synthesis::PredictionToJson(p, machine.name).c_str(), stdout);
  } else if (o.csv) {
    std::fputs(synthesis::PredictionToCsv(p).c_str(), stdout);
  } else {
    std::printf("%s, traced at", model.application.c_str());
    for (int c : model.counts) std::printf(" %d", c);
    std::printf("; machine %s (%s)\n", machine.name.c_str(), machine_path.c_str());
    std::fputs(synthesis::FormatPrediction(p, machine.name).c_str(), stdout);
  }
}

void SetupPredict(CLI::App& root) {
  auto o = std::make_shared<PredictCliOptions>();
  CLI::App* cmd =
      root.add_subcommand("predict", "Predict the run time at a process count you have not run");
  cmd->footer(
      "Builds the scaling model from the traces (or reads a model file), synthesizes the run\n"
      "at --target N and simulates it on the machine (default: the shipped\n"
      "datasets/machines/default.toml; $PAS2P_DATA_DIR overrides the datasets directory).\n"
      "Prints the predicted time with an interval (the regressions' interval ends simulated;\n"
      "for a run of at most 2 million events, --noise-replays more replays with the compute\n"
      "noise drawn anew, default 4; widened by the self-check), the self-check (from traces\n"
      "at >= 4 counts: the model of\n"
      "all but the largest count predicts the largest, compared with the simulation of its\n"
      "trace as `pas2p validate` does, and that trace simulated 4 more times with its\n"
      "compute noise shuffled in time; the interval is at least +- the larger of that\n"
      "error and half the range of the shuffled times over their mean),\n"
      "the run on a quiet machine (with a full replay: the same run without the compute\n"
      "noise that varies in time, each rank's bursts at their mean and only the ranks'\n"
      "lasting differences kept; the difference is what the traced machine's noise costs\n"
      "at N, e.g. traces taken with more ranks than cores),\n"
      "the per-phase breakdown (weight at N, time of one occurrence, total, share; PAS2P's\n"
      "PET = sum of time x weight) and the valid-count check. A target the application cannot\n"
      "run at is an error naming the nearest valid counts; with --allow-idle the run is\n"
      "predicted at the largest valid count <= N with the other ranks idle. A call that\n"
      "carried data at the largest traced count but is predicted under one byte per partner\n"
      "at N (strong scaling has run out of problem to split) prints a warning; --json lists\n"
      "them in `limits`, and --sweep never recommends such a count. When more than half of\n"
      "the largest traced run is in phases the model leaves out (phases missing at some\n"
      "counts, communication no pattern family reproduces), predicting is an error unless\n"
      "--allow-remainder (the rest is then kept at its traced share, row 'rest'); so is a\n"
      "phase no model fits that takes more than 20% of a traced run, which --allow-remainder\n"
      "leaves out too (pas2p model --allow-remainder).\n"
      "--json prints {target, run_count, predicted_time_s, interval_s: [low, high], phases:\n"
      "[{phase, description, weight, time_per_occurrence_s, total_s, share}], self_check:\n"
      "{done, count, training_counts, predicted_s, real_simulated_s, error} or {done: false,\n"
      "note}, quiet_time_s (null without a full replay), model_warnings: [the model's warnings, "
      "also on stderr], ...}.\n"
      "--sweep A:B predicts every valid count in A..B (a log-spaced subset of at most\n"
      "--points counts, each the count an allocation would ask for near its spot: whole\n"
      "nodes of the machine file, else a count with small prime factors), with speedup,\n"
      "parallel efficiency and core-hours relative to the first, and recommends the largest\n"
      "count whose efficiency stays >= --efficiency (and, if it differs, the count the same\n"
      "rule picks on each count's quiet time).\n"
      "--threads N runs up to N of the prediction's simulations at once (0, the default: the\n"
      "hardware threads, up to 4), each with its own per-rank state (about 2 GiB at a\n"
      "million ranks); it also bounds the traces analyzed and the model's phases built at\n"
      "once. The prediction is the same whatever N.\n"
      "--csv prints the same as one CSV table, a header line and a line per count (one for\n"
      "--target): processes, time_s, interval_low_s, interval_high_s (a sweep predicts\n"
      "without intervals: empty), quiet_time_s, speedup, efficiency (empty for --target),\n"
      "core_hours, load_balance, communication_efficiency, beyond_problem (1: the problem is\n"
      "too small to split there), recommended (1 on the recommended count); the rule and\n"
      "the notes go to stderr.\n"
      "Examples: pas2p predict --target 1024 datasets/traces/stencil2d\n"
      "          pas2p predict --sweep 64:4096 --json model.json\n"
      "          pas2p predict --sweep 64:4096 --csv datasets/traces/stencil2d > sweep.csv");
  cmd->add_option("inputs", o->inputs,
                  "Traces at >= 3 counts (or a directory of them), or a model file")
      ->required();
  cmd->add_option("-t,--target", o->target, "Process count to predict");
  cmd->add_option("-m,--machine", o->machine, "Machine file (TOML or Dimemas .cfg)");
  CLI::Option* sweep = cmd->add_option("--sweep", o->sweep, "Predict every valid count in A:B");
  cmd->add_option("--efficiency", o->efficiency,
                  "Sweep: recommend the largest count with at least this efficiency (default 0.5)")
      ->needs(sweep);
  cmd->add_option("--points", o->sweep_points, "Sweep: at most this many counts (default 12)")
      ->needs(sweep);
  AddThreadsOption(cmd, &o->threads, ", and simulations run,");
  cmd->add_option("--noise-replays", o->noise_replays,
                  "Replays with the compute noise drawn anew, held by the interval (runs of at "
                  "most 2 million events; default 4, 0: none)");
  CLI::Option* json = cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--csv", o->csv,
                "Print CSV (a header line, one line per count) for a spreadsheet or a plot")
      ->excludes(json);
  AddBytesToleranceOption(cmd, &o->bytes_tolerance);
  cmd->add_flag("!--no-self-check", o->self_check,
                "Do not check the model on the largest traced count (nor widen the interval)");
  cmd->add_flag("--allow-idle", o->allow_idle,
                "Predict an invalid target at the largest valid count below it, rest idle");
  cmd->add_flag("--allow-remainder", o->allow_remainder,
                "Predict even when most of the traced run is in phases the model leaves out, "
                "or a large phase fits no model (kept at their traced share; an error "
                "otherwise)");
  cmd->callback([o]() { RunPredict(*o); });
}

PAS2P_REGISTER_COMMAND(60, SetupPredict);

}  // namespace
}  // namespace pas2p::cli
