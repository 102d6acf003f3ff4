#include "compressor.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace pas2p::phases::internal {
namespace {

constexpr std::uint64_t kBase = 0x100000001B3ULL;  // polynomial base for ordered hashes

std::uint64_t Combine(std::uint64_t h, std::uint64_t v) { return Mix(h ^ Mix(v + 0x9E37)); }

bool IsTestKind(EventKind k) {
  return k == EventKind::kTest || k == EventKind::kTestall || k == EventKind::kTestany ||
         k == EventKind::kTestsome;
}

bool IsCompletionKind(EventKind k) {
  return k == EventKind::kWait || k == EventKind::kWaitall || k == EventKind::kWaitany ||
         k == EventKind::kWaitsome || IsTestKind(k);
}

// Whether an item may take another place when an iteration matches a loop's body in another
// order: the posting of a non-blocking send or receive and the completion calls, whose order
// follows the order messages arrive in. A blocking call (send, receive, sendrecv, a
// collective) and a nested loop keep their place among themselves: the same calls with a
// sendrecv before or after a neighbour's send and wait are another program (who waits for
// whom changes), and replaying one as the other puts the messages in the wrong order.
bool Movable(const Node& n) {
  return !n.loop && (n.leaf.kind == EventKind::kIsend || n.leaf.kind == EventKind::kIrecv ||
                     IsCompletionKind(n.leaf.kind));
}

std::int32_t Displacement(std::int32_t peer, int rank) {
  if (peer == kAnySource) return kAnyDisp;
  if (peer == kProcNull) return kNullDisp;
  if (peer < 0) return kNoDisp;
  return peer - rank;
}

void MergeCompute(ComputeStats* a, const ComputeStats& b) {
  a->cpu_ns.Merge(b.cpu_ns);
  a->instructions.Merge(b.instructions);
  a->cycles.Merge(b.cycles);
}

}  // namespace

std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void OccurrenceSample::Add(double cpu_ns, bool root_turn) {
  if (kept == static_cast<std::uint64_t>(seen) && kept < kOccurrenceSamples) {
    if (root_turn) root_turns |= std::uint64_t{1} << kept;
    if (kept == 0) {
      first = static_cast<float>(cpu_ns);
    } else {
      more.push_back(static_cast<float>(cpu_ns));
    }
    ++kept;
  }
  ++seen;
}

void OccurrenceSample::Append(const OccurrenceSample& later) {
  if (kept == static_cast<std::uint64_t>(seen)) {
    for (std::uint32_t k = 0; k < later.kept && kept < kOccurrenceSamples; ++k) {
      if (later.RootTurn(k)) root_turns |= std::uint64_t{1} << kept;
      if (kept == 0) {
        first = later.at(k);
      } else {
        more.push_back(later.at(k));
      }
      ++kept;
    }
  }
  seen += later.seen;
}

OccurrenceSample OccurrenceSample::Every(std::int64_t modulus, std::int64_t residue) const {
  if (modulus <= 1) return *this;
  OccurrenceSample out;
  if (seen % modulus != 0) {  // kept == 0: unknown
    out.seen = seen / modulus + (residue < seen % modulus ? 1 : 0);
    return out;
  }
  for (std::int64_t k = residue; k < static_cast<std::int64_t>(kept); k += modulus) {
    out.Add(at(static_cast<std::size_t>(k)), RootTurn(static_cast<std::size_t>(k)));
  }
  out.seen = seen / modulus;
  return out;
}

void Leaf::Merge(const Leaf& later) {
  const std::int64_t before = occurrences.seen;
  if (!tags.empty() || !later.tags.empty() || later.tag != tag) {
    if (tags.empty()) {
      tags.assign(static_cast<std::size_t>(std::min<std::int64_t>(
                      before, static_cast<std::int64_t>(kOccurrenceSamples))),
                  tag);
    }
    // Appended only while every occurrence so far has its tag (indices stay occurrences).
    if (static_cast<std::int64_t>(tags.size()) == before) {
      for (std::int64_t k = 0; k < later.occurrences.seen && tags.size() < kOccurrenceSamples;
           ++k) {
        tags.push_back(later.TagAt(k));
      }
    }
  }
  occurrences.Append(later.occurrences);
  bytes.Merge(later.bytes);
  recv_bytes.Merge(later.recv_bytes);
  root_bytes.Merge(later.root_bytes);
  root_recv_bytes.Merge(later.root_recv_bytes);
  root_cpu_ns.Merge(later.root_cpu_ns);
  polls.Merge(later.polls);
  tested.Merge(later.tested);
  MergeCompute(&compute, later.compute);
  last_cpu_ns = later.last_cpu_ns;
  last_bytes = later.last_bytes;
  time_ns += later.time_ns;
  last_end_ns = std::max(last_end_ns, later.last_end_ns);
  first_step = std::min(first_step, later.first_step);
  last_step = std::max(last_step, later.last_step);
  first_wall_ns = std::min(first_wall_ns, later.first_wall_ns);
}

std::int32_t Leaf::TagAt(std::int64_t k) const {
  return k >= 0 && k < static_cast<std::int64_t>(tags.size()) ? tags[static_cast<std::size_t>(k)]
                                                              : tag;
}

void Leaf::KeepEvery(std::int64_t modulus, std::int64_t residue) {
  if (modulus <= 1 || tags.empty()) return;
  std::vector<std::int32_t> kept;
  for (std::int64_t k = residue; k < static_cast<std::int64_t>(tags.size()); k += modulus) {
    kept.push_back(tags[static_cast<std::size_t>(k)]);
  }
  tag = TagAt(residue);
  const bool one_tag =
      std::all_of(kept.begin(), kept.end(), [this](std::int32_t t) { return t == tag; });
  tags = one_tag ? std::vector<std::int32_t>{} : std::move(kept);
}

void AppendParts(std::vector<GroupPart>* into, const std::vector<GroupPart>& later) {
  for (const GroupPart& p : later) {
    if (!into->empty() && into->back().group == p.group) {
      into->back().time_ns += p.time_ns;
    } else {
      into->push_back(p);
    }
  }
}

double Instance::CpuPerOccurrence() const {
  double sum = 0;
  for (const Leaf& l : leaves) sum += l.compute.cpu_ns.mean;
  return sum;
}

RunCompute ComputeOfRun(const Instance& instance) {
  RunCompute run;
  run.weight = instance.weight;
  run.calls = instance.leaves.size();
  run.ranks = 0;
  AddRank(&run, instance);
  return run;
}

void AddRank(RunCompute* into, const Instance& instance) {
  for (std::size_t i = 0; i < instance.leaves.size(); ++i) {
    (i == 0 ? into->lead_ns : into->inner_ns) += instance.leaves[i].compute.cpu_ns.mean;
  }
  into->weight = into->ranks == 0 ? instance.weight : std::min(into->weight, instance.weight);
  ++into->ranks;
}

bool SimilarRuns(const RunCompute& a, const RunCompute& b, const AnalyzeOptions& options) {
  const auto floor_ns = [&](std::size_t bursts) {
    return options.compute_floor_ns * static_cast<double>(std::max<std::size_t>(1, bursts) *
                                                          std::max<std::size_t>(1, a.ranks));
  };
  if (std::fabs(a.total_ns() - b.total_ns()) <=
      options.similarity * std::max(a.total_ns(), b.total_ns()) + floor_ns(a.calls)) {
    return true;
  }
  // A single occurrence (weight 1) and a loop: compare the bursts after the first call.
  const bool a_single = a.weight < 1.5 && b.weight > 1.5;
  const bool b_single = b.weight < 1.5 && a.weight > 1.5;
  if ((!a_single && !b_single) || a.calls < 2 || a.calls != b.calls) return false;
  if (std::fabs(a.inner_ns - b.inner_ns) >
      options.similarity * std::max(a.inner_ns, b.inner_ns) + floor_ns(a.calls - 1)) {
    return false;
  }
  const RunCompute& loop = a_single ? b : a;
  const RunCompute& single = a_single ? a : b;
  const double merged_ns = (loop.total_ns() * loop.weight + single.total_ns() * single.weight) /
                           (loop.weight + single.weight);
  return std::fabs(merged_ns - loop.total_ns()) <=
         options.similarity * std::max(merged_ns, loop.total_ns());
}

RankCompressor::RankCompressor(int rank, int nprocs, const AnalyzeOptions& options,
                               const std::vector<double>& merge_similarities)
    : rank_(rank), options_(options), nprocs_(nprocs) {
  for (const double similarity : merge_similarities) {
    merges_.push_back(Merge{options, {}, {}});
    merges_.back().options.similarity = similarity;
  }
  if (merges_.empty()) merges_.push_back(Merge{options, {}, {}});
  pow_.resize(options_.window + 2);
  pow_[0] = 1;
  for (std::size_t i = 1; i < pow_.size(); ++i) pow_[i] = pow_[i - 1] * kBase;
  pre_.push_back(0);
  mpre_.push_back(0);
}

