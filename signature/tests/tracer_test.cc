// The tracer under real mpirun: each test program's calls, read back with ReadTrace, must be
// exactly what its source code implies.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "test_util.h"

namespace pas2p {
namespace {

using testing::CallEvents;
using testing::FreshDir;
using testing::Program;
using testing::Quote;
using testing::RunMpi;

// Runs `program` traced at `np` ranks and reads the whole trace back.
TraceData TraceProgram(const std::string& name, int np, const std::string& program,
                       const std::vector<std::string>& args = {}) {
  const std::string dir = FreshDir(name);
  const auto result = RunMpi(np, program, args, dir);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err.find("pas2p-trace"), std::string::npos) << result.err;
  TraceDirectory trace(dir);
  return ReadTrace(trace, /*require_complete=*/true);
}

// trace.json records where the ranks ran: one host here, named as gethostname() names it,
// with the 4 ranks and the CPUs their affinity masks allow (unbound ranks inherit this
// test's mask). `pas2p dump` states it in its header.
TEST(TracerMetadata, RecordsRanksAndCoresPerHost) {
  const std::string dir = FreshDir("placement");
  const auto run = testing::Run(Quote(PAS2P_MPIEXEC) +
                                " -np 4 --oversubscribe --allow-run-as-root --bind-to none"
                                " -x LD_PRELOAD=" +
                                Quote(PAS2P_TRACER_PATH) + " -x PAS2P_TRACE_DIR=" + Quote(dir) +
                                " " + Quote(Program("p2p_program")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  char host[256] = {0};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int cores = CPU_COUNT(&set);
  const TraceMetadata md = ReadMetadata(dir);
  ASSERT_EQ(md.hosts.size(), 1u) << MetadataToJson(md);
  EXPECT_EQ(md.hosts[0].host, host);
  EXPECT_EQ(md.hosts[0].ranks, 4);
  EXPECT_EQ(md.hosts[0].cores, cores);
  EXPECT_EQ(md.IsOversubscribed(), cores < 4);

  const auto dump = testing::Run(Quote(PAS2P_EXE) + " dump --summary " + Quote(dir));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  char per_core[32];
  std::snprintf(per_core, sizeof per_core, "%.3g", 4.0 / cores);
  const std::string expected = "# placement 4 ranks on 1 host (" + std::string(host) +
                               ": 4 ranks on " + std::to_string(cores) +
                               (cores == 1 ? " core, " : " cores, ") + per_core + " per core)";
  EXPECT_NE(dump.out.find(expected), std::string::npos) << expected << "\n" << dump.out;

  // Cores are what the ranks may run on, not what the machine has: the same job confined to
  // one CPU (taskset, as a batch system's cpuset would) records 1 core for its 4 ranks.
  int first_cpu = 0;
  while (!CPU_ISSET(first_cpu, &set)) ++first_cpu;
  const std::string confined_dir = FreshDir("placement-confined");
  const auto confined =
      testing::Run("taskset -c " + std::to_string(first_cpu) + " " + Quote(PAS2P_MPIEXEC) +
                   " -np 4 --oversubscribe --allow-run-as-root --bind-to none -x LD_PRELOAD=" +
                   Quote(PAS2P_TRACER_PATH) + " -x PAS2P_TRACE_DIR=" + Quote(confined_dir) + " " +
                   Quote(Program("p2p_program")));
  ASSERT_EQ(confined.exit_code, 0) << confined.err;
  const TraceMetadata confined_md = ReadMetadata(confined_dir);
  EXPECT_EQ(confined_md.hosts, (std::vector<HostPlacement>{{host, 4, 1}}))
      << MetadataToJson(confined_md);
  EXPECT_TRUE(confined_md.IsOversubscribed());
}

// Walks the non-compute events of one rank in order.
class Cursor {
 public:
  Cursor(const std::vector<Event>& events, int rank) : events_(CallEvents(events)), rank_(rank) {}
  const Event& Next(EventKind kind) {
    static const Event kNone;
    if (pos_ >= events_.size()) {
      ADD_FAILURE() << "rank " << rank_ << ": expected " << EventKindName(kind)
                    << " after the last event";
      return kNone;
    }
    const Event& e = events_[pos_++];
    EXPECT_EQ(e.kind, kind) << "rank " << rank_ << " event " << pos_ - 1 << ": " << FormatEvent(e);
    return e;
  }
  const Event& Peek() const { return events_.at(pos_); }
  bool Done() const { return pos_ >= events_.size(); }

 private:
  std::vector<Event> events_;
  int rank_;
  std::size_t pos_ = 0;
};

void ExpectP2P(const Event& e, int peer, int tag, std::uint64_t bytes, bool sync = false) {
  EXPECT_EQ(e.peer, peer) << FormatEvent(e);
  EXPECT_EQ(e.tag, tag) << FormatEvent(e);
  EXPECT_EQ(e.bytes, bytes) << FormatEvent(e);
  EXPECT_EQ(e.sync, sync) << FormatEvent(e);
  EXPECT_EQ(e.comm, kCommWorld) << FormatEvent(e);
}

Completion Recv(RequestId id, int peer, int tag, std::uint64_t bytes) {
  return Completion{id, peer, tag, bytes};
}
Completion Sent(RequestId id) { return Completion{id, kNoRank, kAnyTag, 0}; }

TEST(TracerP2P, EveryEventMatchesTheProgram) {
  const TraceData t = TraceProgram("p2p", 4, Program("p2p_program"));
  ASSERT_EQ(t.metadata.nprocs, 4);
  EXPECT_EQ(t.metadata.status, "complete");
  EXPECT_EQ(t.metadata.application, "p2p_program");
  EXPECT_FALSE(t.metadata.tracer_version.empty());
  if (t.metadata.counters.empty()) {
    EXPECT_FALSE(t.metadata.counters_note.empty());
  }
  ASSERT_EQ(t.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const auto& events = t.ranks[r];
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.front().kind, EventKind::kInit);
    EXPECT_EQ(events.back().kind, EventKind::kFinalize);
    for (const Event& e : events) {
      if (e.kind != EventKind::kCompute) continue;
      EXPECT_GE(e.cpu_ns, 0);
      EXPECT_LE(e.wall_start_ns, e.wall_end_ns);
      if (!t.metadata.HasInstructions()) {
        EXPECT_EQ(e.instructions, kNotMeasured);
      }
    }
    // Every MPI call is preceded by the compute burst that led to it.
    for (std::size_t i = 1; i + 1 < events.size(); ++i) {
      if (events[i].kind != EventKind::kCompute) {
        EXPECT_EQ(events[i - 1].kind, EventKind::kCompute) << "rank " << r << " event " << i;
      }
    }
  }

  // Rank 0: blocking modes to 1, the ring, waitany/waitsome from 2.
  {
    Cursor c(t.ranks[0], 0);
    c.Next(EventKind::kInit);
    ExpectP2P(c.Next(EventKind::kSend), 1, 100, 40);
    ExpectP2P(c.Next(EventKind::kSend), 1, 101, 40, /*sync=*/true);
    ExpectP2P(c.Next(EventKind::kSend), 1, 102, 12);
    c.Next(EventKind::kBarrier);
    ExpectP2P(c.Next(EventKind::kSend), 1, 103, 8);
    const Event& irsend = c.Next(EventKind::kIsend);
    ExpectP2P(irsend, 1, 104, 4);
    const Event& wait = c.Next(EventKind::kWait);
    EXPECT_EQ(wait.requests, std::vector<RequestId>{irsend.request});
    EXPECT_EQ(wait.completed, std::vector<Completion>{Sent(irsend.request)});
  }
  // Rank 1: wildcard receives record the actual source and tag.
  {
    Cursor c(t.ranks[1], 1);
    c.Next(EventKind::kInit);
    // A receive posted with MPI_ANY_SOURCE says so (recv_peer), a named source does not.
    const Event& any_any = c.Next(EventKind::kRecv);  // ANY_SOURCE, ANY_TAG, STATUS_IGNORE
    ExpectP2P(any_any, 0, 100, 40);
    EXPECT_EQ(any_any.recv_peer, kAnySource);
    const Event& any_source = c.Next(EventKind::kRecv);  // ANY_SOURCE
    ExpectP2P(any_source, 0, 101, 40);
    EXPECT_EQ(any_source.recv_peer, kAnySource);
    const Event& any_tag = c.Next(EventKind::kRecv);  // ANY_TAG
    ExpectP2P(any_tag, 0, 102, 12);
    EXPECT_EQ(any_tag.recv_peer, kNoRank);
    const Event& a = c.Next(EventKind::kIrecv);
    ExpectP2P(a, 0, 103, 8);
    const Event& b = c.Next(EventKind::kIrecv);
    ExpectP2P(b, kAnySource, 104, 4);
    EXPECT_NE(a.request, b.request);
    c.Next(EventKind::kBarrier);
    const Event& all = c.Next(EventKind::kWaitall);
    EXPECT_EQ(all.requests, (std::vector<RequestId>{a.request, b.request}));
    EXPECT_EQ(all.completed,
              (std::vector<Completion>{Recv(a.request, 0, 103, 8), Recv(b.request, 0, 104, 4)}));
  }
  // Every rank: the ring, with the wildcard completion resolved to the right neighbour.
  for (int r = 0; r < 4; ++r) {
    const int right = (r + 1) % 4, left = (r + 3) % 4;
    const auto calls = CallEvents(t.ranks[r]);
    auto it = std::find_if(calls.begin(), calls.end(), [](const Event& e) {
      return e.kind == EventKind::kIrecv && e.tag == 200;
    });
    ASSERT_NE(it, calls.end()) << "rank " << r;
    ASSERT_LE(std::distance(it, calls.end()), calls.end() - calls.begin());
    const Event& r0 = it[0];
    const Event& r1 = it[1];
    const Event& s0 = it[2];
    const Event& s1 = it[3];
    const Event& all = it[4];
    ExpectP2P(r0, left, 200, 40);
    EXPECT_EQ(r1.kind, EventKind::kIrecv);
    ExpectP2P(r1, kAnySource, 201, 40);
    EXPECT_EQ(s0.kind, EventKind::kIsend);
    ExpectP2P(s0, right, 200, 40);
    EXPECT_EQ(s1.kind, EventKind::kIsend);
    ExpectP2P(s1, left, 201, 40, true);
    ASSERT_EQ(all.kind, EventKind::kWaitall);
    EXPECT_EQ(all.requests,
              (std::vector<RequestId>{r0.request, r1.request, s0.request, s1.request}));
    EXPECT_EQ(all.completed, (std::vector<Completion>{Recv(r0.request, left, 200, 40),
                                                      Recv(r1.request, right, 201, 40),
                                                      Sent(s0.request), Sent(s1.request)}));
    // Request ids are unique per rank.
    std::set<RequestId> ids;
    for (const Event& e : calls) {
      if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv) {
        EXPECT_TRUE(ids.insert(e.request).second) << "rank " << r << " reuses id " << e.request;
      }
    }
  }
  // Rank 0: waitany completes each of the three receives once, then nothing; waitsome
  // completes both of the next two (one a wildcard), over however many calls it takes.
  {
    const auto calls = CallEvents(t.ranks[0]);
    std::vector<Event> waitany, waitsome, irecvs;
    for (const Event& e : calls) {
      if (e.kind == EventKind::kWaitany) waitany.push_back(e);
      if (e.kind == EventKind::kWaitsome) waitsome.push_back(e);
      if (e.kind == EventKind::kIrecv && e.tag >= 300) irecvs.push_back(e);
    }
    ASSERT_EQ(irecvs.size(), 5u);
    ASSERT_EQ(waitany.size(), 4u);
    std::map<RequestId, Completion> done;
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(waitany[k].completed.size(), 1u);
      EXPECT_EQ(waitany[k].requests.size(), static_cast<std::size_t>(3 - k));
      done[waitany[k].completed[0].request] = waitany[k].completed[0];
    }
    EXPECT_TRUE(waitany[3].requests.empty());
    EXPECT_TRUE(waitany[3].completed.empty());
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(done.count(irecvs[k].request), 1u);
      EXPECT_EQ(done[irecvs[k].request], Recv(irecvs[k].request, 2, 300 + k, 4u * (k + 1)));
    }
    std::vector<Completion> some;
    for (const Event& e : waitsome) some.insert(some.end(), e.completed.begin(), e.completed.end());
    std::sort(some.begin(), some.end(),
              [](const Completion& a, const Completion& b) { return a.request < b.request; });
    EXPECT_EQ(some, (std::vector<Completion>{Recv(irecvs[3].request, 2, 310, 16),
                                             Recv(irecvs[4].request, 2, 311, 20)}));
    EXPECT_EQ(irecvs[4].peer, kAnySource);
  }
  // Rank 2: five sends (one buffered) completed by one waitall, ids in order.
  {
    const auto calls = CallEvents(t.ranks[2]);
    std::vector<RequestId> sends;
    for (const Event& e : calls) {
      if (e.kind == EventKind::kIsend && e.peer == 0) sends.push_back(e.request);
    }
    ASSERT_EQ(sends.size(), 5u);
    auto it = std::find_if(calls.begin(), calls.end(), [&](const Event& e) {
      return e.kind == EventKind::kWaitall && e.requests.size() == 5;
    });
    ASSERT_NE(it, calls.end());
    EXPECT_EQ(it->requests, sends);
    EXPECT_EQ(it->completed.size(), 5u);
  }
  // Rank 3: four failed tests of every kind are recorded, then the test that succeeds.
  {
    const auto calls = CallEvents(t.ranks[3]);
    auto it = std::find_if(calls.begin(), calls.end(), [](const Event& e) {
      return e.kind == EventKind::kIrecv && e.tag == 400;
    });
    ASSERT_NE(it, calls.end());
    const RequestId id = it->request;
    const EventKind kinds[] = {EventKind::kTest, EventKind::kTestall, EventKind::kTestany,
                               EventKind::kTestsome};
    for (int k = 0; k < 4; ++k) {
      const Event& test = it[1 + k];
      EXPECT_EQ(test.kind, kinds[k]);
      EXPECT_EQ(test.requests, std::vector<RequestId>{id});
      EXPECT_TRUE(test.completed.empty()) << FormatEvent(test);
    }
    ExpectP2P(it[5], 1, 401, 4);
    auto last = it + 6;
    while (last != calls.end() && last->kind == EventKind::kTest && last->completed.empty()) ++last;
    ASSERT_NE(last, calls.end());
    ASSERT_EQ(last->kind, EventKind::kTest);
    EXPECT_EQ(last->completed, std::vector<Completion>{Recv(id, 1, 400, 7)});
  }
  // Every rank: sendrecv (wildcard source), sendrecv_replace, MPI_PROC_NULL.
  for (int r = 0; r < 4; ++r) {
    const auto calls = CallEvents(t.ranks[r]);
    std::vector<Event> sr;
    for (const Event& e : calls) {
      if (e.kind == EventKind::kSendrecv) sr.push_back(e);
    }
    ASSERT_EQ(sr.size(), 3u);
    EXPECT_EQ(sr[0].peer, r ^ 1);
    EXPECT_EQ(sr[0].tag, 500);
    EXPECT_EQ(sr[0].bytes, 12u);
    EXPECT_EQ(sr[0].recv_peer, r ^ 1);
    EXPECT_EQ(sr[0].recv_tag, 500);
    EXPECT_EQ(sr[0].recv_bytes, 12u);
    EXPECT_EQ(sr[1].peer, (r + 1) % 4);
    EXPECT_EQ(sr[1].recv_peer, (r + 3) % 4);
    EXPECT_EQ(sr[1].bytes, 32u);
    EXPECT_EQ(sr[1].recv_bytes, 32u);
    const auto proc_null =
        std::find_if(calls.begin(), calls.end(), [](const Event& e) { return e.tag == 600; });
    ASSERT_NE(proc_null, calls.end());
    EXPECT_EQ(proc_null->kind, EventKind::kSend);
    EXPECT_EQ(proc_null->peer, kProcNull);
    EXPECT_EQ(proc_null[1].kind, EventKind::kRecv);
    EXPECT_EQ(proc_null[1].peer, kProcNull);
    EXPECT_EQ(proc_null[1].bytes, 0u);
    // Nothing arrives from MPI_PROC_NULL (the status says MPI_ANY_TAG): the tag posted is
    // the call's, as on the ranks whose neighbour exists.
    EXPECT_EQ(proc_null[1].tag, 600);
    EXPECT_EQ(sr[2].peer, kProcNull);
    EXPECT_EQ(sr[2].tag, 601);
    EXPECT_EQ(sr[2].recv_peer, kProcNull);
    EXPECT_EQ(sr[2].recv_tag, 602);
    EXPECT_EQ(sr[2].recv_bytes, 0u);
  }
}

