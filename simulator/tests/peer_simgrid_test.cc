// Peer test (label `peer`): the same point-to-point trace replayed by pas2p and by SimGrid's
// `smpirun -replay` on matching machines must agree within 1%.
//
// SimGrid side: a crossbar <cluster> of N hosts (1 Gflop/s, bandwidth B, latency l per
// private link, split-duplex), with the calibration factors off (bw-factor and lat-factor
// 1, no cross-traffic, TCP-gamma 0). A route crosses two private links, so the end-to-end
// latency is 2l and the bandwidth B. pas2p side: one rank per node, L = 2l, B, no link or
// bus limits. Traces: a ring exchange and a 2-D halo exchange (four directions, one after
// the other so that no link carries two messages at once), 1 MB messages, 16 and 64 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "memory_trace.h"
#include "pas2p/core/simgrid_ti.h"
#include "pas2p/simulator/engine.h"

namespace pas2p::sim {
namespace {

namespace fs = std::filesystem;
using testing::Compute;
using testing::MemoryTrace;
using testing::Waitall;

constexpr double kLinkLatency = 5e-6;  // per SimGrid private link
constexpr double kBandwidth = 1e9;     // bytes/s
constexpr std::uint64_t kBytes = 1000000;

bool HaveSmpirun() { return std::system("command -v smpirun > /dev/null 2>&1") == 0; }

MemoryTrace Ring(int p, int iterations) {
  MemoryTrace t(p);
  for (int r = 0; r < p; ++r) {
    RequestId id = 1;
    for (int i = 0; i < iterations; ++i) {
      t.rank(r).push_back(Compute(1e-3 * (1 + (r + i) % 3)));  // some imbalance
      t.rank(r).push_back(MakeIsend((r + 1) % p, 0, kBytes, id));
      t.rank(r).push_back(MakeIrecv((r + p - 1) % p, 0, kBytes, id + 1));
      t.rank(r).push_back(Waitall({id, id + 1}));
      id += 2;
    }
  }
  return t;
}

MemoryTrace Halo(int side, int iterations) {
  const int p = side * side;
  MemoryTrace t(p);
  for (int r = 0; r < p; ++r) {
    const int x = r % side, y = r / side;
    auto at = [&](int dx, int dy) {
      return (x + dx + side) % side + side * ((y + dy + side) % side);
    };
    const int to[4] = {at(1, 0), at(-1, 0), at(0, 1), at(0, -1)};
    const int from[4] = {at(-1, 0), at(1, 0), at(0, -1), at(0, 1)};
    RequestId id = 1;
    for (int i = 0; i < iterations; ++i) {
      t.rank(r).push_back(Compute(2e-3 + 0.5e-3 * ((x + 2 * y + i) % 4)));
      for (int d = 0; d < 4; ++d) {
        t.rank(r).push_back(MakeIsend(to[d], d, kBytes, id));
        t.rank(r).push_back(MakeIrecv(from[d], d, kBytes, id + 1));
        t.rank(r).push_back(Waitall({id, id + 1}));
        id += 2;
      }
    }
  }
  return t;
}

double RunSimgrid(const MemoryTrace& trace, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  TiOptions ti;
  ti.flops_per_second = 1e9;
  const fs::path list = ExportSimgridTi(trace, dir / "ti", ti);
  const int p = trace.nprocs();
  {
    std::ofstream xml(dir / "platform.xml");
    xml << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM "
           "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n"
           "  <cluster id=\"peer\" prefix=\"node-\" suffix=\"\" radical=\"0-"
        << (p - 1) << "\" speed=\"1Gf\" bw=\"" << kBandwidth << "Bps\" lat=\"" << kLinkLatency
        << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n</platform>\n";
    std::ofstream hosts(dir / "hostfile");
    for (int r = 0; r < p; ++r) hosts << "node-" << r << "\n";
  }
  const fs::path log = dir / "smpirun.log";
  const std::string cmd = "smpirun -np " + std::to_string(p) + " -platform " +
                          (dir / "platform.xml").string() + " -hostfile " +
                          (dir / "hostfile").string() + " -replay " + list.string() +
                          " --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1"
                          " --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:0"
                          " --cfg=smpi/host-speed:1Gf > " +
                          log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << cmd << "\n" << text;
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("Simulation time ([0-9.eE+-]+)"))) {
    ADD_FAILURE() << "no 'Simulation time' in smpirun output:\n" << text;
    return -1;
  }
  return std::stod(m[1]);
}

Machine Matching() {
  Machine m;
  m.name = "simgrid-cluster";
  m.nodes = 0;
  m.cpus_per_node = 1;
  m.inter_latency_s = 2 * kLinkLatency;
  m.inter_bandwidth_Bps = kBandwidth;
  m.buses = 0;
  m.input_links = m.output_links = 0;
  return m;
}

void Compare(const std::string& name, const MemoryTrace& trace) {
  const double ours = Simulate(trace, Matching()).predicted_time_s;
  const double theirs = RunSimgrid(trace, fs::temp_directory_path() / ("pas2p_peer_" + name));
  ASSERT_GT(theirs, 0.0);
  const double rel = std::abs(ours - theirs) / theirs;
  std::printf("%s: pas2p %.6f s, SimGrid %.6f s, difference %.3f%%\n", name.c_str(), ours, theirs,
              rel * 100);
  EXPECT_LT(rel, 0.01) << name << ": pas2p " << ours << " s vs SimGrid " << theirs << " s";
}

class SimgridPeer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveSmpirun()) GTEST_SKIP() << "smpirun (SimGrid) is not installed; peer test skipped";
  }
};

TEST_F(SimgridPeer, Ring16) { Compare("ring16", Ring(16, 10)); }
TEST_F(SimgridPeer, Ring64) { Compare("ring64", Ring(64, 10)); }
TEST_F(SimgridPeer, Halo16) { Compare("halo16", Halo(4, 5)); }
TEST_F(SimgridPeer, Halo64) { Compare("halo64", Halo(8, 5)); }

}  // namespace
}  // namespace pas2p::sim
