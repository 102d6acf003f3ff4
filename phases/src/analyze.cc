#include "pas2p/phases/analyze.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "compressor.h"
#include "pas2p/core/error.h"
#include "pas2p/core/parallel.h"
#include "pas2p/core/trace.h"

namespace pas2p::phases {

using internal::AddRank;
using internal::ComputeOfRun;
using internal::Instance;
using internal::Leaf;
using internal::OccurrenceSample;
using internal::RankCompressor;
using internal::RunCompute;
using internal::SimilarRuns;

bool AnalyzeOptions::IsValid(std::string* error) const {
  auto fail = [&](const std::string& m) {
    if (error) *error = m;
    return false;
  };
  if (!(relevance_threshold > 0 && relevance_threshold <= 1)) {
    return fail("the relevance threshold must be in (0, 1], got " +
                std::to_string(relevance_threshold));
  }
  if (!(similarity >= 0 && similarity < 10)) {
    return fail("the compute similarity must be in [0, 10), got " + std::to_string(similarity));
  }
  if (!(compute_floor_ns >= 0)) return fail("the compute floor must be >= 0 ns");
  if (!(loop_compute_similarity >= 0 && loop_compute_similarity < 10)) {
    return fail("the loop compute similarity must be in [0, 10), got " +
                std::to_string(loop_compute_similarity));
  }
  if (!(bytes_floor >= 0)) return fail("the message size floor must be >= 0 bytes");
  if (!(bytes_tolerance >= 0 && bytes_tolerance < 10)) {
    return fail("the message size tolerance must be in [0, 10), got " +
                std::to_string(bytes_tolerance));
  }
  if (window < 1 || window > 100000) {
    return fail("the loop window must be in [1, 100000], got " + std::to_string(window));
  }
  return true;
}

namespace {

using RankInstances = std::vector<std::optional<Instance>>;  // one slot per rank

void MergeInstance(Instance* into, const Instance& later) {
  if (into->leaves.size() == later.leaves.size()) {
    for (std::size_t i = 0; i < into->leaves.size(); ++i) into->leaves[i].Merge(later.leaves[i]);
  }
  into->weight += later.weight;
  into->time_ns += later.time_ns;
  into->global_ns += later.global_ns;
  into->dropped_calls += later.dropped_calls;
  into->first_step = std::min(into->first_step, later.first_step);
  into->last_step = std::max(into->last_step, later.last_step);
  into->first_wall_ns = std::min(into->first_wall_ns, later.first_wall_ns);
}

bool HasRepetition(const std::vector<Instance>& seq) {
  for (const Instance& inst : seq) {
    if (inst.weight > 1.5) return true;
  }
  return false;
}

// The number of phases (or groups) per rank that the ranks are matched against: the most
// common one among the ranks whose streams repeat (ranks that found no loop, e.g. workers
// that got too few tasks, say little about the structure), or among all ranks if none
// repeats; ties go to the larger number.
std::size_t ReferenceLength(const std::vector<std::size_t>& lengths,
                            const std::vector<bool>& repeats) {
  bool any = false;
  for (bool b : repeats) any = any || b;
  std::map<std::size_t, std::size_t> counts;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    if (!any || repeats[r]) ++counts[lengths[r]];
  }
  std::size_t common = 0, best = 0;
  for (const auto& [len, count] : counts) {
    if (count >= best) {
      best = count;
      common = len;
    }
  }
  return common;
}

bool SameLengths(const std::vector<std::vector<Instance>>& seqs) {
  for (const auto& s : seqs) {
    if (s.size() != seqs.front().size()) return false;
  }
  return true;
}

// Per rank: instances of equal structure and similar compute are one phase of that rank,
// wherever they occur (a loop split by one noisy iteration, or the same loop run again
// later), kept in the order of first occurrence. `merged_into[i]`: the index, in the result,
// of the instance that instance i joined.
void MergeEqualInstances(std::vector<Instance>* seq, const AnalyzeOptions& o,
                         std::vector<std::size_t>* merged_into) {
  std::vector<Instance> out;
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash;
  merged_into->clear();
  for (Instance& inst : *seq) {
    bool merged = false;
    auto [lo, hi] = by_hash.equal_range(inst.hash);
    for (auto it = lo; it != hi && !merged; ++it) {
      Instance& prev = out[it->second];
      if (prev.leaves.size() != inst.leaves.size() || prev.dropped_calls || inst.dropped_calls) {
        continue;
      }
      if (!SimilarRuns(ComputeOfRun(prev), ComputeOfRun(inst), o)) continue;
      MergeInstance(&prev, inst);
      merged_into->push_back(it->second);
      merged = true;
    }
    if (!merged) {
      merged_into->push_back(out.size());
      by_hash.emplace(inst.hash, out.size());
      out.push_back(std::move(inst));
    }
  }
  *seq = std::move(out);
}

// Whether every rank has the same instances, position by position: the same operations in
// the same order (their peers differ: a rank's neighbours are at its own displacements),
// none dropped. The compressors then folded every rank's calls alike.
bool SameInstances(const std::vector<std::vector<Instance>>& seqs) {
  if (seqs.empty() || !SameLengths(seqs)) return false;
  for (std::size_t k = 0; k < seqs.front().size(); ++k) {
    const Instance& first = seqs.front()[k];
    for (const auto& s : seqs) {
      if (s[k].leaves.size() != first.leaves.size() || s[k].dropped_calls != 0) return false;
      for (std::size_t i = 0; i < first.leaves.size(); ++i) {
        if (s[k].leaves[i].kind != first.leaves[i].kind) return false;
      }
    }
  }
  return true;
}

// Every rank has as many instances, none with dropped calls, and the same ones repeat on
// every rank: instance k has the structure (hash) of instance j < k on one rank exactly when
// it does on all. The ranks' calls may differ (a grid's boundary ranks have fewer partners),
// but their runs correspond one to one.
bool SameRepeats(const std::vector<std::vector<Instance>>& seqs) {
  if (seqs.empty() || !SameLengths(seqs)) return false;
  // Per rank: each instance's first instance of the same structure.
  auto labels = [](const std::vector<Instance>& s) {
    std::unordered_map<std::uint64_t, std::size_t> first;
    std::vector<std::size_t> out;
    out.reserve(s.size());
    for (std::size_t k = 0; k < s.size(); ++k)
      out.push_back(first.try_emplace(s[k].hash, k).first->second);
    return out;
  };
  const std::vector<std::size_t> ref = labels(seqs.front());
  for (const auto& s : seqs) {
    for (const Instance& inst : s) {
      if (inst.dropped_calls != 0) return false;
    }
    if (labels(s) != ref) return false;
  }
  return true;
}

// MergeEqualInstances for all ranks. When every rank has the same instances, or its runs
// correspond one to one (SameRepeats), a merge is decided once for all of them, on the
// compute summed over the ranks: each rank deciding on its own compute (which differs from
// rank to rank, more so on oversubscribed runs) would merge the same runs on some ranks and
// not on others, and ranks with different phases can only be matched by logical time.
// Otherwise each rank decides alone.
void MergeEqualInstancesOfRanks(std::vector<std::vector<Instance>>* seqs, const AnalyzeOptions& o,
                                std::vector<std::vector<std::size_t>>* merged_into) {
  merged_into->assign(seqs->size(), {});
  if (!SameInstances(*seqs) && !SameRepeats(*seqs)) {
    for (std::size_t r = 0; r < seqs->size(); ++r) {
      MergeEqualInstances(&(*seqs)[r], o, &(*merged_into)[r]);
    }
    return;
  }
  const std::size_t n = seqs->size();
  std::vector<std::vector<Instance>> out(n);
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash;
  auto summed = [&](const std::vector<std::vector<Instance>>& of, std::size_t k) {
    RunCompute sum = ComputeOfRun(of[0][k]);
    for (std::size_t r = 1; r < n; ++r) AddRank(&sum, of[r][k]);
    return sum;
  };
  for (std::size_t k = 0; k < seqs->front().size(); ++k) {
    const Instance& inst = seqs->front()[k];
    const RunCompute cpu = summed(*seqs, k);
    std::optional<std::size_t> into;
    auto [lo, hi] = by_hash.equal_range(inst.hash);
    for (auto it = lo; it != hi && !into; ++it) {
      // The same structure on every rank (rank 0's hash found the candidate).
      bool same = true;
      for (std::size_t r = 0; r < n && same; ++r) {
        const Instance& prev = out[r][it->second];
        same = prev.hash == (*seqs)[r][k].hash && prev.leaves.size() == (*seqs)[r][k].leaves.size();
      }
      if (same && SimilarRuns(summed(out, it->second), cpu, o)) {
        into = it->second;
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      Instance& mine = (*seqs)[r][k];
      if (into) {
        MergeInstance(&out[r][*into], mine);
        (*merged_into)[r].push_back(*into);
      } else {
        (*merged_into)[r].push_back(out[r].size());
        out[r].push_back(std::move(mine));
      }
    }
    if (!into) by_hash.emplace(out.front().back().hash, out.front().size() - 1);
  }
  *seqs = std::move(out);
}

std::int64_t Overlap(const Instance& a, const Instance& b) {
  return std::min(a.last_step, b.last_step) - std::max(a.first_step, b.first_step);
}

constexpr std::size_t kUnpaired = static_cast<std::size_t>(-1);

// For each phase of `seq`, the phase of `ref` it is paired with (kUnpaired: none): the most
// pairs, in order on both sides, of phases with the same weight that meet in logical time
// (a longest common subsequence). Sequences whose product of lengths exceeds a few million
// are not paired (the cost), and all their phases go by overlap.
std::vector<std::size_t> MatchInOrder(const std::vector<Instance>& ref,
                                      const std::vector<Instance>& seq) {
  const std::size_t m = ref.size(), k = seq.size();
  std::vector<std::size_t> paired(k, kUnpaired);
  if (m == 0 || k == 0 || m * k > 4'000'000) return paired;
  auto pairs = [&](std::size_t i, std::size_t j) {
    return ref[i].weight == seq[j].weight && Overlap(ref[i], seq[j]) >= 0;
  };
  // lcs[i][j]: pairs among ref[i..] and seq[j..].
  std::vector<std::vector<std::uint32_t>> lcs(m + 1, std::vector<std::uint32_t>(k + 1, 0));
  for (std::size_t i = m; i-- > 0;) {
    for (std::size_t j = k; j-- > 0;) {
      lcs[i][j] = std::max(lcs[i + 1][j], lcs[i][j + 1]);
      if (pairs(i, j)) lcs[i][j] = std::max(lcs[i][j], lcs[i + 1][j + 1] + 1);
    }
  }
  for (std::size_t i = 0, j = 0; i < m && j < k;) {
    if (pairs(i, j) && lcs[i][j] == lcs[i + 1][j + 1] + 1) {
      paired[j] = i;
      ++i;
      ++j;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  return paired;
}

// Whether every call of `inst` is a collective or makes or frees a communicator (calls that
// every member of their communicator makes, so a member that lacks them in a phase the
// others make them in leaves those waiting).
bool OnlyCollectives(const Instance& inst) {
  if (inst.leaves.empty() || inst.dropped_calls != 0) return false;
  for (const Leaf& l : inst.leaves) {
    if (!IsCollective(l.kind) && l.kind != EventKind::kCommCreate &&
        l.kind != EventKind::kCommFree) {
      return false;
    }
  }
  return true;
}

using CallKey = std::pair<EventKind, CommId>;

std::map<CallKey, std::int64_t> CollectiveCalls(const Instance& inst) {
  std::map<CallKey, std::int64_t> calls;
  for (const Leaf& l : inst.leaves) ++calls[{l.kind, l.comm}];
  return calls;
}

// How many runs of `inst` one occurrence of `slot` holds (a loop of the rank's own that ran m
// times in every occurrence of the phase around it); 0 when that is not a whole number.
std::int64_t CopiesPerOccurrence(const Instance& slot, const Instance& inst) {
  if (!(slot.weight > 0) || !(inst.weight > 0) || slot.dropped_calls != 0) return 0;
  const double m = inst.weight / slot.weight;
  const double whole = std::round(m);
  return whole >= 1 && std::fabs(m - whole) < 1e-9 ? static_cast<std::int64_t>(whole) : 0;
}

// Whether `copies` runs of rank r's collectives `inst` are calls that the other ranks make in
// the aligned phase `step` and r lacks there: of each call (kind and communicator) that
// another rank makes in the phase, r would make no more than the rank that makes most, and
// at least one is such a call. (Calls on communicators no other rank uses in the phase, such
// as r's own single-member splits, neither count nor stand in the way.)
bool FillsShortfall(const RankInstances& step, std::size_t r, const Instance& inst,
                    std::int64_t copies) {
  std::map<CallKey, std::int64_t> most;
  for (std::size_t s = 0; s < step.size(); ++s) {
    if (s == r || !step[s]) continue;
    for (const auto& [key, n] : CollectiveCalls(*step[s])) most[key] = std::max(most[key], n);
  }
  std::map<CallKey, std::int64_t> mine;
  if (step[r]) mine = CollectiveCalls(*step[r]);
  bool fills = false;
  for (const auto& [key, n] : CollectiveCalls(inst)) {
    const auto it = most.find(key);
    if (it == most.end()) continue;
    if (mine[key] + n * copies > it->second) return false;
    fills = true;
  }
  return fills;
}

// Whether no rank but r makes any of `inst`'s calls (kind and communicator) in `step`.
bool Private(const RankInstances& step, std::size_t r, const Instance& inst) {
  const std::map<CallKey, std::int64_t> calls = CollectiveCalls(inst);
  for (std::size_t s = 0; s < step.size(); ++s) {
    if (s == r || !step[s]) continue;
    for (const Leaf& l : step[s]->leaves) {
      if (calls.count({l.kind, l.comm})) return false;
    }
  }
  return true;
}

// Puts `copies` runs of `inst`'s calls into `slot` where they fall in logical time, each copy
// with its share of the occurrences and of the time (as a loop of the rank's own is unrolled).
void AppendCalls(Instance* slot, const Instance& inst, std::int64_t copies) {
  std::vector<Leaf> calls;
  calls.reserve(inst.leaves.size() * static_cast<std::size_t>(copies));
  for (std::int64_t i = 0; i < copies; ++i) {
    for (const Leaf& l : inst.leaves) {
      calls.push_back(l);
      Leaf& c = calls.back();
      if (copies > 1) {
        c.occurrences = l.occurrences.Every(copies, i);
        c.KeepEvery(copies, i);
      }
      c.time_ns /= static_cast<double>(copies);
    }
  }
  auto at = slot->leaves.begin();
  while (at != slot->leaves.end() && at->first_step <= inst.first_step) ++at;
  slot->leaves.insert(at, calls.begin(), calls.end());
  slot->hash =
      internal::Mix(slot->hash ^ internal::Mix(inst.hash + static_cast<std::uint64_t>(copies)));
  slot->time_ns += inst.time_ns;
  slot->global_ns += inst.global_ns;
  slot->first_step = std::min(slot->first_step, inst.first_step);
  slot->last_step = std::max(slot->last_step, inst.last_step);
  slot->first_wall_ns = std::min(slot->first_wall_ns, inst.first_wall_ns);
}

// Aligns the ranks' phases into global phases: by position when every rank has the same
// number of them; otherwise against the rank whose number of phases is the most common. A
// rank's phases are first paired in order with the reference's of the same weight that they
// meet in logical time (the most such pairs, MatchInOrder): a rank whose last calls split
// into other phases (a boundary rank of NAS LU's grid, whose final exchanges differ) keeps
// every earlier phase with its own. Time overlap alone pairs them wrongly where phases
// interleave inside a loop: the 9 right-hand-side exchanges of each SSOR step lie within
// the span of the 341 sweep planes around them, so they went to the sweep's phase, and the
// calls of the phase with less time were lost. The other phases go to the reference phase
// they overlap most in logical time (ties: the closest weight), their time counted there.
// `reference`: that rank (0 when aligned by position); its phase k is aligned phase k.
std::vector<RankInstances> Align(std::vector<std::vector<Instance>> seqs,
                                 std::vector<std::string>* warnings, std::size_t* reference) {
  const std::size_t n = seqs.size();
  std::vector<RankInstances> out;
  *reference = 0;
  if (SameLengths(seqs)) {
    const std::size_t len = seqs.front().size();
    out.resize(len, RankInstances(n));
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t k = 0; k < len; ++k) out[k][r] = std::move(seqs[r][k]);
    }
    return out;
  }
  std::vector<std::size_t> lengths;
  std::vector<bool> repeats;
  for (const auto& s : seqs) {
    lengths.push_back(s.size());
    repeats.push_back(HasRepetition(s));
  }
  const std::size_t common = ReferenceLength(lengths, repeats);
  std::size_t ref = 0;
  while (seqs[ref].size() != common) ++ref;
  *reference = ref;
  std::vector<int> odd;
  for (std::size_t r = 0; r < n; ++r) {
    if (seqs[r].size() != common) odd.push_back(static_cast<int>(r));
  }
  std::string list;
  for (std::size_t i = 0; i < odd.size() && i < 8; ++i) {
    list += (i ? ", " : "") + std::to_string(odd[i]);
  }
  if (odd.size() > 8) list += ", ...";
  warnings->push_back("the loop structure of rank" + std::string(odd.size() > 1 ? "s " : " ") +
                      list + " differs from the other ranks' (" + std::to_string(common) +
                      " phases per rank); their phases were matched in order with rank " +
                      std::to_string(ref) +
                      "'s where the weights agree and they meet in logical time, the others "
                      "by logical time");
  out.resize(common, RankInstances(n));
  for (std::size_t k = 0; k < common; ++k) out[k][ref] = seqs[ref][k];
  // An unpaired phase of a rank that lands where the rank has a phase already counts there as
  // time: the phase that carries most of the time represents the rank, the other's time
  // stays counted.
  auto MergeTime = [](std::optional<Instance>* slot, Instance inst) {
    if (inst.time_ns > (*slot)->time_ns) {
      const double t = (*slot)->time_ns;
      const double g = (*slot)->global_ns;
      *slot = std::move(inst);
      (*slot)->time_ns += t;
      (*slot)->global_ns += g;
    } else {
      (*slot)->time_ns += inst.time_ns;
      (*slot)->global_ns += inst.global_ns;
    }
  };
  struct Pending {
    std::size_t rank = 0;
    std::size_t target = 0;
    Instance inst;
  };
  std::vector<Pending> pending;
  for (std::size_t r = 0; r < n; ++r) {
    if (r == ref) continue;
    const std::vector<std::size_t> paired = MatchInOrder(seqs[ref], seqs[r]);
    for (std::size_t j = 0; j < seqs[r].size(); ++j) {
      if (paired[j] == kUnpaired) continue;
      out[paired[j]][r] = std::move(seqs[r][j]);
    }
    for (std::size_t j = 0; j < seqs[r].size(); ++j) {
      if (paired[j] != kUnpaired) continue;
      Instance& inst = seqs[r][j];
      std::size_t target = 0;
      std::int64_t best_overlap = INT64_MIN;
      double best_dw = 0;
      for (std::size_t k = 0; k < common; ++k) {
        const Instance& refi = *out[k][ref];
        const std::int64_t ov = Overlap(refi, inst);
        const double dw = std::fabs(refi.weight - inst.weight);
        if (ov > best_overlap || (ov == best_overlap && dw < best_dw)) {
          best_overlap = ov;
          best_dw = dw;
          target = k;
        }
      }
      auto& slot = out[target][r];
      if (!slot) {
        slot = std::move(inst);
      } else if (OnlyCollectives(inst) && CopiesPerOccurrence(*slot, inst) > 0) {
        pending.push_back({r, target, std::move(inst)});  // decided once every rank is in
      } else {
        MergeTime(&slot, std::move(inst));
      }
    }
  }
  // A rank's own run of collectives that the others make inside this phase (QE's rank 0
  // makes communicators of its own between an allreduce and two barriers, so its barriers
  // were a phase apart): its calls join the phase, or the others wait for them there.
  // Those that fill a shortfall first, before another run can take the rank's place.
  std::vector<bool> appended(pending.size(), false);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    auto& slot = out[p.target][p.rank];
    const std::int64_t copies = CopiesPerOccurrence(*slot, p.inst);
    if (copies > 0 && FillsShortfall(out[p.target], p.rank, p.inst, copies)) {
      AppendCalls(&*slot, p.inst, copies);
      appended[i] = true;
    }
  }
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (appended[i]) continue;
    Pending& p = pending[i];
    auto& slot = out[p.target][p.rank];
    if (Private(out[p.target], p.rank, p.inst)) {
      // Collectives no other rank makes in the phase (on the rank's own communicators):
      // the rank's time, never its place in the phase.
      slot->time_ns += p.inst.time_ns;
      slot->global_ns += p.inst.global_ns;
    } else {
      MergeTime(&slot, std::move(p.inst));
    }
  }
  // The same where the ranks that make such a run are the reference's: a phase of the
  // reference (and of the ranks paired with it) that the others lack, whose collectives
  // the others make in the phase before it, joins that phase.
  for (std::size_t k = 1; k < common; ++k) {
    std::vector<std::size_t> have;
    for (std::size_t r = 0; r < n; ++r) {
      if (out[k][r]) have.push_back(r);
    }
    if (have.size() == n || have.empty()) continue;
    // The nearest phase before it that a rank without it has.
    std::size_t t = k;
    bool found = false;
    while (!found && t > 0) {
      --t;
      for (std::size_t r = 0; r < n && !found; ++r) found = out[t][r] && !out[k][r];
    }
    if (!found) continue;
    std::vector<std::int64_t> copies;
    for (std::size_t r : have) {
      const Instance& inst = *out[k][r];
      const std::int64_t c = out[t][r] ? CopiesPerOccurrence(*out[t][r], inst) : 0;
      if (c == 0 || !OnlyCollectives(inst) || !FillsShortfall(out[t], r, inst, c)) break;
      copies.push_back(c);
    }
    if (copies.size() != have.size()) continue;
    for (std::size_t i = 0; i < have.size(); ++i) {
      AppendCalls(&*out[t][have[i]], *out[k][have[i]], copies[i]);
      out[k][have[i]].reset();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Self-scheduled runs (master/worker).

// The structure of a call regardless of its statistics: what two workers' task calls share.
bool SameCall(const Leaf& a, const Leaf& b) {
  return a.kind == b.kind && a.peer == b.peer && a.recv_peer == b.recv_peer && a.comm == b.comm &&
         a.root == b.root && a.root_step == b.root_step && a.requests == b.requests;
}

bool MatchesAt(const std::vector<Leaf>& leaves, std::size_t at, const std::vector<Leaf>& body) {
  if (at + body.size() > leaves.size()) return false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (!SameCall(leaves[at + i], body[i])) return false;
  }
  return true;
}

// A run of a rank's calls with weight 1 (calls outside loops), as an instance. `global_ns`
// is its share of the global time of the instance it came from.
Instance FlatInstance(const std::vector<Leaf>& leaves, double global_ns) {
  Instance inst;
  inst.weight = 1;
  inst.hash = internal::Mix(0x50484153);
  inst.first_step = leaves.front().first_step;
  inst.last_step = leaves.front().last_step;
  inst.first_wall_ns = leaves.front().first_wall_ns;
  for (const Leaf& l : leaves) {
    inst.hash = internal::Mix(inst.hash ^ internal::Mix(l.hash + 0x9E37));
    inst.time_ns += l.time_ns;
    inst.first_step = std::min(inst.first_step, l.first_step);
    inst.last_step = std::max(inst.last_step, l.last_step);
    inst.first_wall_ns = std::min(inst.first_wall_ns, l.first_wall_ns);
  }
  inst.leaves = leaves;
  inst.global_ns = global_ns;
  return inst;
}

// Where a master's loop of replies starts as it runs: at its wait for a result (its
// wildcard completion or receive). The compressor may have begun the loop earlier (its
// first calls post the receive of the hand-out's last task).
std::size_t ReplyLoopStart(const Instance& loop) {
  std::size_t start = 0;
  while (start < loop.leaves.size() && !IsCompletion(loop.leaves[start].kind) &&
         !(loop.leaves[start].kind == EventKind::kRecv &&
           loop.leaves[start].disp == internal::kAnyDisp)) {
    ++start;
  }
  return start;
}

// Whether `next` starts with `loop`'s calls from `start` on (the rest of its last run), with
// something before `start` to move.
bool RestContinues(const Instance& loop, std::size_t start, const Instance& next) {
  if (start == 0 || start >= loop.leaves.size()) return false;
  for (std::size_t i = start; i < loop.leaves.size(); ++i) {
    const std::size_t k = i - start;
    if (k >= next.leaves.size() || next.leaves[k].kind != loop.leaves[i].kind ||
        next.leaves[k].disp != loop.leaves[i].disp || next.leaves[k].comm != loop.leaves[i].comm) {
      return false;
    }
  }
  return true;
}

// Takes `runs` runs of `loop` apart at `start`: their first calls (before `start`) and
// their rest come back as two flat instances of weight `runs` (for the hand-out before the
// loop and the end after it), and the loop, `runs` iterations shorter, starts at `start`.
std::pair<Instance, Instance> SplitReplyLoop(Instance* loop, std::size_t start, double runs) {
  const double part = runs / loop->weight;
  std::vector<Leaf> head(loop->leaves.begin(),
                         loop->leaves.begin() + static_cast<std::ptrdiff_t>(start));
  std::vector<Leaf> tail(loop->leaves.begin() + static_cast<std::ptrdiff_t>(start),
                         loop->leaves.end());
  double head_ns = 0, tail_ns = 0;
  for (Leaf& l : head) head_ns += (l.time_ns *= part);
  for (Leaf& l : tail) tail_ns += (l.time_ns *= part);
  const double g = loop->time_ns > 0 ? loop->global_ns / loop->time_ns : 0;
  Instance h = FlatInstance(head, head_ns * g), t = FlatInstance(tail, tail_ns * g);
  h.weight = t.weight = runs;
  std::rotate(loop->leaves.begin(), loop->leaves.begin() + static_cast<std::ptrdiff_t>(start),
              loop->leaves.end());
  loop->weight -= runs;
  loop->time_ns -= head_ns + tail_ns;
  loop->global_ns -= (head_ns + tail_ns) * g;
  std::uint64_t hash = internal::Mix(0x4D415354);
  for (const Leaf& l : loop->leaves) hash = internal::Mix(hash ^ internal::Mix(l.hash + 0x9E37));
  loop->hash = hash;
  return {std::move(h), std::move(t)};
}

// Finds a self-scheduled run and regroups its workers' calls. The master is the one rank
// that repeats a loop holding a reply (a send to the source of the latest wildcard receive);
// the workers are all other ranks, and each of their point-to-point calls goes to the
// master. How many tasks a worker runs depends on the timing (and differs from worker to
// worker and from run to run), so the compressors find a task loop on the busy workers and
// unroll it on a worker that got one or two tasks. Each worker is regrouped into the calls
// before its first task, its task loop (the body repeated by the busiest worker; weight =
// the worker's tasks, found in loops and in unrolled calls alike) and the calls after its
// last task, so that every worker has the same phases, with its own weight in the task
// phase. Returns the master rank, or -1 when the run is not self-scheduled (nothing changes).
struct RankParts {
  std::vector<Instance> before;  // instances before the core
  std::optional<Instance> core;  // the master's loop of replies; a worker's task loop
  std::vector<Instance> after;
};

// `several_rounds`: the master hands out several pools (rounds); a worker's calls between two task
// runs are then kept in `after` in order (they hold the ends of the rounds, AlignRounds)
// rather than counted in the task phase's time.
int RegroupSelfScheduled(std::vector<std::vector<Instance>>* seqs, std::vector<RankParts>* parts,
                         bool several_rounds) {
  const int n = static_cast<int>(seqs->size());
  int master = -1;
  for (int r = 0; r < n; ++r) {
    for (const Instance& inst : (*seqs)[r]) {
      if (inst.weight <= 1.5) continue;
      bool reply = false;
      for (const Leaf& l : inst.leaves) reply = reply || l.disp == internal::kReplyDisp;
      if (!reply) continue;
      if (master >= 0 && master != r) return -1;  // two masters: not this shape
      master = r;
    }
  }
  if (master < 0 || n < 2) return -1;
  parts->assign(static_cast<std::size_t>(n), RankParts{});
  // The workers talk to the master only, and name their partners.
  const Instance* busiest = nullptr;
  for (int r = 0; r < n; ++r) {
    if (r == master) continue;
    for (const Instance& inst : (*seqs)[r]) {
      bool p2p = false;
      for (const Leaf& l : inst.leaves) {
        if (!IsPointToPoint(l.kind)) continue;
        if (l.peer != master || l.disp == internal::kReplyDisp ||
            l.recv_disp == internal::kAnyDisp) {
          return -1;
        }
        p2p = true;
      }
      // Over several rounds a worker may repeat a whole round (its tasks, its stop and the
      // collective ending the round): a task holds no collective.
      bool collective = false;
      for (const Leaf& l : inst.leaves) collective = collective || IsCollective(l.kind);
      if (inst.weight > 1.5 && p2p && !inst.dropped_calls && !(several_rounds && collective) &&
          (!busiest || inst.weight > busiest->weight)) {
        busiest = &inst;
      }
    }
  }
  std::vector<Leaf> body;
  if (busiest) {
    body = busiest->leaves;
  } else if (several_rounds) {
    // Every worker ran so few tasks per round that only its rounds repeat: the task is the
    // shortest run of calls that repeats at the start of a repeated round (before its
    // collectives), the most repeated one among the workers.
    std::size_t most = 0;
    for (int r = 0; r < n; ++r) {
      if (r == master) continue;
      for (const Instance& inst : (*seqs)[static_cast<std::size_t>(r)]) {
        if (inst.weight <= 1.5 || inst.dropped_calls) continue;
        std::size_t len = 0;
        while (len < inst.leaves.size() && !IsCollective(inst.leaves[len].kind)) ++len;
        const std::vector<Leaf> calls(inst.leaves.begin(),
                                      inst.leaves.begin() + static_cast<std::ptrdiff_t>(len));
        for (std::size_t k = 1; 2 * k <= len; ++k) {
          const std::vector<Leaf> period(calls.begin(),
                                         calls.begin() + static_cast<std::ptrdiff_t>(k));
          bool p2p = false;
          for (const Leaf& l : period) p2p = p2p || IsPointToPoint(l.kind);
          if (!p2p || !MatchesAt(calls, k, period)) continue;
          std::size_t reps = 1;
          while (MatchesAt(calls, reps * k, period)) ++reps;
          if (reps > most) {
            most = reps;
            body = period;
          }
          break;
        }
      }
    }
  }
  if (body.empty()) return -1;  // no worker repeats anything: nothing to regroup
  // Not self-scheduled when every worker runs its body as often as the master runs its loop
  // (a master that serves every worker once per round: an ordinary loop of all ranks).
  double master_loop = 0;
  for (const Instance& inst : (*seqs)[static_cast<std::size_t>(master)]) {
    bool reply = false;
    for (const Leaf& l : inst.leaves) reply = reply || l.disp == internal::kReplyDisp;
    if (reply) master_loop = std::max(master_loop, inst.weight);
  }
  bool rounds = true;
  for (int r = 0; r < n; ++r) {
    if (r == master) continue;
    double count = 0;
    for (const Instance& inst : (*seqs)[static_cast<std::size_t>(r)]) {
      if (inst.weight > 1.5 || inst.dropped_calls) {
        bool is_body = inst.leaves.size() == body.size();
        for (std::size_t i = 0; is_body && i < body.size(); ++i) {
          is_body = SameCall(inst.leaves[i], body[i]);
        }
        if (is_body) count += inst.weight;
        continue;
      }
      for (std::size_t i = 0; i < inst.leaves.size();) {
        if (MatchesAt(inst.leaves, i, body)) {
          count += 1;
          i += body.size();
        } else {
          ++i;
        }
      }
    }
    rounds = rounds && std::fabs(count - master_loop) <= 1.5;
  }
  if (rounds) return -1;

  for (int r = 0; r < n; ++r) {
    if (r == master) continue;
    std::vector<Instance>& seq = (*seqs)[r];
    std::vector<Instance> before, after;
    std::optional<Instance> tasks;
    std::vector<Leaf> flat;  // calls outside loops, not yet placed
    double flat_global = 0;
    auto flush = [&]() {
      if (flat.empty()) return;
      (tasks ? after : before).push_back(FlatInstance(flat, flat_global));
      flat.clear();
      flat_global = 0;
    };
    auto add_tasks = [&](Instance inst) {
      // Calls between two task runs belong to the task phase's time.
      double stray_ns = 0, stray_global = 0;
      if (tasks && several_rounds) {
        flush();
      } else if (tasks) {
        for (const Instance& a : after) {
          stray_ns += a.time_ns;
          stray_global += a.global_ns;
        }
        for (const Leaf& l : flat) stray_ns += l.time_ns;
        stray_global += flat_global;
        after.clear();
        flat.clear();
        flat_global = 0;
      } else {
        flush();
      }
      if (!tasks) {
        tasks = std::move(inst);
      } else {
        MergeInstance(&*tasks, inst);
      }
      tasks->time_ns += stray_ns;
      tasks->global_ns += stray_global;
    };
    for (Instance& inst : seq) {
      if (inst.weight > 1.5 || inst.dropped_calls) {
        bool is_body = inst.leaves.size() == body.size() && !inst.dropped_calls;
        for (std::size_t i = 0; is_body && i < body.size(); ++i) {
          is_body = SameCall(inst.leaves[i], body[i]);
        }
        if (is_body) {
          add_tasks(std::move(inst));
        } else {
          flush();
          (tasks ? after : before).push_back(std::move(inst));
        }
        continue;
      }
      // Calls outside loops: unrolled tasks among them.
      const double per_ns = inst.time_ns > 0 ? inst.global_ns / inst.time_ns : 0;
      const double per_call =
          inst.leaves.empty() ? 0 : inst.global_ns / static_cast<double>(inst.leaves.size());
      auto share = [&](const Leaf& l) { return inst.time_ns > 0 ? l.time_ns * per_ns : per_call; };
      for (std::size_t i = 0; i < inst.leaves.size();) {
        if (!MatchesAt(inst.leaves, i, body)) {
          flat.push_back(inst.leaves[i]);
          flat_global += share(inst.leaves[i]);
          ++i;
          continue;
        }
        Instance one;
        one.weight = 1;
        one.hash = 0;
        one.first_step = inst.leaves[i].first_step;
        one.last_step = inst.leaves[i].last_step;
        one.first_wall_ns = inst.leaves[i].first_wall_ns;
        for (std::size_t k = 0; k < body.size(); ++k, ++i) {
          const Leaf& l = inst.leaves[i];
          one.leaves.push_back(l);
          one.time_ns += l.time_ns;
          one.global_ns += share(l);
          one.first_step = std::min(one.first_step, l.first_step);
          one.last_step = std::max(one.last_step, l.last_step);
          one.first_wall_ns = std::min(one.first_wall_ns, l.first_wall_ns);
        }
        add_tasks(std::move(one));
      }
    }
    flush();
    if (tasks) {
      // The task phase has the same structure on every worker (the hash of the busiest
      // one's body, made on this rank: the displacement to the master differs by rank).
      std::uint64_t h = internal::Mix(0x5441534B);
      for (const Leaf& l : tasks->leaves) h = internal::Mix(h ^ internal::Mix(l.hash + 0x9E37));
      tasks->hash = h;
    }
    (*parts)[static_cast<std::size_t>(r)] =
        RankParts{std::move(before), std::move(tasks), std::move(after)};
  }
  // The master: its loop with the most replies is the core.
  std::vector<Instance>& mseq = (*seqs)[static_cast<std::size_t>(master)];
  std::size_t core = mseq.size();
  for (std::size_t i = 0; i < mseq.size(); ++i) {
    bool reply = false;
    for (const Leaf& l : mseq[i].leaves) reply = reply || l.disp == internal::kReplyDisp;
    if (reply && mseq[i].weight > 1.5 &&
        (core == mseq.size() || mseq[i].weight > mseq[core].weight)) {
      core = i;
    }
  }
  RankParts& mp = (*parts)[static_cast<std::size_t>(master)];
  for (std::size_t i = 0; i < mseq.size(); ++i) {
    if (i < core) mp.before.push_back(std::move(mseq[i]));
    if (i == core) mp.core = std::move(mseq[i]);
    if (i > core) mp.after.push_back(std::move(mseq[i]));
  }
  // The master's loop starts where it waits for a result (its wildcard completion or
  // receive): the calls the compressor saw first (the receive posted for the first result)
  // belong to the hand-out before it, and the last iteration's rest to the end after it.
  Instance& loop = *mp.core;
  const std::size_t start = ReplyLoopStart(loop);
  // Only when the end after the loop starts with the same calls as that rest (a run of
  // final replies like the loop's); a loop that posts its receive first (irecv, wait, reply)
  // ends in whole iterations already.
  if (!mp.after.empty() && mp.after.front().weight <= 1.5 &&
      RestContinues(loop, start, mp.after.front()) && loop.weight > 2.5) {
    auto [head, tail] = SplitReplyLoop(&loop, start, 1);
    mp.before.push_back(std::move(head));
    mp.after.insert(mp.after.begin(), std::move(tail));
  }
  return master;
}

// How many rounds of replies a rank makes (a master handing out its task pool once per
// round, e.g. once per time step), from the compressor's order of its instances (`items`,
// phase = instance index): a round is an entry into a loop of replies (`kind` 'R') with a
// hand-out since the previous one (`kind` 'S': an instance with a send to a named rank or a
// collective), so that the replies of one round split into loops (its tasks, then its
// stops) count once. Loops are walked as often as they run, up to `budget` items.
void ReplyTokens(const Sequence& items, std::int64_t executions, const std::string& kind,
                 std::string* out, std::int64_t* budget) {
  for (const SequenceItem& item : items) {
    if (*budget <= 0) return;
    --*budget;
    if (!item.is_loop()) {
      if (item.phase >= 0 && static_cast<std::size_t>(item.phase) < kind.size())
        out->push_back(kind[static_cast<std::size_t>(item.phase)]);
      continue;
    }
    const std::int64_t per =
        executions > 0 ? std::max<std::int64_t>(1, item.total / executions) : 1;
    const bool only_replies =
        !item.body.empty() && std::all_of(item.body.begin(), item.body.end(), [&](const auto& b) {
          return !b.is_loop() && b.phase >= 0 && static_cast<std::size_t>(b.phase) < kind.size() &&
                 kind[static_cast<std::size_t>(b.phase)] == 'R';
        });
    if (only_replies) {
      out->push_back('R');
      continue;
    }
    // A loop without replies inside is one hand-out (or nothing) however often it runs: it
    // is not walked.
    std::string inner;
    std::int64_t once = *budget;
    ReplyTokens(item.body, item.total, kind, &inner, &once);
    if (inner.find('R') == std::string::npos) {
      if (inner.find('S') != std::string::npos) out->push_back('S');
      continue;
    }
    for (std::int64_t k = 0; k<per&& * budget> 0; ++k)
      ReplyTokens(item.body, item.total, kind, out, budget);
  }
}

std::int64_t ReplyRounds(const Sequence& order, const std::vector<Instance>& seq) {
  std::string kind;
  for (const Instance& inst : seq) {
    bool reply = false, handout = false;
    for (const Leaf& l : inst.leaves) {
      reply = reply || l.disp == internal::kReplyDisp;
      handout = handout || IsCollective(l.kind) ||
                ((l.kind == EventKind::kSend || l.kind == EventKind::kIsend) &&
                 l.disp != internal::kReplyDisp);
    }
    kind.push_back(reply && inst.weight > 1.5 ? 'R' : handout ? 'S' : 'O');
  }
  if (kind.find('R') == std::string::npos) return 0;  // no loop of replies: not a master
  std::string tokens;
  std::int64_t budget = 1'000'000;
  ReplyTokens(order, 1, kind, &tokens, &budget);
  std::int64_t rounds = 0;
  bool handed_out = true;
  for (const char t : tokens) {
    if (t == 'S') handed_out = true;
    if (t == 'R' && handed_out) {
      ++rounds;
      handed_out = false;
    }
  }
  return rounds;
}

// Splits a rank's instances at the collectives among its calls outside loops: segment,
// collective, segment, ..., segment (2c + 1 items for c collectives); a segment is empty
// (nullopt), its calls outside loops, or one loop. False when a segment holds a loop and
// other calls (it cannot be one instance).
bool SplitAtCollectives(std::vector<Instance> list, std::vector<std::optional<Instance>>* out) {
  std::vector<Leaf> leaves;
  double global = 0;
  std::optional<Instance> loop;
  auto close = [&]() {
    if (loop) {
      out->push_back(std::move(loop));
    } else if (!leaves.empty()) {
      out->push_back(FlatInstance(leaves, global));
    } else {
      out->push_back(std::nullopt);
    }
    loop.reset();
    leaves.clear();
    global = 0;
  };
  for (Instance& inst : list) {
    if (inst.weight > 1.5 || inst.dropped_calls) {
      if (loop || !leaves.empty()) return false;
      loop = std::move(inst);
      continue;
    }
    const double per_ns = inst.time_ns > 0 ? inst.global_ns / inst.time_ns : 0;
    const double per_call =
        inst.leaves.empty() ? 0 : inst.global_ns / static_cast<double>(inst.leaves.size());
    for (const Leaf& l : inst.leaves) {
      const double share = inst.time_ns > 0 ? l.time_ns * per_ns : per_call;
      if (IsCollective(l.kind)) {
        if (loop) return false;
        close();
        out->push_back(FlatInstance({l}, share));
        continue;
      }
      if (loop) return false;
      leaves.push_back(l);
      global += share;
    }
  }
  close();
  return true;
}

// The phases of a self-scheduled run (RegroupSelfScheduled), aligned across the ranks: the
// calls before the core (the master's loop, the workers' tasks) and after it are cut at the
// collectives, which every rank calls in the same order, so the master's hand-out of the
// first tasks and its final replies (stops) are phases of their own, made by the master
// alone or with the workers' matching calls. Empty when the ranks' collectives differ.
std::optional<std::vector<RankInstances>> AlignSelfScheduled(std::vector<RankParts> parts) {
  const std::size_t n = parts.size();
  std::vector<std::vector<std::optional<Instance>>> before(n), after(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (!SplitAtCollectives(std::move(parts[r].before), &before[r]) ||
        !SplitAtCollectives(std::move(parts[r].after), &after[r])) {
      return std::nullopt;
    }
    if (before[r].size() != before[0].size() || after[r].size() != after[0].size()) {
      return std::nullopt;
    }
  }
  std::vector<RankInstances> out;
  for (std::size_t k = 0; k < before[0].size(); ++k) {
    out.emplace_back(n);
    for (std::size_t r = 0; r < n; ++r) out.back()[r] = std::move(before[r][k]);
  }
  out.emplace_back(n);
  for (std::size_t r = 0; r < n; ++r) out.back()[r] = std::move(parts[r].core);
  for (std::size_t k = 0; k < after[0].size(); ++k) {
    out.emplace_back(n);
    for (std::size_t r = 0; r < n; ++r) out.back()[r] = std::move(after[r][k]);
  }
  return out;
}

// A piece of a rank's calls in a run of rounds (AlignRounds): calls outside loops, a loop,
// or one collective; `weight` is how many rounds' worth it holds (a loop of the workers'
// calls between rounds holds all rounds at once).
struct RoundPiece {
  Instance inst;
  bool collective = false;
};

// The instances after the core, cut at collectives: calls outside loops become flat pieces
// (split at each collective), a loop holding collectives becomes its pieces with the loop's
// weight. Loops with a reply that repeat the core's calls are merged into `core` (the master's
// loops of later rounds). False when a loop holds other calls than whole pieces.
// On a worker (`body`: the calls of one task), tasks among the calls outside its task loop
// (unrolled into a loop that holds the collectives ending a round) join `core` too.
bool RoundPieces(std::vector<Instance> after, std::optional<Instance>* core,
                 const std::vector<Leaf>* body, std::vector<RoundPiece>* out) {
  // The rotation of `inst`'s calls that repeats the core's (the core may start at its wait
  // for a result, RegroupSelfScheduled), or -1.
  auto core_rotation = [&](const Instance& inst) -> std::ptrdiff_t {
    if (!*core || inst.leaves.size() != (*core)->leaves.size()) return -1;
    const std::size_t len = inst.leaves.size();
    for (std::size_t k = 0; k < len; ++k) {
      bool same = true;  // the structure (a reply's partner differs from loop to loop)
      for (std::size_t i = 0; i < len && same; ++i)
        same = inst.leaves[(i + k) % len].hash == (*core)->leaves[i].hash;
      if (same) return static_cast<std::ptrdiff_t>(k);
    }
    return -1;
  };
  for (Instance& inst : after) {
    if (inst.dropped_calls) return false;
    const bool loop = inst.weight > 1.5;
    bool reply = false;
    for (const Leaf& l : inst.leaves) reply = reply || l.disp == internal::kReplyDisp;
    if (const std::ptrdiff_t k = loop && reply ? core_rotation(inst) : -1; k >= 0) {
      // As the core's own loop (RegroupSelfScheduled): the calls before its wait for a
      // result in its first run belong to the round's hand-out, the rest of its last run
      // to the round's end.
      std::vector<Leaf> head, tail;
      if (k > 0 && inst.weight > 2.5) {
        head.assign(inst.leaves.begin(), inst.leaves.begin() + k);
        tail.assign(inst.leaves.begin() + k, inst.leaves.end());
        const double part = 1.0 / inst.weight;
        const double g = inst.time_ns > 0 ? inst.global_ns / inst.time_ns : 0;
        double head_ns = 0, tail_ns = 0;
        for (Leaf& l : head) head_ns += (l.time_ns *= part);
        for (Leaf& l : tail) tail_ns += (l.time_ns *= part);
        inst.weight -= 1;
        inst.time_ns -= head_ns + tail_ns;
        inst.global_ns -= (head_ns + tail_ns) * g;
        Instance h = FlatInstance(head, head_ns * g);
        h.time_ns = head_ns;
        out->push_back(RoundPiece{std::move(h), false});
        std::rotate(inst.leaves.begin(), inst.leaves.begin() + k, inst.leaves.end());
        MergeInstance(&**core, inst);
        Instance t = FlatInstance(tail, tail_ns * g);
        t.time_ns = tail_ns;
        out->push_back(RoundPiece{std::move(t), false});
        continue;
      }
      std::rotate(inst.leaves.begin(), inst.leaves.begin() + k, inst.leaves.end());
      MergeInstance(&**core, inst);
      continue;
    }
    const double per_ns = inst.time_ns > 0 ? inst.global_ns / inst.time_ns : 0;
    const double per_call =
        inst.leaves.empty() ? 0 : inst.global_ns / static_cast<double>(inst.leaves.size());
    bool has_collective = false;
    for (const Leaf& l : inst.leaves) has_collective = has_collective || IsCollective(l.kind);
    bool has_task = false;  // a worker's loop that holds tasks and other calls
    for (std::size_t i = 0; body && !body->empty() && i < inst.leaves.size() && !has_task; ++i)
      has_task = inst.leaves.size() > body->size() && MatchesAt(inst.leaves, i, *body);
    if (loop && !has_collective && !has_task) {
      out->push_back(RoundPiece{std::move(inst), false});
      continue;
    }
    // Calls outside loops, or a loop whose body holds collectives: its pieces, each run as
    // often as the loop (times are per piece: the loop's time shared by the calls' times).
    std::vector<Leaf> run;
    double run_global = 0, run_ns = 0;
    auto close = [&]() {
      if (run.empty()) return;
      Instance piece = FlatInstance(run, run_global);
      piece.weight = inst.weight;
      piece.time_ns = run_ns;
      out->push_back(RoundPiece{std::move(piece), false});
      run.clear();
      run_global = run_ns = 0;
    };
    for (std::size_t i = 0; i < inst.leaves.size();) {
      if (body && !body->empty() && MatchesAt(inst.leaves, i, *body)) {
        // One task (per run of the loop): into the worker's task phase.
        std::vector<Leaf> task(inst.leaves.begin() + static_cast<std::ptrdiff_t>(i),
                               inst.leaves.begin() + static_cast<std::ptrdiff_t>(i + body->size()));
        double task_global = 0, ns = 0;
        for (const Leaf& l : task) {
          task_global += inst.time_ns > 0 ? l.time_ns * per_ns : per_call;
          ns += l.time_ns;
        }
        Instance one = FlatInstance(task, task_global);
        one.weight = inst.weight;
        one.time_ns = ns;
        if (*core) {
          MergeInstance(&**core, one);
        } else {
          std::uint64_t h = internal::Mix(0x5441534B);
          for (const Leaf& l : one.leaves) h = internal::Mix(h ^ internal::Mix(l.hash + 0x9E37));
          one.hash = h;
          *core = std::move(one);
        }
        i += body->size();
        continue;
      }
      const Leaf& l = inst.leaves[i++];
      const double share = inst.time_ns > 0 ? l.time_ns * per_ns : per_call;
      if (IsCollective(l.kind)) {
        close();
        Instance piece = FlatInstance({l}, share);
        piece.weight = inst.weight;
        piece.time_ns = l.time_ns;
        out->push_back(RoundPiece{std::move(piece), true});
        continue;
      }
      // A flat instance between two pieces of the loop's body: keep them apart when the
      // loop is one (its pieces repeat together).
      run.push_back(l);
      run_global += share;
      run_ns += l.time_ns;
    }
    close();
  }
  return true;
}

// Why the rounds could not be told apart (printed with PAS2P_PHASES_DEBUG); no alignment.
std::optional<std::vector<RankInstances>> RoundsNotSeparated(int why, std::size_t rank) {
  if (std::getenv("PAS2P_PHASES_DEBUG") != nullptr)
    std::fprintf(stderr, "rounds: not separated (case %d, rank %zu)\n", why, rank);
  return std::nullopt;
}

// Whether `inst` hands out work: a send to a named rank that is not a reply.
bool HandsOut(const Instance& inst) {
  for (const Leaf& l : inst.leaves) {
    if ((l.kind == EventKind::kSend || l.kind == EventKind::kIsend) &&
        l.disp != internal::kReplyDisp)
      return true;
  }
  return false;
}

// A self-scheduled run of several rounds (`rounds` > 1: the master hands out a new pool per
// round) whose rounds end with collectives of all ranks, aligned as the phases of ONE round
// pooled over the rounds: the calls before the first round (cut at collectives), then the
// round: the hand-out (the master's calls between the round's start and its first wait for
// a result), the core (the master's loop of replies, the workers' tasks), the last replies
// (the master's calls after its loop, its stops; a worker's calls outside its tasks), and the
// collectives that end the round (with the calls between them), then the calls after the
// last round. Every piece of the round holds all rounds (its weight: the occurrences over
// the run). `round_first`/`round_end` are the aligned indices of the round's phases.
// Empty when the rounds cannot be told apart this way on some rank (no collective ends a
// round, a rank's collectives do not end `rounds` rounds, a loop mixes calls of the round
// and of the run around it).
std::optional<std::vector<RankInstances>> AlignRoundsWith(
    const std::vector<std::vector<RoundPiece>>& pieces, const std::vector<RankParts>& parts,
    std::size_t m_rank, int rounds, std::size_t prologue, std::size_t per_round,
    std::size_t* round_first, std::size_t* round_end);

std::optional<std::vector<RankInstances>> AlignRounds(std::vector<RankParts> parts, int master,
                                                      int rounds, std::size_t* round_first,
                                                      std::size_t* round_end) {
  const std::size_t n = parts.size();
  const auto m_rank = static_cast<std::size_t>(master);
  // Per rank, its calls cut at collectives: before the core, then (after a null marker for
  // the core) after it, the master's later loops of replies merged into its core.
  std::vector<std::vector<RoundPiece>> pieces(n);
  std::vector<std::size_t> core_at(n);
  std::vector<Leaf> body;  // a worker's task
  for (std::size_t r = 0; r < n && body.empty(); ++r) {
    if (r != m_rank && parts[r].core) body = parts[r].core->leaves;
  }
  // Calls outside loops next to each other are one piece (the compressor may have cut them
  // where a loop of replies was taken out).
  auto join = [](std::vector<RoundPiece> list) {
    std::vector<RoundPiece> out;
    auto plain = [](const RoundPiece& p) {
      return !p.collective && p.inst.weight <= 1.5 && !p.inst.leaves.empty();
    };
    for (RoundPiece& p : list) {
      if (!out.empty() && plain(out.back()) && plain(p)) {
        Instance& into = out.back().inst;
        for (const Leaf& l : p.inst.leaves) into.leaves.push_back(l);
        into.time_ns += p.inst.time_ns;
        into.global_ns += p.inst.global_ns;
        into.first_step = std::min(into.first_step, p.inst.first_step);
        into.last_step = std::max(into.last_step, p.inst.last_step);
        into.first_wall_ns = std::min(into.first_wall_ns, p.inst.first_wall_ns);
        into.hash = internal::Mix(into.hash ^ p.inst.hash);
        continue;
      }
      out.push_back(std::move(p));
    }
    return out;
  };
  for (std::size_t r = 0; r < n; ++r) {
    const std::vector<Leaf>* tasks = r == m_rank ? nullptr : &body;
    std::vector<RoundPiece> first, second;
    if (!RoundPieces(std::move(parts[r].before), &parts[r].core, tasks, &first))
      return RoundsNotSeparated(1, r);
    if (!RoundPieces(std::move(parts[r].after), &parts[r].core, tasks, &second))
      return RoundsNotSeparated(1, r);
    // Tasks the compressor cut between two pieces of calls outside loops: once joined.
    auto tasks_out = [&](std::vector<RoundPiece> list) {
      if (!tasks || body.empty()) return list;
      std::vector<RoundPiece> out;
      for (RoundPiece& p : list) {
        if (p.collective || p.inst.weight > 1.5) {
          out.push_back(std::move(p));
          continue;
        }
        std::vector<Instance> one{std::move(p.inst)};
        std::vector<RoundPiece> split;
        RoundPieces(std::move(one), &parts[r].core, tasks, &split);
        for (RoundPiece& q : split) out.push_back(std::move(q));
      }
      return out;
    };
    pieces[r] = tasks_out(join(std::move(first)));
    core_at[r] = pieces[r].size();
    for (RoundPiece& p : tasks_out(join(std::move(second)))) pieces[r].push_back(std::move(p));
  }
  // The collectives before the first round (the master's before its core), and those ending
  // a round: the master's after its core and before its next hand-out (a send to a named
  // rank that is not a reply).
  std::size_t prologue = 0, guess = 0, after_core = 0;
  bool guessing = true;
  for (std::size_t i = 0; i < pieces[m_rank].size(); ++i) {
    const RoundPiece& p = pieces[m_rank][i];
    if (i < core_at[m_rank]) {
      prologue += p.collective;
      continue;
    }
    after_core += p.collective;
    if (guessing && p.collective) {
      ++guess;
    } else if (guess > 0 && HandsOut(p.inst)) {
      guessing = false;
    }
  }
  if (after_core == 0) return RoundsNotSeparated(2, m_rank);
  // The master's compressor may have looped over rounds too (its calls between rounds then
  // hold several rounds): the collectives per round are those that end every rank's run in
  // exactly `rounds` rounds, the guess first.
  std::vector<std::size_t> tries = {guess};
  for (std::size_t k = 1; k <= after_core; ++k) {
    if (k != guess) tries.push_back(k);
  }
  for (const std::size_t per_round : tries) {
    if (per_round == 0) continue;
    if (auto out = AlignRoundsWith(pieces, parts, m_rank, rounds, prologue, per_round, round_first,
                                   round_end))
      return out;
  }
  return RoundsNotSeparated(5, m_rank);
}

// AlignRounds with `per_round` collectives ending each round and `prologue` collectives
// before the first (`pieces`: each rank's calls cut at collectives, RoundPieces).
std::optional<std::vector<RankInstances>> AlignRoundsWith(
    const std::vector<std::vector<RoundPiece>>& pieces, const std::vector<RankParts>& parts,
    std::size_t m_rank, int rounds, std::size_t prologue, std::size_t per_round,
    std::size_t* round_first, std::size_t* round_end) {
  const std::size_t n = pieces.size();
  // Per rank, the round's pools (all rounds' calls of a kind): 0 hand-out, 1 last replies,
  // then per collective ending the round: the collective and the calls after it (the last
  // one's calls after it are the next round's: pools 0 and 1).
  const std::size_t pools = 1 + 2 * per_round;
  std::vector<std::vector<std::vector<Instance>>> pooled(n,
                                                         std::vector<std::vector<Instance>>(pools));
  std::vector<std::vector<std::optional<Instance>>> before(n), epilogue(n);
  auto flat_of = [](const std::vector<Leaf>& ls, double global_per_call) {
    Instance i = FlatInstance(ls, global_per_call * static_cast<double>(ls.size()));
    i.time_ns = 0;
    for (const Leaf& l : ls) i.time_ns += l.time_ns;
    return i;
  };
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<Instance> pro, epi;
    std::size_t pro_seen = 0;
    double done = 0;       // rounds ended (collectives ending a round seen, by weight)
    std::size_t next = 0;  // the next collective of the round's end expected
    bool in_epilogue = false;
    // The current round's calls per pool: calls outside loops of one round join into one
    // piece (the compressor may have cut a hand-out where a loop of another round began).
    std::vector<std::vector<Instance>> open(pools);
    auto add = [&](std::size_t pool, Instance inst) {
      if (inst.weight > 1.5) {
        pooled[r][pool].push_back(std::move(inst));  // a piece of several rounds at once
      } else {
        open[pool].push_back(std::move(inst));
      }
    };
    auto close_round = [&]() {
      for (std::size_t k = 0; k < pools; ++k) {
        if (open[k].empty()) continue;
        Instance joined = std::move(open[k].front());
        for (std::size_t i = 1; i < open[k].size(); ++i) {
          const Instance& more = open[k][i];
          for (const Leaf& l : more.leaves) joined.leaves.push_back(l);
          joined.time_ns += more.time_ns;
          joined.global_ns += more.global_ns;
          joined.last_step = std::max(joined.last_step, more.last_step);
          joined.hash = internal::Mix(joined.hash ^ more.hash);
        }
        pooled[r][k].push_back(std::move(joined));
        open[k].clear();
      }
    };
    for (RoundPiece p : pieces[r]) {
      if (in_epilogue) {
        epi.push_back(std::move(p.inst));
        continue;
      }
      if (pro_seen < prologue) {
        if (p.inst.weight > 1.5 && p.collective) return RoundsNotSeparated(3, r);
        pro_seen += p.collective;
        pro.push_back(std::move(p.inst));
        continue;
      }
      if (p.collective) {
        const double w = p.inst.weight;
        close_round();
        pooled[r][2 + 2 * next].push_back(std::move(p.inst));
        if (++next == per_round) {
          next = 0;
          done += w;
          if (done > rounds + 0.5) return RoundsNotSeparated(4, r);
          if (std::fabs(done - rounds) <= 0.5) in_epilogue = true;
        }
        continue;
      }
      if (next > 0) {
        add(3 + 2 * (next - 1), std::move(p.inst));
        continue;
      }
      // Between a round's start and its end: the master's hand-out runs until its first
      // wait for a result, the rest are its replies; a worker's calls here are outside its
      // tasks (its stops).
      if (r == m_rank && HandsOut(p.inst)) {
        const auto& leaves = p.inst.leaves;
        std::size_t split = 0;
        while (
            split < leaves.size() && !IsCompletion(leaves[split].kind) &&
            !(leaves[split].kind == EventKind::kRecv && leaves[split].disp == internal::kAnyDisp)) {
          ++split;
        }
        const double g =
            p.inst.global_ns / static_cast<double>(std::max<std::size_t>(1, leaves.size()));
        const auto mid = leaves.begin() + static_cast<std::ptrdiff_t>(split);
        // (A piece of calls repeated over several rounds keeps its weight.)
        auto part = [&](const std::vector<Leaf>& ls) {
          Instance i = flat_of(ls, g);
          i.weight = p.inst.weight;
          return i;
        };
        if (split > 0) add(0, part({leaves.begin(), mid}));
        if (split < leaves.size()) add(1, part({mid, leaves.end()}));
      } else {
        add(1, std::move(p.inst));
      }
    }
    close_round();
    if (!in_epilogue) return RoundsNotSeparated(5, r);
    if (!SplitAtCollectives(std::move(pro), &before[r])) return RoundsNotSeparated(6, r);
    if (before[r].back())
      return RoundsNotSeparated(6, r);  // nothing after the last collective of the run's start
    before[r].pop_back();
    if (!SplitAtCollectives(std::move(epi), &epilogue[r])) return RoundsNotSeparated(6, r);
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (before[r].size() != before[0].size() || epilogue[r].size() != epilogue[0].size())
      return RoundsNotSeparated(7, r);
  }
  // The master's loop of replies as it runs in a round starts at its wait for a result: a
  // loop the compressor began earlier (its first calls post the receive of the hand-out's
  // last task) gives those first calls of each round's first run to the hand-out and the
  // rest of each round's last run to the round's end (RegroupSelfScheduled does the same for
  // one round).
  std::optional<Instance> mcore = parts[m_rank].core;
  if (mcore && mcore->weight > 2.0 * rounds + 0.5) {
    Instance& loop = *mcore;
    const std::size_t start = ReplyLoopStart(loop);
    // Only when what follows the loop in a round starts with the same calls as that rest (a
    // run of final replies like the loop's); a loop that posts its receive first (irecv,
    // wait, reply) ends in whole runs already.
    if (!pooled[m_rank][1].empty() && RestContinues(loop, start, pooled[m_rank][1].front())) {
      auto [head, tail] = SplitReplyLoop(&loop, start, rounds);
      pooled[m_rank][0].push_back(std::move(head));
      pooled[m_rank][1].insert(pooled[m_rank][1].begin(), std::move(tail));
    }
  }
  // A pool's pieces as one instance. Pieces of the same calls are one piece in several rounds
  // (merged). When the compressor cut a round's calls into pieces, some of them looped over
  // several rounds (a hand-out split where a loop over the rounds begins), the pool holds
  // groups of different calls that each add up to the same rounds: one round is the groups'
  // calls in the order they first appear. Otherwise the piece with the most calls describes
  // the pool (a worker's calls between rounds pooled with those of a round it had no task in).
  auto merge = [](std::vector<Instance> list) -> std::optional<std::optional<Instance>> {
    if (list.empty()) return std::optional<Instance>{};
    auto structure = [](const Instance& inst) {
      std::uint64_t h = internal::Mix(0x47525550);
      for (const Leaf& l : inst.leaves) h = internal::Mix(h ^ l.hash);
      return h;
    };
    std::vector<Instance> groups;
    std::vector<std::uint64_t> keys;
    for (Instance& inst : list) {
      const std::uint64_t key = structure(inst);
      const auto it = std::find(keys.begin(), keys.end(), key);
      if (it == keys.end()) {
        keys.push_back(key);
        groups.push_back(std::move(inst));
      } else {
        MergeInstance(&groups[static_cast<std::size_t>(it - keys.begin())], inst);
      }
    }
    bool layered = groups.size() > 1;
    for (const Instance& g : groups)
      layered = layered && std::fabs(g.weight - groups.front().weight) <= 0.5;
    if (layered) {
      Instance out = std::move(groups.front());
      for (std::size_t i = 1; i < groups.size(); ++i) {
        const Instance& more = groups[i];
        for (const Leaf& l : more.leaves) out.leaves.push_back(l);
        out.time_ns += more.time_ns;
        out.global_ns += more.global_ns;
        out.first_step = std::min(out.first_step, more.first_step);
        out.last_step = std::max(out.last_step, more.last_step);
        out.first_wall_ns = std::min(out.first_wall_ns, more.first_wall_ns);
        out.hash = internal::Mix(out.hash ^ more.hash);
      }
      return std::optional<Instance>(std::move(out));
    }
    if (groups.size() > 1) {
      // Pieces cut at different calls in different rounds (a hand-out to workers 1..4 and 5
      // in one round, 5 and 1..4 in the others): the same calls per round in all, each call
      // made once per round.
      std::vector<Leaf> calls;
      std::vector<double> totals;
      std::vector<std::uint64_t> hashes;
      auto call_key = [](const Leaf& l) {
        std::uint64_t h = internal::Mix(static_cast<std::uint64_t>(l.kind) + 0x4B);
        h = internal::Mix(h ^ static_cast<std::uint32_t>(l.disp));
        h = internal::Mix(h ^ static_cast<std::uint32_t>(l.recv_disp));
        h = internal::Mix(h ^ static_cast<std::uint64_t>(l.comm));
        return internal::Mix(h ^ static_cast<std::uint32_t>(l.tag));
      };
      for (const Instance& g : groups) {
        for (const Leaf& l : g.leaves) {
          const std::uint64_t key = call_key(l);
          const auto it = std::find(hashes.begin(), hashes.end(), key);
          if (it == hashes.end()) {
            hashes.push_back(key);
            calls.push_back(l);
            totals.push_back(g.weight);
          } else {
            const auto k = static_cast<std::size_t>(it - hashes.begin());
            calls[k].Merge(l);
            totals[k] += g.weight;
          }
        }
      }
      const double rounds_of = *std::min_element(totals.begin(), totals.end());
      bool whole = rounds_of > 0.5;
      // (Each call once per round: calls repeated in a round, as a hand-out's receives
      // posted from any source, would lose their order among the other calls.)
      for (const double t : totals) whole = whole && std::fabs(t / rounds_of - 1) < 0.1;
      if (whole) {
        Instance out;
        out.weight = rounds_of;
        out.hash = internal::Mix(0x524F554E);
        out.first_step = groups.front().first_step;
        out.first_wall_ns = groups.front().first_wall_ns;
        for (std::size_t k = 0; k < calls.size(); ++k) {
          for (long c = 0; c < std::lround(totals[k] / rounds_of); ++c) {
            out.leaves.push_back(calls[k]);
            out.hash = internal::Mix(out.hash ^ calls[k].hash);
          }
        }
        for (const Instance& g : groups) {
          out.time_ns += g.time_ns;
          out.global_ns += g.global_ns;
          out.first_step = std::min(out.first_step, g.first_step);
          out.last_step = std::max(out.last_step, g.last_step);
          out.first_wall_ns = std::min(out.first_wall_ns, g.first_wall_ns);
        }
        return std::optional<Instance>(std::move(out));
      }
    }
    std::stable_sort(groups.begin(), groups.end(), [](const Instance& a, const Instance& b) {
      return a.leaves.size() > b.leaves.size();
    });
    Instance out = std::move(groups.front());
    for (std::size_t i = 1; i < groups.size(); ++i) {
      if (out.leaves.size() == groups[i].leaves.size()) {
        for (std::size_t k = 0; k < out.leaves.size(); ++k) {
          if (out.leaves[k].kind != groups[i].leaves[k].kind) return std::nullopt;
        }
      }
      MergeInstance(&out, groups[i]);
    }
    return std::optional<Instance>(std::move(out));
  };
  std::vector<RankInstances> out;
  for (std::size_t k = 0; k < before[0].size(); ++k) {
    out.emplace_back(n);
    for (std::size_t r = 0; r < n; ++r) out.back()[r] = std::move(before[r][k]);
  }
  *round_first = out.size();
  // The round in the run's order: hand-out, core, last replies, collectives.
  for (std::size_t p = 0; p < pools; ++p) {
    RankInstances step(n);
    for (std::size_t r = 0; r < n; ++r) {
      auto merged = merge(std::move(pooled[r][p]));
      if (!merged) return RoundsNotSeparated(9, r);
      step[r] = std::move(*merged);
    }
    out.push_back(std::move(step));
    if (p == 0) {
      out.emplace_back(n);
      for (std::size_t r = 0; r < n; ++r) out.back()[r] = r == m_rank ? mcore : parts[r].core;
    }
  }
  *round_end = out.size();
  for (std::size_t k = 0; k < epilogue[0].size(); ++k) {
    out.emplace_back(n);
    for (std::size_t r = 0; r < n; ++r) out.back()[r] = std::move(epilogue[r][k]);
  }
  return out;
}

struct GlobalPhase {
  std::uint64_t key = 0;
  double weight = 0;
  RankInstances ranks;
};

std::string Hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Stats SumStats(const std::vector<Leaf>& leaves, Stats ComputeStats::*field) {
  // Per occurrence: the sum of the bursts; the spread assumes independent bursts.
  Stats s;
  double var = 0;
  bool any = false;
  for (const Leaf& l : leaves) {
    const Stats& b = l.compute.*field;
    if (b.n == 0) continue;
    if (!any) {
      s.n = b.n;
      s.min = s.max = 0;
      any = true;
    }
    s.n = std::min(s.n, b.n);
    s.mean += b.mean;
    s.min += b.min;
    s.max += b.max;
    var += b.n > 1 ? b.m2 / static_cast<double>(b.n - 1) : 0;
  }
  if (any && s.n > 1) s.m2 = var * static_cast<double>(s.n - 1);
  return s;
}

// The statistics of `all` without the values of `part` (a subset of them): the inverse of
// Stats::Merge. min and max stay those of `all` (they cannot be taken apart).
Stats Without(const Stats& all, const Stats& part) {
  if (part.n == 0) return all;
  Stats out;
  out.n = all.n - part.n;
  if (out.n <= 0) return Stats{};
  const double n = static_cast<double>(all.n), nb = static_cast<double>(part.n);
  const double na = static_cast<double>(out.n);
  out.mean = std::max(0.0, (all.mean * n - part.mean * nb) / na);
  // What is left of equal sums is rounding (a broadcast's bytes sent off its root: 0).
  if (out.mean * na <= 1e-9 * std::fabs(all.mean * n)) out.mean = 0;
  const double delta = part.mean - out.mean;
  out.m2 = std::max(0.0, all.m2 - part.m2 - delta * delta * na * nb / n);
  out.min = all.min;
  out.max = all.max;
  return out;
}

PhaseEvent ToPhaseEvent(const Leaf& l) {
  PhaseEvent e;
  e.kind = l.kind;
  e.peer = l.peer;
  e.recv_peer = l.recv_peer;
  e.comm = l.comm;
  e.tag = l.tag;
  e.requests = l.requests;
  e.reply = l.disp == internal::kReplyDisp;
  e.bytes = l.bytes;
  e.recv_bytes = l.recv_bytes;
  e.polls = l.polls;
  e.tested = l.tested;
  e.compute = l.compute;
  e.root_step = l.root_step;
  if (l.root_step != RootStep::kFixed) {
    // The occurrences in which the rank was the root apart from the others.
    e.root_bytes = l.root_bytes;
    e.root_recv_bytes = l.root_recv_bytes;
    e.root_cpu_ns = l.root_cpu_ns;
    e.bytes = Without(l.bytes, l.root_bytes);
    e.recv_bytes = Without(l.recv_bytes, l.root_recv_bytes);
    e.compute.cpu_ns = Without(l.compute.cpu_ns, l.root_cpu_ns);
  }
  return e;
}

// ComputeStats::residual_shape of `values`: sorted, cut into kNoiseShapeBins equal shares
// (a value on a cut is split between the shares), the mean of each share.
std::vector<float> ShapeBins(std::vector<double> values) {
  std::vector<float> bins;
  if (values.size() < 2) return bins;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  const auto k = static_cast<double>(kNoiseShapeBins);
  bins.reserve(kNoiseShapeBins);
  for (std::size_t b = 0; b < kNoiseShapeBins; ++b) {
    const double lo = static_cast<double>(b) * n / k, hi = static_cast<double>(b + 1) * n / k;
    double sum = 0;
    for (std::size_t i = static_cast<std::size_t>(lo);
         i < values.size() && static_cast<double>(i) < hi; ++i) {
      const double weight =
          std::min(hi, static_cast<double>(i + 1)) - std::max(lo, static_cast<double>(i));
      sum += weight * values[i];
    }
    bins.push_back(static_cast<float>(sum / (hi - lo)));
  }
  return bins;
}

// The occurrence-shared part of the bursts (ComputeStats::occurrence_cpu_ns): a call is the
// same call on every rank when it has the same kind, tag and ordinal among the rank's calls
// of that kind and tag in the phase (a mesh corner's first isend is an interior rank's first
// isend); occurrence k is each rank's k-th occurrence of the phase. `phase.ranks` are the
// ranks of `ranks` that have the phase, in order, with one event per leaf.
// The shared part is a factor: occurrence k's bursts over all ranks against those ranks'
// mean bursts, and a rank's share of it is its own mean times that factor. Where the ranks'
// bursts before the same call are alike that is the occurrence mean; where they are not (a
// checkerboard exchange: the ranks that send first do the iteration's work before the send,
// the others a few microseconds), a plain mean over the ranks was half the large bursts, and
// what they shared in an occurrence counted as their own noise.
void AddOccurrenceStats(const RankInstances& ranks, Phase* phase) {
  struct Occurrences {
    std::vector<double> sum;
    std::vector<double> base;  // the same ranks' mean bursts
    std::vector<int> count;
  };
  // A rank's mean burst over the occurrences it kept (a moving root's turns left out).
  auto mean_of = [](const OccurrenceSample& o) {
    double sum = 0;
    int n = 0;
    for (std::size_t k = 0; k < o.kept; ++k) {
      if (o.RootTurn(k)) continue;
      sum += static_cast<double>(o.at(k));
      ++n;
    }
    return n > 0 ? sum / n : 0.0;
  };
  auto keys_of = [](const Instance& inst) {
    std::vector<std::uint64_t> keys;
    keys.reserve(inst.leaves.size());
    std::unordered_map<std::uint64_t, std::uint64_t> ordinal;
    for (const Leaf& l : inst.leaves) {
      const std::uint64_t call =
          (static_cast<std::uint64_t>(l.kind) << 32) ^ static_cast<std::uint32_t>(l.tag);
      keys.push_back(internal::Mix(call ^ internal::Mix(ordinal[call]++)));
    }
    return keys;
  };
  std::unordered_map<std::uint64_t, Occurrences> by_call;
  for (const auto& inst : ranks) {
    if (!inst) continue;
    const std::vector<std::uint64_t> keys = keys_of(*inst);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const OccurrenceSample& o = inst->leaves[i].occurrences;
      if (o.kept < 2) continue;
      Occurrences& acc = by_call[keys[i]];
      if (acc.sum.size() < o.kept) {
        acc.sum.resize(o.kept, 0.0);
        acc.base.resize(o.kept, 0.0);
        acc.count.resize(o.kept, 0);
      }
      const double mean = mean_of(o);
      for (std::size_t k = 0; k < o.kept; ++k) {
        if (o.RootTurn(k)) continue;  // a moving root's turn: its own work, not shared
        acc.sum[k] += o.at(k);
        acc.base[k] += mean;
        ++acc.count[k];
      }
    }
  }
  std::size_t j = 0;
  for (const auto& inst : ranks) {
    if (!inst) continue;
    RankPhase& rp = phase->ranks[j++];
    const std::vector<std::uint64_t> keys = keys_of(*inst);
    for (std::size_t i = 0; i < keys.size() && i < rp.events.size(); ++i) {
      const OccurrenceSample& o = inst->leaves[i].occurrences;
      if (o.kept < 2) continue;
      const Occurrences& acc = by_call.at(keys[i]);
      ComputeStats& c = rp.events[i].compute;
      double ranks_sum = 0;
      std::vector<double> residuals;
      residuals.reserve(o.kept);
      const double own_mean = mean_of(o);
      for (std::size_t k = 0; k < o.kept; ++k) {
        if (o.RootTurn(k) || acc.count[k] == 0) continue;
        const double mean =
            acc.base[k] > 0 ? own_mean * acc.sum[k] / acc.base[k] : acc.sum[k] / acc.count[k];
        c.occurrence_cpu_ns.Add(mean);
        residuals.push_back(static_cast<double>(o.at(k)) - mean);
        c.residual_cpu_ns.Add(residuals.back());
        ranks_sum += acc.count[k];
      }
      c.residual_shape = ShapeBins(std::move(residuals));
      if (c.occurrence_cpu_ns.n > 0) {
        c.occurrence_ranks = static_cast<std::int32_t>(
            std::lround(ranks_sum / static_cast<double>(c.occurrence_cpu_ns.n)));
      }
    }
  }
}