TEST(TracerCollectives, RootsAndBytesPerRank) {
  const TraceData t = TraceProgram("collectives", 4, Program("collectives_program"));
  ASSERT_EQ(t.ranks.size(), 4u);
  const std::vector<std::uint64_t> by_rank = {4, 8, 12, 16};  // (r + 1) ints
  for (int r = 0; r < 4; ++r) {
    Cursor c(t.ranks[r], r);
    const std::uint64_t mine = 4u * (r + 1);
    c.Next(EventKind::kInit);
    c.Next(EventKind::kBarrier);
    const Event& bcast = c.Next(EventKind::kBcast);
    EXPECT_EQ(bcast.peer, 1);
    EXPECT_EQ(bcast.send_bytes, r == 1 ? 40u : 0u);
    EXPECT_EQ(bcast.recv_bytes, r == 1 ? 0u : 40u);
    const Event& gather = c.Next(EventKind::kGather);
    EXPECT_EQ(gather.peer, 2);
    EXPECT_EQ(gather.send_bytes, 12u);
    EXPECT_EQ(gather.recv_bytes, r == 2 ? 48u : 0u);
    const Event& gatherv = c.Next(EventKind::kGatherv);
    EXPECT_EQ(gatherv.peer, 0);
    EXPECT_EQ(gatherv.send_bytes, mine);
    EXPECT_EQ(gatherv.recv_counts, r == 0 ? by_rank : std::vector<std::uint64_t>{});
    EXPECT_EQ(gatherv.recv_bytes, r == 0 ? 40u : 0u);
    const Event& scatter = c.Next(EventKind::kScatter);
    EXPECT_EQ(scatter.peer, 3);
    EXPECT_EQ(scatter.send_bytes, r == 3 ? 64u : 0u);
    EXPECT_EQ(scatter.recv_bytes, 16u);
    const Event& scatterv = c.Next(EventKind::kScatterv);
    EXPECT_EQ(scatterv.peer, 1);
    EXPECT_EQ(scatterv.send_counts, r == 1 ? by_rank : std::vector<std::uint64_t>{});
    EXPECT_EQ(scatterv.recv_bytes, mine);
    const Event& allgather = c.Next(EventKind::kAllgather);
    EXPECT_EQ(allgather.send_bytes, 8u);
    EXPECT_EQ(allgather.recv_bytes, 32u);
    const Event& allgatherv = c.Next(EventKind::kAllgatherv);
    EXPECT_EQ(allgatherv.send_bytes, mine);
    EXPECT_EQ(allgatherv.recv_counts, by_rank);
    EXPECT_EQ(allgatherv.recv_bytes, 40u);
    const Event& alltoall = c.Next(EventKind::kAlltoall);
    EXPECT_EQ(alltoall.send_bytes, 16u);
    EXPECT_EQ(alltoall.recv_bytes, 16u);
    const Event& alltoallv = c.Next(EventKind::kAlltoallv);
    EXPECT_EQ(alltoallv.send_counts, by_rank);
    EXPECT_EQ(alltoallv.recv_counts, std::vector<std::uint64_t>(4, mine));
    EXPECT_EQ(alltoallv.send_bytes, 40u);
    EXPECT_EQ(alltoallv.recv_bytes, 4 * mine);
    const Event& reduce = c.Next(EventKind::kReduce);
    EXPECT_EQ(reduce.peer, 3);
    EXPECT_EQ(reduce.send_bytes, 32u);
    EXPECT_EQ(reduce.recv_bytes, r == 3 ? 32u : 0u);
    const Event& allreduce = c.Next(EventKind::kAllreduce);  // MPI_IN_PLACE
    EXPECT_EQ(allreduce.send_bytes, 20u);
    EXPECT_EQ(allreduce.recv_bytes, 20u);
    EXPECT_EQ(allreduce.peer, kNoRank);
    const Event& rs = c.Next(EventKind::kReduceScatter);
    EXPECT_EQ(rs.send_bytes, 40u);
    EXPECT_EQ(rs.recv_bytes, mine);
    EXPECT_EQ(rs.recv_counts, by_rank);
    const Event& rsb = c.Next(EventKind::kReduceScatter);
    EXPECT_EQ(rsb.send_bytes, 32u);
    EXPECT_EQ(rsb.recv_bytes, 8u);
    EXPECT_EQ(c.Next(EventKind::kScan).send_bytes, 4u);
    EXPECT_EQ(c.Next(EventKind::kExscan).recv_bytes, 4u);
  }
}

