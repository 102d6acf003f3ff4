#include "pas2p/synthesis/predict.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "pas2p/core/error.h"
#include "pas2p/core/huge_pages.h"
#include "pas2p/core/parallel.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "pas2p/simulator/efficiency.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/reschedule.h"
#include "pas2p/synthesis/synthesize.h"

namespace pas2p::synthesis {

using nlohmann::json;

namespace {

// Draws of the task costs of a self-scheduled phase with a task profile, for the interval
// of its span (SynthOptions::task_draw).
constexpr int kTaskDraws = 8;

double SimulateTime(const TraceSource& trace, const sim::Machine& machine, std::uint64_t* events,
                    sim::Efficiency* efficiency = nullptr) {
  sim::SimOptions options;
  const sim::SimResult result = sim::Simulate(trace, machine, options);
  if (events) *events += result.events;
  if (efficiency) *efficiency = sim::EfficiencyOf(result);
  return result.predicted_time_s;
}

double SimulateModel(const AppModel& model, std::int64_t n, const SynthOptions& o,
                     const sim::Machine& machine, std::uint64_t* events) {
  SynthesizedTrace trace(model, n, o);
  return SimulateTime(trace, machine, events);
}

// Simulations that do not depend on each other, run on up to `threads` threads. Each result,
// or the exception its simulation threw, is taken where the sequential code used it, in the
// same order: the outputs, the errors and PredictOptions::simulated_events are those of
// running the same simulations one after another (a result never taken - a simulation run
// ahead in case it would be needed - counts for nothing).
class SimulationPool {
 public:
  using Job = std::function<double(std::uint64_t* events)>;
  std::size_t Add(Job job) {
    jobs_.push_back(Entry{std::move(job), 0, 0, nullptr});
    return jobs_.size() - 1;
  }
  // Runs the jobs added since the last Run, in the order they were added.
  void Run(int threads) {
    const std::size_t first = first_;
    std::vector<Outcome<std::pair<double, std::uint64_t>>> done =
        RunInParallel<std::pair<double, std::uint64_t>>(
            jobs_.size() - first, threads, [&](std::size_t k) {
              std::uint64_t events = 0;
              const double value = jobs_[first + k].job(&events);
              return std::pair{value, events};
            });
    for (std::size_t k = 0; k < done.size(); ++k) {
      Entry& e = jobs_[first + k];
      if (done[k].error) {
        e.error = done[k].error;
      } else {
        std::tie(e.value, e.events) = *done[k].value;
      }
    }
    first_ = jobs_.size();
  }
  // The job's result (rethrows what it threw); adds its events to *events.
  double Take(std::size_t job, std::uint64_t* events) {
    Entry& e = jobs_[job];
    if (e.error) std::rethrow_exception(e.error);
    *events += e.events;
    return e.value;
  }

 private:
  struct Entry {
    Job job;
    double value;
    std::uint64_t events;
    std::exception_ptr error;
  };
  std::vector<Entry> jobs_;
  std::size_t first_ = 0;
};

SimulationPool::Job PhaseJob(const AppModel& model, std::int64_t n, const SynthOptions& o,
                             const sim::Machine& machine) {
  return [&model, n, o, &machine](std::uint64_t* events) {
    return SimulateModel(model, n, o, machine, events);
  };
}

SynthOptions OnlyPhase(int phase, std::int64_t repetitions, int side = 0) {
  SynthOptions o;
  o.only_phase = phase;
  o.repetitions = repetitions;
  o.side = side;
  return o;
}

// PredictOptions::threads, 0 = the machine's hardware threads, at most 4.
int PredictThreads(const PredictOptions& options) {
  return options.threads > 0 ? options.threads : DefaultThreads();
}

bool WidthAt(const Quantity& q, double p) {
  if (!q.present) return false;
  const auto iv = q.model.Interval(p);
  return iv.high - iv.low > 1e-12 * std::max(1.0, std::fabs(q.model.Evaluate(p)));
}

// True when some bytes or compute quantity of the phase has an interval of non-zero width.
bool PhaseHasWidth(const PhaseModel& ph, double p) {
  if (WidthAt(ph.cpu_total, p)) return true;
  for (const auto& s : ph.slots) {
    if (s.cpu_ns_per_byte > 0 && s.cpu_bytes_loo_error > 0) return true;
    for (const Quantity* q :
         {&s.bytes, &s.recv_bytes, &s.root_bytes, &s.root_recv_bytes, &s.cpu_ns, &s.instructions}) {
      if (WidthAt(*q, p)) return true;
    }
    for (const auto& c : s.class_compute) {
      if (WidthAt(c.cpu_ns, p) || WidthAt(c.instructions, p)) return true;
    }
  }
  return false;
}

std::string JoinCounts(const std::vector<int>& counts) {
  std::string s;
  for (std::size_t i = 0; i < counts.size(); ++i) s += (i ? ", " : "") + std::to_string(counts[i]);
  return s;
}

// Whether `eq` gives some rank a partner at `nprocs`: every rank up to 2^16, beyond that
// the first and last 4096 ranks and 2^16 spread evenly between (a description, not the
// model: a call made only by ranks between those is left out of it).
bool AnyPartnerAt(const patterns::GeneralEquation& eq, std::int64_t nprocs) {
  std::optional<patterns::GeneralEquation::AtCount> found;
  try {
    found.emplace(eq.At(nprocs));
  } catch (const UserError&) {
    return true;  // not a valid count of this equation: described as it is
  }
  const patterns::GeneralEquation::AtCount& at = *found;
  constexpr std::int64_t kAll = 65536, kEnds = 4096;
  if (nprocs <= kAll) {
    for (std::int64_t r = 0; r < nprocs; ++r) {
      if (at.NumDests(r) > 0) return true;
    }
    return false;
  }
  for (std::int64_t r = 0; r < kEnds; ++r) {
    if (at.NumDests(r) > 0 || at.NumDests(nprocs - 1 - r) > 0) return true;
  }
  for (std::int64_t i = 0; i < kAll; ++i) {
    if (at.NumDests(i * nprocs / kAll) > 0) return true;
  }
  return false;
}

}  // namespace

std::string DescribePhaseAt(const PhaseModel& phase, std::int64_t nprocs) {
  // Runs of calls of one kind (in slot order), with the partners' grid at this count and the
  // bytes per call at this count.
  struct Run {
    EventKind kind;
    int calls = 0;
    std::string grid;
    double bytes = 0;
    bool moving_root = false;
    double max_bytes = -1;  // > bytes: calls of several sizes, `bytes` the least
  };
  std::vector<Run> runs;
  for (const SlotModel& s : phase.slots) {
    if (s.kind == EventKind::kCompute) continue;
    // A call no rank makes at this count (the fold of a recursive doubling at a power of
    // two) is not part of what the phase does there.
    if (s.peer && !AnyPartnerAt(*s.peer, nprocs) &&
        (!s.recv_peer || !AnyPartnerAt(*s.recv_peer, nprocs))) {
      continue;
    }
    std::string grid;
    if (s.peer && s.peer->family == patterns::Family::kComponents) {
      // The blocks the world is split into at this count.
      if (const auto sizes = s.peer->ComponentSizesAt(nprocs)) {
        grid = "components of";
        for (std::size_t i = 0; i < sizes->size(); ++i) {
          grid += (i == 0                   ? " "
                   : i + 1 == sizes->size() ? " and "
                                            : ", ") +
                  std::to_string((*sizes)[i]);
        }
        grid += " ranks";
      }
    } else if (s.peer) {
      try {
        const auto at = s.peer->At(nprocs);
        for (std::size_t i = 0; i < at.extents().size(); ++i)
          grid += (i ? " x " : "") + std::to_string(at.extents()[i]);
      } catch (const UserError&) {
        grid.clear();  // not a valid count of this equation: no grid to show
      }
    }
    if (s.communicator) {
      // The rule in words without its valid-count clause (the prediction states those once),
      // with the groups it makes at this count.
      grid = s.communicator->Describe();
      if (auto cut = grid.find("; valid counts"); cut != std::string::npos) grid.resize(cut);
      try {
        const auto at = s.communicator->At(nprocs);
        const std::int64_t groups = at.NumGroups();
        std::string sizes = std::to_string(at.GroupSize());
        if (!s.communicator->block_sizes.empty()) {  // blocks of unequal sizes: each
          if (const auto each = patterns::BlockSizesAt(s.communicator->block_sizes, nprocs)) {
            sizes.clear();
            for (std::size_t i = 0; i < each->size(); ++i) {
              sizes += (i == 0                  ? ""
                        : i + 1 == each->size() ? " and "
                                                : ", ") +
                       std::to_string((*each)[i]);
            }
          }
        }
        grid = std::to_string(groups) + (groups == 1 ? " group of " : " groups of ") + sizes +
               " ranks (" + grid + ")";
      } catch (const UserError&) {
        // not a valid count of this rule: the rule alone
      }
    }
    // A rooted collective's message is what its root sends (the others send nothing).
    const double bytes =
        IsRooted(s.kind) ? std::max(s.BytesAt(nprocs), s.RecvBytesAt(nprocs)) : s.BytesAt(nprocs);
    const bool moving = s.root_step != phases::RootStep::kFixed;
    // A law per component: from the least to the most a component's messages carry.
    double least = bytes, most = -1;
    if (const SlotModel::ComponentsAt parts = s.ComponentBytesAt(nprocs); !parts.bytes.empty()) {
      const auto [lo, hi] = std::minmax_element(parts.bytes.begin(), parts.bytes.end());
      least = *lo;
      if (*hi > *lo + 0.5) most = *hi;
    }
    if (!runs.empty() && runs.back().kind == s.kind && runs.back().grid == grid &&
        runs.back().moving_root == moving && std::fabs(runs.back().bytes - least) <= 0.5 &&
        std::fabs(runs.back().max_bytes - most) <= 0.5) {
      ++runs.back().calls;
      continue;
    }
    runs.push_back(Run{s.kind, 1, grid, least, moving, most});
  }
  // Many runs (a 27-point halo's 26 receives: faces, edges and corners of three sizes, in
  // direction order; a tree's levels, a receive and a send each) read better as one run per
  // kind of call with the range of its sizes, in the order each kind first comes.
  constexpr std::size_t kMostRuns = 8;
  if (runs.size() > kMostRuns) {
    std::vector<Run> merged;
    for (const Run& r : runs) {
      auto same = std::find_if(merged.begin(), merged.end(), [&r](const Run& m) {
        return m.kind == r.kind && m.grid == r.grid && m.moving_root == r.moving_root;
      });
      if (same != merged.end()) {
        Run& m = *same;
        const double hi = std::max({m.bytes, m.max_bytes, r.bytes, r.max_bytes});
        m.bytes = std::min(m.bytes, r.bytes);
        m.max_bytes = hi > m.bytes + 0.5 ? hi : -1;
        m.calls += r.calls;
        continue;
      }
      merged.push_back(r);
    }
    runs = std::move(merged);
  }
  auto size_text = [](double bytes) {
    char buf[64];
    if (bytes >= 1024) {
      std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
    } else {
      std::snprintf(buf, sizeof buf, "%.0f B", bytes);
    }
    return std::string(buf);
  };
  std::ostringstream out;
  if (phase.block) {
    // A repeated block: the calls below, once per partner (rank 0's count at this size).
    std::int64_t stages = 0;
    for (const SlotModel& s : phase.slots) {
      try {
        if (s.peer) stages = std::max(stages, s.peer->At(nprocs).NumDests(0));
        if (s.recv_peer) stages = std::max(stages, s.recv_peer->At(nprocs).NumDests(0));
      } catch (const UserError&) {
        // not a valid count of this equation: no stage count to show
      }
    }
    if (stages > 1) out << stages << " stages of: ";
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    out << (i ? "; " : "") << r.calls << " " << EventKindName(r.kind);
    if (!r.grid.empty()) {
      // A partners' grid ("7 x 7") or a communicator ("7 groups of 7 ranks (rows of ...)").
      const bool extents = r.grid.find(" x ") != std::string::npos &&
                           r.grid.find_first_not_of("0123456789 x") == std::string::npos;
      out << (extents ? " on a " + r.grid + " grid" : " on " + r.grid);
    }
    if (r.moving_root) out << " from a moving root";
    if ((IsPointToPoint(r.kind) || IsCollective(r.kind)) && r.max_bytes > r.bytes) {
      out << ", " << size_text(r.bytes) << " to " << size_text(r.max_bytes) << " each";
    } else if ((IsPointToPoint(r.kind) || IsCollective(r.kind)) && r.bytes > 0) {
      out << ", " << size_text(r.bytes) << " each";
    }
  }
  return out.str();
}

namespace {

// Bytes one partner gets from one call of `s` at `nprocs` (the larger of the send and
// receive sides; on components with a law each, the smallest component's), or nullopt where
// the call moves no data or its communicator's size is not known. An all-to-all's buffers hold one
// block per member of the communicator: divided by its size. With `unrounded`, a block law's share
// of its split (N / sqrt(P) items, not the padded ceil(N / sqrt(P)), which never falls below one
// item).
std::optional<double> PerPartnerBytes(const SlotModel& s, std::int64_t nprocs,
                                      bool unrounded = false) {
  if (!IsPointToPoint(s.kind) && !IsCollective(s.kind)) return std::nullopt;
  if (s.kind == EventKind::kBarrier || s.reply) return std::nullopt;
  const bool face = s.face_dim >= 0 && s.peer;
  const auto p = static_cast<double>(nprocs);
  const bool both_sides = IsCollective(s.kind) || s.kind == EventKind::kSendrecv;
  // A call on components with a law each (SlotModel::component_bytes): its smallest
  // component's, since that one runs out of problem first (the mean over the ranks of a
  // small component beside a large one stays far above a byte).
  if (const auto sent = s.ComponentBytesAt(nprocs); !sent.bytes.empty()) {
    const auto received = s.ComponentBytesAt(nprocs, 0, /*recv=*/true);
    double smallest = -1;
    for (std::size_t c = 0; c < sent.bytes.size(); ++c) {
      double b = sent.bytes[c];
      if (both_sides && c < received.bytes.size()) b = std::max(b, received.bytes[c]);
      if (smallest < 0 || b < smallest) smallest = b;
    }
    if (smallest >= 0) return smallest;
  }
  // A law per occurrence is split over the partners at nprocs (BytesAt); no padding to undo.
  const bool whole = face || s.bytes_per_occurrence;
  double bytes = unrounded && !whole ? s.bytes.UnroundedAt(p) : s.BytesAt(nprocs);
  if (both_sides) {
    const bool recv_face = face && s.face_recv_bytes > 0;
    bytes = std::max(bytes, unrounded && !recv_face && !s.bytes_per_occurrence
                                ? s.recv_bytes.UnroundedAt(p)
                                : s.RecvBytesAt(nprocs));
  }
  if (s.kind == EventKind::kAlltoall || s.kind == EventKind::kAlltoallv) {
    std::int64_t members = nprocs;
    if (s.sub_comm) {
      if (!s.communicator) return std::nullopt;
      try {
        members = s.communicator->At(nprocs).GroupSize();
      } catch (const UserError&) {
        return std::nullopt;
      }
    }
    if (members < 1) return std::nullopt;
    bytes /= static_cast<double>(members);
  }
  return bytes;
}

std::string Bytes(double b) {
  char buf[64];
  if (b >= 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024 * 1024));
  } else if (b >= 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  } else if (b >= 10) {
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  } else {  // 7.5 B is not 8 B where values of 8 B are counted
    std::snprintf(buf, sizeof buf, "%.2g B", b);
  }
  return buf;
}

}  // namespace

