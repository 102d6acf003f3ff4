#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "pas2p/core/error.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "synthetic.h"

namespace pas2p::phases {
namespace {

using testing::MemoryTrace;

Signature Analyze(TraceData data, AnalyzeOptions options = {}) {
  MemoryTrace trace(std::move(data));
  return AnalyzeTrace(trace, options);
}

const Phase& Heaviest(const Signature& sig) {
  return *std::max_element(sig.phases.begin(), sig.phases.end(),
                           [](const Phase& a, const Phase& b) { return a.share < b.share; });
}

int CountKind(const Phase& p, int rank, EventKind kind) {
  int n = 0;
  for (const RankPhase& rp : p.ranks) {
    if (rp.rank != rank) continue;
    for (const PhaseEvent& e : rp.events) n += e.kind == kind;
  }
  return n;
}

void ExpectSignatureHolds(const Signature& sig) {
  EXPECT_NEAR(sig.pet_s, sig.traced_time_s, 0.03 * sig.traced_time_s) << FormatSignatureTable(sig);
  EXPECT_GE(sig.coverage, 0.95) << FormatSignatureTable(sig);
}

TEST(Phases, StencilMainLoopHasWeight200) {
  testing::StencilSpec spec;
  Signature sig = Analyze(MakeStencil(spec));
  const Phase& main = Heaviest(sig);
  EXPECT_EQ(main.weight, 200) << FormatSignatureTable(sig);
  EXPECT_TRUE(main.relevant);
  ASSERT_EQ(main.ranks.size(), 16u);
  EXPECT_EQ(CountKind(main, 5, EventKind::kIsend), 4);
  EXPECT_EQ(CountKind(main, 5, EventKind::kIrecv), 4);
  EXPECT_EQ(CountKind(main, 5, EventKind::kWaitall), 1);
  EXPECT_NE(main.description.find("4 isends to grid neighbours (4 x 4, periodic)"),
            std::string::npos)
      << main.description;
  // Start-up and shutdown are phases of weight 1 and do not hide the loop.
  EXPECT_EQ(sig.phases.size(), 3u) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
  // Compute per occurrence: about 200 us per rank.
  EXPECT_NEAR(main.ranks[5].compute.cpu_ns.mean, 200000, 20000);
  EXPECT_GT(main.ranks[5].compute.cpu_ns.stddev(), 0);
  // The bytes of the halo messages.
  for (const PhaseEvent& e : main.ranks[5].events) {
    if (e.kind == EventKind::kIsend) {
      EXPECT_EQ(e.bytes.mean, 8192);
    }
  }
}

TEST(Phases, SlowlyDriftingComputeStillMatches) {
  testing::StencilSpec spec;
  spec.drift = 0.004;  // +80% over the run, 0.4% per iteration
  spec.noise = 0.02;
  Signature sig = Analyze(MakeStencil(spec));
  EXPECT_EQ(Heaviest(sig).weight, 200) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
}

TEST(Phases, DifferentComputeIsADifferentPhaseWhenTheThresholdIsTight) {
  testing::StencilSpec spec;
  spec.drift = 0.004;
  spec.noise = 0.0;
  AnalyzeOptions tight;
  tight.loop_compute_similarity = 0.001;
  tight.similarity = 0.001;
  tight.compute_floor_ns = 0;
  Signature sig = Analyze(MakeStencil(spec), tight);
  EXPECT_LT(Heaviest(sig).weight, 200) << FormatSignatureTable(sig);
}

// One exchange with `peer`: irecv, send, wait (a step of a reduction written by hand).
void Exchange(testing::Gen& g, const std::vector<int>& peer, std::uint64_t bytes, int tag,
              std::int64_t cpu_ns) {
  const int n = g.nprocs();
  std::vector<RequestId> req(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    g.Compute(r, cpu_ns);
    req[r] = g.NewRequest(r);
    g.Local(r, MakeIrecv(peer[r], tag, bytes, req[r]));
    g.Local(r, MakeSend(peer[r], tag, bytes), 1500);
  }
  std::vector<std::int64_t> ready(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) ready[r] = g.MaxClock({r, peer[r]}) + 3000;
  for (int r = 0; r < n; ++r) {
    Event wait;
    wait.kind = EventKind::kWait;
    wait.requests = {req[r]};
    wait.completed = {Completion{req[r], peer[r], tag, bytes}};
    g.Blocking(r, wait, ready[r]);
  }
}

// A conjugate-gradient solver's shape: `outer` x { dot product, `inner` x { matvec, two dot
// products }, matvec, dot product, one more dot product }, a dot product being a reduction in
// log2 P exchange steps (XOR partners) and the matvec one large exchange. Where two outer
// iterations meet, three dot products follow one another, two everywhere else.
TraceData MakeSolverWithOuterDots(int nprocs, int outer, int inner) {
  testing::Gen g(nprocs, "solver");
  g.Init();
  const int bits = std::countr_zero(static_cast<unsigned>(nprocs));
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  for (int r = 0; r < nprocs; ++r) all[r] = r;
  auto xor_partner = [nprocs](int bit) {
    std::vector<int> p(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r) p[r] = r ^ (1 << bit);
    return p;
  };
  auto dot = [&]() {
    for (int b = bits - 1; b >= 0; --b) Exchange(g, xor_partner(b), 8, 1 + b, 2000);
  };
  // The matvec: its own reduction (lowest bit first, large vectors), then a transpose.
  std::vector<int> transpose(static_cast<std::size_t>(nprocs));
  for (int r = 0; r < nprocs; ++r) transpose[r] = nprocs - 1 - r;
  auto matvec = [&]() {
    for (int b = 0; b < bits; ++b) Exchange(g, xor_partner(b), 65536, 1 + b, 150000);
    Exchange(g, transpose, 65536, 1, 20000);
  };
  for (int o = 0; o < outer; ++o) {
    dot();
    for (int i = 0; i < inner; ++i) {
      matvec();
      dot();
      dot();
    }
    matvec();
    dot();
    dot();
    if (o == 0) g.Collective(all, EventKind::kBarrier, 0);  // the untimed first iteration
  }
  g.Finalize();
  return g.Take();
}

// Whatever loops the analysis finds, its phases (calls x weight) hold every call of the run:
// a short loop unrolled into the phase around it must not take the mean of iteration counts
// that differ between executions (two dot products inside an outer iteration, three where
// two outer iterations meet), or the third one's calls vanish from every phase (NAS CG: 42
// of 4208 sends per rank at 64 processes, and every message after them shifted). The loop is
// a phase of its own then, and the loop around it must not cut an exchange in two.
TEST(Phases, ShortLoopWhoseCountVariesKeepsEveryCall) {
  constexpr int kOuter = 16, kInner = 25, kProcs = 8;
  TraceData data = MakeSolverWithOuterDots(kProcs, kOuter, kInner);
  std::vector<double> traced(kProcs, 0);
  for (int r = 0; r < kProcs; ++r) {
    for (const Event& e : data.ranks[r]) traced[r] += e.kind == EventKind::kSend;
  }
  AnalyzeOptions options;
  options.bytes_tolerance = 0.1;  // the matvec's exchange is not a dot product's step
  Signature sig = Analyze(std::move(data), options);
  for (int r = 0; r < kProcs; ++r) {
    double in_phases = 0;
    for (const Phase& p : sig.phases) {
      for (const RankPhase& rp : p.ranks) {
        if (rp.rank != r) continue;
        for (const PhaseEvent& e : rp.events) in_phases += rp.weight * (e.kind == EventKind::kSend);
      }
    }
    EXPECT_DOUBLE_EQ(in_phases, traced[r]) << "rank " << r << "\n" << FormatSignatureTable(sig);
  }
  // Every phase completes the requests it starts and only those: each exchange (irecv, send,
  // wait) lies in one phase, so that a phase can be simulated on its own.
  for (const Phase& p : sig.phases) {
    for (const RankPhase& rp : p.ranks) {
      int pending = 0;
      for (const PhaseEvent& e : rp.events) {
        if (e.kind == EventKind::kIrecv) ++pending;
        if (e.kind == EventKind::kWait) {
          EXPECT_GT(pending, 0) << "phase " << p.id << " rank " << rp.rank << " waits first\n"
                                << FormatSignatureTable(sig);
          --pending;
        }
      }
      EXPECT_EQ(pending, 0) << "phase " << p.id << " rank " << rp.rank << " ends with an irecv\n"
                            << FormatSignatureTable(sig);
    }
  }
  ExpectSignatureHolds(sig);
}

// Collectives on MPI_COMM_SELF and its duplicates wait for no one and move nothing: PETSc's rank
// 0 broadcasts the options it read on PETSC_COMM_SELF, which no other rank calls. Taken as
// calls they made rank 0's phases differ from the others' (matched by logical time, and the
// run synthesized from them had rank 0 waiting in a world broadcast alone). They are the
// rank's own time now, and every rank has the same phases.
TEST(Phases, CollectivesOnMpiCommSelfAreTheRanksOwnTime) {
  TraceData data = testing::MakeNested(8, 6, 3);
  Event created;
  created.kind = EventKind::kCommCreate;
  created.comm = kCommSelf;
  created.new_comm = 100;  // 100 + rank: the tracer names a communicator by its members
  auto& rank0 = data.ranks[0];
  for (std::size_t i = rank0.size() - 1; i > 1; --i) {
    if (rank0[i].kind != EventKind::kAllreduce) continue;
    // Before each allreduce: a broadcast on MPI_COMM_SELF and one on a duplicate of it.
    Event self_bcast = MakeCollective(EventKind::kBcast, 64, 0, 0, kCommSelf);
    Event dup_bcast = MakeCollective(EventKind::kBcast, 64, 0, 0, 100);
    self_bcast.wall_start_ns = self_bcast.wall_end_ns = rank0[i].wall_start_ns;
    dup_bcast.wall_start_ns = dup_bcast.wall_end_ns = rank0[i].wall_start_ns;
    rank0.insert(rank0.begin() + static_cast<std::ptrdiff_t>(i), {self_bcast, dup_bcast});
  }
  Event dup = created;
  dup.members = {0};
  dup.wall_start_ns = dup.wall_end_ns = rank0[1].wall_start_ns;
  rank0.insert(rank0.begin() + 1, dup);
  for (int r = 1; r < 8; ++r) {
    Event mine = created;
    mine.new_comm = 100 + r;
    mine.members = {r};
    mine.wall_start_ns = mine.wall_end_ns = data.ranks[r][1].wall_start_ns;
    data.ranks[r].insert(data.ranks[r].begin() + 1, mine);
  }
  const Signature sig = Analyze(std::move(data));
  for (const std::string& w : sig.warnings) {
    EXPECT_EQ(w.find("differs from the other ranks"), std::string::npos) << w;
  }
  for (const Phase& p : sig.phases) EXPECT_EQ(CountKind(p, 0, EventKind::kBcast), 0) << p.id;
  // init (with the communicator's creation), the halo x 18, the allreduce x 6, finalize.
  ASSERT_EQ(sig.phases.size(), 4u) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases[1].weight, 18) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases[2].weight, 6) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
}