TEST(TracerCommunicators, MembersAreWorldRanksAndIdsAgree) {
  const TraceData t = TraceProgram("communicators", 4, Program("collectives_program"));
  ASSERT_EQ(t.ranks.size(), 4u);
  // id -> (members, ranks that recorded it)
  std::map<CommId, std::pair<std::vector<std::int32_t>, std::set<int>>> comms;
  CommTable table(4);
  for (int r = 0; r < 4; ++r) {
    for (const Event& e : t.ranks[r]) {
      if (e.kind != EventKind::kCommCreate) continue;
      EXPECT_NE(e.new_comm, kCommWorld);
      EXPECT_NE(e.new_comm, kCommSelf);
      auto& entry = comms[e.new_comm];
      if (entry.second.empty()) entry.first = e.members;
      EXPECT_EQ(entry.first, e.members) << "rank " << r << " disagrees on " << e.new_comm;
      entry.second.insert(r);
      EXPECT_NO_THROW(table.Add(e, r));
    }
  }
  std::multiset<std::vector<std::int32_t>> member_sets;
  for (const auto& [id, entry] : comms) {
    // Recorded by exactly its members.
    EXPECT_EQ(entry.second, std::set<int>(entry.first.begin(), entry.first.end())) << id;
    member_sets.insert(entry.first);
  }
  const std::vector<std::int32_t> all = {0, 1, 2, 3};
  EXPECT_EQ(member_sets.count({2, 0}), 1u);  // split, key = -rank
  EXPECT_EQ(member_sets.count({3, 1}), 1u);
  EXPECT_EQ(member_sets.count({1, 2, 3}), 2u);  // comm_create, and split without rank 0
  EXPECT_EQ(member_sets.count({0, 1}), 1u);     // cart rows
  EXPECT_EQ(member_sets.count({2, 3}), 1u);
  EXPECT_EQ(member_sets.count(all), 3u);  // two dups and the cartesian communicator
  EXPECT_EQ(comms.size(), 9u);            // every communicator has its own id

  // Traffic on a sub-communicator names world ranks.
  for (int r = 0; r < 4; ++r) {
    const auto calls = CallEvents(t.ranks[r]);
    auto split = std::find_if(calls.begin(), calls.end(), [](const Event& e) {
      return e.kind == EventKind::kCommCreate && e.value == static_cast<int>(CommOrigin::kSplit);
    });
    ASSERT_NE(split, calls.end());
    const CommId half = split->new_comm;
    EXPECT_EQ(split[1].kind, EventKind::kAllreduce);
    EXPECT_EQ(split[1].comm, half);
    const Event& bcast = split[2];
    EXPECT_EQ(bcast.kind, EventKind::kBcast);
    EXPECT_EQ(bcast.comm, half);
    EXPECT_EQ(bcast.peer, r % 2 == 0 ? 2 : 3);  // half rank 0
    const Event& p2p = split[3];
    EXPECT_EQ(p2p.comm, half);
    if (r >= 2) {
      EXPECT_EQ(p2p.kind, EventKind::kSend);
      EXPECT_EQ(p2p.peer, r - 2);
    } else {
      EXPECT_EQ(p2p.kind, EventKind::kRecv);  // posted with MPI_ANY_SOURCE
      EXPECT_EQ(p2p.peer, r + 2);
      EXPECT_EQ(p2p.tag, 77);
      EXPECT_EQ(p2p.bytes, 24u);
    }
    // Every communicator this rank created is freed, and the world is never freed.
    std::set<CommId> created, freed;
    for (const Event& e : calls) {
      if (e.kind == EventKind::kCommCreate) created.insert(e.new_comm);
      if (e.kind == EventKind::kCommFree) freed.insert(e.comm);
    }
    EXPECT_EQ(created, freed) << "rank " << r;
  }
}