// Exit times (rank-local wall clock) of the collectives a rank called on communicators that
// hold every rank, per communicator in call order; the same index is the same call on
// every rank. At most kMaxSyncPoints per communicator are kept.
constexpr std::size_t kMaxSyncPoints = 1024;
struct SyncPoints {
  std::map<CommId, std::vector<double>> full;    // barrier, all-to-all dependencies
  std::map<CommId, std::vector<double>> rooted;  // bcast, reduce, ... (weaker)
};

bool Synchronizes(EventKind k) {
  return k == EventKind::kBarrier || k == EventKind::kAllreduce || k == EventKind::kAllgather ||
         k == EventKind::kAllgatherv || k == EventKind::kAlltoall || k == EventKind::kAlltoallv ||
         k == EventKind::kReduceScatter;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Clock offsets of the ranks (global = local + offset, rank 0's offset 0). Every rank's
// clock starts when its MPI_Init returned, which on a loaded machine differs by up to
// tens of milliseconds between ranks; a collective that needs every rank (barrier,
// allreduce, alltoall, ...) is left by all of them at about the same moment, so the offset
// of rank r is the median, over the collectives on a communicator of all ranks, of rank 0's
// exit time minus rank r's. Without such collectives, rooted collectives on such a
// communicator are used; without any, the offsets are 0.
std::vector<double> ClockOffsets(const std::vector<SyncPoints>& sync) {
  const std::size_t n = sync.size();
  std::vector<double> offsets(n, 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    auto points = [&](std::size_t r) -> const std::map<CommId, std::vector<double>>& {
      return pass == 0 ? sync[r].full : sync[r].rooted;
    };
    // The communicator with the most collectives that every rank reached.
    CommId best = 0;
    std::size_t best_count = 0;
    for (const auto& [comm, exits] : points(0)) {
      std::size_t count = exits.size();
      for (std::size_t r = 1; r < n; ++r) {
        auto it = points(r).find(comm);
        count = it == points(r).end() ? 0 : std::min(count, it->second.size());
      }
      if (count > best_count) {
        best_count = count;
        best = comm;
      }
    }
    if (best_count == 0) continue;
    const std::vector<double>& ref = points(0).at(best);
    for (std::size_t r = 1; r < n; ++r) {
      const std::vector<double>& mine = points(r).at(best);
      std::vector<double> d(best_count);
      for (std::size_t c = 0; c < best_count; ++c) d[c] = ref[c] - mine[c];
      offsets[r] = Median(std::move(d));
    }
    break;
  }
  return offsets;
}

// Times the instances on one global clock, so that they partition the run. The ranks' top-
// level groups (a top-level loop with everything nested in it, or a run of calls outside
// loops) are matched by position among the ranks that have the most common number of
// groups; group g ends when its slowest rank leaves it, E_g = max_r (end_{r,g} + offset_r),
// and lasts E_g - E_{g-1} (E_{-1}: the earliest MPI_Init return; a running maximum keeps
// it non-negative). That time is shared among the instances of the group on all matched
// ranks in proportion to their own time in it. The global times of all instances add up to
// the global span of the run: from the first MPI_Init return to the last rank's last group
// end. Returns that span.
double TimeOnGlobalClock(std::vector<std::vector<Instance>>* seqs,
                         const std::vector<std::vector<double>>& group_end_ns,
                         const std::vector<double>& offsets) {
  const std::size_t n = seqs->size();
  std::vector<std::size_t> lengths;
  std::vector<bool> repeats;
  for (std::size_t r = 0; r < n; ++r) {
    lengths.push_back(group_end_ns[r].size());
    repeats.push_back(HasRepetition((*seqs)[r]));
  }
  const std::size_t groups = ReferenceLength(lengths, repeats);
  const double start = *std::min_element(offsets.begin(), offsets.end());
  std::vector<double> global_time(groups, 0.0);
  double prev = start;
  for (std::size_t g = 0; g < groups; ++g) {
    double end = prev;
    for (std::size_t r = 0; r < n; ++r) {
      if (group_end_ns[r].size() == groups) end = std::max(end, group_end_ns[r][g] + offsets[r]);
    }
    global_time[g] = end - prev;
    prev = end;
  }
  // The ranks' time in each group (matched ranks only), and how many parts it has.
  std::vector<double> rank_time(groups, 0.0);
  std::vector<double> parts(groups, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    if (group_end_ns[r].size() != groups) continue;
    for (const Instance& inst : (*seqs)[r]) {
      for (const internal::GroupPart& p : inst.parts) {
        const auto g = static_cast<std::size_t>(p.group);
        rank_time[g] += p.time_ns;
        parts[g] += 1;
      }
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    const bool matched = group_end_ns[r].size() == groups;
    for (Instance& inst : (*seqs)[r]) {
      inst.global_ns = 0;
      if (matched) {
        for (const internal::GroupPart& p : inst.parts) {
          const auto g = static_cast<std::size_t>(p.group);
          inst.global_ns += rank_time[g] > 0 ? global_time[g] * p.time_ns / rank_time[g]
                                             : global_time[g] / parts[g];
        }
      }
      inst.first_wall_ns += offsets[r] - start;
      inst.parts.clear();
      inst.parts.shrink_to_fit();
    }
  }
  return prev - start;
}

}  // namespace

std::string OversubscriptionWarning(const TraceMetadata& metadata) {
  if (!metadata.IsOversubscribed()) return {};
  return std::string(kOversubscribedWarning) + ": " + metadata.DescribePlacement() +
         ". Its compute times were measured while ranks shared cores and caches, so they are "
         "inflated and noisier than on a real allocation, and the prediction carries that "
         "contention to the target count; to predict a real allocation, trace with at most one "
         "rank per core";
}

// The tasks of a self-scheduled run (Signature::scheduled_tasks, scheduled_task_cpu_sum_ns,
// scheduled_task_cpu_ns). A second read of the trace: each worker's stream is cut at its
// blocking receives from the master into pieces (its compute up to its next receive from
// the master); a piece that sends to the master is a task's body. The master's k-th message
// to a worker is followed there by the worker's k-th piece, so the master's messages in
// program order name the tasks in hand-out order (the stops, pieces without a result, are
// left out). Nothing when a worker receives from the master otherwise (a nonblocking
// receive: the pairing would be a guess); no order when the pieces and messages do not pair
// or beyond Signature::kMaxTaskCosts pieces (their number and sum are still kept).
void FindTaskCosts(const TraceSource& source, int master, Signature* sig) {
  const int n = source.nprocs();
  struct Piece {
    std::int64_t cpu_ns = 0;
    bool task = false;
  };
  std::vector<std::vector<Piece>> pieces(static_cast<std::size_t>(n));
  std::size_t total = 0;
  std::int64_t tasks = 0, sum_ns = 0;
  try {
    for (int r = 0; r < n; ++r) {
      if (r == master) continue;
      auto in = source.OpenRank(r);
      std::vector<Piece>& out = pieces[static_cast<std::size_t>(r)];
      std::optional<Piece> open;
      auto close = [&] {
        if (!open) return;
        if (open->task) {
          ++tasks;
          sum_ns += open->cpu_ns;
        }
        if (total <= Signature::kMaxTaskCosts) out.push_back(*open);
      };
      Event e;
      while (in->Next(&e)) {
        const bool recv = (e.kind == EventKind::kRecv && e.peer == master) ||
                          (e.kind == EventKind::kSendrecv && e.recv_peer == master);
        if (e.kind == EventKind::kIrecv && (e.peer == master || e.peer == kAnySource)) return;
        if (open &&
            (e.kind == EventKind::kSend || e.kind == EventKind::kIsend ||
             e.kind == EventKind::kSendrecv) &&
            e.peer == master) {
          open->task = true;
        }
        if (recv) {
          close();
          open = Piece{};
          ++total;
          continue;
        }
        if (open && e.kind == EventKind::kCompute) open->cpu_ns += e.cpu_ns;
      }
      close();
    }
    sig->scheduled_tasks = tasks;
    sig->scheduled_task_cpu_sum_ns = sum_ns;
    if (total > Signature::kMaxTaskCosts) return;
    std::vector<std::size_t> next(static_cast<std::size_t>(n), 0);
    std::vector<std::int64_t> costs;
    auto in = source.OpenRank(master);
    Event e;
    while (in->Next(&e)) {
      if (e.kind != EventKind::kSend && e.kind != EventKind::kIsend &&
          e.kind != EventKind::kSendrecv) {
        continue;
      }
      if (e.peer < 0 || e.peer >= n || e.peer == master) continue;
      const auto w = static_cast<std::size_t>(e.peer);
      const std::size_t k = next[w]++;
      if (k >= pieces[w].size()) return;
      if (pieces[w][k].task) costs.push_back(pieces[w][k].cpu_ns);
    }
    for (int r = 0; r < n; ++r) {
      if (r != master &&
          next[static_cast<std::size_t>(r)] != pieces[static_cast<std::size_t>(r)].size()) {
        return;
      }
    }
    sig->scheduled_task_cpu_ns = std::move(costs);
  } catch (const TraceError&) {
    // A cut trace: the first read reported it.
    sig->scheduled_tasks = 0;
    sig->scheduled_task_cpu_sum_ns = 0;
  }
}

namespace {

// The phases of a run from its compressed ranks (AnalyzeTraceUnder): `sig` holds what the
// pass over the trace found (metadata, communicators, warnings), `seqs` and `orders` each
// rank's instances and run under `options`.
Signature PhasesOf(Signature sig, const TraceSource& source, const AnalyzeOptions& options,
                   const int n, std::vector<std::vector<Instance>> seqs,
                   std::vector<Sequence> orders,
                   const std::vector<std::vector<double>>& group_end_ns,
                   const std::vector<double>& offsets, const double traced_ns) {
  TimeOnGlobalClock(&seqs, group_end_ns, offsets);
  if (std::getenv("PAS2P_PHASES_DEBUG") != nullptr) {
    for (int r = 0; r < n; ++r) {
      std::fprintf(stderr, "rank %d:", r);
      for (const Instance& inst : seqs[r]) {
        std::fprintf(stderr, " [%zu calls x%.0f cpu=%.0f steps %lld-%lld]", inst.leaves.size(),
                     inst.weight, inst.CpuPerOccurrence(), static_cast<long long>(inst.first_step),
                     static_cast<long long>(inst.last_step));
      }
      std::fprintf(stderr, "\n  order: %s\n",
                   FormatSequence(orders[static_cast<std::size_t>(r)]).c_str());
    }
  }

  // Each rank's separate loops of replies (before equal instances merge).
  std::vector<std::int64_t> reply_rounds(seqs.size(), 0);
  for (std::size_t r = 0; r < seqs.size(); ++r) reply_rounds[r] = ReplyRounds(orders[r], seqs[r]);
  std::vector<std::vector<std::size_t>> merged_into;
  MergeEqualInstancesOfRanks(&seqs, options, &merged_into);
  std::size_t reference = 0;
  std::vector<RankParts> parts;
  const int master = RegroupSelfScheduled(
      &seqs, &parts, *std::max_element(reply_rounds.begin(), reply_rounds.end()) > 1);
  if (master >= 0) {
    sig.scheduled_rounds = static_cast<int>(reply_rounds[static_cast<std::size_t>(master)]);
    FindTaskCosts(source, master, &sig);
  }
  std::vector<RankInstances> aligned;
  // A self-scheduled run's aligned phases are in the run's order (its ranks' instances were
  // regrouped, so the compressors' orders no longer name them).
  const bool flat_order = master >= 0;
  // A run of several rounds: the aligned indices of one round's phases (AlignRounds).
  std::size_t round_first = 0, round_end = 0;
  if (master >= 0 && sig.scheduled_rounds > 1) {
    if (auto a = AlignRounds(parts, master, sig.scheduled_rounds, &round_first, &round_end)) {
      aligned = std::move(*a);
      sig.rounds_separated = true;
    }
  }
  if (master >= 0 && sig.scheduled_rounds > 1 && !sig.rounds_separated) {
    sig.warnings.push_back(
        "rank " + std::to_string(master) + " hands out tasks to whichever worker answers in " +
        std::to_string(sig.scheduled_rounds) +
        " separate rounds (e.g. one per time step) that are not ended by the same collectives "
        "of all ranks on every rank, so the rounds cannot be told apart on the workers and "
        "`pas2p model` and `predict` cannot extrapolate this run");
  }
  if (master >= 0 && sig.rounds_separated) {
    // aligned above, one round's phases pooled over the rounds
  } else if (master >= 0) {
    std::vector<RankParts> copy = parts;
    if (auto a = AlignSelfScheduled(std::move(copy))) {
      aligned = std::move(*a);
    } else {
      // Collectives that differ between the ranks: the parts aligned by logical time.
      for (std::size_t r = 0; r < parts.size(); ++r) {
        seqs[r] = std::move(parts[r].before);
        if (parts[r].core) seqs[r].push_back(std::move(*parts[r].core));
        for (Instance& i : parts[r].after) seqs[r].push_back(std::move(i));
      }
      aligned = Align(std::move(seqs), &sig.warnings, &reference);
    }
  } else {
    aligned = Align(std::move(seqs), &sig.warnings, &reference);
  }
  // The global phase of each aligned phase (-1: none), and its weight.
  std::vector<int> global_of_step(aligned.size(), -1);
  std::vector<double> weight_of_step(aligned.size(), 0);

  // Global phases: equal structure on every rank and similar compute merge.
  std::vector<GlobalPhase> globals;
  std::unordered_multimap<std::uint64_t, std::size_t> by_key;
  for (std::size_t k = 0; k < aligned.size(); ++k) {
    RankInstances& step = aligned[k];
    std::uint64_t key = internal::Mix(0x474C4F42);
    double weight = 0;
    bool any = false;
    for (std::size_t r = 0; r < step.size(); ++r) {
      key = internal::Mix(key ^ (step[r] ? step[r]->hash : 0x4142534E54ULL) ^ (r << 1));
      if (step[r]) {
        weight = std::max(weight, step[r]->weight);
        any = true;
      }
    }
    if (!any) continue;
    std::optional<std::size_t> match;
    auto [lo, hi] = by_key.equal_range(key);
    for (auto it = lo; it != hi && !match; ++it) {
      const GlobalPhase& g = globals[it->second];
      bool similar = true;
      for (std::size_t r = 0; r < step.size() && similar; ++r) {
        if (!step[r] || !g.ranks[r]) continue;
        similar = step[r]->leaves.size() == g.ranks[r]->leaves.size() &&
                  SimilarRuns(ComputeOfRun(*g.ranks[r]), ComputeOfRun(*step[r]), options);
      }
      if (similar) match = it->second;
    }
    std::size_t id;
    if (match) {
      id = *match;
      GlobalPhase& g = globals[id];
      for (std::size_t r = 0; r < step.size(); ++r) {
        if (step[r] && g.ranks[r]) MergeInstance(&*g.ranks[r], *step[r]);
      }
      g.weight += weight;
    } else {
      id = globals.size();
      globals.push_back(GlobalPhase{key, weight, std::move(step)});
      by_key.emplace(key, id);
    }
    global_of_step[k] = static_cast<int>(id);
    weight_of_step[k] = weight;
  }
  // The run's order: the reference rank's, its instances renamed to global phases.
  if (flat_order) {
    Sequence items, round;
    for (std::size_t k = 0; k < aligned.size(); ++k) {
      if (sig.rounds_separated && k == round_end && !round.empty()) {
        items.push_back(SequenceItem::Loop(sig.scheduled_rounds, std::move(round)));
        round.clear();
      }
      if (global_of_step[k] < 0) continue;
      const auto item = SequenceItem::Run(global_of_step[k], std::llround(weight_of_step[k]));
      (sig.rounds_separated && k >= round_first && k < round_end ? round : items).push_back(item);
    }
    if (!round.empty()) items.push_back(SequenceItem::Loop(sig.scheduled_rounds, std::move(round)));
    sig.sequence = SimplifySequence(std::move(items));
    orders.clear();
  } else {
    const std::vector<std::size_t>& into = merged_into[reference];
    std::function<void(Sequence*)> rename = [&](Sequence* items) {
      for (SequenceItem& item : *items) {
        if (item.is_loop()) {
          rename(&item.body);
          continue;
        }
        const auto i = static_cast<std::size_t>(item.phase);
        const std::size_t k = i < into.size() ? into[i] : aligned.size();
        const int id = k < global_of_step.size() ? global_of_step[k] : -1;
        if (id < 0) {
          item = SequenceItem::Loop(0, {});  // dropped by SimplifySequence
        } else {
          item.phase = id;
        }
      }
    };
    rename(&orders[reference]);
    sig.sequence = SimplifySequence(std::move(orders[reference]));
    orders.clear();
  }

  double sum_total_s = 0;
  for (std::size_t id = 0; id < globals.size(); ++id) {
    const GlobalPhase& g = globals[id];
    Phase p;
    p.id = static_cast<int>(id);
    p.weight = g.weight;
    std::uint64_t structure = internal::Mix(0x53545255);
    bool first = true;
    double global_ns = 0;
    double max_occ = 0;
    double min_occ = 0;
    bool first_occ = true;
    for (std::size_t r = 0; r < g.ranks.size(); ++r) {
      if (!g.ranks[r]) continue;
      const Instance& inst = *g.ranks[r];
      RankPhase rp;
      rp.rank = static_cast<int>(r);
      rp.weight = inst.weight;
      rp.time_s = inst.time_ns * 1e-9;
      rp.compute.cpu_ns = SumStats(inst.leaves, &ComputeStats::cpu_ns);
      rp.compute.instructions = SumStats(inst.leaves, &ComputeStats::instructions);
      rp.compute.cycles = SumStats(inst.leaves, &ComputeStats::cycles);
      for (const Leaf& l : inst.leaves) rp.events.push_back(ToPhaseEvent(l));
      structure = internal::Mix(structure ^ inst.hash);
      global_ns += inst.global_ns;
      const double occ = inst.weight > 0 ? inst.time_ns * 1e-9 / inst.weight : 0;
      max_occ = first_occ ? occ : std::max(max_occ, occ);
      min_occ = first_occ ? occ : std::min(min_occ, occ);
      first_occ = false;
      if (first || inst.first_step < p.first_step) p.first_step = inst.first_step;
      if (first || inst.first_wall_ns * 1e-9 < p.first_wall_s) {
        p.first_wall_s = inst.first_wall_ns * 1e-9;
      }
      first = false;
      p.ranks.push_back(std::move(rp));
    }
    AddOccurrenceStats(g.ranks, &p);
    p.structure = Hex(structure);
    // The phase's share of the run on the global clock (TimeOnGlobalClock); the slowest and
    // fastest rank's own times per occurrence are kept too.
    p.total_time_s = global_ns * 1e-9;
    p.time_s = p.weight > 0 ? p.total_time_s / p.weight : 0;
    p.time_per_rank_max_s = max_occ;
    p.time_per_rank_min_s = min_occ;
    p.description = DescribePhase(p, n, sig.communicators);
    sum_total_s += p.total_time_s;
    sig.phases.push_back(std::move(p));
  }

  sig.traced_time_s = traced_ns * 1e-9;
  for (Phase& p : sig.phases) p.share = sum_total_s > 0 ? p.total_time_s / sum_total_s : 0;
  // Relevant: the largest phases until they cover the threshold.
  std::vector<std::size_t> order(sig.phases.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sig.phases[a].total_time_s > sig.phases[b].total_time_s;
  });
  double covered = 0;
  for (std::size_t i : order) {
    if (covered >= options.relevance_threshold && sum_total_s > 0) break;
    sig.phases[i].relevant = true;
    covered += sig.phases[i].share;
    if (sum_total_s <= 0) break;  // nothing timed: the first phase stands for the run
  }
  sig.coverage = covered;
  sig.pet_s = 0;
  sig.pet_relevant_s = 0;
  for (const Phase& p : sig.phases) {
    sig.pet_s += p.time_s * p.weight;
    if (p.relevant) sig.pet_relevant_s += p.time_s * p.weight;
  }
  sig.pet_error = sig.traced_time_s > 0 ? (sig.pet_s - sig.traced_time_s) / sig.traced_time_s : 0;

  bool repeats = false;
  for (const Phase& p : sig.phases) repeats = repeats || p.weight > 1.5;
  if (!repeats) {
    sig.warnings.push_back(
        "no repetition found: the run is described by " + std::to_string(sig.phases.size()) +
        " phase" + (sig.phases.size() == 1 ? "" : "s") +
        " of weight 1 (a signature without repetition predicts no better than the trace)");
  }
  return sig;
}

// The signatures, in order; rethrows the first that failed.
std::vector<Signature> Taken(std::vector<Outcome<Signature>> done) {
  std::vector<Signature> out;
  for (Outcome<Signature>& d : done) out.push_back(std::move(d.Get()));
  return out;
}

}  // namespace

std::vector<Signature> AnalyzeTraceUnder(const TraceSource& source,
                                         const std::vector<AnalyzeOptions>& analyses,
                                         const int threads) {
  if (analyses.empty()) return {};
  std::string error;
  std::vector<double> similarities;
  for (const AnalyzeOptions& o : analyses) {
    if (!o.IsValid(&error)) throw UserError(error);
    AnalyzeOptions same = o;
    same.similarity = analyses.front().similarity;
    if (!(same == analyses.front())) {
      // Options that differ in more than the similarity: each analysis on its own.
      std::vector<Outcome<Signature>> done =
          RunInParallel<Signature>(analyses.size(), threads, [&](std::size_t k) {
            return std::move(AnalyzeTraceUnder(source, {analyses[k]}).front());
          });
      return Taken(std::move(done));
    }
    similarities.push_back(o.similarity);
  }
  const AnalyzeOptions& options = analyses.front();
  const int n = source.nprocs();
  if (n <= 0) throw TraceError(source.description() + ": the trace has no ranks");

  std::vector<RankCompressor> compressors;
  std::map<CommId, std::vector<std::int32_t>> comms;
  std::map<CommId, std::int32_t> comm_origins;
  std::vector<SyncPoints> sync;
  // One pass over the trace: every rank's calls through its compressor, which is then
  // finished. `whole_run` (from an earlier pass): the ranks' gaps between receive waits.
  auto pass = [&](const std::vector<RankCompressor::WaitGaps>* whole_run) {
    compressors.clear();
    compressors.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      compressors.emplace_back(r, n, options, similarities);
      if (whole_run)
        compressors.back().SetWholeRunWaitGaps((*whole_run)[static_cast<std::size_t>(r)]);
    }
    comms.clear();
    comm_origins.clear();
    sync.assign(static_cast<std::size_t>(n), SyncPoints{});
    LogicalTraceSummary result = RunLogicalClock(
        source,
        [&](const LogicalEvent& le) {
          const Event& e = *le.event;
          if (e.kind == EventKind::kCommCreate && !comms.count(e.new_comm)) {
            comms[e.new_comm] = e.members;
            comm_origins[e.new_comm] = static_cast<std::int32_t>(e.value);
          }
          if (IsCollective(e.kind)) {
            auto it = comms.find(e.comm);
            const bool everyone =
                e.comm == kCommWorld || (it != comms.end() && it->second.size() == std::size_t(n));
            if (everyone) {
              SyncPoints& sp = sync[static_cast<std::size_t>(le.rank)];
              auto& list = Synchronizes(e.kind) ? sp.full[e.comm] : sp.rooted[e.comm];
              if (list.size() < kMaxSyncPoints) list.push_back(static_cast<double>(e.wall_end_ns));
            }
          }
          compressors[static_cast<std::size_t>(le.rank)].Add(le.step, *le.event);
        },
        options.clock);
    for (RankCompressor& c : compressors) c.Finish();
    return result;
  };
  LogicalTraceSummary summary = pass(nullptr);
  // A rank's first halo waits, split where the rank had not yet shown whether such gaps are
  // noise, and noise by its whole run (RankCompressor::waits_split_early): once more, every
  // rank deciding on its whole run's gaps (rare: small counts' first exchange).
  if (std::any_of(compressors.begin(), compressors.end(),
                  [](const RankCompressor& c) { return c.waits_split_early(); })) {
    std::vector<RankCompressor::WaitGaps> gaps;
    for (const RankCompressor& c : compressors) gaps.push_back(c.wait_gaps());
    summary = pass(&gaps);
  }

  Signature sig;
  // Without a count in it (bin/cg.S.16 -> cg.S), so runs built per count relate.
  sig.application = ApplicationBaseName(source.metadata().application, n);
  sig.nprocs = n;
  sig.trace = source.description();
  sig.relevance_threshold = options.relevance_threshold;
  sig.cut = summary.cut || !source.metadata().IsComplete();
  sig.counters = source.metadata().counters;
  sig.warnings = summary.warnings;
  if (!source.metadata().untraced_calls.empty()) {
    // Calls the tracer counted but did not record (one-sided, MPI-IO, neighbourhood
    // collectives): their time is inside the compute bursts, so the phases hold it as compute.
    std::string calls;
    for (const auto& [name, count] : source.metadata().untraced_calls) {
      calls += (calls.empty() ? "" : ", ") + name + " x" + std::to_string(count);
    }
    sig.warnings.push_back(std::string(kUntracedCallsWarning) + " (" + calls +
                           ", over all ranks): their time is counted as compute, so a "
                           "prediction scales it like compute");
  }
  if (std::string w = OversubscriptionWarning(source.metadata()); !w.empty()) {
    sig.warnings.push_back(std::move(w));
  }
  if (!source.metadata().IsComplete() && !summary.cut) {
    sig.warnings.push_back("the trace metadata says the run is " + source.metadata().status +
                           (source.metadata().status_reason.empty()
                                ? std::string()
                                : " (" + source.metadata().status_reason + ")"));
  }
  for (const auto& [id, members] : comms)
    sig.communicators.push_back(Communicator{id, members, comm_origins[id]});

  double traced_ns = 0;
  std::vector<std::vector<double>> group_end_ns(static_cast<std::size_t>(n));
  std::vector<std::string> short_ranks;  // the first few ranks whose calls are not all held
  int short_count = 0;
  for (int r = 0; r < n; ++r) {
    if (std::abs(compressors[r].HeldCalls() - static_cast<double>(compressors[r].calls())) > 0.5 &&
        ++short_count <= 4) {
      char held[32];
      std::snprintf(held, sizeof held, "%.0f", compressors[r].HeldCalls());
      short_ranks.push_back("rank " + std::to_string(r) + ": " + held + " of " +
                            std::to_string(compressors[r].calls()));
    }
    traced_ns = std::max(traced_ns, compressors[r].total_time_ns());
    group_end_ns[r] = compressors[r].group_end_ns();
  }
  if (short_count > 0) {
    std::string list;
    for (const std::string& s : short_ranks) list += (list.empty() ? "" : "; ") + s;
    if (short_count > 4) list += "; " + std::to_string(short_count - 4) + " more ranks";
    sig.warnings.push_back(
        "the phases do not hold every call the ranks made (" + list +
        "): the loops were folded inconsistently, so the phases' weights and the prediction "
        "miss those calls; please report this trace");
  }
  const std::vector<double> offsets = ClockOffsets(sync);
  sync.clear();
  // The phases under each analysis, from its merges of the runs.
  const std::size_t k_count = analyses.size();
  std::vector<std::vector<std::vector<Instance>>> seqs(
      k_count, std::vector<std::vector<Instance>>(static_cast<std::size_t>(n)));
  std::vector<std::vector<Sequence>> orders(k_count,
                                            std::vector<Sequence>(static_cast<std::size_t>(n)));
  for (std::size_t k = 0; k < k_count; ++k) {
    for (int r = 0; r < n; ++r) {
      seqs[k][r] = compressors[r].TakeInstances(k);
      orders[k][r] = compressors[r].OrderOf(k);
    }
  }
  compressors.clear();
  // Each on its own copy of what the pass found, so they may run at once.
  std::vector<Outcome<Signature>> done =
      RunInParallel<Signature>(k_count, threads, [&](std::size_t k) {
        return PhasesOf(sig, source, analyses[k], n, std::move(seqs[k]), std::move(orders[k]),
                        group_end_ns, offsets, traced_ns);
      });
  return Taken(std::move(done));
}

