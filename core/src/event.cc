#include "pas2p/core/event.h"

#include <array>
#include <sstream>

namespace pas2p {

// The static_assert catches a field added to Event that Clear would miss.
static_assert(sizeof(Event) == 248, "Event changed: update Event::Clear");
void Event::Clear() {
  kind = EventKind::kCompute;
  wall_start_ns = wall_end_ns = 0;
  cpu_ns = 0;
  instructions = cycles = kNotMeasured;
  comm = kCommWorld;
  peer = kNoRank;
  tag = 0;
  bytes = 0;
  request = 0;
  sync = false;
  recv_peer = kNoRank;
  recv_tag = 0;
  recv_bytes = 0;
  send_bytes = 0;
  send_counts.clear();
  recv_counts.clear();
  requests.clear();
  completed.clear();
  new_comm = 0;
  members.clear();
  value = 0;
}

namespace {

constexpr std::array<std::string_view, kEventKindCount> kNames = {
    "init",      "finalize",       "abort",     "compute",    "send",        "isend",     "recv",
    "irecv",     "sendrecv",       "wait",      "waitall",    "waitany",     "waitsome",  "test",
    "testall",   "testany",        "testsome",  "barrier",    "bcast",       "gather",    "gatherv",
    "scatter",   "scatterv",       "allgather", "allgatherv", "alltoall",    "alltoallv", "reduce",
    "allreduce", "reduce_scatter", "scan",      "exscan",     "comm_create", "comm_free"};

int Index(EventKind kind) { return static_cast<int>(kind); }

template <typename T>
void AppendList(std::ostringstream& out, const char* name, const std::vector<T>& values) {
  if (values.empty()) return;
  out << ' ' << name << '=';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
}

}  // namespace

std::string_view EventKindName(EventKind kind) {
  int i = Index(kind);
  if (i < 0 || i >= kEventKindCount) return "unknown";
  return kNames[static_cast<std::size_t>(i)];
}

bool ParseEventKind(std::string_view name, EventKind* kind) {
  for (int i = 0; i < kEventKindCount; ++i) {
    if (kNames[static_cast<std::size_t>(i)] == name) {
      *kind = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

bool IsPointToPoint(EventKind kind) {
  return kind >= EventKind::kSend && kind <= EventKind::kSendrecv;
}
bool IsCompletion(EventKind kind) {
  return kind >= EventKind::kWait && kind <= EventKind::kTestsome;
}
bool IsCollective(EventKind kind) {
  return kind >= EventKind::kBarrier && kind <= EventKind::kExscan;
}
bool IsRooted(EventKind kind) {
  switch (kind) {
    case EventKind::kBcast:
    case EventKind::kGather:
    case EventKind::kGatherv:
    case EventKind::kScatter:
    case EventKind::kScatterv:
    case EventKind::kReduce:
      return true;
    default:
      return false;
  }
}

std::uint64_t Event::SentBytes() const {
  switch (kind) {
    case EventKind::kSend:
    case EventKind::kIsend:
    case EventKind::kSendrecv:
      return bytes;
    default:
      return IsCollective(kind) ? send_bytes : 0;
  }
}

std::uint64_t Event::ReceivedBytes() const {
  switch (kind) {
    case EventKind::kRecv:
      return bytes;
    case EventKind::kSendrecv:
      return recv_bytes;
    case EventKind::kIrecv:
      return 0;  // counted at completion
    default:
      if (IsCompletion(kind)) {
        std::uint64_t total = 0;
        for (const auto& c : completed) total += c.peer >= 0 ? c.bytes : 0;
        return total;
      }
      return IsCollective(kind) ? recv_bytes : 0;
  }
}

std::string FormatEvent(const Event& e) {
  std::ostringstream out;
  out << EventKindName(e.kind);
  switch (e.kind) {
    case EventKind::kCompute:
      out << " cpu_ns=" << e.cpu_ns;
      if (e.instructions != kNotMeasured) out << " instructions=" << e.instructions;
      if (e.cycles != kNotMeasured) out << " cycles=" << e.cycles;
      break;
    case EventKind::kSend:
    case EventKind::kIsend:
    case EventKind::kRecv:
    case EventKind::kIrecv:
      out << " peer=" << e.peer << " tag=" << e.tag << " comm=" << e.comm << " bytes=" << e.bytes;
      if (e.kind == EventKind::kIsend || e.kind == EventKind::kIrecv)
        out << " request=" << e.request;
      if (e.kind == EventKind::kRecv && e.recv_peer == kAnySource) out << " posted=any";
      if (e.sync) out << " sync";
      break;
    case EventKind::kSendrecv:
      out << " peer=" << e.peer << " tag=" << e.tag << " bytes=" << e.bytes
          << " recv_peer=" << e.recv_peer << " recv_tag=" << e.recv_tag
          << " recv_bytes=" << e.recv_bytes << " comm=" << e.comm;
      break;
    case EventKind::kCommCreate:
      out << " comm=" << e.comm << " new_comm=" << e.new_comm << " origin=" << e.value;
      AppendList(out, "members", e.members);
      break;
    case EventKind::kCommFree:
      out << " comm=" << e.comm;
      break;
    case EventKind::kInit:
    case EventKind::kFinalize:
    case EventKind::kAbort:
      out << " value=" << e.value;
      break;
    default:
      if (IsCollective(e.kind)) {
        out << " comm=" << e.comm;
        if (IsRooted(e.kind)) out << " root=" << e.peer;
        out << " send_bytes=" << e.send_bytes << " recv_bytes=" << e.recv_bytes;
        AppendList(out, "send_counts", e.send_counts);
        AppendList(out, "recv_counts", e.recv_counts);
      } else if (IsCompletion(e.kind)) {
        AppendList(out, "requests", e.requests);
        out << " completed=";
        if (e.completed.empty()) out << "none";
        for (std::size_t i = 0; i < e.completed.size(); ++i) {
          const Completion& c = e.completed[i];
          out << (i ? "," : "") << c.request;
          if (c.peer >= 0) out << "(from " << c.peer << " tag " << c.tag << " " << c.bytes << "B)";
          if (c.peer == kCancelled) out << "(cancelled)";
        }
      }
      break;
  }
  out << " t=[" << e.wall_start_ns << "," << e.wall_end_ns << "]";
  return out.str();
}

Event MakeCompute(std::int64_t cpu_ns, std::int64_t instructions, std::int64_t cycles) {
  Event e;
  e.kind = EventKind::kCompute;
  e.cpu_ns = cpu_ns;
  e.instructions = instructions;
  e.cycles = cycles;
  return e;
}

namespace {
Event MakeP2P(EventKind kind, std::int32_t peer, std::int32_t tag, std::uint64_t bytes,
              RequestId request, CommId comm) {
  Event e;
  e.kind = kind;
  e.peer = peer;
  e.tag = tag;
  e.bytes = bytes;
  e.request = request;
  e.comm = comm;
  return e;
}
}  // namespace

Event MakeSend(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, CommId comm) {
  return MakeP2P(EventKind::kSend, peer, tag, bytes, 0, comm);
}
Event MakeRecv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, CommId comm) {
  return MakeP2P(EventKind::kRecv, peer, tag, bytes, 0, comm);
}
Event MakeSendrecv(std::int32_t peer, std::int32_t recv_peer, std::int32_t tag, std::uint64_t bytes,
                   std::uint64_t recv_bytes, CommId comm) {
  Event e = MakeP2P(EventKind::kSendrecv, peer, tag, bytes, 0, comm);
  e.recv_peer = recv_peer;
  e.recv_tag = tag;
  e.recv_bytes = recv_bytes;
  return e;
}
Event MakeIsend(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, RequestId request,
                CommId comm) {
  return MakeP2P(EventKind::kIsend, peer, tag, bytes, request, comm);
}
Event MakeIrecv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, RequestId request,
                CommId comm) {
  return MakeP2P(EventKind::kIrecv, peer, tag, bytes, request, comm);
}

Event MakeWaitall(std::vector<RequestId> requests) {
  Event e;
  e.kind = EventKind::kWaitall;
  e.requests = std::move(requests);
  for (RequestId r : e.requests) e.completed.push_back(Completion{r, kNoRank, kAnyTag, 0});
  return e;
}

Event MakeCommCreate(CommId parent, CommId made, CommOrigin origin,
                     std::vector<std::int32_t> members) {
  Event e;
  e.kind = EventKind::kCommCreate;
  e.comm = parent;
  e.new_comm = made;
  e.value = static_cast<std::int64_t>(origin);
  e.members = std::move(members);
  return e;
}

Event MakeCollective(EventKind kind, std::uint64_t send_bytes, std::uint64_t recv_bytes,
                     std::int32_t root, CommId comm) {
  Event e;
  e.kind = kind;
  e.send_bytes = send_bytes;
  e.recv_bytes = recv_bytes;
  e.peer = root;
  e.comm = comm;
  return e;
}

}  // namespace pas2p
