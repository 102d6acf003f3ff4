// `pas2p characterize` end to end on 2 ranks (label mpi): the machine file it writes loads,
// has positive latencies and bandwidths, and its comments list the measured points.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "pas2p/simulator/machine_file.h"

namespace pas2p::sim {
namespace {

namespace fs = std::filesystem;

TEST(Characterize, TwoRanksWriteALoadableMachineFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("pas2p_characterize_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "measured.toml";
  const std::string cmd = std::string(PAS2P_BINARY_DIR) +
                          "/bin/pas2p characterize --np 2 --sizes 1:256K --batches 3 "
                          "--reps 4 --retries 0 --out " +
                          out.string() + " > " + (dir / "log").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir / "log");
  const std::string log_text((std::istreambuf_iterator<char>(log)),
                             std::istreambuf_iterator<char>());
  ASSERT_EQ(rc, 0) << cmd << "\n" << log_text;
  const Machine m = LoadMachineFile(out.string());
  EXPECT_GT(m.intra_latency_s, 0.0);
  EXPECT_GT(m.intra_bandwidth_Bps, 0.0);
  EXPECT_GT(m.inter_latency_s, 0.0);
  EXPECT_GT(m.inter_bandwidth_Bps, 0.0);
  EXPECT_GT(m.flops_per_second, 0.0);
  EXPECT_EQ(m.cpu_ratio, 1.0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("# Intra-node (rank 0 <-> rank 1) ping-pong"), std::string::npos) << text;
  EXPECT_NE(text.find("#      262144 "), std::string::npos) << text;  // the largest size
  EXPECT_NE(text.find("Inter-node: not measured"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(Characterize, BadArgumentsFailWithAMessage) {
  const std::string cmd = std::string(PAS2P_BINARY_DIR) +
                          "/bin/pas2p characterize --np 2 --sizes 1:banana --out /dev/null "
                          "> /dev/null 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  const std::string hosts = std::string(PAS2P_BINARY_DIR) +
                            "/bin/pas2p characterize --hosts a,b,c --dry-run > /dev/null 2>&1";
  EXPECT_NE(std::system(hosts.c_str()), 0);
}

}  // namespace
}  // namespace pas2p::sim