Signature AnalyzeTrace(const TraceSource& source, const AnalyzeOptions& options) {
  return std::move(AnalyzeTraceUnder(source, {options}).front());
}

// ---------------------------------------------------------------------------------------
// Words.

namespace {

std::string Plural(double count, const std::string& word) {
  std::ostringstream out;
  const double rounded = std::round(count * 10) / 10;
  if (std::fabs(rounded - std::round(rounded)) < 1e-9) {
    out << static_cast<long long>(std::llround(rounded));
  } else {
    out << rounded;
  }
  out << ' ' << word;
  if (std::fabs(count - 1) > 1e-9) out << 's';
  return out.str();
}

std::string Bytes(double b) {
  char buf[32];
  if (b >= 1024.0 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024));
  } else if (b >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  }
  return buf;
}

// If every pair is a pair of neighbours on a 1-, 2- or 3-D grid of the ranks (row-major,
// possibly periodic), says which grid ("to grid neighbours (4 x 4, periodic)").
std::string GridPattern(const std::vector<std::pair<int, int>>& pairs, int nprocs) {
  struct Dims {
    int d[3];
  };
  std::vector<Dims> candidates;
  for (int a = 1; a <= nprocs; ++a) {
    if (nprocs % a) continue;
    for (int b = 1; b <= nprocs / a; ++b) {
      if ((nprocs / a) % b) continue;
      candidates.push_back(Dims{{a, b, nprocs / a / b}});
    }
  }
  // Fewest dimensions first, then the most balanced.
  auto rank_of = [](const Dims& x) {
    int dims = (x.d[0] > 1) + (x.d[1] > 1) + (x.d[2] > 1);
    int spread = *std::max_element(x.d, x.d + 3) - *std::min_element(x.d, x.d + 3);
    return std::make_pair(dims, spread);
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Dims& a, const Dims& b) { return rank_of(a) < rank_of(b); });
  for (const Dims& c : candidates) {
    if (rank_of(c).first == 0) continue;
    bool ok = true;
    bool wraps = false;
    for (const auto& [r, p] : pairs) {
      int dist = 0;
      int rr = r, pp = p;
      for (int k = 0; k < 3; ++k) {
        const int n = c.d[k];
        const int x = rr % n, y = pp % n;
        rr /= n;
        pp /= n;
        const int direct = std::abs(x - y);
        const int around = n - direct;
        if (around < direct) wraps = true;
        dist += std::min(direct, around);
      }
      if (dist != 1) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    std::string dims;
    for (int k = 0; k < 3; ++k) {
      if (c.d[k] == 1) continue;
      dims += (dims.empty() ? "" : " x ") + std::to_string(c.d[k]);
    }
    const int ndims = rank_of(c).first;
    return std::string(ndims == 1 ? "to ring neighbours (" : "to grid neighbours (") + dims +
           (wraps ? ", periodic)" : ")");
  }
  return "";
}

