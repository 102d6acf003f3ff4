#include "pas2p/regression/rank_classes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "pas2p/core/error.h"
#include "pas2p/regression/fit.h"

namespace pas2p::regression {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A 5-point stencil on a side × side grid without wrap-around: corners have 2 neighbours, edges 3,
// interior ranks 4. Bytes sent per rank = neighbours × face bytes (+ a little jitter).
enum GridClass { kCorner = 0, kEdge = 1, kInterior = 2 };
int ClassOf(int rank, int process_count) {
  const int side = static_cast<int>(std::lround(std::sqrt(process_count)));
  const int row = rank / side;
  const int col = rank % side;
  const int borders = (row == 0 || row == side - 1) + (col == 0 || col == side - 1);
  return borders == 2 ? kCorner : borders == 1 ? kEdge : kInterior;
}
std::vector<double> StencilBytes(int process_count, double face_bytes) {
  std::vector<double> bytes;
  for (int r = 0; r < process_count; ++r) {
    const int neighbours = 4 - (ClassOf(r, process_count) == kCorner ? 2
                                : ClassOf(r, process_count) == kEdge ? 1
                                                                     : 0);
    bytes.push_back(neighbours * face_bytes * (1 + 0.001 * (r % 3)));
  }
  return bytes;
}

TEST(GroupRanksByValue, SeparatesCornersEdgesAndInterior) {
  const auto classes = GroupRanksByValue(StencilBytes(16, 1000));
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_THAT(classes[0].ranks, ElementsAre(0, 3, 12, 15));  // corners hold rank 0: first
  EXPECT_THAT(classes[1].ranks, ElementsAre(1, 2, 4, 7, 8, 11, 13, 14));
  EXPECT_THAT(classes[2].ranks, ElementsAre(5, 6, 9, 10));
  EXPECT_NEAR(classes[0].mean_value, 2000, 5);
  EXPECT_LE(classes[2].min_value, classes[2].mean_value);
  EXPECT_GE(classes[2].max_value, classes[2].mean_value);
}

TEST(GroupRanksByValue, IntegersGroupExactlyAndToleranceZeroSplitsEveryValue) {
  const std::vector<double> counts = {4, 4, 3, 4, 2, 3};
  const auto exact = GroupRanksByValue(counts, 0);
  ASSERT_EQ(exact.size(), 3u);
  EXPECT_THAT(exact[0].ranks, ElementsAre(0, 1, 3));
  EXPECT_THAT(exact[1].ranks, ElementsAre(2, 5));
  EXPECT_THAT(exact[2].ranks, ElementsAre(4));
  EXPECT_EQ(GroupRanksByValue(counts, 0.5).size(), 1u);
  EXPECT_TRUE(GroupRanksByValue(std::vector<double>{}).empty());
}

TEST(GroupRanksByValue, RejectsNonFiniteValues) {
  const std::vector<double> values = {1, std::numeric_limits<double>::quiet_NaN()};
  try {
    GroupRanksByValue(values);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1"));
  }
  EXPECT_THROW(GroupRanksByValue(std::vector<double>{1.0}, -1), UserError);
}

TEST(CollectClassSeries, BuildsOneSeriesPerClassAndEachFitsAndPredicts) {
  std::vector<CountValues> counts;
  for (int p : {9, 16, 25, 36}) {
    // Face bytes shrink like the side of a rank's block: N / √P.
    counts.push_back({p, StencilBytes(p, 12000 / std::sqrt(p))});
  }
  const auto series = CollectClassSeries(counts, ClassOf);
  ASSERT_EQ(series.size(), 3u);
  const auto& corner = series.at(kCorner);
  ASSERT_EQ(corner.points.size(), 4u);
  EXPECT_THAT(corner.rank_count_per_point, ElementsAre(4, 4, 4, 4));
  EXPECT_THAT(series.at(kEdge).rank_count_per_point, ElementsAre(4, 8, 12, 16));
  EXPECT_THAT(series.at(kInterior).rank_count_per_point, ElementsAre(1, 4, 9, 16));
  for (const auto& [id, s] : series) {
    EXPECT_LT(s.max_relative_spread, 0.003) << id;
    const FittedModel model = Fit(s.points, {}, "bytes per rank");
    const double neighbours = id == kCorner ? 2 : id == kEdge ? 3 : 4;
    const double truth = neighbours * 12000 / std::sqrt(49.0);
    EXPECT_NEAR(model.Evaluate(49) / truth, 1, 0.01) << model.Describe("bytes", 49);
  }
  // A classifier that mixes classes shows up as a large spread.
  const auto mixed = CollectClassSeries(counts, [](int, int) { return 0; });
  EXPECT_GT(mixed.at(0).max_relative_spread, 0.4);
  // Negative ids leave ranks out.
  const auto only_corners =
      CollectClassSeries(counts, [](int r, int p) { return ClassOf(r, p) == kCorner ? 7 : -1; });
  ASSERT_EQ(only_corners.size(), 1u);
  EXPECT_EQ(only_corners.begin()->first, 7);
}

TEST(CollectClassSeries, RejectsAWrongNumberOfRanks) {
  std::vector<CountValues> counts = {{4, {1, 2, 3}}};
  try {
    CollectClassSeries(counts, ClassOf);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("at P = 4 there are 3 per-rank values"));
  }
}

}  // namespace
}  // namespace pas2p::regression
