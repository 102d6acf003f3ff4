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

// Traces taken with more ranks than cores pass their warning to the model, naming the count
// and how crowded it was, as the untraced-calls warning does; a count traced with at most one
// rank per core adds none.
TEST(ModelTest, OversubscribedTracesWarnInTheModel) {
  // Each count traced on one host with `cores(n)` cores.
  auto crowded_warnings = [](int (*cores)(int), AppModel* model) {
    std::vector<phases::Signature> sigs;
    for (int n : {9, 16, 25, 36}) {
      TraceData d = testing::TorusStencil(n, {});
      d.metadata.hosts = {{"vm", n, cores(n)}};
      sigs.push_back(testing::Analyze(d));
    }
    *model = BuildModel(sigs);
    std::vector<std::string> crowded;
    for (const std::string& w : model->warnings) {
      if (w.find(phases::kOversubscribedWarning) != std::string::npos) crowded.push_back(w);
    }
    return crowded;
  };
  AppModel m;
  const auto crowded = crowded_warnings([](int n) { return n == 9 ? 16 : 2; }, &m);
  ASSERT_EQ(crowded.size(), 3u) << ::testing::PrintToString(m.warnings);
  EXPECT_EQ(crowded[0].rfind("at 16 processes, " + std::string(phases::kOversubscribedWarning) +
                                 ": 16 ranks on 1 host (vm: 16 ranks on 2 cores, 8 per core)",
                             0),
            0u)
      << crowded[0];
  EXPECT_EQ(crowded[2].rfind("at 36 processes, ", 0), 0u) << crowded[2];
  EXPECT_NE(crowded[2].find("18 per core"), std::string::npos) << crowded[2];
  // Saved and loaded with the model (predict prints a loaded model's warnings too).
  EXPECT_EQ(ModelFromJson(ModelToJson(m), "model.json").warnings, m.warnings);
  // One rank per core at every count: no such warning.
  EXPECT_TRUE(crowded_warnings([](int n) { return n; }, &m).empty())
      << ::testing::PrintToString(m.warnings);
}

}  // namespace
}  // namespace pas2p::synthesis
