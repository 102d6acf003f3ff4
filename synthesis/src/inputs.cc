#include "pas2p/synthesis/inputs.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>

#include "pas2p/core/error.h"
#include "pas2p/core/parallel.h"
#include "pas2p/core/simgrid_ti.h"
#include "pas2p/core/trace.h"
#include "pas2p/simulator/machine_file.h"

#ifndef PAS2P_SOURCE_DIR_FALLBACK
#define PAS2P_SOURCE_DIR_FALLBACK ""
#endif

namespace pas2p::synthesis {

namespace fs = std::filesystem;

namespace {

bool IsTraceDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::exists(p / kMetadataFileName, ec);
}

bool IsSignatureFile(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  std::ifstream in(p);
  std::string head(256, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("pas2p-signature") != std::string::npos;
}

// An error's headline: its first line, without a last sentence that introduces the details
// on the next lines ("... cannot be extrapolated. Traced:").
std::string Headline(const std::string& what) {
  std::string line = what.substr(0, what.find('\n'));
  if (!line.empty() && line.back() == ':') {
    if (const auto stop = line.rfind(". "); stop != std::string::npos) line.resize(stop + 1);
  }
  return line;
}

// Empty when every signature's run has one shape (phases::SequenceShape); else what differs,
// in words: "at 27, 36: 18 phases in 31 runs; at 48: 17 phases in 31 runs".
std::string ShapesDiffer(const std::vector<phases::Signature>& sigs) {
  std::map<std::vector<int>, std::vector<int>> counts_of;  // shape -> counts
  std::vector<const std::vector<int>*> order;
  for (const phases::Signature& s : sigs) {
    auto [it, added] = counts_of.try_emplace(phases::SequenceShape(s.sequence));
    it->second.push_back(s.nprocs);
    if (added) order.push_back(&it->first);
  }
  if (counts_of.size() < 2) return "";
  std::string out;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::vector<int>& shape = *order[i];
    const std::vector<int>& counts = counts_of[shape];
    const int phases = shape.empty() ? 0 : *std::max_element(shape.begin(), shape.end()) + 1;
    out += i ? "; at " : "at ";
    for (std::size_t k = 0; k < counts.size(); ++k) {
      out += (k ? ", " : "") + std::to_string(counts[k]);
    }
    out += ": " + std::to_string(phases) + " phases in " + std::to_string(shape.size()) + " runs";
  }
  return out;
}

// 0.3 -> "30%", 0.05 -> "5%".
std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", std::round(fraction * 1000) / 10);
  return buf;
}
std::string JoinInts(const std::vector<int>& v) {
  std::string out;
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
  return out;
}
std::string Number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

std::string JoinNprocs(const std::vector<phases::Signature>& sigs,
                       const std::vector<std::size_t>& idx) {
  std::string out;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    out += (k ? ", " : "") + std::to_string(sigs[idx[k]].nprocs);
  }
  return out;
}

}  // namespace

std::vector<TraceInput> ExpandTraceArgs(const std::vector<std::string>& args) {
  std::vector<TraceInput> out;
  for (const std::string& arg : args) {
    const fs::path p(arg);
    std::error_code ec;
    if (!fs::exists(p, ec)) throw UserError(arg + ": no such file or directory");
    if (IsTraceDir(p) || IsSimgridTi(p)) {
      out.push_back(TraceInput{p, {}});
    } else if (IsSignatureFile(p)) {
      out.push_back(TraceInput{{}, p});
    } else if (fs::is_directory(p, ec)) {
      std::vector<fs::path> subs;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        if (IsTraceDir(entry.path())) subs.push_back(entry.path());
      }
      if (subs.empty()) {
        throw UserError(arg + ": neither a trace (no " + kMetadataFileName +
                        "), a SimGrid TI trace, a signature file, nor a directory of traces");
      }
      std::sort(subs.begin(), subs.end());
      for (const auto& s : subs) out.push_back(TraceInput{s, {}});
    } else {
      throw UserError(arg +
                      ": neither a trace directory, a SimGrid TI trace nor a signature "
                      "file (pas2p-signature JSON)");
    }
  }
  return out;
}

