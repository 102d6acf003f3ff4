// The signature of one traced run (PAS2P): its phases, their weights and their times.
//
// A phase is a sequence of MPI calls (with the compute before each) that the run repeats;
// its weight is how many times it occurs. For every rank, a phase lists the calls of one
// occurrence in program order, with peers as world ranks and statistics over all
// occurrences (compute burst before each call: CPU time, instructions, cycles; bytes).
// Phases are listed in the order of their first occurrence; `sequence` gives the order in
// which the run executes them, with its nested loops, so a later stage can replay the run.
//
// The sequence is one rank's order: the reference rank of the phase alignment (the rank
// whose number of phases is the most common among the ranks whose streams repeat, the first
// such rank; rank 0 when every rank has the same number of phases). Ranks that differ (a
// master, boundary ranks) run the same phases in that order as far as their phases were
// matched to the reference's; their own weights are in RankPhase::weight. Its size is
// bounded by the loop structure, not by the iterations (a loop of 10^6 iterations is one item).
//
// PET = sum of time_s x weight over the phases, where time_s is the wall time of one
// occurrence on the run's global clock (the ranks' clocks aligned on collectives that every
// rank calls): the run is cut into its top-level groups (a top-level loop with everything
// nested in it, or a run of calls outside loops), a group lasts from the end of the one
// before to the moment its slowest rank leaves it, and its time is shared among its phases
// in proportion to the ranks' own time in them; so the phases partition the run and PET is
// the traced time. Per-rank times (RankPhase::time_s) stay each rank's own; pet_relevant_s is
// the same sum over the relevant phases only, the largest ones that together cover at
// least `relevance_threshold` of the run (coverage = pet_relevant_s / pet_s).
//
// File format (JSON, written by SaveSignature, read by LoadSignature): one object
//   {"format": "pas2p-signature", "version": 1, "application", "nprocs", "trace",
//    "traced_time_s", "pet_s", "pet_relevant_s", "pet_error", "coverage", "relevance_threshold",
//    "cut", "counters": [...], "warnings": [...], "communicators": [{"id", "members": [world
//    ranks]}], "sequence": [item, ...], "phases": [{"id", "weight", "time_s",
//    "total_time_s", "share", "relevant",
//                "description", "structure", "first_step", "first_wall_s",
//                "time_per_rank_max_s", "time_per_rank_min_s",
//                "ranks": [{"rank", "weight", "time_s", "compute": {Stats x3},
//                           "events": [{"kind", "peer", "recv_peer", "comm", "tag", "root",
//                                       "bytes", "recv_bytes", "requests", "polls", "tested",
//                                       "cpu_ns", "instructions", "cycles", "reply",
//                                       "root_step", "root_bytes", "root_recv_bytes",
//                                       "root_cpu_ns"}]}]}]}
// ("reply" is written only when true: a send to the source of the latest wildcard receive.
// "root_step" and the root's statistics only for a root that moves: see RootStep.)
// A sequence item is a run of one phase, [phase id, repetitions], or a loop,
// {"loop": iterations, "body": [item, ...]}; counts are per execution of the enclosing loop's
// body (at the top level: once). When a count differs between executions (an inner loop of 8
// iterations in one outer iteration and 9 in the next), the item also gives its total over all
// executions: [phase id, repetitions, total] or {"loop": iterations, "total": T, "body"}, with
// repetitions / iterations = floor(total / executions), and the k-th of E executions (from 0)
// makes floor((k+1)T/E) - floor(kT/E) (the total spread evenly, in order); when the first
// executions made other counts than that, they are listed too, [phase id, repetitions, total,
// [c0, c1, ...]] or "counts": [c0, c1, ...] (at most 256), and the executions after them
// share the rest of T evenly (older files give one first count, [..., total, first] or
// "first": F, which reads as [F]). So stencil2d's 50
// halo exchanges with an allreduce every 10 read [[0,1], {"loop":5, "body":[[1,10],[2,1]]},
// [3,1]]. Version 1 wrote a flat run-length list [[id, repetitions], ...]: it reads as a
// version 2 sequence without loops.
// Stats are {"mean", "stddev", "min", "max", "n", "m2"} (m2: sum of squared deviations). Statistics
// over occurrences; peers are world ranks (kNoRank = -3 where not applicable, kAnySource = -1 for a
// wildcard irecv).
// An event's "compute" may also hold, optionally (absent: unknown, as in older files), the part
// of the CPU burst that the ranks share in one occurrence: "occurrence_cpu_ns" (Stats, over this
// rank's sampled occurrences k, of the occurrence mean: the mean burst before the same call over
// the "occurrence_ranks" ranks that make it in their k-th occurrence of the phase) and
// "residual_cpu_ns" (Stats over the same k of this rank's burst minus the occurrence mean). The
// sample is the first kOccurrenceSamples occurrences (see ComputeStats), and
// "residual_shape" ([kNoiseShapeBins bin means of the sorted residuals, ns], optional).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pas2p/core/event.h"

