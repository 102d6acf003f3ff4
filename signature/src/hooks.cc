// Recording hooks for point-to-point, completions, collectives and communicators.
// Lifecycle hooks (init, finalize, abort, crashes) are in lifecycle.cc.
#include "hooks.h"

#include <algorithm>

namespace pas2p::tracer {

namespace {

std::int32_t WorldTag(int tag) { return tag == MPI_ANY_TAG ? kAnyTag : tag; }

// The tag a completed receive records: the one that arrived, or the one posted when nothing
// could arrive (from MPI_PROC_NULL the status holds MPI_ANY_TAG, and a halo's boundary rank
// would record its call with another tag than the same call on the ranks inside).
std::int32_t ReceivedTag(const MPI_Status& status, int posted) {
  return WorldTag(status.MPI_SOURCE == MPI_PROC_NULL ? posted : status.MPI_TAG);
}

bool IsRoot(const CommInfo& comm, int root) { return comm.my_rank == root; }

int CommSize(const CommInfo& comm) { return static_cast<int>(comm.members.size()); }

// Per-peer byte counts of a v-collective.
void PerPeer(const int* counts, MPI_Datatype type, int n, std::vector<std::uint64_t>* out,
             std::uint64_t* total) {
  out->resize(static_cast<std::size_t>(n));
  *total = 0;
  const std::uint64_t unit = TypeBytes(1, type);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t bytes = counts[i] > 0 ? unit * static_cast<std::uint64_t>(counts[i]) : 0;
    (*out)[static_cast<std::size_t>(i)] = bytes;
    *total += bytes;
  }
}

// True when a probe posted with MPI_ANY_SOURCE on this communicator found the message that a
// receive posted for `source` (communicator rank) and `tag` takes: the probe chose the
// source, so the receive is a wildcard one. Forgets that probe.
bool TakeWildcardProbe(Runtime& rt, const CommInfo& info, int source, int tag) {
  if (source == MPI_ANY_SOURCE || source == MPI_PROC_NULL) return false;
  auto& probes = rt.wildcard_probes;
  const auto it = std::find_if(probes.begin(), probes.end(),
                               [&](const ProbedMessage& p) { return p.comm == &info; });
  if (it == probes.end() || it->source != ToWorld(info, source) ||
      (tag != MPI_ANY_TAG && tag != it->tag)) {
    return false;
  }
  probes.erase(it);
  return true;
}

Event& Collective(CallScope& scope, EventKind kind, const CommInfo& comm) {
  Event& e = scope.event();
  e.kind = kind;
  e.comm = comm.id;
  scope.Emit();
  return e;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Point-to-point.

void OnSend(CallScope& scope, EventKind kind, bool sync, int rc, const void*, int count,
            MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  Event& e = scope.event();
  e.kind = kind;
  e.sync = sync;
  e.comm = info.id;
  e.peer = ToWorld(info, dest);
  e.tag = tag;
  e.bytes = TypeBytes(count, datatype);
  e.value = rc == MPI_SUCCESS ? 0 : rc;
  scope.Emit();
}

void OnIsend(CallScope& scope, EventKind kind, bool sync, int rc, const void* buf, int count,
             MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  OnSend(scope, kind, sync, rc, buf, count, datatype, dest, tag, comm);
  Runtime& rt = GetRuntime();
  if (rc == MPI_SUCCESS && request != nullptr) {
    rt.call_event.request = rt.AddRequest(*request, rt.Comm(comm), false);
  }
}

void OnRecv(CallScope& scope, int rc, void*, int count, MPI_Datatype datatype, int source, int tag,
            MPI_Comm comm, MPI_Status* status) {
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  Event& e = scope.event();
  e.kind = EventKind::kRecv;
  e.comm = info.id;
  // A wildcard receive keeps that it was one (a master that serves whichever worker is
  // ready): peer is the actual source, recv_peer says it was posted as MPI_ANY_SOURCE (or
  // for the source a wildcard probe found).
  if (source == MPI_ANY_SOURCE || TakeWildcardProbe(rt, info, source, tag)) {
    e.recv_peer = kAnySource;
  }
  if (rc == MPI_SUCCESS && status != nullptr) {
    e.peer = ToWorld(info, status->MPI_SOURCE);
    e.tag = ReceivedTag(*status, tag);
    e.bytes = StatusBytes(*status);
  } else {
    e.peer = ToWorld(info, source);
    e.tag = WorldTag(tag);
    e.bytes = TypeBytes(count, datatype);
    e.value = rc;
  }
  scope.Emit();
}

void OnIrecv(CallScope& scope, int rc, void*, int count, MPI_Datatype datatype, int source, int tag,
             MPI_Comm comm, MPI_Request* request) {
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  Event& e = scope.event();
  e.kind = EventKind::kIrecv;
  e.comm = info.id;
  // Posted for the source a wildcard probe found: recorded as posted with MPI_ANY_SOURCE
  // (the completion says which source it was).
  e.peer = TakeWildcardProbe(rt, info, source, tag) ? kAnySource : ToWorld(info, source);
  e.tag = WorldTag(tag);
  e.bytes = TypeBytes(count, datatype);
  if (rc == MPI_SUCCESS && request != nullptr) e.request = rt.AddRequest(*request, info, true);
  e.value = rc == MPI_SUCCESS ? 0 : rc;
  scope.Emit();
}

void OnSendrecv(CallScope& scope, int rc, const void*, int sendcount, MPI_Datatype sendtype,
                int dest, int sendtag, void*, int recvcount, MPI_Datatype recvtype, int source,
                int recvtag, MPI_Comm comm, MPI_Status* status) {
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  Event& e = scope.event();
  e.kind = EventKind::kSendrecv;
  e.comm = info.id;
  e.peer = ToWorld(info, dest);
  e.tag = sendtag;
  e.bytes = TypeBytes(sendcount, sendtype);
  if (rc == MPI_SUCCESS && status != nullptr) {
    e.recv_peer = ToWorld(info, status->MPI_SOURCE);
    e.recv_tag = ReceivedTag(*status, recvtag);
    e.recv_bytes = StatusBytes(*status);
  } else {
    e.recv_peer = ToWorld(info, source);
    e.recv_tag = WorldTag(recvtag);
    e.recv_bytes = TypeBytes(recvcount, recvtype);
    e.value = rc;
  }
  scope.Emit();
}

void OnSendrecvReplace(CallScope& scope, int rc, void* buf, int count, MPI_Datatype datatype,
                       int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                       MPI_Status* status) {
  OnSendrecv(scope, rc, buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
             comm, status);
}

// ---------------------------------------------------------------------------------------
// Persistent requests.

namespace {

void Persistent(int rc, MPI_Request* request, const PersistentInfo& info) {
  if (rc != MPI_SUCCESS || request == nullptr || *request == MPI_REQUEST_NULL) return;
  Runtime& rt = GetRuntime();
  // A handle MPI hands out again: whatever was started under its old life is forgotten.
  rt.requests.erase(*request);
  rt.persistent[*request] = info;
}

// The isend/irecv event of one activation of a persistent request (false: not ours).
bool StartEvent(MPI_Request handle, Event* e) {
  Runtime& rt = GetRuntime();
  auto it = rt.persistent.find(handle);
  if (it == rt.persistent.end()) return false;
  const PersistentInfo& p = it->second;
  e->kind = p.is_recv ? EventKind::kIrecv : EventKind::kIsend;
  e->comm = p.comm->id;
  e->peer = p.peer;
  e->tag = p.tag;
  e->bytes = p.bytes;
  e->sync = p.sync;
  e->request = rt.AddRequest(handle, *p.comm, p.is_recv);
  return true;
}

}  // namespace

void OnSendInit(CallScope&, bool sync, int rc, const void*, int count, MPI_Datatype datatype,
                int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Persistent(
      rc, request,
      PersistentInfo{&info, false, sync, ToWorld(info, dest), tag, TypeBytes(count, datatype)});
}

void OnRecvInit(CallScope&, int rc, void*, int count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Request* request) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Persistent(rc, request,
             PersistentInfo{&info, true, false, ToWorld(info, source), WorldTag(tag),
                            TypeBytes(count, datatype)});
}

void OnStart(CallScope& scope, int rc, MPI_Request* request) {
  if (rc != MPI_SUCCESS || request == nullptr) return;
  Event& e = scope.event();
  if (StartEvent(*request, &e)) scope.Emit();
}

void OnStartall(CallScope& scope, int rc, int count, MPI_Request* requests) {
  if (rc != MPI_SUCCESS || requests == nullptr) return;
  // One event per started request, in array order, all spanning the call so far; the last
  // one is the scope's own (it gets the call's end time).
  Runtime& rt = GetRuntime();
  int last = -1;
  for (int i = 0; i < count; ++i) {
    if (rt.persistent.count(requests[i]) != 0) last = i;
  }
  for (int i = 0; i <= last; ++i) {
    Event& e = scope.event();
    if (!StartEvent(requests[i], &e)) continue;
    if (i == last) {
      scope.Emit();
    } else {
      e.wall_start_ns = scope.start_ns() - rt.origin_ns;
      e.wall_end_ns = MonotonicNs() - rt.origin_ns;
      rt.Append(e);
    }
  }
}

void PreRequestFree(CallScope&, MPI_Request* request) {
  if (request == nullptr || *request == MPI_REQUEST_NULL) return;
  Runtime& rt = GetRuntime();
  // A freed request is never waited for: forget it (persistent or not, active or not), so a
  // later request that gets the same handle is not taken for it.
  rt.persistent.erase(*request);
  // A freed non-blocking collective still takes place: recorded where it is freed.
  if (rt.collectives.count(*request)) {
    rt.completion_start_ns = MonotonicNs();
    rt.EmitCollective(*request);
    return;
  }
  // Several live requests may share a handle (see Runtime::requests): the oldest one is the
  // one freed, as completions take them in creation order too.
  auto it = rt.requests.find(*request);
  if (it == rt.requests.end()) return;
  it->second.erase(it->second.begin());
  if (it->second.empty()) rt.requests.erase(it);
}

void OnRequestFree(CallScope&, int, MPI_Request*) {}

// ---------------------------------------------------------------------------------------
// Probes.

namespace {

void RememberWildcardProbe(int rc, int source, MPI_Comm comm, const MPI_Status* status) {
  if (rc != MPI_SUCCESS || source != MPI_ANY_SOURCE || status == nullptr ||
      status->MPI_SOURCE == MPI_PROC_NULL || status->MPI_SOURCE == MPI_ANY_SOURCE) {
    return;
  }
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  const ProbedMessage found{&info, ToWorld(info, status->MPI_SOURCE), status->MPI_TAG};
  for (ProbedMessage& p : rt.wildcard_probes) {
    if (p.comm == &info) {
      p = found;
      return;
    }
  }
  rt.wildcard_probes.push_back(found);
}

}  // namespace

void OnProbe(CallScope&, int rc, int source, int, MPI_Comm comm, MPI_Status* status) {
  RememberWildcardProbe(rc, source, comm, status);
}

void OnIprobe(CallScope&, int rc, int source, int, MPI_Comm comm, int* flag, MPI_Status* status) {
  if (flag != nullptr && *flag) RememberWildcardProbe(rc, source, comm, status);
}

// ---------------------------------------------------------------------------------------
// Matched probes and receives.

namespace {

// Remembers what a matched probe found. MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL) is
// not remembered, so receiving it records nothing: no message moves.
void Matched(int rc, int source, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (rc != MPI_SUCCESS || message == nullptr || *message == MPI_MESSAGE_NULL ||
      *message == MPI_MESSAGE_NO_PROC || status == nullptr) {
    return;
  }
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  rt.messages[*message] =
      MatchedMessage{&info, ToWorld(info, status->MPI_SOURCE), WorldTag(status->MPI_TAG),
                     StatusBytes(*status), source == MPI_ANY_SOURCE};
}

}  // namespace

void OnMprobe(CallScope&, int rc, int source, int, MPI_Comm comm, MPI_Message* message,
              MPI_Status* status) {
  Matched(rc, source, comm, message, status);
}

void OnImprobe(CallScope&, int rc, int source, int, MPI_Comm comm, int* flag, MPI_Message* message,
               MPI_Status* status) {
  if (flag != nullptr && *flag) Matched(rc, source, comm, message, status);
}

void TakeMessage(MPI_Message message) {
  Runtime& rt = GetRuntime();
  rt.pending_message = MatchedMessage{};
  auto it = rt.messages.find(message);
  if (it == rt.messages.end()) return;
  rt.pending_message = it->second;
  rt.messages.erase(it);
}

void OnMrecv(CallScope& scope, int rc, void*, int count, MPI_Datatype datatype, MPI_Message*,
             MPI_Status* status) {
  const MatchedMessage& m = GetRuntime().pending_message;
  if (m.comm == nullptr) return;  // a message the tracer did not see probed
  Event& e = scope.event();
  e.kind = EventKind::kRecv;
  e.comm = m.comm->id;
  e.peer = m.source;
  e.tag = m.tag;
  if (m.wildcard) e.recv_peer = kAnySource;  // the probe chose the source
  if (rc == MPI_SUCCESS) {
    e.bytes = status != nullptr ? StatusBytes(*status) : m.bytes;
  } else {
    e.bytes = TypeBytes(count, datatype);
    e.value = rc;
  }
  scope.Emit();
}

void OnImrecv(CallScope& scope, int rc, void*, int count, MPI_Datatype datatype, MPI_Message*,
              MPI_Request* request) {
  Runtime& rt = GetRuntime();
  const MatchedMessage& m = rt.pending_message;
  if (m.comm == nullptr) return;
  Event& e = scope.event();
  e.kind = EventKind::kIrecv;
  e.comm = m.comm->id;
  // Already known: the probe matched it. A probe posted with MPI_ANY_SOURCE chose that
  // source, so the receive is recorded as a wildcard one (the completion names the source).
  e.peer = m.wildcard ? kAnySource : m.source;
  e.tag = m.tag;
  e.bytes = TypeBytes(count, datatype);
  if (rc == MPI_SUCCESS && request != nullptr) e.request = rt.AddRequest(*request, *m.comm, true);
  e.value = rc == MPI_SUCCESS ? 0 : rc;
  scope.Emit();
}

// ---------------------------------------------------------------------------------------
// Completions.

void CaptureRequests(int count, const MPI_Request* requests) {
  Runtime& rt = GetRuntime();
  rt.pending.clear();
  rt.pending_collectives.clear();
  if (requests == nullptr) return;
  for (int i = 0; i < count; ++i) {
    const MPI_Request handle = requests[i];
    if (handle == MPI_REQUEST_NULL) continue;
    if (rt.collectives.count(handle)) {
      rt.pending_collectives.emplace_back(i, handle);
      continue;
    }
    auto it = rt.requests.find(handle);
    if (it == rt.requests.end()) continue;  // not made by a traced call (persistent, ...)
    std::size_t nth = 0;                    // the same handle passed again: its next request
    if (it->second.size() > 1) {
      for (const PendingRequest& p : rt.pending) nth += p.handle == handle ? 1 : 0;
    }
    if (nth >= it->second.size()) continue;
    rt.pending.push_back(PendingRequest{i, it->second[nth], handle});
  }
}

namespace {

Event& CompletionEvent(CallScope& scope, EventKind kind) {
  Runtime& rt = GetRuntime();
  rt.completion_start_ns = scope.start_ns();
  Event& e = scope.event();
  e.kind = kind;
  e.requests.reserve(rt.pending.size());
  for (const PendingRequest& p : rt.pending) e.requests.push_back(p.info.id);
  scope.Emit();
  return e;
}

// Records the completion of the captured request at array position `index`.
void Complete(Event& e, int index, const MPI_Status* status) {
  Runtime& rt = GetRuntime();
  for (const auto& [at, handle] : rt.pending_collectives) {
    if (at == index) {
      // A non-blocking collective: recorded here, before the completion's own event.
      rt.EmitCollective(handle);
      return;
    }
  }
  auto it = std::lower_bound(rt.pending.begin(), rt.pending.end(), index,
                             [](const PendingRequest& p, int i) { return p.index < i; });
  if (it == rt.pending.end() || it->index != index) return;
  Completion c;
  c.request = it->info.id;
  if (it->info.is_recv && status != nullptr) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled) {
      c.peer = kCancelled;  // MPI_Cancel succeeded: no source, tag nor data
    } else {
      c.peer = ToWorld(*it->info.comm, status->MPI_SOURCE);
      c.tag = WorldTag(status->MPI_TAG);
      c.bytes = StatusBytes(*status);
    }
  }
  e.completed.push_back(c);
  rt.RemoveRequest(it->handle, it->info.id);
}