// Libraries duplicate the world (PETSc's PETSC_COMM_WORLD): collectives on a duplicate in
// the world's order are described as the world's, not as sub-communicators'.
TEST(Phases, CollectivesOnADuplicateOfTheWorldAreDescribedAsTheWorlds) {
  TraceData data = testing::MakeNested(8, 6, 3);
  for (int r = 0; r < 8; ++r) {
    auto& events = data.ranks[static_cast<std::size_t>(r)];
    for (Event& e : events) {
      if (e.kind == EventKind::kAllreduce) e.comm = 50;
    }
    Event dup;
    dup.kind = EventKind::kCommCreate;
    dup.comm = kCommWorld;
    dup.new_comm = 50;
    dup.value = static_cast<std::int64_t>(CommOrigin::kDup);
    dup.members = {0, 1, 2, 3, 4, 5, 6, 7};
    dup.wall_start_ns = dup.wall_end_ns = events[1].wall_start_ns;
    events.insert(events.begin() + 1, dup);
  }
  const Signature sig = Analyze(std::move(data));
  bool allreduce = false;
  for (const Phase& p : sig.phases) {
    EXPECT_EQ(p.description.find("sub-communicator"), std::string::npos) << p.description;
    allreduce = allreduce || p.description.find("allreduce (16 B)") != std::string::npos;
  }
  EXPECT_TRUE(allreduce) << FormatSignatureTable(sig);
}

TEST(Phases, NestedLoopsGiveInnerAndOuterWeights) {
  Signature sig = Analyze(testing::MakeNested(6, 10, 20));
  bool inner = false, outer = false;
  for (const Phase& p : sig.phases) {
    if (p.weight == 200 && CountKind(p, 2, EventKind::kIsend) == 2) inner = true;
    if (p.weight == 10 && CountKind(p, 2, EventKind::kAllreduce) == 1) outer = true;
  }
  EXPECT_TRUE(inner) << FormatSignatureTable(sig);
  EXPECT_TRUE(outer) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
}

TEST(Phases, MasterWorkerWithChangingWaitanyOrderIsOnePhase) {
  Signature sig = Analyze(testing::MakeMasterWorker(5, 60));
  const Phase& main = Heaviest(sig);
  // 60 rounds; the workers' loop may be seen from one call later (the detection starts a
  // loop at its first repeated call), leaving one round in start-up and shutdown.
  EXPECT_GE(main.weight, 59) << FormatSignatureTable(sig);
  EXPECT_LE(main.weight, 60) << FormatSignatureTable(sig);
  EXPECT_EQ(CountKind(main, 0, EventKind::kWaitany), 4);
  EXPECT_EQ(CountKind(main, 0, EventKind::kSend), 4);
  EXPECT_EQ(CountKind(main, 3, EventKind::kRecv), 2);
  int repeated = 0;
  for (const Phase& p : sig.phases) repeated += p.weight > 1;
  EXPECT_EQ(repeated, 1) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
}

// A self-scheduled run: the master's loop and the workers' task loop are one phase in which
// every rank has its own weight (the master's ~ the tasks, each worker's its own tasks),
// whether a worker's compressor found a loop or not; the phases correspond across counts.
void ExpectSelfScheduled(testing::MasterShape shape) {
  constexpr int kTasks = 300;
  std::vector<Signature> sigs;
  for (int n : {4, 6, 9}) {
    Signature sig = Analyze(testing::MakeSelfScheduled(n, kTasks, shape));
    const Phase& tasks = Heaviest(sig);
    SCOPED_TRACE(FormatSignatureTable(sig));
    ASSERT_EQ(tasks.ranks.size(), static_cast<std::size_t>(n));
    double worker_sum = 0;
    bool differ = false, reply = false;
    for (const RankPhase& rp : tasks.ranks) {
      for (const PhaseEvent& e : rp.events) {
        if (e.reply) {
          EXPECT_EQ(rp.rank, 0);
          reply = true;
        }
        if (rp.rank > 0 && IsPointToPoint(e.kind)) {
          EXPECT_EQ(e.peer, 0);
        }
      }
      if (rp.rank == 0) continue;
      worker_sum += rp.weight;
      differ = differ || std::fabs(rp.weight - tasks.ranks[1].weight) > 0.5;
      EXPECT_EQ(CountKind(tasks, rp.rank, EventKind::kRecv), 1);
      EXPECT_EQ(CountKind(tasks, rp.rank, EventKind::kSend), 1);
    }
    EXPECT_TRUE(reply);
    EXPECT_TRUE(differ);
    // Every task is in some worker's task loop (a worker's first task may be seen as part
    // of its start-up by the compressor: at most one per worker).
    EXPECT_LE(worker_sum, kTasks);
    EXPECT_GE(worker_sum, kTasks - (n - 1));
    // The master's replies: one per task beyond the first round (and the stops elsewhere).
    EXPECT_GE(tasks.ranks[0].weight, kTasks - 2 * (n - 1));
    EXPECT_LE(tasks.ranks[0].weight, kTasks);
    EXPECT_DOUBLE_EQ(tasks.weight, tasks.ranks[0].weight);
    ExpectSignatureHolds(sig);
    sigs.push_back(std::move(sig));
  }
  const Correspondence corr = CorrespondPhases(sigs);
  bool task_phase_everywhere = false;
  for (const PhaseGroup& g : corr.groups) {
    if (g.complete && g.weights.front() > 100) task_phase_everywhere = true;
  }
  EXPECT_TRUE(task_phase_everywhere) << FormatCorrespondence(corr);
}

