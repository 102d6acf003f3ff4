// pas2p validate: train on all but the largest traced count and check the prediction of it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/predict.h"

namespace pas2p::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> traces;
  std::string machine;
  std::string against;
  bool json = false;
  bool csv = false;
  int noise_draws = 8;
  bool self_check = true;
  bool allow_remainder = false;
  double bytes_tolerance = -1;  // < 0: pas2p chooses (synthesis::AnalyzeForModel)
  int threads = 0;
};

// The self-check of the training runs (the largest of `sigs` except `skip`, predicted from
// the others), as `pas2p predict` makes it.
synthesis::SelfCheck TrainingSelfCheck(const std::vector<synthesis::TraceInput>& inputs,
                                       const std::vector<phases::Signature>& sigs, std::size_t skip,
                                       const sim::Machine& machine,
                                       const synthesis::PredictOptions& options) {
  std::vector<phases::Signature> training;
  std::size_t top = inputs.size();
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    if (i == skip) continue;
    training.push_back(sigs[i]);
    if (top == inputs.size() || sigs[i].nprocs > sigs[top].nprocs) top = i;
  }
  std::unique_ptr<TraceSource> largest;
  if (top < inputs.size() && !inputs[top].path.empty()) largest = OpenTrace(inputs[top].path);
  return synthesis::CheckLargestCount(training, largest.get(), machine, options);
}

void RunValidate(const ValidateOptions& o) {
  std::string machine_path;
  const sim::Machine machine = synthesis::LoadMachineOrDefault(o.machine, &machine_path);
  // Analyzed as `predict` does (the model of every count must build), so that validate checks
  // the phases predict works from; the held-out run is analyzed the same way.
  const auto given = synthesis::ExpandTraceArgs(o.traces);
  const phases::AnalyzeOptions analyze = AnalyzeOptionsOf(o.bytes_tolerance);
  const auto analyzed = [&] {
    try {
      return synthesis::AnalyzeForModel(given, analyze, o.bytes_tolerance < 0, nullptr,
                                        o.allow_remainder, o.threads);
    } catch (const UserError& e) {
      if (!o.against.empty()) throw;
      // The error may name the largest count, which leave-largest-out does not train on.
      throw UserError(std::string("validate analyzes every given count as predict does, the "
                                  "largest too (it then trains without it), and that failed: ") +
                      e.what());
    }
  }();
  const auto& inputs = analyzed.inputs;  // those the model is built from
  const auto& sigs = analyzed.signatures;
  const std::string app = sigs.empty() ? "" : sigs.front().application;
  synthesis::PredictOptions options;
  options.noise_draws = o.noise_draws;
  options.allow_remainder = o.allow_remainder;
  options.threads = o.threads;
  // What limits the check, as `predict` prints its model's warnings: calls that are not
  // modelled, and traces (the held-out one too) taken with more ranks than cores, whose
  // compute was measured under contention. On stderr so that --json output stays clean.
  for (const auto& s : sigs) {
    for (const auto& w : s.warnings) {
      if (w.starts_with(phases::kUntracedCallsWarning) ||
          w.starts_with(phases::kOversubscribedWarning)) {
        std::fprintf(stderr, "pas2p: warning: at %d processes, %s\n", s.nprocs, w.c_str());
      }
    }
  }
  auto print = [&](synthesis::Validation v) {
    // How the traces were analyzed is part of what the check checked (JSON: model_warnings).
    if (!analyzed.note.empty()) v.model_warnings.insert(v.model_warnings.begin(), analyzed.note);
    if (o.json) {
      std::fputs(synthesis::ValidationToJson(v, app).c_str(), stdout);
    } else if (o.csv) {
      std::fputs(synthesis::ValidationToCsv(v, app).c_str(), stdout);
    } else {
      std::fputs(synthesis::FormatValidation(v, app).c_str(), stdout);
      std::printf("  machine: %s (%s)\n", machine.name.c_str(), machine_path.c_str());
    }
  };
  if (!o.against.empty()) {
    const auto held = synthesis::ExpandTraceArgs({o.against});
    if (held.size() != 1 || held.front().path.empty()) {
      throw UserError("--against " + o.against +
                      ": expected the trace of one run (a trace directory or SimGrid TI trace), "
                      "got " +
                      std::to_string(held.size()) + " inputs");
    }
    for (const auto& in : given) {
      std::error_code ec;
      if (!in.path.empty() && std::filesystem::equivalent(in.path, held.front().path, ec)) {
        throw UserError("--against " + o.against +
                        " is also a training trace: the held-out run must not be trained on");
      }
    }
    auto real = OpenTrace(held.front().path);
    if (const std::string w = phases::OversubscriptionWarning(real->metadata()); !w.empty()) {
      std::fprintf(stderr, "pas2p: warning: at %d processes (the held-out run), %s\n",
                   real->nprocs(), w.c_str());
    }
    synthesis::Validation v =
        synthesis::ValidateAgainst(sigs, *real, machine, options, analyzed.options);
    if (o.self_check) {
      synthesis::WidenBySelfCheck(TrainingSelfCheck(inputs, sigs, sigs.size(), machine, options),
                                  &v);
    }
    print(v);
    return;
  }
  // The real trace of the largest count.
  std::size_t largest = 0;
  for (std::size_t i = 1; i < sigs.size(); ++i) {
    if (sigs[i].nprocs > sigs[largest].nprocs) largest = i;
  }
  if (inputs.empty() || inputs[largest].path.empty()) {
    throw UserError("validation needs the trace of the largest count, not only its signature");
  }
  auto real = OpenTrace(inputs[largest].path);
  synthesis::Validation v = synthesis::Validate(sigs, *real, machine, options);
  if (o.self_check) {
    synthesis::WidenBySelfCheck(TrainingSelfCheck(inputs, sigs, largest, machine, options), &v);
  }
  print(v);
}