bool StatusOk(int rc, const MPI_Status* statuses, int i) {
  if (rc == MPI_SUCCESS) return true;
  return rc == MPI_ERR_IN_STATUS && statuses != nullptr && statuses[i].MPI_ERROR == MPI_SUCCESS;
}

}  // namespace

void OnWait(CallScope& scope, int rc, MPI_Request*, MPI_Status* status) {
  Event& e = CompletionEvent(scope, EventKind::kWait);
  if (rc == MPI_SUCCESS) Complete(e, 0, status);
}

void OnTest(CallScope& scope, int rc, MPI_Request*, int* flag, MPI_Status* status) {
  Event& e = CompletionEvent(scope, EventKind::kTest);
  if (rc == MPI_SUCCESS && flag != nullptr && *flag) Complete(e, 0, status);
}

void OnWaitall(CallScope& scope, int rc, int count, MPI_Request*, MPI_Status* statuses) {
  Event& e = CompletionEvent(scope, EventKind::kWaitall);
  for (int i = 0; i < count; ++i) {
    if (StatusOk(rc, statuses, i)) Complete(e, i, statuses != nullptr ? &statuses[i] : nullptr);
  }
}

void OnTestall(CallScope& scope, int rc, int count, MPI_Request*, int* flag, MPI_Status* statuses) {
  Event& e = CompletionEvent(scope, EventKind::kTestall);
  if (flag == nullptr || !*flag) return;  // a failed test completes nothing
  for (int i = 0; i < count; ++i) {
    if (StatusOk(rc, statuses, i)) Complete(e, i, statuses != nullptr ? &statuses[i] : nullptr);
  }
}

