// The communication of NAS CG (bench/npb/cg_pattern.c: NPB-MPI cg.f's process grid, row
// reductions by recursive doubling, transpose exchanges and dot products, each an MPI_Irecv,
// MPI_Send, MPI_Wait), traced under a real mpirun at 4, 8, 16 and 32 ranks (once for the
// suite), then:
// - from 4, 8 and 16 the model predicts 32 with every message to the right partner and the
//   right bytes: the dot products take one step per bit of the column index (1 at 4, 2 at 8
//   and 16, 3 at 32), and the row reductions' and transposes' messages are a share of the
//   row, 8 NA / 2^ceil(log2(P)/2) bytes (a staircase in P that no power law fits);
// - from 8, 16 and 32 the synthesized run at 64 completes: the exchange whose wait begins
//   the next phase kept its send, the first one was dropped (a deadlock) before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.h"

namespace pas2p::testing {
namespace {

using nlohmann::json;

// The traces are checked as a user checks them, with `pas2p validate` and `pas2p predict`
// (which analyze the traces again with message sizes ending loops when no model builds from
// the calls alone, as here: the row reductions' vectors and the dot products' 8 bytes go to
// the same partner).
class NasCgTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new TempDir();
    dirs_ = new std::vector<std::string>();
    for (int n : {4, 8, 16, 32}) {
      // NA 2800, 2 timed iterations, NONZER 7: a few seconds at 32 ranks on 2 cores.
      auto traced = TraceApp("nas_cg_pattern", n, {"2800", "2", "7"},
                             tmp_->path() / ("t" + std::to_string(n)));
      if (traced.trace_dir.empty()) return;
      dirs_->push_back(traced.trace_dir.string());
    }
  }
  static void TearDownTestSuite() {
    delete dirs_;
    delete tmp_;
    dirs_ = nullptr;
    tmp_ = nullptr;
  }
  // `pas2p ARGS... --json` on the traces at indices `first` to `last` of 4, 8, 16, 32.
  static json Run(std::vector<std::string> args, std::size_t first, std::size_t last) {
    std::vector<std::string> cmd = {Binary("pas2p").string()};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.push_back("--json");
    for (std::size_t i = first; i <= last; ++i) cmd.push_back((*dirs_)[i]);
    const RunResult r = RunCommand(cmd);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::object();
  }
  static TempDir* tmp_;
  static std::vector<std::string>* dirs_;
};
TempDir* NasCgTrace::tmp_ = nullptr;
std::vector<std::string>* NasCgTrace::dirs_ = nullptr;

TEST_F(NasCgTrace, PeersAndBytesOfALargerRunAreRight) {
  ASSERT_EQ(dirs_->size(), 4u);
  const json v = Run({"validate", "--noise-draws", "0", "--against", (*dirs_)[3]}, 0, 2);
  ASSERT_TRUE(v.contains("pattern_match")) << v.dump();
  EXPECT_EQ(v.at("count").get<int>(), 32);
  EXPECT_DOUBLE_EQ(v.at("pattern_match").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(v.at("collective_match").get<double>(), 1.0);
  EXPECT_LT(v.at("bytes_error").get<double>(), 1e-3);
}

TEST_F(NasCgTrace, TheRunAtTwiceTheLargestCountCompletes) {
  ASSERT_EQ(dirs_->size(), 4u);
  const json p = Run({"predict", "--target", "64"}, 1, 3);
  ASSERT_TRUE(p.contains("predicted_time_s")) << p.dump();
  EXPECT_GT(p.at("predicted_time_s").get<double>(), 0);
}

}  // namespace
}  // namespace pas2p::testing