namespace {

// The signatures of the inputs under each of `analyses`, [analysis][input]: every input is
// read and analyzed under every analysis on a few threads (one trace's analyses together, see
// phases::AnalyzeTraceUnder), and what they give (or throw) is taken in that order, as if one
// after another.
std::vector<std::vector<phases::Signature>> LoadSignaturesEach(
    const std::vector<TraceInput>& inputs, const std::vector<phases::AnalyzeOptions>& analyses,
    std::vector<std::string>* progress, int threads) {
  const std::size_t n = inputs.size();
  const int workers = threads > 0 ? threads : DefaultThreads();
  // The inputs at once, and with several analyses each input's analyses at once too: the
  // inputs' sizes differ too much to share the threads well alone (PETSc multigrid's 8 to 27
  // ranks), and their analyses wait for the input's one pass over its trace.
  std::vector<Outcome<std::vector<phases::Signature>>> done =
      RunInParallel<std::vector<phases::Signature>>(n, workers, [&](std::size_t i) {
        const TraceInput& in = inputs[i];
        if (!in.signature_file.empty()) {
          return std::vector<phases::Signature>(analyses.size(),
                                                phases::LoadSignature(in.signature_file));
        }
        auto trace = OpenTrace(in.path);
        return phases::AnalyzeTraceUnder(*trace, analyses, analyses.size() == 1 ? 1 : workers);
      });
  std::vector<std::vector<phases::Signature>> out(analyses.size());
  for (std::size_t k = 0; k < n * analyses.size(); ++k) {
    const TraceInput& in = inputs[k % n];
    std::vector<phases::Signature>& sigs = out[k / n];
    sigs.push_back(std::move(done[k % n].Get()[k / n]));
    if (progress) {
      progress->push_back(in.signature_file.empty() ? "analyzed " + in.path.string()
                                                    : "loaded " + in.signature_file.string());
    }
    // A run cut short (a truncated file, a run that failed or was killed) holds only what
    // came before the cut: its phases would not match the other counts', and a model left
    // to drop it would say so only as a count "of another shape".
    const phases::Signature& sig = sigs.back();
    if (sig.cut) {
      std::string why;
      for (const std::string& w : sig.warnings) {
        if (w.starts_with("the trace is cut") || w.starts_with("the trace metadata says")) {
          why = w;
          break;
        }
      }
      const std::string where =
          in.signature_file.empty() ? in.path.string() : in.signature_file.string();
      throw TraceError(where + ": the run at " + std::to_string(sig.nprocs) +
                       " processes is not complete" + (why.empty() ? "" : ": " + why) +
                       ". A model needs every count's whole run: trace that count again, or "
                       "leave it out");
    }
  }
  return out;
}

}  // namespace

std::vector<phases::Signature> LoadSignatures(const std::vector<TraceInput>& inputs,
                                              const phases::AnalyzeOptions& options,
                                              std::vector<std::string>* progress, int threads) {
  return std::move(LoadSignaturesEach(inputs, {options}, progress, threads).front());
}

namespace {

// Is `error` the one BuildModel throws when no phase occurs at every count?
bool IsCorrespondenceError(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const PhasesDoNotCorrespond&) {
    return true;
  } catch (...) {
    return false;
  }
}

// `done` with its note (why it was analyzed as it was) first among its model's warnings.
ModelInputs Noted(ModelInputs done) {
  if (!done.note.empty()) done.model.warnings.insert(done.model.warnings.begin(), done.note);
  return done;
}

