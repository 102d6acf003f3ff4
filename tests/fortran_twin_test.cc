// The Fortran mini-app (stencil2d_f, `use mpi`) makes the same MPI calls as its C twin
// (stencil2d): traced under a real mpirun, every rank's events must be the same sequence of
// kinds, peers, tags, bytes, communicators and request usage. This proves the tracer sees
// Fortran programs through the Fortran entry points, not only C ones.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "test_support.h"

namespace pas2p::testing {
namespace {

// An event's content without times, with request ids renamed by first appearance (ids
// are the tracer's own numbering; what matters is which call uses which request).
std::string Normalized(const Event& e, std::map<RequestId, int>* names) {
  auto name = [&](RequestId id) {
    auto [it, fresh] = names->emplace(id, static_cast<int>(names->size()));
    return "q" + std::to_string(it->second);
  };
  std::string s(EventKindName(e.kind));
  if (e.kind == EventKind::kCompute) return s;
  s += " comm=" + std::to_string(e.comm);
  if (IsPointToPoint(e.kind)) {
    s += " peer=" + std::to_string(e.peer) + " tag=" + std::to_string(e.tag) +
         " bytes=" + std::to_string(e.bytes);
    if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv) s += " " + name(e.request);
  }
  if (IsCollective(e.kind)) {
    s += " root=" + std::to_string(e.peer) + " send=" + std::to_string(e.send_bytes) +
         " recv=" + std::to_string(e.recv_bytes);
  }
  if (IsCompletion(e.kind)) {
    s += " requests=";
    for (auto r : e.requests) s += name(r) + ",";
    s += " completed=";
    for (const auto& c : e.completed) {
      s += name(c.request) + "/" + std::to_string(c.peer) + "/" + std::to_string(c.tag) + "/" +
           std::to_string(c.bytes) + ",";
    }
  }
  return s;
}

TEST(FortranTwin, StencilInFortranIsTracedLikeItsCTwin) {
  const int nprocs = 4;
  const std::vector<std::string> args = {"--iters", "5", "--size", "48", "--check-every", "2"};
  TempDir tmp;
  auto c_run = TraceApp("stencil2d", nprocs, args, tmp.path() / "c");
  auto f_run = TraceApp("stencil2d_f", nprocs, args, tmp.path() / "fortran");
  ASSERT_FALSE(c_run.trace_dir.empty());
  ASSERT_FALSE(f_run.trace_dir.empty());
  const TraceData c = ReadTrace(TraceDirectory(c_run.trace_dir));
  const TraceData f = ReadTrace(TraceDirectory(f_run.trace_dir));
  ASSERT_EQ(c.metadata.nprocs, nprocs);
  ASSERT_EQ(f.metadata.nprocs, nprocs);
  const auto c_mpi = MpiEvents(c);
  const auto f_mpi = MpiEvents(f);
  for (int r = 0; r < nprocs; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    // Not vacuous: 5 iterations of 4 irecv + 4 isend + waitall, plus init, barrier,
    // 2 residual allreduces, the checksum allreduce and finalize.
    EXPECT_EQ(c_mpi[r].size(), 5u * 9u + 6u);
    ASSERT_EQ(f_mpi[r].size(), c_mpi[r].size()) << DescribeSequences(f_mpi[r], c_mpi[r]);
    std::map<RequestId, int> c_names, f_names;
    for (std::size_t i = 0; i < c_mpi[r].size(); ++i) {
      EXPECT_EQ(Normalized(f_mpi[r][i], &f_names), Normalized(c_mpi[r][i], &c_names))
          << "event " << i << " (Fortran vs C)";
    }
  }
}

TEST(FortranTwin, SameChecksumAsTheCTwin) {
  // Same arithmetic in the same order: the results agree (to rounding, in case a compiler
  // contracts differently).
  const std::vector<std::string> args = {"--iters", "20", "--size", "60"};
  auto run = [&](const std::string& app) {
    auto cmd = MpirunPrefix(4);
    cmd.push_back(Binary(app).string());
    cmd.insert(cmd.end(), args.begin(), args.end());
    RunResult result = RunCommand(cmd);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return ChecksumValue(ChecksumLine(app, result.out));
  };
  const double c = run("stencil2d"), f = run("stencil2d_f");
  ASSERT_TRUE(std::isfinite(c));
  ASSERT_TRUE(std::isfinite(f));
  EXPECT_NEAR(f, c, 1e-12 * std::fabs(c));
}

}  // namespace
}  // namespace pas2p::testing
