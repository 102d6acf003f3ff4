// Private: the per-rank loop compressor and the phase occurrences it produces.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/signature.h"

namespace pas2p::phases::internal {

inline constexpr std::int32_t kNoDisp = INT32_MIN;         // no peer
inline constexpr std::int32_t kAnyDisp = INT32_MIN + 1;    // wildcard source
inline constexpr std::int32_t kNullDisp = INT32_MIN + 2;   // MPI_PROC_NULL
inline constexpr std::int32_t kReplyDisp = INT32_MIN + 3;  // to the last wildcard source

std::uint64_t Mix(std::uint64_t x);

struct GroupPart;
// Appends `later` to `into`, joining a part of the same group as into's last one.
void AppendParts(std::vector<GroupPart>* into, const std::vector<GroupPart>& later);

// The CPU bursts before one call in its first occurrences, in time order: `kept` values
// (at most kOccurrenceSamples) of the `seen` occurrences merged so far. The values are always
// those of occurrences 0 .. kept - 1, so the same index is the same occurrence on every rank
// whose calls merged the same way. The first value is stored inline: most calls are never
// merged (plain calls outside loops) and cost no allocation.
struct OccurrenceSample {
  std::int64_t seen = 0;
  std::uint32_t kept = 0;
  float first = 0;
  std::vector<float> more;  // occurrences 1 .. kept - 1
  // Bit k: in occurrence k this rank was the root of a collective whose root moves (its
  // burst is the root's work, not one the other ranks share).
  std::uint64_t root_turns = 0;
  static_assert(kOccurrenceSamples <= 64, "root_turns holds one bit per kept occurrence");

  void Add(double cpu_ns, bool root_turn = false);
  float at(std::size_t k) const { return k == 0 ? first : more[k - 1]; }
  bool RootTurn(std::size_t k) const { return ((root_turns >> k) & 1) != 0; }
  // The occurrences of `later` follow this one's: appended while every occurrence so far is
  // kept (after a gap the indices would no longer be occurrences).
  void Append(const OccurrenceSample& later);
  // One copy of an unrolled call: its occurrences are those with index % modulus == residue
  // (a loop of `modulus` iterations per execution, in time order). Nothing is kept when the
  // merged occurrences are not whole executions.
  OccurrenceSample Every(std::int64_t modulus, std::int64_t residue) const;
};

// One MPI call (a symbol) with statistics over the occurrences merged into it.
struct Leaf {
  std::uint64_t hash = 0;  // structure only: kind, displacements, comm, root, requests
  EventKind kind = EventKind::kCompute;
  std::int32_t disp = kNoDisp;
  std::int32_t recv_disp = kNoDisp;
  CommId comm = kCommWorld;
  std::int32_t root = kNoRank;  // a fixed root (world rank); kNoRank when it moves
  RootStep root_step = RootStep::kFixed;
  std::int32_t requests = 0;
  // Absolute values at the first occurrence.
  std::int32_t peer = kNoRank;
  std::int32_t recv_peer = kNoRank;
  std::int32_t tag = 0;
  // Tags of the first occurrences (at most kOccurrenceSamples), in time order, once two of
  // them differed; empty while every occurrence had `tag`. The tag is not part of the
  // structure (a code that numbers its messages by iteration still loops), but calls that
  // fold into the iterations of one loop only because their partner is the same rank -- the
  // receives from the +1 and the -1 neighbour along a dimension of extent 2 -- must keep
  // their own tags when the loop is unrolled, or the copies' messages no longer match.
  std::vector<std::int32_t> tags;
  Stats bytes, recv_bytes, polls;
  // One sample per test that completed (a poll found it): tested.n of the polls.n calls.
  Stats tested;
  ComputeStats compute;
  // A root that moves: the occurrences in which this rank was the root (a subset of those in
  // bytes, recv_bytes and compute, which hold every occurrence).
  Stats root_bytes, root_recv_bytes, root_cpu_ns;
  OccurrenceSample occurrences;  // CPU burst per occurrence, for the shared spread
  double last_cpu_ns = 0;        // the latest occurrence, for drift-tolerant matching
  double last_bytes = 0;
  double time_ns = 0;      // wall time attributed to the call and the compute before it, summed
  double last_end_ns = 0;  // rank-local wall time at which the latest occurrence ended
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double first_wall_ns = 0;

