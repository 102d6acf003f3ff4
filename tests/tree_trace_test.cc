// A binomial-tree reduction and broadcast written by hand (tests/programs/binomial_tree.c),
// at any count. Traced under a real mpirun at 4, 6, 8, 12 and 20 ranks (once for the suite),
// then the model from 4-12:
// - takes each level's calls for one side of an exchange by bit (a child's send to
//   rank - 2^b, a parent's receive from rank + 2^b), and the levels for steps that grow with
//   the count (it was refused: no family reproduced a slot that held a child's receive from
//   its parent and a parent's receive from its child);
// - predicts the 20-rank run (5 levels where 12 has 4: rank 0 receives from 16) with every
//   message to the right peer and the right bytes;
// - and the same for the tree rooted at the last rank, its ranks counted from it.
#include <gtest/gtest.h>

#include <memory>

#include "pas2p/phases/analyze.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kIters = 12;

// The traces of one tree (rooted at `root`; negative counts from the end), once per suite.
struct TracedTree {
  explicit TracedTree(int root) {
    for (int n : {4, 6, 8, 12, 20}) {
      auto traced =
          TraceApp("binomial_tree", n, {std::to_string(kIters), "240000", std::to_string(root)},
                   tmp.path() / ("t" + std::to_string(n)));
      if (traced.trace_dir.empty()) return;
      if (n == 20) {
        held_dir = traced.trace_dir;
      } else {
        sigs.push_back(phases::AnalyzeTrace(*OpenTrace(traced.trace_dir)));
      }
    }
  }
  TempDir tmp;
  std::vector<phases::Signature> sigs;
  std::filesystem::path held_dir;
};

// The suite of the tree rooted at `kRoot` (negative: from the end), traced once.
template <int kRoot>
class TreeTraceAt : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tree_ = new TracedTree(kRoot); }
  static void TearDownTestSuite() {
    delete tree_;
    tree_ = nullptr;
  }
  static TracedTree* tree_;
};
template <int kRoot>
TracedTree* TreeTraceAt<kRoot>::tree_ = nullptr;
using TreeTrace = TreeTraceAt<0>;

// The prediction of the 20-rank run from 4-12: every message to the right peer with the
// right bytes, and the time within a gross error.
void ExpectLargerRunRight(const TracedTree& tree) {
  ASSERT_EQ(tree.sigs.size(), 4u);
  ASSERT_FALSE(tree.held_dir.empty());
  auto real = OpenTrace(tree.held_dir);
  synthesis::PredictOptions quick;
  quick.noise_draws = 0;
  quick.intervals = false;
  std::string used;
  const synthesis::Validation v = synthesis::ValidateAgainst(
      tree.sigs, *real, synthesis::LoadMachineOrDefault("", &used), quick);
  EXPECT_EQ(v.count, 20);
  EXPECT_DOUBLE_EQ(v.pattern_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-6);
  // Real compute of a short run on a shared machine, traced while other tests run: the
  // ranks' noise, which the model replays, swings from run to run (45-94% off seen under
  // load, 5-20% alone), so only a gross error (the root's work taken for every rank's, a
  // level's work missing) fails this.
  EXPECT_LT(v.time_error, 2.0) << synthesis::FormatValidation(v, "binomial_tree")
                               << synthesis::DescribeModel(synthesis::BuildModel(tree.sigs));
}

// The model from 4-12 takes each level for one side of an exchange by bit (`root`: how the
// words name the tree's root, empty for rank 0's) and the levels for steps that grow to
// ceil(log2 P) at 1024.
void ExpectLevelsThatGrow(const TracedTree& tree, const std::string& root) {
  ASSERT_EQ(tree.sigs.size(), 4u);
  const synthesis::AppModel m = synthesis::BuildModel(tree.sigs);
  const std::string text = synthesis::DescribeModel(m, 1024);
  EXPECT_NE(text.find("binomial tree, children" + root), std::string::npos) << text;
  EXPECT_NE(text.find("binomial tree, parents" + root), std::string::npos) << text;
  EXPECT_NE(text.find("(at P = 1024: bits 0-9)"), std::string::npos) << text;
  EXPECT_TRUE(m.valid.IsValid(1000)) << text;
}

TEST_F(TreeTrace, LevelsAreStepsByBitThatGrow) { ExpectLevelsThatGrow(*tree_, ""); }

TEST_F(TreeTrace, PeersAndBytesOfALargerRunAreRight) { ExpectLargerRunRight(*tree_); }

// The same tree rooted at the last rank, its ranks counted from it as MPI libraries count
// them: its pairs are one bit apart only from the root, and each level was refused.
using LastRankTreeTrace = TreeTraceAt<-1>;

TEST_F(LastRankTreeTrace, LevelsCountRanksFromTheLastRank) {
  ExpectLevelsThatGrow(*tree_, " (root P-1)");
  ExpectLargerRunRight(*tree_);
}

}  // namespace
}  // namespace pas2p::testing
