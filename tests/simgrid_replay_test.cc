// Peer comparison: a bundled trace exported with ExportSimgridTi is accepted by SimGrid's
// own replayer (`smpirun -np N -platform P.xml -hostfile H -replay LIST`), which runs it to
// the end and reports a simulated time no shorter than the busiest rank's compute.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "pas2p/core/simgrid_ti.h"
#include "test_support.h"

namespace pas2p::testing {
namespace {

namespace fs = std::filesystem;

bool HaveSmpirun() { return RunCommand({"sh", "-c", "command -v smpirun"}, 30).exit_code == 0; }

// A flat cluster: `hosts` nodes at `flops` each, 10 us / 1 GBps links.
void WritePlatform(const fs::path& platform, const fs::path& hostfile, int hosts, double flops) {
  std::ofstream p(platform);
  p << "<?xml version='1.0'?>\n"
    << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    << "<platform version=\"4.1\">\n"
    << "  <cluster id=\"cluster\" prefix=\"node-\" suffix=\"\" radical=\"0-" << hosts - 1
    << "\" speed=\"" << flops << "f\" bw=\"1GBps\" lat=\"10us\"/>\n"
    << "</platform>\n";
  std::ofstream h(hostfile);
  for (int i = 0; i < hosts; ++i) h << "node-" << i << "\n";
}

struct ReplayCase {
  std::string trace;  // datasets/traces/<app>/<trace>
};

void PrintTo(const ReplayCase& c, std::ostream* os) { *os << c.trace; }

class SimgridReplay : public ::testing::TestWithParam<ReplayCase> {};

TEST_P(SimgridReplay, ExportedBundledTraceReplaysInSmpirun) {
  if (!HaveSmpirun()) {
    GTEST_SKIP() << "smpirun not found (Debian package libsimgrid-dev, installed by "
                    "scripts/install-deps.sh): SimGrid replay not checked";
  }
  const std::string name = GetParam().trace;
  const std::string app = name.substr(0, name.rfind('.'));
  const fs::path dir = SourceDir() / "datasets" / "traces" / app / name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir << " missing (run datasets/make_traces.sh)";
  TraceDirectory trace(dir);
  const int nprocs = trace.nprocs();

  TempDir tmp;
  TiOptions options;
  options.flops_per_second = 1e9;
  const fs::path list = ExportSimgridTi(trace, tmp.path() / "ti", options);
  ASSERT_TRUE(fs::exists(list));
  const fs::path platform = tmp.path() / "platform.xml", hostfile = tmp.path() / "hosts";
  WritePlatform(platform, hostfile, nprocs, options.flops_per_second);

  const RunResult run =
      RunCommand({"smpirun", "-np", std::to_string(nprocs), "-platform", platform.string(),
                  "-hostfile", hostfile.string(), "-replay", list.string()},
                 600);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // SimGrid's replayer ends with "[...] Simulation time <seconds>".
  const std::string log = run.out + run.err;
  const std::string marker = "Simulation time ";
  const auto at = log.rfind(marker);
  ASSERT_NE(at, std::string::npos) << "no simulated time reported:\n" << log;
  char* end = nullptr;
  const double simulated_s = std::strtod(log.c_str() + at + marker.size(), &end);
  ASSERT_NE(end, log.c_str() + at + marker.size()) << "unreadable simulated time:\n" << log;

  // The replay cannot finish before the busiest rank's computation: CPU seconds exported
  // as flops at the host speed take the same seconds in simulation.
  double busiest_s = 0;
  for (int r = 0; r < nprocs; ++r) {
    auto reader = trace.OpenRank(r);
    Event e;
    double cpu_s = 0;
    while (reader->Next(&e)) {
      if (e.kind == EventKind::kCompute) cpu_s += static_cast<double>(e.cpu_ns) * 1e-9;
    }
    busiest_s = std::max(busiest_s, cpu_s);
  }
  EXPECT_GT(simulated_s, 0.0);
  EXPECT_GE(simulated_s, busiest_s * 0.999) << "SimGrid's time is shorter than the compute";
}

INSTANTIATE_TEST_SUITE_P(BundledTraces, SimgridReplay,
                         ::testing::Values(ReplayCase{"stencil2d.4"}, ReplayCase{"cg.9"},
                                           ReplayCase{"masterworker.4"}, ReplayCase{"butterfly.8"},
                                           ReplayCase{"transpose.4"}),
                         [](const ::testing::TestParamInfo<ReplayCase>& param_info) {
                           std::string n = param_info.param.trace;
                           for (auto& ch : n) {
                             if (ch == '.') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pas2p::testing
