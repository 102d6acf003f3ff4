// The rescheduled replay of a self-scheduled trace (see reschedule.h).
#include "pas2p/simulator/reschedule.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "pas2p/core/error.h"

namespace pas2p::sim {

struct RescheduledTrace::Piece {
  int owner = 0;              // the worker whose trace it comes from
  std::uint64_t first = 0;    // index of its first event in the owner's stream
  std::vector<Event> events;  // without the receives from the master that bound it
  bool task = false;          // a task body (moves with its message)
  bool then_recv = false;     // the owner's next event after it is a receive from the master
};

struct RescheduledTrace::MasterSend {
  std::uint64_t index = 0;  // position in the master's stream
  std::int32_t traced_dest = 0;
  bool reply = false;
  std::uint64_t ordinal = 0;  // reply: the wildcard completion (0-based, traced order) it answers
  int piece = -1;             // the piece that follows it on its worker
};

struct RescheduledTrace::Session {
  bool attached = false;
  std::vector<std::int32_t> sources;   // the master's wildcard completions in the replay
  std::vector<std::deque<int>> queue;  // per rank: pieces of the messages sent to it
  std::vector<std::size_t> next_own;   // per rank: its next own piece
  std::vector<std::vector<std::int32_t>> send_peers;  // per rank: its send destinations
  std::vector<std::int64_t> cpu_ns;                   // per rank
  RequestId next_request = RequestId{1} << 62;        // fresh ids for moved task requests
};

namespace {

bool IsSendKind(EventKind k) { return k == EventKind::kSend || k == EventKind::kIsend; }

// The replies of one rank's stream: sends to a rank whose MPI_ANY_SOURCE receive completed
// and was not answered yet (the oldest such completion of that source).
class ReplyTracker {
 public:
  // Returns the ordinal of the wildcard completion `e` answers, or -1 when it is no reply.
  std::int64_t Feed(const Event& e) {
    if (e.kind == EventKind::kIrecv && e.peer == kAnySource) wildcard_.insert(e.request);
    if (IsCompletion(e.kind)) {
      for (const Completion& c : e.completed) {
        if (wildcard_.erase(c.request) > 0 && c.peer >= 0) {
          unreplied_.emplace_back(ordinal_++, c.peer);
        }
      }
    }
    if (e.kind == EventKind::kRecv && e.recv_peer == kAnySource && e.peer >= 0) {
      unreplied_.emplace_back(ordinal_++, e.peer);
    }
    if (IsSendKind(e.kind) && e.peer >= 0) {
      for (auto it = unreplied_.begin(); it != unreplied_.end(); ++it) {
        if (it->second == e.peer) {
          const auto ordinal = static_cast<std::int64_t>(it->first);
          unreplied_.erase(it);
          return ordinal;
        }
      }
    }
    return -1;
  }

 private:
  std::set<RequestId> wildcard_;
  std::deque<std::pair<std::uint64_t, std::int32_t>> unreplied_;
  std::uint64_t ordinal_ = 0;
};

void CheckComplete(const RankEventSource& source) {
  if (source.status() == StreamStatus::kTruncated || source.status() == StreamStatus::kCorrupt) {
    throw TraceError(source.message());
  }
}

std::string At(int rank, std::uint64_t index) {
  return "rank " + std::to_string(rank) + " (event " + std::to_string(index) + ")";
}

// Why `events` (one piece of a worker, after a receive from the master) is not a task body
// although it sends to the master; empty when it is one.
std::string WhyNotTaskBody(const std::vector<Event>& events, int master, std::uint64_t first,
                           int owner) {
  std::set<RequestId> isends;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    const std::uint64_t at = first + i;
    if (e.kind == EventKind::kCompute) continue;
    if (IsSendKind(e.kind) && e.peer == master) {
      if (e.kind == EventKind::kIsend) isends.insert(e.request);
      continue;
    }
    if (IsCompletion(e.kind)) {
      bool own = true;
      for (RequestId id : e.requests) own = own && isends.count(id) > 0;
      for (const Completion& c : e.completed) own = own && isends.count(c.request) > 0;
      if (own) continue;
    }
    return At(owner, at) + " does " + std::string(EventKindName(e.kind)) +
           (IsPointToPoint(e.kind) ? " with rank " + std::to_string(e.peer) : std::string()) +
           " in the middle of a task (after its receive from the master, before its next): a "
           "task body must be compute and sends to the master only";
  }
  return {};
}

bool SendsToMaster(const std::vector<Event>& events, int master) {
  return std::any_of(events.begin(), events.end(),
                     [&](const Event& e) { return IsSendKind(e.kind) && e.peer == master; });
}

}  // namespace

