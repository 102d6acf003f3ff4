// The tracer's state inside the traced process, and CallScope, which every generated
// wrapper opens around its PMPI call.
//
// A wrapper's life: CallScope's constructor closes the compute burst that ran since the
// previous MPI call (thread CPU time, PAPI counters) and appends it; the hooks (hooks.h)
// fill the call's event; the destructor stamps its end time, appends it and notes the
// clocks at which the next burst starts. Only the thread that called MPI_Init records;
// every other case (before MPI_Init, after MPI_Finalize, nested calls, another thread, an
// internal failure) makes the scope inactive and the wrapper calls PMPI alone.
//
// Nothing here throws out of a wrapper, prints on stdout, or touches the application's
// buffers: the tracer runs inside someone else's program.
#pragma once

#include <mpi.h>

#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/core/trace.h"

namespace pas2p::tracer {

// ---------------------------------------------------------------------------------------
// Communicators: MPI handle -> id and world ranks.
struct CommInfo {
  CommId id = kCommWorld;
  std::vector<std::int32_t> members;  // world ranks of the (local) group, comm-rank order
  std::vector<std::int32_t> peers;    // world ranks that p2p ranks name (remote group for
                                      // inter-communicators, else == members)
  std::int32_t my_rank = 0;           // this process's rank in the communicator
  std::uint64_t children = 0;         // creation calls made on this communicator so far
  bool is_world = false;
};

// Translates a rank of `comm` (as passed to or returned by MPI) to a world rank or to
// kAnySource / kProcNull / kNoRank.
std::int32_t ToWorld(const CommInfo& comm, int rank);

// The id every member of a new communicator computes alike, without communication:
// FNV-1a of (parent id, ordinal of the creation call on the parent, members); never
// kCommWorld or kCommSelf.
CommId DeriveCommId(CommId parent, std::uint64_t ordinal, const std::vector<std::int32_t>& members);

// ---------------------------------------------------------------------------------------
struct RequestInfo {
  RequestId id = 0;
  const CommInfo* comm = nullptr;
  bool is_recv = false;
};

// What a persistent request does each time it is started (MPI_Send_init, MPI_Recv_init...).
struct PersistentInfo {
  const CommInfo* comm = nullptr;
  bool is_recv = false;
  bool sync = false;
  std::int32_t peer = kNoRank;  // world rank (or kAnySource / kProcNull)
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
};

// A message found by MPI_Mprobe/MPI_Improbe, until MPI_Mrecv/MPI_Imrecv receives it.
struct MatchedMessage {
  const CommInfo* comm = nullptr;
  std::int32_t source = kNoRank;  // world rank
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  bool wildcard = false;  // the probe was posted with MPI_ANY_SOURCE
};

// A message found by MPI_Probe/MPI_Iprobe posted with MPI_ANY_SOURCE, until a receive names
// its source: that receive is recorded as a wildcard one, since the probe chose its source
// (a master that probes for whichever worker is ready, then receives from it).
struct ProbedMessage {
  const CommInfo* comm = nullptr;
  std::int32_t source = kNoRank;  // world rank
  std::int32_t tag = 0;
};

// A request captured by a completion call before MPI released it.
struct PendingRequest {
  int index = 0;  // position in the array passed by the application
  RequestInfo info;
  MPI_Request handle = MPI_REQUEST_NULL;
};

struct Runtime {
  // Lifecycle.
  bool enabled = false;   // between MPI_Init and MPI_Finalize, and tracing works
  bool failed = false;    // an internal failure switched tracing off for good
  bool finished = false;  // MPI_Finalize or MPI_Abort seen
  bool verbose = false;   // PAS2P_VERBOSE=1
  int rank = 0;
  int nprocs = 0;
  std::string dir;          // trace directory
  std::string marker_path;  // rank-<N>.signal, written by the crash handler
  TraceMetadata metadata;

  RankStreamWriter writer;
  volatile std::sig_atomic_t in_writer = 0;  // an Append is in progress

  // Clocks: monotonic ns of the origin (end of MPI_Init), of the last exit from MPI.
  std::int64_t origin_ns = 0;
  std::int64_t last_exit_wall_ns = 0;
  std::int64_t last_exit_cpu_ns = 0;
  std::int64_t entry_cpu_ns = 0;          // thread CPU time when the current call began
  std::int64_t min_burst_ns = 0;          // bursts shorter than this merge into the next
  std::int64_t pending_burst_cpu_ns = 0;  // CPU time of merged bursts not yet written
  std::int64_t pending_burst_start_ns = -1;
  std::int64_t pending_ins = 0, pending_cyc = 0;

  // PAPI.
  int papi_eventset = -1;
  int ins_slot = -1, cyc_slot = -1;
  long long last_counters[2] = {0, 0};

  // Communicators.
  CommInfo world;
  CommInfo self;
  std::unordered_map<MPI_Comm, CommInfo*> comms;
  std::vector<std::unique_ptr<CommInfo>> comm_storage;  // never freed: requests point here
  std::unordered_map<CommId, std::uint64_t> unknown_comm_ordinals;
  std::unordered_map<CommId, std::uint64_t> create_group_ordinals;  // MPI_Comm_create_group
  MPI_Group world_group = MPI_GROUP_NULL;

