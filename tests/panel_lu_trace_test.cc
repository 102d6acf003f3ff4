// Broadcasts whose root moves (tests/programs/panel_lu.c): an LU factorization's panels,
// rooted at rank k mod P on the world, and a backward sweep along the rows of an
// MPI_Dims_create(P, 2) grid, rooted at the row's rank (-k - 1) mod its length. Traced under a
// real mpirun at 4, 6, 8, 12 and 16 ranks (once for the suite), then:
// - each loop is one phase of every iteration but the first at every count (each root was a
//   call of its own, so the loops' period was P and their phases matched at no two counts);
// - the model from 4-12 predicts the run at 16 with every collective on the right root and
//   the right bytes;
// - from 4, 6 and 8 alone, whose rows hold 2 ranks (the next rank is the previous one), the
//   model says it cannot tell which way the rows' root moves.
#include <gtest/gtest.h>

#include <memory>

#include "pas2p/phases/analyze.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kIters = 24;

class PanelLuTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    sigs_ = new std::vector<phases::Signature>();
    for (int n : {4, 6, 8, 12, 16}) {
      auto traced = TraceApp("panel_lu", n, {std::to_string(kIters), "240000"},
                             tmp_->path() / ("t" + std::to_string(n)));
      if (traced.trace_dir.empty()) return;
      if (n == 16) held_dir_ = new std::filesystem::path(traced.trace_dir);
      auto trace = OpenTrace(traced.trace_dir);
      sigs_->push_back(phases::AnalyzeTrace(*trace));
    }
  }
  static void TearDownTestSuite() {
    delete sigs_;
    delete held_dir_;
    delete tmp_;
    sigs_ = nullptr;
    held_dir_ = nullptr;
    tmp_ = nullptr;
  }
  static std::vector<phases::Signature> Training(std::initializer_list<int> counts) {
    std::vector<phases::Signature> out;
    for (const auto& s : *sigs_) {
      for (int n : counts) {
        if (s.nprocs == n) out.push_back(s);
      }
    }
    return out;
  }
  static TempDir* tmp_;
  static std::vector<phases::Signature>* sigs_;
  static std::filesystem::path* held_dir_;
};
TempDir* PanelLuTrace::tmp_ = nullptr;
std::vector<phases::Signature>* PanelLuTrace::sigs_ = nullptr;
std::filesystem::path* PanelLuTrace::held_dir_ = nullptr;

TEST_F(PanelLuTrace, EachLoopOfMovingRootsIsOnePhaseAtEveryCount) {
  ASSERT_EQ(sigs_->size(), 5u);
  for (const phases::Signature& sig : *sigs_) {
    int loops = 0;
    for (const phases::Phase& p : sig.phases) {
      if (p.description.find("moving root") == std::string::npos) continue;
      ++loops;
      EXPECT_DOUBLE_EQ(p.weight, kIters - 1) << sig.nprocs << ": " << p.description;
    }
    EXPECT_EQ(loops, 2) << phases::FormatSignatureTable(sig);
  }
}

TEST_F(PanelLuTrace, RootsAndBytesOfALargerRunAreRight) {
  ASSERT_EQ(sigs_->size(), 5u);
  ASSERT_NE(held_dir_, nullptr);
  const auto sigs = Training({4, 6, 8, 12});
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  for (const auto& w : m.warnings) EXPECT_EQ(w.find("moving forwards"), std::string::npos) << w;
  auto real = OpenTrace(*held_dir_);
  synthesis::PredictOptions quick;
  quick.noise_draws = 0;
  quick.intervals = false;
  std::string used;
  const synthesis::Validation v =
      synthesis::ValidateAgainst(sigs, *real, synthesis::LoadMachineOrDefault("", &used), quick);
  EXPECT_EQ(v.count, 16);
  EXPECT_DOUBLE_EQ(v.collective_match, 1.0);
  EXPECT_LT(v.bytes_error, 1e-6);
  // Real compute on a shared machine: only a gross error (the panel's work averaged over the
  // ranks instead of on its owner's turn) fails this.
  EXPECT_LT(v.time_error, 0.3) << synthesis::DescribeModel(m);
}

TEST_F(PanelLuTrace, RowsOfTwoRanksLeaveTheDirectionUnknownAndSaySo) {
  ASSERT_EQ(sigs_->size(), 5u);
  const synthesis::AppModel m = synthesis::BuildModel(Training({4, 6, 8}));
  bool warned = false;
  for (const auto& w : m.warnings)
    warned = warned || w.find("moving forwards") != std::string::npos;
  EXPECT_TRUE(warned) << synthesis::DescribeModel(m);
}

}  // namespace
}  // namespace pas2p::testing
