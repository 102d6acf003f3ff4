// The tracer must not change what the application computes or prints: every mini-app, run
// under mpirun with libpas2p-trace.so preloaded, prints the same checksum line as without
// it, prints nothing else on stdout, and leaves a complete trace.
#include <gtest/gtest.h>

#include "test_support.h"

namespace pas2p::testing {
namespace {

struct AppCase {
  std::string app;
  int nprocs;
  std::vector<std::string> args;
};

void PrintTo(const AppCase& c, std::ostream* os) { *os << c.app << " at " << c.nprocs; }

class TracerKeepsResults : public ::testing::TestWithParam<AppCase> {};

TEST_P(TracerKeepsResults, SameChecksumAndStdoutWithAndWithoutTracer) {
  const AppCase& c = GetParam();
  const auto tracer = BinaryDir() / "lib" / "libpas2p-trace.so";
  ASSERT_TRUE(std::filesystem::exists(tracer)) << tracer << " is not built";
  TempDir tmp;
  const auto trace_dir = tmp.path() / "trace";

  auto plain = MpirunPrefix(c.nprocs);
  auto traced = MpirunPrefix(c.nprocs);
  traced.insert(traced.end(), {"-x", "LD_PRELOAD=" + tracer.string(), "-x",
                               "PAS2P_TRACE_DIR=" + trace_dir.string()});
  for (auto* cmd : {&plain, &traced}) {
    cmd->push_back(Binary(c.app).string());
    cmd->insert(cmd->end(), c.args.begin(), c.args.end());
  }
  const RunResult untraced_run = RunCommand(plain);
  const RunResult traced_run = RunCommand(traced);
  ASSERT_EQ(untraced_run.exit_code, 0) << untraced_run.err;
  ASSERT_EQ(traced_run.exit_code, 0) << traced_run.err;

  const std::string want = ChecksumLine(c.app, untraced_run.out);
  ASSERT_FALSE(want.empty()) << "no checksum line in:\n" << untraced_run.out;
  EXPECT_EQ(ChecksumLine(c.app, traced_run.out), want);
  // Only the application's own two lines: the tracer writes nothing to stdout.
  const auto lines = Lines(traced_run.out);
  ASSERT_EQ(lines.size(), 2u) << traced_run.out;
  EXPECT_EQ(lines[0], want);
  EXPECT_EQ(lines[1].rfind(c.app + " wall_s=", 0), 0u) << lines[1];

  TraceDirectory trace(trace_dir);
  EXPECT_EQ(trace.nprocs(), c.nprocs);
  EXPECT_TRUE(trace.metadata().IsComplete()) << trace.metadata().status_reason;
  const TraceData data = ReadTrace(trace);  // throws if any stream is cut or corrupt
  for (const auto& rank : data.ranks) {
    ASSERT_FALSE(rank.empty());
    EXPECT_EQ(rank.front().kind, EventKind::kInit);
    EXPECT_EQ(rank.back().kind, EventKind::kFinalize);
  }
  EXPECT_EQ(CheckPointToPointMatching(data), "");
}

INSTANTIATE_TEST_SUITE_P(
    MiniApps, TracerKeepsResults,
    ::testing::Values(
        AppCase{"stencil2d", 4, {"--iters", "12", "--size", "120"}},
        AppCase{"stencil2d_f", 4, {"--iters", "12", "--size", "120"}},
        AppCase{"halo3d", 6, {"--iters", "6", "--size", "24"}},
        AppCase{"butterfly", 8, {"--iters", "6", "--size", "4096"}},
        AppCase{"transpose", 5, {"--iters", "6", "--size", "64"}},
        AppCase{"wavefront", 6, {"--iters", "3", "--size", "40", "--nz", "8", "--kblock", "2"}},
        AppCase{"masterworker", 4, {"--size", "30", "--unit", "2000"}},
        AppCase{"cg", 6, {"--iters", "10", "--size", "40", "--check-every", "5"}}),
    [](const ::testing::TestParamInfo<AppCase>& param_info) { return param_info.param.app; });

}  // namespace
}  // namespace pas2p::testing