RescheduledTrace::RescheduledTrace(const TraceSource& base)
    : base_(base), session_(std::make_shared<Session>()) {
  const int n = base.nprocs();
  base_cpu_ns_.assign(static_cast<std::size_t>(n), 0);
  // Pass 1: who replies to whoever answered.
  std::vector<int> masters;
  for (int r = 0; r < n; ++r) {
    auto source = base.OpenRank(r);
    ReplyTracker replies;
    bool replied = false;
    Event e;
    while (source->Next(&e)) {
      if (e.kind == EventKind::kCompute) base_cpu_ns_[static_cast<std::size_t>(r)] += e.cpu_ns;
      replied = replies.Feed(e) >= 0 || replied;
    }
    CheckComplete(*source);
    if (replied) masters.push_back(r);
  }
  if (masters.empty()) {
    run_.note =
        "no rank replies to whoever answered its MPI_ANY_SOURCE receive (not "
        "self-scheduled)";
    return;
  }
  if (masters.size() > 1) {
    run_.note = "ranks " + std::to_string(masters[0]) + " and " + std::to_string(masters[1]) +
                (masters.size() > 2 ? " (and more)" : "") +
                " both reply to whoever answered: more than one master is not rescheduled";
    return;
  }
  const int master = masters.front();
  run_.master = master;

  // Pass 2: the master's sends, and how it receives.
  std::set<int> workers;
  std::vector<std::pair<std::int32_t, std::uint64_t>> named_receives;  // (source, index)
  {
    auto source = base.OpenRank(master);
    ReplyTracker replies;
    Event e;
    for (std::uint64_t i = 0; source->Next(&e); ++i) {
      const std::int64_t ordinal = replies.Feed(e);
      if (e.kind == EventKind::kSendrecv) {
        run_.note = At(master, i) + ": the master uses sendrecv, which is not rescheduled";
        return;
      }
      if (IsSendKind(e.kind) && e.peer >= 0 && e.peer != master) {
        MasterSend s;
        s.index = i;
        s.traced_dest = e.peer;
        s.reply = ordinal >= 0;
        s.ordinal = ordinal >= 0 ? static_cast<std::uint64_t>(ordinal) : 0;
        sends_.push_back(s);
        workers.insert(e.peer);
      }
      if ((e.kind == EventKind::kRecv && e.recv_peer != kAnySource) ||
          (e.kind == EventKind::kIrecv && e.peer != kAnySource)) {
        named_receives.emplace_back(e.peer, i);
      }
    }
    CheckComplete(*source);
  }
  for (const auto& [peer, index] : named_receives) {
    if (workers.count(peer)) {
      run_.note = At(master, index) + ": the master receives from its worker " +
                  std::to_string(peer) +
                  " by name (not MPI_ANY_SOURCE), so who runs a task is not the simulation's "
                  "choice";
      return;
    }
  }
  run_.workers.assign(workers.begin(), workers.end());

  // Pass 3: the workers' pieces, paired with the master's messages in order.
  own_.resize(static_cast<std::size_t>(n));
  recv_comm_.assign(static_cast<std::size_t>(n), 0);
  std::map<int, std::vector<std::size_t>> sends_to;  // worker -> indices into sends_
  for (std::size_t k = 0; k < sends_.size(); ++k) sends_to[sends_[k].traced_dest].push_back(k);
  for (const int w : run_.workers) {
    auto source = base.OpenRank(w);
    std::vector<std::size_t> receives;  // pieces that follow a receive, in order
    Piece current;
    current.owner = w;
    bool comm_set = false;
    std::set<RequestId> irecvs;
    std::vector<std::int32_t> recv_tags;
    Event e;
    std::uint64_t i = 0;
    auto close = [&](bool then_recv) {
      current.then_recv = then_recv;
      pieces_.push_back(std::move(current));
      current = Piece{};
      current.owner = w;
    };
    for (; source->Next(&e); ++i) {
      if (e.kind == EventKind::kIrecv) {
        if (e.peer == master) {
          run_.note = At(w, i) +
                      ": the worker receives from the master with an irecv; the "
                      "rescheduled replay needs blocking receives of the tasks";
          return;
        }
        irecvs.insert(e.request);
      }
      if (IsCompletion(e.kind)) {
        for (const Completion& c : e.completed) {
          if (irecvs.erase(c.request) > 0 && c.peer == master) {
            run_.note = At(w, i) +
                        ": the worker receives from the master with an irecv; the "
                        "rescheduled replay needs blocking receives of the tasks";
            return;
          }
        }
      }
      if (e.kind == EventKind::kRecv && e.peer == master) {
        if (comm_set && e.comm != recv_comm_[static_cast<std::size_t>(w)]) {
          run_.note = At(w, i) + ": the worker receives from the master on two communicators";
          return;
        }
        recv_comm_[static_cast<std::size_t>(w)] = e.comm;
        comm_set = true;
        recv_tags.push_back(e.tag);
        close(true);
        receives.push_back(pieces_.size());  // the piece that starts after this receive
        current.first = i + 1;
        continue;
      }
      current.events.push_back(e);
    }
    CheckComplete(*source);
    close(false);
    // pieces_[receives[0] - 1] is the prologue.
    const std::vector<std::size_t>& mine = sends_to[w];
    if (mine.size() != receives.size()) {
      run_.note = "the master (rank " + std::to_string(master) + ") sends " +
                  std::to_string(mine.size()) + " messages to rank " + std::to_string(w) +
                  ", which receives " + std::to_string(receives.size()) +
                  " from it with blocking receives";
      return;
    }
    own_[static_cast<std::size_t>(w)].push_back(
        static_cast<int>(receives.empty() ? pieces_.size() - 1 : receives.front() - 1));
    for (std::size_t k = 0; k < receives.size(); ++k) {
      const std::size_t p = receives[k];
      Piece& piece = pieces_[p];
      if (SendsToMaster(piece.events, master)) {
        const std::string why = WhyNotTaskBody(piece.events, master, piece.first, w);
        if (!why.empty()) {
          run_.note = why;
          return;
        }
        if (!piece.then_recv) {
          run_.note = At(w, piece.first) +
                      ": the worker's stream ends after a task without another receive from "
                      "the master";
          return;
        }
        piece.task = true;
        ++run_.tasks;
      } else {
        own_[static_cast<std::size_t>(w)].push_back(static_cast<int>(p));
        ++run_.stops;
      }
      sends_[mine[k]].piece = static_cast<int>(p);
    }
  }
  for (const MasterSend& s : sends_) run_.replies += s.reply;
  if (run_.tasks == 0) {
    run_.note = "rank " + std::to_string(master) +
                " replies to whoever answered, but no worker answers a message with a result "
                "(no task to hand out)";
    return;
  }
  run_.rescheduled = true;
}