void OnWaitany(CallScope& scope, int rc, int, MPI_Request*, int* index, MPI_Status* status) {
  Event& e = CompletionEvent(scope, EventKind::kWaitany);
  if (rc == MPI_SUCCESS && index != nullptr && *index != MPI_UNDEFINED) Complete(e, *index, status);
}

void OnTestany(CallScope& scope, int rc, int, MPI_Request*, int* index, int* flag,
               MPI_Status* status) {
  Event& e = CompletionEvent(scope, EventKind::kTestany);
  if (rc == MPI_SUCCESS && flag != nullptr && *flag && index != nullptr &&
      *index != MPI_UNDEFINED) {
    Complete(e, *index, status);
  }
}

void OnWaitsome(CallScope& scope, EventKind kind, int rc, int, MPI_Request*, int* outcount,
                int* indices, MPI_Status* statuses) {
  Event& e = CompletionEvent(scope, kind);
  if (outcount == nullptr || *outcount == MPI_UNDEFINED || indices == nullptr) return;
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return;
  for (int k = 0; k < *outcount; ++k) {
    if (StatusOk(rc, statuses, k)) {
      Complete(e, indices[k], statuses != nullptr ? &statuses[k] : nullptr);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Collectives.

void OnBarrier(CallScope& scope, int, MPI_Comm comm) {
  Collective(scope, EventKind::kBarrier, GetRuntime().Comm(comm));
}

void OnBcast(CallScope& scope, int, void*, int count, MPI_Datatype datatype, int root,
             MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kBcast, info);
  e.peer = ToWorld(info, root);
  const std::uint64_t bytes = TypeBytes(count, datatype);
  if (IsRoot(info, root)) {
    e.send_bytes = bytes;
  } else {
    e.recv_bytes = bytes;
  }
}

void OnGather(CallScope& scope, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              void*, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kGather, info);
  e.peer = ToWorld(info, root);
  const bool root_here = IsRoot(info, root);
  if (!(root_here && sendbuf == MPI_IN_PLACE)) e.send_bytes = TypeBytes(sendcount, sendtype);
  if (root_here) e.recv_bytes = TypeBytes(recvcount, recvtype) * CommSize(info);
}

void OnGatherv(CallScope& scope, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void*, const int* recvcounts, const int*, MPI_Datatype recvtype, int root,
               MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kGatherv, info);
  e.peer = ToWorld(info, root);
  const bool root_here = IsRoot(info, root);
  if (!(root_here && sendbuf == MPI_IN_PLACE)) e.send_bytes = TypeBytes(sendcount, sendtype);
  if (root_here && recvcounts != nullptr) {
    PerPeer(recvcounts, recvtype, CommSize(info), &e.recv_counts, &e.recv_bytes);
  }
}