std::vector<std::string> ProblemSizeLimits(const AppModel& model, std::int64_t nprocs) {
  std::vector<std::string> out;
  const std::int64_t largest = model.largest_count();
  if (largest <= 0 || nprocs <= largest) return out;
  for (const PhaseModel& phase : model.phases) {
    for (const SlotModel& s : phase.slots) {
      const auto at_largest = PerPartnerBytes(s, largest);
      const auto here = PerPartnerBytes(s, nprocs, /*unrounded=*/true);
      // One value of the call (SlotModel::element_bytes: 8 for doubles), at least a byte.
      const auto value = static_cast<double>(std::max<std::int64_t>(s.element_bytes, 1));
      if (!at_largest || !here || *at_largest < value || *here >= value) continue;
      char unit[160];
      if (s.element_bytes > 1) {
        std::snprintf(unit, sizeof unit,
                      "under one %lld-byte value (every traced message of the call was a "
                      "multiple of %lld B)",
                      static_cast<long long>(s.element_bytes),
                      static_cast<long long>(s.element_bytes));
      } else {
        std::snprintf(unit, sizeof unit, "under one byte");
      }
      char line[896];
      std::snprintf(line, sizeof line,
                    "at %lld processes the model puts %s per partner in phase %d's %s (%s at "
                    "%lld): %s, so the traced problem is too small to split over "
                    "%lld ranks and the application most likely cannot run there with this "
                    "input; the prediction extrapolates its scaling laws past where they hold. "
                    "Trace a problem that grows with the count (weak scaling), or choose a "
                    "smaller target",
                    static_cast<long long>(nprocs), Bytes(*here).c_str(), phase.index,
                    std::string(EventKindName(s.kind)).c_str(), Bytes(*at_largest).c_str(),
                    static_cast<long long>(largest), unit, static_cast<long long>(nprocs));
      out.push_back(line);
      break;  // one line per phase
    }
  }
  return out;
}

std::vector<std::string> UntracedExtents(const AppModel& model, std::int64_t nprocs) {
  std::vector<std::string> out;
  std::set<std::string> grids;  // one line per grid
  for (const PhaseModel& phase : model.phases) {
    for (const SlotModel& s : phase.slots) {
      for (const auto* eq : {&s.peer, &s.recv_peer}) {
        if (!*eq || (*eq)->family != patterns::Family::kStencil) continue;
        const patterns::GridRule& grid = (*eq)->grid;
        const auto at_target = grid.Extents(nprocs);
        if (!at_target) continue;
        std::vector<std::int64_t> most(at_target->size(), 0);
        std::string traced;
        for (const int c : model.counts) {
          const auto e = grid.Extents(c);
          if (!e || e->size() != most.size()) continue;
          for (std::size_t d = 0; d < most.size(); ++d) most[d] = std::max(most[d], (*e)[d]);
          traced += (traced.empty() ? "" : ", ") + patterns::GridRule::FormatExtents(*e) + " at " +
                    std::to_string(c);
        }
        std::string dims;
        for (std::size_t d = 0; d < most.size(); ++d) {
          if (most[d] > 0 && most[d] <= 2 && (*at_target)[d] > 2) {
            dims += (dims.empty() ? "" : ", ") + std::to_string(d);
          }
        }
        if (dims.empty() || !grids.insert(grid.Describe()).second) continue;
        out.push_back(
            "phase " + std::to_string(phase.index) + " exchanges on a " + grid.Describe() + " (" +
            traced + "; " + patterns::GridRule::FormatExtents(*at_target) + " at " +
            std::to_string(nprocs) + "): along dimension " + dims +
            " (fastest first) every traced count has at most 2 ranks, where a rank's "
            "neighbours either way are one rank or none, so the traces cannot tell the "
            "exchanges in each direction apart and the prediction guesses them. Trace a count "
            "with at least 3 ranks along every dimension");
      }
    }
  }
  return out;
}

namespace {
bool HasGrid(const patterns::GeneralEquation& eq) {
  using F = patterns::Family;
  return eq.family == F::kStencil || eq.family == F::kGroupAll || eq.family == F::kTranspose;
}
}  // namespace

// Prediction::uncertain_weights.
std::vector<std::string> UncertainWeights(const AppModel& model, std::int64_t nprocs,
                                          const std::vector<PhasePrediction>& rows) {
  std::vector<std::string> out;
  const auto p = static_cast<double>(nprocs);
  for (const PhasePrediction& row : rows) {
    const Quantity& w = model.phases[row.phase].weight;
    if (!w.present || row.weight < 2 || row.share < kUncertainWeightShare) continue;
    const double low = w.At(p, -1), high = w.At(p, +1);
    if (!(high > kUncertainWeightSpread * std::max(low, 1.0))) continue;
    const auto& training = w.model.training;
    if (training.empty()) continue;
    double least = training.front().y, most = least;
    for (const auto& pt : training) {
      least = std::min(least, pt.y);
      most = std::max(most, pt.y);
    }
    char line[640];
    std::snprintf(line, sizeof line,
                  "phase %d repeats %.4g times at %lld by the law fitted to its traced "
                  "repetitions (%.4g to %.4g at %lld-%lld processes), but laws that fit them "
                  "nearly as well give %.4g to %.4g here, and %.1f%% of the predicted time "
                  "scales with it: trace a larger count to pin the law down",
                  row.phase, row.weight, static_cast<long long>(nprocs), least, most,
                  static_cast<long long>(training.front().p),
                  static_cast<long long>(training.back().p), low, high, 100 * row.share);
    out.emplace_back(line);
  }
  return out;
}

std::vector<std::string> AmbiguousRules(const AppModel& model, std::int64_t nprocs) {
  // One line per phase and pair of rules: its calls that both fit, e.g. "phase 0 calls 0, 2
  // (allreduce, bcast)".
  struct Pair {
    int phase;
    std::string what, first, other, parts;
    std::int64_t from;
    std::vector<std::size_t> calls;
    std::vector<std::string> kinds;
  };
  std::vector<Pair> pairs;
  const std::int64_t largest = model.counts.empty() ? 0 : model.counts.back();
  for (const PhaseModel& phase : model.phases) {
    for (std::size_t k = 0; k < phase.slots.size(); ++k) {
      const SlotModel& s = phase.slots[k];
      auto add = [&](const std::string& what, const std::string& first, const std::string& other,
                     std::int64_t from, const char* parts) {
        auto it = std::find_if(pairs.begin(), pairs.end(), [&](const Pair& q) {
          return q.phase == phase.index && q.what == what && q.first == first && q.other == other &&
                 q.from == from;
        });
        if (it == pairs.end()) {
          pairs.push_back(Pair{phase.index, what, first, other, parts, from, {}, {}});
          it = std::prev(pairs.end());
        }
        if (std::find(it->calls.begin(), it->calls.end(), k) == it->calls.end()) {
          it->calls.push_back(k);
        }
        const std::string kind(EventKindName(s.kind));
        if (std::find(it->kinds.begin(), it->kinds.end(), kind) == it->kinds.end()) {
          it->kinds.push_back(kind);
        }
      };
      // The first rival that gives other partners at `nprocs`, and the least count above the
      // traced ones where it does.
      // Rules on two different grids are named by their grids, so the calls of a phase that
      // all exchange on the one grid make one line, whichever their offsets.
      auto equation = [&](const std::optional<patterns::GeneralEquation>& eq,
                          const std::string& what) {
        if (!eq) return;
        for (const patterns::GeneralEquation& rival : eq->rivals) {
          if (!patterns::Disagree(*eq, rival, nprocs)) continue;
          std::int64_t from = patterns::FirstDisagreement(*eq, rival, largest, nprocs);
          if (HasGrid(*eq) && HasGrid(rival) && !(eq->grid == rival.grid)) {
            // The first count where the grids themselves part, the same for every call on
            // them (a call's own partners may agree a little longer).
            for (std::int64_t c = largest + 1; c <= std::min(nprocs, largest + 256); ++c) {
              const auto a = eq->grid.Extents(c), b = rival.grid.Extents(c);
              if (a && b && *a != *b) {
                from = c;
                break;
              }
            }
            add("partners", "on a " + eq->grid.Describe(), "on a " + rival.grid.Describe(), from,
                "partners");
          } else {
            add(what, "as " + eq->Describe(), "as " + rival.Describe(), from, "partners");
          }
          return;
        }
      };
      equation(s.peer, s.recv_peer ? "send partners" : "partners");
      equation(s.recv_peer, "receive partners");
      if (s.communicator) {
        for (const patterns::CommunicatorRule& rival : s.communicator->rivals) {
          if (!patterns::Disagree(*s.communicator, rival, nprocs)) continue;
          add("communicators", "as " + s.communicator->Describe(), "as " + rival.Describe(),
              patterns::FirstDisagreement(*s.communicator, rival, largest, nprocs), "groups");
          break;
        }
      }
    }
  }
  std::vector<std::string> out;
  const std::string traced = JoinCounts(model.counts);
  for (const Pair& q : pairs) {
    // Runs of 3 or more consecutive calls as a range ("calls 1-52").
    std::string calls, kinds;
    std::vector<std::size_t> sorted = q.calls;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size();) {
      std::size_t j = i;
      while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
      calls += (calls.empty() ? "" : ", ") + std::to_string(sorted[i]);
      if (j >= i + 2) {
        calls += "-" + std::to_string(sorted[j]);
        i = j + 1;
      } else {
        ++i;
      }
    }
    for (const auto& k : q.kinds) kinds += (kinds.empty() ? "" : ", ") + k;
    out.push_back("phase " + std::to_string(q.phase) + (q.calls.size() > 1 ? " calls " : " call ") +
                  calls + " (" + kinds + "): the traced counts (" + traced + ") fit the " + q.what +
                  " " + q.first + " and just as well " + q.other + ", which give other " + q.parts +
                  " at " + std::to_string(nprocs) +
                  "; the prediction takes the first. Trace the application at a count where "
                  "they differ (" +
                  std::to_string(q.from) + ") and train with it to decide");
  }
  return out;
}

// Prediction::remainder_law at n: when the law of the remainder's part in phases every
// count has takes the remainder a factor kRemainderLawSpread or more from the kept share
// (`rest`: its ratio to the modelled time), and either makes at least kRemainderLawShare of
// the run.
std::string RemainderLaw(const AppModel& model, std::int64_t n, double rest, double predicted_s) {
  if (!model.unmodelled_ratio.present) return {};
  constexpr double kRemainderLawSpread = 1.5, kRemainderLawShare = 0.05;
  const auto np = static_cast<double>(n);
  const double law = model.RemainderLawRatioAt(np);
  const double lo = std::min(law, rest), hi = std::max(law, rest);
  if (!(hi >= kRemainderLawSpread * lo) || hi / (1 + hi) < kRemainderLawShare) return {};
  auto pct = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
    return std::string(b);
  };
  const std::string largest = std::to_string(model.largest_count());
  return "the remainder (phases the model leaves out) is kept at its share of the " + largest +
         "-process run, " + pct(model.unmodelled_share) + "; of that, the " +
         pct(model.unmodelled_fitted_share) +
         " in phases every traced count has follows a law over the counts (" +
         model.unmodelled_ratio.Describe("their time over the modelled time") +
         ") that makes the remainder " + pct(law / (1 + law)) + " of the run at " +
         std::to_string(n) + " and the prediction " +
         FormatSeconds(predicted_s * (1 + law) / (1 + rest)) +
         ", which the interval includes. Work that does not shrink with P (Amdahl's serial "
         "part) grows this way; `pas2p validate --against` a trace at a larger count tells "
         "which holds";
}

namespace {
Prediction PredictOfModel(const AppModel& model, std::int64_t target, const sim::Machine& machine,
                          const PredictOptions& options);
}  // namespace

// A synthesized run that cannot complete names its unmatched or blocked calls; where the
// model leaves phases out, the usual cause is a call it keeps whose partner (a send's
// receive, a request's completion) is in a phase it leaves out, and the error says so.
Prediction Predict(const AppModel& model, std::int64_t target, const sim::Machine& machine,
                   const PredictOptions& options) {
  try {
    return PredictOfModel(model, target, machine, options);
  } catch (const sim::SimulationError& e) {
    if (model.unmodelled_share <= 0 && model.unmodelled_bytes_share <= 0) throw;
    char share[96];
    std::snprintf(share, sizeof share, "%.1f%% of the time and %.1f%% of the bytes",
                  100 * model.unmodelled_share, 100 * model.unmodelled_bytes_share);
    throw sim::SimulationError(
        std::string(e.what()) + "\nThe model leaves out " + share +
        " of the largest traced run (its warnings name the phases): a call it keeps may pair "
        "with one in a phase it leaves out (a message received there, a request posted or "
        "completed there), which the synthesized run cannot complete. `pas2p model` of the "
        "traces shows what each modelled phase holds; more counts, or counts where those "
        "phases follow a pattern family, may let the model keep them.");
  }
}

