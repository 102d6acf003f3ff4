// A 3-D halo exchanged swap by swap (tests/programs/halo_swaps.c, the pattern of molecular
// dynamics codes such as LAMMPS): swaps skipped along dimensions of extent 1, so a step has
// 8 swaps at 4 = 1 x 2 x 2 and 9 = 1 x 3 x 3 ranks and 12 at 8 = 2 x 2 x 2, 12 = 2 x 2 x 3,
// 16 = 2 x 2 x 4; message sizes that differ from rank to rank, from swap to swap and from one
// ghost-list rebuild to the next. Traced under a real mpirun at 4, 8, 9, 12, 16 ranks (once
// for the suite), then:
// - every rank's calls fold into the same phases (sizes do not decide the loops, and runs of
//   one structure merge alike on every rank), so no rank is matched by logical time;
// - the model from 4, 8, 12, 16 does not take the step's swaps for one block repeated a
//   number of times that grows with P (8, 12, 12, 12 swaps follow no law of P); the
//   synthesized run at 64 (4 x 4 x 4) makes at least 12 swaps per step on every rank (more:
//   a swap along a dimension of extent 2 at every traced count goes both ways at 64, see
//   docs/limits.md).
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "pas2p/core/error.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

constexpr int kSteps = 40;

class HaloSwapsTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    sigs_ = new std::vector<phases::Signature>();
    for (int n : {4, 8, 9, 12, 16}) {
      auto traced = TraceApp("halo_swaps", n, {std::to_string(kSteps), "200000", "10"},
                             tmp_->path() / ("t" + std::to_string(n)));
      if (traced.trace_dir.empty()) return;
      auto trace = OpenTrace(traced.trace_dir);
      sigs_->push_back(phases::AnalyzeTrace(*trace));
    }
  }
  static void TearDownTestSuite() {
    delete sigs_;
    delete tmp_;
    sigs_ = nullptr;
    tmp_ = nullptr;
  }
  static TempDir* tmp_;
  static std::vector<phases::Signature>* sigs_;
};
TempDir* HaloSwapsTrace::tmp_ = nullptr;
std::vector<phases::Signature>* HaloSwapsTrace::sigs_ = nullptr;

TEST_F(HaloSwapsTrace, EveryRankFoldsTheStepsAlike) {
  ASSERT_EQ(sigs_->size(), 5u);
  for (const phases::Signature& sig : *sigs_) {
    for (const std::string& w : sig.warnings) {
      EXPECT_EQ(w.find("loop structure of ranks"), std::string::npos)
          << "at " << sig.nprocs << ": " << w << "\n"
          << phases::FormatSignatureTable(sig);
    }
  }
}

TEST_F(HaloSwapsTrace, SwapsAreNotABlockAndCarryToALargerGrid) {
  ASSERT_EQ(sigs_->size(), 5u);
  std::vector<phases::Signature> sigs;
  for (const phases::Signature& s : *sigs_) {
    if (s.nprocs != 9) sigs.push_back(s);
  }
  const synthesis::AppModel m = synthesis::BuildModel(sigs);
  for (const synthesis::PhaseModel& p : m.phases) {
    EXPECT_FALSE(p.block) << "phase " << p.index << " taken for a repeated block\n"
                          << synthesis::DescribeModel(m);
  }
  // The step's phases are slots, one per swap, whose partners follow the grid: at 64 =
  // 4 x 4 x 4 every rank swaps along the three dimensions.
  const synthesis::SynthesizedTrace t(m, 64);
  for (int r : {0, 21, 63}) {
    auto rank = t.OpenRank(r);
    Event e;
    std::map<EventKind, int> kinds;
    while (rank->Next(&e)) ++kinds[e.kind];
    EXPECT_GE(kinds[EventKind::kSend], 12 * kSteps) << "rank " << r << " at 64";
  }
}

}  // namespace
}  // namespace pas2p::testing