void OnScatter(CallScope& scope, int, const void*, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kScatter, info);
  e.peer = ToWorld(info, root);
  const bool root_here = IsRoot(info, root);
  if (root_here) e.send_bytes = TypeBytes(sendcount, sendtype) * CommSize(info);
  if (!(root_here && recvbuf == MPI_IN_PLACE)) e.recv_bytes = TypeBytes(recvcount, recvtype);
}

void OnScatterv(CallScope& scope, int, const void*, const int* sendcounts, const int*,
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                int root, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kScatterv, info);
  e.peer = ToWorld(info, root);
  const bool root_here = IsRoot(info, root);
  if (root_here && sendcounts != nullptr) {
    PerPeer(sendcounts, sendtype, CommSize(info), &e.send_counts, &e.send_bytes);
  }
  if (!(root_here && recvbuf == MPI_IN_PLACE)) e.recv_bytes = TypeBytes(recvcount, recvtype);
}

void OnAllgather(CallScope& scope, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void*, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kAllgather, info);
  e.send_bytes =
      sendbuf == MPI_IN_PLACE ? TypeBytes(recvcount, recvtype) : TypeBytes(sendcount, sendtype);
  e.recv_bytes = TypeBytes(recvcount, recvtype) * CommSize(info);
}

void OnAllgatherv(CallScope& scope, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                  void*, const int* recvcounts, const int*, MPI_Datatype recvtype, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kAllgatherv, info);
  if (recvcounts != nullptr) {
    PerPeer(recvcounts, recvtype, CommSize(info), &e.recv_counts, &e.recv_bytes);
  }
  if (sendbuf == MPI_IN_PLACE) {
    if (recvcounts != nullptr) e.send_bytes = TypeBytes(recvcounts[info.my_rank], recvtype);
  } else {
    e.send_bytes = TypeBytes(sendcount, sendtype);
  }
}