// The model of `out`'s signatures with `base` (AnalyzeForModel's last step): every count
// first, with loops found on the calls, then with sizes ending them (`choose_loop_sizes`);
// only when neither builds, the largest counts whose phases correspond (BuildModel's
// fallback). `first`, when given, is the first of these, already tried.
ModelInputs BuildForInputs(ModelInputs out, bool choose_loop_sizes,
                           std::vector<std::string>* progress, const ModelOptions& base,
                           const ModelAttempt* first = nullptr) {
  bool all_traces = true;
  for (const TraceInput& in : out.inputs) all_traces = all_traces && in.signature_file.empty();
  ModelOptions every_count = base;
  every_count.drop_smallest_counts = false;
  std::exception_ptr first_error;
  if (first) {
    if (first->model) {
      out.model = *first->model;
      return Noted(std::move(out));
    }
    first_error = first->error;
  } else {
    try {
      out.model = BuildModel(out.signatures, every_count);
      return Noted(std::move(out));
    } catch (const UserError&) {
      first_error = std::current_exception();
    }
  }
  const std::string first_what = WhatOf(first_error);
  std::string sized_failure;
  if (choose_loop_sizes && all_traces && out.options.bytes_tolerance <= 0) {
    phases::AnalyzeOptions sized = out.options;
    sized.bytes_tolerance = kSizesEndLoopsTolerance;
    char tolerance[32];
    std::snprintf(tolerance, sizeof tolerance, "%g", kSizesEndLoopsTolerance);
    try {
      std::vector<phases::Signature> sigs =
          LoadSignatures(out.inputs, sized, progress, base.threads);
      AppModel model = BuildModel(sigs, every_count);
      out.note = (out.note.empty() ? "" : out.note + "; ") +
                 "the phases were found with message sizes ending loops (" + "--bytes-tolerance " +
                 tolerance + "): with loops found on the calls alone no model builds (" +
                 Headline(first_what) + ")";
      out.options = sized;
      out.signatures = std::move(sigs);
      out.model = std::move(model);
      return Noted(std::move(out));
    } catch (const UserError& second) {
      // Said only when it fails for another reason (not for too few counts, say, which no
      // analysis changes).
      if (Headline(second.what()) != Headline(first_what)) {
        sized_failure = std::string("\n(analyzed again with message sizes ending loops, ") +
                        "--bytes-tolerance " + tolerance +
                        ", no model builds either: " + Headline(second.what()) + ")";
      }
    }
  }
  // The first analysis from its largest counts (its warning names the counts left out), which
  // differs from the first try only when that found no phase that every count has.
  std::string last = first_what;
  if (IsCorrespondenceError(first_error)) {
    try {
      out.model = BuildModel(out.signatures, base);
      return Noted(std::move(out));
    } catch (const UserError& e) {
      last = e.what();
    }
  }
  throw UserError(last + sized_failure);
}

}  // namespace

