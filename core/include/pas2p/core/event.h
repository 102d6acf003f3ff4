// The trace model: what one rank of an MPI run did, in program order.
//
// An Event is a plain value type that every module passes around. Ranks and peers are
// always *world* ranks (the tracer translates communicator-local ranks), so consumers
// never need to know communicator groups to match a send with its receive. Communicators
// are named by a 64-bit id that every member of the communicator agrees on
// (kCommWorld for MPI_COMM_WORLD); their membership is given by a kCommCreate event in
// every member's stream, before the communicator is first used.
//
// Times are nanoseconds. Wall times count from the rank's MPI_Init (so they are
// comparable across ranks of one node only approximately); compute bursts also carry the
// thread's CPU time, which is what later stages use, so a trace taken with more ranks
// than cores is still valid.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pas2p {

using CommId = std::uint64_t;
using RequestId = std::uint64_t;

inline constexpr CommId kCommWorld = 0;
inline constexpr CommId kCommSelf = 1;
inline constexpr std::int32_t kAnySource = -1;  // MPI_ANY_SOURCE as posted
inline constexpr std::int32_t kAnyTag = -1;     // MPI_ANY_TAG as posted
inline constexpr std::int32_t kProcNull = -2;   // MPI_PROC_NULL
inline constexpr std::int32_t kNoRank = -3;     // field not applicable
// Completion::peer of a receive that MPI_Cancel cancelled: nothing arrived (MPI_Test_cancelled).
inline constexpr std::int32_t kCancelled = -4;
inline constexpr std::int64_t kNotMeasured = -1;  // counter not available
// Tag of the point-to-point messages a neighbourhood collective (MPI_Neighbor_alltoall, ...)
// is recorded as: the tracer writes such a call as what the MPI standard defines it to be,
// an irecv from every source and an isend to every destination of the communicator's
// topology, completed by one waitall. Above any tag an application is likely to use (MPI
// guarantees tags up to 32767; Open MPI allows up to 2^31 - 1).
inline constexpr std::int32_t kNeighborTag = 2147480000;

enum class EventKind : std::uint8_t {
  // Lifecycle.
  kInit = 0,      // MPI_Init / MPI_Init_thread
  kFinalize = 1,  // MPI_Finalize
  kAbort = 2,     // MPI_Abort (value = error code); the stream ends after it
  // Computation between two MPI calls.
  kCompute = 3,
  // Point-to-point. peer/tag/bytes as posted; for blocking receives the actual source/tag.
  kSend = 4,      // MPI_Send, MPI_Ssend (sync = true), MPI_Bsend, MPI_Rsend
  kIsend = 5,     // MPI_Isend, MPI_Issend (sync = true), ...: request = new request id
  kRecv = 6,      // MPI_Recv: peer/tag/bytes: actual source, tag and bytes received;
                  // recv_peer = kAnySource when it was posted with MPI_ANY_SOURCE
  kIrecv = 7,     // MPI_Irecv: peer/tag as posted (may be kAnySource/kAnyTag)
  kSendrecv = 8,  // MPI_Sendrecv(_replace): send part in peer/tag/bytes, receive in recv_*
  // Completion of non-blocking requests. `requests` lists what was passed (MPI_REQUEST_NULL
  // entries dropped), `completed` what completed in this call (empty for a failed test).
  kWait = 9,
  kWaitall = 10,
  kWaitany = 11,
  kWaitsome = 12,
  kTest = 13,
  kTestall = 14,
  kTestany = 15,
  kTestsome = 16,
  // Collectives on `comm`. send_bytes/recv_bytes are the sizes of this rank's send and
  // receive buffers as the call's arguments describe them (count x type size, summed over
  // peers where the buffer holds one block per peer); an argument the call ignores on this
  // rank counts 0. So: bcast root send=buffer, others recv=buffer; gather send=own block,
  // root recv=C blocks; scatter root send=C blocks, all recv=own block; allgather send=own,
  // recv=C blocks; alltoall send=recv=C blocks; reduce send=buffer, root recv=buffer;
  // allreduce/scan/exscan send=recv=buffer; reduce_scatter send=all blocks, recv=own block;
  // barrier 0. The v-variants also give send_counts/recv_counts: bytes per peer, indexed by
  // rank in `comm` (only where the call reads that array on this rank).
  kBarrier = 17,
  kBcast = 18,
  kGather = 19,
  kGatherv = 20,
  kScatter = 21,
  kScatterv = 22,
  kAllgather = 23,
  kAllgatherv = 24,
  kAlltoall = 25,
  kAlltoallv = 26,
  kReduce = 27,
  kAllreduce = 28,
  kReduceScatter = 29,
  kScan = 30,
  kExscan = 31,
  // Communicator management: `new_comm` with `members` (world ranks in the new
  // communicator's rank order), created from `comm`. Dup, split, create, cart_create.
  kCommCreate = 32,
  kCommFree = 33,  // MPI_Comm_free of `comm`
};

inline constexpr int kEventKindCount = 34;

