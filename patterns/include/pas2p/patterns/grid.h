// Process grids as functions of the process count P, and the integer helpers behind them.
//
// A communication pattern of a stencil code lives on a grid of ranks whose shape follows
// from P: a side of sqrt(P) or cbrt(P), the factors MPI_Dims_create(P, d) returns, or one
// fixed extent and one that grows. GridRule names such a shape; Extents(P) gives the grid at
// one count (or nothing when P is not a count the shape exists at). Extents are listed
// fastest-varying first: rank = c[0] + e[0]*(c[1] + e[1]*c[2]), so MPI_Cart_create's row-major
// order over dims {d0, d1} (d1 fastest) is the extents {d1, d0}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pas2p::patterns {

// MPI_Dims_create(nnodes, ndims, dims) with every dims[i] == 0, computed exactly as Open MPI
// 4.1 does: prime factors of nnodes, assigned from the largest to the bin with the least
// product, then sorted into non-increasing order. (Not always the most balanced split, but the
// one an application running on Open MPI gets.) nnodes >= 1, ndims >= 1.
std::vector<std::int64_t> DimsCreate(std::int64_t nnodes, int ndims);
// The same with some dimensions fixed by the caller (dims[i] > 0 is kept); empty on the
// errors MPI reports (a fixed dimension that does not divide nnodes, or no free dimension
// with nnodes not matching).
std::vector<std::int64_t> DimsCreate(std::int64_t nnodes, std::vector<std::int64_t> dims);

// HPCG's ComputeOptimalShapeXYZ(P) (version 3.1, its default search): the 3-D process grid
// {npx, npy, npz}, npx fastest (GenerateGeometry: rank = ipx + npx (ipy + npy ipz)). One
// prime p^e: p^ceil-ish thirds {p^(e/3 + (e%3>=1)), p^(e/3 + (e%3>=2)), p^(e/3)}; p1 p2:
// {p1, p2, 1}; p1^a p2^b with a + b = 3: {p1, p2, the repeated one}; p1 p2 p3: {p1, p2,
// p3}; otherwise the first split of least surface in HPCG's enumeration. The extents are
// those of MPI_Dims_create(P, 3) at many counts, in another order at others (12 -> 2 x 3 x 2).
std::vector<std::int64_t> OptimalShapeXYZ(std::int64_t nprocs);

// Exact integer roots and logarithms; nullopt if `value` is not a perfect power.
std::optional<std::int64_t> ExactSqrt(std::int64_t value);
std::optional<std::int64_t> ExactCbrt(std::int64_t value);
std::optional<int> ExactLog2(std::int64_t value);
std::int64_t FloorSqrt(std::int64_t value);
std::int64_t FloorCbrt(std::int64_t value);
int CeilLog2(std::int64_t value);  // smallest n with 2^n >= value (value >= 1)

enum class GridShape {
  kLinear,           // {P}: ranks in a line (ring, shift, world)
  kSquare,           // {s, s}, s = sqrt(P): perfect squares only
  kCube,             // {c, c, c}, c = cbrt(P): perfect cubes only
  kDimsCreate,       // MPI_Dims_create(P, ndims) factors, in the order given by `order`
  kFixedFast,        // {fixed, P / fixed}: the fastest extent stays constant
  kFixedSlow,        // {P / fixed, fixed}: the slowest extent stays constant
  kOptimalShapeXYZ,  // OptimalShapeXYZ(P), HPCG's 3-D grid, as it returns it (x fastest)
  // `fixed` components, each an MPI_Dims_create(P / fixed, ndims - 1) grid in the order
  // given by `order`, the component the slowest dimension: {dims..., fixed}. A code whose
  // world is split into components (an atmosphere and an ocean), each with a cartesian grid
  // of its own ranks, lays its halos out on this grid.
  kComponents,
  // The same components interleaved: component c holds the ranks r with r % fixed == c (as
  // MPI_Comm_split by rank % fixed makes them), the component the fastest dimension:
  // {fixed, dims...}.
  kInterleavedComponents,
};

struct GridRule {
  GridShape shape = GridShape::kLinear;
  int ndims = 1;
  // kDimsCreate: order[i] is the index into DimsCreate(P, ndims) of the i-th fastest extent.
  // {1, 0} is MPI_Cart_create's row-major layout for 2-D, {2, 1, 0} for 3-D.
  // kComponents, kInterleavedComponents: the same into DimsCreate(P / fixed, ndims - 1),
  // ndims - 1 entries.
  std::vector<int> order;
  std::int64_t fixed = 0;  // kFixedFast / kFixedSlow / the number of components
  // Smallest extent the pattern was seen to work with; counts whose grid has a smaller extent
  // (e.g. Dims_create(13, 3) = {13, 1, 1} when 2 was the least traced) are not valid.
  std::int64_t min_extent = 1;

  // Extents fastest first at count P, or nullopt if the shape does not exist at P.
  std::optional<std::vector<std::int64_t>> Extents(std::int64_t nprocs) const;
  // "sqrt(P) x sqrt(P)", "MPI_Dims_create(P, 3) = {d0, d1, d2}, d2 fastest", ...
  std::string Describe() const;
  // The grid at one count, e.g. "7 x 7" (slowest first, as people write grids).
  static std::string FormatExtents(const std::vector<std::int64_t>& extents);

  bool operator==(const GridRule&) const = default;
};

// Coordinates <-> rank on a grid given fastest-first.
std::vector<std::int64_t> RankToCoords(std::int64_t rank, const std::vector<std::int64_t>& extents);
std::int64_t CoordsToRank(const std::vector<std::int64_t>& coords,
                          const std::vector<std::int64_t>& extents);

}  // namespace pas2p::patterns