// Where a set of (rank, peer) pairs goes, in words.
std::string PeerPattern(const std::vector<std::pair<int, int>>& pairs, int nprocs) {
  if (pairs.empty()) return "";
  std::set<int> peers;
  for (const auto& [r, p] : pairs) peers.insert(p);
  if (peers.size() == 1) return "to rank " + std::to_string(*peers.begin());
  bool xor_pattern = true;
  std::set<int> bits;
  for (const auto& [r, p] : pairs) {
    const unsigned x = static_cast<unsigned>(r ^ p);
    if (x == 0 || (x & (x - 1)) != 0) {
      xor_pattern = false;
      break;
    }
    bits.insert(static_cast<int>(std::log2(static_cast<double>(x)) + 0.5));
  }
  if (xor_pattern) {
    std::string s = "to XOR partners (bit";
    s += bits.size() > 1 ? "s " : " ";
    bool first = true;
    for (int b : bits) {
      s += (first ? "" : ",") + std::to_string(b);
      first = false;
    }
    return s + ")";
  }
  if (std::string grid = GridPattern(pairs, nprocs); !grid.empty()) return grid;
  // Displacements modulo P, folded to (-P/2, P/2].
  std::set<int> disps;
  for (const auto& [r, p] : pairs) {
    int d = ((p - r) % nprocs + nprocs) % nprocs;
    if (d > nprocs / 2) d -= nprocs;
    disps.insert(d);
  }
  if (disps.size() <= 8) {
    std::set<int> mags;
    for (int d : disps) mags.insert(std::abs(d));
    bool symmetric = true;
    for (int d : disps) symmetric = symmetric && disps.count(-d) > 0;
    std::string s = symmetric ? "to neighbours at " : "to peers at ";
    bool first = true;
    if (symmetric) {
      for (int m : mags) {
        s += (first ? "" : ", ") + std::string(m == 0 ? "" : "+-") + std::to_string(m);
        first = false;
      }
    } else {
      for (int d : disps) {
        s += (first ? "" : ", ") + std::string(d > 0 ? "+" : "") + std::to_string(d);
        first = false;
      }
    }
    return s + " (mod " + std::to_string(nprocs) + ")";
  }
  return "to " + std::to_string(peers.size()) + " different peers";
}

}  // namespace