  void Merge(const Leaf& later);
  // The tag of occurrence `k` (0 = the first); `tag` where it was not kept.
  std::int32_t TagAt(std::int64_t k) const;
  // One copy of an unrolled call (see OccurrenceSample::Every): its tag and tags are those of
  // the occurrences with index % modulus == residue.
  void KeepEvery(std::int64_t modulus, std::int64_t residue);
};

struct Node {
  std::uint64_t hash = 0;
  bool loop = false;
  Leaf leaf;  // leaves only
  // Loops only. `count`: iterations of this loop where it was found (used to decide whether
  // it is short enough to unroll); `total`: iterations summed over every execution of the
  // loop merged into this node (an inner loop merged across outer iterations). The hash
  // does not include the count: an inner loop that runs 8 times in one outer iteration and
  // 9 in the next is the same structure.
  std::int64_t count = 0;
  std::int64_t total = 0;
  // Loops merged across executions of an enclosing loop: the iterations of the second
  // execution (0 until there is one), and whether a later execution ran another number of
  // iterations than that (the first may differ: a loop that straddles the enclosing one's
  // start was cut short there). Such a loop is not unrolled (Unrollable): its iteration
  // count is not one number the calls of the phase around it could repeat.
  std::int64_t later_count = 0;
  bool counts_vary = false;
  // The iterations of each later execution, in order (the first kMaxListedCounts of them).
  std::vector<std::int64_t> later_counts;
  std::vector<Node> body;
  std::uint64_t body_hash = 0;   // ordered hash of the body items
  std::uint64_t body_mhash = 0;  // order-free hash of the body items
};

// Where the time of an instance was spent: `time_ns` of it inside top-level group `group`
// of its rank (a top-level loop, or a run of calls outside loops).
struct GroupPart {
  std::int64_t group = 0;
  double time_ns = 0;
};

// A phase occurrence group of one rank: a run of calls with its weight.
struct Instance {
  std::uint64_t hash = 0;
  double weight = 0;
  std::vector<Leaf> leaves;
  double time_ns = 0;  // all occurrences, including dropped calls (this rank's own clock)
  // Per top-level group, the part of time_ns spent in it (consecutive groups; merged
  // instances concatenate their parts). Consumed by the global-clock timing in analyze.cc.
  std::vector<GroupPart> parts;
  // This instance's part of the run on the global clock (set by analyze.cc): the global
  // time of its groups, shared among the ranks' instances in proportion to their time.
  double global_ns = 0;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double first_wall_ns = 0;
  std::uint64_t dropped_calls = 0;  // plain calls beyond max_plain_events (not in leaves)

  double CpuPerOccurrence() const;
};

// The compute of a run of calls (an Instance, or the same instance summed over the ranks),
// for deciding whether two separate runs of one structure are one phase (SimilarRuns).
struct RunCompute {
  double lead_ns = 0;   // per occurrence: the burst before the first call
  double inner_ns = 0;  // per occurrence: the bursts before the other calls
  double weight = 0;    // occurrences (summed runs: the fewest of any rank)
  std::size_t calls = 0;
  std::size_t ranks = 1;  // how many ranks' compute is summed
  double total_ns() const { return lead_ns + inner_ns; }
};
RunCompute ComputeOfRun(const Instance& instance);
// Adds another rank's run of the same calls.
void AddRank(RunCompute* into, const Instance& instance);

// Whether two runs of one structure (same calls) have compute alike enough to be one phase:
// their compute per occurrence differs by at most options.similarity of the larger plus
// options.compute_floor_ns per burst. Or: one run is a single occurrence and the other
// repeats (a loop), their bursts after the first call are alike, and the single occurrence
// taken into the loop changes its compute per occurrence by at most options.similarity (no
// floor): the first burst of a single occurrence (its lead-in) is the gap from whatever the
// program did before (set-up, I/O, another phase), not a burst of the loop's body, so a warm-up
// iteration of a time-step loop run apart from it, after the set-up compute, is still one more
// iteration of the loop. Its lead-in stays in the burst before the phase's first call (the
// phase's time and compute keep it; the run's total is unchanged), as the lead-in of a loop's
// first iteration always has; a lead-in too long for that bound (a set-up that outweighs the
// loop) keeps the single occurrence a phase of its own.
bool SimilarRuns(const RunCompute& a, const RunCompute& b, const AnalyzeOptions& options);

class RankCompressor {
 public:
  // `merge_similarities`: the AnalyzeOptions::similarity values under which consecutive
  // runs of one structure merge (PushInstance), each kept apart: the folding of loops does
  // not depend on it, so one pass serves every value (AnalyzeTraceUnder). Empty: just
  // options.similarity.
  RankCompressor(int rank, int nprocs, const AnalyzeOptions& options,
                 const std::vector<double>& merge_similarities = {});
  void Add(std::int64_t step, const Event& event);
  // Flushes everything; the instances are then complete.
  void Finish();
  // Gaps between consecutive receive waits over the whole of this rank's run (quiet: under
  // kWaitRunGapNs), counted when its waits were joined (FlushWaits); after Finish, all of them.
  struct WaitGaps {
    std::int64_t quiet = 0, seen = 0;
  };
  WaitGaps wait_gaps() const { return {quiet_wait_gaps_, quiet_wait_gaps_ + loud_wait_gaps_}; }
  // Whether a run of waits was kept apart, before the rank had shown enough gaps to tell
  // (kWaitRunEvidence), at a gap that its whole run (wait_gaps() after Finish) calls noise:
  // the analysis is then run again with SetWholeRunWaitGaps.
  bool waits_split_early() const { return waits_split_early_; }
  // Decide whether a gap between waits is noise on these gaps (the rank's whole run, from an
  // earlier pass) rather than on the gaps seen so far. Before the first Add.
  void SetWholeRunWaitGaps(WaitGaps gaps) { whole_run_gaps_ = gaps; }
  // The instances under the k-th merge similarity; taken once.
  std::vector<Instance> TakeInstances(std::size_t k) { return std::move(merges_[k].instances); }
  // The calls this rank made (after the folding of partial waitsome calls), and how many of
  // them its instances hold (calls x weight, dropped plain calls included): equal unless the
  // folding lost calls, which the analysis reports.
  std::int64_t calls() const { return calls_; }
  double HeldCalls() const;
  double total_time_ns() const { return total_time_ns_; }
  // Rank-local wall time at which each top-level group ended (index = GroupPart::group).
  const std::vector<double>& group_end_ns() const { return group_end_ns_; }
  // Rank-local wall time at which the rank's timed span ends (finalize: its start).
  double end_ns() const { return span_end_ns_; }
  // The rank's run in order under the k-th merge similarity, with its nested loops: runs
  // name indices into TakeInstances(k) (SequenceItem::phase = instance index), a loop's body
  // runs `total` times (see SequenceItem). Each emission of an instance is a run of total =
  // its weight there, so the totals of an instance's runs add up to its weight.
  Sequence OrderOf(std::size_t k) const;