TEST(Phases, SelfScheduledWaitanyMasterHasPerWorkerWeights) {
  ExpectSelfScheduled(testing::MasterShape::kWaitany);
}

TEST(Phases, SelfScheduledIrecvWaitMasterHasPerWorkerWeights) {
  ExpectSelfScheduled(testing::MasterShape::kIrecvWait);
}

TEST(Phases, SelfScheduledBlockingRecvMasterHasPerWorkerWeights) {
  ExpectSelfScheduled(testing::MasterShape::kBlockingRecv);
}

TEST(Phases, CgLikeSeparatesReductionsAndHalo) {
  Signature sig = Analyze(testing::MakeCgLike(8, 50, 100));
  const Phase* dots = nullptr;
  const Phase* halo = nullptr;
  for (const Phase& p : sig.phases) {
    if (CountKind(p, 3, EventKind::kSendrecv) > 0) halo = &p;
    if (CountKind(p, 3, EventKind::kSendrecv) == 0 && CountKind(p, 3, EventKind::kAllreduce) > 0 &&
        p.weight > 1) {
      dots = &p;
    }
  }
  ASSERT_NE(dots, nullptr) << FormatSignatureTable(sig);
  ASSERT_NE(halo, nullptr) << FormatSignatureTable(sig);
  // 50 iterations of 3 identical reductions: 150 reductions, however they are grouped.
  EXPECT_EQ(dots->weight * CountKind(*dots, 3, EventKind::kAllreduce), 150);
  EXPECT_EQ(halo->weight, 100);
  EXPECT_EQ(CountKind(*halo, 3, EventKind::kSendrecv), 2);
  EXPECT_TRUE(dots->relevant);
  EXPECT_TRUE(halo->relevant);
  ExpectSignatureHolds(sig);
}

// Sizes split loops only when asked (AnalyzeOptions::bytes_tolerance > 0): by default the
// 20 sends of doubling size are one loop; with a tolerance they are 20 different calls.
TEST(Phases, NoRepetitionIsOnePhaseWithAWarning) {
  AnalyzeOptions sizes_split;
  sizes_split.bytes_tolerance = 0.1;
  Signature sig = Analyze(testing::MakeNoRepetition(20), sizes_split);
  ASSERT_EQ(sig.phases.size(), 1u) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases[0].weight, 1);
  ASSERT_FALSE(sig.warnings.empty());
  EXPECT_NE(sig.warnings.back().find("no repetition"), std::string::npos);
  ExpectSignatureHolds(sig);
  const Signature folded = Analyze(testing::MakeNoRepetition(20));
  EXPECT_EQ(Heaviest(folded).weight, 20) << FormatSignatureTable(folded);
}

// A run with more ranks than cores on some host (trace.json "hosts") carries the
// oversubscription warning, saying where and by how much; a run with at most one rank per
// core, or whose placement is unknown (older traces), does not.
TEST(Phases, OversubscribedRunCarriesAWarning) {
  auto warnings_with = [](std::vector<HostPlacement> hosts) {
    TraceData d = MakeStencil(testing::StencilSpec{});
    d.metadata.hosts = std::move(hosts);
    std::vector<std::string> found;
    for (const std::string& w : Analyze(std::move(d)).warnings) {
      if (w.starts_with(kOversubscribedWarning)) found.push_back(w);
    }
    return found;
  };
  const auto crowded = warnings_with({{"vm", 16, 2}});
  ASSERT_EQ(crowded.size(), 1u);
  EXPECT_NE(crowded[0].find("16 ranks on 1 host (vm: 16 ranks on 2 cores, 8 per core)"),
            std::string::npos)
      << crowded[0];
  EXPECT_NE(crowded[0].find("at most one rank per core"), std::string::npos) << crowded[0];
  // One crowded host of two is enough.
  EXPECT_EQ(warnings_with({{"a", 4, 8}, {"b", 12, 8}}).size(), 1u);
  EXPECT_TRUE(warnings_with({{"a", 8, 8}, {"b", 8, 8}}).empty());
  EXPECT_TRUE(warnings_with({}).empty());
  EXPECT_TRUE(warnings_with({{"a", 16, 0}}).empty());  // cores unknown
  TraceMetadata fits;
  fits.nprocs = 4;
  fits.hosts = {{"a", 4, 4}};
  EXPECT_EQ(OversubscriptionWarning(fits), "");
}

TEST(Phases, OneEventTrace) {
  TraceData d;
  d.ranks.resize(1);
  Event init;
  init.kind = EventKind::kInit;
  d.ranks[0].push_back(init);
  Signature sig = Analyze(d);
  ASSERT_EQ(sig.phases.size(), 1u);
  EXPECT_EQ(sig.phases[0].weight, 1);
  EXPECT_EQ(sig.traced_time_s, 0);
  EXPECT_TRUE(sig.phases[0].relevant);
}

TEST(Phases, DisagreeingRanksAreAnErrorNamingThem) {
  TraceData d = MakeStencil(testing::StencilSpec{});
  // Rank 7 calls a barrier where the others reduce.
  for (Event& e : d.ranks[7]) {
    if (e.kind == EventKind::kReduce) {
      e.kind = EventKind::kBarrier;
      e.peer = kNoRank;
    }
  }
  try {
    Analyze(d);
    FAIL() << "expected a TraceError";
  } catch (const TraceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ranks disagree"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 7"), std::string::npos) << m;
  }
}

TEST(Phases, CutTraceIsAnalysedUpToTheCut) {
  const auto dir = std::filesystem::temp_directory_path() / "pas2p_phases_cut_test";
  std::filesystem::remove_all(dir);
  testing::StencilSpec spec;
  spec.iterations = 2000;
  spec.px = 2;
  spec.py = 2;
  WriteTrace(dir, MakeStencil(spec));
  const auto rank1 = RankStreamPath(dir, 1);
  std::filesystem::resize_file(rank1, std::filesystem::file_size(rank1) / 2);
  TraceDirectory trace(dir);
  Signature sig = AnalyzeTrace(trace);
  EXPECT_TRUE(sig.cut);
  bool warned = false;
  for (const std::string& w : sig.warnings) warned = warned || w.find("cut") != std::string::npos;
  EXPECT_TRUE(warned);
  const Phase& main = Heaviest(sig);
  EXPECT_GT(main.weight, 10) << FormatSignatureTable(sig);
  EXPECT_LT(main.weight, 2000);
  std::filesystem::remove_all(dir);
}