void SetupValidate(CLI::App& root) {
  auto o = std::make_shared<ValidateOptions>();
  CLI::App* cmd = root.add_subcommand(
      "validate", "Check predictions: train on smaller counts, predict the largest");
  cmd->footer(
      "Fits the model on every traced count but the largest, predicts the largest and\n"
      "compares with its real trace:\n"
      "  pattern_match  share of the real point-to-point messages whose predicted peer is\n"
      "                 exactly right (the i-th send of each rank compared). A self-\n"
      "                 scheduled master (it replies to whichever worker answered its\n"
      "                 MPI_ANY_SOURCE receive) sends to partners that depend on the timing:\n"
      "                 its sends count as right up to the number of messages each partner\n"
      "                 gets in both runs (destinations as a multiset, order ignored), and\n"
      "                 are also reported apart (scheduled_messages, scheduled_match),\n"
      "                 with the real workers' CPU in total and of the busiest one\n"
      "                 (workers_cpu_s, busiest_worker_cpu_s). Against the rescheduled\n"
      "                 replay (see time_error) when there is one, else the trace as it is\n"
      "                 (scheduled_match_traced_assignment: always against the trace),\n"
      "                 and how well the rescheduled real trace matches itself when only its\n"
      "                 compute noise is shuffled (scheduled_match_floor, \"peers floor\":\n"
      "                 what the timing noise alone leaves of the partners);\n"
      "  collective_match  share of the real collective calls (collective_calls; the i-th\n"
      "                 of each rank compared) that the prediction makes as the same\n"
      "                 collective on a communicator with the same members and root;\n"
      "  bytes_error    |predicted - real| / real of the bytes sent (messages + collectives);\n"
      "  compute_error  the same for the CPU time of the compute bursts;\n"
      "  time_error     predicted time vs the simulation of the real trace on the same machine.\n"
      "                 For a self-scheduled run that is the real trace *rescheduled*: its\n"
      "                 tasks (the master's message to a worker and that worker's compute and\n"
      "                 result sends up to its next receive from the master), in the master's\n"
      "                 traced order, handed to whichever worker answers first in the\n"
      "                 simulation (`pas2p simulate --reschedule`), as the simulated machine\n"
      "                 would run it. A plain replay keeps which worker ran which task in the\n"
      "                 traced run, which the OS decided there (on an oversubscribed machine\n"
      "                 a few workers run most tasks); its figure is printed below\n"
      "                 time_error (\"traced assignment\") and in --json as\n"
      "                 time_error_traced_assignment and real_simulated_traced_assignment_s,\n"
      "                 with rescheduled, rescheduled_tasks, rescheduled_busiest_worker_cpu_s\n"
      "                 and reschedule_note (why a self-scheduled run was not rescheduled:\n"
      "                 its shape; then every figure is against the plain replay). The\n"
      "                 interval check and the noise floor use the same reference.\n"
      "                 When the model fits a law to its remainder (phases it leaves out\n"
      "                 that every count has; `pas2p model` prints it), \"remainder's law\"\n"
      "                 below time_error is the error with that law instead of the kept\n"
      "                 share (--json: time_error_remainder_law,\n"
      "                 predicted_time_remainder_law_s; null without a law);\n"
      "  interval_s     the prediction's interval [low, high] as `predict` prints it: widened\n"
      "                 to at least +-|error| of the training runs' own self-check (their\n"
      "                 largest count predicted from the others; needs 4 training counts;\n"
      "                 --no-self-check leaves it out) and +- half the range of that\n"
      "                 count's time with its compute noise shuffled (4 draws), and\n"
      "  in_interval    whether the simulated real trace lies in it;\n"
      "  noise_floor    how close any model of the compute noise could come: every compute\n"
      "                 burst of the real trace is split into the rank's mean (per call it\n"
      "                 precedes) x the occurrence's factor shared by all ranks x a residual\n"
      "                 of its own; each rank's residuals are shuffled in time (--noise-draws\n"
      "                 times, fixed seeds) and the shuffled traces simulated on the same\n"
      "                 machine. noise_floor = |their mean - simulated real| / simulated real:\n"
      "                 the error of a model that knew the traced noise exactly but draws\n"
      "                 it independently from one burst to the next, as pas2p's synthesis\n"
      "                 does. A time_error near noise_floor is as good as such a model can\n"
      "                 get; a large floor says the real run's noise was correlated in time\n"
      "                 (a rank slow for several iterations in a row). noise_time_s is\n"
      "                 [lowest, highest] of the draws.\n"
      "  quiet_error    both runs on a quiet machine: predict's quiet replay against the real\n"
      "                 trace with each rank's bursts at their mean (the split above without\n"
      "                 the occurrence's factor and the residual; of the ranks' differences\n"
      "                 only what their own noise does not explain); predicted_quiet_s,\n"
      "                 real_quiet_s (null without noise draws or a full replay).\n"
      "--json prints those keys (fractions, 0.01 = 1%) and the totals behind them, and\n"
      "model_warnings: what the trained model warns about (also printed as \"warning:\").\n"
      "--csv prints a header line and one line, to concatenate several checks into one\n"
      "table: application, count, training_counts (space-separated), held_out_trace,\n"
      "pattern_match, collective_match, bytes_error, compute_error, time_error,\n"
      "noise_floor, quiet_error (empty where not measured), predicted_time_s,\n"
      "real_simulated_time_s, interval_low_s, interval_high_s, in_interval (1 or 0).\n"
      "Needs at least 4 counts. Example: pas2p validate datasets/traces/stencil2d\n"
      "\n"
      "Held-out check: --against TRACE trains on EVERY given trace (>= 3 counts) and\n"
      "predicts the count of TRACE, a real run at a larger count that was not trained on\n"
      "(same keys; \"held_out_trace\" names it). Example:\n"
      "  pas2p validate --against datasets/heldout/stencil2d/stencil2d.49 "
      "datasets/traces/stencil2d\n"
      "Exit status 0 when the check ran (whatever the errors), 1 on bad input.");
  cmd->add_option("traces", o->traces,
                  "Traces at >= 4 counts, or >= 3 with --against (or a directory of them)")
      ->required();
  cmd->add_option("--against", o->against,
                  "A run at a larger count, not trained on: train on all TRACES and predict it");
  cmd->add_option("-m,--machine", o->machine, "Machine file (default: the shipped default)");
  CLI::Option* json = cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_flag("--csv", o->csv,
                "Print CSV: a header line and one line, to concatenate several checks into one "
                "table (columns below)")
      ->excludes(json);
  AddBytesToleranceOption(cmd, &o->bytes_tolerance);
  AddThreadsOption(cmd, &o->threads, ", and simulations run,");
  cmd->add_flag("!--no-self-check", o->self_check,
                "Do not widen the interval by the training runs' self-check");
  cmd->add_flag("--allow-remainder", o->allow_remainder,
                "Validate even when most of the training runs are in phases the model leaves "
                "out, or a large phase fits no model (an error otherwise)");
  cmd->add_option("--noise-draws", o->noise_draws,
                  "Simulations of the real trace with its noise shuffled, for noise_floor "
                  "(0 = skip)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->callback([o]() { RunValidate(*o); });
}

PAS2P_REGISTER_COMMAND(65, SetupValidate);

}  // namespace
}  // namespace pas2p::cli
