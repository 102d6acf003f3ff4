// Dimemas .cfg import and export.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "pas2p/core/error.h"
#include "pas2p/simulator/dimemas_cfg.h"
#include "pas2p/simulator/machine_file.h"

namespace pas2p::sim {
namespace {

namespace fs = std::filesystem;

template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Written by hand in Dimemas syntax (the layout of Dimemas' own cfgs/ideal.cfg).
const char* kHandWritten = R"(#DIMEMAS_CONFIGURATION

/*******************************************************************************
 * "environment information" {
 *  1: char[] "machine name" ...
 * };;
 ******************************************************************************/

"wide area network information" {"", 1, 0, 4, 0.0, 0.0, 1};;

"environment information" {"marenostrum", 0, "", 16, 1024.0, 6, 1};;

"multi node information" {0, 16, "", 48, 2.0, 0.000001, 8192.0, 1, 1, 1, 0.0000025, 2, 3, 0.0};;

"predefined mapping information" {"4 TASKS_PER_NODE"};;

"configuration files" {"", "", "", ""};;

"file system parameters" {0.0, 0.0, 8.0, 0, 1.0};;
)";

TEST(DimemasCfg, ImportsAHandWrittenFile) {
  const Machine m = ParseDimemasCfg(kHandWritten, "hand.cfg");
  EXPECT_EQ(m.name, "marenostrum");
  EXPECT_EQ(m.nodes, 16);
  EXPECT_DOUBLE_EQ(m.inter_bandwidth_Bps, 1024.0 * 1048576.0);  // MB = 2^20 bytes
  EXPECT_EQ(m.buses, 6);
  EXPECT_EQ(m.cpus_per_node, 4);  // "4 TASKS_PER_NODE" wins over 48 processors
  EXPECT_EQ(m.mapping, Mapping::kFill);
  EXPECT_DOUBLE_EQ(m.cpu_ratio, 0.5);  // Dimemas ratio 2 = twice as fast
  EXPECT_DOUBLE_EQ(m.intra_latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(m.intra_bandwidth_Bps, 8192.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(m.inter_latency_s, 2.5e-6);
  EXPECT_EQ(m.input_links, 2);
  EXPECT_EQ(m.output_links, 3);
  EXPECT_EQ(m.collectives, DefaultCollectiveTable());
}

TEST(DimemasCfg, ZeroBandwidthIsInstantaneousAndMappingsImport) {
  std::string text = kHandWritten;
  text.replace(text.find("1024.0"), 6, "0.0");
  text.replace(text.find("\"4 TASKS_PER_NODE\""), 18, "\"INTERLEAVED\"");
  Machine m = ParseDimemasCfg(text, "x.cfg");
  EXPECT_TRUE(std::isinf(m.inter_bandwidth_Bps));
  EXPECT_EQ(m.mapping, Mapping::kRoundRobin);
  EXPECT_EQ(m.cpus_per_node, 48);
  text.replace(text.find("\"INTERLEAVED\""), 13, "\"trace.dim\", \"FILL_NODES\"");
  m = ParseDimemasCfg(text, "x.cfg");
  EXPECT_EQ(m.mapping, Mapping::kFill);
  EXPECT_EQ(m.cpus_per_node, 48);
  const auto pos = text.find("\"predefined mapping information\"");
  text.replace(pos, text.find(";;", pos) + 2 - pos,
               "\"mapping information\" {\"trace.dim\", 4, [4] {3, 2, 1, 0}};;");
  m = ParseDimemasCfg(text, "x.cfg");
  EXPECT_EQ(m.mapping, Mapping::kExplicit);
  EXPECT_EQ(m.rank_to_node, (std::vector<int>{3, 2, 1, 0}));
}

TEST(DimemasCfg, ExportThenImportIsIdentity) {
  Machine m;
  m.name = "cluster-a";
  m.nodes = 32;
  m.cpus_per_node = 24;
  m.intra_latency_s = 4.5e-7;
  m.intra_bandwidth_Bps = 9.5e9;
  m.inter_latency_s = 1.7e-6;
  m.inter_bandwidth_Bps = 1.1e10;
  m.buses = 19;
  m.input_links = 2;
  m.output_links = 1;
  m.cpu_ratio = 0.5;  // exact as 1 / (1 / 0.5)
  m.collectives[11] = {CollModel::kLinear, CollSize::kMin, CollModel::kConstant, CollSize::kMax};
  const fs::path dir = fs::temp_directory_path() / "pas2p_dimemas_test";
  fs::create_directories(dir);
  for (Mapping mapping : {Mapping::kFill, Mapping::kRoundRobin, Mapping::kExplicit}) {
    m.mapping = mapping;
    m.rank_to_node.clear();
    if (mapping == Mapping::kExplicit) m.rank_to_node = {0, 5, 31, 5};
    const std::string path = (dir / "m.cfg").string();
    SaveDimemasCfg(m, path);
    EXPECT_TRUE(fs::exists(dir / "m.collectives"));
    EXPECT_EQ(LoadDimemasCfg(path), m) << DimemasCfgToString(m, "m.collectives");
    EXPECT_EQ(LoadAnyMachine(path), m);
  }
  // Fields Dimemas cannot express come from `base`.
  Machine base;
  base.eager_threshold_bytes = 4096;
  base.half_duplex = true;
  SaveDimemasCfg(m, (dir / "m.cfg").string());
  const Machine back = LoadDimemasCfg((dir / "m.cfg").string(), base);
  EXPECT_EQ(back.eager_threshold_bytes, 4096u);
  EXPECT_TRUE(back.half_duplex);
  EXPECT_EQ(back.inter_latency_s, m.inter_latency_s);
  fs::remove_all(dir);
}

TEST(DimemasCfg, CpuRatioConvertsBetweenDivisiveAndMultiplicative) {
  Machine m;
  m.cpu_ratio = 0.3;
  const Machine back = ParseDimemasCfg(DimemasCfgToString(m), "r.cfg");
  EXPECT_NEAR(back.cpu_ratio, 0.3, 1e-15);
  m.cpu_ratio = 0.0;  // instantaneous compute: Dimemas ratio 0
  EXPECT_EQ(ParseDimemasCfg(DimemasCfgToString(m), "r.cfg").cpu_ratio, 0.0);
}

TEST(DimemasCfg, ErrorsNameLineRecordAndField) {
  struct Case {
    std::string text;
    const char* want[3];
  };
  std::string bad_number = kHandWritten;
  bad_number.replace(bad_number.find("0.0000025"), 9, "fast");
  std::string bad_count = kHandWritten;
  bad_count.replace(bad_count.find(", 6, 1};;"), 9, ", 6};;");
  std::string unknown = std::string(kHandWritten) + "\n\"quantum information\" {1};;\n";
  std::string garbage = std::string(kHandWritten) + "\nnot a record\n";
  std::string bad_map = kHandWritten;
  bad_map.replace(bad_map.find("4 TASKS_PER_NODE"), 16, "BLOCKED");
  std::string bad_array = kHandWritten;
  bad_array.replace(bad_array.find("\"predefined mapping information\" {\"4 TASKS_PER_NODE\"};;"),
                    56, "\"mapping information\" {\"t\", 3, [3] {0, 1}};;");
  std::string disagree = kHandWritten;
  disagree.replace(disagree.find("{0, 16,"), 7, "{0, 15,");
  std::string no_env = kHandWritten;
  no_env.replace(no_env.find("\n\"environment information\"") + 1, 25, "\"modules information\"");
  const Case cases[] = {
      {bad_number, {"x.cfg:13:", "field 11 (inter-node latency (s))", "got 'fast'"}},
      {bad_count, {"x.cfg:11:", "\"environment information\"", "expected 7 fields, got 6"}},
      {unknown, {"x.cfg:21:", "unknown record \"quantum information\"", "\"mapping information\""}},
      {garbage, {"x.cfg:21:", "expected a record", "not a record"}},
      {bad_map, {"x.cfg:15:", "FILL_NODES", "got \"BLOCKED\""}},
      {bad_array, {"x.cfg:15:", "array says [3] but lists 2", ""}},
      {disagree, {"x.cfg:13:", "describes 15 nodes", "says 16"}},
      {no_env, {"x.cfg:1:", "missing record \"environment information\"", ""}},
  };
  for (const Case& c : cases) {
    const std::string msg = ErrorOf([&] { ParseDimemasCfg(c.text, "x.cfg"); });
    ASSERT_FALSE(msg.empty()) << "no error for:\n" << c.text;
    for (const char* w : c.want)
      EXPECT_NE(msg.find(w), std::string::npos) << "want '" << w << "' in: " << msg;
  }
}

TEST(DimemasCfg, CollectivesFileInConfigurationFiles) {
  const fs::path dir = fs::temp_directory_path() / "pas2p_dimemas_coll_test";
  fs::create_directories(dir);
  std::ofstream(dir / "my.coll") << "11 LIN MAX LIN MAX\n";
  std::string text = kHandWritten;
  text.replace(text.find("{\"\", \"\", \"\", \"\"}"), 16, "{\"\", \"\", \"my.coll\", \"\"}");
  std::ofstream(dir / "c.cfg") << text;
  const Machine m = LoadDimemasCfg((dir / "c.cfg").string());
  EXPECT_EQ(m.collectives[11], (CollectiveCost{CollModel::kLinear, CollSize::kMax,
                                               CollModel::kLinear, CollSize::kMax}));
  std::ofstream(dir / "my.coll") << "11 LIN MAX LIN\n";
  const std::string msg = ErrorOf([&] { LoadDimemasCfg((dir / "c.cfg").string()); });
  EXPECT_NE(msg.find("c.cfg:17:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("my.coll:1:"), std::string::npos) << msg;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pas2p::sim
