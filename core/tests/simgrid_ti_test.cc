#include "pas2p/core/simgrid_ti.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace pas2p {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("pas2p_ti_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TraceData Ring(int n) {
  TraceData data;
  data.metadata.application = "ring";
  for (int r = 0; r < n; ++r) {
    std::vector<Event> ev;
    Event init;
    init.kind = EventKind::kInit;
    ev.push_back(init);
    ev.push_back(MakeCompute(2'000'000));
    ev.push_back(MakeIsend((r + 1) % n, 0, 1000000, 1));
    ev.push_back(MakeIrecv((r + n - 1) % n, 0, 1000000, 2));
    ev.push_back(MakeWaitall({1, 2}));
    ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
    Event fin;
    fin.kind = EventKind::kFinalize;
    ev.push_back(fin);
    data.ranks.push_back(ev);
  }
  return data;
}

TEST(SimgridTi, ExportWritesSimgridActions) {
  fs::path dir = TempDir("export");
  WriteTrace(dir / "trace", Ring(4));
  TraceDirectory trace(dir / "trace");
  fs::path list = ExportSimgridTi(trace, dir / "ti");
  EXPECT_EQ(Slurp(dir / "ti" / "rank-1.txt"),
            "1 init\n1 compute 2000000\n1 isend 2 0 1000000\n1 irecv 0 0 1000000\n1 waitall\n"
            "1 allreduce 8 0\n1 finalize\n");
  EXPECT_TRUE(IsSimgridTi(list));
  EXPECT_TRUE(IsSimgridTi(dir / "ti"));
  EXPECT_FALSE(IsSimgridTi(dir / "trace"));
  fs::remove_all(dir);
}

// Any file given where a trace may be is probed; a line longer than a file name may be (a
// saved signature's warning) is not a TI trace, and probing it must not throw.
TEST(SimgridTi, AFileWhoseLineCannotBeAPathIsNotATiTrace) {
  fs::path dir = TempDir("notti");
  {
    std::ofstream out(dir / "sig.json");
    out << "{\n \"warnings\": [\n  \"" << std::string(5000, 'w') << "\"\n ]\n}\n";
  }
  EXPECT_FALSE(IsSimgridTi(dir / "sig.json"));
  {
    std::ofstream out(dir / "notes.txt");
    out << std::string(5000, 'w') << "\n";
  }
  EXPECT_FALSE(IsSimgridTi(dir / "notes.txt"));
  fs::remove_all(dir);
}

TEST(SimgridTi, ImportReadsBackTheSameCommunication) {
  fs::path dir = TempDir("import");
  TraceData original = Ring(4);
  WriteTrace(dir / "trace", original);
  fs::path list = ExportSimgridTi(TraceDirectory(dir / "trace"), dir / "ti");
  auto source = OpenTrace(list);
  EXPECT_EQ(source->nprocs(), 4);
  EXPECT_EQ(source->metadata().source, "simgrid-ti");
  TraceData back = ReadTrace(*source);
  for (int r = 0; r < 4; ++r) {
    const auto& a = original.ranks[r];
    const auto& b = back.ranks[r];
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].kind, b[i].kind) << i;
      EXPECT_EQ(a[i].peer, b[i].peer) << i;
      EXPECT_EQ(a[i].bytes, b[i].bytes) << i;
      EXPECT_EQ(a[i].cpu_ns, b[i].cpu_ns) << i;
      EXPECT_EQ(a[i].send_bytes, b[i].send_bytes) << i;
      EXPECT_EQ(a[i].requests, b[i].requests) << i;
    }
  }
  fs::remove_all(dir);
}

TEST(SimgridTi, ImportsSimgridsOwnSharedFileFormat) {
  // SimGrid's documented example: all ranks in one file, one line in the list.
  fs::path dir = TempDir("shared");
  {
    std::ofstream f(dir / "actions.txt");
    f << "0 init\n1 init\n0 compute 1e9\n0 send 1 0 1e6\n1 recv 0 0 1e6\n"
         "1 bcast 5e5 1\n0 bcast 5e5 1\n0 finalize\n1 finalize\n";
    std::ofstream l(dir / "trace.list");
    l << "actions.txt\n";
  }
  auto source = OpenTrace(dir / "trace.list");
  ASSERT_EQ(source->nprocs(), 2);
  TraceData t = ReadTrace(*source);
  ASSERT_EQ(t.ranks[0].size(), 5u);
  EXPECT_EQ(t.ranks[0][1].kind, EventKind::kCompute);
  EXPECT_EQ(t.ranks[0][1].cpu_ns, 1'000'000'000);
  EXPECT_EQ(t.ranks[0][2].kind, EventKind::kSend);
  EXPECT_EQ(t.ranks[0][2].bytes, 1000000u);
  EXPECT_EQ(t.ranks[1][2].kind, EventKind::kBcast);
  EXPECT_EQ(t.ranks[1][2].peer, 1);
  EXPECT_EQ(t.ranks[1][2].send_bytes, 500000u);
  EXPECT_EQ(t.ranks[0][3].recv_bytes, 500000u);
  fs::remove_all(dir);
}

TEST(SimgridTi, MalformedLinesNameFileLineAndExpectation) {
  fs::path dir = TempDir("bad");
  {
    std::ofstream f(dir / "r0.txt");
    f << "0 init\n0 send 9 0 100\n";
    std::ofstream g(dir / "r1.txt");
    g << "1 init\n1 frobnicate 3\n";
    std::ofstream l(dir / "t.list");
    l << "r0.txt\nr1.txt\n";
  }
  auto source = OpenTrace(dir / "t.list");
  try {
    ReadTrace(*source);
    FAIL();
  } catch (const TraceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("r0.txt:2"), std::string::npos) << m;
    EXPECT_NE(m.find("0 send 9 0 100"), std::string::npos) << m;
    EXPECT_NE(m.find("not a rank"), std::string::npos) << m;
  }
  auto r1 = source->OpenRank(1);
  Event e;
  EXPECT_TRUE(r1->Next(&e));
  try {
    r1->Next(&e);
    FAIL();
  } catch (const TraceError& err) {
    EXPECT_NE(std::string(err.what()).find("unknown TI action \"frobnicate\""), std::string::npos);
  }
  fs::remove_all(dir);
}

TEST(SimgridTi, SubCommunicatorCollectivesBecomePointToPoint) {
  fs::path dir = TempDir("subcomm");
  TraceData data;
  for (int r = 0; r < 4; ++r) {
    std::vector<Event> ev;
    Event split;
    split.kind = EventKind::kCommCreate;
    split.new_comm = 1000 + static_cast<CommId>(r % 2);
    split.members = r % 2 ? std::vector<std::int32_t>{1, 3} : std::vector<std::int32_t>{0, 2};
    ev.push_back(split);
    ev.push_back(
        MakeCollective(EventKind::kBcast, r < 2 ? 64 : 0, r < 2 ? 0 : 64, r % 2, split.new_comm));
    data.ranks.push_back(ev);
  }
  WriteTrace(dir / "trace", data);
  ExportSimgridTi(TraceDirectory(dir / "trace"), dir / "ti");
  std::string r3 = Slurp(dir / "ti" / "rank-3.txt");
  EXPECT_NE(r3.find("3 irecv 1 "), std::string::npos) << r3;
  std::string r1 = Slurp(dir / "ti" / "rank-1.txt");
  EXPECT_NE(r1.find("1 isend 3 "), std::string::npos) << r1;
  EXPECT_EQ(r1.find("bcast"), std::string::npos) << r1;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pas2p