TEST(Phases, SameInputGivesByteIdenticalSignatures) {
  const std::string a = SignatureToJson(Analyze(testing::MakeMasterWorker(4, 30)));
  const std::string b = SignatureToJson(Analyze(testing::MakeMasterWorker(4, 30)));
  EXPECT_EQ(a, b);
}

TEST(Phases, WindowSmallerThanTheLoopBodyStillTerminates) {
  AnalyzeOptions o;
  o.window = 2;  // a stencil iteration has 9 calls: the loop cannot be seen
  Signature sig = Analyze(MakeStencil(testing::StencilSpec{}), o);
  EXPECT_FALSE(sig.phases.empty());
  EXPECT_NEAR(sig.pet_s, sig.traced_time_s, 0.03 * sig.traced_time_s);
}

TEST(Phases, BadOptionsAreRejected) {
  AnalyzeOptions o;
  o.relevance_threshold = 1.5;
  std::string error;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("relevance threshold"), std::string::npos);
  EXPECT_THROW(Analyze(MakeStencil(testing::StencilSpec{}), o), UserError);
}

TEST(Correspondence, StencilMainPhaseAcrossCounts) {
  std::vector<Signature> sigs;
  for (int side : {2, 3, 4}) {
    testing::StencilSpec spec;
    spec.px = spec.py = side;
    spec.iterations = 50;
    sigs.push_back(Analyze(MakeStencil(spec)));
  }
  Correspondence c = CorrespondPhases(sigs);
  bool found = false;
  for (const PhaseGroup& g : c.groups) {
    if (g.complete && g.weights[0] == 50 && g.weights[1] == 50 && g.weights[2] == 50) found = true;
  }
  EXPECT_TRUE(found) << FormatCorrespondence(c);
  for (const PhaseGroup& g : c.groups) EXPECT_TRUE(g.complete) << FormatCorrespondence(c);
}

// A recursive doubling written by hand, folded at counts that are not
// powers of two (ranks from P' = 2^floor(log2(P)) up send to rank - P' first and receive the
// result back last), followed by `check` on the world.
TraceData MakeFoldedDoubling(int nprocs, int iterations, EventKind check) {
  testing::Gen g(nprocs, "folded");
  g.Init();
  const int p2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(nprocs)));
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  std::iota(all.begin(), all.end(), 0);
  for (int it = 0; it < iterations; ++it) {
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 100000);
    for (int r = p2; r < nprocs; ++r) g.Local(r, MakeSend(r - p2, 1, 8192));
    for (int r = 0; r + p2 < nprocs; ++r) g.Blocking(r, MakeRecv(r + p2, 1, 8192), g.clock(r + p2));
    for (int mask = 1; mask < p2; mask <<= 1) {
      std::vector<std::int64_t> ready(static_cast<std::size_t>(p2));
      for (int r = 0; r < p2; ++r) ready[r] = std::max(g.clock(r), g.clock(r ^ mask));
      for (int r = 0; r < p2; ++r) {
        g.Blocking(r, MakeSendrecv(r ^ mask, r ^ mask, 2, 8192, 8192), ready[r] + 5000);
      }
    }
    for (int r = 0; r + p2 < nprocs; ++r) g.Local(r, MakeSend(r + p2, 3, 8192));
    for (int r = p2; r < nprocs; ++r) g.Blocking(r, MakeRecv(r - p2, 3, 8192), g.clock(r - p2));
    g.Collective(all, check, 8, check == EventKind::kBcast ? 0 : kNoRank);
  }
  g.Finalize();
  return g.Take();
}

// Its loop calls send and recv besides sendrecv at 6 and 12 ranks, only sendrecv at 4 and 8:
// one phase of the code all the same (the same collective, the exchange in common), matched
// across the counts. Where the collective differs too (a code that checks by another call at
// other counts), it is not.
TEST(Correspondence, PointToPointCallsThatDifferWithTheCountKeepThePhase) {
  auto loop_group = [](const Correspondence& c) -> const PhaseGroup* {
    const PhaseGroup* best = nullptr;
    for (const PhaseGroup& g : c.groups) {
      if (g.relevant && g.key.find("sendrecv") != std::string::npos &&
          (!best || std::count(g.phase_ids.begin(), g.phase_ids.end(), -1) <
                        std::count(best->phase_ids.begin(), best->phase_ids.end(), -1))) {
        best = &g;
      }
    }
    return best;
  };
  std::vector<Signature> sigs;
  for (int n : {4, 6, 8, 12}) {
    sigs.push_back(Analyze(MakeFoldedDoubling(n, 40, EventKind::kAllreduce)));
  }
  const Correspondence c = CorrespondPhases(sigs);
  const PhaseGroup* g = loop_group(c);
  ASSERT_NE(g, nullptr) << FormatCorrespondence(c);
  EXPECT_TRUE(g->complete) << FormatCorrespondence(c);
  EXPECT_EQ(g->key, "allreduce@world,sendrecv") << FormatCorrespondence(c);
  for (double w : g->weights) EXPECT_EQ(w, 40) << FormatCorrespondence(c);

  std::vector<Signature> other;
  for (int n : {4, 6, 8, 12}) {
    const bool power = std::has_single_bit(static_cast<unsigned>(n));
    other.push_back(
        Analyze(MakeFoldedDoubling(n, 40, power ? EventKind::kAllreduce : EventKind::kBcast)));
  }
  const Correspondence d = CorrespondPhases(other);
  const PhaseGroup* h = loop_group(d);
  ASSERT_NE(h, nullptr) << FormatCorrespondence(d);
  EXPECT_FALSE(h->complete) << FormatCorrespondence(d);
}

TEST(Correspondence, DifferentApplicationsAreRefused) {
  std::vector<Signature> sigs = {Analyze(testing::MakeNested(4, 2, 3)),
                                 Analyze(testing::MakeCgLike(4, 3, 3))};
  EXPECT_THROW(CorrespondPhases(sigs), UserError);
}

}  // namespace
}  // namespace pas2p::phases

namespace pas2p::phases {
namespace {

// Ranks whose MPI_Init returns at different moments (their clocks start then): rank r's
// clock starts skew_r late, it waits in the first barrier for the latest one. On the
// global clock the start-up lasts as long as the largest skew and PET is the traced time
// (the longest rank span); the ranks' mean time would miss half the skew.
TEST(Phases, SkewedInitIsTimedOnTheGlobalClock) {
  const int n = 8;
  const std::int64_t skew_step_ns = 2000000;  // rank r starts r x 2 ms late
  testing::Gen g(n, "skewed");
  g.Init();
  std::vector<int> all;
  for (int r = 0; r < n; ++r) all.push_back(r);
  for (int r = 0; r < n; ++r) g.Compute(r, r * skew_step_ns);  // removed below: Init time
  g.Collective(all, EventKind::kBarrier, 0);
  for (int it = 0; it < 100; ++it) {
    for (int r = 0; r < n; ++r) g.Compute(r, 300000 + 20000 * r);
    g.Collective(all, EventKind::kAllreduce, 8);
  }
  g.Finalize();
  TraceData data = g.Take();
  for (int r = 0; r < n; ++r) {
    auto& events = data.ranks[static_cast<std::size_t>(r)];
    ASSERT_EQ(events[1].kind, EventKind::kCompute);
    events.erase(events.begin() + 1);
    for (std::size_t i = 1; i < events.size(); ++i) {
      events[i].wall_start_ns -= r * skew_step_ns;
      events[i].wall_end_ns -= r * skew_step_ns;
    }
  }
  Signature sig = Analyze(std::move(data));
  EXPECT_NEAR(sig.pet_s, sig.traced_time_s, 0.005 * sig.traced_time_s) << FormatSignatureTable(sig);
  const Phase& main = Heaviest(sig);
  EXPECT_EQ(main.weight, 100) << FormatSignatureTable(sig);
  // One iteration lasts as long as the slowest rank's compute (0.44 ms) plus the call.
  EXPECT_NEAR(main.time_s, 0.00044, 0.00002) << FormatSignatureTable(sig);
  // The start-up (up to the first barrier) is the largest skew, 14 ms.
  EXPECT_NEAR(sig.phases.front().total_time_s, 0.014, 0.0005) << FormatSignatureTable(sig);
}

}  // namespace
}  // namespace pas2p::phases