TEST(TracerFortran, TracedExactlyLikeItsCTwin) {
  std::vector<std::vector<std::vector<Event>>> traces;
  std::vector<std::string> outputs;
  for (const char* name : {"twin_c", "twin_f", "twin_fh", "twin_f08"}) {
    const std::string dir = FreshDir(name);
    const auto run = RunMpi(4, Program(name), {}, dir);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    outputs.push_back(run.out);
    TraceData data = ReadTrace(TraceDirectory(dir));
    for (auto& rank : data.ranks) {
      rank = CallEvents(rank);
      for (Event& e : rank) e.wall_start_ns = e.wall_end_ns = 0;
    }
    traces.push_back(data.ranks);
  }
  ASSERT_EQ(traces[0].size(), 4u);
  EXPECT_GT(traces[0][0].size(), 10u);
  const char* names[] = {"twin_c", "twin_f (use mpi)", "twin_fh (mpif.h)",
                         "twin_f08 (use mpi_f08)"};
  for (std::size_t v = 1; v < traces.size(); ++v) {
    EXPECT_EQ(outputs[v], outputs[0]) << names[v];
    for (int r = 0; r < 4; ++r) {
      ASSERT_EQ(traces[v][r].size(), traces[0][r].size()) << names[v] << " rank " << r;
      for (std::size_t i = 0; i < traces[0][r].size(); ++i) {
        EXPECT_EQ(traces[v][r][i], traces[0][r][i])
            << names[v] << " rank " << r << " event " << i
            << ":\n  C:       " << FormatEvent(traces[0][r][i])
            << "\n  Fortran: " << FormatEvent(traces[v][r][i]);
      }
    }
  }
  // The Fortran-specific conversions the twins exercise: MPI_ANY_SOURCE resolved, 1-based
  // waitany index, MPI_IN_PLACE.
  const auto& rank0 = traces[3][0];
  auto recv = std::find_if(rank0.begin(), rank0.end(),
                           [](const Event& e) { return e.kind == EventKind::kRecv; });
  ASSERT_NE(recv, rank0.end());
  EXPECT_EQ(recv->peer, 1);
  EXPECT_EQ(recv->tag, 11);
  const auto& rank1 = traces[3][1];
  auto waitany = std::find_if(rank1.begin(), rank1.end(),
                              [](const Event& e) { return e.kind == EventKind::kWaitany; });
  ASSERT_NE(waitany, rank1.end());
  ASSERT_EQ(waitany->completed.size(), 1u);
  EXPECT_EQ(waitany->completed[0].tag, 20);
  EXPECT_EQ(waitany->completed[0].request, waitany->requests.at(0));
}

