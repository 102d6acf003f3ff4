// Local equations: the compressed, exact description of one communication at one count
// (paper 001, section 4.2).
//
// Dynamic patterns (EC1) exchange or permute bits of the source rank:
//   EC1 = {phase, comm, exchange | permutation, bits involved}
// e.g. a butterfly stage sends src ^ 2^k (exchange, bits {k}), a transpose of a 2^h x 2^h
// matrix rotates the rank's bits by h (permutation). Static patterns (EC2) are displacement
// sequences with repetitions:
//   EC2 = {phase, comm, [displacement {count, repetitions}] ...}
// e.g. the east neighbour on a 3 x 3 torus is {+1, +1, -2} three times, printed as in the
// paper's Table 1: "[+1 {+2,+3}], [-2 {+1,+3}]". A source that sends to several ranks has a
// set of displacements; a source without partner has none ("-").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pas2p/patterns/comm_map.h"

namespace pas2p::patterns {

enum class PatternClass { kNone, kDynamic, kStatic };
enum class DynamicKind { kExchange, kPermutation };

// `count` consecutive sources with the same displacement set.
struct DisplacementRun {
  std::vector<std::int64_t> displacements;  // sorted; empty: no partner
  int count = 0;
  bool operator==(const DisplacementRun&) const = default;
};

struct LocalEquation {
  int phase = 0;  // labels for printing only
  int comm = 0;
  int nprocs = 0;
  PatternClass pattern_class = PatternClass::kNone;

  // kDynamic.
  DynamicKind dynamic_kind = DynamicKind::kExchange;
  std::vector<int> bits;         // bits involved (exchange: XORed bits; permutation: moved bits)
  std::vector<int> permutation;  // kPermutation: permutation[i] = destination bit of source bit i

  // kStatic (also filled for kDynamic, as the displacement view of the same map).
  std::vector<DisplacementRun> period;  // runs over consecutive sources, one period
  int repetitions = 1;                  // period length * repetitions == nprocs

  // The shape the map has at this count alone ("torus", "mesh", "ring", "wavefront",
  // "line", "butterfly", "transpose", "master-worker", "all-to-all", ...; "irregular" when no
  // family describes it).
  std::string shape;

  CommMap map;  // normalized; the equation is exact, this is what it encodes

  // "EC2 {phase 1, comm 1, [+1 {+2,+3}], [-2 {+1,+3}]}" /
  // "EC1 {phase 1, comm 1, exchange, bits {0,1,2}}".
  std::string ToString() const;
  // The Table 1 column: "[+1 {+2,+3}], [-2 {+1,+3}]", or "exchange bits {0}".
  std::string Formula() const;
  // The period as a sequence: "{+1,+1,-2} x 3".
  std::string Sequence() const;
};

// Analyzes one communication. Throws pas2p::UserError if the map is malformed.
LocalEquation AnalyzeLocal(const CommMap& map, int phase = 0, int comm = 0);

// Displacement runs of one period and the repetition count of a map (smallest period).
void FindPeriod(const std::vector<std::vector<std::int64_t>>& displacements,
                std::vector<DisplacementRun>* period, int* repetitions);

}  // namespace pas2p::patterns