namespace pas2p::phases {
namespace {

// The phases of a swap-by-swap halo exchange (MakeSwaps) at a count where a grid extent is 2
// (both neighbours of a dimension are one rank, so the same call repeats up to 4 times in a
// row) must be those at a count where every extent is 3 or more: one step phase with all 8
// swaps, repeated once per step, matched across the counts.
TEST(Correspondence, SwapsWithCoincidentNeighboursGiveTheSamePhasesAtEveryCount) {
  std::vector<Signature> sigs;
  for (auto [px, py] : {std::pair{2, 2}, std::pair{4, 2}, std::pair{3, 3}}) {
    sigs.push_back(Analyze(testing::MakeSwaps(px, py, 40)));
  }
  for (const Signature& sig : sigs) {
    const Phase& step = Heaviest(sig);
    // 39 where the loop body starts after the first swap (the calls before the body's first
    // repetition are phases of their own), 40 otherwise.
    EXPECT_GE(step.weight, 39) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(step, 0, EventKind::kSend), 8) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(step, 0, EventKind::kIrecv), 8) << FormatSignatureTable(sig);
    EXPECT_EQ(sig.phases.size(), sigs.back().phases.size()) << FormatSignatureTable(sig);
    ExpectSignatureHolds(sig);
  }
  // The step phase is one group at all counts. (The start-up phase may hold the first swap
  // at some counts: where the loop body starts is a separate matter.)
  const Correspondence c = CorrespondPhases(sigs);
  bool step_matched = false;
  for (const PhaseGroup& g : c.groups) {
    if (g.phase_ids[0] == Heaviest(sigs[0]).id) {
      step_matched = g.complete && g.phase_ids[1] == Heaviest(sigs[1]).id &&
                     g.phase_ids[2] == Heaviest(sigs[2]).id;
    }
  }
  EXPECT_TRUE(step_matched) << FormatCorrespondence(c);
}

// Two dot products back to back, each a reduction of log2(row) steps, are a loop of 2
// iterations whose body grows with the count (3, 6, 6, 9 calls at 4, 8, 16, 32 ranks). Whether
// it is unrolled into the iteration must not depend on that size: at 32 ranks (18 calls) it
// was a phase of its own and the iteration split into sub-phases that no other count has.
TEST(Correspondence, ShortLoopsAreUnrolledWhateverTheirBodyAtEveryCount) {
  std::vector<Signature> sigs;
  AnalyzeOptions options;
  options.bytes_tolerance = 0.10;  // sizes end loops: the vector and 8-byte steps differ
  for (int n : {4, 8, 16, 32}) sigs.push_back(Analyze(testing::MakeRowDots(n, 30), options));
  for (const Signature& sig : sigs) {
    // log2 of the row: ceil(log2(P) / 2).
    const int steps = (std::countr_zero(static_cast<unsigned>(sig.nprocs)) + 1) / 2;
    const Phase& iteration = Heaviest(sig);
    EXPECT_GE(iteration.weight, 29) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(iteration, 0, EventKind::kIrecv), 3 * steps) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(iteration, 0, EventKind::kSend), 3 * steps) << FormatSignatureTable(sig);
    EXPECT_EQ(sig.phases.size(), sigs.front().phases.size()) << FormatSignatureTable(sig);
    ExpectSignatureHolds(sig);
  }
  const Correspondence c = CorrespondPhases(sigs);
  bool matched = false;
  for (const PhaseGroup& g : c.groups) {
    if (g.phase_ids[0] != Heaviest(sigs[0]).id) continue;
    matched = g.complete;
    for (std::size_t i = 1; i < sigs.size(); ++i)
      matched = matched && g.phase_ids[i] == Heaviest(sigs[i]).id;
  }
  EXPECT_TRUE(matched) << FormatCorrespondence(c);
}

// NAS BT's time step: a face exchange, then sweeps whose stages (isend, irecv, wait, wait)
// are loops of P - 1 iterations. The step is one loop that starts with the face exchange at
// every count. The compressor once took a stage whose first wait had arrived but not yet the
// second (which folds the two waits into a loop) for the end of the sweep loop and closed the
// step there, one stage early: the step loops then started at a different sweep every other
// pair of steps ("(1, 2 x4, 3 x3) x2, (3 x3, 1, 2 x3) x2, ((2) x3.92, 3 x4, 1) x26" at 5
// ranks), their phases' weights were off by a few and differed in order between counts.
TEST(Correspondence, StepLoopWithInnerPipelinesStartsAtTheStepAtEveryCount) {
  std::vector<Signature> sigs;
  for (int n : {4, 6, 8, 10}) sigs.push_back(Analyze(testing::MakeLinePipelines(n, 30)));
  for (const Signature& sig : sigs) {
    const int stages = sig.nprocs - 1;
    EXPECT_EQ(FormatSequence(sig.sequence),
              "0, (1, 2 x" + std::to_string(stages) + ", 3 x" + std::to_string(stages) + ") x30, 4")
        << FormatSignatureTable(sig);
    ASSERT_EQ(sig.phases.size(), 5u) << FormatSignatureTable(sig);
    EXPECT_EQ(sig.phases[1].weight, 30) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(sig.phases[1], 0, EventKind::kWaitall), 1) << FormatSignatureTable(sig);
    EXPECT_EQ(sig.phases[2].weight, 30 * stages) << FormatSignatureTable(sig);
    EXPECT_EQ(sig.phases[3].weight, 30 * stages) << FormatSignatureTable(sig);
    ExpectSignatureHolds(sig);
  }
  const Correspondence c = CorrespondPhases(sigs);
  for (const PhaseGroup& g : c.groups) EXPECT_TRUE(g.complete) << FormatCorrespondence(c);
}

// NAS BT runs one warm-up time step after its set-up, then a barrier, then the timed steps. The
// warm-up step's face exchange is a run of its own (outside the step loop), and its first
// burst holds the set-up compute (here 1.5 ms, the steps' 0.3 ms): compared on its whole
// compute it was a phase of weight 1 apart from the loop's (weight 30), at the counts where
// the set-up is long enough, and correspondence (run order) then paired it with the loop's
// phase of a count where it merged. The lead-in of a single occurrence is not a burst of the
// loop's body: it joins the loop (weight 31 at every count, the same run everywhere), and its
// set-up compute stays in the phase (none of the run's compute is lost).
TEST(Correspondence, WarmUpStepWithALongLeadInJoinsTheStepLoopAtEveryCount) {
  std::vector<Signature> sigs;
  for (int n : {4, 6, 8, 10}) {
    sigs.push_back(Analyze(testing::MakeLinePipelines(n, 30, 1500000)));
    const Signature& sig = sigs.back();
    const std::string s = std::to_string(sig.nprocs - 1);
    EXPECT_EQ(FormatSequence(sig.sequence),
              "0, 1 x5, 2, 3 x" + s + ", 4 x" + s + ", 5, (2, 3 x" + s + ", 4 x" + s + ") x30, 6")
        << FormatSignatureTable(sig);
    ASSERT_EQ(sig.phases.size(), 7u) << FormatSignatureTable(sig);
    const Phase& faces = sig.phases[2];
    EXPECT_EQ(faces.weight, 31) << FormatSignatureTable(sig);
    EXPECT_EQ(CountKind(faces, 0, EventKind::kWaitall), 1);
    // The set-up burst is kept: the first burst's mean over the 31 occurrences is
    // (30 x 0.33 ms + 1.5 ms) / 31 (a step's lead-in also holds the last stage's 30 us), up to
    // the 5% noise.
    EXPECT_NEAR(faces.ranks[0].events[0].compute.cpu_ns.mean, (30 * 330000.0 + 1500000) / 31,
                15000);
    EXPECT_EQ(faces.ranks[0].events[0].compute.cpu_ns.n, 31);
    ExpectSignatureHolds(sig);
  }
  const Correspondence c = CorrespondPhases(sigs);
  for (const PhaseGroup& g : c.groups) EXPECT_TRUE(g.complete) << FormatCorrespondence(c);
}