 private:
  // Add without the folding of partial waitsome calls (see Add).
  void AddEvent(std::int64_t step, const Event& event);
  // Add without the folding of runs of MPI_Wait (see Add).
  void AddFoldingSome(std::int64_t step, const Event& event);
  // Adds the held run of waits as one (a waitall of their requests when there are several),
  // then the compute between them.
  void FlushWaits();
  // Adds the held partial waitsome and the compute after it as they were.
  void FlushSome();
  void Push(Node node);
  void Reduce();
  bool ReduceAt(std::size_t n);
  bool ContinuesLoop(const Node& loop, std::size_t from) const;
  bool Similar(const Node& a, const Node& b) const;
  bool SimilarLeaf(const Leaf& a, const Leaf& b) const;
  bool SeqMatches(const std::vector<Node>& body, std::size_t from) const;
  bool SeqWindowsMatch(std::size_t a, std::size_t b, std::size_t k) const;
  // Pairs window items with body items of equal hash, the blocking ones in order; false if
  // impossible.
  bool MultiPairing(const std::vector<Node>& body, std::size_t from,
                    std::vector<std::size_t>* pairing) const;
  void Retire(std::size_t count);
  void RebuildPrefixes();
  std::uint64_t WindowHash(std::size_t i, std::size_t j) const;
  std::uint64_t WindowMHash(std::size_t i, std::size_t j) const;
  // `next`: the item after `node` at the top level, if known yet.
  void AddTopLevel(const Node& node, const Node* next);
  // Whether every loop nested in `loop` unrolls, so that its body is one run of calls.
  bool UnrollsToOneRun(const Node& loop) const;
  // The run of calls of one iteration of `loop` (UnrollsToOneRun), rotated to start where the
  // program's loop starts; calls of `preceding` that belong to the loop move to `carry` (they
  // follow the loop), leaving at least `keep` of them. `next`: the item after the loop at its
  // level, if any. `executions`: how often the loop ran; `total`: its iterations over them
  // (in: the loop's; out: fewer when an iteration's calls moved out of it).
  std::vector<Leaf> CanonicalRun(const Node& loop, const Node* next, std::vector<Leaf>* preceding,
                                 std::vector<Leaf>* carry, std::size_t keep,
                                 std::int64_t executions, std::int64_t* total);
  std::vector<Leaf> CanonicalRotation(const Node& loop, const Node* next,
                                      std::vector<Leaf>* preceding, std::vector<Leaf>* carry,
                                      std::size_t keep, std::int64_t executions,
                                      std::int64_t* total);
  void FlattenBody(const std::vector<Node>& body, double weight, Sequence* order);
  void Emit(const std::vector<Leaf>& run, double weight, Sequence* order);
  // `executions`: how many times the loop ran (its enclosing loop's iterations; 1 at the
  // top level), so that its iterations per execution are loop.total / executions.
  bool Unrollable(const Node& loop, double executions) const;
  // `modulus` / `residue`: which occurrences of the loop's calls the copies made now stand
  // for (the enclosing unrolled loops' iterations; 1 / 0 at the top).
  void Unroll(const Node& loop, double executions, double share, std::vector<Leaf>* out,
              std::int64_t modulus = 1, std::int64_t residue = 0) const;
  void AppendPlain(const Leaf& leaf);
  void FlushPlain();
  // Returns the number of the push; under each merge similarity the instance may join the
  // previous one (Merge::instance_of_push says which instance holds it).
  std::size_t PushInstance(Instance instance);
  std::int64_t OpenGroup(double end_ns);