namespace {
bool IsSome(EventKind kind) { return kind == EventKind::kWaitsome || kind == EventKind::kTestsome; }
// The requests of `some` that it has not completed.
std::vector<RequestId> Outstanding(const Event& some) {
  std::vector<RequestId> left;
  for (RequestId r : some.requests) {
    bool done = false;
    for (const Completion& c : some.completed) done = done || c.request == r;
    if (!done) left.push_back(r);
  }
  return left;
}
}  // namespace

namespace {
// Compute between two MPI_Wait calls that is the loop around them and the tracer's own, not
// work on what arrived (HPCG's ExchangeHalo: 0.1-0.5 us between its waits, 2 us after one
// that blocked); the timer-noise floor of compute (AnalyzeOptions::compute_floor_ns).
constexpr double kWaitRunGapNs = 20000;
// A longer gap is still noise on a rank whose waits otherwise follow each other at once: on
// a virtual machine the CPU clock counts the time the host takes the core (HPCG at 32 ranks
// on 2 cores: 62 of 18816 gaps between its waits of 20-90 us, the rest under 3 us). One such
// gap must not split one exchange's waits, which would give that iteration (or that rank)
// a shape of its own. A gap of up to kWaitRunNoiseNs is noise when at least two thirds of
// the rank's gaps between receive waits, this run's and all before it, are under
// kWaitRunGapNs, out of kWaitRunEvidence or more (the first exchange of 4 neighbours, one
// gap of its 3 taken by the host, is still one waitall). A rank's first exchange of 3
// neighbours has 2 gaps, too few to tell: where one of them split it and the rank's whole
// run calls such gaps noise, the analysis runs again deciding every run on the whole run's
// gaps (RankCompressor::waits_split_early), so that the first exchange is one waitall too.
constexpr double kWaitRunNoiseNs = 1e6;
constexpr std::int64_t kWaitRunEvidence = 3;
bool MostlyQuietWaitGaps(std::int64_t quiet, std::int64_t seen) {
  return seen >= kWaitRunEvidence && 3 * quiet >= 2 * seen;
}
}  // namespace

// A loop of MPI_Wait calls, one per receive, with next to no compute between them (a halo's
// receives completed one by one, in the order they were posted: HPCG's ExchangeHalo) is one
// waitall of their requests. Kept apart, the number of waits is the rank's number of
// neighbours (3 to 26 on HPCG's grid): the waits become a loop of their own, a phase that
// completes the requests another phase posted, and the exchange cannot be modelled. A
// waitall of them ends when the last message is in, as the run of waits did; the compute
// between them follows it. Only receives: a wait for a send, then one for a receive (NAS BT's
// pipelined line solves) keep their order, which tells a pipeline stage's send from the next
// stage's receive. The run is held until it ends (a call that is not such a wait, or more
// compute than any noise), so that whether a gap is noise is decided on all of its gaps.
void RankCompressor::Add(std::int64_t step, const Event& e) {
  if (e.kind == EventKind::kIrecv) receive_requests_.insert(e.request);
  const bool receive_wait = e.kind == EventKind::kWait && e.requests.size() == 1 &&
                            e.completed.size() == 1 &&
                            receive_requests_.count(e.requests.front()) > 0;
  if (IsCompletionKind(e.kind)) {
    for (const Completion& c : e.completed) receive_requests_.erase(c.request);
  }
  if (!wait_run_.empty()) {
    if (e.kind == EventKind::kCompute &&
        wait_tail_cpu_ + static_cast<double>(e.cpu_ns) <= kWaitRunNoiseNs) {
      wait_tail_.emplace_back(step, e);
      wait_tail_cpu_ += static_cast<double>(e.cpu_ns);
      return;
    }
    if (receive_wait) {
      wait_gaps_.push_back(WaitGap{std::move(wait_tail_), wait_tail_cpu_});
      wait_tail_.clear();
      wait_tail_cpu_ = 0;
      wait_run_.emplace_back(step, e);
      return;
    }
    FlushWaits();
  }
  if (receive_wait) {
    wait_run_.emplace_back(step, e);
    return;
  }
  AddFoldingSome(step, e);
}

void RankCompressor::FlushWaits() {
  if (wait_run_.empty()) return;
  std::int64_t quiet = quiet_wait_gaps_, seen = quiet_wait_gaps_ + loud_wait_gaps_;
  for (const WaitGap& g : wait_gaps_) {
    quiet += g.cpu_ns <= kWaitRunGapNs ? 1 : 0;
    ++seen;
  }
  bool loud_is_noise = MostlyQuietWaitGaps(quiet, seen);
  if (whole_run_gaps_) {
    loud_is_noise = MostlyQuietWaitGaps(whole_run_gaps_->quiet, whole_run_gaps_->seen);
  } else if (seen < kWaitRunEvidence) {
    for (const WaitGap& g : wait_gaps_) {
      split_without_evidence_ = split_without_evidence_ || g.cpu_ns > kWaitRunGapNs;
    }
  }
  quiet_wait_gaps_ = quiet;
  loud_wait_gaps_ = seen - quiet;
  std::vector<std::pair<std::int64_t, Event>> run = std::move(wait_run_);
  std::vector<WaitGap> gaps = std::move(wait_gaps_);
  std::vector<std::pair<std::int64_t, Event>> tail = std::move(wait_tail_);
  wait_run_.clear();
  wait_gaps_.clear();
  wait_tail_.clear();
  wait_tail_cpu_ = 0;
  // Waits joined by gaps that are noise make one waitall, the compute of those gaps after it.
  Event held = std::move(run[0].second);
  std::int64_t held_step = run[0].first;
  std::vector<std::pair<std::int64_t, Event>> between;
  for (std::size_t i = 1; i < run.size(); ++i) {
    WaitGap& g = gaps[i - 1];
    if (g.cpu_ns <= kWaitRunGapNs || loud_is_noise) {
      const Event& w = run[i].second;
      held.kind = EventKind::kWaitall;
      held.requests.push_back(w.requests.front());
      held.completed.push_back(w.completed.front());
      held.wall_end_ns = w.wall_end_ns;
      for (auto& c : g.compute) between.push_back(std::move(c));
      continue;
    }
    AddFoldingSome(held_step, held);
    for (const auto& [st, c] : between) AddFoldingSome(st, c);
    between.clear();
    for (const auto& [st, c] : g.compute) AddFoldingSome(st, c);
    held = std::move(run[i].second);
    held_step = run[i].first;
  }
  AddFoldingSome(held_step, held);
  for (const auto& [st, c] : between) AddFoldingSome(st, c);
  for (const auto& [st, c] : tail) AddFoldingSome(st, c);
}

// A loop of MPI_Waitsome (or Testsome) calls until every request is in makes one call or
// several, as the messages happen to arrive; the calls that wait for the rest of the first
// one's requests are one wait with it (the compute between them, the work on what arrived,
// comes before it, as polls' does), so that every iteration has the same calls.
void RankCompressor::AddFoldingSome(std::int64_t step, const Event& e) {
  if (some_) {
    if (e.kind == EventKind::kCompute) {
      some_after_.emplace_back(step, e);
      return;
    }
    const std::vector<RequestId> left = Outstanding(*some_);
    bool rest = IsSome(e.kind) && !e.completed.empty() && !e.requests.empty();
    for (RequestId r : e.requests) {
      rest = rest && std::find(left.begin(), left.end(), r) != left.end();
    }
    if (!rest) {
      FlushSome();
    } else {
      Event merged = std::move(*some_);
      some_.reset();
      merged.completed.insert(merged.completed.end(), e.completed.begin(), e.completed.end());
      merged.wall_end_ns = e.wall_end_ns;
      for (const auto& [s, c] : some_after_) AddEvent(s, c);
      some_after_.clear();
      if (merged.completed.size() < merged.requests.size()) {
        some_ = std::move(merged);
        some_step_ = step;
      } else {
        AddEvent(step, merged);
      }
      return;
    }
  }
  if (IsSome(e.kind) && !e.completed.empty() && e.completed.size() < e.requests.size()) {
    some_ = e;
    some_step_ = step;
    return;
  }
  AddEvent(step, e);
}

void RankCompressor::FlushSome() {
  if (!some_) return;
  const Event held = std::move(*some_);
  some_.reset();
  AddEvent(some_step_, held);
  for (const auto& [s, c] : some_after_) AddEvent(s, c);
  some_after_.clear();
}

