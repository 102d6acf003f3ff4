#include "pas2p/patterns/grid_frame.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace pas2p::patterns {
namespace {

using V = std::vector<std::int64_t>;

// Every rank to its existing north, south, west and east neighbours on a non-periodic
// MPI_Dims_create(P, 2) grid (row-major: the column varies fastest).
CommMap Mesh(int nprocs) {
  const auto dims = DimsCreate(nprocs, 2);
  const int rows = static_cast<int>(dims[0]), cols = static_cast<int>(dims[1]);
  CommMap m;
  m.nprocs = nprocs;
  m.dests.resize(nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / cols, col = r % cols;
    if (row > 0) m.dests[r].push_back(r - cols);
    if (col > 0) m.dests[r].push_back(r - 1);
    if (col < cols - 1) m.dests[r].push_back(r + 1);
    if (row < rows - 1) m.dests[r].push_back(r + cols);
  }
  return m;
}

TEST(GridFrame, NonPeriodicMeshIsFourDirectionsAtEveryCount) {
  const auto frame = FindGridFrame({Mesh(4), Mesh(6), Mesh(12), Mesh(20)});
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->grid.ndims, 2);
  EXPECT_EQ(frame->distinct_offsets, 4u);
  EXPECT_EQ(frame->periodic, (std::vector<bool>{false, false}));
  // 20 = 5 rows x 4 columns: rank 9 (row 2, column 1) to its north neighbour 5.
  EXPECT_EQ(frame->Offset(9, 5, 20), (V{0, -1}));
  EXPECT_EQ(frame->Offset(9, 10, 20), (V{1, 0}));
  // At 4 (2 x 2) the north neighbour of 2 is still "north", not "south".
  EXPECT_EQ(frame->Offset(2, 0, 4), (V{0, -1}));
  EXPECT_EQ(frame->Offset(0, 2, 4), (V{0, 1}));
  EXPECT_TRUE(frame->Offset(0, 20, 20).empty());
  // A row varies along x, a column along y.
  EXPECT_EQ(frame->VaryingDims({4, 5, 6, 7}, 20), 1);
  EXPECT_EQ(frame->VaryingDims({1, 5, 9, 13, 17}, 20), 2);
}

// A 3-D halo on an open MPI_Dims_create(P, 3) grid at 4, 9 and 16 ranks (2 x 2 x 1, 3 x 3 x 1,
// 4 x 2 x 2) has 6 offsets on its grid and 6 on the square (at 16 its second dimension's pairs
// are two apart along x): the grid of nearest neighbours comes first.
TEST(GridFrame, OfGridsWithAsManyOffsetsTheNearestNeighboursComeFirst) {
  std::vector<CommMap> maps;
  for (int n : {4, 9, 16}) {
    const auto dims = DimsCreate(n, 3);
    const std::vector<std::int64_t> extents = {dims[2], dims[1], dims[0]};  // fastest first
    CommMap m;
    m.nprocs = n;
    m.dests.resize(n);
    for (int r = 0; r < n; ++r) {
      const auto c = RankToCoords(r, extents);
      for (std::size_t d = 0; d < 3; ++d) {
        for (int step : {-1, 1}) {
          auto o = c;
          o[d] += step;
          if (o[d] >= 0 && o[d] < extents[d]) {
            m.dests[r].push_back(static_cast<int>(CoordsToRank(o, extents)));
          }
        }
      }
      std::sort(m.dests[r].begin(), m.dests[r].end());
    }
    maps.push_back(m);
  }
  // (Periodic frames come first, with 5: an extent of 2 folds +1 and -1 into one offset.)
  std::vector<GridFrame> six;
  for (const GridFrame& f : FindGridFrames(maps)) {
    if (f.distinct_offsets == 6) six.push_back(f);
  }
  ASSERT_GE(six.size(), 2u);
  EXPECT_EQ(six.front().grid.shape, GridShape::kDimsCreate);
  EXPECT_EQ(six.front().grid.ndims, 3);
  EXPECT_EQ(six.front().reach, 6);
  bool square = false;
  for (const GridFrame& f : six) {
    if (f.grid.shape == GridShape::kSquare) {
      square = true;
      EXPECT_EQ(f.reach, 8);  // (+-1, 0), (0, +-1), (+-2, 0)
    }
  }
  EXPECT_TRUE(square);
}

TEST(GridFrame, RingIsPeriodicAndAStarHasNoGrid) {
  std::vector<CommMap> ring, star;
  for (int n : {4, 8, 16}) {
    CommMap r, w;
    r.nprocs = w.nprocs = n;
    r.dests.resize(n);
    w.dests.resize(n);
    for (int s = 0; s < n; ++s) {
      r.dests[s] = {(s + 1) % n};
      if (s > 0) w.dests[s] = {0};  // every worker to the master
    }
    ring.push_back(r);
    star.push_back(w);
  }
  const auto frame = FindGridFrame(ring);
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->distinct_offsets, 1u);
  EXPECT_EQ(frame->Offset(15, 0, 16), (V{1}));
  EXPECT_FALSE(FindGridFrame(star));
  EXPECT_FALSE(FindGridFrame({}));
}

}  // namespace
}  // namespace pas2p::patterns