// Persistent requests, probes, MPI_Comm_create_group, MPI_Cart_sub, MPI_Comm_free and
// MPI_Sendrecv_replace (programs/coverage_c.c), event by event.
TEST(TracerCoverage, PersistentRequestsProbesAndCommunicators) {
  const TraceData t = TraceProgram("coverage", 4, Program("coverage_c"));
  ASSERT_EQ(t.ranks.size(), 4u);
  std::map<int, CommId> row_ids;  // per row of the 2x2 torus
  CommId even_id = 0;
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const int left = (r + 3) % 4, right = (r + 1) % 4;
    Cursor c(t.ranks[r], r);
    c.Next(EventKind::kInit);
    // MPI_Startall on the persistent ring, 3 times: an irecv and an isend per activation,
    // each with a fresh request id that the following waitall completes.
    std::set<RequestId> ids;
    for (int it = 0; it < 3; ++it) {
      const Event& irecv = c.Next(EventKind::kIrecv);
      EXPECT_EQ(irecv.peer, left);
      EXPECT_EQ(irecv.tag, 5);
      EXPECT_EQ(irecv.bytes, 12u);
      const Event& isend = c.Next(EventKind::kIsend);
      ExpectP2P(isend, right, 5, 12);
      const Event& waitall = c.Next(EventKind::kWaitall);
      EXPECT_EQ(waitall.requests, (std::vector<RequestId>{irecv.request, isend.request}));
      EXPECT_EQ(waitall.completed,
                (std::vector<Completion>{Recv(irecv.request, left, 5, 12), Sent(isend.request)}));
      ids.insert(irecv.request);
      ids.insert(isend.request);
    }
    EXPECT_EQ(ids.size(), 6u) << "every activation gets its own request id";
    // MPI_Start one by one: the receive first, then the synchronous send.
    const Event& irecv = c.Next(EventKind::kIrecv);
    EXPECT_EQ(irecv.peer, left);
    EXPECT_EQ(irecv.tag, 6);
    const Event& issend = c.Next(EventKind::kIsend);
    ExpectP2P(issend, right, 6, 8, /*sync=*/true);
    const Event& wait_send = c.Next(EventKind::kWait);
    EXPECT_EQ(wait_send.completed, (std::vector<Completion>{Sent(issend.request)}));
    const Event& wait_recv = c.Next(EventKind::kWait);
    EXPECT_EQ(wait_recv.completed, (std::vector<Completion>{Recv(irecv.request, left, 6, 8)}));
    // MPI_Request_free and the probes record nothing; the receives after them do.
    if (r == 0) {
      std::set<int> sources;
      for (int i = 1; i < 4; ++i) {
        const Event& recv = c.Next(EventKind::kRecv);
        sources.insert(recv.peer);
        EXPECT_EQ(recv.tag, 40);
        EXPECT_EQ(recv.bytes, 4u * static_cast<std::uint64_t>(recv.peer + 1));
        // MPI_Probe(MPI_ANY_SOURCE) chose the source it then received from.
        EXPECT_EQ(recv.recv_peer, kAnySource) << "receive " << i;
      }
      EXPECT_EQ(sources, (std::set<int>{1, 2, 3}));
      ExpectP2P(c.Next(EventKind::kSend), 1, 41, 4);
    } else {
      ExpectP2P(c.Next(EventKind::kSend), 0, 40, 4u * static_cast<std::uint64_t>(r + 1));
      if (r == 1) {
        const Event& recv = c.Next(EventKind::kRecv);
        EXPECT_EQ(recv.peer, 0);
        EXPECT_EQ(recv.tag, 41);
        EXPECT_NE(recv.recv_peer, kAnySource) << "probed for rank 0 by name";
      }
    }
    // Matched probes: rank 2's two messages, received by rank 3 through MPI_Mrecv and
    // MPI_Imrecv. The Mprobe named rank 2; the Improbe was posted with MPI_ANY_SOURCE, so
    // the irecv is recorded as a wildcard one and its completion names rank 2.
    if (r == 2) {
      ExpectP2P(c.Next(EventKind::kSend), 3, 60, 12);
      ExpectP2P(c.Next(EventKind::kSend), 3, 61, 8);
    } else if (r == 3) {
      const Event& mrecv = c.Next(EventKind::kRecv);
      ExpectP2P(mrecv, 2, 60, 12);
      EXPECT_NE(mrecv.recv_peer, kAnySource);
      const Event& imrecv = c.Next(EventKind::kIrecv);
      ExpectP2P(imrecv, kAnySource, 61, 8);
      const Event& wait = c.Next(EventKind::kWait);
      EXPECT_EQ(wait.completed, (std::vector<Completion>{Recv(imrecv.request, 2, 61, 8)}));
    }
    // MPI_Comm_create_group, called by world ranks 0 and 2 only.
    if (r % 2 == 0) {
      const Event& created = c.Next(EventKind::kCommCreate);
      EXPECT_EQ(created.members, (std::vector<std::int32_t>{0, 2}));
      EXPECT_EQ(created.comm, kCommWorld);
      EXPECT_EQ(created.value, static_cast<std::int64_t>(CommOrigin::kCreate));
      if (even_id == 0) even_id = created.new_comm;
      EXPECT_EQ(created.new_comm, even_id) << "both members name it alike";
      EXPECT_EQ(c.Next(EventKind::kAllreduce).comm, even_id);
      EXPECT_EQ(c.Next(EventKind::kCommFree).comm, even_id);
    }
    // The torus, its row (MPI_Cart_sub), a bcast in the row, both freed.
    const Event& cart = c.Next(EventKind::kCommCreate);
    EXPECT_EQ(cart.members, (std::vector<std::int32_t>{0, 1, 2, 3}));
    EXPECT_EQ(cart.value, static_cast<std::int64_t>(CommOrigin::kCart));
    const Event& row = c.Next(EventKind::kCommCreate);
    const std::int32_t first = r / 2 * 2;
    EXPECT_EQ(row.members, (std::vector<std::int32_t>{first, first + 1}));
    EXPECT_EQ(row.comm, cart.new_comm);
    if (row_ids.count(first) == 0) row_ids[first] = row.new_comm;
    EXPECT_EQ(row.new_comm, row_ids[first]);
    const Event& bcast = c.Next(EventKind::kBcast);
    EXPECT_EQ(bcast.comm, row.new_comm);
    EXPECT_EQ(bcast.peer, first) << "root as a world rank";
    EXPECT_EQ(c.Next(EventKind::kCommFree).comm, row.new_comm);
    EXPECT_EQ(c.Next(EventKind::kCommFree).comm, cart.new_comm);
    // MPI_Sendrecv_replace: both halves with the partner.
    const Event& sr = c.Next(EventKind::kSendrecv);
    EXPECT_EQ(sr.peer, r ^ 1);
    EXPECT_EQ(sr.tag, 50);
    EXPECT_EQ(sr.bytes, 8u);
    EXPECT_EQ(sr.recv_peer, r ^ 1);
    EXPECT_EQ(sr.recv_tag, 50);
    EXPECT_EQ(sr.recv_bytes, 8u);
    // An isend whose request is freed at once, then the matching receive.
    const Event& forgotten = c.Next(EventKind::kIsend);
    ExpectP2P(forgotten, right, 70, 4);
    EXPECT_GT(forgotten.request, issend.request);
    const Event& recv70 = c.Next(EventKind::kRecv);
    EXPECT_EQ(recv70.peer, left);
    EXPECT_EQ(recv70.tag, 70);
    c.Next(EventKind::kAllreduce);
    c.Next(EventKind::kFinalize);
    EXPECT_TRUE(c.Done());
  }
  EXPECT_NE(row_ids[0], row_ids[2]);
}

// Non-blocking collectives (programs/nbcoll_c.c): each recorded as its blocking collective,
// with its bytes, root and communicator, at the completion that finishes it (before that
// completion's event); the completions list only point-to-point requests.
TEST(TracerCoverage, NonBlockingCollectivesAreRecordedAsTheirCollective) {
  const TraceData t = TraceProgram("nbcoll", 4, Program("nbcoll_c"));
  ASSERT_EQ(t.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    Cursor c(t.ranks[r], r);
    c.Next(EventKind::kInit);
    c.Next(EventKind::kBarrier);
    EXPECT_TRUE(c.Next(EventKind::kWait).requests.empty());
    // Started before the ring exchange, completed with it by one waitall.
    const Event& irecv = c.Next(EventKind::kIrecv);
    EXPECT_EQ(irecv.peer, (r + 3) % 4);
    const Event& isend = c.Next(EventKind::kIsend);
    ExpectP2P(isend, (r + 1) % 4, 7, 8);
    const Event& allreduce = c.Next(EventKind::kAllreduce);
    EXPECT_EQ(allreduce.send_bytes, 32u);
    EXPECT_EQ(allreduce.recv_bytes, 32u);
    EXPECT_EQ(allreduce.comm, kCommWorld);
    const Event& waitall = c.Next(EventKind::kWaitall);
    EXPECT_EQ(waitall.requests, (std::vector<RequestId>{irecv.request, isend.request}));
    EXPECT_EQ(waitall.completed.size(), 2u);
    const Event& bcast = c.Next(EventKind::kBcast);
    EXPECT_EQ(bcast.peer, 1);
    EXPECT_EQ(r == 1 ? bcast.send_bytes : bcast.recv_bytes, 16u);
    c.Next(EventKind::kWait);
    const Event& alltoall = c.Next(EventKind::kAlltoall);
    EXPECT_EQ(alltoall.send_bytes, 4u * 16u);
    c.Next(EventKind::kWait);
    const Event& allgatherv = c.Next(EventKind::kAllgatherv);
    EXPECT_EQ(allgatherv.send_bytes, 8u * (1 + r % 2));
    EXPECT_EQ(allgatherv.recv_bytes, 8u * (1 + 2 + 1 + 2));
    c.Next(EventKind::kWait);
    const Event& reduce = c.Next(EventKind::kReduce);
    EXPECT_EQ(reduce.peer, 0);
    EXPECT_EQ(reduce.send_bytes, 24u);
    c.Next(EventKind::kWait);
    // The scan is recorded at the test when the test found it done, else at the wait.
    const bool done_by_test = c.Peek().kind == EventKind::kScan;
    if (done_by_test) {
      EXPECT_EQ(c.Next(EventKind::kScan).send_bytes, 8u);
    }
    EXPECT_TRUE(c.Next(EventKind::kTest).requests.empty());
    if (!done_by_test) {
      EXPECT_EQ(c.Next(EventKind::kScan).send_bytes, 8u);
    }
    EXPECT_TRUE(c.Next(EventKind::kWait).requests.empty());
    c.Next(EventKind::kAllreduce);
    c.Next(EventKind::kFinalize);
    EXPECT_TRUE(c.Done());
  }
}

