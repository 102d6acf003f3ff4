// The tracer runtime: clocks, counters, communicator and request tables, scratch buffers,
// crash handling. See runtime.h.
#include "runtime.h"

#include <fcntl.h>
#include <papi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "fortran.h"

namespace pas2p::tracer {

namespace {

// initial-exec: the library is preloaded, so its TLS is static and a flag is one load away
// (the default model calls __tls_get_addr on every wrapper entry and exit).
#define PAS2P_FAST_TLS __attribute__((tls_model("initial-exec")))
thread_local bool t_owner PAS2P_FAST_TLS = false;    // the thread that called MPI_Init
thread_local bool t_in_call PAS2P_FAST_TLS = false;  // inside a wrapper (nested calls untraced)

}  // namespace

void MarkOwnerThread() noexcept { t_owner = true; }

namespace {
std::uint64_t g_untraced[kMaxUntraced] = {};
}  // namespace

void CountUntraced(int index) noexcept {
  // Only the thread that traces counts (as it alone records events); relaxed counting on
  // other threads would race.
  if (t_owner && index >= 0 && index < kMaxUntraced) ++g_untraced[index];
}

const std::uint64_t* UntracedCounts() noexcept { return g_untraced; }

Runtime& GetRuntime() noexcept {
  // Never destroyed: signal handlers and exit-time flushing may run after static
  // destructors.
  static Runtime* runtime = new Runtime();
  return *runtime;
}

std::int64_t MonotonicNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

std::int64_t ThreadCpuNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

void Runtime::Append(const Event& event) noexcept {
  if (!writer.is_open()) return;
  in_writer = 1;
  const bool ok = writer.Append(event);
  in_writer = 0;
  if (!ok) Fail(("cannot write the trace stream: " + writer.error()).c_str());
}

void Runtime::Fail(const char* what) noexcept {
  if (!failed) {
    std::fprintf(stderr, "pas2p-trace: rank %d: %s; tracing stops, the application continues\n",
                 rank, what);
  }
  failed = true;
  enabled = false;
}

void Runtime::ReadCounters(long long* values) noexcept {
  if (papi_eventset < 0 || PAPI_read(papi_eventset, values) != PAPI_OK) {
    values[0] = values[1] = 0;
  }
}

// ---------------------------------------------------------------------------------------
// Communicators.

std::int32_t ToWorld(const CommInfo& comm, int rank) {
  if (rank == MPI_ANY_SOURCE) return kAnySource;
  if (rank == MPI_PROC_NULL) return kProcNull;
  if (comm.is_world) return rank >= 0 ? rank : kNoRank;
  if (rank < 0 || static_cast<std::size_t>(rank) >= comm.peers.size()) return kNoRank;
  return comm.peers[static_cast<std::size_t>(rank)];
}

CommId DeriveCommId(CommId parent, std::uint64_t ordinal,
                    const std::vector<std::int32_t>& members) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a 64
  auto mix = [&hash](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (value >> (8 * i)) & 0xffU;
      hash *= 1099511628211ULL;
    }
  };
  mix(parent);
  mix(ordinal);
  mix(members.size());
  for (std::int32_t member : members) mix(static_cast<std::uint32_t>(member));
  if (hash <= kCommSelf) hash += 2;  // 0 and 1 are MPI_COMM_WORLD and MPI_COMM_SELF
  return hash;
}

std::vector<std::int32_t> Runtime::GroupToWorld(MPI_Group group) {
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> local(static_cast<std::size_t>(size));
  std::vector<int> global(static_cast<std::size_t>(size), MPI_UNDEFINED);
  for (int i = 0; i < size; ++i) local[static_cast<std::size_t>(i)] = i;
  if (size > 0) PMPI_Group_translate_ranks(group, size, local.data(), world_group, global.data());
  std::vector<std::int32_t> out(global.begin(), global.end());
  for (auto& r : out) {
    if (r == MPI_UNDEFINED) r = kNoRank;
  }
  return out;
}

CommInfo& Runtime::Register(MPI_Comm handle, CommId id, bool record, CommOrigin origin,
                            CommId parent) {
  auto info = std::make_unique<CommInfo>();
  info->id = id;
  MPI_Group group;
  PMPI_Comm_group(handle, &group);
  info->members = GroupToWorld(group);
  PMPI_Group_free(&group);
  int inter = 0;
  PMPI_Comm_test_inter(handle, &inter);
  if (inter) {
    PMPI_Comm_remote_group(handle, &group);
    info->peers = GroupToWorld(group);
    PMPI_Group_free(&group);
  } else {
    info->peers = info->members;
  }
  PMPI_Comm_rank(handle, &info->my_rank);
  CommInfo& ref = *info;
  comm_storage.push_back(std::move(info));
  comms[handle] = &ref;
  if (record) {
    Event event;
    event.kind = EventKind::kCommCreate;
    event.comm = parent;
    event.new_comm = id;
    event.members = ref.members;
    event.value = static_cast<std::int64_t>(origin);
    const std::int64_t now = MonotonicNs() - origin_ns;
    event.wall_start_ns = event.wall_end_ns = now;
    Append(event);
  }
  return ref;
}

