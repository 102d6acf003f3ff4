#include "pas2p/patterns/local_equation.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "fit_internal.h"
#include "pas2p/core/error.h"
#include "pas2p/patterns/general_equation.h"
#include "pas2p/patterns/grid.h"

namespace pas2p::patterns {
namespace {

std::string Signed(std::int64_t v) { return v > 0 ? "+" + std::to_string(v) : std::to_string(v); }

std::string FormatDisplacements(const std::vector<std::int64_t>& d) {
  if (d.empty()) return "-";
  if (d.size() == 1) return Signed(d[0]);
  std::string out = "{";
  for (std::size_t i = 0; i < d.size(); ++i) out += (i ? "," : "") + Signed(d[i]);
  return out + "}";
}

std::string FormatBits(const std::vector<int>& bits) {
  std::string out = "{";
  for (std::size_t i = 0; i < bits.size(); ++i) out += (i ? "," : "") + std::to_string(bits[i]);
  return out + "}";
}

// EC1 exchange: every source sends to src ^ 2^b for each bit b of one common set (partners
// >= nprocs dropped). Fills the bits; false if the map is not of that form.
bool DetectExchange(const CommMap& map, std::vector<int>* bits) {
  std::set<int> found;
  for (int src = 0; src < map.nprocs; ++src) {
    for (int d : map.dests[static_cast<std::size_t>(src)]) {
      unsigned mask = static_cast<unsigned>(src ^ d);
      if (mask == 0 || (mask & (mask - 1)) != 0) return false;
      found.insert(__builtin_ctz(mask));
    }
  }
  if (found.empty()) return false;
  for (int src = 0; src < map.nprocs; ++src) {
    std::vector<int> expect;
    for (int b : found) {
      int d = src ^ (1 << b);
      if (d < map.nprocs) expect.push_back(d);
    }
    std::sort(expect.begin(), expect.end());
    if (expect != map.dests[static_cast<std::size_t>(src)]) return false;
  }
  bits->assign(found.begin(), found.end());
  return true;
}

// EC1 permutation: nprocs = 2^n and dest = the source's bits permuted (not the identity).
bool DetectPermutation(const CommMap& map, std::vector<int>* permutation, std::vector<int>* bits) {
  auto n = ExactLog2(map.nprocs);
  if (!n || *n < 2) return false;
  for (const auto& d : map.dests) {
    if (d.size() != 1) return false;
  }
  if (map.dests[0][0] != 0) return false;
  std::vector<int> pi(static_cast<std::size_t>(*n));
  std::vector<bool> used(static_cast<std::size_t>(*n), false);
  for (int i = 0; i < *n; ++i) {
    auto b = ExactLog2(map.dests[static_cast<std::size_t>(1) << i][0]);
    if (!b || used[static_cast<std::size_t>(*b)]) return false;
    used[static_cast<std::size_t>(*b)] = true;
    pi[static_cast<std::size_t>(i)] = *b;
  }
  for (int src = 0; src < map.nprocs; ++src) {
    int d = 0;
    for (int i = 0; i < *n; ++i) {
      if (src & (1 << i)) d |= 1 << pi[static_cast<std::size_t>(i)];
    }
    if (d != map.dests[static_cast<std::size_t>(src)][0]) return false;
  }
  bits->clear();
  for (int i = 0; i < *n; ++i) {
    if (pi[static_cast<std::size_t>(i)] != i) bits->push_back(i);
  }
  if (bits->empty()) return false;  // identity: every rank sends to itself (static, +0)
  *permutation = pi;
  return true;
}

}  // namespace

void FindPeriod(const std::vector<std::vector<std::int64_t>>& displacements,
                std::vector<DisplacementRun>* period, int* repetitions) {
  const std::size_t n = displacements.size();
  std::size_t length = n;
  for (std::size_t l = 1; l < n; ++l) {
    if (n % l != 0) continue;
    bool ok = true;
    for (std::size_t i = l; i < n && ok; ++i) ok = displacements[i] == displacements[i - l];
    if (ok) {
      length = l;
      break;
    }
  }
  period->clear();
  for (std::size_t i = 0; i < length; ++i) {
    if (!period->empty() && period->back().displacements == displacements[i]) {
      ++period->back().count;
    } else {
      period->push_back({displacements[i], 1});
    }
  }
  *repetitions = length == 0 ? 1 : static_cast<int>(n / length);
}

LocalEquation AnalyzeLocal(const CommMap& raw, int phase, int comm) {
  std::string error;
  if (!raw.IsValid(&error)) {
    throw UserError("phase " + std::to_string(phase) + ", communication " + std::to_string(comm) +
                    ": " + error);
  }
  LocalEquation eq;
  eq.phase = phase;
  eq.comm = comm;
  eq.nprocs = raw.nprocs;
  eq.map = raw.Normalized();
  FindPeriod(Displacements(eq.map), &eq.period, &eq.repetitions);
  if (eq.map.IsEmpty()) {
    eq.pattern_class = PatternClass::kNone;
    eq.shape = "none";
    return eq;
  }
  if (DetectExchange(eq.map, &eq.bits)) {
    eq.pattern_class = PatternClass::kDynamic;
    eq.dynamic_kind = DynamicKind::kExchange;
  } else if (DetectPermutation(eq.map, &eq.permutation, &eq.bits)) {
    eq.pattern_class = PatternClass::kDynamic;
    eq.dynamic_kind = DynamicKind::kPermutation;
  } else {
    eq.pattern_class = PatternClass::kStatic;
  }
  std::optional<GeneralEquation> fit = internal::FirstFittingEquation({eq.map});
  eq.shape = fit ? fit->name : "irregular";
  return eq;
}

std::string LocalEquation::Formula() const {
  if (pattern_class == PatternClass::kNone) return "no communication";
  if (pattern_class == PatternClass::kDynamic) {
    if (dynamic_kind == DynamicKind::kExchange) return "exchange bits " + FormatBits(bits);
    std::string out = "permutation bits (";
    for (std::size_t i = 0; i < bits.size(); ++i) {
      out += (i ? ", " : "") + std::to_string(bits[i]) + "->" +
             std::to_string(permutation[static_cast<std::size_t>(bits[i])]);
    }
    return out + ")";
  }
  std::string out;
  for (std::size_t i = 0; i < period.size(); ++i) {
    out += (i ? ", " : "") + std::string("[") + FormatDisplacements(period[i].displacements) +
           " {+" + std::to_string(period[i].count) + ",+" + std::to_string(repetitions) + "}]";
  }
  return out;
}

std::string LocalEquation::Sequence() const {
  std::string out = "{";
  bool first = true;
  for (const DisplacementRun& run : period) {
    for (int i = 0; i < run.count; ++i) {
      out += (first ? "" : ",") + FormatDisplacements(run.displacements);
      first = false;
    }
  }
  return out + "} x " + std::to_string(repetitions);
}

std::string LocalEquation::ToString() const {
  std::ostringstream out;
  out << (pattern_class == PatternClass::kDynamic ? "EC1" : "EC2") << " {phase " << phase
      << ", comm " << comm << ", ";
  if (pattern_class == PatternClass::kDynamic) {
    out << (dynamic_kind == DynamicKind::kExchange ? "exchange, bits " + FormatBits(bits)
                                                   : Formula());
  } else {
    out << Formula();
  }
  out << "}";
  return out.str();
}

}  // namespace pas2p::patterns