namespace {

Prediction PredictOfModel(const AppModel& model, std::int64_t target, const sim::Machine& machine,
                          const PredictOptions& options) {
  if (model.counts.empty()) throw UserError("the model has no traced counts");
  if (target < model.counts.front()) {
    throw UserError("the target " + std::to_string(target) + " is below the traced counts (" +
                    JoinCounts(model.counts) +
                    "): pas2p predicts larger runs from smaller ones; to see a run at " +
                    std::to_string(target) +
                    " processes, trace it and use `pas2p simulate` on its trace");
  }
  if (model.unmodelled_share > kMostlyUnmodelled && !options.allow_remainder) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * (1 - model.unmodelled_share));
    throw UserError(
        std::string("only ") + share + " of the traced time at " +
        std::to_string(model.counts.back()) +
        " processes is in phases that occur at every traced count and can be extrapolated; "
        "the rest (phases missing at some counts, or whose communication no pattern family "
        "reproduces: see the warnings) would be kept at its traced share, so the prediction "
        "would extrapolate a small part of the run. Trace counts whose runs have the same "
        "phases (compare `pas2p analyze` of each), or add --allow-remainder to predict anyway");
  }
  if (model.unmodelled_bytes_share > kMostlyUnmodelled && !options.allow_remainder) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100 * model.unmodelled_bytes_share);
    throw UserError(
        std::string(share) + " of the bytes sent at " + std::to_string(model.counts.back()) +
        " processes are in phases the model leaves out (phases missing at some counts, or "
        "whose communication no pattern family reproduces: see the warnings), so the "
        "prediction would leave out most of the traffic. Trace counts whose runs have the same "
        "phases (compare `pas2p analyze` of each), or add --allow-remainder to predict anyway");
  }
  if (target > sim::kMaxRanks) {
    throw UserError("a run of " + std::to_string(target) +
                    " processes is beyond what pas2p simulates (at most " +
                    std::to_string(sim::kMaxRanks) + " ranks, 2^24 - 1): predict at most " +
                    std::to_string(model.valid.AtMost(sim::kMaxRanks).value_or(sim::kMaxRanks)) +
                    ", the largest count it runs at within that");
  }
  std::vector<std::int64_t> traced(model.counts.begin(), model.counts.end());
  const patterns::TargetCheck check =
      patterns::RequireTarget(model.valid, target, options.allow_idle, traced);
  Prediction pred;
  pred.target = target;
  pred.run_count = check.run_count;
  pred.idle_ranks = check.idle_ranks;
  pred.valid_counts = model.valid.Describe();
  pred.check_message = check.valid ? "" : check.message;
  const std::int64_t n = check.run_count;
  // The large blocks this prediction's simulations keep for one another (huge_pages.h) are
  // given back when it ends: the next prediction of a sweep needs other sizes.
  struct ReleaseKept {
    ~ReleaseKept() { ReleaseLargeBlocks(); }
  } release_kept;
  pred.limits = ProblemSizeLimits(model, n);
  pred.untraced_extents = UntracedExtents(model, n);
  pred.ambiguous_rules = AmbiguousRules(model, n);
  pred.model_warnings = model.warnings;
  std::string error;
  if (!machine.IsValidFor(static_cast<int>(n), &error)) {
    throw UserError("the machine \"" + machine.name + "\" cannot run " + std::to_string(n) +
                    " processes: " + error);
  }
  const double p = static_cast<double>(n);
  std::set<int> in_run;
  for (const int ph : phases::SequencePhases(model.sequence)) in_run.insert(ph);

  auto total_of = [](double first, double per, double w) {
    return w >= 1 ? first + (w - 1) * per : w * first;
  };
  struct Times {
    double t1 = 0, occ = 0, w_low = 0, w_high = 0;
    double scheduled_s = -1;  // a self-scheduled phase: the list schedule's span
    double scheduled_low_s = -1, scheduled_high_s = -1;  // ... at the interval ends
  };
  std::vector<Times> times;
  double sum = 0, sum_low = 0, sum_high = 0;
  bool self_scheduled = false;
  for (const auto& pm : model.phases) self_scheduled = self_scheduled || pm.scheduled;
  std::set<int> coupled;  // phases that cannot be simulated alone
  const std::vector<int> order(in_run.begin(), in_run.end());
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  const int threads = PredictThreads(options);
  // With more than one thread, simulations are started ahead of where the sequential order
  // needs them: the full replay (when it is the prediction) and the two-occurrence runs of
  // the repeated phases (needed unless the phase holds under 1% of the time: then the run
  // is wasted, its result is not used). The runs of one thread are those of the sequential
  // order.
  const bool ahead = threads > 1;
  SimulationPool pool;
  std::optional<SynthesizedTrace> full;  // the whole run (its error where it is needed)
  std::exception_ptr full_error;
  try {
    full.emplace(model, n);
  } catch (...) {
    full_error = std::current_exception();
  }
  // A self-scheduled run is always replayed in full: its phases are coupled (the per-phase
  // times leave out what the master's hand-out and stops cost), and its events are
  // O(tasks + P) whatever the count.
  const bool replay_full = full && (full->MaxEventsPerRank() * static_cast<std::uint64_t>(n) <=
                                        options.full_replay_events ||
                                    self_scheduled);
  std::size_t full_job = kNone;
  sim::Efficiency efficiency;  // of the full replay (written by its job)
  if (ahead && replay_full) {
    full_job = pool.Add([&full, &machine, &efficiency](std::uint64_t* events) {
      return SimulateTime(*full, machine, events, &efficiency);
    });
  }
  // The occurrences a repeated phase is simulated with for its steady-state cost (the
  // weight at N rounded, at most PredictOptions::steady_occurrences).
  const std::int64_t steady = std::max<std::int64_t>(2, options.steady_occurrences);
  auto steady_occurrences = [steady](double weight) {
    return std::clamp<std::int64_t>(std::llround(weight), 2, steady);
  };
  std::vector<std::size_t> t1_job(order.size(), kNone), tk_job(order.size(), kNone);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PhaseModel& pm = model.phases[order[i]];
    const double w = pm.weight.At(p);
    if (ahead && !self_scheduled && !pm.scheduled && w > 1.5) {
      tk_job[i] = pool.Add(PhaseJob(model, n, OnlyPhase(order[i], steady_occurrences(w)), machine));
    }
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!model.phases[order[i]].scheduled)
      t1_job[i] = pool.Add(PhaseJob(model, n, OnlyPhase(order[i], 1), machine));
  }
  pool.Run(threads);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const int ph = order[i];
    const PhaseModel& pm = model.phases[ph];
    PhasePrediction row;
    row.phase = ph;
    row.description = DescribePhaseAt(PhaseAt(pm, model.counts, n), n);
    row.relevant = pm.relevant;
    row.weight = pm.weight.At(p);
    Times t;
    t.w_low = pm.weight.At(p, -1);
    t.w_high = pm.weight.At(p, +1);
    if (pm.scheduled) {
      // A self-scheduled phase cannot run alone (the master's first wait needs the tasks
      // handed out in the phase before it): its time is the list schedule's span, compute
      // only (the full replay below times its messages too).
      if (!full) std::rethrow_exception(full_error);
      const SynthesizedTrace& at = *full;
      const double w = std::max(1.0, row.weight);
      t.scheduled_s = at.ScheduledPhase() == ph ? at.ScheduleMakespanS() : 0;
      if (options.intervals && at.ScheduledPhase() == ph) {
        // The span with the tasks' compute (and the other slots') at the ends of their
        // regression intervals, and with each task's cost drawn within how far the traced
        // counts disagreed on it (a task profile's spread): which worker gets the next task
        // turns on near-ties, so small differences move the span.
        t.scheduled_low_s = t.scheduled_high_s = t.scheduled_s;
        auto take = [&](const SynthOptions& o) {
          const double span = SynthesizedTrace(model, n, o).ScheduleMakespanS();
          t.scheduled_low_s = std::min(t.scheduled_low_s, span);
          t.scheduled_high_s = std::max(t.scheduled_high_s, span);
        };
        for (const int side : {-1, +1}) {
          SynthOptions o;
          o.side = side;
          take(o);
        }
        if (!pm.task_profile.empty() && pm.task_profile_spread > 0) {
          for (int d = 1; d <= kTaskDraws; ++d) {
            SynthOptions o;
            o.task_draw = d;
            take(o);
          }
        }
      }
      t.t1 = t.scheduled_s / w;
    } else if (self_scheduled) {
      // The phases around a self-scheduled one may exchange messages with it (the master's
      // hand-out of the first tasks, its stops): alone they cannot complete, and their time
      // is then only in the full replay (always used for such a run, see below).
      try {
        t.t1 = pool.Take(t1_job[i], &pred.simulated_events);
      } catch (const sim::SimulationError&) {
        t.t1 = 0;
        coupled.insert(ph);
      }
    } else {
      t.t1 = pool.Take(t1_job[i], &pred.simulated_events);
    }
    t.occ = t.t1;
    times.push_back(t);
    pred.phases.push_back(row);
  }
  // The steady-state cost of one more occurrence ((T(K) - T(1)) / (K - 1)) for repeated
  // phases that hold at least 1% of the time estimated from one occurrence; the others are charged
  // their first occurrence's time per occurrence.
  double estimate = 0;
  for (std::size_t i = 0; i < pred.phases.size(); ++i) {
    estimate += times[i].t1 * std::max(1.0, pred.phases[i].weight);
  }
  std::vector<bool> needs_tk(order.size(), false);
  for (std::size_t i = 0; i < pred.phases.size(); ++i) {
    const PhasePrediction& row = pred.phases[i];
    needs_tk[i] = row.weight > 1.5 && times[i].t1 * row.weight >= 0.01 * estimate &&
                  !model.phases[row.phase].scheduled && !coupled.count(row.phase);
    if (needs_tk[i] && tk_job[i] == kNone) {
      tk_job[i] = pool.Add(
          PhaseJob(model, n, OnlyPhase(row.phase, steady_occurrences(row.weight)), machine));
    }
  }
  pool.Run(threads);
  for (std::size_t i = 0; i < pred.phases.size(); ++i) {
    PhasePrediction& row = pred.phases[i];
    Times& t = times[i];
    if (needs_tk[i]) {
      const double tk = pool.Take(tk_job[i], &pred.simulated_events);
      const auto k = static_cast<double>(steady_occurrences(row.weight));
      if (tk - t.t1 > 0) t.occ = (tk - t.t1) / (k - 1);
    }
    row.first_occurrence_s = t.t1;
    row.time_per_occurrence_s = t.occ;
    row.total_s = t.scheduled_s >= 0 ? t.scheduled_s : total_of(t.t1, t.occ, row.weight);
    sum += row.total_s;
  }
  // The interval ends are simulated when the run is small enough to afford two more
  // simulations per phase, and only for phases that hold at least 1% of the time (the
  // others' ends come from their weight interval alone).
  const bool affordable = static_cast<std::uint64_t>(n) * 64 <= options.full_replay_events;
  std::vector<std::size_t> low_job(order.size(), kNone), high_job(order.size(), kNone);
  for (std::size_t i = 0; i < pred.phases.size(); ++i) {
    const PhasePrediction& row = pred.phases[i];
    const PhaseModel& pm = model.phases[row.phase];
    if (options.intervals && affordable && row.total_s >= 0.01 * sum && PhaseHasWidth(pm, p) &&
        !pm.scheduled && !coupled.count(row.phase)) {
      low_job[i] = pool.Add(PhaseJob(model, n, OnlyPhase(row.phase, 1, -1), machine));
      high_job[i] = pool.Add(PhaseJob(model, n, OnlyPhase(row.phase, 1, +1), machine));
    }
  }
  pool.Run(threads);
  for (std::size_t i = 0; i < pred.phases.size(); ++i) {
    const PhasePrediction& row = pred.phases[i];
    const Times& t = times[i];
    double low = total_of(t.t1, t.occ, t.w_low), high = total_of(t.t1, t.occ, t.w_high);
    if (t.scheduled_s >= 0) {
      low = t.scheduled_low_s >= 0 ? t.scheduled_low_s : t.scheduled_s;
      high = t.scheduled_high_s >= 0 ? t.scheduled_high_s : t.scheduled_s;
    }
    if (low_job[i] != kNone) {
      const double tl = pool.Take(low_job[i], &pred.simulated_events);
      const double th = pool.Take(high_job[i], &pred.simulated_events);
      const double rl = t.t1 > 0 ? tl / t.t1 : 1, rh = t.t1 > 0 ? th / t.t1 : 1;
      low = total_of(tl, t.occ * rl, t.w_low);
      high = total_of(th, t.occ * rh, t.w_high);
    }
    sum_low += std::min(low, row.total_s);
    sum_high += std::max(high, row.total_s);
  }
  // The unmodelled remainder: its ratio to the modelled time at the largest traced count,
  // and in the interval the law of that ratio over the counts (AppModel::RemainderRatioAt).
  const auto np = static_cast<double>(n);
  const double rest = model.RemainderRatioAt(np);
  const double rest_low = model.RemainderRatioAt(np, -1);
  const double rest_high = model.RemainderRatioAt(np, 1);
  pred.remainder_s = rest * sum;
  pred.pet_s = sum + pred.remainder_s;
  for (auto& row : pred.phases) row.share = pred.pet_s > 0 ? row.total_s / pred.pet_s : 0;
  pred.uncertain_weights = UncertainWeights(model, n, pred.phases);
  const double low_pet = sum_low * (1 + rest_low), high_pet = sum_high * (1 + rest_high);

  if (!full) std::rethrow_exception(full_error);
  if (replay_full) {
    const double replay = full_job != kNone
                              ? pool.Take(full_job, &pred.simulated_events)
                              : SimulateTime(*full, machine, &pred.simulated_events, &efficiency);
    pred.predicted_time_s = replay * (1 + rest);
    pred.method = "full replay of the synthesized run";
  } else {
    pred.predicted_time_s = pred.pet_s;
    pred.method =
        "PET (each phase simulated alone: its first and steady occurrences, times weights)";
  }
  const double scale = pred.pet_s > 0 ? pred.predicted_time_s / pred.pet_s : 1;
  pred.interval_low_s = std::min(low_pet * scale, pred.predicted_time_s);
  pred.interval_high_s = std::max(high_pet * scale, pred.predicted_time_s);
  pred.remainder_law = RemainderLaw(model, n, rest, pred.predicted_time_s);
  // The same run on an ideal network, for the POP metrics' serialization / transfer split.
  const sim::Machine ideal = sim::IdealNetwork(machine);
  std::size_t ideal_job = kNone;
  if (replay_full && options.ideal_network) {
    ideal_job = pool.Add(
        [&full, &ideal](std::uint64_t* events) { return SimulateTime(*full, ideal, events); });
  }
  std::size_t quiet_job = kNone;
  if (replay_full && options.quiet_replay) {
    quiet_job = pool.Add([&model, n, &machine](std::uint64_t* events) {
      SynthOptions o;
      o.time_noise = false;
      const SynthesizedTrace t(model, n, o);
      return SimulateTime(t, machine, events);
    });
  }
  if (replay_full && options.intervals && options.noise_replays > 0 &&
      full->MaxEventsPerRank() * static_cast<std::uint64_t>(n) <= options.noise_replay_events) {
    // Other draws of the compute noise: the same model run again.
    std::vector<std::size_t> jobs;
    for (int d = 1; d <= options.noise_replays; ++d) {
      jobs.push_back(pool.Add([&model, n, d, &machine](std::uint64_t* events) {
        SynthOptions o;
        o.noise_seed = static_cast<std::uint64_t>(d);
        o.task_draw = d;  // and a self-scheduled run's task costs
        const SynthesizedTrace t(model, n, o);
        return SimulateTime(t, machine, events);
      }));
    }
    pool.Run(threads);
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      const double t = pool.Take(jobs[k], &pred.simulated_events) * (1 + rest);
      pred.noise_low_s = k == 0 ? t : std::min(pred.noise_low_s, t);
      pred.noise_high_s = k == 0 ? t : std::max(pred.noise_high_s, t);
    }
    pred.noise_replays = options.noise_replays;
    pred.interval_low_s = std::min(pred.interval_low_s, pred.noise_low_s);
    pred.interval_high_s = std::max(pred.interval_high_s, pred.noise_high_s);
  }
  if (replay_full) {
    pool.Run(threads);  // the ideal network's and the quiet replays, when not run with the noise
                        // replays
    if (ideal_job != kNone) {
      efficiency.ideal_runtime_s = pool.Take(ideal_job, &pred.simulated_events);
    }
    if (quiet_job != kNone) {
      pred.quiet_time_s = pool.Take(quiet_job, &pred.simulated_events) * (1 + rest);
    }
    pred.efficiency = efficiency;
    pred.efficiency_done = true;
  }
  return pred;
}