void RankCompressor::AddEvent(std::int64_t step, const Event& e) {
  // Wall time attributed to this event: from the end of the previous one to its end (the
  // finalize call counts up to its start, init counts nothing: the run is the time between).
  double duration = 0;
  double end = 0;
  if (e.kind == EventKind::kInit) {
    duration = 0;
    prev_end_ns_ = static_cast<double>(e.wall_end_ns);
    end = prev_end_ns_;
  } else {
    end = static_cast<double>(e.kind == EventKind::kFinalize ? e.wall_start_ns : e.wall_end_ns);
    if (!seen_event_) prev_end_ns_ = static_cast<double>(e.wall_start_ns);
    duration = std::max(0.0, end - prev_end_ns_);
    prev_end_ns_ = std::max(prev_end_ns_, static_cast<double>(e.wall_end_ns));
  }
  span_end_ns_ = seen_event_ ? std::max(span_end_ns_, end) : end;
  seen_event_ = true;
  total_time_ns_ += duration;

  if (e.kind == EventKind::kIrecv && e.peer == kAnySource) wildcard_requests_.insert(e.request);
  if (e.kind == EventKind::kCompute) {
    pending_cpu_ += static_cast<double>(e.cpu_ns);
    if (e.instructions >= 0) {
      pending_ins_ += static_cast<double>(e.instructions);
      pending_has_ins_ = true;
    }
    if (e.cycles >= 0) {
      pending_cyc_ += static_cast<double>(e.cycles);
      pending_has_cyc_ = true;
    }
    pending_time_ += duration;
    return;
  }
  if (IsTestKind(e.kind) && e.completed.empty()) {
    ++pending_polls_;
    pending_time_ += duration;
    return;
  }
  // A collective on MPI_COMM_SELF (or a communicator made from it) waits for no one and
  // moves nothing at any count: its time is the rank's own, like a failed test's. (PETSc's
  // rank 0 broadcasts what it read on PETSC_COMM_SELF, which the other ranks never call; as a
  // call it made rank 0's phases differ from the others'.) A split that has one member at
  // some count only (every 4th rank at 4) is a communicator like any other.
  if (e.kind == EventKind::kCommCreate && self_comms_.count(e.comm)) self_comms_.insert(e.new_comm);
  if (IsCollective(e.kind) && self_comms_.count(e.comm)) {
    pending_time_ += duration;
    return;
  }

  Node node;
  Leaf& l = node.leaf;
  // A test that completes something is a wait that did not block (the failed tests before
  // it are its polls): both give the same symbol, so a loop that sometimes finds its
  // result by polling still repeats.
  l.kind = e.kind == EventKind::kTest       ? EventKind::kWait
           : e.kind == EventKind::kTestall  ? EventKind::kWaitall
           : e.kind == EventKind::kTestany  ? EventKind::kWaitany
           : e.kind == EventKind::kTestsome ? EventKind::kWaitsome
                                            : e.kind;
  l.comm = e.comm;
  l.tag = e.tag;
  std::uint64_t moved = 0;
  std::uint64_t moved_in = 0;
  if (IsPointToPoint(e.kind)) {
    l.peer = e.peer;
    l.disp = Displacement(e.peer, rank_);
    // A send to the rank whose wildcard receive completed last is a reply to whoever
    // answered (master-worker): its symbol is "reply", whatever rank that was.
    if ((e.kind == EventKind::kSend || e.kind == EventKind::kIsend) && e.peer >= 0 &&
        e.peer == last_wildcard_source_) {
      l.disp = kReplyDisp;
    }
    moved = e.bytes;
    if (e.kind == EventKind::kRecv && e.recv_peer == kAnySource) {
      // A blocking receive posted with MPI_ANY_SOURCE: its symbol is "from anyone", and the
      // rank it came from is the one a reply goes to.
      l.peer = kAnySource;
      l.disp = kAnyDisp;
      if (e.peer >= 0) last_wildcard_source_ = e.peer;
    }
    if (e.kind == EventKind::kSendrecv) {
      l.recv_peer = e.recv_peer;
      l.recv_disp = Displacement(e.recv_peer, rank_);
      moved_in = e.recv_bytes;
    }
  } else if (IsCollective(e.kind)) {
    // A collective ends the exchange with whoever answered last: the sends after it start
    // anew (a master's hand-out of its next round's first tasks, not replies).
    last_wildcard_source_ = kNoRank;
    l.root = IsRooted(e.kind) ? e.peer : kNoRank;
    moved = e.send_bytes;
    moved_in = e.recv_bytes;
    if (IsRooted(e.kind) && e.peer >= 0) {
      l.root_step = StepOfRoot(e);
      if (l.root_step != RootStep::kFixed) {
        l.root = kNoRank;
        if (e.peer == rank_) {
          l.root_bytes.Add(static_cast<double>(moved));
          l.root_recv_bytes.Add(static_cast<double>(moved_in));
          l.root_cpu_ns.Add(pending_cpu_);
        }
      }
    }
    l.peer = l.root;
  } else if (IsCompletion(e.kind)) {
    l.requests = static_cast<std::int32_t>(e.requests.size());
    // Whoever answered is the one rank a wait found among wildcard receives; a wait that
    // completes several at once (a halo whose receives name no source, closed by a waitall)
    // answered nobody in particular, and a later send to one of them is no reply.
    int wildcards = 0;
    for (const Completion& c : e.completed) {
      moved += c.bytes;
      if (wildcard_requests_.erase(c.request) > 0 && c.peer >= 0) {
        last_wildcard_source_ = ++wildcards == 1 ? c.peer : kNoRank;
      }
    }
  } else if (e.kind == EventKind::kCommCreate) {
    l.requests = static_cast<std::int32_t>(e.members.size());
    comm_members_[e.new_comm] = e.members;
    // A communicator id reused after a free starts its roots anew.
    for (auto it = roots_.begin(); it != roots_.end();) {
      it = it->first.second == e.new_comm ? roots_.erase(it) : std::next(it);
    }
  }
  std::uint64_t h = Mix(static_cast<std::uint64_t>(l.kind) + 1);
  h = Combine(h, static_cast<std::uint32_t>(l.disp));
  h = Combine(h, static_cast<std::uint32_t>(l.recv_disp));
  h = Combine(h, l.comm);
  h = Combine(h, static_cast<std::uint32_t>(l.root));
  if (l.root_step != RootStep::kFixed) h = Combine(h, static_cast<std::uint32_t>(l.root_step) + 7);
  h = Combine(h, static_cast<std::uint32_t>(l.requests));
  // A receive that names no source is told apart from the next one by its tag alone (a halo
  // that takes the message travelling left with one tag and the one travelling right with
  // another); without it two consecutive ones fold into one call and their bursts average
  // (all the work before the first, none before the second). A receive of any tag is one
  // symbol whatever tag arrives. Only irecvs: a blocking receive records the tag that
  // arrived, not the one posted.
  if (l.disp == kAnyDisp && e.kind == EventKind::kIrecv) {
    h = Combine(h, static_cast<std::uint32_t>(e.tag));
  }
  l.hash = h;
  l.bytes.Add(static_cast<double>(moved));
  if (e.kind == EventKind::kSendrecv || IsCollective(e.kind)) {
    l.recv_bytes.Add(static_cast<double>(moved_in));
  }
  l.polls.Add(static_cast<double>(pending_polls_));
  if (IsTestKind(e.kind)) l.tested.Add(1.0);
  l.compute.cpu_ns.Add(pending_cpu_);
  if (pending_has_ins_) l.compute.instructions.Add(pending_ins_);
  if (pending_has_cyc_) l.compute.cycles.Add(pending_cyc_);
  l.occurrences.Add(pending_cpu_, l.root_cpu_ns.n > 0);
  l.last_cpu_ns = pending_cpu_;
  l.last_bytes = static_cast<double>(moved);
  l.time_ns = duration + pending_time_;
  l.last_end_ns = end;
  l.first_step = l.last_step = step;
  l.first_wall_ns = static_cast<double>(e.wall_start_ns);
  node.hash = h;
  pending_cpu_ = pending_ins_ = pending_cyc_ = pending_time_ = 0;
  pending_has_ins_ = pending_has_cyc_ = false;
  pending_polls_ = 0;
  ++calls_;
  Push(std::move(node));
}

double RankCompressor::HeldCalls() const {
  // The same under every merge similarity: a merge adds the weights of runs of as many calls.
  double held = 0;
  for (const Instance& inst : merges_.front().instances) {
    held += inst.weight * static_cast<double>(inst.leaves.size() + inst.dropped_calls);
  }
  return held;
}

RootStep RankCompressor::StepOfRoot(const Event& e) {
  // The root's rank in the communicator: the world (or a communicator this rank never saw
  // made, taken as the world) numbers ranks as the world does.
  std::int64_t index = e.peer, size = nprocs_;
  if (auto it = comm_members_.find(e.comm); e.comm != kCommWorld && it != comm_members_.end()) {
    const auto& m = it->second;
    const auto at = std::find(m.begin(), m.end(), e.peer);
    if (at == m.end()) return RootStep::kFixed;
    index = at - m.begin();
    size = static_cast<std::int64_t>(m.size());
  }
  auto [it, fresh] = roots_.try_emplace({e.kind, e.comm}, RootTrack{index, false});
  if (fresh || size < 2) return RootStep::kFixed;
  RootTrack& t = it->second;
  RootStep step = RootStep::kFixed;
  if (index == (t.last + 1) % size) {
    step = RootStep::kNext;
  } else if (index == (t.last - 1 + size) % size) {
    step = RootStep::kPrevious;
  } else if (t.moves && index == t.last) {
    step = RootStep::kSame;
  }
  if (step == RootStep::kNext || step == RootStep::kPrevious) t.moves = true;
  t.last = index;
  return step;
}

