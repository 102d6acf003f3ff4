// `pas2p trace` end to end: real mpirun, good and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace pas2p {
namespace {

using testing::FreshDir;
using testing::Program;
using testing::Quote;

testing::CommandResult Pas2pTrace(const std::string& args) {
  return testing::Run("PAS2P_TRACER=" + Quote(PAS2P_TRACER_PATH) + " " + Quote(PAS2P_EXE) +
                      " trace " + args);
}

TEST(TraceCommand, TracesEachCountIntoItsOwnDirectory) {
  const std::string out = FreshDir("cmd-ok");
  const auto run = Pas2pTrace("-n 4 --out " + Quote(out) + " -- " + Quote(Program("p2p_program")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "p2p_program checksum 161\n");  // the program's output, nothing else
  EXPECT_NE(run.err.find("[1/1] tracing 4 ranks ... "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" events"), std::string::npos) << run.err;
  const std::string dir = out + "/p2p_program.4";
  TraceDirectory trace(dir);
  EXPECT_EQ(trace.metadata().status, "complete");
  EXPECT_EQ(trace.metadata().nprocs, 4);
  const TraceData data = ReadTrace(trace);
  EXPECT_EQ(data.ranks.size(), 4u);
  // The progress line says so when the count had more ranks than cores (4 ranks on this
  // 2-core test machine), and only then.
  const std::string crowded =
      "; " + trace.metadata().DescribePlacement() + ": more ranks than cores";
  EXPECT_EQ(run.err.find(crowded) != std::string::npos, trace.metadata().IsOversubscribed())
      << run.err;
}

TEST(TraceCommand, DefaultOutputIsTracesAppAppDotCountAndRerunReplaces) {
  const std::string cwd = FreshDir("cmd-default");
  for (int i = 0; i < 2; ++i) {
    const auto run = testing::Run(
        "cd " + Quote(cwd) + " && PAS2P_TRACER=" + Quote(PAS2P_TRACER_PATH) + " " +
        Quote(PAS2P_EXE) + " trace -n 2,4 -- " + Quote(Program("collectives_program")));
    if (i == 0) {
      // collectives_program needs 4 ranks: it aborts at 2, and pas2p stops there.
      EXPECT_NE(run.exit_code, 0);
      EXPECT_NE(run.err.find("failed at 2 ranks"), std::string::npos) << run.err;
      EXPECT_FALSE(
          std::filesystem::exists(cwd + "/traces/collectives_program/collectives_program.4"));
    }
  }
  const auto run =
      testing::Run("cd " + Quote(cwd) + " && PAS2P_TRACER=" + Quote(PAS2P_TRACER_PATH) + " " +
                   Quote(PAS2P_EXE) + " trace -n 4 -- " + Quote(Program("collectives_program")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  TraceDirectory trace(cwd + "/traces/collectives_program/collectives_program.4");
  EXPECT_EQ(trace.metadata().status, "complete");
  TraceDirectory cut(cwd + "/traces/collectives_program/collectives_program.2");
  EXPECT_EQ(cut.metadata().status, "incomplete");
}

TEST(TraceCommand, CrashingApplicationIsNamedAndKeptIncomplete) {
  const std::string out = FreshDir("cmd-crash");
  const auto run =
      Pas2pTrace("-n 2 --out " + Quote(out) + " -- " + Quote(Program("failing_program")) + " segv");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("failed at 2 ranks"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("signal 11"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("rank 1"), std::string::npos) << run.err;
  TraceDirectory trace(out + "/failing_program.2");
  EXPECT_EQ(trace.metadata().status, "incomplete");
  EXPECT_NE(trace.metadata().status_reason.find("signal 11"), std::string::npos);
  std::vector<std::string> warnings;
  const TraceData data = ReadTrace(trace, false, &warnings);
  EXPECT_GE(data.ranks.at(1).size(), 5u);
}

TEST(TraceCommand, BadInputGivesAClearErrorAndNonZeroExit) {
  struct Case {
    std::string args;
    std::string expected;
  };
  const std::string out = FreshDir("cmd-bad");
  const std::vector<Case> cases = {
      {"--bogus -n 2 -- " + Quote(Program("p2p_program")), "--bogus"},
      {"-n 2 -- /nonexistent/app", "does not exist"},
      {"-n 2 -- /bin/true", "is not an MPI program"},
      {"-n 2 --out /proc/pas2p-cannot-write -- " + Quote(Program("p2p_program")),
       "output directory"},
      {"-n 2,zero --out " + Quote(out) + " -- " + Quote(Program("p2p_program")),
       "invalid process count"},
      {"-n 2,4,2 --out " + Quote(out) + " -- " + Quote(Program("p2p_program")), "given twice"},
      {"-n 2", "command"},
      {"--out " + Quote(out) + " -- " + Quote(Program("p2p_program")), "--counts"},
  };
  for (const auto& c : cases) {
    const auto run = Pas2pTrace(c.args);
    EXPECT_NE(run.exit_code, 0) << c.args;
    EXPECT_NE(run.err.find(c.expected), std::string::npos) << c.args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty() || run.out.find("Usage") == std::string::npos ||
                run.err.size() > 0);
  }
}

// A wrapper script (one that writes the count's input file before it runs the solver, as
// ScaLAPACK's and HPCC's tests need) is traced like the program it runs; a script that runs
// no MPI program fails with what went wrong, not as "not an MPI program" before it ran.
TEST(TraceCommand, ScriptsAreTracedAsTheProgramTheyRun) {
  const std::string out = FreshDir("cmd-script");
  const std::string wrapper = out + "/wrapper.sh";
  {
    std::ofstream f(wrapper);
    f << "#!/bin/sh\necho \"ranks $OMPI_COMM_WORLD_SIZE\" > /dev/null\nexec "
      << Quote(Program("p2p_program")) << " \"$@\"\n";
  }
  const std::string no_mpi = out + "/no_mpi.sh";
  { std::ofstream(no_mpi) << "#!/bin/sh\nexec /bin/true\n"; }
  for (const std::string& script : {wrapper, no_mpi}) {
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  }
  const auto run = Pas2pTrace("-n 4 --out " + Quote(out) + " -- " + Quote(wrapper));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  TraceDirectory trace(out + "/wrapper.sh.4");
  EXPECT_EQ(trace.metadata().status, "complete");
  EXPECT_EQ(ReadTrace(trace).ranks.size(), 4u);
  const auto none = Pas2pTrace("-n 2 --out " + Quote(out) + " -- " + Quote(no_mpi));
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("wrote no trace"), std::string::npos) << none.err;
}

TEST(TraceCommand, HelpExplainsOptionsAndOutput) {
  const auto run = testing::Run(Quote(PAS2P_EXE) + " trace --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* word : {"--counts", "--out", "--mpirun", "--mpirun-args", "incomplete",
                           "<app>.<count>", "PAS2P_TRACER"}) {
    EXPECT_NE(run.out.find(word), std::string::npos) << word;
  }
}

}  // namespace
}  // namespace pas2p