// [low, high] widened to at least predicted x (1 +- |check.error|), low not below 0.
void Widen(const SelfCheck& check, double predicted, double* low, double* high) {
  if (!check.done) return;
  const double half = std::max(std::fabs(check.error), check.noise_spread) * predicted;
  *low = std::max(0.0, std::min(*low, predicted - half));
  *high = std::max(*high, predicted + half);
}

}  // namespace

void WidenBySelfCheck(const SelfCheck& check, Prediction* p) {
  p->self_check = check;
  Widen(check, p->predicted_time_s, &p->interval_low_s, &p->interval_high_s);
}

void WidenBySelfCheck(const SelfCheck& check, Validation* v) {
  v->self_check = check;
  Widen(check, v->predicted_time_s, &v->interval_low_s, &v->interval_high_s);
  v->in_interval = v->real_simulated_time_s >= v->interval_low_s &&
                   v->real_simulated_time_s <= v->interval_high_s;
}

namespace {

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100 * fraction);
  return buf;
}

std::string SelfCheckLine(const SelfCheck& c) {
  std::ostringstream out;
  if (c.done) {
    out << "trained on " << JoinCounts(c.training_counts) << " only, it predicts " << c.count
        << " at " << FormatSeconds(c.predicted_s) << " against "
        << FormatSeconds(c.real_simulated_s) << " for the trace (" << Percent(c.error) << ")";
    if (c.noise_draws > 0) {
      out << "; its compute noise shuffled in time (" << c.noise_draws
          << " draws) spreads the trace's own time over +-" << Percent(c.noise_spread).substr(1);
    }
    out << "; the interval is at least +-"
        << Percent(std::max(std::fabs(c.error), c.noise_spread)).substr(1);
  } else if (!c.note.empty()) {
    out << "not done: " << c.note;
  }
  return out.str();
}

json SelfCheckJson(const SelfCheck& c) {
  return c.done ? json{{"done", true},
                       {"count", c.count},
                       {"training_counts", c.training_counts},
                       {"predicted_s", c.predicted_s},
                       {"real_simulated_s", c.real_simulated_s},
                       {"error", c.error},
                       {"noise_draws", c.noise_draws},
                       {"noise_spread", c.noise_spread}}
                : json{{"done", false}, {"note", c.note}};
}

}  // namespace

std::string FormatPrediction(const Prediction& p, const std::string& machine_name) {
  std::ostringstream out;
  out << "predicted time at " << p.run_count << " processes on " << machine_name << ": "
      << FormatSeconds(p.predicted_time_s) << "  [" << FormatSeconds(p.interval_low_s) << ", "
      << FormatSeconds(p.interval_high_s) << "]\n";
  out << "method: " << p.method << "\n";
  if (p.noise_replays > 0) {
    out << "noise: " << p.noise_replays
        << " more replays with the compute noise drawn anew: " << FormatSeconds(p.noise_low_s)
        << " to " << FormatSeconds(p.noise_high_s) << " (in the interval)\n";
  }
  if (p.quiet_time_s >= 0) {
    out << "quiet machine: " << FormatSeconds(p.quiet_time_s)
        << " without the compute noise that varies in time (each rank's bursts at their mean, "
           "the ranks' lasting differences kept); the traced noise adds "
        << FormatSeconds(p.predicted_time_s - p.quiet_time_s) << " ("
        << Percent(p.quiet_time_s > 0 ? p.predicted_time_s / p.quiet_time_s - 1 : 0) << ")\n";
  }
  if (p.efficiency_done) {
    const sim::Efficiency& e = p.efficiency;
    out << "efficiency (POP metrics of the replay" << (p.remainder_s > 0 ? ", modelled phases" : "")
        << "): " << sim::FormatEfficiency(e) << "; per rank on average "
        << FormatSeconds(e.compute_mean_s) << " computing, "
        << FormatSeconds(e.communication_mean_s) << " moving its data, "
        << FormatSeconds(e.wait_mean_s) << " waiting for others\n";
  }
  const std::string check = SelfCheckLine(p.self_check);
  if (!check.empty()) out << "self-check: " << check << "\n";
  out << "valid counts: " << p.valid_counts << "\n";
  if (!p.check_message.empty()) out << "note: " << p.check_message << "\n";
  for (const auto& l : p.limits) out << "warning: " << l << "\n";
  for (const auto& l : p.untraced_extents) out << "warning: " << l << "\n";
  for (const auto& l : p.ambiguous_rules) out << "warning: " << l << "\n";
  for (const auto& l : p.uncertain_weights) out << "warning: " << l << "\n";
  if (!p.remainder_law.empty()) out << "warning: " << p.remainder_law << "\n";
  out << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %10s %14s %14s %7s  %s\n", "phase", "weight",
                "per occurrence", "total", "share", "what it does");
  out << line;
  for (const auto& r : p.phases) {
    // The description is appended, not formatted: it can be longer than any fixed buffer.
    std::snprintf(line, sizeof line, "%-5d %10.6g %14s %14s %6.1f%%  ", r.phase, r.weight,
                  FormatSeconds(r.time_per_occurrence_s).c_str(), FormatSeconds(r.total_s).c_str(),
                  100 * r.share);
    out << line << (r.relevant ? "" : "(not relevant) ") << r.description << "\n";
  }
  if (p.remainder_s > 0) {
    std::snprintf(line, sizeof line, "%-5s %10s %14s %14s %6.1f%%  %s\n", "rest", "", "",
                  FormatSeconds(p.remainder_s).c_str(),
                  100 * (p.pet_s > 0 ? p.remainder_s / p.pet_s : 0),
                  "phases the model leaves out, kept at their traced share");
    out << line;
  }
  out << "PET (sum of phases): " << FormatSeconds(p.pet_s) << "\n";
  return out.str();
}

json EfficiencyJson(const sim::Efficiency& e) {
  json eff = {
      {"parallel", e.Parallel()},           {"load_balance", e.LoadBalance()},
      {"communication", e.Communication()}, {"compute_mean_s", e.compute_mean_s},
      {"compute_max_s", e.compute_max_s},   {"communication_mean_s", e.communication_mean_s},
      {"wait_mean_s", e.wait_mean_s}};
  if (e.HasTransfer()) {
    eff["serialization"] = e.Serialization();
    eff["transfer"] = e.Transfer();
    eff["ideal_network_s"] = e.ideal_runtime_s;
  }
  return eff;
}

