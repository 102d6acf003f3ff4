// BuildModel: slots, equations, regressions, presence rules, errors, JSON round trip.
#include "pas2p/synthesis/model.h"

#include <gtest/gtest.h>

#include "pas2p/core/error.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_traces.h"

namespace pas2p::synthesis {
namespace {

using testing::Analyze;

std::vector<phases::Signature> Sigs(TraceData (*make)(int, const testing::AppParams&),
                                    std::vector<int> counts) {
  std::vector<phases::Signature> out;
  for (int n : counts) out.push_back(Analyze(make(n, {})));
  return out;
}

TEST(ModelTest, TorusStencilHasOneRelevantPhaseWithTorusPeers) {
  const AppModel m = BuildModel(Sigs(testing::TorusStencil, {9, 16, 25, 36}));
  EXPECT_EQ(m.counts, (std::vector<int>{9, 16, 25, 36}));
  EXPECT_TRUE(m.valid.IsValid(49));
  EXPECT_FALSE(m.valid.IsValid(50));
  const std::string text = DescribeModel(m);
  EXPECT_NE(text.find("torus"), std::string::npos) << text;
}

}  // namespace
}  // namespace pas2p::synthesis
