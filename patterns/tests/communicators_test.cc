#include "pas2p/patterns/communicators.h"

#include <gtest/gtest.h>

#include "test_maps.h"

namespace pas2p::patterns {
namespace {

// MPI_Comm_split(world, color = row, key = rank) on a sqrt(P) grid.
CommunicatorLayout Rows(int p) {
  const int s = testing::Side(p);
  CommunicatorLayout l{p, std::vector<std::vector<int>>(static_cast<std::size_t>(s))};
  for (int r = 0; r < p; ++r) l.groups[r / s].push_back(r);
  return l;
}

CommunicatorLayout Columns(int p) {
  const int s = testing::Side(p);
  CommunicatorLayout l{p, std::vector<std::vector<int>>(static_cast<std::size_t>(s))};
  for (int r = 0; r < p; ++r) l.groups[r % s].push_back(r);
  return l;
}

TEST(Communicators, RowsAndColumnsOfASquareGrid) {
  std::vector<CommunicatorLayout> rows, cols;
  for (int p : {9, 16, 25, 36}) {
    rows.push_back(Rows(p));
    cols.push_back(Columns(p));
  }
  CommunicatorRule r = FitCommunicators(rows);
  EXPECT_EQ(r.name, "rows");
  EXPECT_EQ(r.grid.shape, GridShape::kSquare);
  CommunicatorRule c = FitCommunicators(cols);
  EXPECT_EQ(c.name, "columns");

  CommunicatorLayout r49 = r.At(49).Layout(), c49 = c.At(49).Layout();
  CommunicatorLayout want_r = Rows(49), want_c = Columns(49);
  std::sort(want_r.groups.begin(), want_r.groups.end());
  std::sort(want_c.groups.begin(), want_c.groups.end());
  std::sort(r49.groups.begin(), r49.groups.end());
  std::sort(c49.groups.begin(), c49.groups.end());
  EXPECT_EQ(r49.groups, want_r.groups);
  EXPECT_EQ(c49.groups, want_c.groups);
  EXPECT_EQ(c.At(49).GroupOf(10), (std::vector<std::int64_t>{3, 10, 17, 24, 31, 38, 45}));
  EXPECT_EQ(c.At(49).RankInGroup(10), 1);
  EXPECT_EQ(c.At(49).GroupIndex(10), 3);
  EXPECT_EQ(r.At(1048576).GroupSize(), 1024);
  EXPECT_EQ(r.At(1048576).GroupOf(1048575).front(), 1047552);
  EXPECT_THROW(r.At(50), UserError);
}

TEST(Communicators, WorldStridesAndLeaders) {
  std::vector<CommunicatorLayout> world, stride, leaders;
  for (int p : {4, 8, 12}) {
    CommunicatorLayout w{p, {{}}};
    for (int r = 0; r < p; ++r) w.groups[0].push_back(r);
    world.push_back(w);
    CommunicatorLayout s{p, std::vector<std::vector<int>>(4)};
    for (int r = 0; r < p; ++r) s.groups[r % 4].push_back(r);
    stride.push_back(s);
    CommunicatorLayout l{p, {{}}};
    for (int r = 0; r < p; r += 4) l.groups[0].push_back(r);
    leaders.push_back(l);
  }
  CommunicatorRule w = FitCommunicators(world);
  EXPECT_EQ(w.name, "world");
  EXPECT_EQ(w.At(100).GroupSize(), 100);

  CommunicatorRule s = FitCommunicators(stride);
  EXPECT_EQ(s.At(40).NumGroups(), 4);
  EXPECT_EQ(s.At(40).GroupOf(6), (std::vector<std::int64_t>{2, 6, 10, 14, 18, 22, 26, 30, 34, 38}));
  EXPECT_FALSE(s.valid.IsValid(42));

  CommunicatorRule l = FitCommunicators(leaders);
  EXPECT_TRUE(l.only_group_of_rank0);
  EXPECT_EQ(l.At(20).GroupOf(8), (std::vector<std::int64_t>{0, 4, 8, 12, 16}));
  EXPECT_TRUE(l.At(20).GroupOf(9).empty());
  EXPECT_EQ(l.At(20).GroupIndex(9), -1);
}

// Groups of 4 consecutive ranks traced at 8, 12 and 16: the rows of MPI_Dims_create(P, 2)
// with the first factor fastest ({4, 2}, {4, 3}, {4, 4}) are the same groups there, and at 20
// ({5, 4}) rows of 5. The rule kept has the other as a rival, which tells the two apart at
// 20 and 32 but not at the traced counts.
TEST(Communicators, ARuleKeepsTheRivalsTheTracesCannotTellFromIt) {
  std::vector<CommunicatorLayout> blocks;
  for (int p : {8, 12, 16}) {
    CommunicatorLayout l{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p / 4))};
    for (int r = 0; r < p; ++r) l.groups[static_cast<std::size_t>(r / 4)].push_back(r);
    blocks.push_back(l);
  }
  const CommunicatorRule rule = FitCommunicators(blocks);
  ASSERT_FALSE(rule.rivals.empty());
  const CommunicatorRule* other = nullptr;
  for (const CommunicatorRule& r : rule.rivals) {
    EXPECT_TRUE(r.rivals.empty());
    for (int p : {8, 12, 16}) EXPECT_FALSE(Disagree(rule, r, p)) << r.Describe();
    if (Disagree(rule, r, 32)) other = &r;
  }
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(FirstDisagreement(rule, *other, 16, 32), 20);
  EXPECT_EQ(FirstDisagreement(rule, *other, 16, 18), 0);  // 17 and 18 are not multiples of 4
  EXPECT_FALSE(Disagree(rule, *other, 7));                // not a valid count
}