CommInfo& Runtime::Comm(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return world;
  if (comm == MPI_COMM_SELF) return self;
  if (comm == MPI_COMM_NULL) {
    // An erroneous call that MPI let return (MPI_ERRORS_RETURN): nothing to look up.
    static CommInfo null_comm;
    null_comm.id = kCommWorld;
    null_comm.members.clear();
    null_comm.peers.clear();
    return null_comm;
  }
  auto it = comms.find(comm);
  if (it != comms.end()) return *it->second;
  // Made by a call the tracer does not wrap (Comm_create_group, Intercomm_create, ...):
  // register it on first use. Its id agrees across ranks when they meet such communicators
  // in the same order.
  MPI_Group group;
  PMPI_Comm_group(comm, &group);
  const std::vector<std::int32_t> members = GroupToWorld(group);
  PMPI_Group_free(&group);
  const CommId base = DeriveCommId(~0ULL, 0, members);
  const std::uint64_t ordinal = unknown_comm_ordinals[base]++;
  return Register(comm, DeriveCommId(~0ULL, ordinal + 1, members), true, CommOrigin::kCreate,
                  kCommWorld);
}

RequestId Runtime::AddRequest(MPI_Request handle, const CommInfo& comm, bool is_recv) {
  const RequestId id = next_request++;
  if (handle != MPI_REQUEST_NULL) requests[handle].push_back(RequestInfo{id, &comm, is_recv});
  return id;
}

void Runtime::RemoveRequest(MPI_Request handle, RequestId id) {
  auto it = requests.find(handle);
  if (it == requests.end()) return;
  auto& infos = it->second;
  for (auto info = infos.begin(); info != infos.end(); ++info) {
    if (info->id == id) {
      infos.erase(info);
      break;
    }
  }
  if (infos.empty()) requests.erase(it);
}

void Runtime::EmitCollective(MPI_Request handle) noexcept {
  auto it = collectives.find(handle);
  if (it == collectives.end()) return;
  Event& e = it->second.event;
  e.wall_start_ns = e.wall_end_ns = completion_start_ns - origin_ns;
  Append(e);
  collectives.erase(it);
}

// ---------------------------------------------------------------------------------------
// CallScope.

CallScope::CallScope(Kind kind) noexcept : kind_(kind) {
  Runtime& rt = GetRuntime();
  if (t_in_call || rt.failed) return;
  if (kind == kInit) {
    if (rt.enabled || rt.finished) return;
    active_ = true;
    t_in_call = true;
    start_ns_ = MonotonicNs();
    return;
  }
  if (!rt.enabled || !t_owner) return;
  active_ = true;
  t_in_call = true;
  // Close the compute burst that ran since the last MPI call.
  start_ns_ = MonotonicNs();
  const std::int64_t burst_wall_ns = start_ns_ - rt.last_exit_wall_ns;
  const std::int64_t cpu_ns =
      burst_wall_ns < kCpuClockSkipNs ? rt.last_exit_cpu_ns + burst_wall_ns : ThreadCpuNs();
  rt.entry_cpu_ns = cpu_ns;
  long long counters[2] = {0, 0};
  if (rt.papi_eventset >= 0) rt.ReadCounters(counters);
  if (rt.pending_burst_start_ns < 0) rt.pending_burst_start_ns = rt.last_exit_wall_ns;
  rt.pending_burst_cpu_ns += cpu_ns - rt.last_exit_cpu_ns;
  if (rt.ins_slot >= 0) rt.pending_ins += counters[rt.ins_slot] - rt.last_counters[rt.ins_slot];
  if (rt.cyc_slot >= 0) rt.pending_cyc += counters[rt.cyc_slot] - rt.last_counters[rt.cyc_slot];
  if (rt.pending_burst_cpu_ns >= rt.min_burst_ns) {
    Event& burst = rt.compute_event;
    burst.kind = EventKind::kCompute;
    burst.wall_start_ns = rt.pending_burst_start_ns - rt.origin_ns;
    burst.wall_end_ns = start_ns_ - rt.origin_ns;
    burst.cpu_ns = rt.pending_burst_cpu_ns;
    burst.instructions = rt.ins_slot >= 0 ? rt.pending_ins : kNotMeasured;
    burst.cycles = rt.cyc_slot >= 0 ? rt.pending_cyc : kNotMeasured;
    rt.Append(burst);
    rt.pending_burst_cpu_ns = 0;
    rt.pending_burst_start_ns = -1;
    rt.pending_ins = rt.pending_cyc = 0;
  }
}

