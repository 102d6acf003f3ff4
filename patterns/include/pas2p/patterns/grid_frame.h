// The process grid behind a set of point-to-point communications, found before their
// equations are fitted, so that calls can be compared by the direction they go on the grid.
//
// Why: on a non-periodic grid (a halo exchange or a wavefront on an MPI_Dims_create(P, 2)
// grid) a rank on an edge skips its missing neighbours, so the n-th call of a corner rank is
// not the n-th call of an interior rank; and the displacement (dest - src) of "the north
// neighbour" is -px, which changes with the count. On the right grid the same call is the
// same offset vector, (0, -1), at every count and on every rank that makes it.
//
// In:  the maps (rank -> partners) of every point-to-point call of one phase, one per count.
// Out: a grid rule (from the candidates the general-equation fitter tries) and a periodicity
//      (every dimension periodic, or none) on which the pairs of every count have the fewest
//      distinct offset vectors; nothing when no grid has fewer than the distinct
//      displacements over the counts (workers reporting to a master: a direction per rank).
//      The frame only names directions; it does not claim the pattern is a stencil (the
//      general equation decides that).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pas2p/patterns/comm_map.h"
#include "pas2p/patterns/grid.h"

namespace pas2p::patterns {

struct GridFrame {
  GridRule grid;
  std::vector<bool> periodic;        // per dimension, fastest first
  std::size_t distinct_offsets = 0;  // over every pair of every count used to find it
  // Sum over those offsets of their largest coordinate (in absolute value): of two grids with
  // as many offsets, the one whose pairs are nearer neighbours (a 3-D halo at 4, 9 and 16
  // ranks: on MPI_Dims_create(P, 3) every offset is +-1 along one dimension; on the square
  // grid, which the pairs fit with as many offsets, 16 = 4 x 2 x 2 has a pair two apart).
  std::int64_t reach = 0;

  // dest - src in grid coordinates at `nprocs` (periodic dimensions reduced to
  // (-extent/2, extent/2]); empty when the grid does not exist at `nprocs` or a rank is out
  // of range.
  std::vector<std::int64_t> Offset(std::int64_t src, std::int64_t dest, std::int64_t nprocs) const;
  // The dimensions along which `members` (world ranks) differ from the first member, as a
  // bit mask (bit i: dimension i); -1 when the grid does not exist at `nprocs`.
  std::int64_t VaryingDims(const std::vector<std::int32_t>& members, std::int64_t nprocs) const;
};

// See the file comment: the first (in the general-equation fitter's grid preference order,
// open before periodic) of the frames with the fewest distinct offsets. Maps with no pair
// give nothing.
std::optional<GridFrame> FindGridFrame(const std::vector<CommMap>& maps);
// Every frame with fewer distinct offsets than displacements, the fewest first, then the
// nearest neighbours (the least reach), then in that order. The fewest is not always the grid
// of the application: 4, 9 and 25 ranks are both sqrt(P) x sqrt(P) and
// MPI_Dims_create(P, 3) = {s, s, 1} grids, and only 16 = 4 x 2 x 2 tells them apart, by
// offsets that are just as few on the square (but one of them two ranks apart); a periodic
// frame folds +1 and -1 into one offset on an extent of 2. The caller decides with what else
// it knows (which calls are the same call).
// With `any_neighbour_grid`, also a grid on which every pair is a neighbour (each coordinate
// differs by at most 1) but that has more offsets than the maps have displacements: a
// 27-point halo on an open grid traced at 8, 12 and 18 ranks (26 offsets, 17 displacements
// at 18) - a second try for the caller when the first frames explain nothing.
std::vector<GridFrame> FindGridFrames(const std::vector<CommMap>& maps,
                                      bool any_neighbour_grid = false);

}  // namespace pas2p::patterns