// Neighbourhood collectives (programs/neighbor_c.c, 6 ranks) are recorded as the standard
// defines them: an irecv from every source, an isend to every destination (MPI_PROC_NULL
// neighbours skipped), tag kNeighborTag, on the topology's communicator, then one waitall
// that completes them all with the received bytes; a non-blocking one the same where it
// starts. The program's results are unchanged and the trace replays: every message finds
// its receive.
TEST(TracerCoverage, NeighbourhoodCollectivesAreRecordedAsTheirMessages) {
  const std::string dir = FreshDir("neighbor");
  const auto plain = RunMpi(6, Program("neighbor_c"), {}, "");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto traced = RunMpi(6, Program("neighbor_c"), {}, dir);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.err.find("pas2p-trace"), std::string::npos) << traced.err;
  EXPECT_NE(plain.out.find("neighbor checksum"), std::string::npos) << plain.out;
  EXPECT_EQ(traced.out, plain.out);
  const TraceData t = ReadTrace(TraceDirectory(dir), /*require_complete=*/true);
  ASSERT_EQ(t.ranks.size(), 6u);
  EXPECT_TRUE(t.metadata.untraced_calls.empty());
  // Expects the irecvs from `from` and the isends to `to` (world ranks, -1: no neighbour)
  // with these bytes, then the waitall of them all; returns the communicator.
  auto exchange = [](Cursor& c, const std::vector<int>& from, const std::vector<std::uint64_t>& in,
                     const std::vector<int>& to, const std::vector<std::uint64_t>& out) {
    std::vector<RequestId> ids;
    std::map<RequestId, std::pair<int, std::uint64_t>> received;
    CommId comm = 0;
    for (std::size_t i = 0; i < from.size(); ++i) {
      if (from[i] < 0) continue;
      const Event& e = c.Next(EventKind::kIrecv);
      EXPECT_EQ(e.peer, from[i]) << FormatEvent(e);
      EXPECT_EQ(e.tag, kNeighborTag) << FormatEvent(e);
      EXPECT_EQ(e.bytes, in[i]) << FormatEvent(e);
      comm = e.comm;
      ids.push_back(e.request);
      received[e.request] = {from[i], in[i]};
    }
    for (std::size_t i = 0; i < to.size(); ++i) {
      if (to[i] < 0) continue;
      const Event& e = c.Next(EventKind::kIsend);
      EXPECT_EQ(e.peer, to[i]) << FormatEvent(e);
      EXPECT_EQ(e.tag, kNeighborTag) << FormatEvent(e);
      EXPECT_EQ(e.bytes, out[i]) << FormatEvent(e);
      EXPECT_EQ(e.comm, comm);
      ids.push_back(e.request);
    }
    const Event& wait = c.Next(EventKind::kWaitall);
    EXPECT_EQ(wait.requests, ids);
    EXPECT_EQ(wait.completed.size(), ids.size());
    for (const Completion& done : wait.completed) {
      const auto it = received.find(done.request);
      if (it == received.end()) continue;
      EXPECT_EQ(done.peer, it->second.first);
      EXPECT_EQ(done.tag, kNeighborTag);
      EXPECT_EQ(done.bytes, it->second.second);
    }
    EXPECT_NE(comm, kCommWorld);
    return comm;
  };
  for (int r = 0; r < 6; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    Cursor c(t.ranks[r], r);
    c.Next(EventKind::kInit);
    const CommId cart = c.Next(EventKind::kCommCreate).new_comm;
    // 3 x 2, rank = 2x + y: along x (periodic) the ranks 2 away, along y (not) r -+ 1.
    const int x = r / 2, y = r % 2;
    const std::vector<int> grid = {2 * ((x + 2) % 3) + y, 2 * ((x + 1) % 3) + y,
                                   y == 0 ? -1 : r - 1, y == 1 ? -1 : r + 1};
    EXPECT_EQ(exchange(c, grid, {16, 16, 16, 16}, grid, {16, 16, 16, 16}), cart);
    EXPECT_EQ(exchange(c, grid, {4, 4, 4, 4}, grid, {4, 4, 4, 4}), cart);
    // The distributed graph is found where it is first used.
    const CommId graph = c.Next(EventKind::kCommCreate).new_comm;
    const std::vector<int> from = {(r + 5) % 6, (r + 4) % 6}, to = {(r + 1) % 6, (r + 2) % 6};
    EXPECT_EQ(exchange(c, from, {8, 24}, to, {8, 24}), graph);
    EXPECT_EQ(exchange(c, from, {8, 8}, to, {8, 8}), graph);
    // MPI_Ineighbor_alltoall: the same messages where it starts; its own request is not a
    // point-to-point one, so the MPI_Wait on it lists none.
    EXPECT_EQ(exchange(c, grid, {8, 8, 8, 8}, grid, {8, 8, 8, 8}), cart);
    EXPECT_TRUE(c.Next(EventKind::kWait).requests.empty());
    c.Next(EventKind::kAllreduce);
    c.Next(EventKind::kCommFree);
    c.Next(EventKind::kCommFree);
    c.Next(EventKind::kFinalize);
    EXPECT_TRUE(c.Done());
  }
  const auto sim = testing::Run(Quote(PAS2P_EXE) + " simulate " + Quote(dir));
  EXPECT_EQ(sim.exit_code, 0) << sim.out << sim.err;
}

// Runs each program traced at `np` ranks; returns their stdout and their call events (compute
// bursts and times left out, so that twins in different languages compare equal).
void TraceTwins(const std::vector<std::string>& names, std::vector<std::string>* outputs,
                std::vector<std::vector<std::vector<Event>>>* traces, int np = 4) {
  for (const std::string& name : names) {
    const std::string dir = FreshDir("twin-" + name);
    const auto run = RunMpi(np, Program(name), {}, dir);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    EXPECT_EQ(run.err.find("pas2p-trace"), std::string::npos) << run.err;
    outputs->push_back(run.out);
    TraceData data = ReadTrace(TraceDirectory(dir), /*require_complete=*/true);
    for (auto& rank : data.ranks) {
      rank = CallEvents(rank);
      for (Event& e : rank) e.wall_start_ns = e.wall_end_ns = 0;
    }
    traces->push_back(data.ranks);
  }
}

// The Fortran entry points of the non-blocking collectives record exactly what the C ones
// do, event by event, and the collective requests they return complete in mpi_wait_ /
// mpi_waitall_ / mpi_test_ without being listed as point-to-point requests:
//   nbcoll_c.c vs nbcoll_f.f90 (`use mpi`: mpi_ibarrier_, mpi_iallreduce_, mpi_ibcast_,
//   mpi_ialltoall_, mpi_iallgatherv_, mpi_ireduce_, mpi_iscan_) and nbcoll_f08.f90
//   (`use mpi_f08`: the same calls through their _f08 names);
//   nbcoll_more_c.c vs nbcoll_more_f.f90 (mpi_igather_, mpi_igatherv_, mpi_iscatter_,
//   mpi_iscatterv_, mpi_iallgather_, mpi_ialltoallv_, mpi_iexscan_, mpi_ireduce_scatter_,
//   mpi_ireduce_scatter_block_).
TEST(TracerCoverage, FortranNonBlockingCollectivesTracedExactlyLikeC) {
  struct Twins {
    std::vector<std::string> names;  // the C program first
    std::vector<EventKind> collectives;
  };
  const std::vector<Twins> groups = {
      {{"nbcoll_c", "nbcoll_f", "nbcoll_f08"},
       {EventKind::kBarrier, EventKind::kAllreduce, EventKind::kBcast, EventKind::kAlltoall,
        EventKind::kAllgatherv, EventKind::kReduce, EventKind::kScan}},
      {{"nbcoll_more_c", "nbcoll_more_f"},
       {EventKind::kGather, EventKind::kGatherv, EventKind::kScatter, EventKind::kScatterv,
        EventKind::kAllgather, EventKind::kAlltoallv, EventKind::kExscan,
        EventKind::kReduceScatter}}};
  for (const Twins& group : groups) {
    std::vector<std::string> outputs;
    std::vector<std::vector<std::vector<Event>>> traces;
    TraceTwins(group.names, &outputs, &traces);
    ASSERT_EQ(traces.size(), group.names.size());
    EXPECT_NE(outputs[0].find("checksum"), std::string::npos) << outputs[0];
    ASSERT_EQ(traces[0].size(), 4u);
    for (std::size_t v = 1; v < group.names.size(); ++v) {
      SCOPED_TRACE(group.names[v]);
      EXPECT_EQ(outputs[v], outputs[0]);
      ASSERT_EQ(traces[v].size(), traces[0].size());
      for (std::size_t r = 0; r < traces[0].size(); ++r) {
        // A collective is recorded at the call that completes it: the programs' MPI_Test of
        // an MPI_Iscan, or the MPI_Wait after it when the test found it running. Those tests
        // name no request, and are left out of the comparison.
        auto without_bare_tests = [](std::vector<Event> events) {
          std::erase_if(events, [](const Event& e) {
            return e.kind == EventKind::kTest && e.requests.empty() && e.completed.empty();
          });
          return events;
        };
        const auto c = without_bare_tests(traces[0][r]);
        const auto f = without_bare_tests(traces[v][r]);
        // Every non-blocking collective of the program is in the Fortran trace (not only
        // equal to C's, which would also hold if both missed one).
        for (EventKind kind : group.collectives) {
          EXPECT_NE(
              std::find_if(f.begin(), f.end(), [&](const Event& e) { return e.kind == kind; }),
              f.end())
              << "rank " << r << ": no " << EventKindName(kind) << " in the Fortran trace";
        }
        ASSERT_EQ(f.size(), c.size()) << "rank " << r;
        for (std::size_t i = 0; i < c.size(); ++i) {
          EXPECT_EQ(f[i], c[i]) << "rank " << r << " event " << i
                                << ":\n  C:       " << FormatEvent(c[i])
                                << "\n  Fortran: " << FormatEvent(f[i]);
        }
      }
    }
  }
}

