// Machine files (TOML) and Dimemas collective tables: round trips, every field, errors.
#include "pas2p/simulator/machine_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>

#include "pas2p/core/error.h"

namespace pas2p::sim {
namespace {

namespace fs = std::filesystem;

// The message of the UserError `f` throws ("" when it does not throw).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

fs::path TempDir() {
  fs::path dir = fs::temp_directory_path() /
                 ("pas2p_machine_file_test_" +
                  std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  return dir;
}

void WriteFile(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// A machine with every field away from its default.
Machine EveryFieldSet() {
  Machine m;
  m.name = "every \"field\" set";
  m.nodes = 8;
  m.cpus_per_node = 3;
  m.mapping = Mapping::kExplicit;
  m.rank_to_node = {7, 6, 5, 0};
  m.intra_latency_s = 3.3e-7;
  m.intra_bandwidth_Bps = 1.0 / 3.0 * 1e10;  // not short in decimal: tests exact round trip
  m.inter_latency_s = 0.1 + 0.2;
  m.inter_bandwidth_Bps = std::numeric_limits<double>::infinity();
  m.buses = 5;
  m.input_links = 2;
  m.output_links = 0;
  m.half_duplex = true;
  m.eager_threshold_bytes = 12345;
  m.instructions_per_second = 2.5e9;
  m.cpu_ratio = 0.75;
  m.flops_per_second = 1e10;
  m.collectives[11] = {CollModel::kLinear, CollSize::kSendPlusRecv, CollModel::kConstant,
                       CollSize::kMin};
  m.collectives[0] = {CollModel::kZero, CollSize::kMean, CollModel::kLog, CollSize::k2Max};
  m.topology.kind = TopologyKind::kLinks;
  m.topology.links = {{0, 1}, {1, 2}, {2, 7}};
  m.topology.hop_latency_s = 2e-7;
  return m;
}

TEST(MachineToml, RoundTripsExactly) {
  for (const Machine& m : {Machine{}, EveryFieldSet()}) {
    const std::string text = MachineToToml(m, "a comment\n\nover three lines");
    const Machine back = ParseMachineToml(text, "mem.toml");
    EXPECT_EQ(back, m) << text;
    EXPECT_EQ(MachineToToml(back, "a comment\n\nover three lines"), text);  // stable text
  }
}

TEST(MachineToml, TopologiesRoundTrip) {
  Machine m;
  m.nodes = 12;
  m.topology.kind = TopologyKind::kTorus3D;
  m.topology.dims = {2, 3, 2};
  EXPECT_EQ(ParseMachineToml(MachineToToml(m), "t.toml"), m);
  m.topology = {};
  m.topology.kind = TopologyKind::kFatTree;
  m.topology.fat_tree_arity = 4;
  EXPECT_EQ(ParseMachineToml(MachineToToml(m), "t.toml"), m);
}

TEST(MachineToml, SaveAndLoadFile) {
  const fs::path dir = TempDir();
  const Machine m = EveryFieldSet();
  SaveMachineFile(m, (dir / "m.toml").string(), "saved");
  EXPECT_EQ(LoadMachineFile((dir / "m.toml").string()), m);
  EXPECT_EQ(LoadAnyMachine((dir / "m.toml").string()), m);
  fs::remove_all(dir);
}

TEST(MachineToml, ParsesEveryDocumentedField) {
  const std::string text = R"(
name = "hand"
[nodes]
count = 6
cpus_per_node = 16
mapping = "round_robin"
[intra_node]
latency_s = 4e-7
bandwidth_Bps = 8_000_000_000
[inter_node]
latency_s = 2e-6
bandwidth_Bps = 1.2e10
buses = 3
input_links = 2
output_links = 4
half_duplex = true
[protocol]
eager_threshold_bytes = 8192
[cpu]
instructions_per_second = 3e9
cpu_ratio = 2
flops_per_second = 4e9
[collectives]
table = ["MPI_Allreduce LOG S+R CTE MIN", "bcast lin mean 0 2*max"]
[topology]
kind = "torus2d"
dims = [3, 2]
hop_latency_s = 1e-7
)";
  const Machine m = ParseMachineToml(text, "hand.toml");
  EXPECT_EQ(m.name, "hand");
  EXPECT_EQ(m.nodes, 6);
  EXPECT_EQ(m.cpus_per_node, 16);
  EXPECT_EQ(m.mapping, Mapping::kRoundRobin);
  EXPECT_DOUBLE_EQ(m.intra_latency_s, 4e-7);
  EXPECT_DOUBLE_EQ(m.intra_bandwidth_Bps, 8e9);
  EXPECT_DOUBLE_EQ(m.inter_latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(m.inter_bandwidth_Bps, 1.2e10);
  EXPECT_EQ(m.buses, 3);
  EXPECT_EQ(m.input_links, 2);
  EXPECT_EQ(m.output_links, 4);
  EXPECT_TRUE(m.half_duplex);
  EXPECT_EQ(m.eager_threshold_bytes, 8192u);
  EXPECT_DOUBLE_EQ(m.instructions_per_second, 3e9);
  EXPECT_DOUBLE_EQ(m.cpu_ratio, 2.0);
  EXPECT_DOUBLE_EQ(m.flops_per_second, 4e9);
  CollectiveTable want = DefaultCollectiveTable();
  want[11] = {CollModel::kLog, CollSize::kSendPlusRecv, CollModel::kConstant, CollSize::kMin};
  want[1] = {CollModel::kLinear, CollSize::kMean, CollModel::kZero, CollSize::k2Max};
  EXPECT_EQ(m.collectives, want);
  EXPECT_EQ(m.topology.kind, TopologyKind::kTorus2D);
  EXPECT_EQ(m.topology.dims, (std::vector<int>{3, 2}));
  EXPECT_DOUBLE_EQ(m.topology.hop_latency_s, 1e-7);
}

TEST(MachineToml, EmptyFileIsTheDefaultMachine) {
  EXPECT_EQ(ParseMachineToml("", "empty.toml"), Machine{});
}

// The shipped default machine loads, and documents every field the reader knows.
TEST(MachineToml, ShippedDefaultDocumentsEveryField) {
  const std::string path = std::string(PAS2P_SOURCE_DIR) + "/datasets/machines/default.toml";
  const Machine m = LoadMachineFile(path);
  std::string error;
  EXPECT_TRUE(m.IsValidFor(1024, &error)) << error;
  EXPECT_EQ(m.cpus_per_node, 48);
  EXPECT_DOUBLE_EQ(m.intra_latency_s, 5e-7);
  EXPECT_DOUBLE_EQ(m.inter_latency_s, 1.5e-6);
  EXPECT_DOUBLE_EQ(m.inter_bandwidth_Bps, 1e10);
  EXPECT_EQ(m.eager_threshold_bytes, 65536u);
  // Table 3 of paper 000, but for a logarithmic barrier (as today's MPI libraries have).
  auto table = DefaultCollectiveTable();
  table[0] = CollectiveCost{CollModel::kLog, CollSize::kMax, CollModel::kLog, CollSize::kMax};
  EXPECT_EQ(m.collectives, table);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Every key MachineToToml writes must appear, documented, in the shipped file.
  const std::string written = MachineToToml(Machine{});
  const std::regex key_re(R"(^([a-z_A-Z]+) = )", std::regex::multiline);
  int keys = 0;
  for (std::sregex_iterator it(written.begin(), written.end(), key_re), end; it != end; ++it) {
    ++keys;
    const std::regex in_default("(^|\\n)" + (*it)[1].str() + " = ");
    EXPECT_TRUE(std::regex_search(text, in_default)) << (*it)[1] << " is not in default.toml";
  }
  EXPECT_EQ(keys, 23);
}

TEST(MachineToml, CollectivesFileIsResolvedNextToTheMachineFile) {
  const fs::path dir = TempDir();
  WriteFile(dir / "t.collectives", "# mine\n11 CTE MAX CTE MAX\n0 0 MAX 0 MAX\n");
  WriteFile(dir / "m.toml",
            "[collectives]\nfile = \"t.collectives\"\ntable = [\"0 LOG MIN LOG MIN\"]\n");
  const Machine m = LoadMachineFile((dir / "m.toml").string());
  EXPECT_EQ(m.collectives[11], (CollectiveCost{CollModel::kConstant, CollSize::kMax,
                                               CollModel::kConstant, CollSize::kMax}));
  // `table` overrides the file's row.
  EXPECT_EQ(m.collectives[0],
            (CollectiveCost{CollModel::kLog, CollSize::kMin, CollModel::kLog, CollSize::kMin}));
  EXPECT_EQ(m.collectives[1], DefaultCollectiveTable()[1]);
  fs::remove_all(dir);
}

struct BadToml {
  const char* text;
  const char* want[3];  // substrings the message must contain
};

TEST(MachineToml, ErrorsNameFileLineFieldAndExpectation) {
  const BadToml cases[] = {
      {"[nodes]\ncount = 2\ncpus = 4\n",
       {"bad.toml:3:", "unknown field 'nodes.cpus'", "cpus_per_node"}},
      {"name = \"x\"\n[inter_nodes]\n", {"bad.toml:2:", "'inter_nodes'", "inter_node"}},
      {"[inter_node]\n\nlatency_s = \"fast\"\n",
       {"bad.toml:3:", "inter_node.latency_s", "expected a latency in seconds >= 0, got \"fast\""}},
      {"[intra_node]\nbandwidth_Bps = 0\n", {"bad.toml:2:", "intra_node.bandwidth_Bps", "> 0"}},
      {"[nodes]\nmapping = \"block\"\n",
       {"bad.toml:2:", "nodes.mapping", "\"fill\", \"round_robin\" or \"explicit\""}},
      {"[nodes]\nrank_to_node = [0, -1]\nmapping = \"explicit\"\n",
       {"bad.toml:2:", "nodes.rank_to_node[1]", ">= 0"}},
      {"[inter_node]\nbuses = 1.5\n", {"bad.toml:2:", "inter_node.buses", "integer"}},
      {"[inter_node]\nhalf_duplex = 1\n", {"bad.toml:2:", "half_duplex", "true or false"}},
      {"[protocol]\neager_threshold_bytes = -4\n",
       {"bad.toml:2:", "protocol.eager_threshold_bytes", "bytes >= 0"}},
      {"[collectives]\ntable = [\n  \"0 LIN MAX LIN MAX\",\n  \"11 LOGG 2MAX LOG MAX\",\n]\n",
       {"bad.toml:4:", "collectives.table: field MODEL_IN", "0, CT, CTE, LIN, LOG"}},
      {"[collectives]\ntable = [\"11 LOG 2MAX LOG\"]\n",
       {"bad.toml:2:", "expected 5 fields", "'11 LOG 2MAX LOG'"}},
      {"[collectives]\nfile = \"/nonexistent/x.coll\"\n",
       {"bad.toml:2:", "collectives.file", "cannot open"}},
      {"[topology]\nkind = \"mesh\"\n", {"bad.toml:2:", "topology.kind", "\"torus2d\""}},
      {"[topology]\nkind = \"links\"\nlinks = [[0, 1], [2]]\n",
       {"bad.toml:3:", "topology.links[1]", "[node, node] pair"}},
      {"[nodes]\ncount = 3\n[topology]\nkind = \"hypercube\"\n",
       {"bad.toml", "hypercube", "power-of-two"}},
      {"[nodes\ncount = 3\n", {"bad.toml:1:", "not valid TOML", ""}},
      {"nodes = 4\n", {"bad.toml:1:", "nodes", "expected a section [nodes]"}},
  };
  for (const BadToml& c : cases) {
    const std::string msg = ErrorOf([&] { ParseMachineToml(c.text, "bad.toml"); });
    ASSERT_FALSE(msg.empty()) << "no error for:\n" << c.text;
    for (const char* w : c.want)
      EXPECT_NE(msg.find(w), std::string::npos) << "want '" << w << "' in: " << msg;
  }
}

TEST(CollectiveTable, ParsesDimemasSyntaxWithComments) {
  const std::string text =
      "/* Table 3 of the Dimemas collectives paper,\n"
      "   two operations changed */\n"
      "\n"
      "0\tLIN MAX  LIN MAX   /* MPI_Barrier */\n"
      "# a comment line\n"
      "11 LOG 2MAX LOG MAX  // MPI_Allreduce\n"
      "MPI_Alltoall LOG S+R LOG 2*MAX\n"
      "scan ct min cte mean\n";
  const CollectiveTable t = ParseCollectiveTable(text, "t.coll");
  CollectiveTable want = DefaultCollectiveTable();
  want[8] = {CollModel::kLog, CollSize::kSendPlusRecv, CollModel::kLog, CollSize::k2Max};
  want[14] = {CollModel::kConstant, CollSize::kMin, CollModel::kConstant, CollSize::kMean};
  EXPECT_EQ(t, want);
}

TEST(CollectiveTable, TextRoundTrips) {
  CollectiveTable t = DefaultCollectiveTable();
  t[3] = {CollModel::kConstant, CollSize::kSendPlusRecv, CollModel::kLinear, CollSize::kMin};
  EXPECT_EQ(ParseCollectiveTable(CollectiveTableToText(t), "x"), t);
  EXPECT_EQ(CollectiveLine(11, t[11]), "11 LOG 2MAX LOG MAX");
  EXPECT_EQ(DimemasCollectiveName(11), "MPI_Allreduce");
  EXPECT_EQ(DimemasCollectiveName(16), "");
}

TEST(CollectiveTable, BadLinesNameLineAndField) {
  const BadToml cases[] = {
      {"0 LIN MAX LIN MAX\n\n16 LOG MAX LOG MAX\n", {"t.coll:3:", "field ID", "0..15"}},
      {"MPI_Frobnicate LOG MAX LOG MAX\n", {"t.coll:1:", "field ID", "MPI_Frobnicate"}},
      {"1 LOG MAXX 0 MAX\n", {"t.coll:1:", "field SIZE_IN", "MIN, MAX, MEAN, 2MAX"}},
      {"1 LOG MAX SQRT MAX\n", {"t.coll:1:", "field MODEL_OUT", "got 'SQRT'"}},
      {"1 LOG MAX 0 3MAX\n", {"t.coll:1:", "field SIZE_OUT", "got '3MAX'"}},
      {"1 LOG MAX 0 MAX 7\n", {"t.coll:1:", "expected 5 fields", "got 6"}},
      {"1 LOG MAX 0 MAX\n# again\nMPI_Bcast LOG MIN 0 MAX\n",
       {"t.coll:3:", "already defined on line 1", "MPI_Bcast"}},
      {"1 LOG MAX 0 MAX\n/* open\n", {"t.coll:2:", "never closed", ""}},
  };
  for (const BadToml& c : cases) {
    const std::string msg = ErrorOf([&] { ParseCollectiveTable(c.text, "t.coll"); });
    ASSERT_FALSE(msg.empty()) << "no error for:\n" << c.text;
    for (const char* w : c.want)
      EXPECT_NE(msg.find(w), std::string::npos) << "want '" << w << "' in: " << msg;
  }
}

}  // namespace
}  // namespace pas2p::sim
