#include "pas2p/phases/signature.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "pas2p/phases/analyze.h"
#include "synthetic.h"

namespace pas2p::phases {
namespace {

TEST(Signature, SaveAndLoadRoundTrip) {
  testing::MemoryTrace trace(testing::MakeCgLike(4, 10, 20));
  Signature sig = AnalyzeTrace(trace);
  const auto path = std::filesystem::temp_directory_path() / "pas2p_signature_test.json";
  SaveSignature(sig, path);
  Signature back = LoadSignature(path);
  EXPECT_EQ(SignatureToJson(back), SignatureToJson(sig));
  EXPECT_EQ(back.phases.size(), sig.phases.size());
  EXPECT_EQ(back.sequence, sig.sequence);
  std::filesystem::remove(path);
}

TEST(Signature, NotASignatureIsATraceErrorNamingTheFile) {
  try {
    SignatureFromJson("{\"format\": \"something\"}", "x.json");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json: not a pas2p signature"), std::string::npos);
  }
  EXPECT_THROW(SignatureFromJson("{", "y.json"), TraceError);
}

TEST(Signature, StatsMergeEqualsAddingAll) {
  Stats a, b, all;
  for (int i = 0; i < 10; ++i) {
    (i < 4 ? a : b).Add(i * 1.5);
    all.Add(i * 1.5);
  }
  a.Merge(b);
  EXPECT_EQ(a.n, all.n);
  EXPECT_NEAR(a.mean, all.mean, 1e-12);
  EXPECT_NEAR(a.stddev(), all.stddev(), 1e-12);
  EXPECT_EQ(a.min, 0);
  EXPECT_EQ(a.max, 13.5);
}

}  // namespace
}  // namespace pas2p::phases