void OnAlltoall(CallScope& scope, int, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void*, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kAlltoall, info);
  e.recv_bytes = TypeBytes(recvcount, recvtype) * CommSize(info);
  e.send_bytes =
      sendbuf == MPI_IN_PLACE ? e.recv_bytes : TypeBytes(sendcount, sendtype) * CommSize(info);
}

void OnAlltoallv(CallScope& scope, int, const void* sendbuf, const int* sendcounts, const int*,
                 MPI_Datatype sendtype, void*, const int* recvcounts, const int*,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kAlltoallv, info);
  const int n = CommSize(info);
  if (recvcounts != nullptr) PerPeer(recvcounts, recvtype, n, &e.recv_counts, &e.recv_bytes);
  if (sendbuf == MPI_IN_PLACE) {
    e.send_counts = e.recv_counts;
    e.send_bytes = e.recv_bytes;
  } else if (sendcounts != nullptr) {
    PerPeer(sendcounts, sendtype, n, &e.send_counts, &e.send_bytes);
  }
}

// ---------------------------------------------------------------------------------------
// Neighbourhood collectives.

namespace {

// The neighbours of a communicator's topology as MPI orders them (communicator ranks, or
// MPI_PROC_NULL): for a cartesian one, per dimension the rank at -1 then the one at +1, as
// sources and as destinations; for a graph, its neighbours; for a distributed graph, its
// sources and its destinations. False when the communicator has no topology (MPI then
// fails the call anyway).
bool TopologyNeighbours(MPI_Comm comm, std::vector<int>* sources, std::vector<int>* dests) {
  int topo = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topo) != MPI_SUCCESS) return false;
  sources->clear();
  dests->clear();
  if (topo == MPI_CART) {
    int ndims = 0;
    if (PMPI_Cartdim_get(comm, &ndims) != MPI_SUCCESS) return false;
    for (int d = 0; d < ndims; ++d) {
      int below = MPI_PROC_NULL, above = MPI_PROC_NULL;
      if (PMPI_Cart_shift(comm, d, 1, &below, &above) != MPI_SUCCESS) return false;
      sources->push_back(below);
      sources->push_back(above);
    }
    *dests = *sources;
    return true;
  }
  if (topo == MPI_GRAPH) {
    int me = 0, count = 0;
    if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        PMPI_Graph_neighbors_count(comm, me, &count) != MPI_SUCCESS || count < 0) {
      return false;
    }
    sources->resize(static_cast<std::size_t>(count));
    if (count > 0 && PMPI_Graph_neighbors(comm, me, count, sources->data()) != MPI_SUCCESS) {
      return false;
    }
    *dests = *sources;
    return true;
  }
  if (topo == MPI_DIST_GRAPH) {
    int indegree = 0, outdegree = 0, weighted = 0;
    if (PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted) != MPI_SUCCESS ||
        indegree < 0 || outdegree < 0) {
      return false;
    }
    sources->resize(static_cast<std::size_t>(indegree));
    dests->resize(static_cast<std::size_t>(outdegree));
    std::vector<int> source_weights(weighted ? sources->size() + 1 : 0);
    std::vector<int> dest_weights(weighted ? dests->size() + 1 : 0);
    return PMPI_Dist_graph_neighbors(
               comm, indegree, sources->data(), weighted ? source_weights.data() : MPI_UNWEIGHTED,
               outdegree, dests->data(),
               weighted ? dest_weights.data() : MPI_UNWEIGHTED) == MPI_SUCCESS;
  }
  return false;
}