RescheduledTrace::~RescheduledTrace() = default;

std::string RescheduledTrace::description() const {
  return base_.description() + (run_.rescheduled ? " (tasks rescheduled)" : "");
}

SimOptions RescheduledTrace::Attach(SimOptions options) const {
  if (options.deterministic) {
    throw UserError(
        "the rescheduled replay hands tasks to whoever answers first in the "
        "simulation; it cannot follow the traced sources (deterministic mode)");
  }
  Session& s = *session_;
  const auto n = static_cast<std::size_t>(base_.nprocs());
  s = Session{};
  s.attached = true;
  s.queue.assign(n, {});
  s.next_own.assign(n, 0);
  s.send_peers.assign(n, {});
  s.cpu_ns = base_cpu_ns_;
  if (!run_.rescheduled) return options;
  s.cpu_ns[static_cast<std::size_t>(run_.master)] = 0;
  for (const int w : run_.workers) s.cpu_ns[static_cast<std::size_t>(w)] = 0;
  auto previous = std::move(options.on_wildcard_receive);
  options.on_wildcard_receive = [session = session_, master = run_.master, previous](
                                    int rank, std::int32_t source) {
    if (rank == master) session->sources.push_back(source);
    if (previous) previous(rank, source);
  };
  return options;
}

const std::vector<std::vector<std::int32_t>>& RescheduledTrace::send_peers_by_rank() const {
  return session_->send_peers;
}
const std::vector<std::int64_t>& RescheduledTrace::cpu_ns_by_rank() const {
  return session_->cpu_ns;
}

namespace {

// The master's stream with its replies sent to whoever answered in the simulation.
class MasterReader : public RankEventSource {
 public:
  using Session = RescheduledTrace::Session;
  MasterReader(std::unique_ptr<RankEventSource> in, std::shared_ptr<Session> session,
               const std::vector<RescheduledTrace::MasterSend>* sends, std::string origin)
      : in_(std::move(in)),
        session_(std::move(session)),
        sends_(sends),
        origin_(std::move(origin)) {}
  bool Next(Event* e) override;
  StreamStatus status() const override { return in_->status(); }
  const std::string& message() const override { return in_->message(); }
  int rank() const override { return in_->rank(); }

