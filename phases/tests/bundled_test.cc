// The bundled mini-app traces (datasets/traces/<app>/<app>.<count>): every trace gives a
// signature whose PET reproduces the traced time within 3% and whose relevant phases
// cover at least 95%; across the counts of one app, the heaviest phase corresponds.
// Skipped (with a message) for apps whose traces have not been generated yet.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"

namespace pas2p::phases {
namespace {

namespace fs = std::filesystem;

class Bundled : public ::testing::TestWithParam<std::string> {};

std::vector<fs::path> Traces(const std::string& app) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(PAS2P_SOURCE_DIR) / "datasets" / "traces" / app;
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory() && fs::exists(entry.path() / kMetadataFileName)) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_P(Bundled, SignatureReproducesTheRunAndPhasesCorrespond) {
  const auto traces = Traces(GetParam());
  if (traces.empty()) GTEST_SKIP() << "no bundled traces of " << GetParam() << " yet";
  std::vector<Signature> sigs;
  for (const auto& path : traces) {
    auto trace = OpenTrace(path);
    sigs.push_back(AnalyzeTrace(*trace));
    const Signature& s = sigs.back();
    EXPECT_NEAR(s.pet_s, s.traced_time_s, 0.03 * s.traced_time_s) << FormatSignatureTable(s);
    EXPECT_GE(s.coverage, 0.95) << FormatSignatureTable(s);
    const auto heaviest = std::max_element(
        s.phases.begin(), s.phases.end(),
        [](const Phase& a, const Phase& b) { return a.share < b.share; });
    EXPECT_GT(heaviest->weight, 1) << FormatSignatureTable(s);
  }
  if (sigs.size() < 2) return;
  Correspondence c = CorrespondPhases(sigs);
  // The heaviest phase of the smallest count has a partner at every count.
  bool found = false;
  for (const PhaseGroup& g : c.groups) found = found || (g.relevant && g.complete);
  EXPECT_TRUE(found) << FormatCorrespondence(c);
}

INSTANTIATE_TEST_SUITE_P(Apps, Bundled,
                         ::testing::Values("stencil2d", "halo3d", "butterfly", "transpose",
                                           "wavefront", "masterworker", "cg", "stencil2d_f"));

}  // namespace
}  // namespace pas2p::phases
