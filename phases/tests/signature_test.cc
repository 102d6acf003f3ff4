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

// A broadcast from rank k mod P: one loop whose root is "the next rank", the root's turns
// apart (a broadcast's root sends, the others receive), saved and read back; a root step
// the reader does not know is an error naming the file, the phase and the rank.
TEST(Signature, MovingRootRoundTripsAndAnUnknownStepIsAnError) {
  constexpr int kRanks = 5, kIters = 12;
  testing::Gen g(kRanks, "panels");
  g.Init();
  std::vector<int> all(kRanks);
  for (int r = 0; r < kRanks; ++r) all[r] = r;
  for (int k = 0; k < kIters; ++k) {
    for (int r = 0; r < kRanks; ++r) g.Compute(r, r == k % kRanks ? 900000 : 100000);
    const std::int64_t ready = g.MaxClock() + 2000;
    for (int r = 0; r < kRanks; ++r) {
      const bool root = r == k % kRanks;
      g.Blocking(r, MakeCollective(EventKind::kBcast, root ? 4096 : 0, root ? 0 : 4096, k % kRanks),
                 ready);
    }
  }
  g.Finalize();
  testing::MemoryTrace trace(g.Take());
  const Signature sig = AnalyzeTrace(trace);
  const Phase* loop = nullptr;
  for (const Phase& p : sig.phases) {
    if (p.weight == kIters - 1) loop = &p;
  }
  ASSERT_NE(loop, nullptr) << FormatSignatureTable(sig);
  EXPECT_NE(loop->description.find("from a moving root"), std::string::npos);
  for (const RankPhase& rp : loop->ranks) {
    ASSERT_EQ(rp.events.size(), 1u);
    const PhaseEvent& e = rp.events[0];
    EXPECT_EQ(e.root_step, RootStep::kNext);
    EXPECT_EQ(e.peer, kNoRank);
    EXPECT_EQ(e.root_bytes.n + e.bytes.n, kIters - 1);
    EXPECT_DOUBLE_EQ(e.root_bytes.mean, 4096);
    EXPECT_DOUBLE_EQ(e.bytes.mean, 0);
    EXPECT_DOUBLE_EQ(e.recv_bytes.mean, 4096);
    EXPECT_DOUBLE_EQ(e.root_cpu_ns.mean, 900000);
    EXPECT_DOUBLE_EQ(e.compute.cpu_ns.mean, 100000);
  }
  const std::string text = SignatureToJson(sig);
  EXPECT_EQ(SignatureFromJson(text, "mem"), sig);
  std::string bad = text;
  const std::string step = "\"root_step\": \"next\"";
  ASSERT_NE(bad.find(step), std::string::npos);
  bad.replace(bad.find(step), step.size(), "\"root_step\": \"sideways\"");
  try {
    SignatureFromJson(bad, "panels.json");
    FAIL() << "an unknown root step was read";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("panels.json: phase " + std::to_string(loop->id)), std::string::npos)
        << what;
    EXPECT_NE(what.find("unknown root_step \"sideways\""), std::string::npos) << what;
  }
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