ModelInputs AnalyzeForModel(const std::vector<TraceInput>& inputs,
                            const phases::AnalyzeOptions& options, bool choose_loop_sizes,
                            std::vector<std::string>* progress, bool allow_remainder, int threads) {
  ModelInputs out;
  out.options = options;
  out.inputs = inputs;
  out.signatures = LoadSignatures(inputs, options, progress, threads);
  bool all_traces = true;
  for (const TraceInput& in : inputs) all_traces = all_traces && in.signature_file.empty();
  // Runs of one structure at different places of the run (a reduction in the set-up and the
  // same reduction every step) are one phase when their compute is similar; a code does not
  // change its phases with P, but that comparison can come out differently at each count
  // (the set-up's share shrinks with P, a burst sits near the threshold), and the phases then
  // do not correspond. When the runs differ in shape across counts, the traces are analyzed
  // again with other similarities (kSimilarityLadder), and each count takes the first of
  // them that gives it the shape most counts can have.
  if (all_traces && options.similarity > 0 && out.signatures.size() > 1) {
    if (const std::string differs = ShapesDiffer(out.signatures); !differs.empty()) {
      const std::size_t n = out.signatures.size();
      std::vector<phases::AnalyzeOptions> tried = {options};
      std::vector<std::vector<phases::Signature>> sigs;  // [analysis][input]
      sigs.push_back(std::move(out.signatures));
      std::vector<double> ladder;
      for (const double f : kSimilarityLadder) ladder.push_back(options.similarity * f);
      for (const double f : kMergingLadder) {
        const double sim = f > 0 ? options.similarity * f : 1.0;
        if (sim > options.similarity && sim <= 1.0 &&
            std::find(ladder.begin(), ladder.end(), sim) == ladder.end()) {
          ladder.push_back(sim);
        }
      }
      for (const double sim : ladder) {
        tried.push_back(options);
        tried.back().similarity = sim;
      }
      std::vector<std::vector<phases::Signature>> again = LoadSignaturesEach(
          inputs, std::vector<phases::AnalyzeOptions>(tried.begin() + 1, tried.end()), progress,
          threads);
      for (auto& a : again) sigs.push_back(std::move(a));
      // Each shape: for each input, the first analysis that gives it (or none).
      std::map<std::vector<int>, std::vector<int>> first_with;
      std::vector<const std::vector<int>*> order;  // shapes in the order found
      for (std::size_t a = 0; a < sigs.size(); ++a) {
        for (std::size_t i = 0; i < n; ++i) {
          auto [it, added] = first_with.try_emplace(phases::SequenceShape(sigs[a][i].sequence),
                                                    std::vector<int>(n, -1));
          if (added) order.push_back(&it->first);
          if (it->second[i] < 0) it->second[i] = static_cast<int>(a);
        }
      }
      // The shape most inputs can have; ties: the one the largest count can have, then the
      // one found first.
      int largest = 0;
      for (const phases::Signature& sg : sigs.front()) largest = std::max(largest, sg.nprocs);
      const std::vector<int>* best = nullptr;
      std::size_t best_n = 0;
      bool best_largest = false;
      for (const std::vector<int>* shape : order) {
        const std::vector<int>& from = first_with[*shape];
        std::size_t k = 0;
        bool has_largest = false;
        for (std::size_t i = 0; i < n; ++i) {
          if (from[i] < 0) continue;
          ++k;
          has_largest = has_largest || sigs.front()[i].nprocs == largest;
        }
        if (!best || k > best_n || (k == best_n && has_largest && !best_largest)) {
          best = shape;
          best_n = k;
          best_largest = has_largest;
        }
      }
      const std::vector<int>& from = first_with[*best];
      std::vector<std::size_t> kept;
      std::map<int, std::vector<int>> counts_of;  // analysis -> counts it gave the shape to
      for (std::size_t i = 0; i < n; ++i) {
        if (from[i] < 0) continue;
        kept.push_back(i);
        counts_of[from[i]].push_back(sigs.front()[i].nprocs);
      }
      const auto how = [&](int a) {
        const double sim = tried[static_cast<std::size_t>(a)].similarity;
        if (sim == 0) return std::string("runs of one structure kept apart (--similarity 0)");
        if (sim >= 1.0) {
          return std::string(
              "runs of one structure merged whatever their compute (--similarity 1)");
        }
        return "runs of one structure merged when their compute is within " + Percent(sim) +
               " (--similarity " + Number(sim) + ")";
      };
      std::string used;  // "at 27: ...; at 36, 45: ..."
      for (const auto& [a, counts] : counts_of) {
        used +=
            std::string(used.empty() ? "" : "; ") + "at " + JoinInts(counts) + " with " + how(a);
      }
      // The largest count's analysis: the options the model says it was built with.
      int of_largest = from[kept.back()];
      for (std::size_t i : kept) {
        if (sigs.front()[i].nprocs == largest) of_largest = from[i];
      }
      // Each input's signature from the analysis that gave it the shape (the asked one where
      // none did); taken only where the shape is used below, as sigs.front() is then what
      // the too-few branch keeps.
      const auto take_chosen = [&] {
        out.options = tried[static_cast<std::size_t>(of_largest)];
        out.signatures.clear();
        for (std::size_t i = 0; i < n; ++i) {
          out.signatures.push_back(
              std::move(sigs[static_cast<std::size_t>(from[i] < 0 ? 0 : from[i])][i]));
        }
      };
      const std::string tried_text =
          "tried with --similarity 0, " + std::to_string(kSimilarityLadder.size() - 1) +
          " values between and " + std::to_string(ladder.size() - kSimilarityLadder.size()) +
          " above, up to 1 (merged whatever their compute)";
      const std::string asked =
          "merging runs of one structure whose compute is within " + Percent(options.similarity) +
          " gave the runs different shapes at different counts (" + differs + ")";
      if (kept.size() == n) {
        take_chosen();
        out.note = "the phases were found " + used + ": " + asked +
                   ", and their phases would not have corresponded";
      } else if (kept.size() >= 3 && 2 * kept.size() > n) {
        take_chosen();
        std::vector<std::size_t> left;
        for (std::size_t i = 0; i < n; ++i) {
          if (from[i] < 0) left.push_back(i);
        }
        out.note = "the runs at " + JoinNprocs(out.signatures, left) +
                   " processes have another shape than those at " +
                   JoinNprocs(out.signatures, kept) + " whichever way the phases are found (" +
                   asked + "; " + tried_text +
                   "), so their phases would be matched with phases of another " +
                   "shape: they are left out (the others' phases were found " + used +
                   "); trace them again, or other counts";
        std::vector<TraceInput> in;
        std::vector<phases::Signature> sg;
        for (std::size_t i : kept) {  // ascending: the inputs' order
          in.push_back(out.inputs[i]);
          sg.push_back(std::move(out.signatures[i]));
        }
        out.inputs = std::move(in);
        out.signatures = std::move(sg);
      } else {
        // Too few share a shape to leave the others out: the analysis asked for, as it was.
        out.options = options;
        out.signatures = std::move(sigs.front());
        out.note = "the runs have different shapes at different counts whichever way the " +
                   std::string("phases are found (") + asked + "; " + tried_text +
                   "), and no 3 or more counts that are most of them share " +
                   "one: phases may be matched with phases of another shape; trace more " +
                   "counts";
      }
    }
  }
  ModelOptions base;
  base.threads = threads;
  if (!allow_remainder) return BuildForInputs(std::move(out), choose_loop_sizes, progress, base);
  // With the user's leave, a phase that no model fits is left out whatever its share, but
  // only once nothing builds without that: the stricter ways above may model it. The first
  // strict try also gives, when only such phases stop it, the first lenient model.
  ModelInputs kept = out;
  ModelOptions every_count = base;
  every_count.drop_smallest_counts = false;
  const ModelAttempt first = TryBuildModel(out.signatures, every_count);
  std::exception_ptr strict;
  std::string strict_headline;
  try {
    return BuildForInputs(std::move(out), choose_loop_sizes, progress, base, &first);
  } catch (const UserError& e) {
    strict = std::current_exception();
    strict_headline = Headline(e.what());
  }
  ModelInputs built;
  if (first.leaving_out) {
    kept.model = *first.leaving_out;
    built = Noted(std::move(kept));
  } else {
    ModelOptions leave_out = base;
    leave_out.max_dropped_share = 1.0;
    try {
      built = BuildForInputs(std::move(kept), choose_loop_sizes, progress, leave_out);
    } catch (const UserError&) {
      // The first error says why no model builds; leaving phases out did not change that.
      std::rethrow_exception(strict);
    }
  }
  built.model.warnings.insert(
      built.model.warnings.begin(),
      "--allow-remainder: phases that no model fits are left out whatever their share of the "
      "run, and their time is kept at its traced share (without it: " +
          strict_headline + ")");
  return built;
}