std::uint64_t RankCompressor::WindowHash(std::size_t i, std::size_t j) const {
  return pre_[j] - pre_[i] * pow_[j - i];
}
std::uint64_t RankCompressor::WindowMHash(std::size_t i, std::size_t j) const {
  return mpre_[j] - mpre_[i];
}

void RankCompressor::Push(Node node) {
  pre_.push_back(pre_.back() * kBase + node.hash);
  mpre_.push_back(mpre_.back() + Mix(node.hash));
  seq_.push_back(std::move(node));
  Reduce();
  const std::size_t keep = 2 * options_.window + 2;
  if (seq_.size() >= 2 * keep) Retire(seq_.size() - keep);
}

bool RankCompressor::SimilarLeaf(const Leaf& a, const Leaf& b) const {
  // Message sizes split a loop only when asked (bytes_tolerance > 0): b's sizes must then
  // lie within a's range seen so far, widened by the relative tolerance and the absolute
  // floor (small messages cost their latency whatever their size). Off by default: sizes
  // that drift with the data (atoms crossing a face, a halo whose depth varies) cross any
  // tolerance on some ranks and not on others, and ranks that fold the same calls into
  // different loops have phases that do not match; the sizes are statistics of the call.
  auto within = [&](const Stats& x, const Stats& y) {
    if (options_.bytes_tolerance <= 0 || x.n == 0 || y.n == 0) return true;
    const double t = options_.bytes_tolerance;
    const double f = options_.bytes_floor;
    return y.max <= x.max * (1 + t) + f && y.min >= x.min / (1 + t) - f;
  };
  if (!within(a.bytes, b.bytes) || !within(a.recv_bytes, b.recv_bytes)) return false;
  // Compute splits a loop only when asked (loop_compute_similarity > 0): on oversubscribed
  // or irregular runs (uneven tasks) the bursts of one loop vary far more than any useful
  // threshold, and the structure already says what repeats. Compared with the latest
  // occurrence (slow drift) or the mean (one noisy occurrence does not break the chain).
  if (options_.loop_compute_similarity <= 0) return true;
  auto close = [&](double x, double y) {
    return std::fabs(x - y) <=
           options_.loop_compute_similarity * std::max(x, y) + options_.compute_floor_ns;
  };
  return close(a.last_cpu_ns, b.last_cpu_ns) || close(a.compute.cpu_ns.mean, b.last_cpu_ns);
}

bool RankCompressor::Similar(const Node& a, const Node& b) const {
  if (a.hash != b.hash || a.loop != b.loop) return false;
  if (!a.loop) return SimilarLeaf(a.leaf, b.leaf);
  if (a.body.size() != b.body.size()) return false;
  for (std::size_t i = 0; i < a.body.size(); ++i) {
    if (!Similar(a.body[i], b.body[i])) return false;
  }
  return true;
}

bool RankCompressor::SeqMatches(const std::vector<Node>& body, std::size_t from) const {
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (!Similar(body[i], seq_[from + i])) return false;
  }
  return true;
}

bool RankCompressor::SeqWindowsMatch(std::size_t a, std::size_t b, std::size_t k) const {
  for (std::size_t i = 0; i < k; ++i) {
    if (!Similar(seq_[a + i], seq_[b + i])) return false;
  }
  return true;
}