std::string DescribePhase(const Phase& phase, int nprocs,
                          const std::vector<Communicator>& communicators) {
  if (phase.ranks.empty()) return "nothing";
  std::set<CommId> world = {kCommWorld};
  for (const Communicator& c : communicators) {
    if (c.origin != static_cast<std::int32_t>(CommOrigin::kDup) &&
        c.origin != static_cast<std::int32_t>(CommOrigin::kCart)) {
      continue;
    }
    bool identity = static_cast<int>(c.members.size()) == nprocs;
    for (std::size_t i = 0; i < c.members.size() && identity; ++i) {
      identity = c.members[i] == static_cast<std::int32_t>(i);
    }
    if (identity) world.insert(c.id);
  }
  // Per kind: calls per rank and occurrence, pairs, bytes.
  struct KindInfo {
    double calls = 0;
    double bytes = 0;
    std::vector<std::pair<int, int>> pairs;
    bool sub_comm = false;
    bool moving_root = false;
  };
  std::map<int, KindInfo> kinds;
  const double nranks = static_cast<double>(phase.ranks.size());
  for (const RankPhase& rp : phase.ranks) {
    for (const PhaseEvent& e : rp.events) {
      KindInfo& k = kinds[static_cast<int>(e.kind)];
      k.calls += 1.0 / nranks;
      if (e.root_step == RootStep::kFixed) {
        k.bytes += e.bytes.mean;
      } else {  // over every occurrence, the rank's turns as the root included
        Stats all = e.bytes;
        all.Merge(e.root_bytes);
        k.bytes += all.mean;
        k.moving_root = true;
      }
      if (IsPointToPoint(e.kind) && e.peer >= 0) k.pairs.emplace_back(rp.rank, e.peer);
      if (IsCollective(e.kind) && !world.count(e.comm)) k.sub_comm = true;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [kind_int, info] : kinds) {
    const auto kind = static_cast<EventKind>(kind_int);
    if (kind == EventKind::kInit || kind == EventKind::kFinalize ||
        kind == EventKind::kCommCreate || kind == EventKind::kCommFree) {
      parts.push_back(Plural(info.calls, std::string(EventKindName(kind))));
      continue;
    }
    std::string s = Plural(info.calls, std::string(EventKindName(kind)));
    const double per_call = info.calls > 0 ? info.bytes / (info.calls * nranks) : 0;
    if (IsPointToPoint(kind)) {
      std::string where = PeerPattern(info.pairs, nprocs);
      if (kind == EventKind::kRecv || kind == EventKind::kIrecv) {
        if (where.rfind("to ", 0) == 0) where = "from " + where.substr(3);
      }
      if (!where.empty()) s += " " + where;
      s += ", " + Bytes(per_call) + " each";
    } else if (IsCollective(kind)) {
      if (info.sub_comm) s += " on sub-communicators";
      if (info.moving_root) s += " from a moving root";
      if (kind != EventKind::kBarrier) s += " (" + Bytes(per_call) + ")";
    }
    parts.push_back(s);
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out;
}

std::string FormatSignatureTable(const Signature& sig) {
  std::ostringstream out;
  char line[512];
  out << "Signature of " << (sig.application.empty() ? "?" : sig.application) << ", " << sig.nprocs
      << " rank" << (sig.nprocs == 1 ? "" : "s") << " (" << sig.trace << ")\n";
  std::snprintf(line, sizeof line,
                "traced time %.6f s; PET %.6f s (%+.2f%%); relevant phases cover %.1f%% "
                "(threshold %.0f%%)\n",
                sig.traced_time_s, sig.pet_s, 100 * sig.pet_error, 100 * sig.coverage,
                100 * sig.relevance_threshold);
  out << line;
  out << "  id    weight   time/occ(ms)   share  rel  cpu/burst(us)  communication\n";
  for (const Phase& p : sig.phases) {
    double cpu = 0;
    double bursts = 0;
    for (const RankPhase& rp : p.ranks) {
      for (const PhaseEvent& e : rp.events) {
        cpu += e.compute.cpu_ns.mean;
        bursts += 1;
      }
    }
    std::snprintf(line, sizeof line, "%4d %9.0f %14.4f %6.1f%%  %3s %14.2f  ", p.id, p.weight,
                  p.time_s * 1e3, 100 * p.share, p.relevant ? "*" : "",
                  bursts > 0 ? cpu / bursts * 1e-3 : 0.0);
    out << line << p.description << "\n";
  }
  std::string run = FormatSequence(sig.sequence);
  if (run.size() > 600) run = run.substr(0, 600) + " ...";
  out << "run (phase ids in order, (...) xN a loop): " << run << "\n";
  for (const std::string& w : sig.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace pas2p::phases