fs::path DataDir() {
  if (const char* env = std::getenv("PAS2P_DATA_DIR"); env && *env) return fs::path(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // Installed: <prefix>/bin/pas2p -> <prefix>/share/pas2p.
    fs::path share = exe.parent_path().parent_path() / "share" / "pas2p";
    if (fs::exists(share / "machines" / "default.toml", ec)) return share;
    // Build tree: walk up looking for datasets/machines/default.toml.
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (fs::exists(dir / "datasets" / "machines" / "default.toml", ec)) return dir / "datasets";
    }
  }
  const fs::path source(PAS2P_SOURCE_DIR_FALLBACK);
  if (!source.empty() && fs::exists(source / "datasets" / "machines" / "default.toml", ec)) {
    return source / "datasets";
  }
  return {};
}

sim::Machine LoadMachineOrDefault(const std::string& file, std::string* used) {
  std::string path = file;
  if (path.empty()) {
    const fs::path data = DataDir();
    if (data.empty()) {
      throw UserError(
          "the default machine file (datasets/machines/default.toml) was not found; "
          "give one with --machine FILE or set PAS2P_DATA_DIR to the datasets "
          "directory");
    }
    path = (data / "machines" / "default.toml").string();
  }
  if (used) *used = path;
  return sim::LoadAnyMachine(path);
}

bool IsModelFile(const std::vector<std::string>& args) {
  std::error_code ec;
  if (args.size() != 1 || !fs::is_regular_file(args[0], ec)) return false;
  std::ifstream in(args[0], std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("pas2p-model") != std::string::npos;
}

AppModel ModelFromArgs(const std::vector<std::string>& args) {
  if (IsModelFile(args)) return LoadModel(args[0]);
  return AnalyzeForModel(ExpandTraceArgs(args), {}, true).model;
}

}  // namespace pas2p::synthesis
