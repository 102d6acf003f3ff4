#include "pas2p/phases/logical_clock.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>

namespace pas2p::phases {
namespace {

// Messages in flight from one source to one destination on one communicator.
struct ChannelKey {
  std::int32_t src;
  std::int32_t dst;
  CommId comm;
  bool operator==(const ChannelKey&) const = default;
};
struct ChannelKeyHash {
  std::size_t operator()(const ChannelKey& k) const {
    std::uint64_t h = k.comm * 0x9E3779B97F4A7C15ULL;
    h ^= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) |
         static_cast<std::uint32_t>(k.dst);
    h *= 0xBF58476D1CE4E5B9ULL;
    return static_cast<std::size_t>(h ^ (h >> 31));
  }
};
struct InFlight {
  std::int32_t tag;
  std::int64_t step;
  std::uint64_t send_index;  // event index on the sender, for messages
};

struct PostedRecv {
  CommId comm;
  std::int32_t peer;
  std::int32_t tag;
};

// One collective call being entered by the members of a communicator.
struct CollectiveEntry {
  EventKind kind;
  std::int32_t root;
  int first_rank;
  int size;
  int arrived = 0;
  int left = 0;
  std::int64_t max_step = 0;
};

struct RankState {
  std::unique_ptr<RankEventSource> source;
  Event event;
  bool has_event = false;
  bool done = false;
  bool send_half_done = false;  // sendrecv: the send half is already posted
  bool entered_collective = false;
  std::uint64_t index = 0;
  std::int64_t clock = 0;
  std::unordered_map<RequestId, PostedRecv> irecvs;
  std::unordered_map<CommId, std::uint64_t> collective_seq;
  std::string waiting_for;  // what blocks it, for deadlock reports
};

std::string RankList(const std::vector<int>& ranks) {
  std::ostringstream out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out << (i + 1 == ranks.size() ? " and " : ", ");
    out << ranks[i];
  }
  return out.str();
}

class Clock {
 public:
  Clock(const TraceSource& source, const LogicalEventSink& sink, const LogicalClockOptions& options)
      : source_(source), sink_(sink), options_(options), comms_(source.nprocs()) {}

  LogicalTraceSummary Run();

 private:
  bool Fetch(int r);
  bool TryDeliver(int r);  // false: blocked
  bool MatchAvailable(int dst, std::int32_t src, CommId comm, std::int32_t tag) const;
  std::int64_t TakeMatch(int dst, std::int32_t src, CommId comm, std::int32_t tag);
  void PostSend(int src, std::int32_t dst, CommId comm, std::int32_t tag, std::int64_t step,
                std::uint64_t index);
  void Deliver(int r, std::int64_t step);
  [[noreturn]] void Disagree(const std::string& what);
  void ReportStall();
  void CheckLeftovers();

  const TraceSource& source_;
  const LogicalEventSink& sink_;
  LogicalClockOptions options_;
  CommTable comms_;
  std::vector<RankState> ranks_;
  std::unordered_map<ChannelKey, std::deque<InFlight>, ChannelKeyHash> channels_;
  std::map<std::pair<CommId, std::uint64_t>, CollectiveEntry> collectives_;
  LogicalTraceSummary summary_;
  bool any_cut_ = false;
  std::vector<std::string> cut_messages_;
};

bool Clock::Fetch(int r) {
  RankState& st = ranks_[r];
  if (st.has_event) return true;
  if (st.done) return false;
  if (st.source->Next(&st.event)) {
    st.has_event = true;
    return true;
  }
  st.done = true;
  summary_.rank_finished[r] = true;
  if (st.source->status() == StreamStatus::kTruncated ||
      st.source->status() == StreamStatus::kCorrupt) {
    any_cut_ = true;
    std::string msg = st.source->message();
    if (msg.empty()) msg = "rank " + std::to_string(r) + ": stream ended early";
    cut_messages_.push_back(msg);
  }
  return false;
}

bool Clock::MatchAvailable(int dst, std::int32_t src, CommId comm, std::int32_t tag) const {
  auto it = channels_.find(ChannelKey{src, dst, comm});
  if (it == channels_.end()) return false;
  for (const InFlight& m : it->second) {
    if (tag == kAnyTag || m.tag == tag) return true;
  }
  return false;
}

