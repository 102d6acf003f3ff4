#include "fit_internal.h"

#include <algorithm>
#include <numeric>
#include <sstream>

namespace pas2p::patterns::internal {
namespace {

bool ExistsAtAll(GridRule grid, const std::vector<std::int64_t>& counts, std::int64_t* least) {
  grid.min_extent = 1;
  *least = 2;
  for (std::int64_t p : counts) {
    auto e = grid.Extents(p);
    if (!e) return false;
    for (std::int64_t x : *e) *least = std::min(*least, x);
  }
  return true;
}

}  // namespace

std::vector<GridRule> CandidateGrids(const std::vector<std::int64_t>& counts, bool components) {
  std::vector<GridRule> all;
  all.push_back({GridShape::kLinear, 1, {}, 0, 1});
  all.push_back({GridShape::kSquare, 2, {}, 0, 1});
  for (std::vector<int> order : {std::vector<int>{1, 0}, std::vector<int>{0, 1}}) {
    all.push_back({GridShape::kDimsCreate, 2, order, 0, 1});
  }
  if (!counts.empty()) {
    std::int64_t g = 0;
    for (std::int64_t p : counts) g = std::gcd(g, p);
    for (std::int64_t c = 2; c <= g; ++c) {
      if (g % c != 0) continue;
      all.push_back({GridShape::kFixedFast, 2, {}, c, 1});
      all.push_back({GridShape::kFixedSlow, 2, {}, c, 1});
    }
  }
  all.push_back({GridShape::kCube, 3, {}, 0, 1});
  // The factors in a monotone order first (MPI_Cart_create's row-major layout, then the first
  // factor fastest, as codes that lay out their own grid x fastest do), so that where the
  // traced counts cannot tell two orders apart (equal factors at every count: LAMMPS at 27,
  // 36, 45 has {d0, 3, 3}) the duplicate kept is a monotone one (at 48 = {4, 4, 3} its grid is
  // 4 x 4 x 3, x fastest, not 4 x 3 x 4).
  for (std::vector<int> order :
       {std::vector<int>{2, 1, 0}, std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1},
        std::vector<int>{1, 2, 0}, std::vector<int>{1, 0, 2}, std::vector<int>{0, 2, 1}}) {
    all.push_back({GridShape::kDimsCreate, 3, order, 0, 1});
  }
  // After MPI_Dims_create's, so that where the two agree at every traced count (powers of two)
  // the grid kept first is the MPI one; where they part at the target a warning says so.
  all.push_back({GridShape::kOptimalShapeXYZ, 3, {}, 0, 1});
  // Last, and only when asked for, components with a grid each (a world split into a fixed
  // number of parts): at many counts they coincide with a grid above (12 and 16 ranks as 2 x
  // MPI_Dims_create(P/2, 2) or MPI_Dims_create(P, 3)), where the simpler rule is the better
  // guess unless the communicator the calls are made on says otherwise (synthesis' model).
  if (components && !counts.empty()) {
    std::int64_t g = 0;
    for (std::int64_t p : counts) g = std::gcd(g, p);
    // Blocks first, then interleaved (a split by rank % c is rarer than one into halves).
    for (const GridShape shape : {GridShape::kComponents, GridShape::kInterleavedComponents}) {
      for (std::int64_t c = 2; c <= g; ++c) {
        if (g % c != 0) continue;
        for (std::vector<int> order : {std::vector<int>{1, 0}, std::vector<int>{0, 1},
                                       std::vector<int>{2, 1, 0}, std::vector<int>{0, 1, 2}}) {
          const int ndims = static_cast<int>(order.size()) + 1;
          all.push_back({shape, ndims, order, c, 1});
        }
      }
    }
  }

  std::vector<GridRule> out;
  for (GridRule& grid : all) {
    std::int64_t least = 1;
    if (!ExistsAtAll(grid, counts, &least)) continue;
    grid.min_extent = std::min<std::int64_t>(least, 2);
    // Two orders of MPI_Dims_create factors that agree at every count are one grid.
    bool duplicate = false;
    for (const GridRule& kept : out) {
      if (kept.shape != grid.shape || kept.ndims != grid.ndims) continue;
      bool same = true;
      for (std::int64_t p : counts) same = same && kept.Extents(p) == grid.Extents(p);
      duplicate = duplicate || (same && (grid.shape == GridShape::kDimsCreate ||
                                         grid.shape == GridShape::kComponents ||
                                         grid.shape == GridShape::kInterleavedComponents));
    }
    if (!duplicate) out.push_back(grid);
  }
  return out;
}

ValidCounts GridCounts(const GridRule& grid) {
  ValidCounts v;
  const std::int64_t m = grid.min_extent;
  switch (grid.shape) {
    case GridShape::kLinear:
      v.rule = CountRule::kAny;
      v.min_count = m;
      break;
    case GridShape::kSquare:
      v.rule = CountRule::kSquares;
      v.min_count = m * m;
      break;
    case GridShape::kCube:
      v.rule = CountRule::kCubes;
      v.min_count = m * m * m;
      break;
    case GridShape::kFixedFast:
    case GridShape::kFixedSlow:
      v.rule = CountRule::kMultiplesOf;
      v.factor = grid.fixed;
      v.min_count = grid.fixed * m;
      break;
    case GridShape::kDimsCreate:
    case GridShape::kOptimalShapeXYZ:
    case GridShape::kComponents:
    case GridShape::kInterleavedComponents:
      v.rule = CountRule::kGrid;
      v.grid = grid;
      v.min_count = 1;
      for (int i = 0; i < grid.ndims; ++i) v.min_count *= m;
      break;
  }
  return v;
}

std::string DimName(std::size_t i) {
  static const char* kNames[] = {"x", "y", "z"};
  return i < 3 ? kNames[i] : "d" + std::to_string(i);
}

std::string JoinCounts(const std::vector<std::int64_t>& counts) {
  std::ostringstream out;
  for (std::size_t i = 0; i < counts.size(); ++i) out << (i ? ", " : "") << counts[i];
  return out.str();
}

}  // namespace pas2p::patterns::internal
