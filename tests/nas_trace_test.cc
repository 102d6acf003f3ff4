// The communication of NAS Parallel Benchmarks kernels (bench/npb/*_pattern.c: NPB-MPI's
// process grids, partners, message lengths and call order, the numerics replaced by compute
// loops), traced under a real mpirun at 4, 8, 16 and 32 ranks (once per kernel for the
// suite) and checked as a user checks them, with `pas2p validate` and `pas2p predict`.
//
// CG (cg.f: row reductions by recursive doubling, transpose exchanges, dot products, each an
// MPI_Irecv, MPI_Send, MPI_Wait):
// - from 4, 8 and 16 the model predicts 32 with every message to the right partner and the
//   right bytes: the dot products take one step per bit of the column index (1 at 4, 2 at 8
//   and 16, 3 at 32), and the row reductions' and transposes' messages are a share of the
//   row, 8 NA / 2^ceil(log2(P)/2) bytes (a staircase in P that no power law fits);
// - from 8, 16 and 32 the synthesized run at 64 completes: the exchange whose wait begins
//   the next phase kept its send, the first one was dropped (a deadlock) before.
// LU (SSOR: pipelined lower and upper sweeps on an open grid, a right-hand-side exchange per
// step): the boundary ranks' last phases split differently from the others', and their
// phases were matched by logical time, where the right-hand-side exchange lies within the
// sweeps' span: those calls were lost (86.6% of the peers right at 32, bytes 22.9% short).
// Matched in order, from 4, 8 and 16 the run at 32 has its peers (and, on a quiet machine, its
// bytes within 0.1%).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

using nlohmann::json;

class NasTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { tmp_ = new TempDir(); }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
    traced_.clear();
  }
  // The traces of `app` (built from bench/npb) with `args` at 4, 8, 16 and 32 ranks, taken
  // on first use.
  static const std::vector<std::string>& Traces(const std::string& app,
                                                const std::vector<std::string>& args) {
    auto [it, fresh] = traced_.try_emplace(app);
    if (!fresh) return it->second;
    for (int n : {4, 8, 16, 32}) {
      auto traced = TraceApp(app, n, args, tmp_->path() / (app + std::to_string(n)));
      if (traced.trace_dir.empty()) break;
      it->second.push_back(traced.trace_dir.string());
    }
    return it->second;
  }
  // `pas2p ARGS... --json` on the traces `dirs[first..last]`.
  static json Run(std::vector<std::string> args, const std::vector<std::string>& dirs,
                  std::size_t first, std::size_t last) {
    std::vector<std::string> cmd = {Binary("pas2p").string()};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.push_back("--json");
    for (std::size_t i = first; i <= last; ++i) cmd.push_back(dirs[i]);
    const RunResult r = RunCommand(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }
  // `pas2p validate` trained on 4, 8 and 16, against the run at 32.
  static json ValidateAt32(const std::vector<std::string>& dirs) {
    return Run({"validate", "--noise-draws", "0", "--against", dirs[3]}, dirs, 0, 2);
  }
  static TempDir* tmp_;
  static std::map<std::string, std::vector<std::string>> traced_;
};
TempDir* NasTrace::tmp_ = nullptr;
std::map<std::string, std::vector<std::string>> NasTrace::traced_;

// NA 2800, 2 timed iterations, NONZER 7: a few seconds at 32 ranks on 2 cores.
const std::vector<std::string> kCgArgs = {"2800", "2", "7"};
// A 33^3 grid, 6 SSOR steps, 20 loop steps per point (with 3, a burst of the last step
// differs enough at 4 ranks to change the phases found there: see inputs.h).
const std::vector<std::string> kLuArgs = {"33", "6", "20"};

TEST_F(NasTrace, CgPeersAndBytesOfALargerRunAreRight) {
  const auto& dirs = Traces("nas_cg_pattern", kCgArgs);
  ASSERT_EQ(dirs.size(), 4u);
  const json v = ValidateAt32(dirs);
  ASSERT_TRUE(v.contains("pattern_match")) << v.dump();
  EXPECT_EQ(v.at("count").get<int>(), 32);
  EXPECT_DOUBLE_EQ(v.at("pattern_match").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(v.at("collective_match").get<double>(), 1.0);
  EXPECT_LT(v.at("bytes_error").get<double>(), 1e-3);
}

TEST_F(NasTrace, CgRunAtTwiceTheLargestCountCompletes) {
  const auto& dirs = Traces("nas_cg_pattern", kCgArgs);
  ASSERT_EQ(dirs.size(), 4u);
  const json p = Run({"predict", "--target", "64"}, dirs, 1, 3);
  ASSERT_TRUE(p.contains("predicted_time_s")) << p.dump();
  EXPECT_GT(p.at("predicted_time_s").get<double>(), 0);
}

TEST_F(NasTrace, LuKeepsEveryRanksExchangesInsideTheSweepLoop) {
  const auto& dirs = Traces("nas_lu_pattern", kLuArgs);
  ASSERT_EQ(dirs.size(), 4u);
  const json v = ValidateAt32(dirs);
  ASSERT_TRUE(v.contains("pattern_match")) << v.dump();
  // The last phases (pintgr's exchanges, which some boundary ranks make) are not all matched.
  EXPECT_GT(v.at("pattern_match").get<double>(), 0.99) << v.dump(1);
  // 0.05-0.08% on a quiet machine; up to 11% (one right-hand-side exchange too many at 32)
  // when the 4-rank run's phases take the others' shape only by merging runs whatever their
  // compute (inputs.h, kMergingLadder), as happens under the load of the other tests.
  EXPECT_LT(v.at("bytes_error").get<double>(), 0.15);
}

// MG (mg.f: a V-cycle of halo exchanges on every level, whose ranks skip the coarse levels
// where they hold no points) folds loops whose runs of one structure repeat back to back
// (a level's exchanges after the loop of them): whether they are one run depends on the
// similarity. The similarities `pas2p model` tries when the counts' phases differ are
// analyzed in one pass over the trace (phases::AnalyzeTraceUnder); each must give what it
// gives alone, from exact compute (no floor: similarity 0 merges nothing, 1 everything),
// also with the phases under each similarity built on threads.
TEST_F(NasTrace, MgAnalyzedUnderEverySimilarityInOnePassAsAlone) {
  TempDir tmp;
  const auto traced = TraceApp("nas_mg_pattern", 16, {"32", "4", "16"}, tmp.path() / "mg16");
  ASSERT_FALSE(traced.trace_dir.empty());
  const auto trace = OpenTrace(traced.trace_dir);
  std::vector<phases::AnalyzeOptions> ladder;
  for (const double similarity : {0.3, 0.0, 0.05, 0.15, 1.0}) {
    phases::AnalyzeOptions o;
    o.similarity = similarity;
    o.compute_floor_ns = 0;
    ladder.push_back(o);
  }
  const std::vector<phases::Signature> together = phases::AnalyzeTraceUnder(*trace, ladder, 3);
  ASSERT_EQ(together.size(), ladder.size());
  std::set<std::size_t> phase_counts;
  for (std::size_t k = 0; k < ladder.size(); ++k) {
    const phases::Signature alone = phases::AnalyzeTrace(*trace, ladder[k]);
    EXPECT_TRUE(together[k] == alone) << "similarity " << ladder[k].similarity << ":\n"
                                      << phases::FormatSignatureTable(together[k]) << "alone:\n"
                                      << phases::FormatSignatureTable(alone);
    phase_counts.insert(together[k].phases.size());
  }
  EXPECT_GT(phase_counts.size(), 1u) << "the similarities found the same phases";
}

}  // namespace
}  // namespace pas2p::testing