bool RankCompressor::MultiPairing(const std::vector<Node>& body, std::size_t from,
                                  std::vector<std::size_t>* pairing) const {
  // pairing[i] = index into body of the item that window item i joins. Items can only pair
  // with items of equal hash: sort both sides by hash and pair inside each hash group, in
  // order, each window item with the first unused similar body item of its group. Only
  // movable items (Movable) may change places.
  const std::size_t k = body.size();
  std::vector<std::size_t> bi(k), wi(k);
  for (std::size_t i = 0; i < k; ++i) bi[i] = wi[i] = i;
  std::stable_sort(bi.begin(), bi.end(),
                   [&](std::size_t a, std::size_t b) { return body[a].hash < body[b].hash; });
  std::stable_sort(wi.begin(), wi.end(), [&](std::size_t a, std::size_t b) {
    return seq_[from + a].hash < seq_[from + b].hash;
  });
  pairing->assign(k, 0);
  std::vector<bool> used(k, false);
  std::size_t g = 0;
  while (g < k) {
    const std::uint64_t h = body[bi[g]].hash;
    std::size_t end = g;
    while (end < k && body[bi[end]].hash == h) ++end;
    for (std::size_t x = g; x < end; ++x) {
      const Node& w = seq_[from + wi[x]];
      if (w.hash != h) return false;
      bool found = false;
      for (std::size_t y = g; y < end; ++y) {
        if (!used[y] && Similar(body[bi[y]], w)) {
          used[y] = true;
          (*pairing)[wi[x]] = bi[y];
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    g = end;
  }
  // The items that cannot move pair in order.
  std::size_t last = 0;
  bool any = false;
  for (std::size_t i = 0; i < k; ++i) {
    if (Movable(seq_[from + i])) continue;
    if (any && (*pairing)[i] <= last) return false;
    last = (*pairing)[i];
    any = true;
  }
  return true;
}

namespace {
void MergeNode(Node* into, const Node& later) {
  if (!into->loop) {
    into->leaf.Merge(later.leaf);
    return;
  }
  into->total += later.total;
  if (later.counts_vary) into->counts_vary = true;
  // Its executions in order: the later node's own, then those merged into it.
  const auto listed = [&] {
    return into->later_counts.size() + 1 < SequenceItem::kMaxListedCounts;
  };
  if (listed()) into->later_counts.push_back(later.count);
  for (std::size_t i = 0; i < later.later_counts.size() && listed(); ++i) {
    into->later_counts.push_back(later.later_counts[i]);
  }
  if (into->later_count == 0) {
    into->later_count = later.count;
    // The first execution counts too: an extra block in one time step ({3, 2, 2} iterations)
    // unrolled at the rounded mean (2) loses that block's calls.
    if (later.count != into->count) into->counts_vary = true;
  } else if (later.count != into->later_count) {
    into->counts_vary = true;
  }
  for (std::size_t i = 0; i < into->body.size(); ++i) MergeNode(&into->body[i], later.body[i]);
}
}  // namespace

// One reduction of the items seq_[0, n) (the caller has moved later items out): a window
// ending at n becomes one more iteration of the loop before it, or a new loop of two.
bool RankCompressor::ReduceAt(std::size_t n) {
  const std::size_t window = options_.window;
  std::vector<std::size_t> pairing;
  {
    // 1. The last k items are one more iteration of the loop just before them.
    for (std::size_t k = 1; k <= window && k + 1 <= n; ++k) {
      Node& loop = seq_[n - k - 1];
      if (!loop.loop || loop.body.size() != k) continue;
      const bool same_order = WindowHash(n - k, n) == loop.body_hash;
      bool ordered = same_order && SeqMatches(loop.body, n - k);
      // Unordered: the same calls in another order (completions in arrival order), but
      // starting with the same call, so that a rotation of the body (the loop seen from
      // one call later) is not taken for an iteration.
      bool unordered = !same_order && k >= 2 && seq_[n - k].hash == loop.body.front().hash &&
                       WindowMHash(n - k, n) == loop.body_mhash &&
                       MultiPairing(loop.body, n - k, &pairing);
      if (!ordered && !unordered) continue;
      for (std::size_t i = 0; i < k; ++i) {
        MergeNode(&loop.body[ordered ? i : pairing[i]], seq_[n - k + i]);
      }
      loop.count += 1;
      loop.total += 1;
      seq_.resize(n - k);
      pre_.resize(n - k + 1);
      mpre_.resize(n - k + 1);
      return true;
    }
    // 2. The last k items repeat the k before them: a new loop of two iterations.
    for (std::size_t k = 1; k <= window && 2 * k <= n; ++k) {
      const std::size_t a = n - 2 * k;
      const std::size_t b = n - k;
      const bool same_order = WindowHash(a, b) == WindowHash(b, n);
      bool ordered = same_order && SeqWindowsMatch(a, b, k);
      bool unordered = false;
      if (!same_order && k >= 2 && seq_[a].hash == seq_[b].hash &&
          WindowMHash(a, b) == WindowMHash(b, n)) {
        std::vector<Node> first(seq_.begin() + static_cast<std::ptrdiff_t>(a),
                                seq_.begin() + static_cast<std::ptrdiff_t>(b));
        unordered = MultiPairing(first, b, &pairing);
      }
      if (!ordered && !unordered) continue;
      Node loop;
      loop.loop = true;
      loop.count = 2;
      loop.total = 2;
      loop.body.assign(std::make_move_iterator(seq_.begin() + static_cast<std::ptrdiff_t>(a)),
                       std::make_move_iterator(seq_.begin() + static_cast<std::ptrdiff_t>(b)));
      for (std::size_t i = 0; i < k; ++i) {
        MergeNode(&loop.body[ordered ? i : pairing[i]], seq_[b + i]);
      }
      loop.body_hash = WindowHash(a, b);
      loop.body_mhash = WindowMHash(a, b);
      loop.hash = Combine(loop.body_hash, 0x4C4F4F50);
      seq_.resize(a);
      pre_.resize(a + 1);
      mpre_.resize(a + 1);
      pre_.push_back(pre_.back() * kBase + loop.hash);
      mpre_.push_back(mpre_.back() + Mix(loop.hash));
      seq_.push_back(std::move(loop));
      return true;
    }
  }
  return false;
}

// Reduces the end of the sequence as far as it goes. A loop at the very end may still grow
// (its next iteration is arriving), so it is never compared as the last item of a window:
// only when a call that does not extend it follows is it complete, and the windows that end
// with it are tried then. This keeps a partial inner loop (2 of 8 stages so far) from being
// matched with a complete one of the previous outer iteration.
void RankCompressor::Reduce() {
  bool changed = true;
  while (changed) {
    changed = false;
    const std::size_t n = seq_.size();
    if (n == 0 || seq_[n - 1].loop) return;
    // Closures tried at items that are still where they were (same prefix), near the end.
    std::erase_if(closures_tried_, [&](const std::pair<std::size_t, std::uint64_t>& t) {
      return t.first > n || t.first + options_.window + 1 < n || pre_[t.first] != t.second;
    });
    // The last loop, if the items after it cannot be the start of its next iteration, is
    // complete: the windows that end with it are tried first (so that the loop around it
    // starts where it starts, not one call later). Then the loops before it, as long as they
    // are complete and not tried yet: the items after a loop may begin like its body (the
    // first calls of an inner loop) and fold into loops of their own before they turn out
    // not to be its next iteration; that loop is complete then.
    for (std::size_t j = n; j-- > 0 && n - j <= options_.window + 1;) {
      if (!seq_[j].loop) continue;
      if (ContinuesLoop(seq_[j], j + 1)) break;
      const std::pair<std::size_t, std::uint64_t> at{j + 1, pre_[j + 1]};
      if (std::find(closures_tried_.begin(), closures_tried_.end(), at) != closures_tried_.end())
        break;
      std::vector<Node> tail(
          std::make_move_iterator(seq_.begin() + static_cast<std::ptrdiff_t>(j + 1)),
          std::make_move_iterator(seq_.end()));
      seq_.resize(j + 1);
      pre_.resize(j + 2);
      mpre_.resize(j + 2);
      changed = ReduceAt(j + 1);
      if (!changed) closures_tried_.push_back(at);
      for (Node& item : tail) {
        pre_.push_back(pre_.back() * kBase + item.hash);
        mpre_.push_back(mpre_.back() + Mix(item.hash));
        seq_.push_back(std::move(item));
      }
      if (changed) break;
    }
    if (changed) continue;
    changed = ReduceAt(n);
  }
}

namespace {
// Whether the items `seq[pos, end)` are the first items of `items[i, end)` followed by
// whatever `then` accepts (the items after an enclosing loop). A nested loop of the body is
// matched by one or more of its iterations, the first of them possibly already folded into a
// loop item of the same structure, the last of them possibly cut off at the end of `seq`.
// `budget` bounds the search (ambiguous repeats could make it exponential): when it runs out
// the answer is no.
class PrefixMatcher {
 public:
  PrefixMatcher(const std::vector<Node>& seq, std::size_t end) : seq_(seq), end_(end) {}

  bool Items(const std::vector<Node>& items, std::size_t i, std::size_t pos,
             const std::function<bool(std::size_t)>& then) {
    if (pos == end_) return true;  // every item matched: a prefix
    if (--budget_ < 0) return false;
    if (i == items.size()) return then(pos);
    const Node& item = items[i];
    const Node& at = seq_[pos];
    if (!item.loop) {
      return !at.loop && at.hash == item.hash && Items(items, i + 1, pos + 1, then);
    }
    // After an iteration ending at p: another one, or the items after the loop.
    std::function<bool(std::size_t)> again = [&](std::size_t p) {
      return Items(item.body, 0, p, again) || Items(items, i + 1, p, then);
    };
    if (at.loop && at.hash == item.hash && again(pos + 1)) return true;
    return Items(item.body, 0, pos, again);
  }

 private:
  const std::vector<Node>& seq_;
  std::size_t end_;
  std::int64_t budget_ = 4096;
};
}  // namespace

// Whether seq_[from, end) could be the first items of one more iteration of `loop` (a
// prefix of its body in order, or a sub-multiset of it when the body matches unordered).
// The loops nested in the body may still be partly unfolded calls there (the first calls of
// an inner loop whose second iteration has not arrived: isend, irecv, wait of a stage whose
// two waits become a loop with the next wait), or loops folded already.
// A whole iteration counts too: it joins the loop by the reduction that follows, so the loop
// is not complete yet (trying the closure then would fold the loop around it one iteration
// short: [S x8, R x8] followed by S x8, R x2 is not the outer loop's second iteration).
bool RankCompressor::ContinuesLoop(const Node& loop, std::size_t from) const {
  const std::size_t count = seq_.size() - from;
  PrefixMatcher matcher(seq_, seq_.size());
  if (matcher.Items(loop.body, 0, from, [](std::size_t) { return false; })) return true;
  if (count > loop.body.size()) return false;
  std::vector<std::uint64_t> body, part;
  for (const Node& b : loop.body) body.push_back(b.hash);
  for (std::size_t i = from; i < seq_.size(); ++i) part.push_back(seq_[i].hash);
  std::sort(body.begin(), body.end());
  std::sort(part.begin(), part.end());
  return std::includes(body.begin(), body.end(), part.begin(), part.end());
}

void RankCompressor::RebuildPrefixes() {
  pre_.assign(1, 0);
  mpre_.assign(1, 0);
  for (const Node& n : seq_) {
    pre_.push_back(pre_.back() * kBase + n.hash);
    mpre_.push_back(mpre_.back() + Mix(n.hash));
  }
}

void RankCompressor::Retire(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    AddTopLevel(seq_[i], i + 1 < seq_.size() ? &seq_[i + 1] : nullptr);
  }
  seq_.erase(seq_.begin(), seq_.begin() + static_cast<std::ptrdiff_t>(count));
  RebuildPrefixes();
  closures_tried_.clear();  // positions moved
}

void RankCompressor::Finish() {
  FlushWaits();
  const WaitGaps gaps = wait_gaps();
  waits_split_early_ =
      split_without_evidence_ && !whole_run_gaps_ && MostlyQuietWaitGaps(gaps.quiet, gaps.seen);
  FlushSome();
  // Compute after the last call (only in a cut stream) stays in total_time_ns_ but belongs
  // to no call.
  Retire(seq_.size());
  FlushPlain();
}

namespace {
// Iterations of `loop` per execution: its iterations over every execution merged into it,
// divided by the executions (the iterations of the enclosing loop), rounded. Not `count`,
// the iterations where the loop was first found: an inner loop whose first execution was
// shorter (a halo swap repeated twice before the time loop settles, four times in it) would
// lose calls when unrolled.
std::int64_t Iterations(const Node& loop, double executions) {
  if (executions <= 0) return std::max<std::int64_t>(1, loop.count);
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(loop.total) / executions));
}

std::size_t UnrolledCalls(const Node& node, double executions) {
  if (!node.loop) return 1;
  std::size_t calls = 0;
  for (const Node& item : node.body) calls += UnrolledCalls(item, static_cast<double>(node.total));
  return calls * static_cast<std::size_t>(Iterations(node, executions));
}
}  // namespace

namespace {
double NodeEnd(const Node& node) {
  if (!node.loop) return node.leaf.last_end_ns;
  double end = 0;
  for (const Node& item : node.body) end = std::max(end, NodeEnd(item));
  return end;
}
}  // namespace

namespace {
// Whether every call of `node` (nested loops included) is point-to-point with the one
// displacement `*disp` (set by the first such call) or a completion, and both a send and a
// receive are among them: an exchange with one partner.
bool ExchangeWithOnePartner(const Node& node, std::int32_t* disp, bool* sends, bool* recvs) {
  if (node.loop) {
    for (const Node& item : node.body) {
      if (!ExchangeWithOnePartner(item, disp, sends, recvs)) return false;
    }
    return true;
  }
  const Leaf& l = node.leaf;
  const auto same = [disp](std::int32_t d) {
    if (d == kNoDisp || d == kAnyDisp || d == kNullDisp || d == kReplyDisp) return false;
    if (*disp == kNoDisp) *disp = d;
    return d == *disp;
  };
  switch (l.kind) {
    case EventKind::kSend:
    case EventKind::kIsend:
      *sends = true;
      return same(l.disp);
    case EventKind::kRecv:
    case EventKind::kIrecv:
      *recvs = true;
      return same(l.disp);
    case EventKind::kSendrecv:
      *sends = true;
      *recvs = true;
      return same(l.disp) && same(l.recv_disp);
    case EventKind::kWait:
    case EventKind::kWaitall:
    case EventKind::kWaitany:
    case EventKind::kWaitsome:
    case EventKind::kTest:
    case EventKind::kTestall:
    case EventKind::kTestany:
    case EventKind::kTestsome:
      return true;
    default:
      return false;
  }
}
}  // namespace