std::int64_t Clock::TakeMatch(int dst, std::int32_t src, CommId comm, std::int32_t tag) {
  auto it = channels_.find(ChannelKey{src, dst, comm});
  auto& q = it->second;
  for (auto m = q.begin(); m != q.end(); ++m) {
    if (tag == kAnyTag || m->tag == tag) {
      std::int64_t step = m->step;
      q.erase(m);
      if (q.empty()) channels_.erase(it);
      return step;
    }
  }
  return 0;  // unreachable: MatchAvailable was checked
}

void Clock::PostSend(int src, std::int32_t dst, CommId comm, std::int32_t tag, std::int64_t step,
                     std::uint64_t index) {
  if (dst < 0) return;  // MPI_PROC_NULL
  if (dst >= static_cast<std::int32_t>(ranks_.size())) {
    throw TraceError(source_.description() + ": rank " + std::to_string(src) + ": event #" +
                     std::to_string(index) + " sends to rank " + std::to_string(dst) +
                     ", but the run has " + std::to_string(ranks_.size()) + " ranks");
  }
  channels_[ChannelKey{src, dst, comm}].push_back(InFlight{tag, step, index});
}

void Clock::Deliver(int r, std::int64_t step) {
  RankState& st = ranks_[r];
  st.clock = step;
  summary_.last_step = std::max(summary_.last_step, step);
  LogicalEvent le;
  le.rank = r;
  le.index = st.index;
  le.step = step;
  le.event = &st.event;
  sink_(le);
  ++st.index;
  ++summary_.events;
  ++summary_.rank_events[r];
  st.has_event = false;
  st.send_half_done = false;
  st.entered_collective = false;
  st.waiting_for.clear();
}

void Clock::Disagree(const std::string& what) {
  throw TraceError(source_.description() + ": ranks disagree: " + what);
}

