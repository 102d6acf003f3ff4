// Traces datasets/apps/cg under a real mpirun and checks that its row and column
// sub-communicators (MPI_Comm_split) are recorded with the right world ranks, and that each
// collective on them maps to the right members and, for rooted ones, the right world root.
#include <gtest/gtest.h>

#include <map>

#include "test_support.h"

namespace pas2p::testing {
namespace {

TEST(CgTrace, SubCommunicatorCollectivesMapToTheRightWorldRanks) {
  // MPI_Dims_create(6, 2) = {3, 2}: 3 process rows of 2 ranks.
  const int nprocs = 6, pr = 3, pc = 2;
  const long iters = 6, check_every = 2, checks = iters / check_every;
  TempDir tmp;
  auto traced = TraceApp("cg", nprocs,
                         {"--iters", std::to_string(iters), "--size", "30", "--check-every",
                          std::to_string(check_every)},
                         tmp.path() / "traces");
  ASSERT_FALSE(traced.trace_dir.empty());
  TraceDirectory trace(traced.trace_dir);
  ASSERT_EQ(trace.nprocs(), nprocs);
  const TraceData data = ReadTrace(trace);
  const auto mpi = MpiEvents(data);

  CommTable table(nprocs);
  for (int r = 0; r < nprocs; ++r) {
    for (const auto& e : mpi[r]) {
      if (e.kind == EventKind::kCommCreate) table.Add(e, r);
    }
  }

  // Communicator of each rank's row and column, as the app builds them.
  auto row_members = [&](int r) {
    std::vector<std::int32_t> m;
    for (int c = 0; c < pc; ++c) m.push_back((r / pc) * pc + c);
    return m;
  };
  auto col_members = [&](int r) {
    std::vector<std::int32_t> m;
    for (int row = 0; row < pr; ++row) m.push_back(row * pc + r % pc);
    return m;
  };

  std::map<std::vector<std::int32_t>, CommId> id_of;  // members -> id, across ranks
  for (int r = 0; r < nprocs; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    // Two splits of MPI_COMM_WORLD, the row first.
    std::vector<const Event*> creates;
    for (const auto& e : mpi[r]) {
      if (e.kind == EventKind::kCommCreate) creates.push_back(&e);
    }
    ASSERT_EQ(creates.size(), 2u);
    EXPECT_EQ(creates[0]->value, static_cast<std::int64_t>(CommOrigin::kSplit));
    EXPECT_EQ(creates[1]->value, static_cast<std::int64_t>(CommOrigin::kSplit));
    EXPECT_EQ(creates[0]->comm, kCommWorld);
    EXPECT_EQ(creates[1]->comm, kCommWorld);
    EXPECT_EQ(creates[0]->members, row_members(r));
    EXPECT_EQ(creates[1]->members, col_members(r));
    const CommId row = creates[0]->new_comm, col = creates[1]->new_comm;
    EXPECT_NE(row, col);
    EXPECT_NE(row, kCommWorld);
    // Every member names the communicator with the same id; different ones differ.
    for (const auto& [members, id] : std::vector<std::pair<std::vector<std::int32_t>, CommId>>{
             {row_members(r), row}, {col_members(r), col}}) {
      auto [it, fresh] = id_of.emplace(members, id);
      EXPECT_EQ(it->second, id) << "members of one communicator disagree on its id";
    }

    // Collectives per communicator, in order.
    int world_allreduce = 0, row_allreduce = 0, col_allreduce = 0;
    int col_reduce = 0, row_reduce = 0, row_bcast = 0, col_bcast = 0;
    for (const auto& e : mpi[r]) {
      if (!IsCollective(e.kind)) continue;
      SCOPED_TRACE(FormatEvent(e));
      const auto members = table.Members(e.comm, r);
      EXPECT_NE(std::find(members.begin(), members.end(), r), members.end())
          << "a collective on a communicator the rank is not in";
      if (e.kind == EventKind::kAllreduce) {
        // One double each, except the checksum (two doubles, the last world allreduce).
        const std::uint64_t bytes = e.comm == kCommWorld && world_allreduce == iters ? 16u : 8u;
        EXPECT_EQ(e.send_bytes, bytes);
        EXPECT_EQ(e.recv_bytes, bytes);
        if (e.comm == row) ++row_allreduce;
        if (e.comm == col) ++col_allreduce;
        if (e.comm == kCommWorld) ++world_allreduce;
      } else if (e.kind == EventKind::kReduce) {
        // Rooted at rank 0 of the sub-communicator, recorded as a world rank.
        if (e.comm == col) {
          ++col_reduce;
          EXPECT_EQ(e.peer, r % pc) << "column reduce root is row 0 of the column";
        } else {
          ASSERT_EQ(e.comm, row);
          ++row_reduce;
          EXPECT_EQ(e.peer, 0) << "row-0 reduce root is world rank 0";
        }
        EXPECT_EQ(e.send_bytes, 8u);
        EXPECT_EQ(e.recv_bytes, e.peer == r ? 8u : 0u);
      } else if (e.kind == EventKind::kBcast) {
        if (e.comm == col) {
          ++col_bcast;
          EXPECT_EQ(e.peer, r % pc);
        } else {
          ASSERT_EQ(e.comm, row);
          ++row_bcast;
          EXPECT_EQ(e.peer, 0);
        }
        EXPECT_EQ(e.send_bytes, e.peer == r ? 4u : 0u);
        EXPECT_EQ(e.recv_bytes, e.peer == r ? 0u : 4u);
      } else {
        EXPECT_EQ(e.kind, EventKind::kBarrier);
        EXPECT_EQ(e.comm, kCommWorld);
      }
    }
    // One row+column allreduce for |b|^2 and one per iteration (r.r); one world allreduce
    // per iteration (p.Ap) and one for the checksum; the residual check every K iterations:
    // column reduce and bcast on every rank, row reduce and bcast on process row 0 only.
    EXPECT_EQ(row_allreduce, 1 + iters);
    EXPECT_EQ(col_allreduce, 1 + iters);
    EXPECT_EQ(world_allreduce, iters + 1);
    EXPECT_EQ(col_reduce, checks);
    EXPECT_EQ(col_bcast, checks);
    EXPECT_EQ(row_reduce, r / pc == 0 ? checks : 0);
    EXPECT_EQ(row_bcast, r / pc == 0 ? checks : 0);

    // Halo exchange only with the grid neighbours that exist (non-periodic grid).
    std::set<int> expected_peers;
    const int prow = r / pc, pcol = r % pc;
    if (prow > 0) expected_peers.insert(r - pc);
    if (prow < pr - 1) expected_peers.insert(r + pc);
    if (pcol > 0) expected_peers.insert(r - 1);
    if (pcol < pc - 1) expected_peers.insert(r + 1);
    std::set<int> peers;
    for (const auto& e : mpi[r]) {
      if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv) peers.insert(e.peer);
    }
    EXPECT_EQ(peers, expected_peers);
  }

  // All members of a communicator run the same collectives on it in the same order.
  std::map<CommId, std::map<int, std::vector<EventKind>>> per_comm;
  for (int r = 0; r < nprocs; ++r) {
    for (const auto& e : mpi[r]) {
      if (IsCollective(e.kind)) per_comm[e.comm][r].push_back(e.kind);
    }
  }
  for (const auto& [comm, by_rank] : per_comm) {
    const auto members = table.Members(comm, by_rank.begin()->first);
    EXPECT_EQ(by_rank.size(),
              comm == kCommWorld ? static_cast<std::size_t>(nprocs) : members.size())
        << "comm " << comm;
    for (const auto& [rank, kinds] : by_rank) {
      EXPECT_EQ(kinds, by_rank.begin()->second) << "comm " << comm << " rank " << rank;
    }
  }
  EXPECT_EQ(CheckPointToPointMatching(data), "");
}

}  // namespace
}  // namespace pas2p::testing