bool RankCompressor::Unrollable(const Node& loop, double executions) const {
  const std::int64_t iterations = Iterations(loop, executions);
  if (iterations <= static_cast<std::int64_t>(options_.unroll_iterations)) {
    // Unrolled, a loop repeats its calls a fixed number of times in the phase around it; one
    // whose executions ran different numbers of iterations (two dot products in each
    // iteration of an outer loop, three where that loop's iterations meet) would lose the
    // extra ones: it is a phase of its own, weighted by all its iterations. (The exchanges
    // with one partner below vary by design: the repeats of one call where a grid extent is
    // 2 straddle the iterations of the loop around them.)
    if (loop.counts_vary) return false;
    // However many calls its body has: that number grows with the count (a reduction of
    // log2 P steps, a rank's neighbours), and a bound on it would unroll the loop at small
    // counts and keep it a phase of its own at large ones. Its nested loops decide for
    // themselves: a long inner loop keeps it a loop.
    for (const Node& item : loop.body) {
      if (item.loop && !Unrollable(item, static_cast<double>(loop.total))) return false;
    }
    return true;
  }
  if (UnrolledCalls(loop, executions) > options_.unroll_calls) return false;
  if (iterations > static_cast<std::int64_t>(options_.unroll_exchange_iterations)) return false;
  std::int32_t disp = kNoDisp;
  bool sends = false;
  bool recvs = false;
  return ExchangeWithOnePartner(loop, &disp, &sends, &recvs) && sends && recvs;
}

namespace {

double SampleMean(const OccurrenceSample& s) {
  double sum = 0;
  for (std::size_t k = 0; k < s.kept; ++k) sum += s.at(k);
  return s.kept > 0 ? sum / static_cast<double>(s.kept) : 0;
}

// The copies of one call of an unrolled loop, when their iterations' bursts differ by design
// rather than by noise: a loop of two iterations folded out of two identical exchanges with
// the step's work between them (the first copy's burst is always small, the second's always
// large), a warm-up iteration. Each copy then takes the call's CPU statistics scaled by how
// its own sampled bursts compare with all of them, and the spread of its own samples.
// Otherwise every copy would hold the loop's mean and the alternation would look like a
// spread each rank draws on its own (an imbalance the run never had). The differences must
// hold at least half the sampled variance and exceed `floor_ns`; copies that differ only by
// noise keep the loop's statistics, as before. A loop executed once has one sample a copy:
// each copy then is what it was.
std::vector<ComputeStats> CopiesCompute(const Leaf& leaf,
                                        const std::vector<OccurrenceSample>& copies,
                                        double floor_ns) {
  std::vector<ComputeStats> none;
  const double all_mean = SampleMean(leaf.occurrences);
  // A moving root's turns are kept apart from all the occurrences (root_cpu_ns), which a
  // copy's scaling would no longer match.
  if (copies.size() < 2 || !(all_mean > 0) || leaf.compute.cpu_ns.n < 2 ||
      leaf.root_step != RootStep::kFixed) {
    return none;
  }
  double grand = 0, total = 0;
  for (const OccurrenceSample& c : copies) {
    if (c.kept < 1) return none;
    for (std::size_t k = 0; k < c.kept; ++k) grand += c.at(k);
    total += static_cast<double>(c.kept);
  }
  grand /= total;
  double between = 0, within = 0, largest = 0;
  for (const OccurrenceSample& c : copies) {
    const double m = SampleMean(c);
    between += static_cast<double>(c.kept) * (m - grand) * (m - grand);
    largest = std::max(largest, std::abs(m - grand));
    for (std::size_t k = 0; k < c.kept; ++k) within += (c.at(k) - m) * (c.at(k) - m);
  }
  if (!(between >= within) || !(largest > floor_ns)) return none;
  const double level = leaf.compute.cpu_ns.mean / all_mean;  // samples -> all occurrences
  std::vector<ComputeStats> out;
  for (const OccurrenceSample& c : copies) {
    const double ratio = SampleMean(c) / all_mean;
    ComputeStats stats = leaf.compute;
    Stats own;
    for (std::size_t k = 0; k < c.kept; ++k) own.Add(c.at(k) * level);
    stats.cpu_ns.mean = leaf.compute.cpu_ns.mean * ratio;
    // One execution sampled (a phase that runs once): its copies are what they were.
    stats.cpu_ns.m2 = own.n < 2 ? 0.0
                                : own.m2 / static_cast<double>(own.n - 1) *
                                      static_cast<double>(leaf.compute.cpu_ns.n - 1);
    stats.cpu_ns.min = std::max(leaf.compute.cpu_ns.min, std::min(own.min, stats.cpu_ns.mean));
    stats.cpu_ns.max = std::min(leaf.compute.cpu_ns.max, std::max(own.max, stats.cpu_ns.mean));
    for (Stats* counter : {&stats.instructions, &stats.cycles}) {
      counter->mean *= ratio;
      counter->m2 *= ratio * ratio;
      counter->min *= ratio;
      counter->max *= ratio;
    }
    out.push_back(stats);
  }
  return out;
}

}  // namespace

// The calls of `loop`, one iteration after the other. Each copy of a call carries the
// statistics of all its occurrences (per-occurrence means stay right) and `share` of its
// time, so that the copies add up to the time of the loop; where the iterations' bursts
// differ by design, each copy's CPU statistics are its own (CopiesCompute).
// Each copy's occurrence sample keeps only its own iteration's bursts (iteration i of every
// execution of the loop: occurrence index % count == i, nested loops multiplying).
void RankCompressor::Unroll(const Node& loop, double executions, double share,
                            std::vector<Leaf>* out, std::int64_t modulus,
                            std::int64_t residue) const {
  const std::int64_t count = Iterations(loop, executions);
  const double part = share / static_cast<double>(count);
  // Per call of the body: each copy's occurrences, and its own compute when it has one.
  std::vector<std::vector<OccurrenceSample>> samples(loop.body.size());
  std::vector<std::vector<ComputeStats>> computes(loop.body.size());
  for (std::size_t b = 0; b < loop.body.size(); ++b) {
    const Node& item = loop.body[b];
    if (item.loop) continue;
    for (std::int64_t i = 0; i < count; ++i) {
      samples[b].push_back(item.leaf.occurrences.Every(modulus * count, residue * count + i));
    }
    computes[b] = CopiesCompute(item.leaf, samples[b], options_.compute_floor_ns);
  }
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::size_t b = 0; b < loop.body.size(); ++b) {
      const Node& item = loop.body[b];
      if (item.loop) {
        Unroll(item, static_cast<double>(loop.total), part, out, modulus * count,
               residue * count + i);
      } else {
        out->push_back(item.leaf);
        out->back().time_ns *= part;
        out->back().occurrences = samples[b][static_cast<std::size_t>(i)];
        if (!computes[b].empty()) out->back().compute = computes[b][static_cast<std::size_t>(i)];
        out->back().KeepEvery(modulus * count, residue * count + i);
      }
    }
  }
}

namespace {
// The structure of the calls of one iteration of `loop` as it was first executed: nested
// loops with the iterations they ran where they were found (Node::count), not their mean.
void FirstIterationHashes(const Node& loop, std::vector<std::uint64_t>* out) {
  for (const Node& item : loop.body) {
    if (!item.loop) {
      out->push_back(item.leaf.hash);
      continue;
    }
    for (std::int64_t i = 0; i < std::max<std::int64_t>(1, item.count); ++i) {
      FirstIterationHashes(item, out);
    }
  }
}

// The structure of the first `limit` calls of `node` (fewer if it has fewer).
void LeadingHashes(const Node& node, std::size_t limit, std::vector<std::uint64_t>* out) {
  if (out->size() >= limit) return;
  if (!node.loop) {
    out->push_back(node.leaf.hash);
    return;
  }
  for (std::int64_t i = 0; i < std::max<std::int64_t>(1, node.count) && out->size() < limit; ++i) {
    for (const Node& item : node.body) LeadingHashes(item, limit, out);
  }
  if (out->size() > limit) out->resize(limit);
}
}  // namespace

bool RankCompressor::UnrollsToOneRun(const Node& loop) const {
  for (const Node& item : loop.body) {
    if (item.loop && !Unrollable(item, static_cast<double>(loop.total))) return false;
  }
  return true;
}

