// pas2p analyze: the signature of traced runs (phases, weights, PET) and, with traces at
// several process counts, which phases correspond. Wiring only: the analysis lives in
// pas2p/phases/analyze.h and pas2p/phases/correspondence.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "pas2p/phases/signature.h"

namespace pas2p::cli {
namespace {

struct AnalyzeCliOptions {
  std::vector<std::string> traces;
  bool json = false;
  std::string out;
  phases::AnalyzeOptions analyze;
};

nlohmann::ordered_json Summary(const phases::Signature& sig) {
  nlohmann::ordered_json j;
  j["trace"] = sig.trace;
  j["application"] = sig.application;
  j["nprocs"] = sig.nprocs;
  j["traced_time_s"] = sig.traced_time_s;
  j["pet_s"] = sig.pet_s;
  j["pet_relevant_s"] = sig.pet_relevant_s;
  j["pet_error"] = sig.pet_error;
  j["coverage"] = sig.coverage;
  j["cut"] = sig.cut;
  j["warnings"] = sig.warnings;
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const phases::Phase& p : sig.phases) {
    phases.push_back({{"id", p.id},
                      {"weight", p.weight},
                      {"time_s", p.time_s},
                      {"total_time_s", p.total_time_s},
                      {"share", p.share},
                      {"relevant", p.relevant},
                      {"first_step", p.first_step},
                      {"description", p.description}});
  }
  j["phases"] = phases;
  j["sequence"] = nlohmann::ordered_json::parse(phases::SequenceToJsonText(sig.sequence));
  return j;
}

std::filesystem::path OutputPath(const AnalyzeCliOptions& o, const phases::Signature& sig) {
  if (o.traces.size() == 1) return o.out;
  std::filesystem::path dir(o.out);
  std::filesystem::create_directories(dir);
  std::string name = sig.application.empty() ? "trace" : sig.application;
  return dir / (name + "." + std::to_string(sig.nprocs) + ".signature.json");
}

void RunAnalyze(const AnalyzeCliOptions& o) {
  std::string error;
  if (!o.analyze.IsValid(&error)) throw UserError(error);
  if (o.traces.size() > 1 && !o.out.empty() && std::filesystem::exists(o.out) &&
      !std::filesystem::is_directory(o.out)) {
    throw UserError("--out " + o.out +
                    ": with several traces, --out names a directory (one signature file per "
                    "trace), but it is a file");
  }
  std::vector<phases::Signature> sigs;
  for (const std::string& path : o.traces) {
    std::unique_ptr<TraceSource> trace = OpenTrace(path);
    sigs.push_back(phases::AnalyzeTrace(*trace, o.analyze));
    if (!o.out.empty()) phases::SaveSignature(sigs.back(), OutputPath(o, sigs.back()));
  }
  // By process count, as every other command orders counts (a glob gives 16, 32, 4, 8).
  std::stable_sort(sigs.begin(), sigs.end(),
                   [](const auto& a, const auto& b) { return a.nprocs < b.nprocs; });
  std::optional<phases::Correspondence> corr;
  if (sigs.size() > 1) corr = phases::CorrespondPhases(sigs);

  if (o.json) {
    nlohmann::ordered_json j;
    if (sigs.size() == 1) {
      j = Summary(sigs.front());
    } else {
      nlohmann::ordered_json runs = nlohmann::ordered_json::array();
      for (const auto& s : sigs) runs.push_back(Summary(s));
      // The first run's fields at the top level too, so one-trace readers still work.
      j = Summary(sigs.front());
      j["runs"] = runs;
      nlohmann::ordered_json groups = nlohmann::ordered_json::array();
      for (const auto& g : corr->groups) {
        groups.push_back({{"key", g.key},
                          {"phase_ids", g.phase_ids},
                          {"weights", g.weights},
                          {"relevant", g.relevant},
                          {"complete", g.complete}});
      }
      j["correspondence"] = {
          {"nprocs", corr->nprocs}, {"groups", groups}, {"warnings", corr->warnings}};
    }
    std::cout << j.dump(1) << "\n";
    return;
  }
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    if (i > 0) std::cout << "\n";
    std::cout << phases::FormatSignatureTable(sigs[i]);
  }
  if (corr) std::cout << "\n" << phases::FormatCorrespondence(*corr);
  if (!o.out.empty()) {
    std::cout << "\nsignature" << (sigs.size() > 1 ? "s" : "") << " written to " << o.out << "\n";
  }
}