// The Fortran entry points of the neighbourhood collectives (neighbor_f.f90) record exactly
// what the C ones do (neighbor_c.c), event by event.
TEST(TracerCoverage, FortranNeighbourhoodCollectivesTracedExactlyLikeC) {
  std::vector<std::string> outputs;
  std::vector<std::vector<std::vector<Event>>> traces;
  TraceTwins({"neighbor_c", "neighbor_f"}, &outputs, &traces, 6);
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_NE(outputs[0].find("neighbor checksum"), std::string::npos) << outputs[0];
  EXPECT_EQ(outputs[1], outputs[0]);
  ASSERT_EQ(traces[0].size(), 6u);
  ASSERT_EQ(traces[1].size(), 6u);
  for (std::size_t r = 0; r < 6; ++r) {
    const auto& c = traces[0][r];
    const auto& f = traces[1][r];
    // Every message is there (equal would also hold if both missed them): 3 irecvs and 3
    // isends in each of the 3 collectives on the grid, 2 and 2 in the 2 on the graph.
    EXPECT_EQ(
        std::count_if(c.begin(), c.end(), [](const Event& e) { return e.tag == kNeighborTag; }),
        3 * 6 + 2 * 4)
        << "rank " << r;
    ASSERT_EQ(f.size(), c.size()) << "rank " << r;
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_EQ(f[i], c[i]) << "rank " << r << " event " << i
                            << ":\n  C:       " << FormatEvent(c[i])
                            << "\n  Fortran: " << FormatEvent(f[i]);
    }
  }
}

// One-sided and MPI-IO calls (programs/untraced_c.c) are counted, not traced: the events are
// those of the traced calls only, and trace.json says how many untraced calls each function
// made, summed over the ranks.
TEST(TracerCoverage, UntracedCallsAreCountedInTheMetadata) {
  const std::string file = FreshDir("untraced-file") + ".dat";
  const TraceData t = TraceProgram("untraced", 4, Program("untraced_c"), {file});
  ASSERT_EQ(t.ranks.size(), 4u);
  const std::map<std::string, std::uint64_t> expected = {{"MPI_File_close", 4},
                                                         {"MPI_File_open", 4},
                                                         {"MPI_File_write_at_all", 4},
                                                         {"MPI_Put", 4},
                                                         {"MPI_Win_fence", 8}};
  EXPECT_EQ(t.metadata.untraced_calls, expected);
  for (int r = 0; r < 4; ++r) {
    Cursor c(t.ranks[r], r);
    c.Next(EventKind::kInit);
    c.Next(EventKind::kAllreduce);
    c.Next(EventKind::kFinalize);
    EXPECT_TRUE(c.Done());
  }
  // Round trip of the field through trace.json.
  EXPECT_EQ(MetadataFromJson(MetadataToJson(t.metadata), "trace.json").untraced_calls, expected);
  std::remove(file.c_str());
}

// The Fortran entry points of the same calls (mpi_send_init_, mpi_startall_, mpi_probe_,
// mpi_comm_create_group_, ...) record exactly what the C ones do.
TEST(TracerCoverage, FortranTracedExactlyLikeC) {
  std::vector<std::vector<std::vector<Event>>> traces;
  std::vector<std::string> outputs;
  for (const char* name : {"coverage_c", "coverage_f"}) {
    const std::string dir = FreshDir(std::string("twin-") + name);
    const auto run = RunMpi(4, Program(name), {}, dir);
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    EXPECT_EQ(run.err.find("pas2p-trace"), std::string::npos) << run.err;
    outputs.push_back(run.out);
    TraceData data = ReadTrace(TraceDirectory(dir), /*require_complete=*/true);
    for (auto& rank : data.ranks) {
      rank = CallEvents(rank);
      for (Event& e : rank) e.wall_start_ns = e.wall_end_ns = 0;
    }
    traces.push_back(data.ranks);
  }
  EXPECT_NE(outputs[0].find("coverage checksum"), std::string::npos) << outputs[0];
  EXPECT_EQ(outputs[1], outputs[0]);
  ASSERT_EQ(traces[1].size(), traces[0].size());
  for (std::size_t r = 0; r < traces[0].size(); ++r) {
    // Rank 0's probed receives (tag 40) arrive in whatever order the senders got there:
    // compared as a set, everything else in order.
    auto split = [](const std::vector<Event>& events, std::vector<Event>* probed) {
      std::vector<Event> rest;
      for (const Event& e : events) {
        (e.kind == EventKind::kRecv && e.tag == 40 ? probed : &rest)->push_back(e);
      }
      std::sort(probed->begin(), probed->end(),
                [](const Event& a, const Event& b) { return a.peer < b.peer; });
      return rest;
    };
    std::vector<Event> c_probed, f_probed;
    const auto c = split(traces[0][r], &c_probed), f = split(traces[1][r], &f_probed);
    EXPECT_EQ(f_probed, c_probed) << "rank " << r;
    ASSERT_EQ(f.size(), c.size()) << "rank " << r;
    for (std::size_t i = 0; i < c.size(); ++i) {
      EXPECT_EQ(f[i], c[i]) << "rank " << r << " event " << i
                            << ":\n  C:       " << FormatEvent(c[i])
                            << "\n  Fortran: " << FormatEvent(f[i]);
    }
  }
}

// Rank 0 waits ~300 ms inside MPI_Probe for rank 1's message: that time is waiting, so no
// compute burst of rank 0 may contain it (unwrapped, the probe would sit inside one).
TEST(TracerCoverage, TimeInsideABlockingProbeIsNotCompute) {
  const TraceData t = TraceProgram("coverage-sleep", 4, Program("coverage_c"), {"sleep"});
  ASSERT_EQ(t.ranks.size(), 4u);
  std::int64_t longest_burst_ns = 0, last_recv_end_ns = -1;
  for (const Event& e : t.ranks[0]) {
    if (e.kind == EventKind::kCompute) {
      longest_burst_ns = std::max(longest_burst_ns, e.wall_end_ns - e.wall_start_ns);
    }
    if (e.kind == EventKind::kRecv && e.tag == 40) last_recv_end_ns = e.wall_end_ns;
  }
  EXPECT_LT(longest_burst_ns, 150'000'000) << "a compute burst holds the probe's wait";
  // The wait happened (rank 1 slept): rank 1's message came last, after the sleep.
  EXPECT_GT(last_recv_end_ns, 250'000'000);
}