Event& CallScope::event() noexcept {
  Event& e = GetRuntime().call_event;
  e.kind = EventKind::kCompute;
  e.wall_start_ns = e.wall_end_ns = 0;
  e.cpu_ns = 0;
  e.instructions = e.cycles = kNotMeasured;
  e.comm = kCommWorld;
  e.peer = kNoRank;
  e.tag = 0;
  e.bytes = 0;
  e.request = 0;
  e.sync = false;
  e.recv_peer = kNoRank;
  e.recv_tag = 0;
  e.recv_bytes = 0;
  e.send_bytes = 0;
  e.send_counts.clear();
  e.recv_counts.clear();
  e.requests.clear();
  e.completed.clear();
  e.new_comm = 0;
  e.members.clear();
  e.value = 0;
  return e;
}

void CallScope::Fail() noexcept {
  GetRuntime().Fail("internal error while recording an MPI call");
  emit_ = false;
}

CallScope::~CallScope() {
  if (!active_) return;
  t_in_call = false;
  Runtime& rt = GetRuntime();
  if (!rt.enabled) return;
  const std::int64_t end_ns = MonotonicNs();
  if (emit_) {
    Event& e = rt.call_event;
    e.wall_start_ns = start_ns_ - rt.origin_ns;
    e.wall_end_ns = end_ns - rt.origin_ns;
    rt.Append(e);
  }
  rt.last_exit_wall_ns = end_ns;
  const std::int64_t call_wall_ns = end_ns - start_ns_;
  rt.last_exit_cpu_ns = kind_ == kCall && call_wall_ns < kCpuClockSkipNs
                            ? rt.entry_cpu_ns + call_wall_ns
                            : ThreadCpuNs();
  if (rt.papi_eventset >= 0) rt.ReadCounters(rt.last_counters);
}

// ---------------------------------------------------------------------------------------
// Scratch buffers (one set per slot; only the owner thread records, so no locking).

namespace {
template <class T>
T* Scratch(std::vector<T> (&slots)[4], int slot, int n) noexcept {
  if (slot < 0 || slot >= 4) return nullptr;
  const std::size_t need = n > 0 ? static_cast<std::size_t>(n) : 1;
  auto& v = slots[slot];
  if (v.size() < need) {
    try {
      v.resize(need);
    } catch (...) {
      GetRuntime().Fail("out of memory for a scratch buffer");
      return nullptr;
    }
  }
  return v.data();
}
std::vector<MPI_Status> g_c_statuses[4];
std::vector<MPI_Fint> g_f_statuses[4];
std::vector<MPI_Request> g_requests[4];
std::vector<int> g_ints[4];
}  // namespace

MPI_Status* ScratchCStatuses(int slot, int n) noexcept { return Scratch(g_c_statuses, slot, n); }
MPI_Fint* ScratchFStatuses(int slot, int n) noexcept {
  return Scratch(g_f_statuses, slot, (n > 0 ? n : 1) * kFortranStatusInts);
}
MPI_Request* ScratchRequests(int slot, int n) noexcept { return Scratch(g_requests, slot, n); }
int* ScratchInts(int slot, int n) noexcept { return Scratch(g_ints, slot, n); }

std::uint64_t TypeBytes(int count, MPI_Datatype type) noexcept {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

std::uint64_t StatusBytes(const MPI_Status& status) noexcept {
  int count = 0;
  if (PMPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) return 0;
  return static_cast<std::uint64_t>(count);
}

// ---------------------------------------------------------------------------------------
// Fortran helpers.

extern "C" {
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_in_place __attribute__((weak));
extern int mpi_fortran_in_place__ __attribute__((weak));
extern int MPI_FORTRAN_IN_PLACE __attribute__((weak));
}

void* FortranBuffer(void* buffer) noexcept {
  if (buffer == nullptr) return buffer;
  if (buffer == &mpi_fortran_in_place_ || buffer == &mpi_fortran_in_place ||
      buffer == &mpi_fortran_in_place__ || buffer == &MPI_FORTRAN_IN_PLACE) {
    return MPI_IN_PLACE;
  }
  return buffer;
}

bool IsFortranStatusIgnore(const MPI_Fint* status) noexcept {
  return status == MPI_F_STATUS_IGNORE;
}
bool IsFortranStatusesIgnore(const MPI_Fint* statuses) noexcept {
  return statuses == MPI_F_STATUSES_IGNORE;
}

void FortranStatusesToC(const MPI_Fint* fortran, MPI_Status* c, int n) noexcept {
  if (fortran == nullptr || c == nullptr) return;
  for (int i = 0; i < n; ++i) MPI_Status_f2c(fortran + i * kFortranStatusInts, c + i);
}

}  // namespace pas2p::tracer
