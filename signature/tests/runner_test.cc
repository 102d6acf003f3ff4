// The `pas2p trace` runner's parsing and pre-run checks (no mpirun needed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "pas2p/core/error.h"
#include "pas2p/signature/trace_runner.h"

namespace pas2p::signature {
namespace {

TEST(ParseCounts, ListsInOrder) {
  EXPECT_EQ(ParseCounts("4,9,16"), (std::vector<int>{4, 9, 16}));
  EXPECT_EQ(ParseCounts(" 2 , 8"), (std::vector<int>{2, 8}));
}

TEST(ParseCounts, RejectsWhatIsNotAPositiveInteger) {
  for (const char* bad : {"", "4,x", "0", "-4", "4,,9", "3.5", "99999999999"}) {
    try {
      ParseCounts(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseCounts, RejectsACountGivenTwice) {
  try {
    ParseCounts("4,9,4");
    ADD_FAILURE() << "accepted a count given twice";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("process count 4 is given twice in '4,9,4'"),
              std::string::npos)
        << e.what();
  }
}

TEST(SplitArguments, WordsAndQuotes) {
  EXPECT_EQ(SplitArguments("--bind-to none  -x 'A=b c' \"d e\""),
            (std::vector<std::string>{"--bind-to", "none", "-x", "A=b c", "d e"}));
  EXPECT_TRUE(SplitArguments("").empty());
  EXPECT_THROW(SplitArguments("'open"), UserError);
}

TEST(TraceDirFor, AppDotCount) {
  EXPECT_EQ(TraceDirFor("traces/stencil2d", "stencil2d", 16),
            std::filesystem::path("traces/stencil2d/stencil2d.16"));
}

TEST(CommandForCount, ReplacesEveryPlaceholderWithTheCount) {
  EXPECT_EQ(CommandForCount({"bin/cg.S.{n}", "-i", "in.{n}.{n}", "plain"}, 16),
            (std::vector<std::string>{"bin/cg.S.16", "-i", "in.16.16", "plain"}));
  EXPECT_EQ(CommandForCount({"./app", "512"}, 4), (std::vector<std::string>{"./app", "512"}));
}

TEST(ApplicationName, ProgramNameWithoutThePlaceholder) {
  EXPECT_EQ(ApplicationName({"bin/cg.S.{n}"}), "cg.S");
  EXPECT_EQ(ApplicationName({"./lu_{n}", "x.{n}"}), "lu");
  EXPECT_EQ(ApplicationName({"/opt/{n}-ft"}), "ft");
  EXPECT_EQ(ApplicationName({"{n}/bt"}), "bt");
  EXPECT_EQ(ApplicationName({"./stencil2d", "{n}"}), "stencil2d");
  EXPECT_EQ(ApplicationName({"{n}"}), "app");
}

TEST(FindTracer, BesideTheExecutableUnlessOverridden) {
  ::unsetenv("PAS2P_TRACER");
  EXPECT_EQ(FindTracer("/opt/pas2p/bin/pas2p"),
            std::filesystem::path("/opt/pas2p/lib/libpas2p-trace.so"));
  ::setenv("PAS2P_TRACER", "/tmp/custom.so", 1);
  EXPECT_EQ(FindTracer("/opt/pas2p/bin/pas2p"), std::filesystem::path("/tmp/custom.so"));
  ::unsetenv("PAS2P_TRACER");
}

TEST(CheckMpiProgram, RejectsMissingAndNonMpiPrograms) {
  try {
    CheckMpiProgram("/nonexistent/dir/app");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  try {
    CheckMpiProgram("pas2p-no-such-program-on-path");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not found on PATH"), std::string::npos) << e.what();
  }
  try {
    CheckMpiProgram("/bin/true");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an MPI program"), std::string::npos) << e.what();
  }
  const std::string plain_file = ::testing::TempDir() + "/pas2p-not-executable";
  { std::ofstream(plain_file) << "data\n"; }
  std::filesystem::permissions(
      plain_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  try {
    CheckMpiProgram(plain_file);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("not an executable"), std::string::npos) << e.what();
  }
}

TEST(TraceRunOptions, IsValidSaysWhy) {
  TraceRunOptions o;
  o.counts = {2};
  o.command = {"/bin/true"};
  o.tracer = "/nonexistent.so";
  std::string error;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("not an MPI program"), std::string::npos) << error;
  o.counts.clear();
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("no process count"), std::string::npos) << error;
}

}  // namespace
}  // namespace pas2p::signature