bool Clock::TryDeliver(int r) {
  RankState& st = ranks_[r];
  const Event& e = st.event;
  const std::int64_t tick = st.clock + 1;
  auto where = [&]() {
    return "rank " + std::to_string(r) + " event #" + std::to_string(st.index);
  };

  switch (e.kind) {
    case EventKind::kCompute:
      Deliver(r, st.clock);
      return true;
    case EventKind::kCommCreate:
      comms_.Add(e, r);
      Deliver(r, tick);
      return true;
    case EventKind::kSend:
    case EventKind::kIsend:
      PostSend(r, e.peer, e.comm, e.tag, tick, st.index);
      Deliver(r, tick);
      return true;
    case EventKind::kIrecv:
      if (e.peer != kProcNull) st.irecvs[e.request] = PostedRecv{e.comm, e.peer, e.tag};
      Deliver(r, tick);
      return true;
    case EventKind::kRecv: {
      if (e.peer == kProcNull) {
        Deliver(r, tick);
        return true;
      }
      if (!MatchAvailable(r, e.peer, e.comm, e.tag)) {
        st.waiting_for = where() + " (recv) waits for a message from rank " +
                         std::to_string(e.peer) + " (tag " + std::to_string(e.tag) + ", comm " +
                         std::to_string(e.comm) + ")";
        return false;
      }
      Deliver(r, std::max(tick, TakeMatch(r, e.peer, e.comm, e.tag) + 1));
      return true;
    }
    case EventKind::kSendrecv: {
      if (!st.send_half_done) {
        PostSend(r, e.peer, e.comm, e.tag, tick, st.index);
        st.send_half_done = true;
      }
      if (e.recv_peer == kProcNull || e.recv_peer == kNoRank) {
        Deliver(r, tick);
        return true;
      }
      if (!MatchAvailable(r, e.recv_peer, e.comm, e.recv_tag)) {
        st.waiting_for = where() + " (sendrecv) waits for a message from rank " +
                         std::to_string(e.recv_peer) + " (tag " + std::to_string(e.recv_tag) +
                         ", comm " + std::to_string(e.comm) + ")";
        return false;
      }
      Deliver(r, std::max(tick, TakeMatch(r, e.recv_peer, e.comm, e.recv_tag) + 1));
      return true;
    }
    default:
      break;
  }

  if (IsCompletion(e.kind)) {
    // Every completed receive must have its send; check all before taking any.
    struct Need {
      std::int32_t src;
      CommId comm;
      std::int32_t tag;
    };
    std::vector<Need> needs;
    for (const Completion& c : e.completed) {
      auto it = st.irecvs.find(c.request);
      if (it == st.irecvs.end()) continue;  // a send request, or one we never saw posted
      if (c.peer == kCancelled) continue;   // cancelled (MPI_Cancel): no message to wait for
      std::int32_t src = c.peer >= 0 ? c.peer : it->second.peer;
      std::int32_t tag = c.tag != kAnyTag ? c.tag : it->second.tag;
      if (src < 0) {
        Disagree(where() + " completes a wildcard receive (request " + std::to_string(c.request) +
                 ") without saying which rank sent it");
      }
      needs.push_back(Need{src, it->second.comm, tag});
    }
    // Reserve one in-flight message per receive (first matching, in order), so that two
    // receives from one source with different tags each find their own message.
    std::vector<std::pair<const std::deque<InFlight>*, std::size_t>> reserved;
    for (const Need& need : needs) {
      auto it = channels_.find(ChannelKey{need.src, r, need.comm});
      bool found = false;
      if (it != channels_.end()) {
        const auto& q = it->second;
        for (std::size_t m = 0; m < q.size() && !found; ++m) {
          if (need.tag != kAnyTag && q[m].tag != need.tag) continue;
          if (std::find(reserved.begin(), reserved.end(), std::make_pair(&q, m)) !=
              reserved.end()) {
            continue;
          }
          reserved.emplace_back(&q, m);
          found = true;
        }
      }
      if (!found) {
        st.waiting_for = where() + " (" + std::string(EventKindName(e.kind)) +
                         ") waits for a message from rank " + std::to_string(need.src) + " (tag " +
                         std::to_string(need.tag) + ", comm " + std::to_string(need.comm) + ")";
        return false;
      }
    }
    std::int64_t step = tick;
    for (const Need& n : needs) step = std::max(step, TakeMatch(r, n.src, n.comm, n.tag) + 1);
    for (const Completion& c : e.completed) st.irecvs.erase(c.request);
    Deliver(r, step);
    return true;
  }

  if (IsCollective(e.kind)) {
    if (e.comm == kCommSelf) {
      Deliver(r, tick);
      return true;
    }
    if (!comms_.Has(e.comm)) {
      throw TraceError(source_.description() + ": " + where() + ": " +
                       std::string(EventKindName(e.kind)) + " on communicator " +
                       std::to_string(e.comm) + ", which no comm_create event defined before");
    }
    const int size = comms_.Size(e.comm);
    if (size <= 1) {
      Deliver(r, tick);
      return true;
    }
    const std::uint64_t seq = st.collective_seq[e.comm];
    auto key = std::make_pair(e.comm, seq);
    if (!st.entered_collective) {
      auto it = collectives_.find(key);
      if (it == collectives_.end()) {
        CollectiveEntry entry{e.kind, IsRooted(e.kind) ? e.peer : kNoRank, r, size};
        it = collectives_.emplace(key, entry).first;
      } else if (it->second.kind != e.kind || (IsRooted(e.kind) && it->second.root != e.peer)) {
        const CollectiveEntry& c = it->second;
        Disagree("collective #" + std::to_string(seq) + " on communicator " +
                 std::to_string(e.comm) + ": rank " + std::to_string(c.first_rank) + " calls " +
                 std::string(EventKindName(c.kind)) +
                 (c.root >= 0 ? " (root " + std::to_string(c.root) + ")" : std::string()) +
                 ", rank " + std::to_string(r) + " (event #" + std::to_string(st.index) +
                 ") calls " + std::string(EventKindName(e.kind)) +
                 (IsRooted(e.kind) ? " (root " + std::to_string(e.peer) + ")" : std::string()));
      }
      it->second.arrived += 1;
      it->second.max_step = std::max(it->second.max_step, st.clock);
      st.entered_collective = true;
    }
    auto it = collectives_.find(key);
    if (it->second.arrived < it->second.size) {
      st.waiting_for = where() + " waits in " + std::string(EventKindName(e.kind)) + " #" +
                       std::to_string(seq) + " on communicator " + std::to_string(e.comm) + " (" +
                       std::to_string(it->second.arrived) + " of " +
                       std::to_string(it->second.size) + " members entered)";
      return false;
    }
    const std::int64_t step = it->second.max_step + 1;
    if (++it->second.left == it->second.size) collectives_.erase(it);
    st.collective_seq[e.comm] = seq + 1;
    Deliver(r, step);
    return true;
  }

  // Init, finalize, abort, comm_free: local events.
  Deliver(r, tick);
  return true;
}