TEST(TracerTransparency, ApplicationStdoutUnchanged) {
  for (const char* name : {"p2p_program", "collectives_program", "twin_f"}) {
    const auto plain = RunMpi(4, Program(name), {}, "");
    const auto traced = RunMpi(4, Program(name), {}, FreshDir(std::string("stdout-") + name));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_EQ(traced.exit_code, 0) << traced.err;
    EXPECT_FALSE(plain.out.empty());
    EXPECT_EQ(traced.out, plain.out) << name;
  }
}

TEST(TracerFailures, AbortLeavesACutTraceMarkedIncomplete) {
  const std::string dir = FreshDir("abort");
  const auto run = RunMpi(2, Program("failing_program"), {"abort"}, dir);
  EXPECT_NE(run.exit_code, 0);
  TraceDirectory trace(dir);
  EXPECT_EQ(trace.metadata().status, "incomplete");
  EXPECT_NE(trace.metadata().status_reason.find("MPI_Abort(errorcode=3)"), std::string::npos)
      << trace.metadata().status_reason;
  EXPECT_NE(trace.metadata().status_reason.find("rank 1"), std::string::npos);
  std::vector<std::string> warnings;
  const TraceData data = ReadTrace(trace, /*require_complete=*/false, &warnings);
  EXPECT_FALSE(warnings.empty());
  const auto calls = CallEvents(data.ranks.at(1));
  ASSERT_GE(calls.size(), 6u);
  EXPECT_EQ(calls[1].kind, EventKind::kAllreduce);
  EXPECT_EQ(calls[4].kind, EventKind::kSend);
  EXPECT_EQ(calls.back().kind, EventKind::kAbort);
  EXPECT_EQ(calls.back().value, 3);
  EXPECT_THROW(ReadTrace(trace, /*require_complete=*/true), TraceError);
}

TEST(TracerFailures, SegfaultLeavesAReadablePrefix) {
  const std::string dir = FreshDir("segv");
  const auto run = RunMpi(2, Program("failing_program"), {"segv"}, dir);
  EXPECT_NE(run.exit_code, 0);
  TraceDirectory trace(dir);
  EXPECT_NE(trace.metadata().status, "complete");
  std::vector<std::string> warnings;
  const TraceData data = ReadTrace(trace, /*require_complete=*/false, &warnings);
  ASSERT_FALSE(warnings.empty());
  // The crashing rank's events up to the crash, flushed by the signal handler.
  const auto calls = CallEvents(data.ranks.at(1));
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].kind, EventKind::kInit);
  EXPECT_EQ(calls[3].kind, EventKind::kAllreduce);
  EXPECT_EQ(calls[4].kind, EventKind::kSend);
  EXPECT_EQ(calls[4].peer, 0);
  // The rank mpirun killed kept its events too.
  const auto rank0 = CallEvents(data.ranks.at(0));
  ASSERT_GE(rank0.size(), 5u);
  EXPECT_EQ(rank0[4].kind, EventKind::kRecv);
}

// Sets an environment variable for the ranks mpirun starts (they inherit it) while alive.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

bool PapiHasEvent(const std::string& name) {
  const auto run = testing::Run("papi_command_line " + name + " 2>&1");
  return run.out.find("Successfully added: " + name) != std::string::npos;
}

TEST(TracerCounters, PapiCountersWhereTheMachineHasThem) {
  const TraceData t = TraceProgram("papi", 4, Program("p2p_program"));
  if (!t.metadata.HasInstructions()) {
    // The tracer must say why; the skip message quotes it.
    ASSERT_FALSE(t.metadata.counters_note.empty());
    EXPECT_NE(t.metadata.counters_note.find("PAPI_TOT_INS"), std::string::npos)
        << t.metadata.counters_note;
    for (const Event& e : t.ranks[0]) {
      EXPECT_EQ(e.instructions, kNotMeasured) << FormatEvent(e);
    }
    GTEST_SKIP() << "no instruction counter on this machine, so there is nothing to check "
                    "against: the tracer's PAPI setup recorded '"
                 << t.metadata.counters_note
                 << "' (a VM without a virtual PMU; `papi_avail -e PAPI_TOT_INS` says NOT "
                    "available). CPU time is checked by TracerP2P, the counter read path by "
                    "TracerCounters.ReadPathWithSoftwareEvents";
  }
  std::int64_t instructions = 0;
  for (const Event& e : t.ranks[0]) {
    if (e.kind == EventKind::kCompute) {
      EXPECT_GE(e.instructions, 0);
      instructions += e.instructions;
    }
  }
  EXPECT_GT(instructions, 0);
}

// The counter path (PAPI_library_init, adding events, PAPI_read around every call, deltas
// per burst, trace.json) run with software events, which exist without hardware counters:
// perf::TASK-CLOCK counts the task's CPU nanoseconds, so per rank its sum over the bursts
// must match the bursts' thread CPU time.
TEST(TracerCounters, ReadPathWithSoftwareEvents) {
  if (!PapiHasEvent("perf::TASK-CLOCK") || !PapiHasEvent("perf::CONTEXT-SWITCHES")) {
    GTEST_SKIP() << "PAPI cannot add perf::TASK-CLOCK / perf::CONTEXT-SWITCHES here "
                    "(papi_command_line fails: no perf_event component)";
  }
  ScopedEnv env("PAS2P_COUNTER_EVENTS", "perf::TASK-CLOCK,perf::CONTEXT-SWITCHES");
  const TraceData t = TraceProgram("papi-soft", 4, Program("p2p_program"));
  EXPECT_EQ(t.metadata.counters,
            (std::vector<std::string>{"perf::TASK-CLOCK", "perf::CONTEXT-SWITCHES"}));
  EXPECT_FALSE(t.metadata.HasInstructions()) << "the names say what was measured";
  for (int r = 0; r < 4; ++r) {
    std::int64_t task_clock_ns = 0, cpu_ns = 0, bursts = 0;
    for (const Event& e : t.ranks[r]) {
      if (e.kind != EventKind::kCompute) {
        EXPECT_EQ(e.instructions, kNotMeasured) << FormatEvent(e);
        continue;
      }
      ++bursts;
      EXPECT_GE(e.instructions, 0) << FormatEvent(e);
      EXPECT_GE(e.cycles, 0) << FormatEvent(e);
      task_clock_ns += e.instructions;
      cpu_ns += e.cpu_ns;
    }
    EXPECT_GT(bursts, 5) << "rank " << r;
    EXPECT_GT(task_clock_ns, 0) << "rank " << r;
    EXPECT_NEAR(static_cast<double>(task_clock_ns), static_cast<double>(cpu_ns),
                0.25 * static_cast<double>(cpu_ns) + 2e6)
        << "rank " << r;
  }
}

// An event PAPI does not know is left out and the note names it; the other one is kept.
TEST(TracerCounters, UnavailableEventIsNamedAndLeftOut) {
  const bool soft = PapiHasEvent("perf::TASK-CLOCK");
  ScopedEnv env("PAS2P_COUNTER_EVENTS",
                soft ? "PAS2P_NO_SUCH_EVENT,perf::TASK-CLOCK" : "PAS2P_NO_SUCH_EVENT");
  const TraceData t = TraceProgram("papi-missing", 4, Program("p2p_program"));
  EXPECT_NE(t.metadata.counters_note.find("PAS2P_NO_SUCH_EVENT not available"), std::string::npos)
      << t.metadata.counters_note;
  EXPECT_EQ(t.metadata.counters,
            soft ? std::vector<std::string>{"perf::TASK-CLOCK"} : std::vector<std::string>{});
  for (const Event& e : t.ranks[0]) {
    EXPECT_EQ(e.instructions, kNotMeasured) << FormatEvent(e);
    if (e.kind == EventKind::kCompute && soft) {
      EXPECT_GE(e.cycles, 0) << FormatEvent(e);
    }
  }
}

}  // namespace
}  // namespace pas2p