// Records a neighbourhood collective that completed: the irecvs and isends it stands for
// (appended now, at the call's start) and the waitall that completes them (the call's own
// event, stamped with the call's interval). recv_bytes(i) and send_bytes(i) are the bytes
// from source i and to destination i.
template <class RecvBytes, class SendBytes>
void Neighbourhood(CallScope& scope, int rc, MPI_Comm comm, RecvBytes recv_bytes,
                   SendBytes send_bytes) {
  if (rc != MPI_SUCCESS) return;
  Runtime& rt = GetRuntime();
  const CommInfo& info = rt.Comm(comm);
  std::vector<int> sources, dests;
  if (!TopologyNeighbours(comm, &sources, &dests)) return;
  std::vector<Completion> completed;
  Event op;
  op.comm = info.id;
  op.tag = kNeighborTag;
  op.wall_start_ns = op.wall_end_ns = scope.start_ns() - rt.origin_ns;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (sources[i] == MPI_PROC_NULL) continue;
    op.kind = EventKind::kIrecv;
    op.peer = ToWorld(info, sources[i]);
    op.bytes = recv_bytes(static_cast<int>(i));
    op.request = rt.AddRequest(MPI_REQUEST_NULL, info, true);
    rt.Append(op);
    completed.push_back(Completion{op.request, op.peer, kNeighborTag, op.bytes});
  }
  for (std::size_t i = 0; i < dests.size(); ++i) {
    if (dests[i] == MPI_PROC_NULL) continue;
    op.kind = EventKind::kIsend;
    op.peer = ToWorld(info, dests[i]);
    op.bytes = send_bytes(static_cast<int>(i));
    op.request = rt.AddRequest(MPI_REQUEST_NULL, info, false);
    rt.Append(op);
    completed.push_back(Completion{op.request, kNoRank, kAnyTag, 0});
  }
  if (completed.empty()) return;
  Event& e = scope.event();
  e.kind = EventKind::kWaitall;
  e.comm = info.id;
  for (const Completion& c : completed) e.requests.push_back(c.request);
  e.completed = std::move(completed);
  scope.Emit();
}

std::uint64_t Bytes(const int* counts, int i, MPI_Datatype type) {
  return counts != nullptr ? TypeBytes(counts[i], type) : 0;
}

}  // namespace

void OnNeighborAllgather(CallScope& scope, int rc, const void*, int sendcount,
                         MPI_Datatype sendtype, void*, int recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm) {
  const std::uint64_t sent = TypeBytes(sendcount, sendtype);
  const std::uint64_t received = TypeBytes(recvcount, recvtype);
  Neighbourhood(
      scope, rc, comm, [&](int) { return received; }, [&](int) { return sent; });
}

void OnNeighborAllgatherv(CallScope& scope, int rc, const void*, int sendcount,
                          MPI_Datatype sendtype, void*, const int* recvcounts, const int*,
                          MPI_Datatype recvtype, MPI_Comm comm) {
  const std::uint64_t sent = TypeBytes(sendcount, sendtype);
  Neighbourhood(
      scope, rc, comm, [&](int i) { return Bytes(recvcounts, i, recvtype); },
      [&](int) { return sent; });
}

void OnNeighborAlltoall(CallScope& scope, int rc, const void*, int sendcount, MPI_Datatype sendtype,
                        void*, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const std::uint64_t sent = TypeBytes(sendcount, sendtype);
  const std::uint64_t received = TypeBytes(recvcount, recvtype);
  Neighbourhood(
      scope, rc, comm, [&](int) { return received; }, [&](int) { return sent; });
}

void OnNeighborAlltoallv(CallScope& scope, int rc, const void*, const int* sendcounts, const int*,
                         MPI_Datatype sendtype, void*, const int* recvcounts, const int*,
                         MPI_Datatype recvtype, MPI_Comm comm) {
  Neighbourhood(
      scope, rc, comm, [&](int i) { return Bytes(recvcounts, i, recvtype); },
      [&](int i) { return Bytes(sendcounts, i, sendtype); });
}

void OnIneighborAllgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                          MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request*) {
  OnNeighborAllgather(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

void OnIneighborAllgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                           const int* displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request*) {
  OnNeighborAllgatherv(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                       recvtype, comm);
}

void OnIneighborAlltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                         MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request*) {
  OnNeighborAlltoall(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

void OnIneighborAlltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                          const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
                          const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request*) {
  OnNeighborAlltoallv(scope, rc, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                      rdispls, recvtype, comm);
}

void OnReduce(CallScope& scope, int, const void*, void*, int count, MPI_Datatype datatype, MPI_Op,
              int root, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kReduce, info);
  e.peer = ToWorld(info, root);
  e.send_bytes = TypeBytes(count, datatype);
  if (IsRoot(info, root)) e.recv_bytes = e.send_bytes;
}

void OnAllreduce(CallScope& scope, EventKind kind, int, const void*, void*, int count,
                 MPI_Datatype datatype, MPI_Op, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, kind, info);
  e.send_bytes = e.recv_bytes = TypeBytes(count, datatype);
}

void OnReduceScatter(CallScope& scope, int, const void*, void*, const int* recvcounts,
                     MPI_Datatype datatype, MPI_Op, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kReduceScatter, info);
  if (recvcounts == nullptr) return;
  std::uint64_t total = 0;
  PerPeer(recvcounts, datatype, CommSize(info), &e.recv_counts, &total);
  e.send_bytes = total;
  e.recv_bytes = TypeBytes(recvcounts[info.my_rank], datatype);
}

void OnReduceScatterBlock(CallScope& scope, int, const void*, void*, int recvcount,
                          MPI_Datatype datatype, MPI_Op, MPI_Comm comm) {
  const CommInfo& info = GetRuntime().Comm(comm);
  Event& e = Collective(scope, EventKind::kReduceScatter, info);
  e.recv_bytes = TypeBytes(recvcount, datatype);
  e.send_bytes = e.recv_bytes * CommSize(info);
}

// ---------------------------------------------------------------------------------------
// Non-blocking collectives: recorded as the blocking collective at the completion that
// finishes them (see mpi_functions.txt). Where they start, no rank has to have joined yet:
// a consensus (MPI_Issend to each partner, then MPI_Ibarrier while receiving whatever
// arrives, as DOLFINx and PETSc build their communication graphs) receives after the
// MPI_Ibarrier starts, and recorded there the replay waited in a barrier for ranks whose
// synchronous sends wait for those receives.

namespace {
// Keeps the collective the scope's event now holds for the completion of `request`.
void StartCollective(CallScope& scope, int rc, const MPI_Request* request) {
  if (rc != MPI_SUCCESS || request == nullptr || *request == MPI_REQUEST_NULL) return;
  Runtime& rt = GetRuntime();
  rt.collectives[*request] = Runtime::StartedCollective{rt.collectives_started++, rt.call_event};
  scope.Withhold();
}
}  // namespace

void OnIbarrier(CallScope& scope, int rc, MPI_Comm comm, MPI_Request* request) {
  OnBarrier(scope, rc, comm);
  StartCollective(scope, rc, request);
}

void OnIbcast(CallScope& scope, int rc, void* buffer, int count, MPI_Datatype datatype, int root,
              MPI_Comm comm, MPI_Request* request) {
  OnBcast(scope, rc, buffer, count, datatype, root, comm);
  StartCollective(scope, rc, request);
}

void OnIgather(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
               MPI_Request* request) {
  OnGather(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  StartCollective(scope, rc, request);
}

void OnIgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                int root, MPI_Comm comm, MPI_Request* request) {
  OnGatherv(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
            comm);
  StartCollective(scope, rc, request);
}

void OnIscatter(CallScope& scope, int rc, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  OnScatter(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  StartCollective(scope, rc, request);
}

void OnIscatterv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                 const int* displs, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  OnScatterv(scope, rc, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
             comm);
  StartCollective(scope, rc, request);
}