 private:
  std::unique_ptr<RankEventSource> in_;
  std::shared_ptr<Session> session_;
  const std::vector<RescheduledTrace::MasterSend>* sends_;
  std::string origin_;
  // The next event of the stream and its index, without the failed tests that are followed
  // (after compute only) by a wait on the same requests.
  bool Pull(Event* e, std::uint64_t* at);
  std::uint64_t index_ = 0;
  std::size_t next_send_ = 0;
  std::deque<std::pair<Event, std::uint64_t>> ahead_;
};

bool IsFailedTest(const Event& e) {
  return (e.kind == EventKind::kTest || e.kind == EventKind::kTestany ||
          e.kind == EventKind::kTestsome || e.kind == EventKind::kTestall) &&
         e.completed.empty();
}

bool MasterReader::Pull(Event* e, std::uint64_t* at) {
  for (;;) {
    if (!ahead_.empty()) {
      *e = std::move(ahead_.front().first);
      *at = ahead_.front().second;
      ahead_.pop_front();
    } else {
      if (!in_->Next(e)) return false;
      *at = index_++;
    }
    if (!IsFailedTest(*e)) return true;
    // Polling (tests that find nothing, then a wait or a test that completes): in the
    // simulation a poll may find what the traced one did not, and the master then goes on
    // at once, which is what the completing call alone replays. (A failed test that
    // completes in the simulation would take the result away from that call, which would
    // then wait for another.) So the failed tests before a completing call on the same
    // requests, with only compute and other failed tests between, are left out.
    std::size_t k = 0;
    for (;; ++k) {
      if (k == ahead_.size()) {
        Event next;
        if (!in_->Next(&next)) break;
        ahead_.emplace_back(std::move(next), index_++);
      }
      const Event& x = ahead_[k].first;
      if (x.kind != EventKind::kCompute && !IsFailedTest(x)) break;
    }
    bool covered = false;
    if (k < ahead_.size()) {
      const Event& x = ahead_[k].first;
      covered = IsCompletion(x.kind) && !x.completed.empty();
      for (RequestId id : e->requests) {
        covered =
            covered && std::find(x.requests.begin(), x.requests.end(), id) != x.requests.end();
      }
    }
    if (!covered) return true;
  }
}

bool MasterReader::Next(Event* e) {
  std::uint64_t at = 0;
  if (!Pull(e, &at)) return false;
  Session& s = *session_;
  const int me = in_->rank();
  if (e->kind == EventKind::kCompute) s.cpu_ns[static_cast<std::size_t>(me)] += e->cpu_ns;
  // A blocking wildcard receive is replayed as one (the plain replay takes its traced
  // source): who answers first is what decides the next reply.
  if (e->kind == EventKind::kRecv && e->recv_peer == kAnySource) e->peer = kAnySource;
  if (next_send_ < sends_->size() && (*sends_)[next_send_].index == at) {
    const RescheduledTrace::MasterSend& send = (*sends_)[next_send_++];
    std::int32_t dest = send.traced_dest;
    if (send.reply) {
      if (send.ordinal >= s.sources.size()) {
        throw SimulationError(origin_ + ": " + At(me, at) + ": the master's reply to its " +
                              std::to_string(send.ordinal + 1) +
                              "th wildcard receive is read before the simulation completed "
                              "that receive (replay the rescheduled trace with the options of "
                              "RescheduledTrace::Attach)");
      }
      dest = s.sources[send.ordinal];
      if (static_cast<std::size_t>(dest) >= s.queue.size()) {
        throw SimulationError(origin_ + ": " + At(me, at) + ": reply to rank " +
                              std::to_string(dest) + ", outside the run");
      }
    }
    e->peer = dest;
    s.queue[static_cast<std::size_t>(dest)].push_back(send.piece);
  }
  if ((IsSendKind(e->kind) || e->kind == EventKind::kSendrecv) && e->peer >= 0) {
    s.send_peers[static_cast<std::size_t>(me)].push_back(e->peer);
  }
  return true;
}

// A worker's stream: its prologue, then per message from the master the task body the
// message carries or, for a message without a task, its own next piece.
class WorkerReader : public RankEventSource {
 public:
  using Session = RescheduledTrace::Session;
  using Piece = RescheduledTrace::Piece;
  WorkerReader(int rank, int master, CommId comm, const std::vector<Piece>* pieces,
               const std::vector<int>* own, std::shared_ptr<Session> session, std::string origin)
      : rank_(rank),
        master_(master),
        comm_(comm),
        pieces_(pieces),
        own_(own),
        session_(std::move(session)),
        origin_(std::move(origin)) {}
  bool Next(Event* e) override;
  StreamStatus status() const override { return StreamStatus::kComplete; }
  const std::string& message() const override { return message_; }
  int rank() const override { return rank_; }