namespace pas2p::phases {

// Running statistics of one quantity (Welford).
struct Stats {
  std::int64_t n = 0;
  double mean = 0;
  double m2 = 0;  // sum of squared deviations
  double min = 0;
  double max = 0;

  void Add(double x);
  void Merge(const Stats& other);
  double stddev() const;
  double sum() const { return mean * static_cast<double>(n); }
  bool operator==(const Stats&) const = default;
};

// Occurrences per call and rank whose bursts are kept to separate the shared spread (the
// first ones, in time order).
inline constexpr std::size_t kOccurrenceSamples = 64;
// Bins of a rank's own noise shape (ComputeStats::residual_shape).
inline constexpr std::size_t kNoiseShapeBins = 16;

// Compute before a call (one burst, or the sum of one occurrence's bursts).
struct ComputeStats {
  Stats cpu_ns;
  Stats instructions;  // n == 0 when the trace has no counters
  Stats cycles;
  // Events only, n == 0 when unknown. Over this rank's first occurrences k (at most
  // kOccurrenceSamples): the occurrence mean m_k, the mean CPU burst before the same call
  // (same kind and tag, same ordinal among such calls) over the `occurrence_ranks` ranks that
  // make it in their k-th occurrence of the phase; and the residual (this rank's burst - m_k).
  // m_k varies with what every rank shares in an occurrence (a cold first iteration, noise
  // that hits all nodes at once); the residual with what is the rank's own (its offset from
  // the others is the residual's mean, its own variation the residual's spread).
  Stats occurrence_cpu_ns;
  Stats residual_cpu_ns;
  std::int32_t occurrence_ranks = 0;  // ranks averaged per occurrence (rounded mean)
  // The shape of the residuals: sorted, cut into kNoiseShapeBins equal shares of the sample,
  // the mean of each share (ascending; their mean is the residuals' mean). Compute noise is
  // rarely symmetric (a burst the OS or a cold cache holds up runs long, none runs much
  // short), and the long tail makes the stragglers; this keeps it. Empty when not measured
  // (fewer than 2 occurrences, older signatures).
  std::vector<float> residual_shape;
  bool operator==(const ComputeStats&) const = default;
};

// How a rooted collective's root follows from the previous root of the same kind of
// collective on the same communicator (by communicator rank, modulo its size): fixed (the
// root is `peer`), the next or the previous rank (a root that rotates: an LU factorization's
// panel owner, k mod P), or the same rank as that previous call (a second broadcast from the
// panel's owner). Found per rank in the order it made the calls, so a loop whose root moves
// on each iteration is still one loop.
enum class RootStep : std::int8_t { kFixed = 0, kNext = 1, kPrevious = -1, kSame = 2 };
std::string_view RootStepName(RootStep step);  // "fixed", "next", "previous", "same"
bool ParseRootStep(std::string_view name, RootStep* step);

// One MPI call of one occurrence of a phase on one rank.
struct PhaseEvent {
  EventKind kind = EventKind::kCompute;
  std::int32_t peer = kNoRank;       // p2p partner (world rank); rooted collectives: root
  std::int32_t recv_peer = kNoRank;  // sendrecv: source of the receive half
  CommId comm = kCommWorld;
  std::int32_t tag = 0;
  std::int32_t requests = 0;  // completions: requests passed
  // A send to whichever rank the latest completed wildcard receive came from (a master's
  // reply to the worker that answered); `peer` is then only the first occurrence's partner.
  bool reply = false;
  Stats bytes;       // bytes sent (p2p send side, collectives) or received (recv)
  Stats recv_bytes;  // sendrecv receive half; collectives: bytes received
  Stats polls;       // failed tests folded into this call (polling loops)
  // Completions: one sample (1) per occurrence that was a test that completed rather than a
  // wait, so tested.n of polls.n occurrences: a polling loop's calls, which never block.
  // Empty for other calls and older signatures.
  Stats tested;
  ComputeStats compute;  // the compute burst before the call
  // Rooted collectives whose root moves (root_step != kFixed; `peer` is then kNoRank): the
  // occurrences in which this rank was the root apart. bytes, recv_bytes and compute above
  // are then the occurrences in which it was not (a panel owner's factorization before its
  // broadcast is no burst of the ranks that wait for it).
  RootStep root_step = RootStep::kFixed;
  Stats root_bytes;
  Stats root_recv_bytes;
  Stats root_cpu_ns;
  bool operator==(const PhaseEvent&) const = default;
};

// What one rank does in one phase.
struct RankPhase {
  int rank = 0;
  double weight = 0;     // occurrences on this rank (usually the phase weight)
  double time_s = 0;     // wall time this rank spent in the phase, all occurrences
  ComputeStats compute;  // compute per occurrence (sum of the bursts; stddev combined)
  std::vector<PhaseEvent> events;
  bool operator==(const RankPhase&) const = default;
};

struct Phase {
  int id = 0;
  double weight = 0;               // occurrences in the run
  double time_s = 0;               // wall time of one occurrence
  double total_time_s = 0;         // time_s x weight
  double share = 0;                // total_time_s / traced time
  bool relevant = false;           // part of the signature (covers the run with the others)
  std::string description;         // what it communicates, in words
  std::string structure;           // hex hash of the communication structure (same run only)
  std::int64_t first_step = 0;     // logical step of its first event
  double first_wall_s = 0;         // wall time of its first event (earliest rank)
  double time_per_rank_max_s = 0;  // per occurrence, the slowest rank
  double time_per_rank_min_s = 0;  // per occurrence, the fastest rank
  std::vector<RankPhase> ranks;    // one per rank, by rank
  bool operator==(const Phase&) const = default;
};

struct Communicator {
  CommId id = 0;
  std::vector<std::int32_t> members;
  // How it was made (CommOrigin: dup, split, create, cart), -1 when unknown (older
  // signatures). A split or a create is a subset by design even where it holds every rank
  // (groups of 4 at 4 ranks); a dup or a cartesian copy of the world is the world.
  std::int32_t origin = -1;
  bool operator==(const Communicator&) const = default;
};

// One item of a run's phase order (see the format comment above): a run of phase `phase`
// (body empty), or a loop (`phase` == kLoop) whose body runs `total` times. `total` counts
// the repetitions (run) or iterations (loop) over every execution of the enclosing loop's
// body (at the top level: in the whole run). The k-th of E executions makes
// floor((k+1)T/E) - floor(kT/E) (the total spread evenly, in order), except where the
// executions ran other numbers than that (a loop cut short where the enclosing one starts,
// a first stretch of steps before the first re-neighbouring, steps between two
// re-neighbourings that the enclosing loop's iterations cut at other places: 18, 1, 18, 1):
// then `counts` lists what the first executions made, and the rest of T is spread so over
// the executions after them. At most kMaxListedCounts are listed (SequenceCountsFor).
struct SequenceItem {
  static constexpr int kLoop = -1;
  static constexpr std::size_t kMaxListedCounts = 256;
  int phase = kLoop;
  std::int64_t total = 0;
  std::vector<SequenceItem> body;
  std::vector<std::int64_t> counts;
  bool is_loop() const { return phase == kLoop; }
  bool operator==(const SequenceItem&) const = default;