// A set-up that outweighs the loop is not taken into it: 100 ms before the warm-up step's face
// exchange, against 30 steps of 0.3 ms, would make the face exchange's compute per
// occurrence 11 times what each step computes. The warm-up exchange stays a phase of its own.
TEST(Phases, SetUpThatOutweighsTheLoopStaysAPhaseOfItsOwn) {
  const Signature sig = Analyze(testing::MakeLinePipelines(4, 30, 100000000));
  EXPECT_EQ(FormatSequence(sig.sequence), "0, 1 x5, 2, 3 x3, 4 x3, 5, (6, 3 x3, 4 x3) x30, 7")
      << FormatSignatureTable(sig);
  ASSERT_EQ(sig.phases.size(), 8u) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases[2].weight, 1);
  EXPECT_EQ(sig.phases[6].weight, 30);
  ExpectSignatureHolds(sig);
}

// A step of [a b b d] and four [a b b c]: after the inner loop the next step's first calls
// (a, b, b) are the start of one more inner iteration, and the two b fold into a loop of their
// own before d shows they are not. The inner loop is complete then, and the steps around it
// are folded (into one loop of 9 iterations of two steps, and the last step's loop, as the
// compressor always did); when the inner loop's end was only looked for after the last loop
// (by then the b loop), no step was ever folded: a loop per step, 10 top-level loops.
TEST(Phases, LoopWhoseNextCallsBeginLikeItsBodyIsStillClosed) {
  testing::Gen g(2, "closure");
  g.Init();
  const std::vector<int> all{0, 1};
  const auto call = [&](EventKind kind) {
    g.Collective(all, kind, kind == EventKind::kBarrier ? 0 : 8,
                 kind == EventKind::kReduce || kind == EventKind::kBcast ? 0 : kNoRank);
  };
  for (int step = 0; step < 20; ++step) {
    for (EventKind k :
         {EventKind::kAllreduce, EventKind::kBarrier, EventKind::kBarrier, EventKind::kBcast})
      call(k);
    for (int i = 0; i < 4; ++i) {
      for (EventKind k :
           {EventKind::kAllreduce, EventKind::kBarrier, EventKind::kBarrier, EventKind::kReduce})
        call(k);
    }
  }
  g.Finalize();
  const Signature sig = Analyze(g.Take());
  const auto loops = std::count_if(sig.sequence.begin(), sig.sequence.end(),
                                   [](const SequenceItem& s) { return s.is_loop(); });
  EXPECT_LE(loops, 2) << FormatSequence(sig.sequence);
  ExpectSignatureHolds(sig);
}

// Without the rule (unroll_exchange_iterations = 2) the 2 x 2 grid's repeated calls are loops
// of their own and split the step; with a bound of 3 the 4 calls in a row where two swaps of
// one dimension meet are still a loop of 4 iterations, beyond the bound.
TEST(Phases, OnlyShortExchangesWithOnePartnerAreUnrolled) {
  for (std::size_t bound : {2, 3}) {
    AnalyzeOptions options;
    options.unroll_exchange_iterations = bound;
    const Signature sig = Analyze(testing::MakeSwaps(2, 2, 40), options);
    EXPECT_NE(CountKind(Heaviest(sig), 0, EventKind::kSend), 8) << FormatSignatureTable(sig);
  }
}

// On a dimension of extent 2 the receives from the +1 and the -1 neighbour (and the two
// sends) are one call repeated, folded into a loop of two iterations and unrolled; each copy
// keeps its own tag (NAS MG: with both copies tagged like the first, the sends and receives of
// a model no longer matched at a count with 3 or more ranks along that dimension).
TEST(Phases, UnrolledCallsKeepTheirTags) {
  const Signature sig = Analyze(testing::MakeTaggedHalo(2, 4, 30));
  const Phase& main = Heaviest(sig);
  EXPECT_EQ(main.weight, 30) << FormatSignatureTable(sig);
  for (const RankPhase& rp : main.ranks) {
    std::vector<std::int32_t> irecv_tags, send_tags;
    for (const PhaseEvent& e : rp.events) {
      if (e.kind == EventKind::kIrecv) irecv_tags.push_back(e.tag);
      if (e.kind == EventKind::kSend) send_tags.push_back(e.tag);
    }
    // (A rank's phase may start at another call of the step: compared as sets.)
    std::sort(irecv_tags.begin(), irecv_tags.end());
    std::sort(send_tags.begin(), send_tags.end());
    const std::vector<std::int32_t> all{1100, 1300, 2100, 2300};
    EXPECT_EQ(irecv_tags, all) << "rank " << rp.rank << "\n" << FormatSignatureTable(sig);
    EXPECT_EQ(send_tags, all) << "rank " << rp.rank;
  }
}

}  // namespace
}  // namespace pas2p::phases