 private:
  void Start(int piece) {
    piece_ = piece;
    pos_ = 0;
    ids_.clear();
  }
  int rank_, master_;
  CommId comm_;
  const std::vector<Piece>* pieces_;
  const std::vector<int>* own_;
  std::shared_ptr<Session> session_;
  std::string origin_;
  std::string message_;
  bool started_ = false, awaiting_ = false;
  int piece_ = -1;
  std::size_t pos_ = 0;
  std::uint64_t received_ = 0;          // messages from the master so far
  std::map<RequestId, RequestId> ids_;  // moved task: traced request id -> fresh one
};

bool WorkerReader::Next(Event* e) {
  Session& s = *session_;
  const auto me = static_cast<std::size_t>(rank_);
  for (;;) {
    if (!started_) {
      started_ = true;
      Start((*own_)[0]);
      s.next_own[me] = 1;
    }
    if (awaiting_) {
      auto& queue = s.queue[me];
      if (queue.empty()) {
        throw SimulationError(origin_ + ": rank " + std::to_string(rank_) +
                              ": the rescheduled worker reads past its receive from the master "
                              "(rank " +
                              std::to_string(master_) + ") before the master sent it anything");
      }
      const int p = queue.front();
      queue.pop_front();
      ++received_;
      awaiting_ = false;
      if ((*pieces_)[static_cast<std::size_t>(p)].task) {
        Start(p);
      } else {
        if (s.next_own[me] >= own_->size()) {
          throw SimulationError(
              origin_ + ": rank " + std::to_string(rank_) + ": message " +
              std::to_string(received_) + " from the master (rank " + std::to_string(master_) +
              ") carries no task, and the worker received only " +
              std::to_string(own_->size() - 1) +
              " such messages (stops) in the trace: the rescheduled run ends the workers "
              "differently than the traced one");
        }
        Start((*own_)[s.next_own[me]++]);
      }
    }
    const Piece& piece = (*pieces_)[static_cast<std::size_t>(piece_)];
    if (pos_ < piece.events.size()) {
      *e = piece.events[pos_++];
      if (piece.task) {  // fresh request ids: the body may run beside the worker's own
        auto fresh = [&](RequestId id) {
          auto [it, inserted] = ids_.emplace(id, 0);
          if (inserted) it->second = s.next_request++;
          return it->second;
        };
        if (e->kind == EventKind::kIsend) e->request = fresh(e->request);
        for (RequestId& id : e->requests) id = fresh(id);
        for (Completion& c : e->completed) c.request = fresh(c.request);
      }
      if (e->kind == EventKind::kCompute) s.cpu_ns[me] += e->cpu_ns;
      if ((IsSendKind(e->kind) || e->kind == EventKind::kSendrecv) && e->peer >= 0) {
        s.send_peers[me].push_back(e->peer);
      }
      return true;
    }
    if (!piece.then_recv) return false;
    // The next receive from the master: whichever message it sent next, any tag.
    *e = MakeRecv(master_, kAnyTag, 0, comm_);
    awaiting_ = true;
    return true;
  }
}

}  // namespace

std::unique_ptr<RankEventSource> RescheduledTrace::OpenRank(int rank) const {
  if (!run_.rescheduled) return base_.OpenRank(rank);
  if (!session_->attached) {
    throw UserError(description() +
                    ": the rescheduled trace is only read by a replay that "
                    "uses RescheduledTrace::Attach's options");
  }
  if (rank == run_.master) {
    return std::make_unique<MasterReader>(base_.OpenRank(rank), session_, &sends_,
                                          base_.description());
  }
  if (std::binary_search(run_.workers.begin(), run_.workers.end(), rank)) {
    return std::make_unique<WorkerReader>(
        rank, run_.master, recv_comm_[static_cast<std::size_t>(rank)], &pieces_,
        &own_[static_cast<std::size_t>(rank)], session_, base_.description());
  }
  return base_.OpenRank(rank);
}

RescheduledReplay SimulateRescheduled(const TraceSource& trace, const Machine& machine,
                                      const SimOptions& options) {
  RescheduledReplay out;
  const RescheduledTrace rescheduled(trace);
  out.run = rescheduled.run();
  if (!out.run.rescheduled) {
    out.result = Simulate(trace, machine, options);
    return out;
  }
  out.result = Simulate(rescheduled, machine, rescheduled.Attach(options));
  out.send_peers_by_rank = rescheduled.send_peers_by_rank();
  out.cpu_ns_by_rank = rescheduled.cpu_ns_by_rank();
  return out;
}

}  // namespace pas2p::sim