  int rank_;
  AnalyzeOptions options_;
  std::vector<Node> seq_;
  std::vector<std::uint64_t> pre_;   // ordered prefix hashes of seq_
  std::vector<std::uint64_t> mpre_;  // order-free prefix hashes of seq_
  std::vector<std::uint64_t> pow_;
  // Compute and polls since the last call.
  double pending_cpu_ = 0, pending_ins_ = 0, pending_cyc_ = 0, pending_time_ = 0;
  bool pending_has_ins_ = false, pending_has_cyc_ = false;
  std::int64_t pending_polls_ = 0;
  // A waitsome (or testsome) that completed part of its requests, held until the next call
  // shows whether it waits for the rest (then the calls are one), with the compute after it.
  std::optional<Event> some_;
  std::int64_t some_step_ = 0;
  std::vector<std::pair<std::int64_t, Event>> some_after_;
  // A run of MPI_Wait calls of one receive each (a loop over a halo's receives: HPCG's
  // ExchangeHalo), held with the compute between them until a call that is not one of them
  // (or more compute than noise) ends it; FlushWaits joins them where the gaps are noise.
  std::set<RequestId> receive_requests_;  // irecvs posted and not completed yet
  struct WaitGap {
    std::vector<std::pair<std::int64_t, Event>> compute;
    double cpu_ns = 0;
  };
  std::vector<std::pair<std::int64_t, Event>> wait_run_;   // the run's waits, in order
  std::vector<WaitGap> wait_gaps_;                         // the compute between them
  std::vector<std::pair<std::int64_t, Event>> wait_tail_;  // compute after the last one
  double wait_tail_cpu_ = 0;
  // Gaps between consecutive receive waits in the runs flushed so far: under kWaitRunGapNs
  // or over.
  std::int64_t quiet_wait_gaps_ = 0, loud_wait_gaps_ = 0;
  // A loud gap split a run before kWaitRunEvidence gaps were seen (see waits_split_early).
  bool split_without_evidence_ = false;
  bool waits_split_early_ = false;
  std::optional<WaitGaps> whole_run_gaps_;
  double prev_end_ns_ = 0;
  double span_end_ns_ = 0;
  bool seen_event_ = false;
  // How the root of a rooted collective follows from the previous one of its kind on its
  // communicator (see RootStep); updates that previous root.
  RootStep StepOfRoot(const Event& e);

  int nprocs_;
  std::map<CommId, std::vector<std::int32_t>> comm_members_;  // this rank's communicators
  std::set<CommId> self_comms_ = {kCommSelf};  // MPI_COMM_SELF and those made from it
  // Per (kind, communicator): the communicator rank of the latest root, and whether the root
  // has moved by one since the first call (only then is a repeated root "the same").
  struct RootTrack {
    std::int64_t last = 0;
    bool moves = false;
  };
  std::map<std::pair<EventKind, CommId>, RootTrack> roots_;
  std::unordered_set<RequestId> wildcard_requests_;  // pending irecvs from MPI_ANY_SOURCE
  std::int32_t last_wildcard_source_ = kNoRank;
  double total_time_ns_ = 0;
  std::int64_t calls_ = 0;
  // Output.
  Instance plain_;
  bool plain_open_ = false;
  // Per merge similarity: the options it merges runs under, the instances, and for each
  // push the instance that holds it.
  struct Merge {
    AnalyzeOptions options;
    std::vector<Instance> instances;
    std::vector<int> instance_of_push;
  };
  std::vector<Merge> merges_;
  std::size_t pushes_ = 0;
  // Runs name pushes (SequenceItem::phase = push number); OrderOf names instances.
  Sequence order_;
  std::vector<double> group_end_ns_;
  std::int64_t loop_group_ = 0;  // group of the top-level loop being flattened
  // The closure attempts that found nothing (Reduce): where (the item after the loop), and
  // the prefix hash then.
  std::vector<std::pair<std::size_t, std::uint64_t>> closures_tried_;
  // The calls (structure) of one iteration of each loop flattened so far, as it first ran
  // (CanonicalRun): later loops of the same calls start at the same call.
  std::vector<std::vector<std::uint64_t>> canonical_runs_;
};

}  // namespace pas2p::phases::internal
