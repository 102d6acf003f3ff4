// Traces datasets/apps/stencil2d under a real mpirun (pas2p trace) and checks that every
// rank's MPI events are exactly what the app's decomposition implies: peers, tags, bytes,
// message counts per iteration, request ids in the waitall, the allreduce cadence.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "test_support.h"

namespace pas2p::testing {
namespace {

long BlockSize(long n, long parts, long i) { return n / parts + (i < n % parts ? 1 : 0); }

// What stencil2d.c does, written down independently of it: the expected MPI events of one
// rank (times and request ids are not predicted; request ids are checked for consistency).
std::vector<Event> ExpectedStencilEvents(int rank, int nprocs, long n, long iters,
                                         long check_every) {
  const int q = static_cast<int>(std::lround(std::sqrt(nprocs)));
  const int prow = rank / q, pcol = rank % q;
  const std::uint64_t row_bytes = 8 * BlockSize(n, q, pcol);  // north/south: nx doubles
  const std::uint64_t col_bytes = 8 * BlockSize(n, q, prow);  // west/east: ny doubles
  const int north = ((prow - 1 + q) % q) * q + pcol, south = ((prow + 1) % q) * q + pcol;
  const int west = prow * q + (pcol - 1 + q) % q, east = prow * q + (pcol + 1) % q;
  enum { kN = 10, kS = 11, kW = 12, kE = 13 };  // tag = direction the message travels

  std::vector<Event> events;
  Event init;
  init.kind = EventKind::kInit;
  events.push_back(init);
  events.push_back(MakeCollective(EventKind::kBarrier, 0, 0));
  for (long it = 0; it < iters; ++it) {
    events.push_back(MakeIrecv(north, kS, row_bytes, 0));
    events.push_back(MakeIrecv(south, kN, row_bytes, 0));
    events.push_back(MakeIrecv(west, kE, col_bytes, 0));
    events.push_back(MakeIrecv(east, kW, col_bytes, 0));
    events.push_back(MakeIsend(north, kN, row_bytes, 0));
    events.push_back(MakeIsend(south, kS, row_bytes, 0));
    events.push_back(MakeIsend(west, kW, col_bytes, 0));
    events.push_back(MakeIsend(east, kE, col_bytes, 0));
    events.push_back(MakeWaitall({}));
    if ((it + 1) % check_every == 0) {
      events.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
    }
  }
  events.push_back(MakeCollective(EventKind::kAllreduce, 16, 16));
  Event fin;
  fin.kind = EventKind::kFinalize;
  events.push_back(fin);
  return events;
}

// Compares a traced rank with the expected events, field by field, and checks that each
// waitall completes exactly the 8 requests posted just before it.
void ExpectStencilRank(int rank, const std::vector<Event>& got, const std::vector<Event>& want) {
  ASSERT_EQ(got.size(), want.size()) << "rank " << rank << ": number of MPI events\n"
                                     << DescribeSequences(got, want);
  std::vector<RequestId> posted;
  std::set<RequestId> all_ids;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Event& g = got[i];
    const Event& w = want[i];
    SCOPED_TRACE("rank " + std::to_string(rank) + " event " + std::to_string(i) + ": " +
                 FormatEvent(g));
    ASSERT_EQ(g.kind, w.kind) << "expected " << EventKindName(w.kind);
    if (IsPointToPoint(g.kind)) {
      EXPECT_EQ(g.peer, w.peer);
      EXPECT_EQ(g.tag, w.tag);
      EXPECT_EQ(g.bytes, w.bytes);
      EXPECT_EQ(g.comm, kCommWorld);
      EXPECT_TRUE(all_ids.insert(g.request).second) << "request id reused";
      posted.push_back(g.request);
    } else if (g.kind == EventKind::kWaitall) {
      ASSERT_EQ(posted.size(), 8u);
      EXPECT_EQ(g.requests, posted) << "waitall must name the 8 requests just posted, in order";
      ASSERT_EQ(g.completed.size(), 8u);
      std::set<RequestId> done;
      for (const auto& c : g.completed) done.insert(c.request);
      EXPECT_EQ(done, std::set<RequestId>(posted.begin(), posted.end()));
      // Receive completions carry the actual source, tag and size.
      for (const auto& c : g.completed) {
        for (std::size_t k = 0; k < 4; ++k) {
          if (c.request == posted[k]) {
            const Event& irecv = got[i - 8 + k];
            EXPECT_EQ(c.peer, irecv.peer);
            EXPECT_EQ(c.tag, irecv.tag);
            EXPECT_EQ(c.bytes, irecv.bytes);
          }
        }
      }
      posted.clear();
    } else if (IsCollective(g.kind)) {
      EXPECT_EQ(g.comm, kCommWorld);
      EXPECT_EQ(g.send_bytes, w.send_bytes);
      EXPECT_EQ(g.recv_bytes, w.recv_bytes);
    }
  }
}

TEST(Stencil2dTrace, FourRanksExchangeExactlyTheirTorusHalos) {
  TempDir tmp;
  const long n = 64, iters = 6, check_every = 3;
  auto traced = TraceApp("stencil2d", 4,
                         {"--iters", std::to_string(iters), "--size", std::to_string(n),
                          "--check-every", std::to_string(check_every)},
                         tmp.path() / "traces");
  ASSERT_FALSE(traced.trace_dir.empty());
  TraceDirectory trace(traced.trace_dir);
  ASSERT_EQ(trace.nprocs(), 4);
  EXPECT_TRUE(trace.metadata().IsComplete()) << trace.metadata().status_reason;
  const TraceData data = ReadTrace(trace);
  const auto mpi = MpiEvents(data);
  for (int r = 0; r < 4; ++r) {
    ExpectStencilRank(r, mpi[r], ExpectedStencilEvents(r, 4, n, iters, check_every));
  }

  // The same facts, stated the way the decomposition gives them. On the 2 x 2 periodic
  // torus a rank's north and south neighbour are one rank (r ^ 2), and so are its west and
  // east (r ^ 1): per iteration it sends 2 messages of 32 doubles (256 bytes) to each of
  // its 2 partners and receives 2 from each.
  for (int r = 0; r < 4; ++r) {
    std::map<int, int> sends, recvs;
    std::map<int, std::uint64_t> sent_bytes;
    for (const auto& e : mpi[r]) {
      if (e.kind == EventKind::kIsend) {
        ++sends[e.peer];
        sent_bytes[e.peer] += e.bytes;
      }
      if (e.kind == EventKind::kIrecv) ++recvs[e.peer];
    }
    const std::map<int, int> per_partner = {{r ^ 1, 2 * iters}, {r ^ 2, 2 * iters}};
    EXPECT_EQ(sends, per_partner) << "rank " << r;
    EXPECT_EQ(recvs, per_partner) << "rank " << r;
    EXPECT_EQ(sent_bytes[r ^ 1], static_cast<std::uint64_t>(2 * 256 * iters)) << "rank " << r;
    EXPECT_EQ(sent_bytes[r ^ 2], static_cast<std::uint64_t>(2 * 256 * iters)) << "rank " << r;
  }
  EXPECT_EQ(CheckPointToPointMatching(data), "");
}

// An uneven decomposition: N = 50 on a 3 x 3 torus gives blocks of 17, 17 and 16, so the
// bytes of a halo depend on the rank's row or column.
TEST(Stencil2dTrace, NineRanksUnevenBlocksGiveRankDependentBytes) {
  TempDir tmp;
  const long n = 50, iters = 4, check_every = 2;
  auto traced = TraceApp("stencil2d", 9,
                         {"--iters", std::to_string(iters), "--size", std::to_string(n),
                          "--check-every", std::to_string(check_every)},
                         tmp.path() / "traces");
  ASSERT_FALSE(traced.trace_dir.empty());
  TraceDirectory trace(traced.trace_dir);
  ASSERT_EQ(trace.nprocs(), 9);
  const TraceData data = ReadTrace(trace);
  const auto mpi = MpiEvents(data);
  for (int r = 0; r < 9; ++r) {
    ExpectStencilRank(r, mpi[r], ExpectedStencilEvents(r, 9, n, iters, check_every));
  }
  // Rank 8 (row 2, column 2) owns a 16 x 16 block: 128-byte halos in all directions.
  for (const auto& e : mpi[8]) {
    if (e.kind == EventKind::kIsend) {
      EXPECT_EQ(e.bytes, 128u) << FormatEvent(e);
    }
  }
  EXPECT_EQ(CheckPointToPointMatching(data), "");
}

}  // namespace
}  // namespace pas2p::testing