  // Requests. Open MPI may hand out the same handle for several requests that completed
  // at once (small eager sends), so a handle maps to its requests in creation order.
  std::unordered_map<MPI_Request, std::vector<RequestInfo>> requests;
  std::unordered_map<MPI_Request, PersistentInfo> persistent;  // until MPI_Request_free
  std::unordered_map<MPI_Message, MatchedMessage> messages;    // probed, not yet received
  MatchedMessage pending_message;              // the message an MPI_(I)mrecv in progress receives
  std::vector<ProbedMessage> wildcard_probes;  // at most one per communicator, latest kept
  RequestId next_request = 1;
  std::vector<PendingRequest> pending;  // filled by the pre hooks of completions
  // Non-blocking collectives started and not completed yet, by request: each is recorded
  // (as its blocking collective) at the completion that finishes it. `order` keeps them in
  // the order they started, for those never completed (emitted at MPI_Finalize).
  struct StartedCollective {
    std::uint64_t order = 0;
    Event event;
  };
  std::unordered_map<MPI_Request, StartedCollective> collectives;
  std::uint64_t collectives_started = 0;
  std::vector<std::pair<int, MPI_Request>> pending_collectives;  // (array position, handle)
  std::int64_t completion_start_ns = 0;  // when the completion call in progress began
  // Appends the collective started with `handle` now, at the completion call's start.
  void EmitCollective(MPI_Request handle) noexcept;
  CommId pending_comm_free = 0;
  MPI_Comm pending_comm_handle = MPI_COMM_NULL;

  Event call_event;     // the event of the current call
  Event compute_event;  // the burst before it

  // Appends directly (for events emitted outside the scope's own: kInit, lazily found
  // communicators, kFinalize, kAbort).
  void Append(const Event& event) noexcept;
  // Switches tracing off after an internal problem; says why on stderr.
  void Fail(const char* what) noexcept;

  CommInfo& Comm(MPI_Comm comm);  // known or lazily registered (emits kCommCreate)
  // Registers a communicator made by a collective creation call on `parent`.
  CommInfo& Register(MPI_Comm handle, CommId id, bool record, CommOrigin origin, CommId parent);
  std::vector<std::int32_t> GroupToWorld(MPI_Group group);

  RequestId AddRequest(MPI_Request handle, const CommInfo& comm, bool is_recv);
  // Forgets request `id` of `handle` (it completed).
  void RemoveRequest(MPI_Request handle, RequestId id);

  void ReadCounters(long long* values) noexcept;
};

Runtime& GetRuntime() noexcept;

// MPI functions the tracer counts but does not trace (flag `count` in mpi_functions.txt:
// one-sided, MPI-IO, neighbourhood collectives). Their time stays in the compute around them;
// the counts, summed over the ranks, go into trace.json ("untraced_calls") so that the
// analysis can say what the model leaves out. Names and count are generated.
extern const char* const kUntracedNames[];
extern const int kUntracedCount;
inline constexpr int kMaxUntraced = 256;
void CountUntraced(int index) noexcept;
// This rank's counts, kUntracedCount of them.
const std::uint64_t* UntracedCounts() noexcept;

// Reading the thread's CPU clock is a system call (~0.45 us of CPU on this VM), the wall
// clock is not (~0.02 us). A descheduled thread is away for a time slice (ms), so an interval
// shorter than this did not lose the CPU: its CPU time is its wall time and the system call
// is skipped. Any interval that was descheduled is longer than this and reads the clock,
// which re-bases the estimate, so errors never accumulate. At 50 us a read costs at most
// ~1% of the interval it measures (at 10 us it was ~4.5%: bench/tracer_overhead.sh).
inline constexpr std::int64_t kCpuClockSkipNs = 50000;

std::int64_t MonotonicNs() noexcept;
std::int64_t ThreadCpuNs() noexcept;

class CallScope {
 public:
  enum Kind { kCall, kInit };
  explicit CallScope(Kind kind) noexcept;
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  bool active() const noexcept { return active_ && !GetRuntime().failed; }
  // The event of this call, reset; appended when the scope ends if Emit() was called.
  Event& event() noexcept;
  void Emit() noexcept { emit_ = true; }
  // Not appended when the scope ends after all (kept to be appended later).
  void Withhold() noexcept { emit_ = false; }
  // A hook threw: switch tracing off, the application goes on untraced.
  void Fail() noexcept;
  std::int64_t start_ns() const noexcept { return start_ns_; }

 private:
  bool active_ = false;
  bool emit_ = false;
  Kind kind_;
  std::int64_t start_ns_ = 0;
};

// Reusable buffers for arrays the wrappers substitute or convert (statuses the application
// ignores, Fortran handles). Never throw: nullptr (and tracing off) if memory runs out.
MPI_Status* ScratchCStatuses(int slot, int n) noexcept;
MPI_Fint* ScratchFStatuses(int slot, int n) noexcept;
MPI_Request* ScratchRequests(int slot, int n) noexcept;
int* ScratchInts(int slot, int n) noexcept;

// Bytes of `count` elements of `type` (0 if the type is invalid).
std::uint64_t TypeBytes(int count, MPI_Datatype type) noexcept;
// Bytes a completed receive brought, from its status.
std::uint64_t StatusBytes(const MPI_Status& status) noexcept;

}  // namespace pas2p::tracer