void OnIallgather(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  MPI_Comm comm, MPI_Request* request) {
  OnAllgather(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  StartCollective(scope, rc, request);
}

void OnIallgatherv(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* displs,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  OnAllgatherv(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
               comm);
  StartCollective(scope, rc, request);
}

void OnIalltoall(CallScope& scope, int rc, const void* sendbuf, int sendcount,
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 MPI_Comm comm, MPI_Request* request) {
  OnAlltoall(scope, rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  StartCollective(scope, rc, request);
}

void OnIalltoallv(CallScope& scope, int rc, const void* sendbuf, const int* sendcounts,
                  const int* sdispls, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                  const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  OnAlltoallv(scope, rc, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
              recvtype, comm);
  StartCollective(scope, rc, request);
}

void OnIreduce(CallScope& scope, int rc, const void* sendbuf, void* recvbuf, int count,
               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  OnReduce(scope, rc, sendbuf, recvbuf, count, datatype, op, root, comm);
  StartCollective(scope, rc, request);
}

void OnIallreduce(CallScope& scope, EventKind kind, int rc, const void* sendbuf, void* recvbuf,
                  int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                  MPI_Request* request) {
  OnAllreduce(scope, kind, rc, sendbuf, recvbuf, count, datatype, op, comm);
  StartCollective(scope, rc, request);
}

void OnIreduceScatter(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                      const int* recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                      MPI_Request* request) {
  OnReduceScatter(scope, rc, sendbuf, recvbuf, recvcounts, datatype, op, comm);
  StartCollective(scope, rc, request);
}

void OnIreduceScatterBlock(CallScope& scope, int rc, const void* sendbuf, void* recvbuf,
                           int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                           MPI_Request* request) {
  OnReduceScatterBlock(scope, rc, sendbuf, recvbuf, recvcount, datatype, op, comm);
  StartCollective(scope, rc, request);
}

// ---------------------------------------------------------------------------------------
// Communicators. Every member of the parent makes the same creation calls on it in the
// same order (MPI requires it), so (parent id, ordinal, members) names the new
// communicator alike on all its members.

namespace {

void Created(CallScope& scope, int rc, MPI_Comm parent, MPI_Comm* newcomm, CommOrigin origin) {
  Runtime& rt = GetRuntime();
  CommInfo& parent_info = rt.Comm(parent);
  const std::uint64_t ordinal = parent_info.children++;
  if (rc != MPI_SUCCESS || newcomm == nullptr || *newcomm == MPI_COMM_NULL) return;
  CommInfo& info = rt.Register(*newcomm, 0, false, origin, parent_info.id);
  info.id = DeriveCommId(parent_info.id, ordinal, info.members);
  Event& e = scope.event();
  e.kind = EventKind::kCommCreate;
  e.comm = parent_info.id;
  e.new_comm = info.id;
  e.members = info.members;
  e.value = static_cast<std::int64_t>(origin);
  scope.Emit();
}

}  // namespace

void OnCommDup(CallScope& scope, int rc, MPI_Comm comm, MPI_Comm* newcomm) {
  Created(scope, rc, comm, newcomm, CommOrigin::kDup);
}
void OnCommSplit(CallScope& scope, int rc, MPI_Comm comm, int, int, MPI_Comm* newcomm) {
  Created(scope, rc, comm, newcomm, CommOrigin::kSplit);
}
void OnCommSplitType(CallScope& scope, int rc, MPI_Comm comm, int, int, MPI_Info,
                     MPI_Comm* newcomm) {
  Created(scope, rc, comm, newcomm, CommOrigin::kSplit);
}
void OnCommCreate(CallScope& scope, int rc, MPI_Comm comm, MPI_Group, MPI_Comm* newcomm) {
  Created(scope, rc, comm, newcomm, CommOrigin::kCreate);
}
void OnCommCreateGroup(CallScope& scope, int rc, MPI_Comm comm, MPI_Group, int tag,
                       MPI_Comm* newcomm) {
  Runtime& rt = GetRuntime();
  CommInfo& parent_info = rt.Comm(comm);
  if (rc != MPI_SUCCESS || newcomm == nullptr || *newcomm == MPI_COMM_NULL) return;
  CommInfo& info = rt.Register(*newcomm, 0, false, CommOrigin::kCreate, parent_info.id);
  const CommId key =
      DeriveCommId(parent_info.id, static_cast<std::uint32_t>(tag) | (1ULL << 32), info.members);
  const std::uint64_t ordinal = rt.create_group_ordinals[key]++;
  info.id = DeriveCommId(key, ordinal, info.members);
  Event& e = scope.event();
  e.kind = EventKind::kCommCreate;
  e.comm = parent_info.id;
  e.new_comm = info.id;
  e.members = info.members;
  e.value = static_cast<std::int64_t>(CommOrigin::kCreate);
  scope.Emit();
}

void OnCartCreate(CallScope& scope, int rc, MPI_Comm comm_old, int, const int*, const int*, int,
                  MPI_Comm* comm_cart) {
  Created(scope, rc, comm_old, comm_cart, CommOrigin::kCart);
}
void OnCartSub(CallScope& scope, int rc, MPI_Comm comm, const int*, MPI_Comm* newcomm) {
  Created(scope, rc, comm, newcomm, CommOrigin::kSplit);
}

void PreCommFree(CallScope&, MPI_Comm* comm) {
  Runtime& rt = GetRuntime();
  rt.pending_comm_handle = comm != nullptr ? *comm : MPI_COMM_NULL;
  rt.pending_comm_free = 0;
  if (rt.pending_comm_handle == MPI_COMM_NULL) return;
  auto it = rt.comms.find(rt.pending_comm_handle);
  rt.pending_comm_free = it != rt.comms.end() ? it->second->id : 0;
}

void OnCommFree(CallScope& scope, int rc, MPI_Comm*) {
  Runtime& rt = GetRuntime();
  if (rc != MPI_SUCCESS || rt.pending_comm_handle == MPI_COMM_NULL) return;
  rt.comms.erase(rt.pending_comm_handle);
  if (rt.pending_comm_free == 0) return;  // never used, never recorded
  Event& e = scope.event();
  e.kind = EventKind::kCommFree;
  e.comm = rt.pending_comm_free;
  scope.Emit();
}

}  // namespace pas2p::tracer
