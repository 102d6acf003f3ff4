// Helpers shared by the general-equation and communicator fitters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pas2p/patterns/general_equation.h"
#include "pas2p/patterns/grid.h"
#include "pas2p/patterns/valid_counts.h"

namespace pas2p::patterns::internal {

// Grids that exist at every count, in preference order: fewest dimensions first, then the
// most specific count rule (sqrt/cbrt, then MPI_Dims_create, then one fixed extent).
// min_extent is min(2, least extent at the counts).
// With `components`, also GridShape::kComponents, then kInterleavedComponents (after every
// other grid): tried only where nothing else fits, or asked for (a call on a sub-communicator
// that the other grids take outside it).
std::vector<GridRule> CandidateGrids(const std::vector<std::int64_t>& counts,
                                     bool components = false);

// The count rule a grid imposes ("perfect squares >= 4" for sqrt grids, ...).
ValidCounts GridCounts(const GridRule& grid);

// "x", "y", "z", "d3", ... for dimension i (fastest first).
std::string DimName(std::size_t i);

std::string JoinCounts(const std::vector<std::int64_t>& counts);

// The preferred family only (no alternatives): what AnalyzeLocal names the shape by.
std::optional<GeneralEquation> FirstFittingEquation(const std::vector<CommMap>& maps);

// The least count in (after, after + 256], else `upto`, at which `disagree(p)` holds; 0 if none
// (counts beyond the first 256 are not searched one by one: a rule's valid counts can be sparse).
template <typename Disagrees>
std::int64_t FirstCountWhere(std::int64_t after, std::int64_t upto, Disagrees disagree) {
  for (std::int64_t p = after + 1; p <= std::min(upto, after + 256); ++p) {
    if (disagree(p)) return p;
  }
  return upto > after + 256 && disagree(upto) ? upto : 0;
}

}  // namespace pas2p::patterns::internal