void SetupAnalyze(CLI::App& root) {
  auto o = std::make_shared<AnalyzeCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "analyze", "Find the phases of traced runs: weights, time, PET (the PAS2P signature)");
  cmd->footer(
      "Reads each trace (a trace directory or a SimGrid TI trace), gives every event a logical\n"
      "time (Lamport clock over all ranks), finds the sequences of MPI calls that repeat with\n"
      "the same communication and similar compute (nested loops too) and prints one table per\n"
      "trace:\n"
      "  id         phase number, in the order of first occurrence\n"
      "  weight     how many times the phase occurs in the run\n"
      "  time/occ   wall time of one occurrence, in ms, on the run's global clock (ranks\n"
      "             aligned on collectives that every rank calls; each top-level loop or\n"
      "             run of calls lasts until its slowest rank leaves it, so the phases\n"
      "             partition the run and PET reproduces the traced time)\n"
      "  share      share of the run's time spent in the phase\n"
      "  rel        * = relevant: the largest phases that together cover --threshold of the run\n"
      "  cpu/burst  mean CPU time of the compute bursts before each call, in microseconds\n"
      "  communication  what one occurrence does, per rank (e.g. '4 isends to grid\n"
      "             neighbours (4 x 4, periodic)', '1 allreduce (8 B)')\n"
      "and the PET (sum of time x weight over the phases; over the relevant ones only in\n"
      "pet_relevant_s) against the traced time. The line 'run' gives the order in which the run\n"
      "executes the phases, with its loops: '0, (1 x10, 2) x5, 3' is phase 0, then 5 times\n"
      "(phase 1 ten times, then phase 2), then phase 3; a count that differs between the\n"
      "iterations of the loop around it shows as its mean ('x8.5'). It is one rank's order\n"
      "(the reference rank of the phase alignment, see pas2p/phases/signature.h).\n"
      "With several traces of one application (e.g. traces/app/app.*), it also says which\n"
      "phases correspond across the process counts (same operations, in run order).\n"
      "--json prints one object: trace, application, nprocs, traced_time_s, pet_s, pet_error,\n"
      "coverage, warnings, phases [{id, weight, time_s, total_time_s, share, relevant,\n"
      "first_step, description}], sequence (the run's order: [phase id, repetitions] or\n"
      "{loop, body}, see signature.h); with several traces also runs [...] and correspondence\n"
      "{nprocs, groups [{key, phase_ids, weights, relevant, complete}]}.\n"
      "--out writes the full signature (JSON, format in pas2p/phases/signature.h) that\n"
      "`pas2p model` and `pas2p predict` read. Exit status 1 when the ranks' streams disagree.");
  cmd->add_option("traces", o->traces, "Trace directories (or SimGrid TI traces)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--json", o->json, "Print one JSON object instead of tables");
  cmd->add_option("--out", o->out,
                  "Write the signature to this file (with several traces: to this directory, "
                  "one APP.P.signature.json per trace)");
  cmd->add_option("--threshold", o->analyze.relevance_threshold,
                  "Share of the run the relevant phases must cover")
      ->capture_default_str();
  cmd->add_option("--similarity", o->analyze.similarity,
                  "Largest relative difference of compute per occurrence between two separate "
                  "runs of one structure that are still one phase (a single run of a loop's calls, "
                  "e.g. a warm-up iteration, is compared on its bursts after the first, which "
                  "holds the set-up before it, and joins the loop unless that changes the loop's "
                  "compute per occurrence by more)")
      ->capture_default_str();
  cmd->add_option("--loop-compute-similarity", o->analyze.loop_compute_similarity,
                  "If > 0, a loop iteration whose compute differs from the loop's by more than "
                  "this fraction ends the loop (0: loops are found on structure only)")
      ->capture_default_str();
  cmd->add_option("--compute-floor-ns", o->analyze.compute_floor_ns,
                  "Compute differences below this many ns always match (timer noise)")
      ->capture_default_str();
  cmd->add_option("--bytes-tolerance", o->analyze.bytes_tolerance,
                  "If > 0, a loop iteration whose message sizes differ from the loop's by "
                  "more than this fraction (and --bytes-floor) ends the loop (0: sizes are "
                  "statistics of the calls, loops are found on structure only)")
      ->capture_default_str();
  cmd->add_option("--bytes-floor", o->analyze.bytes_floor,
                  "With --bytes-tolerance > 0: message sizes that differ by at most this "
                  "many bytes always match")
      ->capture_default_str();
  cmd->add_option("--window", o->analyze.window,
                  "Longest loop body searched, in calls of one nesting level")
      ->capture_default_str();
  cmd->callback([o]() { RunAnalyze(*o); });
}

}  // namespace

PAS2P_REGISTER_COMMAND(20, SetupAnalyze);

}  // namespace pas2p::cli
