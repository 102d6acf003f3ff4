// `pas2p predict` and `pas2p validate` run as a user runs them, on the bundled stencil2d
// traces: the JSON keys the README documents, the self-check and the interval it widens,
// and byte-identical output from one run to the next.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace pas2p::testing {
namespace {

using nlohmann::json;

std::string Stencil() { return (SourceDir() / "datasets" / "traces" / "stencil2d").string(); }

json Predict(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Binary("pas2p").string(), "predict", "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const RunResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(PredictCli, SelfCheckWidensTheIntervalToItsError) {
  const json p = Predict({"--target", "1024", Stencil()});
  EXPECT_EQ(p.at("target"), 1024);
  const double t = p.at("predicted_time_s");
  const double low = p.at("interval_s")[0], high = p.at("interval_s")[1];
  EXPECT_GT(t, 0);
  EXPECT_LE(low, t);
  EXPECT_GE(high, t);
  const json& c = p.at("self_check");
  ASSERT_TRUE(c.at("done").get<bool>()) << c.dump();
  EXPECT_EQ(c.at("count"), 36);
  EXPECT_EQ(c.at("training_counts"), json::array({4, 9, 16, 25}));
  const double err = c.at("error");
  EXPECT_NEAR(err, c.at("predicted_s").get<double>() / c.at("real_simulated_s").get<double>() - 1,
              1e-12);
  EXPECT_LE(low, t * (1 - std::fabs(err)) * (1 + 1e-12));
  EXPECT_GE(high, t * (1 + std::fabs(err)) * (1 - 1e-12));

  // Without it, the same prediction with the regressions' interval alone.
  const json plain = Predict({"--target", "1024", "--no-self-check", Stencil()});
  EXPECT_EQ(plain.at("predicted_time_s"), p.at("predicted_time_s"));
  EXPECT_FALSE(plain.at("self_check").at("done").get<bool>());
  EXPECT_EQ(plain.at("self_check").at("note"), "--no-self-check");
  EXPECT_GE(plain.at("interval_s")[0].get<double>(), low);
  EXPECT_LE(plain.at("interval_s")[1].get<double>(), high);
}

// Where the time goes at the target: POP's metrics of the full replay, each the product of
// the next level's, all fractions; at 65536 ranks the run is predicted phase by phase and
// there is no replay to measure them on (null, not a made-up figure).
TEST(PredictCli, JsonGivesThePopMetricsOfTheReplay) {
  const json p = Predict({"--target", "1024", "--noise-replays", "0", Stencil()});
  const json& e = p.at("efficiency");
  ASSERT_TRUE(e.is_object()) << p.dump();
  for (const char* key :
       {"parallel", "load_balance", "communication", "serialization", "transfer"}) {
    const double x = e.at(key);
    EXPECT_GT(x, 0) << key;
    EXPECT_LE(x, 1) << key;
  }
  EXPECT_NEAR(e.at("parallel").get<double>(),
              e.at("load_balance").get<double>() * e.at("communication").get<double>(), 1e-12);
  EXPECT_NEAR(e.at("communication").get<double>(),
              e.at("serialization").get<double>() * e.at("transfer").get<double>(), 1e-12);
  // Each rank's time is computing, moving its data or waiting (until it finishes).
  const double busy = e.at("compute_mean_s").get<double>() +
                      e.at("communication_mean_s").get<double>() +
                      e.at("wait_mean_s").get<double>();
  EXPECT_LE(busy, p.at("predicted_time_s").get<double>() * (1 + 1e-9));
  EXPECT_GT(busy, 0.9 * p.at("predicted_time_s").get<double>());
  const json big = Predict({"--target", "65536", "--no-self-check", Stencil()});
  EXPECT_TRUE(big.at("efficiency").is_null()) << big.at("method");
}

TEST(PredictCli, SweepRowsSayWhyTheEfficiencyFalls) {
  const json s = Predict({"--sweep", "64:1024", "--points", "3", Stencil()});
  ASSERT_EQ(s.at("sweep").size(), 3u) << s.dump();
  for (const json& row : s.at("sweep")) {
    const double lb = row.at("load_balance"), ce = row.at("communication_efficiency");
    EXPECT_GT(lb, 0);
    EXPECT_LE(lb, 1);
    EXPECT_GT(ce, 0);
    EXPECT_LE(ce, 1);
  }
}

// CSV lines as fields.
std::vector<std::vector<std::string>> CsvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (;;) {
      const std::size_t comma = line.find(',', from);
      fields.push_back(line.substr(from, comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

// --csv: the sweep as one table for a spreadsheet, the same numbers as --json; the rule and
// the recommendation on stderr, so that stdout is the table alone. One target gives one line
// with its interval. --csv and --json together are refused.
TEST(PredictCli, CsvIsTheSweepAsATable) {
  const std::string pas2p = Binary("pas2p").string();
  const json s = Predict({"--sweep", "64:1024", "--points", "3", Stencil()});
  const RunResult r =
      RunCommand({pas2p, "predict", "--csv", "--sweep", "64:1024", "--points", "3", Stencil()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = CsvRows(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  const std::vector<std::string> header = {"processes",      "time_s",
                                           "interval_low_s", "interval_high_s",
                                           "quiet_time_s",   "speedup",
                                           "efficiency",     "core_hours",
                                           "load_balance",   "communication_efficiency",
                                           "beyond_problem", "recommended"};
  EXPECT_EQ(rows[0], header);
  int recommended = 0;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const json& row = s.at("sweep")[i - 1];
    ASSERT_EQ(rows[i].size(), header.size()) << r.out;
    EXPECT_EQ(std::stoll(rows[i][0]), row.at("count").get<std::int64_t>());
    EXPECT_NEAR(std::stod(rows[i][1]), row.at("predicted_time_s").get<double>(),
                1e-8 * row.at("predicted_time_s").get<double>());
    EXPECT_EQ(rows[i][2], "");  // a sweep predicts without intervals
    EXPECT_NEAR(std::stod(rows[i][6]), row.at("efficiency").get<double>(), 1e-8);
    EXPECT_NEAR(std::stod(rows[i][8]), row.at("load_balance").get<double>(), 1e-8);
    if (rows[i][11] == "1") {
      ++recommended;
      EXPECT_EQ(row.at("count"), s.at("recommended"));
    }
  }
  EXPECT_EQ(recommended, 1) << r.out;
  EXPECT_NE(r.err.find("pas2p: rule: the largest count whose parallel efficiency"),
            std::string::npos)
      << r.err;

  const RunResult one = RunCommand({pas2p, "predict", "--csv", "--target", "256", Stencil()});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const auto line = CsvRows(one.out);
  ASSERT_EQ(line.size(), 2u) << one.out;
  ASSERT_EQ(line[1].size(), header.size()) << one.out;
  const double t = std::stod(line[1][1]), low = std::stod(line[1][2]), high = std::stod(line[1][3]);
  EXPECT_LE(low, t);
  EXPECT_GE(high, t);
  EXPECT_EQ(line[1][5], "");   // no speedup without a baseline
  EXPECT_EQ(line[1][11], "");  // nor a recommendation

  const RunResult both =
      RunCommand({pas2p, "predict", "--csv", "--json", "--target", "256", Stencil()});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_NE((both.err + both.out).find("--json excludes --csv"), std::string::npos)
      << both.err << both.out;
}

TEST(PredictCli, SameInputsGiveByteIdenticalOutput) {
  const std::vector<std::string> argv = {Binary("pas2p").string(), "predict", "--target", "1024",
                                         Stencil()};
  const RunResult a = RunCommand(argv), b = RunCommand(argv);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("self-check: trained on 4, 9, 16, 25 only, it predicts 36"),
            std::string::npos)
      << a.out;
}

// --bytes-tolerance: an explicit size tolerance is taken as given (the bundled stencil models
// either way); a negative or non-numeric one is a clear error on every model command.
TEST(PredictCli, BytesToleranceIsAFractionOrAClearError) {
  const json p = Predict({"--target", "64", "--bytes-tolerance", "0.1", Stencil()});
  EXPECT_GT(p.at("predicted_time_s").get<double>(), 0);
  for (const char* command : {"model", "predict", "validate"}) {
    for (const char* bad : {"-0.5", "ten"}) {
      std::vector<std::string> argv = {Binary("pas2p").string(), command, "--bytes-tolerance", bad,
                                       Stencil()};
      if (std::string(command) == "predict") argv.insert(argv.end(), {"--target", "64"});
      const RunResult r = RunCommand(argv);
      EXPECT_NE(r.exit_code, 0) << command << " " << bad;
      EXPECT_NE(
          r.err.find(std::string("--bytes-tolerance: expected a fraction >= 0 (e.g. 0.1), got ") +
                     bad),
          std::string::npos)
          << command << ": " << r.err;
    }
  }
}

// --threads on every model command: the output is the same byte for byte with 1 thread and
// with 3, and a negative count is a clear error naming the flag.
TEST(PredictCli, ThreadsChangeNothingButTheTimeAndANegativeCountIsRefused) {
  for (const char* command : {"model", "predict", "validate"}) {
    std::string out;
    for (const char* threads : {"1", "3"}) {
      std::vector<std::string> argv = {Binary("pas2p").string(), command, "--threads", threads,
                                       Stencil()};
      if (std::string(command) == "predict") argv.insert(argv.end(), {"--target", "1024"});
      const RunResult r = RunCommand(argv);
      ASSERT_EQ(r.exit_code, 0) << command << " --threads " << threads << ": " << r.err;
      if (out.empty()) {
        out = r.out;
      } else {
        EXPECT_EQ(r.out, out) << command;
      }
    }
    std::vector<std::string> argv = {Binary("pas2p").string(), command, "--threads", "-2",
                                     Stencil()};
    if (std::string(command) == "predict") argv.insert(argv.end(), {"--target", "64"});
    const RunResult r = RunCommand(argv);
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_NE(r.err.find("--threads: Value -2 not in range 0 to 256"), std::string::npos)
        << command << ": " << r.err;
  }
}

// A training run whose trace is cut (here a rank's file truncated to half its size) is an
// error of model, predict and validate that names the file, the rank, the record and what was
// expected. Before, its analysis up to the cut was a count "of another shape", left out with a
// warning, and the prediction from the other counts exited 0.
TEST(PredictCli, ACutTrainingTraceIsAnErrorNamingTheFileAndTheRecord) {
  namespace fs = std::filesystem;
  const TempDir tmp;
  const fs::path traces = tmp.path() / "stencil2d";
  fs::copy(Stencil(), traces, fs::copy_options::recursive);
  const fs::path cut = traces / "stencil2d.9" / "rank-2.p2t";
  fs::resize_file(cut, fs::file_size(cut) / 2);
  for (const char* command : {"model", "predict", "validate"}) {
    std::vector<std::string> argv = {Binary("pas2p").string(), command, traces.string()};
    if (std::string(command) == "predict") argv.insert(argv.end(), {"--target", "64"});
    const RunResult r = RunCommand(argv);
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_NE(r.err.find("stencil2d.9: the run at 9 processes is not complete: the trace is cut"),
              std::string::npos)
        << command << ": " << r.err;
    EXPECT_NE(r.err.find("rank-2.p2t: rank 2: block 0"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_NE(r.err.find("expected"), std::string::npos) << command << ": " << r.err;
    EXPECT_NE(r.err.find("trace that count again, or leave it out"), std::string::npos)
        << command << ": " << r.err;
  }
}

// A target given as 0 is a wrong value, not a missing flag; one beyond the simulator's ranks
// is refused before the traces are read, naming the limit.
TEST(PredictCli, AZeroOrTooLargeTargetSaysWhatIsWrongWithIt) {
  const std::string pas2p = Binary("pas2p").string();
  RunResult r = RunCommand({pas2p, "predict", "--target", "0", Stencil()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--target must be a positive process count"), std::string::npos) << r.err;
  r = RunCommand({pas2p, "predict", Stencil()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("give --target N or --sweep A:B"), std::string::npos) << r.err;
  r = RunCommand({pas2p, "predict", "--target", "99999999999", Stencil()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("beyond what pas2p simulates (at most 16777215 ranks"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("predict at most 16769025"), std::string::npos) << r.err;
}

// Wrong sweep flags are refused before the traces are read, each saying what is wrong;
// sweep-only flags without --sweep are refused rather than ignored.
TEST(PredictCli, WrongSweepFlagsAreRefusedNamingTheFlag) {
  const std::string pas2p = Binary("pas2p").string();
  const std::string none = "/nonexistent/traces";  // never read: the flags fail first
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sweep", "4:64", "--points", "1"}, "--points must be at least 2"},
      {{"--sweep", "4:64x"}, "--sweep 4:64x: expected A:B"},
      {{"--sweep", "4-64"}, "--sweep 4-64: expected A:B"},
      {{"--sweep", "4:64", "--target", "64"}, "give either --target N or --sweep A:B, not both"},
      {{"--sweep", "4:64", "--efficiency", "2"}, "--efficiency must be in (0, 1]"},
      {{"--target", "64", "--efficiency", "0.7"}, "--efficiency requires --sweep"},
      {{"--target", "64", "--points", "4"}, "--points requires --sweep"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> argv = {pas2p, "predict"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(none);
    const RunResult r = RunCommand(argv);
    EXPECT_NE(r.exit_code, 0) << expected;
    EXPECT_NE((r.err + r.out).find(expected), std::string::npos)
        << expected << ": " << r.err << r.out;
  }
}

// validate --csv: the check as a header and one line, the same numbers as --json, so that
// several applications' checks concatenate into one table; a path with a comma is quoted.
TEST(ValidateCli, CsvIsTheCheckAsOneLine) {
  const std::string pas2p = Binary("pas2p").string();
  const std::string held =
      (SourceDir() / "datasets" / "heldout" / "stencil2d" / "stencil2d.49").string();
  const RunResult j = RunCommand({pas2p, "validate", "--json", "--against", held, Stencil()});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json v = json::parse(j.out);
  const RunResult r = RunCommand({pas2p, "validate", "--csv", "--against", held, Stencil()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = CsvRows(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  ASSERT_EQ(rows[0].size(), 16u) << r.out;
  ASSERT_EQ(rows[1].size(), 16u) << r.out;
  EXPECT_EQ(rows[0][0], "application");
  EXPECT_EQ(rows[1][0], "stencil2d");
  EXPECT_EQ(rows[1][1], "49");
  EXPECT_EQ(rows[1][2], "4 9 16 25 36");
  EXPECT_EQ(rows[1][3], held);
  const std::vector<std::pair<int, const char*>> keys = {
      {4, "pattern_match"},     {6, "bytes_error"},           {7, "compute_error"},
      {8, "time_error"},        {9, "noise_floor"},           {10, "quiet_error"},
      {11, "predicted_time_s"}, {12, "real_simulated_time_s"}};
  for (const auto& [column, key] : keys) {
    EXPECT_EQ(rows[0][column], key);
    const double want = v.at(key);
    EXPECT_NEAR(std::stod(rows[1][column]), want, 1e-8 * std::max(1.0, std::fabs(want))) << key;
  }
  EXPECT_EQ(rows[1][15], v.at("in_interval").get<bool>() ? "1" : "0");
  // The same run under a path with a comma: that field is quoted.
  TempDir tmp;
  const std::filesystem::path odd = tmp.path() / "run,49" / "stencil2d.49";
  std::filesystem::create_directories(odd.parent_path());
  std::filesystem::copy(held, odd, std::filesystem::copy_options::recursive);
  const RunResult q =
      RunCommand({pas2p, "validate", "--csv", "--against", odd.string(), Stencil()});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_NE(q.out.find(",\"" + odd.string() + "\","), std::string::npos) << q.out;
  const RunResult both = RunCommand({pas2p, "validate", "--csv", "--json", Stencil()});
  EXPECT_NE(both.exit_code, 0);
}

// Leave-largest-out analyzes every given count, the largest too; when that fails, the error
// says so, since it may name the count the check does not train on (PETSc multigrid: "... at
// 8, 12, 18, 27 processes" from a check trained on 8-18). Two counts: too few either way.
TEST(ValidateCli, AFailedAnalysisOfEveryCountSaysValidateAnalyzesTheLargestToo) {
  const std::string dir = (SourceDir() / "datasets" / "traces" / "stencil2d").string();
  const RunResult r = RunCommand(
      {Binary("pas2p").string(), "validate", dir + "/stencil2d.4", dir + "/stencil2d.9"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("validate analyzes every given count as predict does, the largest too"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("at least 3 process counts are needed"), std::string::npos) << r.err;
}

// Too few counts is said once: analyzing the traces again with message sizes ending loops
// (tried when no model builds) cannot change the counts, and its failure for the same reason
// is not repeated after the error.
TEST(PredictCli, TooFewCountsIsSaidOnce) {
  const std::string dir = (SourceDir() / "datasets" / "traces" / "stencil2d").string();
  const RunResult r = RunCommand({Binary("pas2p").string(), "predict", "--target", "64",
                                  dir + "/stencil2d.4", dir + "/stencil2d.9"});
  EXPECT_NE(r.exit_code, 0);
  const std::size_t first = r.err.find("at least 3 process counts are needed");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("at least 3 process counts are needed", first + 1), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("analyzed again"), std::string::npos) << r.err;
}

TEST(ValidateCli, HeldOutReportsTheNoiseFloorAndTheSelfCheck) {
  const RunResult r = RunCommand(
      {Binary("pas2p").string(), "validate", "--json", "--against",
       (SourceDir() / "datasets" / "heldout" / "stencil2d" / "stencil2d.49").string(), Stencil()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json v = json::parse(r.out);
  EXPECT_EQ(v.at("count"), 49);
  EXPECT_EQ(v.at("noise_draws"), 8);
  const double floor = v.at("noise_floor");
  EXPECT_GE(floor, 0);
  EXPECT_LT(floor, 1);
  EXPECT_LE(v.at("noise_time_s")[0].get<double>(), v.at("noise_mean_s").get<double>());
  EXPECT_GE(v.at("noise_time_s")[1].get<double>(), v.at("noise_mean_s").get<double>());
  EXPECT_TRUE(v.at("self_check").at("done").get<bool>());
  EXPECT_EQ(v.at("self_check").at("count"), 36);
  const double real = v.at("real_simulated_time_s");
  const bool inside =
      real >= v.at("interval_s")[0].get<double>() && real <= v.at("interval_s")[1].get<double>();
  EXPECT_EQ(v.at("in_interval").get<bool>(), inside);
}

}  // namespace
}  // namespace pas2p::testing