// The calls of one iteration of `loop` (a loop whose nested loops all unroll), starting where
// the program's loop starts rather than where the compressor first saw a repetition. The
// compressor folds short repeats as they arrive, before it knows the loop around them, so a
// repeat that straddles two iterations (the last halo swap of one time step and the same swap
// first in the next, which is one rank along a dimension of extent 2; a swap pair that a
// reverse communication repeats) decides where the body begins, and that differs with the
// process count. Three rotations undo it:
//  - when the first iteration ran fewer calls than the others at its start (a straddling inner
//    loop merged with its longer copies) and the calls after the loop are those missing ones,
//    the iteration is its first execution followed by them;
//  - while the calls before the loop (`preceding`, outside it) end with the body's last call,
//    the loop starts that call earlier, and the call moves after the loop (`carry`): the loop
//    starts as early as its repetition does, right after the last call that does not repeat;
//  - a later loop of the same calls on the rank (the same time step after a re-neighbouring
//    step whose last calls are the step's last ones) takes the first one's rotation, moving
//    calls to the runs around it (canonical_runs_).
// The body is then the same rotation of the program's iteration at every count and on every
// rank (the same code runs before the loop), so its phase matches across counts.
std::vector<Leaf> RankCompressor::CanonicalRun(const Node& loop, const Node* next,
                                               std::vector<Leaf>* preceding,
                                               std::vector<Leaf>* carry, std::size_t keep,
                                               std::int64_t executions, std::int64_t* total) {
  const std::size_t carried = carry->size();
  std::vector<Leaf> run = CanonicalRotation(loop, next, preceding, carry, keep, executions, total);
  // The calls moved after the loop stand for its last iteration's: they come after it in the
  // run's order (phases are matched across counts in that order).
  std::int64_t last_step = 0;
  double last_end_ns = 0;
  for (const Leaf& l : run) {
    last_step = std::max(last_step, l.last_step);
    last_end_ns = std::max(last_end_ns, l.last_end_ns);
  }
  for (std::size_t i = 0; i < carry->size() - carried; ++i) {
    Leaf& l = (*carry)[i];
    l.first_step = std::max(l.first_step, last_step);
    l.last_step = std::max(l.last_step, l.first_step);
    l.first_wall_ns = std::max(l.first_wall_ns, last_end_ns);
    l.last_end_ns = std::max(l.last_end_ns, last_end_ns);
  }
  return run;
}

std::vector<Leaf> RankCompressor::CanonicalRotation(const Node& loop, const Node* next,
                                                    std::vector<Leaf>* preceding,
                                                    std::vector<Leaf>* carry, std::size_t keep,
                                                    std::int64_t executions, std::int64_t* total) {
  std::vector<Leaf> run;
  for (const Node& item : loop.body) {
    if (item.loop) {
      Unroll(item, static_cast<double>(loop.total), 1.0, &run);
    } else {
      run.push_back(item.leaf);
    }
  }
  // A loop of self-scheduled tasks (a wildcard receive, a reply to whoever answered) is left
  // as found: its iterations are tasks handed to whichever worker is ready, not steps of one
  // program loop, and the master's regrouping (analyze.cc) sets where it starts.
  for (const Leaf& l : run) {
    if (l.disp == kAnyDisp || l.disp == kReplyDisp) return run;
  }
  std::vector<std::uint64_t> first;
  FirstIterationHashes(loop, &first);
  if (next != nullptr && !first.empty() && first.size() < run.size()) {
    const std::size_t shift = run.size() - first.size();
    bool suffix = true;
    for (std::size_t i = 0; i < first.size() && suffix; ++i) {
      suffix = run[shift + i].hash == first[i];
    }
    std::vector<std::uint64_t> after;
    LeadingHashes(*next, shift, &after);
    bool follows = suffix && after.size() == shift;
    for (std::size_t i = 0; i < after.size() && follows; ++i) follows = after[i] == run[i].hash;
    if (follows) {
      std::rotate(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(shift), run.end());
    }
  }
  std::size_t moved = 0;
  while (preceding != nullptr && preceding->size() > keep && moved < run.size() &&
         preceding->back().hash == run.back().hash) {
    carry->insert(carry->begin(), std::move(preceding->back()));
    preceding->pop_back();
    std::rotate(run.rbegin(), run.rbegin() + 1, run.rend());
    ++moved;
  }
  // Not as far as a completion, though: a wait moved into the loop's first iteration would
  // complete requests of the calls before the loop (they did not repeat, so they stay out of
  // it) in the loop's phase, and neither phase would complete on its own.
  while (moved > 0 && IsCompletionKind(run.front().kind)) {
    preceding->push_back(std::move(carry->front()));
    carry->erase(carry->begin());
    std::rotate(run.begin(), run.begin() + 1, run.end());
    --moved;
  }
  // The rotation this rank's first loop of these calls had (its first time-step loop, right
  // after the calls that set it up): the same loop entered elsewhere (after a call that
  // repeats its last ones, such as a re-neighbouring step that ends with the same reverse
  // communication) starts at the same call, so that it is one phase wherever it runs.
  std::vector<std::uint64_t> hashes;
  for (const Leaf& l : run) hashes.push_back(l.hash);
  const std::size_t length = hashes.size();
  for (const std::vector<std::uint64_t>& canonical : canonical_runs_) {
    if (canonical.size() != length) continue;
    std::size_t shift = length;  // canonical[i] == hashes[(i + shift) % length]
    for (std::size_t r = 0; r < length && shift == length; ++r) {
      bool same = true;
      for (std::size_t i = 0; i < length && same; ++i)
        same = canonical[i] == hashes[(i + r) % length];
      if (same) shift = r;
    }
    if (shift == length) continue;
    if (shift == 0) return run;
    // run = a b (a: its first `shift` calls); the canonical iteration is b a.
    const std::size_t tail = length - shift;
    bool before = preceding != nullptr && preceding->size() >= tail + keep;
    for (std::size_t i = 0; i < tail && before; ++i) {
      before = (*preceding)[preceding->size() - tail + i].hash == run[shift + i].hash;
    }
    if (before) {
      // The calls before the loop end with b: pre b (a b)^n = pre (b a)^n b.
      carry->insert(carry->begin(), preceding->end() - static_cast<std::ptrdiff_t>(tail),
                    preceding->end());
      preceding->resize(preceding->size() - tail);
    } else if (*total >= 2 * executions) {
      // pre (a b)^n post = pre a (b a)^(n-1) b post: one iteration per execution fewer, its
      // calls (one occurrence's share of each) before and after the loop.
      const double share = static_cast<double>(executions) / static_cast<double>(*total);
      std::vector<Leaf> copies;
      for (Leaf& l : run) {
        Leaf copy = l;
        copy.time_ns = l.time_ns * share;
        l.time_ns -= copy.time_ns;
        copy.occurrences = OccurrenceSample{};
        copy.occurrences.seen = executions;
        copy.tags.clear();
        copies.push_back(std::move(copy));
      }
      if (preceding != nullptr) {
        preceding->insert(preceding->end(), copies.begin(),
                          copies.begin() + static_cast<std::ptrdiff_t>(shift));
      }
      carry->insert(carry->begin(), copies.begin() + static_cast<std::ptrdiff_t>(shift),
                    copies.end());
      *total -= executions;
    } else {
      return run;
    }
    std::rotate(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(shift), run.end());
    return run;
  }
  canonical_runs_.push_back(std::move(hashes));
  return run;
}