// Short lower-case name, as printed by `pas2p dump` ("send", "allreduce", ...).
std::string_view EventKindName(EventKind kind);
// Parses a name produced by EventKindName; returns false if unknown.
bool ParseEventKind(std::string_view name, EventKind* kind);

bool IsPointToPoint(EventKind kind);  // send, isend, recv, irecv, sendrecv
bool IsCompletion(EventKind kind);    // wait*, test*
bool IsCollective(EventKind kind);    // barrier .. exscan
// Collectives with a root (bcast, gather(v), scatter(v), reduce).
bool IsRooted(EventKind kind);

// How a communicator came to be (kCommCreate.value).
enum class CommOrigin : std::int32_t { kDup = 0, kSplit = 1, kCreate = 2, kCart = 3 };

// One completed request inside a completion call.
struct Completion {
  RequestId request = 0;
  // receives: actual source (world rank), or kCancelled when the receive was cancelled
  // (MPI_Cancel) and nothing arrived; sends: kNoRank
  std::int32_t peer = kNoRank;
  std::int32_t tag = kAnyTag;  // receives: actual tag
  std::uint64_t bytes = 0;     // receives: bytes actually received
  bool operator==(const Completion&) const = default;
};

struct Event {
  EventKind kind = EventKind::kCompute;

  // Wall-clock interval of the event, ns since this rank's MPI_Init returned
  // (kInit: start and end of MPI_Init itself, relative to its own end, so start <= 0).
  std::int64_t wall_start_ns = 0;
  std::int64_t wall_end_ns = 0;

  // kCompute: thread CPU time of the burst and hardware counters (kNotMeasured if absent).
  std::int64_t cpu_ns = 0;
  std::int64_t instructions = kNotMeasured;
  std::int64_t cycles = kNotMeasured;

  // Point-to-point and collectives.
  CommId comm = kCommWorld;
  std::int32_t peer = kNoRank;  // p2p: world rank of the partner; rooted collectives: root
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;  // p2p: bytes sent or received
  RequestId request = 0;    // kIsend/kIrecv: id of the new request (unique per rank)
  bool sync = false;        // synchronous send mode (ssend/issend)

  // kSendrecv: the receive half (recv_bytes is also the collectives' received total).
  std::int32_t recv_peer = kNoRank;
  std::int32_t recv_tag = 0;
  std::uint64_t recv_bytes = 0;

  // Collectives: bytes this rank sends and receives in total (send_bytes, recv_bytes).
  std::uint64_t send_bytes = 0;
  std::vector<std::uint64_t> send_counts;  // v-variants: bytes per peer (comm rank order)
  std::vector<std::uint64_t> recv_counts;

  // Completions.
  std::vector<RequestId> requests;    // requests passed to the call
  std::vector<Completion> completed;  // what completed (empty: a failed test)

  // kCommCreate.
  CommId new_comm = 0;
  std::vector<std::int32_t> members;  // world ranks, in new-communicator rank order

  // kInit: thread level; kAbort: error code; kCommCreate: CommOrigin; kFinalize: 0.
  std::int64_t value = 0;

  bool operator==(const Event&) const = default;

  // Back to Event{} in place, keeping the capacity of its lists: a reader that refills one
  // Event per record (the simulator reads every event of a rank into one) does not free and
  // reallocate a waitall's request list for every completion.
  void Clear();

  // Bytes this event moves out of this rank (p2p send side, collective send side).
  std::uint64_t SentBytes() const;
  // Bytes this event brings into this rank.
  std::uint64_t ReceivedBytes() const;
};

// One line, as `pas2p dump` prints it, e.g.
//   "send peer=1 tag=0 comm=0 bytes=8192 t=[1200,1350]".
std::string FormatEvent(const Event& event);

// Convenience constructors used by tests, generators and importers.
Event MakeCompute(std::int64_t cpu_ns, std::int64_t instructions = kNotMeasured,
                  std::int64_t cycles = kNotMeasured);
Event MakeSend(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, CommId comm = kCommWorld);
Event MakeRecv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, CommId comm = kCommWorld);
Event MakeIsend(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, RequestId request,
                CommId comm = kCommWorld);
Event MakeIrecv(std::int32_t peer, std::int32_t tag, std::uint64_t bytes, RequestId request,
                CommId comm = kCommWorld);
// MPI_Sendrecv: `bytes` to `peer` and `recv_bytes` from `recv_peer`, both with `tag`.
Event MakeSendrecv(std::int32_t peer, std::int32_t recv_peer, std::int32_t tag, std::uint64_t bytes,
                   std::uint64_t recv_bytes, CommId comm = kCommWorld);
Event MakeWaitall(std::vector<RequestId> requests);
Event MakeCollective(EventKind kind, std::uint64_t send_bytes, std::uint64_t recv_bytes,
                     std::int32_t root = kNoRank, CommId comm = kCommWorld);
// A communicator `made` from `parent` (MPI_Comm_dup, _split, _create, _cart_create) with
// `members` (world ranks in its rank order).
Event MakeCommCreate(CommId parent, CommId made, CommOrigin origin,
                     std::vector<std::int32_t> members);

}  // namespace pas2p