namespace pas2p::phases {
namespace {

// Runs `run` (iterations, the second half's compute per iteration) 10 times at 1 ms, an
// allreduce, 10 times at 1.6 ms, a barrier; the two runs must be one phase on every rank.
template <typename Run>
void ExpectOnePhaseOfTwoRuns(testing::Gen* g, const std::vector<int>& all, Run run) {
  run(10, 1000000);
  g->Collective(all, EventKind::kAllreduce, 8);
  run(10, 1600000);
  g->Collective(all, EventKind::kBarrier, 0);
  g->Finalize();
  const Signature sig = Analyze(g->Take());
  for (const std::string& w : sig.warnings) {
    EXPECT_EQ(w.find("loop structure of ranks"), std::string::npos) << w << "\n"
                                                                    << FormatSignatureTable(sig);
  }
  EXPECT_EQ(Heaviest(sig).weight, 20) << FormatSignatureTable(sig);
  ExpectSignatureHolds(sig);
}

// Two runs of one loop (a ring exchange), separated by different collectives, whose compute
// is the same on half of the ranks and 60% larger in the second run on the others. Decided
// on each rank's own compute, half of the ranks would make the runs one phase and the others
// two, and the ranks' phases could then only be matched by logical time. Decided once on the
// compute summed over the ranks (+30%, within the similarity), every rank has one phase.
TEST(Phases, RunsOfOneLoopMergeAlikeOnEveryRank) {
  const int n = 4;
  testing::Gen g(n, "halfslow");
  g.Init();
  const std::vector<int> all = {0, 1, 2, 3};
  auto ring = [&](int iterations, std::int64_t slow_cpu_ns) {
    for (int it = 0; it < iterations; ++it) {
      for (int r = 0; r < n; ++r) g.Compute(r, r < 2 ? 1000000 : slow_cpu_ns);
      std::vector<std::int64_t> ready(n);
      for (int r = 0; r < n; ++r) {
        ready[r] = std::max(g.clock((r + 1) % n), g.clock((r + n - 1) % n));
      }
      for (int r = 0; r < n; ++r) {
        g.Blocking(r, MakeSendrecv((r + 1) % n, (r + n - 1) % n, 1, 4096, 4096), ready[r] + 5000);
      }
    }
  };
  ExpectOnePhaseOfTwoRuns(&g, all, ring);
}

// The same on a line of ranks that is not periodic: the two end ranks have one neighbour
// (irecv, isend, waitall) and the others two (two of each, waitall), so the ranks' loops
// differ in their calls, but their runs correspond one to one (the same runs repeat on every
// rank). The merge is still decided once for all ranks (a 3-D PETSc grid's boundary ranks
// gave some counts different phases per rank before).
TEST(Phases, RunsOfOneLoopMergeAlikeWhenBoundaryRanksMakeFewerCalls) {
  const int n = 6;
  testing::Gen g(n, "line");
  g.Init();
  std::vector<int> all(n);
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  auto line = [&](int iterations, std::int64_t slow_cpu_ns) {
    for (int it = 0; it < iterations; ++it) {
      for (int r = 0; r < n; ++r) g.Compute(r, r < n / 2 ? 1000000 : slow_cpu_ns);
      std::vector<std::int64_t> ready(n);
      for (int r = 0; r < n; ++r) {
        ready[r] = std::max(g.clock(std::max(0, r - 1)), g.clock(std::min(n - 1, r + 1)));
      }
      for (int r = 0; r < n; ++r) {
        std::vector<RequestId> reqs;
        std::vector<Completion> done;
        for (int peer : {r - 1, r + 1}) {
          if (peer < 0 || peer >= n) continue;
          reqs.push_back(g.NewRequest(r));
          g.Local(r, MakeIrecv(peer, 1, 4096, reqs.back()));
          done.push_back(Completion{reqs.back(), peer, 1, 4096});
        }
        for (int peer : {r - 1, r + 1}) {
          if (peer < 0 || peer >= n) continue;
          reqs.push_back(g.NewRequest(r));
          g.Local(r, MakeIsend(peer, 1, 4096, reqs.back()));
          done.push_back(Completion{reqs.back(), kNoRank, kAnyTag, 0});
        }
        Event w = MakeWaitall(reqs);
        w.completed = done;
        g.Blocking(r, w, ready[r] + 5000);
      }
    }
  };
  ExpectOnePhaseOfTwoRuns(&g, all, line);
}

}  // namespace
}  // namespace pas2p::phases

namespace pas2p::phases {
namespace {

// A gap between two waits that the host took (a virtual machine's CPU clock counts it):
// at iteration `iteration`, rank `rank`, before its wait number `before_wait`.
struct WaitGapSpike {
  int iteration = 0, rank = 0;
  std::size_t before_wait = 1;
  std::int64_t ns = 0;
};

// HPCG's ExchangeHalo: irecv from each neighbour, a send to each, then one MPI_Wait per
// receive in the order they were posted, with `between_ns` of compute between two waits.
// Neighbours at -2, -1, +1 and +2, or with 3 neighbours: sends to +1, -1 and -2, receives
// from -1, +1 and +2.
TraceData NeighbourWaits(int nprocs, int iterations, std::int64_t between_ns,
                         const std::vector<WaitGapSpike>& spikes = {}, int neighbours = 4) {
  testing::Gen g(nprocs, "neighbour_waits");
  g.Init();
  const std::vector<int> offsets =
      neighbours == 4 ? std::vector<int>{-2, -1, 1, 2} : std::vector<int>{-1, 1, 2};
  const int send_sign = neighbours == 4 ? -1 : 1;
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::vector<RequestId>> posted(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r) {
      g.Compute(r, 200000);
      for (int o : offsets) {
        posted[r].push_back(g.NewRequest(r));
        g.Local(r, MakeIrecv((r + o + nprocs) % nprocs, 99, 4096, posted[r].back()));
      }
      for (int o : offsets) {
        g.Local(r, MakeSend((r - send_sign * o + nprocs) % nprocs, 99, 4096), 1500);
      }
    }
    const std::int64_t ready = g.MaxClock() + 3000;
    for (int r = 0; r < nprocs; ++r) {
      for (std::size_t k = 0; k < posted[r].size(); ++k) {
        std::int64_t gap = k > 0 ? between_ns : 0;
        for (const WaitGapSpike& x : spikes) {
          if (x.iteration == it && x.rank == r && x.before_wait == k) gap += x.ns;
        }
        if (gap > 0) g.Compute(r, gap);
        Event wait = MakeWaitall({posted[r][k]});
        wait.kind = EventKind::kWait;
        g.Blocking(r, wait, ready);
      }
    }
  }
  g.Finalize();
  return g.Take();
}

// A run of waits with next to no compute between them is one waitall of their requests: the
// exchange is one phase (before, the waits were a loop of their own, a phase that completed
// another phase's requests, and the model left every call of the exchange out). Waits with
// real work between them (unpacking each message as it arrives) stay apart.
TEST(Phases, ARunOfWaitsIsOneWaitallOfTheirRequests) {
  const Signature sig = Analyze(NeighbourWaits(8, 30, 300));
  const Phase& main = Heaviest(sig);
  EXPECT_EQ(main.weight, 30) << FormatSignatureTable(sig);
  EXPECT_EQ(CountKind(main, 5, EventKind::kIrecv), 4) << FormatSignatureTable(sig);
  EXPECT_EQ(CountKind(main, 5, EventKind::kSend), 4);
  EXPECT_EQ(CountKind(main, 5, EventKind::kWaitall), 1) << FormatSignatureTable(sig);
  EXPECT_EQ(CountKind(main, 5, EventKind::kWait), 0);
  for (const Phase& p : sig.phases) {
    EXPECT_TRUE(CountKind(p, 5, EventKind::kWait) == 0) << FormatSignatureTable(sig);
  }
  const Signature apart = Analyze(NeighbourWaits(8, 30, 50000));
  int waits = 0;
  for (const Phase& p : apart.phases) waits += CountKind(p, 5, EventKind::kWait);
  EXPECT_GT(waits, 0) << FormatSignatureTable(apart);
}

// On a virtual machine the CPU clock counts the time the host takes the core: now and then a
// gap between two of HPCG's waits is 20-90 us (62 of 18816 at 32 ranks on 2 cores). Such a
// gap split that exchange's waits, and the iteration (or, in the set-up's exchange, the
// rank) took a shape of its own: HPCG's runs had 7 to 13 phases, different at every count,
// and were refused. A gap is noise where two thirds of the rank's gaps are next to nothing,
// the run's own included (the first exchange has no history).
TEST(Phases, AGapTheHostTookDoesNotSplitARunOfWaits) {
  const std::vector<WaitGapSpike> spikes = {
      {0, 3, 2, 60000},    // the first exchange: 2 of its 3 gaps are next to nothing
      {17, 5, 1, 300000},  // later: the rank's history says its waits follow each other
      {22, 0, 3, 45000}};
  const Signature sig = Analyze(NeighbourWaits(8, 30, 300, spikes));
  const Phase& main = Heaviest(sig);
  EXPECT_EQ(main.weight, 30) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases.size(), Analyze(NeighbourWaits(8, 30, 300)).phases.size())
      << FormatSignatureTable(sig);
  for (int r : {0, 3, 5}) {
    EXPECT_EQ(CountKind(main, r, EventKind::kWaitall), 1) << FormatSignatureTable(sig);
    for (const Phase& p : sig.phases) EXPECT_EQ(CountKind(p, r, EventKind::kWait), 0);
  }
  EXPECT_EQ(FormatSignatureTable(sig).find("loop structure of rank"), std::string::npos)
      << FormatSignatureTable(sig);
  // More than noise (2 ms) still ends the run: that rank's iteration has another shape.
  const Signature cut = Analyze(NeighbourWaits(8, 30, 300, {{17, 5, 1, 2000000}}));
  EXPECT_NE(FormatSignatureTable(cut).find("loop structure of rank 5 differs"), std::string::npos)
      << FormatSignatureTable(cut);
}