  static SequenceItem Run(int phase, std::int64_t total) { return {phase, total, {}, {}}; }
  static SequenceItem Loop(std::int64_t total, std::vector<SequenceItem> body) {
    return {kLoop, total, std::move(body), {}};
  }
};
using Sequence = std::vector<SequenceItem>;

// What the k-th (from 0) of `executions` executions of an item of total `total` makes
// (`counts`: SequenceItem::counts).
std::int64_t SequenceCountAt(std::int64_t total, std::int64_t executions, std::int64_t k,
                             const std::vector<std::int64_t>& counts = {});
// What the first k of `executions` executions make together: floor(kT/E), or with m listed
// counts, the sum of the first min(k, m) of them and, for k > m, floor((k - m)(T - S)/(E - m))
// more (S: the sum of the listed counts).
std::int64_t SequenceFirstAt(std::int64_t total, std::int64_t executions, std::int64_t k,
                             const std::vector<std::int64_t>& counts = {});
// SequenceItem::counts for an item of total `total` whose first executions (of `executions`)
// made `made` (every execution, or the first ones only): the shortest prefix of `made` after
// which the even spread of the rest gives the others of `made`, at most kMaxListedCounts;
// empty when the even spread gives them all, or when `made` is not a count list of the total
// (more executions than `executions`, a negative count, a sum above the total, or every
// execution listed with another sum).
std::vector<std::int64_t> SequenceCountsFor(std::int64_t total, std::int64_t executions,
                                            const std::vector<std::int64_t>& made);

// A canonical form of `items` (whose enclosing body runs `executions` times): items of total
// 0 and empty loops dropped, loops of one iteration per execution spliced in, a loop whose
// body is one item with an even count folded into it, adjacent equal items (same phase, or
// equal loop bodies) with even counts joined.
Sequence SimplifySequence(Sequence items, std::int64_t executions = 1);
// Repetitions of each phase over the whole run, by phase id.
std::vector<std::pair<int, std::int64_t>> SequencePhaseTotals(const Sequence& items);
// The phases in the order of their first occurrence in the run.
std::vector<int> SequencePhases(const Sequence& items);
// The run's shape: its runs of phases item by item (loops entered, counts left out), each
// phase named by its place in the order of first occurrence (0, 1, 2, 1, 3, ...). Two counts
// of one code whose phases were found alike have the same shape whatever their loop counts.
std::vector<int> SequenceShape(const Sequence& items);
// The run phase by phase (one entry per occurrence), at most `limit` entries.
std::vector<int> ExpandSequence(const Sequence& items, std::size_t limit);
// In words: "0, (1 x10, 2) x5, 3"; a count that differs between executions is shown as its
// mean ("x8.5"), followed by each execution's where they are listed (SequenceItem::counts:
// "x9.5 {18, 1, 18, 1}", at most 8).
std::string FormatSequence(const Sequence& items);
// JSON of a sequence and back (`origin` names the file in errors).
std::string SequenceToJsonText(const Sequence& items);
Sequence SequenceFromJsonText(const std::string& text, const std::string& origin);

struct Signature {
  std::string application;
  int nprocs = 0;
  std::string trace;  // where it came from
  double traced_time_s = 0;
  double pet_s = 0;
  double pet_relevant_s = 0;
  double pet_error = 0;  // (pet_s - traced_time_s) / traced_time_s
  double coverage = 0;   // share of the traced time covered by the relevant phases
  double relevance_threshold = 0.95;
  bool cut = false;  // the trace was cut; analysed up to the cut
  std::vector<std::string> counters;
  std::vector<std::string> warnings;
  std::vector<Communicator> communicators;
  Sequence sequence;  // the run's phase order (phase ids), nested loops
  // A self-scheduled run (a master replying to whichever worker answered): how many
  // separate times the master enters its loop of replies (rounds of handing out tasks);
  // 0 when the run is not self-scheduled.
  int scheduled_rounds = 0;
  // Several rounds (scheduled_rounds > 1) whose ends are collectives of all ranks, so the
  // phases are those of one round, pooled over the rounds (the hand-out, the self-scheduled
  // phase, the last replies, the collectives that end a round), and `sequence` repeats them
  // in a loop of scheduled_rounds iterations. False when the rounds could not be told apart
  // on every rank (no collective of all ranks ends a round): the phases then mix the rounds.
  bool rounds_separated = false;
  // A self-scheduled run: its tasks (a worker's compute from a message of the master to
  // its next one, when that piece sends a result to the master) over the whole run, their
  // number and summed CPU time (0 when the run is not self-scheduled or its workers receive
  // the master's messages other than with blocking receives), and each task's CPU time in
  // the order the master handed the tasks out (empty beyond kMaxTaskCosts tasks, or when the
  // master's messages and the workers' pieces do not pair).
  std::int64_t scheduled_tasks = 0;
  std::int64_t scheduled_task_cpu_sum_ns = 0;
  std::vector<std::int64_t> scheduled_task_cpu_ns;
  static constexpr std::size_t kMaxTaskCosts = std::size_t{1} << 16;
  std::vector<Phase> phases;
  bool operator==(const Signature&) const = default;

  const Phase* FindPhase(int id) const;
};

// JSON text of a signature (stable key order, so equal signatures give equal bytes).
std::string SignatureToJson(const Signature& signature);
// Throws TraceError naming `origin` when the text is not a signature.
Signature SignatureFromJson(const std::string& json, const std::string& origin);
// Throws UserError when the file cannot be written.
void SaveSignature(const Signature& signature, const std::filesystem::path& path);
// Throws TraceError when the file cannot be read or is not a signature.
Signature LoadSignature(const std::filesystem::path& path);

}  // namespace pas2p::phases