void RankCompressor::AddTopLevel(const Node& node, const Node* next) {
  if (!node.loop) {
    AppendPlain(node.leaf);
    return;
  }
  if (Unrollable(node, 1.0)) {
    std::vector<Leaf> calls;
    Unroll(node, 1.0, 1.0, &calls);
    for (const Leaf& l : calls) AppendPlain(l);
    return;
  }
  std::vector<Leaf> carry;
  std::vector<Leaf> run;
  std::int64_t total = node.total;
  const bool one_run = UnrollsToOneRun(node);
  // The calls before the loop are the open run of plain calls (only while it holds them
  // all: its hash is rebuilt from them); after another loop, a run of their own.
  const bool open = plain_open_ && plain_.dropped_calls == 0;
  // A loop with loops of its own is flattened item by item (FlattenBody). When its body ends
  // with a request (an irecv whose send and wait begin the body: the compressor cut the body
  // where it first saw the repetition, inside one exchange) and the calls before it end with
  // the same call, it starts that call earlier, as CanonicalRotation does for a loop that is
  // one run, so that its phases complete on their own.
  auto ends_alike = [&](const Node& loop) {
    return plain_.leaves.size() > 1 && !loop.body.empty() && !loop.body.back().loop &&
           loop.body.back().leaf.hash == plain_.leaves.back().hash;
  };
  Node rotated;
  // One exchange cut in two: the body ends with an irecv and starts with the send to the same
  // partner (an irecv posted ahead for the next iteration, a pipelined code, is not).
  const bool split_exchange = node.body.size() >= 2 && !node.body.back().loop &&
                              !node.body.front().loop &&
                              node.body.back().leaf.kind == EventKind::kIrecv &&
                              (node.body.front().leaf.kind == EventKind::kSend ||
                               node.body.front().leaf.kind == EventKind::kIsend) &&
                              node.body.front().leaf.disp == node.body.back().leaf.disp;
  const bool rotate = !one_run && open && split_exchange && ends_alike(node);
  if (rotate) {
    rotated = node;
    while (ends_alike(rotated)) {
      carry.insert(carry.begin(), std::move(plain_.leaves.back()));
      plain_.leaves.pop_back();
      std::rotate(rotated.body.rbegin(), rotated.body.rbegin() + 1, rotated.body.rend());
    }
    // Not as far as a completion (see CanonicalRotation).
    while (!carry.empty() && !rotated.body.front().loop &&
           IsCompletionKind(rotated.body.front().leaf.kind)) {
      plain_.leaves.push_back(std::move(carry.front()));
      carry.erase(carry.begin());
      std::rotate(rotated.body.begin(), rotated.body.begin() + 1, rotated.body.end());
    }
  }
  if (one_run || rotate) {
    std::vector<Leaf> fresh;
    // One call stays in an open run: its group keeps an instance to carry its time.
    if (one_run) {
      run =
          CanonicalRun(node, next, open ? &plain_.leaves : &fresh, &carry, open ? 1 : 0, 1, &total);
    }
    if (open) {
      plain_.hash = Mix(0x50484153);
      double ns = 0;
      for (const Leaf& l : plain_.leaves) {
        plain_.hash = Combine(plain_.hash, l.hash);
        ns += l.time_ns;
      }
      plain_.parts.back().time_ns += ns - plain_.time_ns;
      plain_.time_ns = ns;
    }
    for (const Leaf& l : fresh) AppendPlain(l);
  }
  FlushPlain();
  loop_group_ = OpenGroup(NodeEnd(node));
  order_.push_back(SequenceItem::Loop(total, {}));
  if (one_run) {
    Emit(run, static_cast<double>(total), &order_.back().body);
  } else {
    FlattenBody(rotate ? rotated.body : node.body, static_cast<double>(node.total),
                &order_.back().body);
  }
  if (!carry.empty()) {
    // The calls moved after the loop end with it on the rank's clock (a group of their own).
    for (const Leaf& l : carry) AppendPlain(l);
    double& end = group_end_ns_[static_cast<std::size_t>(plain_.parts.back().group)];
    end = std::max(end, NodeEnd(node));
  }
}

std::int64_t RankCompressor::OpenGroup(double end_ns) {
  group_end_ns_.push_back(end_ns);
  return static_cast<std::int64_t>(group_end_ns_.size()) - 1;
}

namespace {
// The iterations of each execution of a loop merged across executions (as far as they are
// listed), less `moved` in each (the iteration a rotation moved out of each).
std::vector<std::int64_t> ExecutionCounts(const Node& loop, std::int64_t moved) {
  std::vector<std::int64_t> out = {loop.count - moved};
  for (const std::int64_t c : loop.later_counts) out.push_back(c - moved);
  return out;
}
}  // namespace

// `order`: the body of the loop item being built; a nested loop becomes a loop item in it.
void RankCompressor::FlattenBody(const std::vector<Node>& body, double weight, Sequence* order) {
  std::vector<Leaf> run;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const Node& item = body[i];
    if (!item.loop) {
      run.push_back(item.leaf);
      continue;
    }
    if (Unrollable(item, weight)) {
      Unroll(item, weight, 1.0, &run);
      continue;
    }
    if (UnrollsToOneRun(item)) {
      std::vector<Leaf> carry;
      std::int64_t total = item.total;
      const std::vector<Leaf> inner =
          CanonicalRun(item, i + 1 < body.size() ? &body[i + 1] : nullptr, &run, &carry, 0,
                       std::llround(weight), &total);
      Emit(run, weight, order);
      order->push_back(SequenceItem::Loop(total, {}));
      // Its executions' counts where they differ from the even spread (less the iteration a
      // rotation moved out of each).
      const std::int64_t executions = std::max<std::int64_t>(1, std::llround(weight));
      order->back().counts = SequenceCountsFor(
          total, executions, ExecutionCounts(item, (item.total - total) / executions));
      Emit(inner, static_cast<double>(total), &order->back().body);
      run = std::move(carry);
      continue;
    }
    Emit(run, weight, order);
    run.clear();
    order->push_back(SequenceItem::Loop(item.total, {}));
    // Its executions' counts, where they differ from the even spread.
    order->back().counts =
        SequenceCountsFor(item.total, std::llround(weight), ExecutionCounts(item, 0));
    FlattenBody(item.body, static_cast<double>(item.total), &order->back().body);
  }
  Emit(run, weight, order);
}

void RankCompressor::Emit(const std::vector<Leaf>& run, double weight, Sequence* order) {
  if (run.empty()) return;
  Instance inst;
  inst.weight = weight;
  inst.hash = Mix(0x50484153);
  inst.first_step = run.front().first_step;
  inst.last_step = run.front().last_step;
  inst.first_wall_ns = run.front().first_wall_ns;
  inst.parts.push_back(GroupPart{loop_group_, 0});
  for (const Leaf& l : run) {
    inst.hash = Combine(inst.hash, l.hash);
    inst.leaves.push_back(l);
    inst.time_ns += l.time_ns;
    inst.first_step = std::min(inst.first_step, l.first_step);
    inst.last_step = std::max(inst.last_step, l.last_step);
    inst.first_wall_ns = std::min(inst.first_wall_ns, l.first_wall_ns);
  }
  inst.parts.back().time_ns = inst.time_ns;
  const std::size_t index = PushInstance(std::move(inst));
  order->push_back(SequenceItem::Run(static_cast<int>(index), std::llround(weight)));
}

void RankCompressor::AppendPlain(const Leaf& leaf) {
  if (!plain_open_) {
    plain_ = Instance{};
    plain_.weight = 1;
    plain_.hash = Mix(0x50484153);
    plain_.first_step = leaf.first_step;
    plain_.last_step = leaf.last_step;
    plain_.first_wall_ns = leaf.first_wall_ns;
    plain_.parts.push_back(GroupPart{OpenGroup(leaf.last_end_ns), 0});
    plain_open_ = true;
  }
  plain_.time_ns += leaf.time_ns;
  plain_.parts.back().time_ns += leaf.time_ns;
  double& group_end = group_end_ns_[static_cast<std::size_t>(plain_.parts.back().group)];
  group_end = std::max(group_end, leaf.last_end_ns);
  plain_.last_step = std::max(plain_.last_step, leaf.last_step);
  if (plain_.leaves.size() < options_.max_plain_events) {
    plain_.hash = Combine(plain_.hash, leaf.hash);
    plain_.leaves.push_back(leaf);
  } else {
    ++plain_.dropped_calls;
    plain_.hash = Combine(plain_.hash, 0xD5);  // the hash still says "longer"
  }
}

void RankCompressor::FlushPlain() {
  if (!plain_open_) return;
  plain_open_ = false;
  const std::size_t index = PushInstance(std::move(plain_));
  order_.push_back(SequenceItem::Run(static_cast<int>(index), 1));
  plain_ = Instance{};
}

std::size_t RankCompressor::PushInstance(Instance inst) {
  for (std::size_t k = 0; k < merges_.size(); ++k) {
    Merge& m = merges_[k];
    const bool last = k + 1 == merges_.size();
    if (!m.instances.empty()) {
      Instance& prev = m.instances.back();
      if (prev.hash == inst.hash && prev.leaves.size() == inst.leaves.size() &&
          prev.dropped_calls == 0 && inst.dropped_calls == 0 &&
          SimilarRuns(ComputeOfRun(prev), ComputeOfRun(inst), m.options)) {
        for (std::size_t i = 0; i < prev.leaves.size(); ++i) prev.leaves[i].Merge(inst.leaves[i]);
        prev.weight += inst.weight;
        prev.time_ns += inst.time_ns;
        prev.last_step = std::max(prev.last_step, inst.last_step);
        AppendParts(&prev.parts, inst.parts);
        m.instance_of_push.push_back(static_cast<int>(m.instances.size()) - 1);
        continue;
      }
    }
    m.instance_of_push.push_back(static_cast<int>(m.instances.size()));
    m.instances.push_back(last ? std::move(inst) : inst);
  }
  return pushes_++;
}

Sequence RankCompressor::OrderOf(std::size_t k) const {
  const std::vector<int>& instance_of_push = merges_[k].instance_of_push;
  Sequence order = order_;
  std::function<void(Sequence*)> rename = [&](Sequence* items) {
    for (SequenceItem& item : *items) {
      if (item.is_loop()) {
        rename(&item.body);
      } else {
        item.phase = instance_of_push[static_cast<std::size_t>(item.phase)];
      }
    }
  };
  rename(&order);
  return order;
}

}  // namespace pas2p::phases::internal