std::string PredictionToJson(const Prediction& p, const std::string& machine_name) {
  json j;
  j["target"] = p.target;
  j["run_count"] = p.run_count;
  j["idle_ranks"] = p.idle_ranks;
  j["machine"] = machine_name;
  j["predicted_time_s"] = p.predicted_time_s;
  j["interval_s"] = json::array({p.interval_low_s, p.interval_high_s});
  j["pet_s"] = p.pet_s;
  j["remainder_s"] = p.remainder_s;
  j["method"] = p.method;
  j["efficiency"] = p.efficiency_done ? EfficiencyJson(p.efficiency) : json(nullptr);
  j["noise_replays"] = p.noise_replays;
  j["noise_range_s"] =
      p.noise_replays > 0 ? json::array({p.noise_low_s, p.noise_high_s}) : json(nullptr);
  j["quiet_time_s"] = p.quiet_time_s >= 0 ? json(p.quiet_time_s) : json(nullptr);
  j["valid_counts"] = p.valid_counts;
  j["note"] = p.check_message;
  j["self_check"] = SelfCheckJson(p.self_check);
  j["limits"] = p.limits;
  j["untraced_extents"] = p.untraced_extents;
  j["ambiguous_rules"] = p.ambiguous_rules;
  j["uncertain_weights"] = p.uncertain_weights;
  j["remainder_law"] = p.remainder_law.empty() ? json(nullptr) : json(p.remainder_law);
  j["model_warnings"] = p.model_warnings;
  json phases = json::array();
  for (const auto& r : p.phases) {
    phases.push_back(json{{"phase", r.phase},
                          {"description", r.description},
                          {"relevant", r.relevant},
                          {"weight", r.weight},
                          {"time_per_occurrence_s", r.time_per_occurrence_s},
                          {"first_occurrence_s", r.first_occurrence_s},
                          {"total_s", r.total_s},
                          {"share", r.share}});
  }
  j["phases"] = phases;
  return j.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------------

namespace {

std::int64_t LargestPrimeFactor(std::int64_t n) {
  std::int64_t largest = 1;
  for (std::int64_t f = 2; f * f <= n; ++f) {
    while (n % f == 0) {
      largest = f;
      n /= f;
    }
  }
  return n > 1 ? std::max(largest, n) : largest;
}

}  // namespace

// Log-spaced points over the valid counts (sorted, more than max_points of them), each the
// count an allocation would ask for near its spot v: among the valid counts within a factor
// 1.25 of v, whole nodes of `cpus_per_node` first (any count below one node), then the
// smoothest (the smallest largest prime factor: a grid of 2^k 3^m ranks splits the problem
// evenly, 2 x 1237 ranks does not), then the closest to v. The lowest valid count stays the
// first point (the sweep's baseline).
std::vector<std::int64_t> SweepPoints(const std::vector<std::int64_t>& counts,
                                      std::size_t max_points, int cpus_per_node) {
  const std::int64_t node = std::max(1, cpus_per_node);
  std::vector<std::int64_t> picked{counts.front()};
  const double a = std::log(static_cast<double>(counts.front()));
  const double b = std::log(static_cast<double>(counts.back()));
  for (std::size_t k = 1; k < max_points; ++k) {
    const double v =
        std::exp(a + (b - a) * static_cast<double>(k) / static_cast<double>(max_points - 1));
    auto lo = std::lower_bound(counts.begin(), counts.end(),
                               static_cast<std::int64_t>(std::ceil(v / 1.25)));
    auto hi = std::upper_bound(counts.begin(), counts.end(),
                               static_cast<std::int64_t>(std::floor(v * 1.25)));
    std::int64_t best = 0;
    std::tuple<int, std::int64_t, double> best_key{};
    for (auto it = lo; it != hi; ++it) {
      const std::int64_t c = *it;
      if (c <= picked.back()) continue;
      const bool whole = c < node || c % node == 0;
      const std::tuple<int, std::int64_t, double> key{
          whole ? 0 : 1, LargestPrimeFactor(c), std::fabs(std::log(static_cast<double>(c) / v))};
      if (best == 0 || key < best_key) {
        best = c;
        best_key = key;
      }
    }
    if (best == 0) {  // no valid count near v: the nearest one above the last pick
      auto it = std::upper_bound(counts.begin(), counts.end(), picked.back());
      if (it == counts.end()) break;
      auto near = std::lower_bound(it, counts.end(), static_cast<std::int64_t>(v));
      if (near == counts.end()) --near;
      best = *near;
    }
    picked.push_back(best);
  }
  return picked;
}

Sweep RunSweep(const AppModel& model, std::int64_t low, std::int64_t high,
               const sim::Machine& machine, double efficiency_threshold, std::size_t max_points,
               const PredictOptions& options) {
  if (low < 1 || high < low) {
    throw UserError("the sweep range " + std::to_string(low) + ":" + std::to_string(high) +
                    " is empty: give --sweep A:B with 1 <= A <= B");
  }
  if (high > sim::kMaxRanks) {
    throw UserError("the sweep range " + std::to_string(low) + ":" + std::to_string(high) +
                    " goes beyond what pas2p simulates (at most " + std::to_string(sim::kMaxRanks) +
                    " ranks, 2^24 - 1): end it at " + std::to_string(sim::kMaxRanks) + " or below");
  }
  std::vector<std::int64_t> counts = model.valid.InRange(low, high);
  if (counts.empty()) {
    throw UserError("no valid count in " + std::to_string(low) + ":" + std::to_string(high) +
                    " (the application runs at " + model.valid.Describe() + ")");
  }
  if (max_points < 2) max_points = 2;
  if (counts.size() > max_points) counts = SweepPoints(counts, max_points, machine.cpus_per_node);
  Sweep sweep;
  sweep.efficiency_threshold = efficiency_threshold;
  sweep.model_warnings = model.warnings;
  if (!counts.empty()) {
    for (const auto& w : AmbiguousRules(model, counts.back())) sweep.model_warnings.push_back(w);
  }
  PredictOptions o = options;
  o.intervals = false;
  o.ideal_network = false;
  PredictOptions loud = o;  // the link checks below use the predicted time alone
  loud.quiet_replay = false;
  for (std::int64_t c : counts) {
    const Prediction p = Predict(model, c, machine, o);
    SweepRow row;
    row.count = c;
    row.time_s = p.predicted_time_s;
    row.quiet_time_s = p.quiet_time_s;
    if (p.efficiency_done) {
      row.load_balance = p.efficiency.LoadBalance();
      row.communication = p.efficiency.Communication();
    }
    row.beyond_problem = !p.limits.empty();
    if (row.beyond_problem && (sweep.rows.empty() || !sweep.rows.back().beyond_problem)) {
      sweep.notes.push_back("from " + std::to_string(c) +
                            " processes on, the traced problem is too small to split (never "
                            "recommended): " +
                            p.limits.front());
    }
    sweep.rows.push_back(row);
  }
  const SweepRow& base = sweep.rows.front();
  // Parallel efficiency relative to the first count: its time over this one's, times the
  // ratio of the counts.
  auto efficiency_of = [&base](double base_time, const SweepRow& row, double time) {
    return time > 0
               ? base_time / time * static_cast<double>(base.count) / static_cast<double>(row.count)
               : 0;
  };
  for (auto& row : sweep.rows) {
    row.speedup = row.time_s > 0 ? base.time_s / row.time_s : 0;
    row.efficiency = efficiency_of(base.time_s, row, row.time_s);
    row.core_hours = static_cast<double>(row.count) * row.time_s / 3600.0;
    if (row.efficiency >= efficiency_threshold && !row.beyond_problem)
      sweep.recommended = row.count;
  }
  for (const auto& row : sweep.rows) {  // the rule on a quiet machine
    if (!(base.quiet_time_s > 0) || row.quiet_time_s < 0) break;
    if (efficiency_of(base.quiet_time_s, row, row.quiet_time_s) >= efficiency_threshold &&
        !row.beyond_problem) {
      sweep.recommended_quiet = row.count;
    }
  }
  // A count that takes much longer than the one before: say whether the machine's per-node
  // links explain it (the same two counts simulated with unlimited links and buses).
  sim::Machine open = machine;
  open.input_links = open.output_links = open.buses = 0;
  const bool limited = machine.input_links > 0 || machine.output_links > 0 || machine.buses > 0;
  for (std::size_t k = 1; k < sweep.rows.size(); ++k) {
    const SweepRow& a = sweep.rows[k - 1];
    const SweepRow& b = sweep.rows[k];
    if (!(a.time_s > 0 && b.time_s > 1.5 * a.time_s)) continue;
    char note[512];
    double ta = 0, tb = 0;
    if (limited) {
      ta = Predict(model, a.count, open, loud).predicted_time_s;
      tb = Predict(model, b.count, open, loud).predicted_time_s;
    }
    if (limited && ta > 0 && tb < 1.2 * ta) {
      std::snprintf(note, sizeof note,
                    "the time rises %.1fx from %lld to %lld processes because of contention on "
                    "the nodes' network links (machine \"%s\": %d ranks per node share %d "
                    "output and %d input link(s), %d buses; 0 = unlimited): with unlimited "
                    "links it would be %s at %lld",
                    b.time_s / a.time_s, static_cast<long long>(a.count),
                    static_cast<long long>(b.count), machine.name.c_str(), machine.cpus_per_node,
                    machine.output_links, machine.input_links, machine.buses,
                    FormatSeconds(tb).c_str(), static_cast<long long>(b.count));
    } else {
      std::snprintf(note, sizeof note,
                    "the time rises %.1fx from %lld to %lld processes%s; `pas2p predict --target "
                    "%lld` shows which phase grows",
                    b.time_s / a.time_s, static_cast<long long>(a.count),
                    static_cast<long long>(b.count),
                    limited ? " (not from link contention: it stays with unlimited links)" : "",
                    static_cast<long long>(b.count));
    }
    sweep.notes.push_back(note);
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the largest count whose parallel efficiency (relative to %lld processes) stays "
                ">= %.2f",
                static_cast<long long>(base.count), efficiency_threshold);
  sweep.rule = buf;
  return sweep;
}

std::string FormatSweep(const Sweep& sweep) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%10s %14s %14s %9s %11s %12s %9s %9s\n", "processes", "time",
                "quiet", "speedup", "efficiency", "core-hours", "load-bal", "comm-eff");
  out << line;
  auto pop = [](double x) {
    char b[16];
    if (x < 0) return std::string("-");
    std::snprintf(b, sizeof b, "%.3f", x);
    return std::string(b);
  };
  for (const auto& r : sweep.rows) {
    std::snprintf(line, sizeof line, "%10lld %14s %14s %9.3f %11.3f %12.4g %9s %9s%s\n",
                  static_cast<long long>(r.count), FormatSeconds(r.time_s).c_str(),
                  r.quiet_time_s >= 0 ? FormatSeconds(r.quiet_time_s).c_str() : "-", r.speedup,
                  r.efficiency, r.core_hours, pop(r.load_balance).c_str(),
                  pop(r.communication).c_str(),
                  r.count == sweep.recommended ? "  <- recommended"
                  : r.beyond_problem           ? "  (problem too small to split)"
                                               : "");
    out << line;
  }
  for (const auto& n : sweep.notes) out << "note: " << n << "\n";
  out << "quiet: the same run without the traced compute noise that varies in time (see "
         "predict's quiet machine line; - where the run was predicted phase by phase)\n";
  out << "load-bal, comm-eff: POP's load balance and communication efficiency at each count "
         "(their product is the share of the run the ranks compute; - where the run was "
         "predicted phase by phase)\n";
  out << "rule: " << sweep.rule << "\n";
  if (sweep.recommended > 0) {
    out << "recommended: " << sweep.recommended << " processes\n";
  } else {
    out << "recommended: none (no count keeps the efficiency at the threshold; lower it with "
           "--efficiency)\n";
  }
  if (sweep.recommended_quiet > 0 && sweep.recommended_quiet != sweep.recommended) {
    out << "on a quiet machine (the quiet column) the same rule recommends "
        << sweep.recommended_quiet
        << " processes: the traced machine's noise decides between the two\n";
  }
  return out.str();
}