void Clock::ReportStall() {
  std::vector<int> blocked;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].has_event) blocked.push_back(static_cast<int>(r));
  }
  if (any_cut_) {
    std::string msg = "the trace is cut (";
    for (std::size_t i = 0; i < cut_messages_.size() && i < 3; ++i) {
      if (i > 0) msg += "; ";
      msg += cut_messages_[i];
    }
    if (cut_messages_.size() > 3) msg += "; ...";
    msg += "); analysed up to logical step " + std::to_string(summary_.last_step) + ", where rank";
    msg += blocked.size() > 1 ? "s " : " ";
    msg += RankList(blocked) + " cannot go on";
    summary_.warnings.push_back(msg);
    summary_.cut = true;
    return;
  }
  std::string msg = "no rank can go on (rank";
  msg += blocked.size() > 1 ? "s " : " ";
  msg += RankList(blocked) + " blocked): ";
  for (std::size_t i = 0; i < blocked.size() && i < 6; ++i) {
    if (i > 0) msg += "; ";
    msg += ranks_[blocked[i]].waiting_for;
  }
  if (blocked.size() > 6) msg += "; ...";
  std::vector<int> finished;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].done) finished.push_back(static_cast<int>(r));
  }
  if (!finished.empty() && finished.size() <= 8) {
    msg += "; rank";
    msg += finished.size() > 1 ? "s " : " ";
    msg += RankList(finished) + " already reached the end of the stream";
  }
  Disagree(msg);
}

void Clock::CheckLeftovers() {
  if (channels_.empty()) return;
  // Deterministic report: smallest (src, dst, comm) first.
  std::vector<std::pair<ChannelKey, const std::deque<InFlight>*>> left;
  for (const auto& [key, q] : channels_) left.emplace_back(key, &q);
  std::sort(left.begin(), left.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.src, a.first.dst, a.first.comm) <
           std::tie(b.first.src, b.first.dst, b.first.comm);
  });
  std::string msg;
  for (std::size_t i = 0; i < left.size() && i < 4; ++i) {
    const auto& [key, q] = left[i];
    if (i > 0) msg += "; ";
    msg += "rank " + std::to_string(key.src) + " sent " + std::to_string(q->size()) + " message" +
           (q->size() > 1 ? "s" : "") + " to rank " + std::to_string(key.dst) +
           " on communicator " + std::to_string(key.comm) + " (first: event #" +
           std::to_string(q->front().send_index) + ", tag " + std::to_string(q->front().tag) +
           ") that rank " + std::to_string(key.dst) + " never received";
  }
  if (left.size() > 4) msg += "; and " + std::to_string(left.size() - 4) + " more channels";
  if (any_cut_) {
    summary_.warnings.push_back("the trace is cut: " + msg);
    summary_.cut = true;
    return;
  }
  Disagree(msg);
}

LogicalTraceSummary Clock::Run() {
  const int n = source_.nprocs();
  if (n <= 0) throw TraceError(source_.description() + ": the trace has no ranks");
  summary_.nprocs = n;
  summary_.rank_events.assign(n, 0);
  summary_.rank_finished.assign(n, false);
  ranks_.resize(n);
  for (int r = 0; r < n; ++r) ranks_[r].source = source_.OpenRank(r);
  const std::size_t lead = std::max<std::size_t>(1, options_.max_lead_events);
  while (true) {
    bool progressed = false;
    bool all_done = true;
    for (int r = 0; r < n; ++r) {
      for (std::size_t budget = 0; budget < lead; ++budget) {
        if (!Fetch(r)) break;
        if (!TryDeliver(r)) break;
        progressed = true;
      }
      if (!ranks_[r].done) all_done = false;
    }
    if (all_done) break;
    if (!progressed) {
      ReportStall();
      return summary_;
    }
  }
  if (any_cut_) {
    std::string msg = "the trace is cut (";
    for (std::size_t i = 0; i < cut_messages_.size() && i < 3; ++i) {
      if (i > 0) msg += "; ";
      msg += cut_messages_[i];
    }
    msg += "); analysed up to the cut";
    summary_.warnings.push_back(msg);
    summary_.cut = true;
  }
  CheckLeftovers();
  return summary_;
}

}  // namespace

LogicalTraceSummary RunLogicalClock(const TraceSource& source, const LogicalEventSink& sink,
                                    const LogicalClockOptions& options) {
  Clock clock(source, sink, options);
  return clock.Run();
}

}  // namespace pas2p::phases
