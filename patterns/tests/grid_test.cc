#include "pas2p/patterns/grid.h"

#include <gtest/gtest.h>

namespace pas2p::patterns {
namespace {

using V = std::vector<std::int64_t>;

TEST(DimsCreate, MatchesOpenMpiGreedyAssignment) {
  // Values checked against Open MPI 4.1's MPI_Dims_create (see dims_mpi_test for all).
  EXPECT_EQ(DimsCreate(12, 2), (V{4, 3}));
  EXPECT_EQ(DimsCreate(9, 2), (V{3, 3}));
  EXPECT_EQ(DimsCreate(12, 3), (V{3, 2, 2}));
  EXPECT_EQ(DimsCreate(36, 3), (V{4, 3, 3}));
  EXPECT_EQ(DimsCreate(360, 2), (V{20, 18}));
  EXPECT_EQ(DimsCreate(256, 3), (V{8, 8, 4}));
  EXPECT_EQ(DimsCreate(13, 3), (V{13, 1, 1}));
  EXPECT_EQ(DimsCreate(1, 3), (V{1, 1, 1}));
  EXPECT_EQ(DimsCreate(1000, 3), (V{10, 10, 10}));
}

TEST(DimsCreate, KeepsFixedDimensionsAndRejectsNonDivisors) {
  EXPECT_EQ(DimsCreate(24, V{0, 3, 0}), (V{4, 3, 2}));
  EXPECT_TRUE(DimsCreate(24, V{5, 0}).empty());
  EXPECT_EQ(DimsCreate(24, V{4, 6}), (V{4, 6}));
  EXPECT_TRUE(DimsCreate(24, V{4, 5}).empty());
}

TEST(IntegerRoots, ExactAndFloor) {
  EXPECT_EQ(ExactSqrt(49), 7);
  EXPECT_FALSE(ExactSqrt(50));
  EXPECT_EQ(ExactCbrt(1000), 10);
  EXPECT_FALSE(ExactCbrt(999));
  EXPECT_EQ(ExactLog2(1048576), 20);
  EXPECT_FALSE(ExactLog2(48));
  EXPECT_EQ(FloorSqrt(1048575), 1023);
  EXPECT_EQ(FloorCbrt(1000000000000), 10000);
  EXPECT_EQ(CeilLog2(5), 3);
}

TEST(GridRule, ExtentsFastestFirst) {
  GridRule cart{GridShape::kDimsCreate, 2, {1, 0}, 0, 1};
  EXPECT_EQ(cart.Extents(12), (V{3, 4}));  // MPI dims {4, 3}, the 3 varies fastest
  GridRule square{GridShape::kSquare, 2, {}, 0, 2};
  EXPECT_EQ(square.Extents(49), (V{7, 7}));
  EXPECT_FALSE(square.Extents(50));
  GridRule cube3{GridShape::kDimsCreate, 3, {2, 1, 0}, 0, 2};
  EXPECT_FALSE(cube3.Extents(13));  // {13, 1, 1}: extents below 2
  GridRule fixed{GridShape::kFixedFast, 2, {}, 4, 1};
  EXPECT_EQ(fixed.Extents(12), (V{4, 3}));
  EXPECT_FALSE(fixed.Extents(10));
  EXPECT_EQ(GridRule::FormatExtents({3, 4}), "4 x 3");
}

// Two components, each an MPI_Dims_create(P/2, 2) grid in MPI_Cart_create's row-major order,
// the component slowest: the same extents as MPI_Dims_create(P, 3) (d2, d0, d1) up to 16, not
// at 24.
TEST(GridRule, ComponentsAreCopiesOfAGridOfTheirOwn) {
  const GridRule halves{GridShape::kComponents, 3, {1, 0}, 2, 1};
  const GridRule dims3{GridShape::kDimsCreate, 3, {2, 0, 1}, 0, 1};
  for (std::int64_t p : {4, 6, 8, 12, 16}) EXPECT_EQ(halves.Extents(p), dims3.Extents(p)) << p;
  EXPECT_EQ(halves.Extents(24), (V{3, 4, 2}));  // Dims_create(12, 2) = {4, 3}, then the halves
  EXPECT_EQ(dims3.Extents(24), (V{2, 4, 3}));
  EXPECT_FALSE(halves.Extents(25));  // not two equal halves
  const GridRule first_fastest{GridShape::kComponents, 3, {0, 1}, 2, 1};
  EXPECT_EQ(first_fastest.Extents(24), (V{4, 3, 2}));
  const GridRule three{GridShape::kComponents, 4, {2, 1, 0}, 3, 2};
  EXPECT_EQ(three.Extents(24), (V{2, 2, 2, 3}));
  EXPECT_FALSE(three.Extents(9));  // Dims_create(3, 3) = {3, 1, 1}: extents below 2
  EXPECT_EQ(halves.Describe(),
            "2 x MPI_Dims_create(P/2, 2) grid (row-major, as MPI_Cart_create; 2 components, the "
            "slowest dimension)");
  EXPECT_FALSE((GridRule{GridShape::kComponents, 3, {0}, 2, 1}).Extents(8));  // order too short
}

// Components interleaved by rank % k: the component is the fastest dimension. With two, rank
// r is in component r % 2 at its local rank r / 2, whose place on the row-major
// MPI_Dims_create(P/2, 2) grid the other two dimensions give.
TEST(GridRule, InterleavedComponentsHaveTheComponentFastest) {
  const GridRule even_odd{GridShape::kInterleavedComponents, 3, {1, 0}, 2, 1};
  const GridRule dims3{GridShape::kDimsCreate, 3, {1, 2, 0}, 0, 1};
  for (std::int64_t p : {4, 6, 8, 12, 16}) EXPECT_EQ(even_odd.Extents(p), dims3.Extents(p)) << p;
  EXPECT_EQ(even_odd.Extents(24), (V{2, 3, 4}));  // Dims_create(12, 2) = {4, 3}
  EXPECT_EQ(dims3.Extents(24), (V{3, 2, 4}));
  EXPECT_FALSE(even_odd.Extents(9));
  const auto e = *even_odd.Extents(24);
  const std::vector<std::int64_t> c = RankToCoords(13, e);
  EXPECT_EQ(c[0], 13 % 2);                // the component
  EXPECT_EQ(c[1] + e[1] * c[2], 13 / 2);  // the local rank, row-major on 4 x 3
  EXPECT_EQ(even_odd.Describe(),
            "2 x MPI_Dims_create(P/2, 2) grid (row-major, as MPI_Cart_create; 2 components "
            "interleaved, rank % 2, the fastest dimension)");
  EXPECT_FALSE((GridRule{GridShape::kInterleavedComponents, 3, {}, 2, 1}).Extents(8));
}

// HPCG 3.1's ComputeOptimalShapeXYZ, x fastest. Checked for every P up to 20000 against the
// C port of it in bench/hpcg/hpcg_pattern.c (prime factors, the special cases, then HPCG's
// mixed-base enumeration of splits, the first of least area winning).
TEST(OptimalShapeXYZ, IsHpcgsProcessGrid) {
  EXPECT_EQ(OptimalShapeXYZ(1), (V{1, 1, 1}));
  EXPECT_EQ(OptimalShapeXYZ(7), (V{7, 1, 1}));
  EXPECT_EQ(OptimalShapeXYZ(4), (V{2, 2, 1}));  // p^e: the remainder's powers go to x, then y
  EXPECT_EQ(OptimalShapeXYZ(16), (V{4, 2, 2}));
  EXPECT_EQ(OptimalShapeXYZ(1024), (V{16, 8, 8}));
  EXPECT_EQ(OptimalShapeXYZ(6), (V{2, 3, 1}));   // two single primes
  EXPECT_EQ(OptimalShapeXYZ(12), (V{2, 3, 2}));  // p1^2 p2: the repeated one in z
  EXPECT_EQ(OptimalShapeXYZ(18), (V{2, 3, 3}));
  EXPECT_EQ(OptimalShapeXYZ(30), (V{2, 3, 5}));  // three single primes
  EXPECT_EQ(OptimalShapeXYZ(24), (V{2, 4, 3}));  // least area, first found
  EXPECT_EQ(OptimalShapeXYZ(48), (V{4, 4, 3}));
  EXPECT_EQ(OptimalShapeXYZ(96), (V{4, 4, 6}));
  EXPECT_EQ(OptimalShapeXYZ(65536), (V{64, 32, 32}));
  // The same extents as MPI_Dims_create(P, 3) in another order at 12 ({3, 2, 2}).
  GridRule hpcg{GridShape::kOptimalShapeXYZ, 3, {}, 0, 1};
  EXPECT_EQ(hpcg.Extents(12), (V{2, 3, 2}));
  EXPECT_EQ(hpcg.Describe(), "HPCG ComputeOptimalShapeXYZ(P) grid");
  hpcg.min_extent = 2;
  EXPECT_FALSE(hpcg.Extents(13));
  EXPECT_FALSE(hpcg.Extents(0));
}

TEST(GridRule, CoordsRoundTrip) {
  V e{3, 4, 5};
  for (std::int64_t r = 0; r < 60; ++r) EXPECT_EQ(CoordsToRank(RankToCoords(r, e), e), r);
  EXPECT_EQ(RankToCoords(17, e), (V{2, 1, 1}));
}

}  // namespace
}  // namespace pas2p::patterns
