// Every bundled trace in datasets/traces/<app>/<app>.<count> reads back completely: its
// metadata says complete, names the app and the count, there is one stream per rank, and
// every stream reads to its footer, from MPI_Init to MPI_Finalize, with consistent
// point-to-point traffic.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.h"

namespace pas2p::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> BundledTraces() {
  std::vector<fs::path> found;
  const fs::path root = SourceDir() / "datasets" / "traces";
  if (!fs::is_directory(root)) return found;
  for (const auto& app : fs::directory_iterator(root)) {
    if (!app.is_directory()) continue;
    for (const auto& run : fs::directory_iterator(app.path())) {
      if (run.is_directory()) found.push_back(run.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

TEST(BundledTraces, TheBundleHasEveryAppAtTheAdvertisedCounts) {
  const auto traces = BundledTraces();
  ASSERT_FALSE(traces.empty()) << "no traces under datasets/traces (run datasets/make_traces.sh)";
  std::set<std::string> names;
  for (const auto& t : traces) names.insert(t.filename().string());
  for (const std::string app :
       {"stencil2d", "halo3d", "transpose", "wavefront", "masterworker", "cg"}) {
    for (int n : {4, 9, 16, 25, 36}) {
      EXPECT_TRUE(names.count(app + "." + std::to_string(n))) << app << " at " << n;
    }
  }
  for (int n : {4, 8, 16, 32, 64}) {
    EXPECT_TRUE(names.count("butterfly." + std::to_string(n))) << "butterfly at " << n;
  }
  for (int n : {4, 9, 16}) {
    EXPECT_TRUE(names.count("stencil2d_f." + std::to_string(n))) << "stencil2d_f at " << n;
  }
}

TEST(BundledTraces, EveryBundledTraceReadsBackCompletely) {
  for (const auto& dir : BundledTraces()) {
    SCOPED_TRACE(dir.string());
    // <app>.<count>
    const std::string base = dir.filename().string();
    const auto dot = base.rfind('.');
    ASSERT_TRUE(dot != std::string::npos && dot > 0 && dot + 1 < base.size() &&
                base.find_first_not_of("0123456789", dot + 1) == std::string::npos)
        << "expected <app>.<count>";
    const std::string app = base.substr(0, dot);
    const int count = std::stoi(base.substr(dot + 1));
    EXPECT_EQ(dir.parent_path().filename().string(), app);

    TraceDirectory trace(dir);
    const TraceMetadata& meta = trace.metadata();
    EXPECT_EQ(meta.nprocs, count);
    EXPECT_TRUE(meta.IsComplete()) << meta.status << ": " << meta.status_reason;
    EXPECT_EQ(meta.application, app);
    int streams = 0;
    for (const auto& f : fs::directory_iterator(dir)) {
      if (f.path().extension() == ".p2t") ++streams;
    }
    EXPECT_EQ(streams, count) << "one stream per rank";

    // Stream by stream, to the footer.
    for (int r = 0; r < count; ++r) {
      auto reader = trace.OpenRank(r);
      Event e;
      std::uint64_t n = 0;
      EventKind first = EventKind::kCompute, last = EventKind::kCompute;
      while (reader->Next(&e)) {
        if (n++ == 0) first = e.kind;
        last = e.kind;
      }
      EXPECT_EQ(reader->status(), StreamStatus::kComplete)
          << "rank " << r << ": " << reader->message();
      EXPECT_GT(n, 2u) << "rank " << r;
      EXPECT_EQ(first, EventKind::kInit) << "rank " << r;
      EXPECT_EQ(last, EventKind::kFinalize) << "rank " << r;
    }
    EXPECT_EQ(CheckPointToPointMatching(ReadTrace(trace)), "");
  }
}

}  // namespace
}  // namespace pas2p::testing