namespace {

// One CSV field: the number, or nothing when it was not computed (negative, by convention).
std::string CsvNumber(double x) {
  if (x < 0 || !std::isfinite(x)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

struct CsvRow {
  std::int64_t count = 0;
  double time_s = -1, low_s = -1, high_s = -1, quiet_s = -1, speedup = -1, efficiency = -1;
  double core_hours = -1, load_balance = -1, communication = -1;
  bool beyond_problem = false;
  int recommended = -1;  // 1 / 0, -1: no recommendation (a single target)
};

std::string CsvLine(const CsvRow& r) {
  std::string line = std::to_string(r.count);
  for (double x : {r.time_s, r.low_s, r.high_s, r.quiet_s, r.speedup, r.efficiency, r.core_hours,
                   r.load_balance, r.communication}) {
    line += "," + CsvNumber(x);
  }
  line += r.beyond_problem ? ",1" : ",0";
  line += r.recommended < 0 ? std::string(",") : "," + std::to_string(r.recommended);
  return line + "\n";
}

}  // namespace

std::string SweepToCsv(const Sweep& sweep) {
  std::string out = std::string(kCsvColumns) + "\n";
  for (const SweepRow& s : sweep.rows) {
    CsvRow r;
    r.count = s.count;
    r.time_s = s.time_s;
    r.quiet_s = s.quiet_time_s;
    r.speedup = s.speedup;
    r.efficiency = s.efficiency;
    r.core_hours = s.core_hours;
    r.load_balance = s.load_balance;
    r.communication = s.communication;
    r.beyond_problem = s.beyond_problem;
    r.recommended = s.count == sweep.recommended ? 1 : 0;
    out += CsvLine(r);
  }
  return out;
}

std::string PredictionToCsv(const Prediction& p) {
  CsvRow r;
  r.count = p.run_count;
  r.time_s = p.predicted_time_s;
  r.low_s = p.interval_low_s;
  r.high_s = p.interval_high_s;
  r.quiet_s = p.quiet_time_s;
  r.core_hours = static_cast<double>(p.run_count) * p.predicted_time_s / 3600.0;
  if (p.efficiency_done) {
    r.load_balance = p.efficiency.LoadBalance();
    r.communication = p.efficiency.Communication();
  }
  r.beyond_problem = !p.limits.empty();
  return std::string(kCsvColumns) + "\n" + CsvLine(r);
}

std::string SweepToJson(const Sweep& sweep) {
  json rows = json::array();
  for (const auto& r : sweep.rows) {
    rows.push_back(
        json{{"count", r.count},
             {"predicted_time_s", r.time_s},
             {"quiet_time_s", r.quiet_time_s >= 0 ? json(r.quiet_time_s) : json()},
             {"speedup", r.speedup},
             {"efficiency", r.efficiency},
             {"core_hours", r.core_hours},
             {"load_balance", r.load_balance >= 0 ? json(r.load_balance) : json()},
             {"communication_efficiency", r.communication >= 0 ? json(r.communication) : json()},
             {"beyond_problem", r.beyond_problem}});
  }
  json j{{"sweep", rows},
         {"efficiency_threshold", sweep.efficiency_threshold},
         {"recommended", sweep.recommended},
         {"recommended_quiet", sweep.recommended_quiet},
         {"rule", sweep.rule},
         {"notes", sweep.notes},
         {"model_warnings", sweep.model_warnings}};
  return j.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------------

namespace {

struct StreamTotals {
  std::vector<std::int32_t> send_peers;  // peers of the point-to-point sends, in order
  // Per collective call, in order: its kind, its communicator's members and its root as one
  // number (0 for a communicator whose members the trace does not give).
  std::vector<std::uint64_t> collectives;
  std::uint64_t bytes = 0;
  std::int64_t cpu_ns = 0;
};

StreamTotals ReadTotals(const TraceSource& trace, int rank) {
  StreamTotals t;
  auto source = trace.OpenRank(rank);
  // Communicator id -> a hash of its members (world ranks, in communicator order).
  std::map<CommId, std::uint64_t> members;
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  };
  std::uint64_t world = 0x57;
  for (int r = 0; r < trace.nprocs(); ++r) world = mix(world, static_cast<std::uint64_t>(r));
  members[kCommWorld] = world;
  // MPI_COMM_SELF and the communicators made from it: their collectives move nothing and
  // wait for no one (the analysis takes them as the rank's own time), so they are not
  // compared.
  std::set<CommId> alone = {kCommSelf};
  Event e;
  while (source->Next(&e)) {
    if (e.kind == EventKind::kCommCreate) {
      std::uint64_t h = 0x57;
      for (const std::int32_t m : e.members) h = mix(h, static_cast<std::uint64_t>(m));
      members[e.new_comm] = h;
      if (alone.count(e.comm)) alone.insert(e.new_comm);
    }
    if (IsCollective(e.kind) && alone.count(e.comm)) continue;
    if (IsCollective(e.kind)) {
      const auto it = members.find(e.comm);
      std::uint64_t h = it == members.end() ? 0 : it->second;
      if (h != 0) {
        h = mix(h, static_cast<std::uint64_t>(e.kind));
        if (IsRooted(e.kind)) h = mix(h, static_cast<std::uint64_t>(e.peer) + 7);
      }
      t.collectives.push_back(h);
    }
    if (e.kind == EventKind::kCompute) t.cpu_ns += e.cpu_ns;
    if ((e.kind == EventKind::kSend || e.kind == EventKind::kIsend ||
         e.kind == EventKind::kSendrecv) &&
        e.peer >= 0) {
      t.send_peers.push_back(e.peer);
    }
    if (e.kind == EventKind::kSend || e.kind == EventKind::kIsend ||
        e.kind == EventKind::kSendrecv) {
      if (e.peer >= 0) t.bytes += e.bytes;
    } else if (IsCollective(e.kind)) {
      t.bytes += e.send_bytes;
    }
  }
  if (source->status() == StreamStatus::kTruncated || source->status() == StreamStatus::kCorrupt) {
    throw TraceError(source->message());
  }
  return t;
}

double RelError(double predicted, double real) {
  if (real == 0) return predicted == 0 ? 0 : 1;
  return std::fabs(predicted - real) / std::fabs(real);
}

}  // namespace

namespace {

// Per phase of the model: the predicted compute and time at the real run's count, and the
// real run's compute in the phase that corresponds to it (functional similarity over the
// training signatures and the real one).
void ComparePhases(const AppModel& model, const std::vector<phases::Signature>& training,
                   const phases::Signature& real, const Prediction& pred, Validation* v) {
  const std::int64_t n = v->count;
  std::map<int, double> predicted_time;
  for (const auto& row : pred.phases) predicted_time[row.phase] = row.total_s;
  // Model phase -> the real signature's phase id.
  std::map<int, int> real_id;
  try {
    // The counts the model was built from (BuildModel may leave the smallest out).
    std::vector<phases::Signature> all;
    for (const auto& s : training) {
      if (std::find(model.counts.begin(), model.counts.end(), s.nprocs) != model.counts.end())
        all.push_back(s);
    }
    all.push_back(real);
    const phases::Correspondence corr = phases::CorrespondPhases(all);
    std::size_t first = all.size();
    for (std::size_t i = 0; i + 1 < all.size(); ++i) {
      if (!model.counts.empty() && all[i].nprocs == model.counts.front()) first = i;
    }
    for (const PhaseModel& pm : model.phases) {
      if (first == all.size() || pm.ids.empty()) break;
      for (const auto& g : corr.groups) {
        if (g.phase_ids[first] == pm.ids.front() && g.phase_ids.back() >= 0) {
          real_id[pm.index] = g.phase_ids.back();
          break;
        }
      }
    }
  } catch (const UserError& e) {
    v->phases_note = std::string("the real run's phases were not matched: ") + e.what();
  }
  const double total_wall = real.traced_time_s;
  for (const int ph : phases::SequencePhases(model.sequence)) {
    if (std::any_of(v->phases.begin(), v->phases.end(),
                    [ph = ph](const PhaseCheck& c) { return c.phase == ph; })) {
      continue;
    }
    const PhaseModel& pm = model.phases[static_cast<std::size_t>(ph)];
    PhaseCheck c;
    c.phase = ph;
    c.description = DescribePhaseAt(PhaseAt(pm, model.counts, n), n);
    c.weight = pm.weight.At(static_cast<double>(n));
    // Up to 64 occurrences (the bursts' spread averages out), scaled to the weight.
    SynthOptions o;
    o.only_phase = ph;
    o.repetitions = std::clamp<std::int64_t>(std::llround(c.weight), 1, 64);
    SynthesizedTrace one(model, n, o);
    std::int64_t cpu = 0;
    for (int r = 0; r < n; ++r) {
      auto source = one.OpenRank(r);
      Event e;
      while (source->Next(&e)) {
        if (e.kind == EventKind::kCompute) cpu += e.cpu_ns;
      }
    }
    c.predicted_compute_s =
        static_cast<double>(cpu) * 1e-9 * c.weight / static_cast<double>(o.repetitions);
    c.predicted_time_s = predicted_time.count(ph) ? predicted_time[ph] : 0;
    if (auto it = real_id.find(ph); it != real_id.end()) {
      if (const phases::Phase* rp = real.FindPhase(it->second)) {
        double sum = 0;
        for (const auto& rk : rp->ranks) sum += rk.compute.cpu_ns.mean * rk.weight;
        c.real_weight = rp->weight;
        c.real_compute_s = sum * 1e-9;
        c.compute_error = RelError(c.predicted_compute_s, c.real_compute_s);
        c.real_traced_share = total_wall > 0 ? rp->total_time_s / total_wall : 0;
      }
    }
    v->phases.push_back(std::move(c));
  }
}

// ---------------------------------------------------------------------------------------
// Noise floor (Validation::noise_floor).

// Real traces above this many compute bursts are not re-drawn (32 bytes of state per burst,
// and each draw is one more simulation of the whole trace).
constexpr std::uint64_t kNoiseMaxBursts = 10'000'000;

std::uint64_t Mix(std::uint64_t x) {  // SplitMix64's finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The compute bursts of a trace, each split into base (the rank's mean for the pair of calls
// around it x the occurrence's shared factor) and residual (burst / base).
class BurstNoise {
 public:
  BurstNoise(const TraceSource& trace, const sim::Machine& machine) : machine_(machine) {
    const int n = trace.nprocs();
    ranks_.resize(static_cast<std::size_t>(n));
    // A burst's group: the call before it and the call after it (kind, tag, communicator).
    using CallKey = std::tuple<int, std::int32_t, CommId>;
    std::map<std::pair<CallKey, CallKey>, int> groups;
    std::vector<std::vector<double>> occ_sum, occ_count;  // [group][ordinal]
    std::uint64_t total = 0;
    for (int r = 0; r < n; ++r) {
      auto source = trace.OpenRank(r);
      std::vector<Burst>& bursts = ranks_[static_cast<std::size_t>(r)];
      std::vector<std::size_t> pending;  // bursts waiting for the call they precede
      std::vector<std::int32_t> ordinal;
      CallKey before{-1, 0, CommId{}};
      Event e;
      auto close = [&](int g) {
        if (ordinal.size() <= static_cast<std::size_t>(g)) ordinal.resize(g + 1, 0);
        for (std::size_t i : pending) {
          bursts[i].group = g;
          bursts[i].ordinal = ordinal[static_cast<std::size_t>(g)]++;
        }
        pending.clear();
      };
      while (source->Next(&e)) {
        if (e.kind == EventKind::kCompute) {
          pending.push_back(bursts.size());
          bursts.push_back(Burst{0, 0, static_cast<double>(Measure(e)), 0, 0, 0, 0});
          if (++total > kNoiseMaxBursts) {
            throw UserError("the real trace has more than " + std::to_string(kNoiseMaxBursts) +
                            " compute bursts (each draw would replay it whole); pass "
                            "--noise-draws 0 to skip it");
          }
          continue;
        }
        const CallKey after{static_cast<int>(e.kind), e.tag, e.comm};
        if (!pending.empty()) {
          close(groups.emplace(std::make_pair(before, after), static_cast<int>(groups.size()))
                    .first->second);
        }
        before = after;
      }
      if (source->status() == StreamStatus::kTruncated ||
          source->status() == StreamStatus::kCorrupt) {
        throw TraceError(source->message());
      }
      if (!pending.empty()) {  // bursts after the last call
        const CallKey end{-1, 0, CommId{}};
        close(groups.emplace(std::make_pair(before, end), static_cast<int>(groups.size()))
                  .first->second);
      }
      // The rank's mean per group, and each burst's ratio to it.
      std::vector<double> sum(groups.size(), 0), count(groups.size(), 0);
      for (const Burst& b : bursts) {
        sum[static_cast<std::size_t>(b.group)] += b.value;
        count[static_cast<std::size_t>(b.group)] += 1;
      }
      if (occ_sum.size() < groups.size()) {
        occ_sum.resize(groups.size());
        occ_count.resize(groups.size());
      }
      for (Burst& b : bursts) {
        const auto g = static_cast<std::size_t>(b.group);
        b.base = b.mean = sum[g] / count[g];
        if (b.base <= 0) continue;
        auto& os = occ_sum[g];
        auto& oc = occ_count[g];
        const auto j = static_cast<std::size_t>(b.ordinal);
        if (os.size() <= j) {
          os.resize(j + 1, 0);
          oc.resize(j + 1, 0);
        }
        os[j] += b.value / b.base;
        oc[j] += 1;
      }
    }
    // Per group over the ranks: their means' spread, and what each rank's own noise alone
    // puts in it (the variance of a mean of n bursts around the occurrences' factors).
    struct GroupSpread {
      double ranks = 0, sum = 0, square = 0, sampling = 0;
    };
    std::vector<GroupSpread> spread(groups.size());
    for (auto& bursts : ranks_) {
      std::map<int, std::array<double, 3>> own;  // group -> n, sum of squared residues, mean
      for (Burst& b : bursts) {
        if (b.base <= 0) continue;
        const auto g = static_cast<std::size_t>(b.group);
        const auto j = static_cast<std::size_t>(b.ordinal);
        b.base *= occ_sum[g][j] / occ_count[g][j];
        b.residual = b.base > 0 ? b.value / b.base : 0;
        auto& o = own[b.group];
        o[0] += 1;
        o[1] += (b.value - b.base) * (b.value - b.base);
        o[2] = b.mean;
      }
      for (const auto& [g, o] : own) {
        GroupSpread& gs = spread[static_cast<std::size_t>(g)];
        gs.ranks += 1;
        gs.sum += o[2];
        gs.square += o[2] * o[2];
        if (o[0] > 1) gs.sampling += o[1] / (o[0] * (o[0] - 1));
      }
    }
    // A quiet machine keeps of the ranks' differences what their noise does not explain
    // (as the model's SlotModel::cpu_spread_persistent): each rank's mean moved towards the
    // group's by that share.
    std::vector<double> group_mean(groups.size(), 0), keep(groups.size(), 1);
    for (std::size_t g = 0; g < spread.size(); ++g) {
      const GroupSpread& gs = spread[g];
      if (gs.ranks < 2) continue;
      const double mean = gs.sum / gs.ranks;
      const double between = std::max(0.0, gs.square / gs.ranks - mean * mean);
      const double sampling = gs.sampling / gs.ranks * (1 - 1 / gs.ranks);
      group_mean[g] = mean;
      keep[g] = between > 0 ? std::sqrt(std::max(0.0, 1 - sampling / between)) : 1;
    }
    for (auto& bursts : ranks_) {
      for (Burst& b : bursts) {
        if (b.mean <= 0) continue;
        const auto g = static_cast<std::size_t>(b.group);
        b.quiet = spread[g].ranks < 2 ? b.mean : group_mean[g] + keep[g] * (b.mean - group_mean[g]);
      }
    }
  }

  // Every rank's bursts with its residuals shuffled (per call group) by draw `draw`.
  std::vector<std::vector<std::int64_t>> Draw(int draw) const {
    std::vector<std::vector<std::int64_t>> out(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const auto& bursts = ranks_[r];
      std::map<int, std::vector<std::size_t>> by_group;
      for (std::size_t i = 0; i < bursts.size(); ++i) {
        if (bursts[i].base > 0) by_group[bursts[i].group].push_back(i);
      }
      auto& values = out[r];
      values.resize(bursts.size());
      for (std::size_t i = 0; i < bursts.size(); ++i) {
        values[i] = static_cast<std::int64_t>(std::llround(bursts[i].value));
      }
      for (const auto& [g, idx] : by_group) {
        std::vector<double> residuals;
        residuals.reserve(idx.size());
        for (std::size_t i : idx) residuals.push_back(bursts[i].residual);
        std::uint64_t state = Mix(Mix(Mix(static_cast<std::uint64_t>(draw) + 1) ^ r) ^
                                  static_cast<std::uint64_t>(g + 1));
        for (std::size_t k = residuals.size(); k > 1; --k) {  // Fisher-Yates
          state = Mix(state);
          std::swap(residuals[k - 1], residuals[state % k]);
        }
        for (std::size_t k = 0; k < idx.size(); ++k) {
          values[idx[k]] =
              static_cast<std::int64_t>(std::llround(bursts[idx[k]].base * residuals[k]));
        }
      }
    }
    return out;
  }

  // Every rank's bursts at the rank's mean for their pair of calls, of the ranks' spread
  // the part their own noise does not explain kept: no noise in time.
  std::vector<std::vector<std::int64_t>> Quiet() const {
    std::vector<std::vector<std::int64_t>> out(ranks_.size());
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      for (const Burst& b : ranks_[r]) {
        out[r].push_back(static_cast<std::int64_t>(std::llround(b.mean > 0 ? b.quiet : b.value)));
      }
    }
    return out;
  }

  // The quantity the simulator turns into time (instructions where the machine has a rate
  // for them and the burst has them, CPU time otherwise).
  std::int64_t Measure(const Event& e) const {
    return e.instructions >= 0 && machine_.instructions_per_second > 0 ? e.instructions : e.cpu_ns;
  }
  void Set(Event* e, std::int64_t value) const {
    if (e->instructions >= 0 && machine_.instructions_per_second > 0) {
      e->instructions = value;
    } else {
      e->cpu_ns = value;
    }
  }

 private:
  struct Burst {
    int group;
    std::int32_t ordinal;
    double value, base, residual;
    double mean;   // the rank's mean for the burst's pair of calls
    double quiet;  // that mean, of its difference to the other ranks' the lasting part
  };
  const sim::Machine& machine_;
  std::vector<std::vector<Burst>> ranks_;
};

// `base` with compute bursts replaced by `values` (per rank, in order).
class RedrawnTrace : public TraceSource {
 public:
  RedrawnTrace(const TraceSource& base, const BurstNoise& noise,
               std::vector<std::vector<std::int64_t>> values)
      : base_(base), noise_(noise), values_(std::move(values)) {}
  const TraceMetadata& metadata() const override { return base_.metadata(); }
  std::string description() const override { return base_.description() + " (noise re-drawn)"; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override {
    return std::make_unique<Reader>(base_.OpenRank(rank), noise_,
                                    values_[static_cast<std::size_t>(rank)]);
  }

 private:
  class Reader : public RankEventSource {
   public:
    Reader(std::unique_ptr<RankEventSource> in, const BurstNoise& noise,
           const std::vector<std::int64_t>& values)
        : in_(std::move(in)), noise_(noise), values_(values) {}
    bool Next(Event* e) override {
      if (!in_->Next(e)) return false;
      if (e->kind == EventKind::kCompute && next_ < values_.size()) noise_.Set(e, values_[next_++]);
      return true;
    }
    StreamStatus status() const override { return in_->status(); }
    const std::string& message() const override { return in_->message(); }
    int rank() const override { return in_->rank(); }

   private:
    std::unique_ptr<RankEventSource> in_;
    const BurstNoise& noise_;
    const std::vector<std::int64_t>& values_;
    std::size_t next_ = 0;
  };
  const TraceSource& base_;
  const BurstNoise& noise_;
  std::vector<std::vector<std::int64_t>> values_;
};

// Messages of `b` whose partner is in `a` as often (the multisets' intersection).
std::uint64_t MultisetMatched(const std::vector<std::int32_t>& a,
                              const std::vector<std::int32_t>& b) {
  std::map<std::int32_t, std::int64_t> to;
  for (std::int32_t p : a) ++to[p];
  std::uint64_t m = 0;
  for (std::int32_t p : b) {
    auto it = to.find(p);
    if (it != to.end() && it->second > 0) {
      --it->second;
      ++m;
    }
  }
  return m;
}

// The simulated time of `trace`, its self-scheduled tasks handed out by the simulation when
// `reschedule` (sim::RescheduledTrace); then `*master_peers` (if not null) = the master's
// send destinations in that replay.
double SimulateMaybeRescheduled(const TraceSource& trace, const sim::Machine& machine,
                                bool reschedule, int master = -1,
                                std::vector<std::int32_t>* master_peers = nullptr) {
  if (!reschedule) return SimulateTime(trace, machine, nullptr);
  const sim::RescheduledTrace rescheduled(trace);
  const double t = sim::Simulate(rescheduled, machine, rescheduled.Attach({})).predicted_time_s;
  if (master_peers && rescheduled.run().rescheduled && master >= 0) {
    *master_peers = rescheduled.send_peers_by_rank()[static_cast<std::size_t>(master)];
  }
  return t;
}

// `master_peers`: the master's destinations in the rescheduled replay of `real` (empty
// without one); each draw's are compared with them (Validation::scheduled_match_floor).
void NoiseFloor(const TraceSource& real, const sim::Machine& machine, int draws, int master,
                const std::vector<std::int32_t>& master_peers, Validation* v) {
  if (draws <= 0) {
    v->noise_note = "not computed (--noise-draws 0)";
    return;
  }
  try {
    const BurstNoise noise(real, machine);
    double sum = 0, low = 0, high = 0, peers = 0;
    for (int d = 0; d < draws; ++d) {
      const RedrawnTrace trace(real, noise, noise.Draw(d));
      std::vector<std::int32_t> drawn;
      const double t = SimulateMaybeRescheduled(trace, machine, v->rescheduled, master, &drawn);
      if (!master_peers.empty()) {
        peers += static_cast<double>(MultisetMatched(master_peers, drawn)) /
                 static_cast<double>(master_peers.size());
      }
      sum += t;
      low = d == 0 ? t : std::min(low, t);
      high = d == 0 ? t : std::max(high, t);
    }
    v->noise_draws = draws;
    v->noise_low_s = low;
    v->noise_high_s = high;
    v->noise_mean_s = sum / draws;
    v->noise_floor = RelError(v->noise_mean_s, v->real_simulated_time_s);
    if (!master_peers.empty()) v->scheduled_match_floor = peers / draws;
    if (v->predicted_quiet_s >= 0) {
      const RedrawnTrace quiet(real, noise, noise.Quiet());
      v->real_quiet_s = SimulateMaybeRescheduled(quiet, machine, v->rescheduled, master);
      v->quiet_error = RelError(v->predicted_quiet_s, v->real_quiet_s);
    }
  } catch (const UserError& e) {
    v->noise_note = std::string("not computed: ") + e.what();
  } catch (const sim::SimulationError& e) {
    v->noise_note = std::string("not computed: a re-drawn trace did not replay: ") + e.what();
  }
}

// Predicts `real`'s count from `model` and compares.
Validation CompareWithReal(const AppModel& model, const TraceSource& real,
                           const sim::Machine& machine, const PredictOptions& options,
                           const std::vector<phases::Signature>& training,
                           const phases::Signature& real_signature) {
  const auto held_out = static_cast<std::int64_t>(real.nprocs());
  Validation v;
  v.count = held_out;
  v.training_counts = model.counts;
  v.unmodelled_share = model.unmodelled_share;
  v.unmodelled_bytes_share = model.unmodelled_bytes_share;
  for (const auto& w : model.warnings) {
    if (w.find(phases::kUntracedCallsWarning) == std::string::npos &&
        w.find(phases::kOversubscribedWarning) == std::string::npos) {
      v.model_warnings.push_back(w);
    }
  }
  PredictOptions o = options;
  o.allow_idle = false;
  // The quiet replay is compared with the real trace made quiet, which the noise floor's
  // split of its bursts gives.
  o.quiet_replay = options.quiet_replay && options.noise_draws > 0;
  const Prediction pred = [&] {
    try {
      return Predict(model, held_out, machine, o);
    } catch (const UserError& e) {
      // A refusal that points at the model's warnings carries them: validate prints them
      // with its results, which a refusal leaves unprinted.
      if (v.model_warnings.empty()) throw;
      constexpr std::size_t kShown = 12;
      std::string list;
      for (std::size_t i = 0; i < v.model_warnings.size() && i < kShown; ++i) {
        list += "\n  warning: " + v.model_warnings[i];
      }
      if (v.model_warnings.size() > kShown) {
        list += "\n  ... and " + std::to_string(v.model_warnings.size() - kShown) +
                " more (`pas2p model` prints them all)";
      }
      throw UserError(std::string(e.what()) + "\nthe model's warnings:" + list);
    }
  }();
  v.predicted_quiet_s = pred.quiet_time_s;
  for (const auto& w : pred.untraced_extents) v.model_warnings.push_back(w);
  for (const auto& w : pred.ambiguous_rules) v.model_warnings.push_back(w);
  if (!pred.remainder_law.empty()) v.model_warnings.push_back(pred.remainder_law);
  v.predicted_time_s = pred.predicted_time_s;
  if (model.unmodelled_ratio.present) {
    const auto p = static_cast<double>(pred.run_count);
    v.law_predicted_time_s = pred.predicted_time_s * (1 + model.RemainderLawRatioAt(p)) /
                             (1 + model.RemainderRatioAt(p));
  }
  v.real_simulated_time_s = SimulateTime(real, machine, nullptr, &v.real_efficiency);
  if (pred.efficiency_done) {
    v.efficiency_done = true;
    v.predicted_efficiency = pred.efficiency;
    if (pred.efficiency.HasTransfer()) {
      v.real_efficiency.ideal_runtime_s = SimulateTime(real, sim::IdealNetwork(machine), nullptr);
    }
  }

  SynthesizedTrace synth(model, held_out);
  // A self-scheduled master's partners depend on the timing (which worker answers first):
  // its sends are compared as the number of messages to each partner, not in order.
  const int master = synth.ScheduledPhase() >= 0
                         ? model.phases[static_cast<std::size_t>(synth.ScheduledPhase())].master
                         : -1;
  // The reference of a self-scheduled run: its tasks handed out by the simulated machine.
  std::vector<std::vector<std::int32_t>> rescheduled_peers;  // by rank
  std::vector<int> rescheduled_workers;                      // ascending
  if (master >= 0) {
    const sim::RescheduledTrace rescheduled(real);
    const sim::SelfScheduledRun& run = rescheduled.run();
    if (!run.rescheduled) {
      v.reschedule_note = run.note;
    } else if (run.master != master) {
      v.reschedule_note = "the real trace's master is rank " + std::to_string(run.master) +
                          ", the model's rank " + std::to_string(master);
    } else {
      const sim::SimResult result = sim::Simulate(rescheduled, machine, rescheduled.Attach({}));
      v.rescheduled = true;
      v.rescheduled_tasks = run.tasks;
      v.real_simulated_traced_assignment_s = v.real_simulated_time_s;
      v.real_simulated_time_s = result.predicted_time_s;
      rescheduled_peers = rescheduled.send_peers_by_rank();
      rescheduled_workers = run.workers;
      for (int r = 0; r < held_out; ++r) {
        if (r == master) continue;
        v.rescheduled_busiest_worker_cpu_s = std::max(
            v.rescheduled_busiest_worker_cpu_s,
            static_cast<double>(rescheduled.cpu_ns_by_rank()[static_cast<std::size_t>(r)]) * 1e-9);
      }
    }
  }
  v.interval_low_s = pred.interval_low_s;
  v.interval_high_s = pred.interval_high_s;
  v.in_interval =
      v.real_simulated_time_s >= v.interval_low_s && v.real_simulated_time_s <= v.interval_high_s;
  NoiseFloor(real, machine, options.noise_draws, master,
             v.rescheduled ? rescheduled_peers[static_cast<std::size_t>(master)]
                           : std::vector<std::int32_t>{},
             &v);

  std::uint64_t matched = 0, scheduled_matched = 0, collectives_matched = 0;
  std::uint64_t scheduled_matched_traced = 0;
  std::int64_t real_cpu = 0, synth_cpu = 0;
  for (int r = 0; r < held_out; ++r) {
    const StreamTotals a = ReadTotals(real, r);
    const StreamTotals b = ReadTotals(synth, r);
    v.messages += a.send_peers.size();
    if (r == master) {
      scheduled_matched_traced = MultisetMatched(a.send_peers, b.send_peers);
      scheduled_matched =
          v.rescheduled
              ? MultisetMatched(rescheduled_peers[static_cast<std::size_t>(r)], b.send_peers)
              : scheduled_matched_traced;
      v.scheduled_messages += a.send_peers.size();
      matched += scheduled_matched;
    } else {
      // A worker of a rescheduled run: its sends (results) in the rescheduled replay.
      const std::vector<std::int32_t>& real_peers =
          std::binary_search(rescheduled_workers.begin(), rescheduled_workers.end(), r)
              ? rescheduled_peers[static_cast<std::size_t>(r)]
              : a.send_peers;
      for (std::size_t i = 0; i < real_peers.size() && i < b.send_peers.size(); ++i) {
        matched += real_peers[i] == b.send_peers[i];
      }
    }
    if (master >= 0 && r != master) {
      v.workers_cpu_s += static_cast<double>(a.cpu_ns) * 1e-9;
      v.busiest_worker_cpu_s =
          std::max(v.busiest_worker_cpu_s, static_cast<double>(a.cpu_ns) * 1e-9);
    }
    v.collective_calls += a.collectives.size();
    for (std::size_t i = 0; i < a.collectives.size() && i < b.collectives.size(); ++i) {
      collectives_matched += a.collectives[i] != 0 && a.collectives[i] == b.collectives[i];
    }
    v.real_bytes += a.bytes;
    v.predicted_bytes += b.bytes;
    real_cpu += a.cpu_ns;
    synth_cpu += b.cpu_ns;
  }
  v.pattern_match = v.messages ? static_cast<double>(matched) / static_cast<double>(v.messages) : 1;
  v.collective_match = v.collective_calls ? static_cast<double>(collectives_matched) /
                                                static_cast<double>(v.collective_calls)
                                          : 1;
  v.scheduled_match = v.scheduled_messages ? static_cast<double>(scheduled_matched) /
                                                 static_cast<double>(v.scheduled_messages)
                                           : 1;
  v.scheduled_match_traced_assignment = v.scheduled_messages
                                            ? static_cast<double>(scheduled_matched_traced) /
                                                  static_cast<double>(v.scheduled_messages)
                                            : 1;
  v.bytes_error =
      RelError(static_cast<double>(v.predicted_bytes), static_cast<double>(v.real_bytes));
  v.real_compute_s = static_cast<double>(real_cpu) * 1e-9;
  v.predicted_compute_s = static_cast<double>(synth_cpu) * 1e-9;
  v.compute_error = RelError(v.predicted_compute_s, v.real_compute_s);
  v.time_error = RelError(v.predicted_time_s, v.real_simulated_time_s);
  if (v.law_predicted_time_s >= 0) {
    v.time_error_law = RelError(v.law_predicted_time_s, v.real_simulated_time_s);
  }
  if (v.rescheduled) {
    v.time_error_traced_assignment =
        RelError(v.predicted_time_s, v.real_simulated_traced_assignment_s);
  }
  ComparePhases(model, training, real_signature, pred, &v);
  return v;
}

}  // namespace

namespace {

// The model of the training counts. With PredictOptions::allow_remainder, when none builds,
// one with any phase that no model fits left out whatever its share (as AnalyzeForModel
// builds the model that predict and validate are given).
AppModel BuildTrainingModel(const std::vector<phases::Signature>& training,
                            const PredictOptions& options) {
  ModelOptions strict;
  strict.threads = options.threads;
  if (!options.allow_remainder) return BuildModel(training, strict);
  ModelAttempt attempt = TryBuildModel(training, strict);
  if (attempt.model) return std::move(*attempt.model);
  if (attempt.leaving_out) return std::move(*attempt.leaving_out);
  ModelOptions leave_out = strict;
  leave_out.max_dropped_share = 1.0;
  try {
    return BuildModel(training, leave_out);
  } catch (const UserError&) {
    std::rethrow_exception(attempt.error);  // why no model builds, as without the flag
  }
}

}  // namespace

Validation Validate(const std::vector<phases::Signature>& signatures, const TraceSource& real,
                    const sim::Machine& machine, const PredictOptions& options) {
  if (signatures.size() < 4) {
    std::vector<int> c;
    for (const auto& s : signatures) c.push_back(s.nprocs);
    std::sort(c.begin(), c.end());
    throw UserError(
        "validation needs at least 4 process counts (3 to train, the largest to "
        "check), got " +
        std::to_string(signatures.size()) + " (" + JoinCounts(c) +
        "): trace the application at more counts, or check against a run traced at a larger "
        "count with `pas2p validate --against TRACE`");
  }
  std::vector<phases::Signature> training = signatures;
  std::sort(training.begin(), training.end(),
            [](const auto& a, const auto& b) { return a.nprocs < b.nprocs; });
  const int held_out = training.back().nprocs;
  const phases::Signature real_signature = training.back();
  training.pop_back();
  if (real.nprocs() != held_out) {
    throw UserError("the real trace " + real.description() + " has " +
                    std::to_string(real.nprocs()) + " processes, the largest count is " +
                    std::to_string(held_out));
  }
  const AppModel model = BuildTrainingModel(training, options);
  return CompareWithReal(model, real, machine, options, training, real_signature);
}

Validation ValidateAgainst(const std::vector<phases::Signature>& training, const TraceSource& real,
                           const sim::Machine& machine, const PredictOptions& options,
                           const phases::AnalyzeOptions& analyze) {
  std::vector<int> c;
  for (const auto& s : training) c.push_back(s.nprocs);
  std::sort(c.begin(), c.end());
  const std::string origin = real.description();
  // Names without their count: programs built per count (bin/cg.S.64) are one application.
  const std::string app = ApplicationBaseName(real.metadata().application, real.nprocs());
  for (const auto& s : training) {
    if (!app.empty() && !s.application.empty() &&
        ApplicationBaseName(s.application, s.nprocs) != app) {
      throw UserError("the held-out trace " + origin + " is of application \"" + app +
                      "\" but the training trace " + s.trace + " is of \"" + s.application +
                      "\": give traces of one application (same program, input and options)");
    }
  }
  if (!c.empty() && real.nprocs() <= c.back()) {
    throw UserError("the held-out trace " + origin + " has " + std::to_string(real.nprocs()) +
                    " processes, not more than the largest training count (" + JoinCounts(c) +
                    "): a held-out check predicts a larger run than any trained on; use a trace "
                    "at a larger count, or plain `pas2p validate` (which leaves the largest "
                    "count out)");
  }
  const phases::Signature real_signature = phases::AnalyzeTrace(real, analyze);
  Validation v = CompareWithReal(BuildTrainingModel(training, options), real, machine, options,
                                 training, real_signature);
  v.held_out_trace = origin;
  return v;
}

// Draws of the largest traced run's noise in the self-check (SelfCheck::noise_spread): each
// is one more simulation of that trace.
constexpr int kSelfCheckNoiseDraws = 4;

SelfCheck CheckLargestCount(const std::vector<phases::Signature>& signatures,
                            const TraceSource* largest, const sim::Machine& machine,
                            const PredictOptions& options) {
  SelfCheck c;
  if (signatures.size() < 4) {
    c.note = "it needs 4 traced counts (3 to train, the largest to check), " +
             std::to_string(signatures.size()) + " given";
    return c;
  }
  if (!largest) {
    c.note = "the largest count was given as a signature without its trace";
    return c;
  }
  PredictOptions o = options;
  o.noise_draws = kSelfCheckNoiseDraws;
  o.allow_idle = false;
  o.intervals = false;  // only the predicted time is used
  o.quiet_replay = false;
  try {
    const Validation v = Validate(signatures, *largest, machine, o);
    c.done = v.real_simulated_time_s > 0;
    if (!c.done) {
      c.note = "the simulated trace of the largest count takes no time";
      return c;
    }
    c.count = v.count;
    c.training_counts = v.training_counts;
    c.predicted_s = v.predicted_time_s;
    c.real_simulated_s = v.real_simulated_time_s;
    c.error = v.predicted_time_s / v.real_simulated_time_s - 1;
    if (v.noise_draws > 0) {
      c.noise_draws = v.noise_draws;
      c.noise_spread =
          v.noise_mean_s > 0 ? (v.noise_high_s - v.noise_low_s) / (2 * v.noise_mean_s) : 0.0;
    }
  } catch (const UserError& e) {
    // The first line of the reason (`pas2p model` on those counts prints all of it).
    std::string why = e.what();
    if (const auto eol = why.find('\n'); eol != std::string::npos) {
      why = why.substr(0, eol) + " (`pas2p model` on those counts says more)";
    }
    c.note = "the counts below the largest do not make a model: " + why;
  } catch (const sim::SimulationError& e) {
    c.note = std::string("the trace of the largest count did not replay: ") + e.what();
  }
  return c;
}

std::string FormatValidation(const Validation& v, const std::string& application) {
  std::ostringstream out;
  char line[1024];
  out << "validation of " << (application.empty() ? "the application" : application)
      << ": trained on " << JoinCounts(v.training_counts) << ", predicted " << v.count
      << " and compared with " << (v.held_out_trace.empty() ? "its trace" : v.held_out_trace)
      << "\n";
  std::snprintf(line, sizeof line, "  pattern_match  %7.2f%%  (%llu point-to-point messages)\n",
                100 * v.pattern_match, static_cast<unsigned long long>(v.messages));
  out << line;
  if (v.collective_calls > 0) {
    std::snprintf(line, sizeof line,
                  "  collectives    %7.2f%%  (%llu collective calls on a communicator of the same "
                  "members, with the same root)\n",
                  100 * v.collective_match, static_cast<unsigned long long>(v.collective_calls));
    out << line;
  }
  if (v.scheduled_messages > 0) {
    std::snprintf(line, sizeof line,
                  "    of which %llu sent by a self-scheduled master (partners per worker "
                  "compared, not their order): %.2f%% matched\n",
                  static_cast<unsigned long long>(v.scheduled_messages), 100 * v.scheduled_match);
    out << line;
    if (v.scheduled_match_floor >= 0) {
      std::snprintf(line, sizeof line,
                    "    peers floor: the real trace with its compute noise shuffled in time "
                    "(%d draws) hands %.2f%% of them to the same workers as often: the timing "
                    "noise alone moves the rest\n",
                    v.noise_draws, 100 * v.scheduled_match_floor);
      out << line;
    }
    if (v.rescheduled) {
      std::snprintf(line, sizeof line,
                    "    self-scheduled: the real run's workers computed %.6g s, %.6g s each if "
                    "balanced over %lld; its busiest worker computed %.6g s in the traced run, "
                    "%.6g s with its %llu tasks handed out by the simulation (the reference "
                    "below; against the traced destinations %.2f%% matched)\n",
                    v.workers_cpu_s,
                    v.workers_cpu_s / static_cast<double>(std::max<std::int64_t>(1, v.count - 1)),
                    static_cast<long long>(v.count - 1), v.busiest_worker_cpu_s,
                    v.rescheduled_busiest_worker_cpu_s,
                    static_cast<unsigned long long>(v.rescheduled_tasks),
                    100 * v.scheduled_match_traced_assignment);
    } else {
      std::snprintf(line, sizeof line,
                    "    self-scheduled: the real run's workers computed %.6g s, %.6g s each if "
                    "balanced over %lld; its busiest worker computed %.6g s (the simulation of "
                    "the real trace keeps the traced assignment of tasks: ",
                    v.workers_cpu_s,
                    v.workers_cpu_s / static_cast<double>(std::max<std::int64_t>(1, v.count - 1)),
                    static_cast<long long>(v.count - 1), v.busiest_worker_cpu_s);
      out << line << v.reschedule_note << ")\n";
      line[0] = '\0';
    }
    out << line;
  }
  std::snprintf(line, sizeof line, "  bytes_error    %7.2f%%  (predicted %llu B, real %llu B)\n",
                100 * v.bytes_error, static_cast<unsigned long long>(v.predicted_bytes),
                static_cast<unsigned long long>(v.real_bytes));
  out << line;
  std::snprintf(line, sizeof line,
                "  compute_error  %7.2f%%  (predicted %.6g s, real %.6g s CPU)\n",
                100 * v.compute_error, v.predicted_compute_s, v.real_compute_s);
  out << line;
  if (v.rescheduled) {
    std::snprintf(line, sizeof line,
                  "  time_error     %7.2f%%  (predicted %.6g s, simulated real trace with its "
                  "tasks rescheduled %.6g s)\n",
                  100 * v.time_error, v.predicted_time_s, v.real_simulated_time_s);
    out << line;
    std::snprintf(line, sizeof line,
                  "    traced assignment %7.2f%%  (the simulated real trace with the traced "
                  "run's assignment of tasks: %.6g s)\n",
                  100 * v.time_error_traced_assignment, v.real_simulated_traced_assignment_s);
  } else {
    std::snprintf(line, sizeof line,
                  "  time_error     %7.2f%%  (predicted %.6g s, simulated real trace %.6g s)\n",
                  100 * v.time_error, v.predicted_time_s, v.real_simulated_time_s);
  }
  out << line;
  if (v.law_predicted_time_s >= 0) {
    std::snprintf(line, sizeof line,
                  "    remainder's law %7.2f%%  (predicted %.6g s with the remainder's part in "
                  "phases every count has following its law over the counts, not its kept "
                  "share)\n",
                  100 * v.time_error_law, v.law_predicted_time_s);
    out << line;
  }
  std::snprintf(line, sizeof line,
                "  interval       [%.6g s, %.6g s]: the simulated real trace is %s it\n",
                v.interval_low_s, v.interval_high_s,
                v.in_interval                                ? "inside"
                : v.real_simulated_time_s < v.interval_low_s ? "below"
                                                             : "above");
  out << line;
  if (v.efficiency_done) {
    out << "  efficiency     predicted: " << sim::FormatEfficiency(v.predicted_efficiency)
        << "\n                 real:      " << sim::FormatEfficiency(v.real_efficiency)
        << "\n                 (POP metrics of the prediction and of the simulated real trace)\n";
  }
  if (const std::string check = SelfCheckLine(v.self_check); !check.empty()) {
    out << "  self-check     " << check << "\n";
  }
  if (v.unmodelled_share > 0 || v.unmodelled_bytes_share > 0) {
    std::snprintf(line, sizeof line,
                  "  remainder      %7.2f%%  of the largest training run is in phases the model "
                  "leaves out (kept at its traced share in the time, not in the other figures), "
                  "%.2f%% of its bytes\n",
                  100 * v.unmodelled_share, 100 * v.unmodelled_bytes_share);
    out << line;
  }
  if (v.noise_draws > 0) {
    std::snprintf(line, sizeof line,
                  "  noise_floor    %7.2f%%  (the real trace with each rank's compute noise "
                  "shuffled in time, %d draws: %.6g s mean, %.6g to %.6g s)\n",
                  100 * v.noise_floor, v.noise_draws, v.noise_mean_s, v.noise_low_s,
                  v.noise_high_s);
    out << line;
  } else {
    out << "  noise_floor    " << v.noise_note << "\n";
  }
  if (v.real_quiet_s >= 0) {
    std::snprintf(line, sizeof line,
                  "  quiet          %7.2f%%  (both without the compute noise that varies in time: "
                  "predicted %.6g s, the real trace with each rank's bursts at their mean %.6g "
                  "s)\n",
                  100 * v.quiet_error, v.predicted_quiet_s, v.real_quiet_s);
    out << line;
  }
  if (!v.phases.empty()) {
    out << "per phase (CPU summed over ranks and occurrences; predicted time = the phase's part "
           "of the prediction; traced share = of the real run's wall time):\n";
    std::snprintf(line, sizeof line, "  %-5s %9s %9s %12s %12s %8s %12s %8s  %s\n", "phase",
                  "weight", "real", "CPU pred", "CPU real", "error", "time pred", "traced",
                  "what it does");
    out << line;
    for (const PhaseCheck& c : v.phases) {
      char real_w[32] = "-", real_cpu[32] = "-", err[32] = "-", share[32] = "-";
      if (c.real_weight >= 0) std::snprintf(real_w, sizeof real_w, "%.6g", c.real_weight);
      if (c.real_compute_s >= 0)
        std::snprintf(real_cpu, sizeof real_cpu, "%.6g s", c.real_compute_s);
      if (c.compute_error >= 0) std::snprintf(err, sizeof err, "%.1f%%", 100 * c.compute_error);
      if (c.real_traced_share >= 0)
        std::snprintf(share, sizeof share, "%.1f%%", 100 * c.real_traced_share);
      char pred_cpu[32];
      std::snprintf(pred_cpu, sizeof pred_cpu, "%.6g s", c.predicted_compute_s);
      std::snprintf(line, sizeof line, "  %-5d %9.6g %9s %12s %12s %8s %12s %8s  ", c.phase,
                    c.weight, real_w, pred_cpu, real_cpu, err,
                    FormatSeconds(c.predicted_time_s).c_str(), share);
      out << line << c.description << "\n";
    }
  }
  if (!v.phases_note.empty()) out << "  note: " << v.phases_note << "\n";
  for (const auto& w : v.model_warnings) out << "  warning: " << w << "\n";
  return out.str();
}

namespace {

// A text field of a CSV line, quoted when it holds a comma, a quote or a line break.
std::string CsvText(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string ValidationToCsv(const Validation& v, const std::string& application) {
  std::string counts;
  for (const auto c : v.training_counts) counts += (counts.empty() ? "" : " ") + std::to_string(c);
  std::string line = CsvText(application) + "," + std::to_string(v.count) + "," + counts + "," +
                     CsvText(v.held_out_trace);
  for (double x :
       {v.pattern_match, v.collective_match, v.bytes_error, v.compute_error, v.time_error,
        v.noise_draws > 0 ? v.noise_floor : -1.0, v.real_quiet_s >= 0 ? v.quiet_error : -1.0,
        v.predicted_time_s, v.real_simulated_time_s, v.interval_low_s, v.interval_high_s}) {
    line += "," + CsvNumber(x);
  }
  line += v.in_interval ? ",1" : ",0";
  return std::string(kValidationCsvColumns) + "\n" + line + "\n";
}

std::string ValidationToJson(const Validation& v, const std::string& application) {
  json j{
      {"application", application},
      {"count", v.count},
      {"held_out_trace", v.held_out_trace},
      {"training_counts", v.training_counts},
      {"messages", v.messages},
      {"pattern_match", v.pattern_match},
      {"collective_calls", v.collective_calls},
      {"collective_match", v.collective_match},
      {"scheduled_messages", v.scheduled_messages},
      {"scheduled_match", v.scheduled_match},
      {"workers_cpu_s", v.workers_cpu_s},
      {"busiest_worker_cpu_s", v.busiest_worker_cpu_s},
      {"bytes_error", v.bytes_error},
      {"compute_error", v.compute_error},
      {"time_error", v.time_error},
      {"time_error_remainder_law",
       v.law_predicted_time_s >= 0 ? json(v.time_error_law) : json(nullptr)},
      {"predicted_time_remainder_law_s",
       v.law_predicted_time_s >= 0 ? json(v.law_predicted_time_s) : json(nullptr)},
      {"predicted_time_s", v.predicted_time_s},
      {"real_simulated_time_s", v.real_simulated_time_s},
      {"interval_s", json::array({v.interval_low_s, v.interval_high_s})},
      {"in_interval", v.in_interval},
      {"self_check", SelfCheckJson(v.self_check)},
      {"unmodelled_share", v.unmodelled_share},
      {"unmodelled_bytes_share", v.unmodelled_bytes_share},
      {"noise_draws", v.noise_draws},
      {"noise_floor", v.noise_draws > 0 ? json(v.noise_floor) : json(nullptr)},
      {"noise_time_s",
       v.noise_draws > 0 ? json::array({v.noise_low_s, v.noise_high_s}) : json(nullptr)},
      {"noise_mean_s", v.noise_draws > 0 ? json(v.noise_mean_s) : json(nullptr)},
      {"noise_note", v.noise_note},
      {"quiet_error", v.real_quiet_s >= 0 ? json(v.quiet_error) : json(nullptr)},
      {"predicted_quiet_s", v.real_quiet_s >= 0 ? json(v.predicted_quiet_s) : json(nullptr)},
      {"real_quiet_s", v.real_quiet_s >= 0 ? json(v.real_quiet_s) : json(nullptr)},
      {"predicted_bytes", v.predicted_bytes},
      {"real_bytes", v.real_bytes},
      {"predicted_compute_s", v.predicted_compute_s},
      {"real_compute_s", v.real_compute_s},
      {"efficiency", v.efficiency_done ? json{{"predicted", EfficiencyJson(v.predicted_efficiency)},
                                              {"real", EfficiencyJson(v.real_efficiency)}}
                                       : json(nullptr)}};
  if (v.scheduled_messages > 0) {  // self-scheduled runs only: other outputs unchanged
    j["rescheduled"] = v.rescheduled;
    j["reschedule_note"] = v.reschedule_note;
    j["scheduled_match_traced_assignment"] = v.scheduled_match_traced_assignment;
    j["scheduled_match_floor"] =
        v.scheduled_match_floor >= 0 ? json(v.scheduled_match_floor) : json(nullptr);
    j["rescheduled_tasks"] = v.rescheduled_tasks;
    j["rescheduled_busiest_worker_cpu_s"] =
        v.rescheduled ? json(v.rescheduled_busiest_worker_cpu_s) : json(nullptr);
    j["real_simulated_traced_assignment_s"] =
        v.rescheduled ? json(v.real_simulated_traced_assignment_s) : json(nullptr);
    j["time_error_traced_assignment"] =
        v.rescheduled ? json(v.time_error_traced_assignment) : json(nullptr);
  }
  json phases = json::array();
  auto or_null = [](double x) { return x >= 0 ? json(x) : json(nullptr); };
  for (const PhaseCheck& c : v.phases) {
    phases.push_back(json{{"phase", c.phase},
                          {"description", c.description},
                          {"weight", c.weight},
                          {"real_weight", or_null(c.real_weight)},
                          {"predicted_compute_s", c.predicted_compute_s},
                          {"real_compute_s", or_null(c.real_compute_s)},
                          {"compute_error", or_null(c.compute_error)},
                          {"predicted_time_s", c.predicted_time_s},
                          {"real_traced_share", or_null(c.real_traced_share)}});
  }
  j["phases"] = phases;
  j["phases_note"] = v.phases_note;
  j["model_warnings"] = v.model_warnings;
  return j.dump(2) + "\n";
}

}  // namespace pas2p::synthesis