TEST(Communicators, IrregularGroupsAreAClearError) {
  std::vector<CommunicatorLayout> odd = {{6, {{0, 5}, {1, 2, 3, 4}}},
                                         {8, {{0, 7}, {1, 2, 3, 4, 5, 6}}},
                                         {9, {{0, 1, 8}, {2, 3}, {4, 5, 6, 7}}}};
  EXPECT_THROW(FitCommunicators(odd), PatternFitError);
  std::vector<CommunicatorLayout> bad = {{4, {{0, 1}, {1, 2}}}};
  EXPECT_THROW(FitCommunicators(bad), UserError);
}

// A world split into a block of P/4 ranks and one of the rest (a coupled model's ocean and
// atmosphere): no grid's rows or blocks, so consecutive blocks of unequal sizes.
TEST(Communicators, BlocksOfUnequalSizes) {
  std::vector<CommunicatorLayout> layouts;
  for (const int p : {8, 12, 16, 20}) {
    CommunicatorLayout l{p, std::vector<std::vector<int>>(2)};
    for (int r = 0; r < p; ++r) l.groups[r < p / 4 ? 0 : 1].push_back(r);
    layouts.push_back(l);
  }
  const CommunicatorRule rule = FitCommunicators(layouts);
  EXPECT_EQ(rule.Describe(),
            "blocks of consecutive ranks of unequal sizes (P/4, the rest); valid counts: "
            "multiples of 4 >= 8");
  const auto at = rule.At(40);
  EXPECT_EQ(at.NumGroups(), 2);
  EXPECT_EQ(at.GroupSize(), 30);  // the largest
  EXPECT_EQ(at.GroupSizeOf(9), 10);
  EXPECT_EQ(at.GroupSizeOf(10), 30);
  EXPECT_EQ(at.GroupIndex(10), 1);
  EXPECT_EQ(at.RankInGroup(12), 2);
  EXPECT_EQ(at.GroupOf(3).size(), 10u);
  EXPECT_EQ(at.GroupOf(39).front(), 10);
  EXPECT_EQ(at.Layout().groups.size(), 2u);
  EXPECT_THROW(rule.At(42), UserError);
  // Sizes that are neither fixed nor one fraction of P: still an error, saying so.
  layouts[1] = {12, {{0, 1, 2, 3}, {4, 5, 6, 7, 8, 9, 10, 11}}};
  try {
    FitCommunicators(layouts);
    FAIL() << "blocks of 2 of 8 and 4 of 12 were fitted";
  } catch (const PatternFitError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks of consecutive ranks of unequal sizes: "
                                         "component 1's size is neither fixed nor P/4"),
              std::string::npos)
        << e.what();
  }
}

TEST(Communicators, RootRule) {
  EXPECT_EQ(FitRankRule({{4, 0}, {9, 0}}).At(49), 0);
  IndexRule last = FitRankRule({{4, 3}, {9, 8}});
  EXPECT_TRUE(last.from_end);
  EXPECT_EQ(last.At(49), 48);
  EXPECT_THROW(FitRankRule({{4, 1}, {9, 4}, {16, 2}}), PatternFitError);
}

}  // namespace
}  // namespace pas2p::patterns
