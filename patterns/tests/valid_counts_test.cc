#include "pas2p/patterns/valid_counts.h"

#include <gtest/gtest.h>

#include "pas2p/core/error.h"

namespace pas2p::patterns {
namespace {

ValidCounts Squares() { return {CountRule::kSquares, 4, 1, {}}; }
ValidCounts PowersOfTwo() { return {CountRule::kPowersOfTwo, 2, 1, {}}; }

TEST(ValidCounts, NearestSquares) {
  ValidCountSet set({Squares()});
  EXPECT_TRUE(set.IsValid(49));
  EXPECT_FALSE(set.IsValid(50));
  EXPECT_EQ(set.AtMost(50), 49);
  EXPECT_EQ(set.AtLeast(50), 64);
  EXPECT_EQ(set.AtMost(3), std::nullopt);
  EXPECT_EQ(set.InRange(30, 100), (std::vector<std::int64_t>{36, 49, 64, 81, 100}));
  EXPECT_EQ(set.Hops(36, 49), 1);  // paper 001: K = 1 hop from 36 to 49
  EXPECT_EQ(set.Describe(), "perfect squares >= 4");
}

TEST(ValidCounts, IntersectionOfRules) {
  ValidCountSet set({Squares(), PowersOfTwo()});
  EXPECT_EQ(set.AtMost(1000), 256);
  EXPECT_EQ(set.AtLeast(257), 1024);
  EXPECT_EQ(set.Describe(), "perfect squares >= 4 and powers of two >= 2");
  set.Add(Squares());
  EXPECT_EQ(set.rules().size(), 2u);
  // The same rule with a larger bound narrows the set and is said once.
  ValidCounts squares9 = Squares();
  squares9.min_count = 9;
  set.Add(squares9);
  EXPECT_EQ(set.rules().size(), 2u);
  EXPECT_EQ(set.Describe(), "perfect squares >= 9 and powers of two >= 2");
  EXPECT_EQ(set.AtLeast(2), 16);
}

TEST(ValidCounts, DimsCreateGridKeepsExtents) {
  GridRule grid{GridShape::kDimsCreate, 3, {2, 1, 0}, 0, 2};
  ValidCounts v{CountRule::kGrid, 8, 1, grid};
  EXPECT_TRUE(v.IsValid(12));
  EXPECT_FALSE(v.IsValid(13));  // {13, 1, 1}
  EXPECT_FALSE(v.IsValid(14));  // {7, 2, 1}
  EXPECT_EQ(v.AtMost(15), 12);
  EXPECT_EQ(v.AtLeast(13, 1000), 16);
  EXPECT_TRUE(v.IsValid(1000));
}

TEST(CheckTarget, ExplainsAndNamesNearestCounts) {
  ValidCountSet set({Squares()});
  TargetCheck ok = CheckTarget(set, 49, false, {9, 16, 25, 36});
  EXPECT_TRUE(ok.valid);
  EXPECT_EQ(ok.run_count, 49);
  EXPECT_TRUE(ok.message.empty());

  TargetCheck bad = CheckTarget(set, 50, false, {9, 16, 25, 36});
  EXPECT_FALSE(bad.valid);
  EXPECT_EQ(bad.run_count, 0);
  EXPECT_EQ(bad.below, 49);
  EXPECT_EQ(bad.above, 64);
  EXPECT_EQ(bad.message,
            "50 is not a process count this application runs at: its communication patterns "
            "need perfect squares >= 4 (traced at 9, 16, 25, 36). Nearest valid counts: 49 "
            "below, 64 above. Predict one of those (--target 49 or --target 64), or add "
            "--allow-idle to predict 50 ranks of which 1 stay idle.");
  EXPECT_THROW(RequireTarget(set, 50, false), UserError);

  TargetCheck idle = RequireTarget(set, 50, true);
  EXPECT_FALSE(idle.valid);
  EXPECT_EQ(idle.run_count, 49);
  EXPECT_EQ(idle.idle_ranks, 1);
  EXPECT_NE(idle.message.find("49 working and 1 idle"), std::string::npos);

  EXPECT_THROW(RequireTarget(set, 3, true), UserError);  // nothing valid below
}

TEST(ValidCounts, LargeCountsAreFast) {
  ValidCountSet set({ValidCounts{CountRule::kCubes, 8, 1, {}}});
  EXPECT_EQ(set.AtMost(1048576), 1030301);   // 101^3
  EXPECT_EQ(set.AtLeast(1048577), 1061208);  // 102^3
  GridRule grid{GridShape::kDimsCreate, 3, {2, 1, 0}, 0, 2};
  ValidCountSet dims({ValidCounts{CountRule::kGrid, 8, 1, grid}});
  EXPECT_EQ(dims.AtMost(1048576), 1048576);
  EXPECT_TRUE(dims.IsValid(1000003 * 2) == false);  // 2 * prime: {1000003, 2, 1}
}

}  // namespace
}  // namespace pas2p::patterns