// A rank's first exchange with 3 neighbours has 2 gaps between its waits, too few to tell
// whether a gap the host took is noise: one of them (26 us at HPCG's set-up exchange, 4
// ranks) split it, and that exchange had a shape the other counts' did not (its phase was
// left out of HPCG's model, 2.2% of the bytes). The rank's whole run decides it now.
TEST(Phases, TheFirstExchangeOfThreeNeighboursIsDecidedOnTheWholeRun) {
  const Signature plain = Analyze(NeighbourWaits(8, 30, 300, {}, 3));
  const Signature sig = Analyze(NeighbourWaits(8, 30, 300, {{0, 3, 1, 26000}}, 3));
  EXPECT_EQ(Heaviest(sig).weight, 30) << FormatSignatureTable(sig);
  EXPECT_EQ(sig.phases.size(), plain.phases.size()) << FormatSignatureTable(sig);
  for (const Phase& p : sig.phases) {
    EXPECT_EQ(CountKind(p, 3, EventKind::kWait), 0) << FormatSignatureTable(sig);
  }
  EXPECT_EQ(CountKind(Heaviest(sig), 3, EventKind::kWaitall), 1) << FormatSignatureTable(sig);
  // A rank whose waits have work between them every time keeps them apart, the first
  // exchange too.
  const Signature apart = Analyze(NeighbourWaits(8, 30, 50000, {{0, 3, 1, 26000}}, 3));
  for (const Phase& p : apart.phases) {
    if (p.weight > 1) {
      EXPECT_EQ(CountKind(p, 3, EventKind::kWaitall), 0);
    }
  }
  int waits = 0;
  for (const Phase& p : apart.phases) waits += CountKind(p, 3, EventKind::kWait);
  EXPECT_GT(waits, 0) << FormatSignatureTable(apart);
}

// QE's pw.x (2026-11-29): between an allreduce and two barriers every rank makes, rank 0
// alone makes communicators of its own (splits of a communicator only it is in). Those make
// a loop of rank 0's, so its barriers were a run apart, which no other rank's phases pair
// with: matched by logical time, they counted as time in the phase that holds the others'
// barriers, and the model's barriers were made by every rank but 0 (the synthesized run
// deadlocked). They are calls of that phase now, on rank 0 as on the others: as an odd
// rank (P = 6) and as the reference whose phases the others lack (P = 2).
TraceData OwnCommunicatorsBetweenCollectives(int nprocs) {
  testing::Gen g(nprocs, "own_comms");
  g.Init();
  std::vector<int> all(static_cast<std::size_t>(nprocs));
  for (int r = 0; r < nprocs; ++r) all[static_cast<std::size_t>(r)] = r;
  auto create = [&](int rank, CommId parent, CommId made) {
    g.Local(rank, MakeCommCreate(parent, made, CommOrigin::kSplit, {rank}), 3000);
  };
  for (int it = 0; it < 20; ++it) {
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 100000);
    g.Collective(all, EventKind::kBcast, 64, 0);
  }
  // Every rank's own communicator (a split of the world, one member each).
  for (int r = 0; r < nprocs; ++r) create(r, kCommWorld, 200 + static_cast<CommId>(r));
  g.Collective(all, EventKind::kAllreduce, 8);
  for (int i = 0; i < 3; ++i) {
    g.Compute(0, 5000);
    create(0, 200, 300 + static_cast<CommId>(i));
  }
  for (int b = 0; b < 2; ++b) {
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 2000);
    g.Collective(all, EventKind::kBarrier, 0);
  }
  for (int it = 0; it < 30; ++it) {
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 200000);
    g.Collective(all, EventKind::kAllreduce, 64);
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 50000);
    g.Collective(all, EventKind::kBcast, 1024, 0);
  }
  g.Finalize();
  return g.Take();
}

TEST(Phases, ARanksOwnCommunicatorsDoNotTakeItsCollectivesOutOfThePhase) {
  for (int nprocs : {6, 2}) {
    const Signature sig = Analyze(OwnCommunicatorsBetweenCollectives(nprocs));
    int barriers = 0;
    for (const Phase& p : sig.phases) {
      for (int r = 1; r < nprocs; ++r) {
        EXPECT_EQ(CountKind(p, r, EventKind::kBarrier), CountKind(p, 0, EventKind::kBarrier))
            << "P = " << nprocs << ", phase " << p.id << ", rank " << r << "\n"
            << FormatSignatureTable(sig);
      }
      barriers += CountKind(p, 1, EventKind::kBarrier) * static_cast<int>(p.weight);
    }
    EXPECT_EQ(barriers, 2) << FormatSignatureTable(sig);
    ExpectSignatureHolds(sig);
  }
}

// One pass over a trace for several similarities (the values `pas2p model` tries when the
// counts' phases differ in shape) gives each the signature AnalyzeTrace gives it alone: only
// the merging of runs of one structure depends on the similarity, and each value merges on
// its own. Options that differ in more than the similarity are analyzed one by one.
TEST(AnalyzeTraceUnder, GivesEveryAnalysisWhatItGivesAlone) {
  testing::StencilSpec drifting;
  drifting.drift = 0.004;
  drifting.noise = 0.02;
  drifting.allreduce_every = 25;
  std::vector<std::pair<std::string, TraceData>> traces;
  traces.emplace_back("stencil", testing::MakeStencil(drifting));
  traces.emplace_back("nested", testing::MakeNested(6, {3, 5, 2, 5, 4}));
  traces.emplace_back("warm-up", testing::MakeLinePipelines(6, 20, 4000000));
  traces.emplace_back("cg-like", testing::MakeCgLike(8, 3, 2));
  std::vector<AnalyzeOptions> ladder;
  for (const double similarity : {0.3, 0.0, 0.02, 0.1, 0.6, 1.0}) {
    AnalyzeOptions o;
    o.similarity = similarity;
    o.compute_floor_ns = 0;  // so that the similarity decides even between small bursts
    ladder.push_back(o);
  }
  int differ = 0;
  for (const auto& [name, data] : traces) {
    MemoryTrace trace{TraceData(data)};
    const std::vector<Signature> together = AnalyzeTraceUnder(trace, ladder, 2);
    ASSERT_EQ(together.size(), ladder.size());
    for (std::size_t k = 0; k < ladder.size(); ++k) {
      const Signature alone = AnalyzeTrace(trace, ladder[k]);
      EXPECT_TRUE(together[k] == alone)
          << name << " under similarity " << ladder[k].similarity << ":\ntogether\n"
          << FormatSignatureTable(together[k]) << "alone\n"
          << FormatSignatureTable(alone);
      differ += k > 0 && !(together[k] == together[0]);
    }
  }
  // The similarities gave different signatures somewhere, so each was analyzed as itself.
  EXPECT_GT(differ, 0);
  // Options that differ in more than the similarity.
  AnalyzeOptions sized = ladder[0];
  sized.bytes_tolerance = 0.1;
  MemoryTrace trace{TraceData(traces.front().second)};
  const std::vector<Signature> mixed = AnalyzeTraceUnder(trace, {ladder[1], sized});
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_TRUE(mixed[0] == AnalyzeTrace(trace, ladder[1]));
  EXPECT_TRUE(mixed[1] == AnalyzeTrace(trace, sized));
  EXPECT_TRUE(AnalyzeTraceUnder(trace, {}).empty());
}

}  // namespace
}  // namespace pas2p::phases
