// The discrete-event replay (see engine.h for the model).
//
// How it runs. Every rank is a small state machine over its own event stream. A rank runs
// until it must wait (for a message, a request, a collective) or until its clock passes
// the earliest pending event of another rank; then it is parked in the event queue, a
// 4-ary min-heap keyed by (time, insertion sequence) so that ties are resolved the same
// way on every run. Because a rank only acts when its clock is the global minimum, every
// message is matched and every network resource reserved in simulated-time order, which
// makes the link/bus booking of network.h exact.
//
// State kept per rank is small and fixed (Proc below); requests live in one pool of
// slots shared by all ranks; posted receives and unexpected messages are intrusive singly
// linked lists through those pools; trace request ids map to slots through one open-
// addressing hash table keyed by (rank, request id). Nothing grows with the trace length
// except the optional timeline.
//
// Non-blocking semantics (paper 003). A waitany/waitsome (and a successful testany/
// testsome) that completed k requests in the trace completes, in the simulation, the k
// requests that finish first; when they are not the traced ones, the ids are swapped so
// that the trace's later events about the request that is still pending now refer to the
// one that really is ("remapped"). A test that failed in the trace but whose request has
// completed in the simulation completes it there ("pre-drawn"); later completions of that
// id become no-ops. A test that succeeded in the trace waits for its request.
// SimOptions::deterministic turns all of this off and follows the traced completions (and
// the traced source of MPI_ANY_SOURCE receives).
#include "pas2p/simulator/engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "network.h"
#include "pas2p/core/error.h"
#include "pas2p/core/huge_pages.h"
#include "pas2p/simulator/collective_model.h"

namespace pas2p::sim {

std::string_view RankStateName(RankState state) {
  switch (state) {
    case RankState::kIdle:
      return "Idle";
    case RankState::kRunning:
      return "Running";
    case RankState::kWaitMessage:
      return "Waiting a message";
    case RankState::kBlockingSend:
      return "Blocking send";
    case RankState::kSynchronization:
      return "Synchronization";
    case RankState::kTestProbe:
      return "Test/Probe";
    case RankState::kWaitRequests:
      return "Wait/WaitAll";
    case RankState::kGroupCommunication:
      return "Group communication";
    case RankState::kSendReceive:
      return "Send/Receive";
  }
  return "Unknown";
}

namespace {

using Time = double;
constexpr Time kUnknown = std::numeric_limits<Time>::infinity();
constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kPredrawn = kNil - 1;  // hash value: completed early by a failed test

// ---------------------------------------------------------------------------------------
// Event queue: 4-ary min-heap of 16-byte entries (time, key), key = insertion sequence << 24
// | rank. The order is the 128-bit unsigned order of (time bits, key): simulated times are
// never negative, and the IEEE bits of non-negative doubles sort like their values, so a
// comparison is two integer compares without branches. The array is 64-byte aligned with
// the root at slot 3, so the four children of any entry (slots 4i + 4 .. 4i + 7) are one
// cache line: a pop reads one line per level.
//
// 64-byte aligned storage for the per-rank state, the request slots, the unexpected
// messages and the event queue; a million ranks' arrays in huge pages (huge_pages.h).
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(AllocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) { FreeLarge(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

__extension__ typedef unsigned __int128 U128;

class EventQueue {
 public:
  struct Entry {
    std::uint64_t key;
    std::uint64_t time_bits;  // high half of the sort key
  };
  static constexpr int kRankBits = 24;
  static constexpr std::size_t kRoot = 3;
  static constexpr std::size_t kArity = 4;

  EventQueue() { heap_.resize(kRoot); }
  bool empty() const { return heap_.size() == kRoot; }
  std::size_t size() const { return heap_.size() - kRoot; }
  Time top_time() const { return TimeOf(heap_[kRoot]); }
  const Entry& top() const { return heap_[kRoot]; }
  const Entry& at(std::size_t i) const { return heap_[kRoot + i]; }  // in heap order
  // Returns the sequence number of the new entry.
  std::uint64_t Push(Time time, int rank) {
    const std::uint64_t seq = ++seq_;
    const Entry e{(seq << kRankBits) | static_cast<std::uint64_t>(rank),
                  std::bit_cast<std::uint64_t>(time + 0.0)};  // + 0.0: no -0.0
    const U128 k = Key(e);
    std::size_t i = heap_.size() - kRoot;  // logical index
    heap_.push_back(e);
    Entry* h = heap_.data() + kRoot;
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!(k < Key(h[parent]))) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
    return seq;
  }
  Entry Pop() {
    Entry* h = heap_.data() + kRoot;
    const Entry top = h[0];
    const Entry last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size() - kRoot;
    if (n > 0) {
      const U128 lk = Key(last);
      std::size_t i = 0;
      for (;;) {
        const std::size_t first = kArity * i + 1;
        std::size_t best;
        U128 bk;
        if (first + 3 < n) {  // all four children: a branch-free tournament
          // Their children (the next level's candidates) are four adjacent cache lines:
          // start loading them before the comparisons decide which one is needed.
          if (kArity * first + 1 < n) {
            const char* g = reinterpret_cast<const char*>(h + kArity * first + 1);
            __builtin_prefetch(g);
            __builtin_prefetch(g + 64);
            __builtin_prefetch(g + 128);
            __builtin_prefetch(g + 192);
          }
          const U128 k0 = Key(h[first]), k1 = Key(h[first + 1]);
          const U128 k2 = Key(h[first + 2]), k3 = Key(h[first + 3]);
          const bool b01 = k1 < k0, b23 = k3 < k2;
          const U128 m01 = b01 ? k1 : k0, m23 = b23 ? k3 : k2;
          const std::size_t i01 = first + b01, i23 = first + 2 + b23;
          const bool b = m23 < m01;
          best = b ? i23 : i01;
          bk = b ? m23 : m01;
        } else if (first < n) {
          best = first;
          bk = Key(h[first]);
          for (std::size_t c = first + 1; c < n; ++c) {
            const U128 kc = Key(h[c]);
            if (kc < bk) {
              best = c;
              bk = kc;
            }
          }
        } else {
          break;
        }
        if (!(bk < lk)) break;
        h[i] = h[best];
        i = best;
      }
      h[i] = last;
    }
    return top;
  }
  static int RankOf(const Entry& e) { return static_cast<int>(e.key & ((1u << kRankBits) - 1)); }
  static std::uint64_t SeqOf(const Entry& e) { return e.key >> kRankBits; }
  static Time TimeOf(const Entry& e) { return std::bit_cast<Time>(e.time_bits); }

 private:
  static U128 Key(const Entry& e) { return (static_cast<U128>(e.time_bits) << 64) | e.key; }
  std::vector<Entry, CacheLineAllocator<Entry>> heap_;
  std::uint64_t seq_ = 0;
};

// ---------------------------------------------------------------------------------------
// (rank, trace request id) -> request slot. Open addressing, linear probing, backward-
// shift deletion.
class RequestMap {
 public:
  RequestMap() { Resize(1024); }
  std::uint32_t* Find(std::int32_t rank, RequestId id) {
    std::size_t i = Hash(rank, id) & mask_;
    for (;;) {
      Cell& c = cells_[i];
      if (c.value == kNil) return nullptr;
      if (c.rank == rank && c.id == id) return &c.value;
      i = (i + 1) & mask_;
    }
  }
  // False if the key is already present.
  bool Insert(std::int32_t rank, RequestId id, std::uint32_t value) {
    if ((size_ + 1) * 4 > cells_.size() * 3) Resize(cells_.size() * 2);
    std::size_t i = Hash(rank, id) & mask_;
    for (;;) {
      Cell& c = cells_[i];
      if (c.value == kNil) {
        c = Cell{id, rank, value};
        ++size_;
        return true;
      }
      if (c.rank == rank && c.id == id) return false;
      i = (i + 1) & mask_;
    }
  }
  void Erase(std::int32_t rank, RequestId id) {
    std::size_t i = Hash(rank, id) & mask_;
    for (;;) {
      Cell& c = cells_[i];
      if (c.value == kNil) return;
      if (c.rank == rank && c.id == id) break;
      i = (i + 1) & mask_;
    }
    // Backward shift: move later cells of the probe chain into the hole.
    std::size_t hole = i;
    std::size_t j = i;
    for (;;) {
      j = (j + 1) & mask_;
      Cell& c = cells_[j];
      if (c.value == kNil) break;
      const std::size_t home = Hash(c.rank, c.id) & mask_;
      // Can c move to hole? Only if its home is not cyclically in (hole, j].
      const bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!in_range) {
        cells_[hole] = c;
        hole = j;
      }
    }
    cells_[hole].value = kNil;
    --size_;
  }

 private:
  struct Cell {
    RequestId id = 0;
    std::int32_t rank = 0;
    std::uint32_t value = kNil;
  };
  static std::size_t Hash(std::int32_t rank, RequestId id) {
    std::uint64_t h =
        id * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(rank) + 0x632BE59BD9B4E019ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return static_cast<std::size_t>(h);
  }
  void Resize(std::size_t n) {
    std::vector<Cell> old = std::move(cells_);
    cells_.assign(n, Cell{});
    mask_ = n - 1;
    size_ = 0;
    for (const Cell& c : old)
      if (c.value != kNil) Insert(c.rank, c.id, c.value);
  }
  std::vector<Cell> cells_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------------------
// Compact form of one trace event.
enum class OpKind : std::uint8_t {
  kNop,
  kCompute,
  kSend,
  kIsend,
  kRecv,
  kIrecv,
  kSendrecv,
  kWaitAll,   // wait, waitall, and successful test/testall
  kWaitSome,  // waitany, waitsome, successful testany/testsome
  kTestFail,  // any test* that completed nothing in the trace
  kCollective,
  kCommCreate,
  kEnd,  // finalize, abort: the stream ends here
};

struct Op {
  OpKind kind = OpKind::kNop;
  EventKind call = EventKind::kCompute;
  bool sync = false;
  std::int32_t peer = kNoRank;
  std::int32_t tag = 0;
  std::int32_t recv_peer = kNoRank;
  std::int32_t recv_tag = 0;
  CommId comm = kCommWorld;
  std::uint64_t bytes = 0;
  std::uint64_t recv_bytes = 0;
  union {
    RequestId request = 0;  // isend, irecv
    Time seconds;           // compute
  };
  std::uint64_t index = 0;  // position of the event in the rank's stream
};
static_assert(sizeof(Op) == 64);

// A converted event kept for later (deterministic wildcard look-ahead).
struct PendingOp {
  Op op;
  std::vector<RequestId> requests;
  std::vector<Completion> completed;
  Event new_comm;  // kCommCreate only
};

// One request (trace or internal). Receives carry their matching envelope while posted.
// One cache line, aligned in the pool: matching a message walks the partner's posted
// receives, one slot each, and with a million ranks every one is a cache miss. (When it was
// posted is kept apart, Engine::slot_posted_, only for the timeline.)
struct alignas(64) Slot {
  Time complete = kUnknown;   // when the request completes (known once matched)
  Time requested = kUnknown;  // when its transfer was requested (for the wait/comm split)
  RequestId trace_id = 0;
  CommId comm = kCommWorld;
  std::int32_t owner = 0;
  std::int32_t peer = kNoRank;  // send: destination; receive: source as posted
  std::int32_t tag = 0;
  std::uint32_t next = kNil;  // posted-receive list link
  std::uint64_t bytes = 0;
  std::uint64_t event_index : 61 = 0;  // a rank's events never reach 2^61
  std::uint64_t is_recv : 1 = 0;
  std::uint64_t traced : 1 = 0;    // has an entry in the request map
  std::uint64_t wildcard : 1 = 0;  // a receive posted with MPI_ANY_SOURCE
};
static_assert(sizeof(Slot) == 64);

// A message sent before its receive was posted.
struct Message {
  Time arrival = kUnknown;  // eager: known; rendezvous: unknown until matched
  Time send_posted = 0.0;
  Time transfer_start = 0.0;
  Time requested = 0.0;
  CommId comm = kCommWorld;
  std::uint64_t bytes = 0;
  std::uint64_t event_index = 0;
  std::int32_t source = 0;
  std::int32_t tag = 0;
  std::uint32_t sender_slot = kNil;  // rendezvous: the sender's request
  std::uint32_t next = kNil;
  bool rendezvous = false;
};

enum class Status : std::uint8_t { kRunnable, kBlocked, kDone };
enum class WaitMode : std::uint8_t { kAll, kSome, kCollective };

// The wait list of a blocked rank (slot indices): up to kInline inline, longer lists in
// one of the engine's shared spill vectors (returned when the list is cleared).
struct SlotList {
  static constexpr std::uint32_t kInline = 4;
  std::uint32_t size = 0;
  std::uint32_t spill = kNil;  // index into Engine::spills_, or kNil
  std::array<std::uint32_t, kInline> inline_slots{};
};

// Per-rank state touched while the rank runs: 256 bytes, four cache lines, and no pointer
// to rank-private memory except the trace reader. Line 1 is what a partner touches to
// match a message and wake the rank, line 2 reading its next event, line 3 that event,
// line 4 its live requests. Everything rarer (collective progress, read-ahead of
// deterministic wildcards) is in ProcCold.
struct alignas(64) Proc {
  // Line 1.
  Time now = 0.0;
  Time blocked_since = 0.0;
  double communication_s = 0.0;
  double wait_s = 0.0;
  std::uint32_t posted_head = kNil, posted_tail = kNil;
  std::uint32_t unexpected_head = kNil, unexpected_tail = kNil;
  Status status = Status::kRunnable;
  WaitMode mode = WaitMode::kAll;
  bool exhausted = false;
  bool op_loaded = false;            // `op` is read (and prepared) but not started yet
  std::uint32_t wait_count = 0;      // kSome: how many to complete
  std::uint32_t candidates = 0;      // kSome: how many of `slots` are candidates
  std::uint8_t inline_requests = 0;  // live trace requests in line 4
  bool has_lookahead = false;        // ProcCold::lookahead exists
  // Line 2.
  // kAll: slots to wait for. kSome: the candidate slots, then the traced completed slots.
  SlotList slots;
  std::uint64_t wake_seq = 0;  // sequence of the valid queue entry (0 = none)
  std::uint64_t next_index = 0;
  std::unique_ptr<RankEventSource> source;
  double compute_s = 0.0;
  std::uint64_t messages = 0;
  // Line 3.
  Op op;
  // Line 4. The rank's live trace requests: the first few inline, the rest in the engine's
  // map.
  static constexpr int kInlineRequests = 4;
  std::uint32_t overflow_requests = 0;
  std::array<std::uint32_t, kInlineRequests> request_slots{};
  std::int32_t node = 0;  // where the machine placed the rank
  std::array<RequestId, kInlineRequests> request_ids{};
  std::uint64_t bytes = 0;
};
static_assert(sizeof(Proc) == 256);
static_assert(offsetof(Proc, slots) == 64 && offsetof(Proc, op) == 128 &&
              offsetof(Proc, overflow_requests) == 192);

// Per-rank state used on collectives, waitany/waitsome re-scheduling and deterministic
// wildcards only.
struct ProcCold {
  Time wake_time = kUnknown;
  Time coll_arrival = 0.0;
  Time coll_last_arrival = 0.0;
  Time coll_end = kUnknown;
  std::uint32_t coll_comm = kNil;
  std::unique_ptr<std::deque<PendingOp>> lookahead;  // deterministic wildcards only
};

struct CommState {
  CommId id = kCommWorld;
  int size = 0;
  bool multi_node = false;
  // The collective in progress.
  EventKind kind = EventKind::kBarrier;
  std::int32_t root = kNoRank;
  std::int32_t first_rank = 0;
  std::uint64_t first_index = 0;
  int arrived = 0;
  Time last_arrival = 0.0;
  std::uint64_t max_sent = 0;
  std::uint64_t max_received = 0;
  std::vector<std::int32_t> waiting;
};

std::string CommName(CommId comm) {
  if (comm == kCommWorld) return "MPI_COMM_WORLD";
  if (comm == kCommSelf) return "MPI_COMM_SELF";
  return "comm " + std::to_string(comm);
}

std::string PeerName(std::int32_t peer) {
  if (peer == kAnySource) return "any source";
  return "rank " + std::to_string(peer);
}

std::string TagName(std::int32_t tag) {
  return tag == kAnyTag ? std::string("any tag") : "tag " + std::to_string(tag);
}

// ---------------------------------------------------------------------------------------
class Engine {
 public:
  Engine(const TraceSource& trace, const Machine& machine, const SimOptions& options);
  SimResult Run();

 private:
  // Reading and converting.
  bool ReadEvent(Proc& r, int rank, Event* event);
  bool LoadNext(Proc& r, int rank);
  void Prepare(Proc& r, int rank, const std::vector<RequestId>& requests,
               const std::vector<Completion>& completed, const Event& event);
  void RegisterComm(int rank, const Op& op, const Event& e);
  void Advance(Proc& r, int rank);
  std::uint32_t* FindRequest(Proc& r, int rank, RequestId id);
  bool InsertRequest(Proc& r, int rank, RequestId id, std::uint32_t slot);
  void EraseRequest(Proc& r, int rank, RequestId id);
  void Convert(const Event& e, int rank, std::uint64_t index, Op* op);
  [[noreturn]] void Fail(int rank, const Op& op, const std::string& what) const;
  void CheckPeer(int rank, const Op& op, std::int32_t peer, bool may_be_any) const;
  void CheckComm(int rank, const Op& op, CommId comm);
  std::uint32_t CommIndex(int rank, const Op& op, CommId comm);
  void ResolveWildcard(Proc& r, int rank);

  // Running.
  void RunRank(int rank);
  bool Start(Proc& r, int rank);  // true if the rank must wait
  bool Evaluate(Proc& r, Time* ready);
  void Complete(Proc& r, int rank, Time ready);
  void Notify(int rank);
  void Schedule(Proc& r, int rank, Time t);
  void Finish(Proc& r, int rank);

  // Requests and matching.
  std::uint32_t NewSlot(int rank, const Op& op, bool is_recv);
  void FreeSlot(std::uint32_t s);
  // SimOptions::on_wildcard_receive for slot `s` of `rank` if it is a completed wildcard receive.
  void ReportWildcard(int rank, std::uint32_t s) const;
  void PostSend(int rank, std::uint32_t s, bool sync);
  void PostRecv(int rank, std::uint32_t s);
  void MatchRendezvous(std::uint32_t send_slot, std::uint32_t recv_slot, Time now,
                       Time send_posted);
  void RecordMessage(int src, int dst, std::int32_t tag, std::uint64_t bytes, Time send_posted,
                     Time transfer_start, Time recv_posted, Time arrival);
  void CheckTruncation(const Slot& rv, int src, int dst, std::uint64_t bytes);
  std::uint32_t Resolve(int rank, const Op& op, RequestId id, bool* predrawn);
  void StartWaitAll(Proc& r, int rank, const Op& op, const std::vector<RequestId>& ids);
  void StartWaitSome(Proc& r, int rank, const Op& op, const std::vector<RequestId>& ids,
                     const std::vector<Completion>& done);
  void TestFail(Proc& r, int rank, const Op& op);
  bool StartCollective(Proc& r, int rank, const Op& op);
  void AddInterval(int rank, RankState state, EventKind call, Time begin, Time end);

  // Wait lists (Proc::slots). A span is invalidated by PushSlot and ClearSlots.
  std::span<std::uint32_t> Slots(Proc& r) {
    std::uint32_t* data =
        r.slots.spill == kNil ? r.slots.inline_slots.data() : spills_[r.slots.spill].data();
    return {data, r.slots.size};
  }
  void PushSlot(Proc& r, std::uint32_t s);
  // When slot s was posted (SimOptions::record_timeline; 0 without it).
  Time PostedAt(std::uint32_t s) const { return s < slot_posted_.size() ? slot_posted_[s] : 0.0; }
  // Starts loading a rank's state into the cache (it is touched a little later).
  void PrefetchProc(int rank) const {
    const char* p = reinterpret_cast<const char*>(&ranks_[rank]);
    for (std::size_t line = 0; line < sizeof(Proc); line += 64) __builtin_prefetch(p + line);
  }
  // Starts loading the first lines of a rank's trace reader, where a reader keeps what
  // nearly every event reads (the synthesizer's does); beyond a smaller reader's end, a
  // prefetch is only wasted.
  static void PrefetchReader(const RankEventSource* source) {
    static constexpr std::size_t kReaderLines = 4;
    const char* p = reinterpret_cast<const char*>(source);
    for (std::size_t line = 0; line < kReaderLines; ++line) __builtin_prefetch(p + 64 * line);
  }
  ProcCold& Cold(const Proc& r) { return cold_[static_cast<std::size_t>(&r - ranks_.data())]; }
  void ClearSlots(Proc& r);

  // Reports.
  [[noreturn]] void ReportDeadlock();
  void CheckUnmatched();
  std::string DescribeBlocked(int rank);

  const TraceSource& trace_;
  const Machine& machine_;
  SimOptions options_;
  int nprocs_ = 0;
  int nodes_ = 0;
  std::vector<Proc, CacheLineAllocator<Proc>> ranks_;
  std::vector<ProcCold, CacheLineAllocator<ProcCold>> cold_;
  std::vector<std::vector<std::uint32_t>> spills_;  // long wait lists
  std::vector<std::uint32_t> free_spills_;
  std::unique_ptr<internal::Network> network_;
  EventQueue queue_;
  RequestMap requests_;
  std::vector<Slot, CacheLineAllocator<Slot>> slots_;
  std::vector<Time> slot_posted_;  // SimOptions::record_timeline: when each slot was posted
  std::vector<std::uint32_t> free_slots_;
  std::vector<Message, CacheLineAllocator<Message>> messages_;
  std::vector<std::uint32_t> free_messages_;
  CommTable comm_table_;
  std::unordered_map<CommId, std::uint32_t> comm_index_;
  std::vector<CommState> comms_;
  Event scratch_;
  Event ahead_event_;
  PendingOp current_pending_;
  std::vector<std::int32_t> seen_sources_;
  std::vector<std::pair<Time, std::uint32_t>> order_;
  std::vector<MessageRecord> message_records_;
  std::vector<std::int32_t> wake_list_;
  Time now_ = 0.0;
  int finished_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t next_progress_ = 0;
  SimResult result_;
  std::vector<CollectiveTotals> coll_totals_;
  std::vector<std::vector<StateInterval>> intervals_;  // per rank, when recording
};

Engine::Engine(const TraceSource& trace, const Machine& machine, const SimOptions& options)
    : trace_(trace),
      machine_(machine),
      options_(options),
      nprocs_(trace.nprocs()),
      comm_table_(std::max(trace.nprocs(), 1)) {
  if (nprocs_ <= 0)
    throw TraceError(trace_.description() +
                     ": the trace has no ranks (nprocs = " + std::to_string(nprocs_) + ")");
  static_assert(kMaxRanks == (std::int64_t{1} << EventQueue::kRankBits) - 1);
  if (nprocs_ > kMaxRanks)
    throw UserError(trace_.description() + ": " + std::to_string(nprocs_) +
                    " ranks; the simulator handles at most " + std::to_string(kMaxRanks));
  std::string error;
  if (!machine_.IsValidFor(nprocs_, &error))
    throw UserError("machine \"" + machine_.name + "\": " + error);
  nodes_ = machine_.NodeCount(nprocs_);
  std::vector<int> node_of(nprocs_);
  ranks_.resize(nprocs_);
  cold_.resize(nprocs_);
  int max_node = 0;
  for (int r = 0; r < nprocs_; ++r) {
    node_of[r] = machine_.NodeOf(r, nprocs_);
    ranks_[r].node = node_of[r];
    max_node = std::max(max_node, node_of[r]);
  }
  nodes_ = std::max(nodes_, max_node + 1);
  network_ = std::make_unique<internal::Network>(machine_, node_of, nodes_);
  CommState world;
  world.id = kCommWorld;
  world.size = nprocs_;
  world.multi_node =
      std::any_of(node_of.begin(), node_of.end(), [&](int n) { return n != node_of[0]; });
  comm_index_[kCommWorld] = 0;
  comms_.push_back(std::move(world));
  coll_totals_.resize(kEventKindCount);
  for (int k = 0; k < kEventKindCount; ++k) coll_totals_[k].kind = static_cast<EventKind>(k);
  if (options_.record_timeline) intervals_.resize(nprocs_);
  next_progress_ = options_.progress_every_events;
}

void Engine::Fail(int rank, const Op& op, const std::string& what) const {
  throw SimulationError(trace_.description() + ": rank " + std::to_string(rank) + ", event #" +
                        std::to_string(op.index) + " (" + std::string(EventKindName(op.call)) +
                        "): " + what);
}

void Engine::CheckPeer(int rank, const Op& op, std::int32_t peer, bool may_be_any) const {
  if (peer == kProcNull) return;
  if (peer == kAnySource && may_be_any) return;
  if (peer < 0 || peer >= nprocs_)
    Fail(rank, op,
         "peer rank " + std::to_string(peer) + " is outside the run (ranks 0.." +
             std::to_string(nprocs_ - 1) + ")");
}

std::uint32_t Engine::CommIndex(int rank, const Op& op, CommId comm) {
  auto it = comm_index_.find(comm);
  if (it == comm_index_.end())
    Fail(rank, op,
         "unknown communicator " + std::to_string(comm) +
             " (this rank's stream has no comm_create for it before this event)");
  return it->second;
}

void Engine::CheckComm(int rank, const Op& op, CommId comm) {
  if (comm == kCommWorld || comm == kCommSelf) return;
  CommIndex(rank, op, comm);
}

// ---------------------------------------------------------------------------------------
// Reading.

bool Engine::ReadEvent(Proc& r, int rank, Event* event) {
  if (r.exhausted) return false;
  if (!r.source) r.source = trace_.OpenRank(rank);
  if (r.source->Next(event)) return true;
  const StreamStatus status = r.source->status();
  if (status == StreamStatus::kTruncated || status == StreamStatus::kCorrupt)
    throw TraceError(trace_.description() + ": rank " + std::to_string(rank) +
                     ": the stream ends early (" + r.source->message() +
                     "); the simulation needs every rank's complete stream");
  r.exhausted = true;
  r.source.reset();
  return false;
}

void Engine::Convert(const Event& e, int rank, std::uint64_t index, Op* out) {
  Op& op = *out;
  op = Op{};
  op.call = e.kind;
  op.index = index;
  op.comm = e.comm;
  switch (e.kind) {
    case EventKind::kInit:
    case EventKind::kFinalize:
    case EventKind::kCommFree:
      op.kind = OpKind::kNop;
      break;
    case EventKind::kAbort:
      op.kind = OpKind::kEnd;
      break;
    case EventKind::kCompute:
      op.kind = OpKind::kCompute;
      if (e.instructions >= 0 && machine_.instructions_per_second > 0.0) {
        op.seconds = static_cast<double>(e.instructions) / machine_.instructions_per_second;
      } else {
        if (e.cpu_ns < 0) Fail(rank, op, "negative cpu_ns " + std::to_string(e.cpu_ns));
        op.seconds = static_cast<double>(e.cpu_ns) * 1e-9 * machine_.cpu_ratio;
      }
      break;
    case EventKind::kSend:
    case EventKind::kIsend:
      op.kind = e.kind == EventKind::kSend ? OpKind::kSend : OpKind::kIsend;
      op.peer = e.peer;
      op.tag = e.tag;
      op.bytes = e.bytes;
      op.request = e.request;
      op.sync = e.sync;
      CheckPeer(rank, op, op.peer, false);
      break;
    case EventKind::kRecv:
    case EventKind::kIrecv:
      op.kind = e.kind == EventKind::kRecv ? OpKind::kRecv : OpKind::kIrecv;
      op.peer = e.peer;
      op.tag = e.tag;
      op.bytes = e.bytes;
      op.request = e.request;
      CheckPeer(rank, op, op.peer, true);
      break;
    case EventKind::kSendrecv:
      op.kind = OpKind::kSendrecv;
      op.peer = e.peer;
      op.tag = e.tag;
      op.bytes = e.bytes;
      op.recv_peer = e.recv_peer;
      op.recv_tag = e.recv_tag;
      op.recv_bytes = e.recv_bytes;
      CheckPeer(rank, op, op.peer, false);
      CheckPeer(rank, op, op.recv_peer, true);
      break;
    case EventKind::kWait:
    case EventKind::kWaitall:
      op.kind = OpKind::kWaitAll;
      break;
    case EventKind::kWaitany:
    case EventKind::kWaitsome:
      op.kind = e.completed.empty() ? OpKind::kNop : OpKind::kWaitSome;
      break;
    case EventKind::kTest:
    case EventKind::kTestall:
      op.kind = e.completed.empty() ? OpKind::kTestFail : OpKind::kWaitAll;
      break;
    case EventKind::kTestany:
    case EventKind::kTestsome:
      op.kind = e.completed.empty() ? OpKind::kTestFail : OpKind::kWaitSome;
      break;
    case EventKind::kCommCreate:
      op.kind = OpKind::kCommCreate;
      break;
    default:
      if (IsCollective(e.kind)) {
        op.kind = OpKind::kCollective;
        op.peer = e.peer;
        op.bytes = e.send_bytes;
        op.recv_bytes = e.recv_bytes;
        if (IsRooted(e.kind)) CheckPeer(rank, op, op.peer, false);
      } else {
        Fail(rank, op, "event kind the simulator does not know");
      }
      break;
  }
}

bool Engine::LoadNext(Proc& r, int rank) {
  Op& op = r.op;
  if (r.has_lookahead && !cold_[rank].lookahead->empty()) {
    current_pending_ = std::move(cold_[rank].lookahead->front());
    cold_[rank].lookahead->pop_front();
    op = current_pending_.op;
    Prepare(r, rank, current_pending_.requests, current_pending_.completed,
            current_pending_.new_comm);
  } else {
    if (!ReadEvent(r, rank, &scratch_)) return false;
    Convert(scratch_, rank, r.next_index++, &op);
    Prepare(r, rank, scratch_.requests, scratch_.completed, scratch_);
  }
  ++events_;
  if (options_.progress && events_ >= next_progress_) {
    next_progress_ += std::max<std::uint64_t>(options_.progress_every_events, 1);
    options_.progress(SimProgress{events_, now_, finished_, nprocs_});
  }
  return op.kind != OpKind::kEnd;
}

// Deterministic mode: the traced source (and tag) of a wildcard irecv is in the completion
// that finished it, later in the stream; read ahead to it.
void Engine::ResolveWildcard(Proc& r, int rank) {
  Op& op = r.op;
  auto try_take = [&](const std::vector<Completion>& done) {
    for (const Completion& c : done) {
      if (c.request != op.request) continue;
      if (c.peer >= 0 && c.peer < nprocs_) {
        if (op.peer == kAnySource) op.peer = c.peer;
        if (op.tag == kAnyTag) op.tag = c.tag;
      }
      return true;
    }
    return false;
  };
  if (!r.has_lookahead) {
    cold_[rank].lookahead = std::make_unique<std::deque<PendingOp>>();
    r.has_lookahead = true;
  }
  for (const PendingOp& p : *cold_[rank].lookahead)
    if (try_take(p.completed)) return;
  std::uint64_t read = cold_[rank].lookahead->size();
  while (true) {
    if (read >= options_.max_lookahead_events)
      Fail(rank, op,
           "deterministic mode: the completion of wildcard receive request " +
               std::to_string(op.request) + " is more than " +
               std::to_string(options_.max_lookahead_events) +
               " events ahead; run without --deterministic");
    if (!ReadEvent(r, rank, &ahead_event_)) return;  // never completed: stays a wildcard
    PendingOp p;
    Convert(ahead_event_, rank, r.next_index++, &p.op);
    p.requests = ahead_event_.requests;
    p.completed = ahead_event_.completed;
    if (ahead_event_.kind == EventKind::kCommCreate) p.new_comm = ahead_event_;
    const bool found = try_take(p.completed);
    cold_[rank].lookahead->push_back(std::move(p));
    ++read;
    if (found) return;
  }
}

// ---------------------------------------------------------------------------------------
// Requests and matching.

std::uint32_t Engine::NewSlot(int rank, const Op& op, bool is_recv) {
  std::uint32_t s;
  if (!free_slots_.empty()) {
    s = free_slots_.back();
    free_slots_.pop_back();
  } else {
    s = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& sl = slots_[s];
  sl = Slot{};
  sl.owner = rank;
  if (options_.record_timeline) {
    if (slot_posted_.size() <= s) slot_posted_.resize(slots_.size());
    slot_posted_[s] = now_;
  }
  sl.comm = op.comm;
  sl.event_index = op.index;
  sl.is_recv = is_recv;
  if (op.kind == OpKind::kSendrecv && is_recv) {
    sl.peer = op.recv_peer;
    sl.tag = op.recv_tag;
    sl.bytes = op.recv_bytes;
  } else {
    sl.peer = op.peer;
    sl.tag = op.tag;
    sl.bytes = op.bytes;
  }
  sl.trace_id = op.request;
  sl.wildcard = is_recv && sl.peer == kAnySource;
  return s;
}

void Engine::FreeSlot(std::uint32_t s) { free_slots_.push_back(s); }

void Engine::ReportWildcard(int rank, std::uint32_t s) const {
  const Slot& sl = slots_[s];
  if (sl.wildcard && sl.peer >= 0 && options_.on_wildcard_receive) {
    options_.on_wildcard_receive(rank, sl.peer);
  }
}

void Engine::PushSlot(Proc& r, std::uint32_t s) {
  SlotList& l = r.slots;
  if (l.spill == kNil) {
    if (l.size < SlotList::kInline) {
      l.inline_slots[l.size++] = s;
      return;
    }
    if (free_spills_.empty()) {
      l.spill = static_cast<std::uint32_t>(spills_.size());
      spills_.emplace_back();
    } else {
      l.spill = free_spills_.back();
      free_spills_.pop_back();
    }
    spills_[l.spill].assign(l.inline_slots.begin(), l.inline_slots.begin() + l.size);
  }
  spills_[l.spill].push_back(s);
  ++l.size;
}

void Engine::ClearSlots(Proc& r) {
  if (r.slots.spill != kNil) {
    spills_[r.slots.spill].clear();
    free_spills_.push_back(r.slots.spill);
    r.slots.spill = kNil;
  }
  r.slots.size = 0;
}

void Engine::RecordMessage(int src, int dst, std::int32_t tag, std::uint64_t bytes,
                           Time send_posted, Time transfer_start, Time recv_posted, Time arrival) {
  if (!options_.record_timeline) return;
  message_records_.push_back(
      MessageRecord{src, dst, tag, bytes, send_posted, transfer_start, recv_posted, arrival});
}

void Engine::CheckTruncation(const Slot& rv, int src, int dst, std::uint64_t bytes) {
  // A wildcard receive records the message it got in the traced run, which the simulation
  // may hand another one: only receives that name their source and tag are checked.
  if (rv.bytes >= bytes || rv.wildcard || rv.tag == kAnyTag) return;
  if (result_.truncated_receives++ == 0) {
    result_.first_truncated_receive =
        "rank " + std::to_string(dst) + ", event #" + std::to_string(rv.event_index) +
        ": a receive of " + std::to_string(rv.bytes) + " bytes got a message of " +
        std::to_string(bytes) + " bytes from rank " + std::to_string(src);
  }
}

void Engine::PostSend(int rank, std::uint32_t s, bool sync) {
  const int dst = slots_[s].peer;
  PrefetchProc(dst);
  const std::int32_t tag = slots_[s].tag;
  const CommId comm = slots_[s].comm;
  const std::uint64_t bytes = slots_[s].bytes;
  const bool eager = !sync && bytes <= machine_.eager_threshold_bytes;
  Proc& me = ranks_[rank];
  ++me.messages;
  me.bytes += bytes;
  ++result_.messages;
  result_.bytes += bytes;
  Proc& d = ranks_[dst];
  std::uint32_t prev = kNil;
  std::uint32_t cur = d.posted_head;
  while (cur != kNil) {
    const Slot& rv = slots_[cur];
    if (rv.comm == comm && (rv.peer == rank || rv.peer == kAnySource) &&
        (rv.tag == tag || rv.tag == kAnyTag))
      break;
    prev = cur;
    cur = rv.next;
  }
  if (cur != kNil) {
    if (d.source) PrefetchReader(d.source.get());  // Notify below will read on
    Slot& rv = slots_[cur];
    if (prev == kNil)
      d.posted_head = rv.next;
    else
      slots_[prev].next = rv.next;
    if (d.posted_tail == cur) d.posted_tail = prev;
    rv.next = kNil;
    CheckTruncation(rv, rank, dst, bytes);
    const internal::Transfer t = network_->ReserveNodes(me.node, d.node, bytes, now_);
    rv.complete = t.arrival_s;
    rv.requested = now_;
    rv.peer = rank;
    rv.tag = tag;
    Slot& sl = slots_[s];
    sl.complete = eager ? now_ : t.arrival_s;
    sl.requested = now_;
    RecordMessage(rank, dst, tag, bytes, now_, t.start_s, PostedAt(cur), t.arrival_s);
    Notify(dst);
    return;
  }
  std::uint32_t m;
  if (!free_messages_.empty()) {
    m = free_messages_.back();
    free_messages_.pop_back();
  } else {
    m = static_cast<std::uint32_t>(messages_.size());
    messages_.emplace_back();
  }
  Message& msg = messages_[m];
  msg = Message{};
  msg.source = rank;
  msg.tag = tag;
  msg.comm = comm;
  msg.bytes = bytes;
  msg.send_posted = now_;
  msg.event_index = slots_[s].event_index;
  if (eager) {
    const internal::Transfer t = network_->ReserveNodes(me.node, d.node, bytes, now_);
    msg.arrival = t.arrival_s;
    msg.transfer_start = t.start_s;
    msg.requested = now_;
    slots_[s].complete = now_;
    slots_[s].requested = now_;
  } else {
    msg.rendezvous = true;
    msg.sender_slot = s;
  }
  if (d.unexpected_tail == kNil)
    d.unexpected_head = m;
  else
    messages_[d.unexpected_tail].next = m;
  d.unexpected_tail = m;
}

void Engine::MatchRendezvous(std::uint32_t send_slot, std::uint32_t recv_slot, Time now,
                             Time send_posted) {
  Slot& sl = slots_[send_slot];
  Slot& rv = slots_[recv_slot];
  const internal::Transfer t =
      network_->ReserveNodes(ranks_[sl.owner].node, ranks_[rv.owner].node, sl.bytes, now);
  sl.complete = rv.complete = t.arrival_s;
  sl.requested = rv.requested = now;
  RecordMessage(sl.owner, rv.owner, sl.tag, sl.bytes, send_posted, t.start_s, PostedAt(recv_slot),
                t.arrival_s);
  Notify(sl.owner);
}

void Engine::PostRecv(int rank, std::uint32_t s) {
  Proc& me = ranks_[rank];
  const std::int32_t want_src = slots_[s].peer;
  const std::int32_t want_tag = slots_[s].tag;
  const CommId comm = slots_[s].comm;
  std::uint32_t prev = kNil, cur = me.unexpected_head;
  std::uint32_t best = kNil, best_prev = kNil;
  Time best_key = kUnknown;
  if (want_src == kAnySource) seen_sources_.clear();
  while (cur != kNil) {
    const Message& m = messages_[cur];
    const bool match = m.comm == comm && (want_src == kAnySource || m.source == want_src) &&
                       (want_tag == kAnyTag || m.tag == want_tag);
    if (match) {
      if (want_src != kAnySource) {
        best = cur;
        best_prev = prev;
        break;
      }
      // Wildcard: the first message (in send order) of every source may match; take the
      // one that arrives first. Later messages of a source cannot overtake its first.
      if (std::find(seen_sources_.begin(), seen_sources_.end(), m.source) == seen_sources_.end()) {
        seen_sources_.push_back(m.source);
        const Time key = m.rendezvous ? m.send_posted : m.arrival;
        if (best == kNil || key < best_key) {
          best = cur;
          best_prev = prev;
          best_key = key;
        }
      }
    }
    prev = cur;
    cur = m.next;
  }
  if (best == kNil) {
    slots_[s].next = kNil;
    if (me.posted_tail == kNil)
      me.posted_head = s;
    else
      slots_[me.posted_tail].next = s;
    me.posted_tail = s;
    return;
  }
  Message& m = messages_[best];
  if (best_prev == kNil)
    me.unexpected_head = m.next;
  else
    messages_[best_prev].next = m.next;
  if (me.unexpected_tail == best) me.unexpected_tail = best_prev;
  Slot& rv = slots_[s];
  CheckTruncation(rv, m.source, rank, m.bytes);
  rv.peer = m.source;
  rv.tag = m.tag;
  if (!m.rendezvous) {
    rv.complete = std::max(now_, m.arrival);
    rv.requested = m.requested;
    RecordMessage(m.source, rank, m.tag, m.bytes, m.send_posted, m.transfer_start, now_, m.arrival);
  } else {
    MatchRendezvous(m.sender_slot, s, now_, m.send_posted);
  }
  free_messages_.push_back(best);
}

std::uint32_t Engine::Resolve(int rank, const Op& op, RequestId id, bool* predrawn) {
  std::uint32_t* v = FindRequest(ranks_[rank], rank, id);
  if (v == nullptr)
    Fail(rank, op,
         "request " + std::to_string(id) +
             " was never started by this rank or has already completed");
  *predrawn = *v == kPredrawn;
  return *v;
}

void Engine::StartWaitAll(Proc& r, int rank, const Op& op, const std::vector<RequestId>& ids) {
  ClearSlots(r);
  r.mode = WaitMode::kAll;
  for (RequestId id : ids) {
    bool predrawn = false;
    const std::uint32_t s = Resolve(rank, op, id, &predrawn);
    EraseRequest(r, rank, id);  // this call consumes the completion
    if (predrawn) continue;
    slots_[s].traced = false;
    PushSlot(r, s);
  }
}

void Engine::StartWaitSome(Proc& r, int rank, const Op& op, const std::vector<RequestId>& ids,
                           const std::vector<Completion>& done) {
  if (options_.deterministic) {
    std::vector<RequestId> traced;
    traced.reserve(done.size());
    for (const Completion& c : done) traced.push_back(c.request);
    StartWaitAll(r, rank, op, traced);
    r.wait_count = static_cast<std::uint32_t>(r.slots.size);
    return;
  }
  ClearSlots(r);
  r.mode = WaitMode::kSome;
  for (RequestId id : ids) {
    bool predrawn = false;
    const std::uint32_t s = Resolve(rank, op, id, &predrawn);
    if (!predrawn) PushSlot(r, s);
  }
  std::vector<std::uint32_t> traced;
  for (const Completion& c : done) {
    bool predrawn = false;
    const std::uint32_t s = Resolve(rank, op, c.request, &predrawn);
    if (predrawn) {
      EraseRequest(r, rank, c.request);  // the completion was drawn earlier by a test
      continue;
    }
    traced.push_back(s);
    const std::span<std::uint32_t> listed = Slots(r);
    if (std::find(listed.begin(), listed.end(), s) == listed.end()) PushSlot(r, s);
  }
  r.candidates = static_cast<std::uint32_t>(r.slots.size);
  r.wait_count = static_cast<std::uint32_t>(traced.size());
  for (std::uint32_t s : traced) PushSlot(r, s);
}

// A test that completed nothing in the trace. Without --deterministic a request that has
// completed in the simulation is completed here ("pre-drawn", paper 003).
void Engine::TestFail(Proc& r, int rank, const Op& op) {
  if (options_.deterministic) return;
  // r.slots: the live (not pre-drawn) requests passed to the test.
  std::vector<std::uint32_t> done;
  for (std::uint32_t s : Slots(r))
    if (slots_[s].complete <= r.now) done.push_back(s);
  if (done.empty()) return;
  if (op.call == EventKind::kTestall) {
    if (done.size() != r.slots.size) return;
  } else if (op.call == EventKind::kTest || op.call == EventKind::kTestany) {
    auto first = std::min_element(done.begin(), done.end(), [&](std::uint32_t a, std::uint32_t b) {
      return slots_[a].complete < slots_[b].complete;
    });
    done = {*first};
  }
  for (std::uint32_t s : done) {
    ReportWildcard(rank, s);
    *FindRequest(r, rank, slots_[s].trace_id) = kPredrawn;
    FreeSlot(s);
    ++result_.remapped_completions;
  }
  ClearSlots(r);
}

bool Engine::StartCollective(Proc& r, int rank, const Op& op) {
  const int id = DimemasCollectiveId(op.call);
  if (id < 0) Fail(rank, op, "collective without a Dimemas collective id");
  const CollectiveCost& cost = machine_.collectives[id];
  r.mode = WaitMode::kCollective;
  Cold(r).coll_arrival = r.now;
  CollectiveTotals& totals = coll_totals_[static_cast<int>(op.call)];
  if (op.comm == kCommSelf) {
    const Time t = CollectiveTime(cost, 1, op.bytes, op.recv_bytes, machine_.intra_latency_s,
                                  machine_.intra_bandwidth_Bps, 0);
    Cold(r).coll_last_arrival = r.now;
    Cold(r).coll_end = r.now + t;
    ++totals.calls;
    totals.time_s += t;
    totals.bytes += op.bytes;
    return true;
  }
  const std::uint32_t index = CommIndex(rank, op, op.comm);
  CommState& c = comms_[index];
  if (c.arrived == 0) {
    c.kind = op.call;
    c.root = op.peer;
    c.first_rank = rank;
    c.first_index = op.index;
    c.max_sent = c.max_received = 0;
    c.last_arrival = r.now;
    c.waiting.clear();
  } else if (c.kind != op.call || (IsRooted(op.call) && c.root != op.peer)) {
    Fail(rank, op,
         "collective mismatch on " + CommName(op.comm) + ": this rank calls " +
             std::string(EventKindName(op.call)) +
             (IsRooted(op.call) ? " (root " + std::to_string(op.peer) + ")" : "") + " but rank " +
             std::to_string(c.first_rank) + " (event #" + std::to_string(c.first_index) +
             ") called " + std::string(EventKindName(c.kind)) +
             (IsRooted(c.kind) ? " (root " + std::to_string(c.root) + ")" : "") +
             " as the same collective of that communicator");
  }
  ++c.arrived;
  c.last_arrival = std::max(c.last_arrival, r.now);
  c.max_sent = std::max(c.max_sent, op.bytes);
  c.max_received = std::max(c.max_received, op.recv_bytes);
  c.waiting.push_back(rank);
  Cold(r).coll_comm = index;
  Cold(r).coll_end = kUnknown;
  totals.bytes += op.bytes;
  if (c.arrived < c.size) return true;
  const Time t =
      CollectiveTime(cost, c.size, c.max_sent, c.max_received,
                     c.multi_node ? machine_.inter_latency_s : machine_.intra_latency_s,
                     c.multi_node ? machine_.inter_bandwidth_Bps : machine_.intra_bandwidth_Bps,
                     c.multi_node ? machine_.buses : 0);
  const Time end = c.last_arrival + t;
  ++totals.calls;
  totals.time_s += t;
  for (std::int32_t w : c.waiting) {
    Proc& p = ranks_[w];
    Cold(p).coll_last_arrival = c.last_arrival;
    Cold(p).coll_end = end;
    totals.wait_s += c.last_arrival - Cold(p).coll_arrival;
  }
  c.arrived = 0;
  // Waking a member may run its local work (and create communicators): copy first.
  wake_list_.assign(c.waiting.begin(), c.waiting.end());
  for (std::size_t i = 0; i < wake_list_.size(); ++i) {
    if (i + 4 < wake_list_.size()) PrefetchProc(wake_list_[i + 4]);
    if (wake_list_[i] != rank) Notify(wake_list_[i]);
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Running.

void Engine::Schedule(Proc& r, int rank, Time t) { r.wake_seq = queue_.Push(t, rank); }

void Engine::Notify(int rank) {
  Proc& r = ranks_[rank];
  if (r.status != Status::kBlocked) return;
  if (r.source) PrefetchReader(r.source.get());  // it is likely to read on
  Time ready;
  if (!Evaluate(r, &ready)) return;
  if (r.mode != WaitMode::kSome) {
    // The completion time of a waitall or a collective is final once known: complete it
    // now (at `ready`, in this rank's future) and run its local work, so that the queue
    // holds only the rank's next interaction with the others.
    r.wake_seq = 0;
    Complete(r, rank, ready);
    Advance(r, rank);
    if (r.status != Status::kDone) Schedule(r, rank, r.now);
    return;
  }
  // waitany/waitsome: the wake-up time moves as its candidates complete.
  if (r.wake_seq != 0 && Cold(r).wake_time == ready) return;
  Schedule(r, rank, ready);
  Cold(r).wake_time = ready;
}

bool Engine::Evaluate(Proc& r, Time* ready) {
  switch (r.mode) {
    case WaitMode::kAll: {
      Time t = r.blocked_since;
      for (std::uint32_t s : Slots(r)) {
        const Time c = slots_[s].complete;
        if (c == kUnknown) return false;
        t = std::max(t, c);
      }
      *ready = t;
      return true;
    }
    case WaitMode::kSome: {
      order_.clear();
      for (std::uint32_t i = 0; i < r.candidates; ++i) {
        const Time c = slots_[Slots(r)[i]].complete;
        if (c != kUnknown) order_.emplace_back(c, i);
      }
      if (order_.size() < r.wait_count) return false;
      std::nth_element(order_.begin(), order_.begin() + (r.wait_count - 1), order_.end());
      *ready = std::max(r.blocked_since, order_[r.wait_count - 1].first);
      return true;
    }
    case WaitMode::kCollective:
      if (Cold(r).coll_end == kUnknown) return false;
      *ready = std::max(r.blocked_since, Cold(r).coll_end);
      return true;
  }
  return false;
}

void Engine::AddInterval(int rank, RankState state, EventKind call, Time begin, Time end) {
  if (!options_.record_timeline || !(end > begin)) return;
  intervals_[rank].push_back(StateInterval{rank, state, call, begin, end});
}

namespace {
RankState BlockedState(EventKind call) {
  switch (call) {
    case EventKind::kSend:
      return RankState::kBlockingSend;
    case EventKind::kRecv:
      return RankState::kWaitMessage;
    case EventKind::kSendrecv:
      return RankState::kSendReceive;
    case EventKind::kTest:
    case EventKind::kTestall:
    case EventKind::kTestany:
    case EventKind::kTestsome:
      return RankState::kTestProbe;
    default:
      return RankState::kWaitRequests;
  }
}
}  // namespace

void Engine::Complete(Proc& r, int rank, Time ready) {
  const Time since = r.blocked_since;
  auto split = [&](Time requested) {
    // Communication: from when the critical transfer was requested (or the rank blocked,
    // if later) to the end; the time before that the rank waited for its partner.
    const Time from = std::clamp(requested == kUnknown ? since : requested, since, ready);
    r.communication_s += ready - from;
    r.wait_s += from - since;
  };
  switch (r.mode) {
    case WaitMode::kAll: {
      std::uint32_t critical = kNil;
      for (std::uint32_t s : Slots(r)) {
        if (critical == kNil || slots_[s].complete > slots_[critical].complete) critical = s;
        ReportWildcard(rank, s);
        FreeSlot(s);
      }
      split(critical == kNil ? since : slots_[critical].requested);
      AddInterval(rank, BlockedState(r.op.call), r.op.call, since, ready);
      break;
    }
    case WaitMode::kSome: {
      // The wait_count candidates that complete first; ties prefer the traced ones, then
      // the order the requests were passed in.
      const std::uint32_t k = r.wait_count;
      const std::span<std::uint32_t> slots = Slots(r);
      const auto traced_begin = slots.begin() + r.candidates;
      auto is_traced = [&](std::uint32_t s) {
        return std::find(traced_begin, slots.end(), s) != slots.end();
      };
      std::vector<std::uint32_t> order(r.candidates);
      for (std::uint32_t i = 0; i < r.candidates; ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const Time ca = slots_[slots[a]].complete, cb = slots_[slots[b]].complete;
        if (ca != cb) return ca < cb;
        return is_traced(slots[a]) && !is_traced(slots[b]);
      });
      std::vector<std::uint32_t> chosen;
      for (std::uint32_t i = 0; i < k; ++i) chosen.push_back(slots[order[i]]);
      std::vector<std::uint32_t> unchosen_traced;
      for (auto it = traced_begin; it != slots.end(); ++it)
        if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end())
          unchosen_traced.push_back(*it);
      std::size_t next_swap = 0;
      for (std::uint32_t s : chosen) {
        ReportWildcard(rank, s);
        const RequestId id = slots_[s].trace_id;
        if (is_traced(s)) {
          EraseRequest(r, rank, id);
        } else {
          // Paper 003: the trace completed `d` here but the simulation completed `s`; the
          // trace's later events about `id` (still pending in the trace) now mean `d`.
          const std::uint32_t d = unchosen_traced[next_swap++];
          EraseRequest(r, rank, slots_[d].trace_id);
          *FindRequest(r, rank, id) = d;
          slots_[d].trace_id = id;
          ++result_.remapped_completions;
        }
        FreeSlot(s);
      }
      split(slots_[chosen.back()].requested);
      AddInterval(rank, BlockedState(r.op.call), r.op.call, since, ready);
      break;
    }
    case WaitMode::kCollective: {
      r.wait_s +=
          Cold(r).coll_last_arrival - std::min(Cold(r).coll_arrival, Cold(r).coll_last_arrival);
      r.communication_s += ready - Cold(r).coll_last_arrival;
      AddInterval(rank, RankState::kSynchronization, r.op.call, Cold(r).coll_arrival,
                  Cold(r).coll_last_arrival);
      AddInterval(rank, RankState::kGroupCommunication, r.op.call, Cold(r).coll_last_arrival,
                  ready);
      Cold(r).coll_end = kUnknown;
      break;
    }
  }
  ClearSlots(r);
  r.now = ready;
  r.status = Status::kRunnable;
}

bool Engine::Start(Proc& r, int rank) {
  const Op& op = r.op;
  switch (op.kind) {
    case OpKind::kNop:
    case OpKind::kEnd:
      return false;
    case OpKind::kCompute:
      r.compute_s += op.seconds;
      AddInterval(rank, RankState::kRunning, op.call, r.now, r.now + op.seconds);
      r.now += op.seconds;
      return false;
    case OpKind::kIsend:
    case OpKind::kIrecv: {
      CheckComm(rank, op, op.comm);
      const bool is_recv = op.kind == OpKind::kIrecv;
      if (is_recv && options_.deterministic && (op.peer == kAnySource || op.tag == kAnyTag))
        ResolveWildcard(r, rank);
      const std::uint32_t s = NewSlot(rank, op, is_recv);
      slots_[s].traced = true;
      if (!InsertRequest(r, rank, op.request, s))
        Fail(rank, op,
             "request id " + std::to_string(op.request) + " is started again while still active");
      if (op.peer == kProcNull) {
        slots_[s].complete = slots_[s].requested = r.now;
      } else if (is_recv) {
        PostRecv(rank, s);
      } else {
        PostSend(rank, s, op.sync);
      }
      return false;
    }
    case OpKind::kSend:
    case OpKind::kRecv:
    case OpKind::kSendrecv: {
      CheckComm(rank, op, op.comm);
      ClearSlots(r);
      r.mode = WaitMode::kAll;
      const bool has_send = op.kind != OpKind::kRecv && op.peer != kProcNull;
      const bool has_recv = op.kind != OpKind::kSend &&
                            (op.kind == OpKind::kSendrecv ? op.recv_peer : op.peer) != kProcNull;
      // Post the receive first so that a sendrecv with itself matches.
      if (has_recv) {
        const std::uint32_t s = NewSlot(rank, op, true);
        PushSlot(r, s);
        PostRecv(rank, s);
      }
      if (has_send) {
        const std::uint32_t s = NewSlot(rank, op, false);
        PushSlot(r, s);
        PostSend(rank, s, op.sync);
      }
      return r.slots.size != 0;
    }
    case OpKind::kWaitAll:  // the request lists were resolved into r.slots by Prepare
      return r.slots.size != 0;
    case OpKind::kWaitSome:
      return r.wait_count > 0;
    case OpKind::kTestFail:
      TestFail(r, rank, op);
      return false;
    case OpKind::kCollective:
      return StartCollective(r, rank, op);
    case OpKind::kCommCreate:  // registered by Prepare
      return false;
  }
  return false;
}

// Resolves the request lists of the operation just read into r.slots, and registers a new
// communicator. Nothing the rank itself does can come between reading an operation and
// starting it, so this is what starting it would find.
void Engine::Prepare(Proc& r, int rank, const std::vector<RequestId>& requests,
                     const std::vector<Completion>& completed, const Event& event) {
  const Op& op = r.op;
  switch (op.kind) {
    case OpKind::kWaitAll:
      r.mode = WaitMode::kAll;
      if (op.call == EventKind::kTest || op.call == EventKind::kTestall) {
        std::vector<RequestId> ids;
        for (const Completion& c : completed) ids.push_back(c.request);
        StartWaitAll(r, rank, op, ids);
      } else {
        StartWaitAll(r, rank, op, requests);
      }
      break;
    case OpKind::kWaitSome:
      StartWaitSome(r, rank, op, requests, completed);
      break;
    case OpKind::kTestFail:
      ClearSlots(r);
      for (RequestId id : requests) {
        bool predrawn = false;
        const std::uint32_t s = Resolve(rank, op, id, &predrawn);
        if (!predrawn) PushSlot(r, s);
      }
      break;
    case OpKind::kCommCreate:
      RegisterComm(rank, op, event);
      break;
    default:
      break;
  }
}

void Engine::RegisterComm(int rank, const Op& op, const Event& e) {
  try {
    comm_table_.Add(e, rank);
  } catch (const TraceError& error) {
    Fail(rank, op, error.what());
  }
  if (comm_index_.find(e.new_comm) != comm_index_.end()) return;
  CommState c;
  c.id = e.new_comm;
  c.size = static_cast<int>(e.members.size());
  if (c.size == 0) Fail(rank, op, "communicator " + std::to_string(e.new_comm) + " has no members");
  for (std::int32_t m : e.members) {
    if (m < 0 || m >= nprocs_)
      Fail(rank, op,
           "member rank " + std::to_string(m) + " of communicator " + std::to_string(e.new_comm) +
               " is outside the run");
    if (ranks_[m].node != ranks_[e.members[0]].node) c.multi_node = true;
  }
  comm_index_[e.new_comm] = static_cast<std::uint32_t>(comms_.size());
  comms_.push_back(std::move(c));
}

std::uint32_t* Engine::FindRequest(Proc& r, int rank, RequestId id) {
  for (int i = 0; i < r.inline_requests; ++i)
    if (r.request_ids[i] == id) return &r.request_slots[i];
  return r.overflow_requests > 0 ? requests_.Find(rank, id) : nullptr;
}

bool Engine::InsertRequest(Proc& r, int rank, RequestId id, std::uint32_t slot) {
  if (FindRequest(r, rank, id) != nullptr) return false;
  if (r.inline_requests < Proc::kInlineRequests) {
    r.request_ids[r.inline_requests] = id;
    r.request_slots[r.inline_requests] = slot;
    ++r.inline_requests;
    return true;
  }
  ++r.overflow_requests;
  return requests_.Insert(rank, id, slot);
}

void Engine::EraseRequest(Proc& r, int rank, RequestId id) {
  for (int i = 0; i < r.inline_requests; ++i) {
    if (r.request_ids[i] != id) continue;
    --r.inline_requests;
    r.request_ids[i] = r.request_ids[r.inline_requests];
    r.request_slots[i] = r.request_slots[r.inline_requests];
    return;
  }
  if (r.overflow_requests > 0 && requests_.Find(rank, id) != nullptr) {
    requests_.Erase(rank, id);
    --r.overflow_requests;
  }
}

// Runs the rank's local work (compute bursts, no-ops, communicator creation) from r.now
// on, and stops with the next operation that involves other ranks read but not started,
// or with the rank finished.
void Engine::Advance(Proc& r, int rank) {
  for (;;) {
    if (!r.op_loaded) {
      if (!LoadNext(r, rank)) {
        Finish(r, rank);
        return;
      }
      r.op_loaded = true;
    }
    switch (r.op.kind) {
      case OpKind::kCompute:
        r.compute_s += r.op.seconds;
        AddInterval(rank, RankState::kRunning, r.op.call, r.now, r.now + r.op.seconds);
        r.now += r.op.seconds;
        r.op_loaded = false;
        break;
      case OpKind::kNop:
      case OpKind::kCommCreate:
        r.op_loaded = false;
        break;
      default:
        return;
    }
  }
}

void Engine::Finish(Proc& r, int rank) {
  r.status = Status::kDone;
  r.source.reset();
  ++finished_;
  (void)rank;
}

void Engine::RunRank(int rank) {
  Proc& r = ranks_[rank];
  if (r.status == Status::kBlocked) {
    Time ready;
    if (!Evaluate(r, &ready)) return;
    Complete(r, rank, std::max(ready, now_));
  }
  for (;;) {
    Advance(r, rank);
    if (r.status == Status::kDone) return;
    // The next operation involves other ranks: it must happen in global time order.
    if (!queue_.empty() && r.now > queue_.top_time()) {
      Schedule(r, rank, r.now);
      return;
    }
    now_ = r.now;
    r.op_loaded = false;
    if (!Start(r, rank)) continue;
    r.status = Status::kBlocked;
    r.blocked_since = r.now;
    Time ready;
    if (!Evaluate(r, &ready)) return;  // Notify wakes it when it can go on
    if (r.mode != WaitMode::kSome || queue_.empty() || ready <= queue_.top_time()) {
      // Final (waitall, collective), or nothing else can happen before: go on.
      Complete(r, rank, ready);
      continue;
    }
    Schedule(r, rank, ready);
    Cold(r).wake_time = ready;
    return;
  }
}

// ---------------------------------------------------------------------------------------
// Reports.

std::string Engine::DescribeBlocked(int rank) {
  Proc& r = ranks_[rank];
  std::ostringstream out;
  out << "rank " << rank << " at " << r.blocked_since << " s, event #" << r.op.index << " ("
      << EventKindName(r.op.call) << "): ";
  if (r.mode == WaitMode::kCollective) {
    const CommState& c = comms_[Cold(r).coll_comm];
    out << "waits in " << EventKindName(c.kind) << " on " << CommName(c.id) << ", " << c.arrived
        << " of " << c.size << " members arrived; missing:";
    std::vector<std::int32_t> members =
        c.id == kCommWorld ? std::vector<std::int32_t>() : comm_table_.Members(c.id, rank);
    if (c.id == kCommWorld)
      for (int i = 0; i < nprocs_; ++i) members.push_back(i);
    int listed = 0;
    for (std::int32_t m : members) {
      if (std::find(c.waiting.begin(), c.waiting.end(), m) != c.waiting.end()) continue;
      if (listed++ == 8) {
        out << " ...";
        break;
      }
      out << " " << m;
    }
    return out.str();
  }
  out << "waits for";
  bool first = true;
  const std::uint32_t n =
      r.mode == WaitMode::kSome ? r.candidates : static_cast<std::uint32_t>(r.slots.size);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Slot& s = slots_[Slots(r)[i]];
    if (s.complete != kUnknown) continue;
    out << (first ? " " : "; ");
    first = false;
    if (s.is_recv) {
      out << "a message from " << PeerName(s.peer) << " (" << TagName(s.tag) << ", "
          << CommName(s.comm) << ")";
    } else {
      out << "a matching receive at rank " << s.peer << " for its rendezvous send ("
          << TagName(s.tag) << ", " << CommName(s.comm) << ", " << s.bytes << " bytes)";
    }
    if (s.traced)
      out << " [request " << s.trace_id << ", started at event #" << s.event_index << "]";
  }
  if (r.mode == WaitMode::kSome) out << " (" << r.wait_count << " of them must complete)";
  return out.str();
}

void Engine::ReportDeadlock() {
  std::ostringstream out;
  int blocked = 0;
  for (int i = 0; i < nprocs_; ++i)
    if (ranks_[i].status == Status::kBlocked) ++blocked;
  out << trace_.description() << ": deadlock: " << blocked << " of " << nprocs_
      << " ranks can never continue (" << finished_ << " finished):";
  int listed = 0;
  for (int i = 0; i < nprocs_; ++i) {
    if (ranks_[i].status != Status::kBlocked) continue;
    if (listed++ == options_.max_reported_ranks) {
      out << "\n  ... and " << (blocked - options_.max_reported_ranks) << " more blocked ranks";
      break;
    }
    out << "\n  " << DescribeBlocked(i);
  }
  throw SimulationError(out.str());
}

void Engine::CheckUnmatched() {
  std::vector<std::string> lines;
  std::size_t total = 0;
  for (int rank = 0; rank < nprocs_; ++rank) {
    const Proc& r = ranks_[rank];
    for (std::uint32_t m = r.unexpected_head; m != kNil; m = messages_[m].next) {
      const Message& msg = messages_[m];
      ++total;
      if (lines.size() < 32)
        lines.push_back("rank " + std::to_string(msg.source) + ", event #" +
                        std::to_string(msg.event_index) + ": send to rank " + std::to_string(rank) +
                        " (" + TagName(msg.tag) + ", " + CommName(msg.comm) + ", " +
                        std::to_string(msg.bytes) + " bytes) was never received");
    }
    for (std::uint32_t s = r.posted_head; s != kNil; s = slots_[s].next) {
      const Slot& sl = slots_[s];
      ++total;
      if (lines.size() < 32)
        lines.push_back("rank " + std::to_string(rank) + ", event #" +
                        std::to_string(sl.event_index) + ": receive from " + PeerName(sl.peer) +
                        " (" + TagName(sl.tag) + ", " + CommName(sl.comm) +
                        ") was never matched by a send");
    }
  }
  if (total == 0) return;
  std::string message = trace_.description() + ": " + std::to_string(total) +
                        " unmatched point-to-point operation(s) at the end of the run:";
  for (const std::string& l : lines) message += "\n  " + l;
  if (total > lines.size())
    message += "\n  ... and " + std::to_string(total - lines.size()) + " more";
  throw SimulationError(message);
}

SimResult Engine::Run() {
  for (int rank = 0; rank < nprocs_; ++rank) Schedule(ranks_[rank], rank, 0.0);
  while (!queue_.empty()) {
    const EventQueue::Entry e = queue_.Pop();
    const int rank = EventQueue::RankOf(e);
    Proc& r = ranks_[rank];
    // With many ranks, their state is not in the cache: fetch that of the ranks likely to
    // run next (the new top and its children in the queue) while this one runs, and for the
    // new top, whose state was fetched the same way earlier, its trace reader and the
    // partner of the operation it stopped at (a send there touches the partner's state).
    if (!queue_.empty()) {
      const int next = EventQueue::RankOf(queue_.top());
      PrefetchProc(next);
      const Proc& n = ranks_[next];
      if (n.source) PrefetchReader(n.source.get());
      if (n.op_loaded && n.op.peer >= 0 && n.op.peer < nprocs_) PrefetchProc(n.op.peer);
      for (std::size_t c = 1; c <= EventQueue::kArity && c < queue_.size(); ++c)
        PrefetchProc(EventQueue::RankOf(queue_.at(c)));
    }
    // This rank's state was fetched the same way; start fetching what it will touch next:
    // its trace reader and the partner of the operation it stopped at.
    if (r.source) PrefetchReader(r.source.get());
    if (r.op_loaded && r.op.peer >= 0 && r.op.peer < nprocs_) PrefetchProc(r.op.peer);
    if (EventQueue::SeqOf(e) != r.wake_seq) continue;  // superseded
    r.wake_seq = 0;
    now_ = EventQueue::TimeOf(e);
    RunRank(rank);
  }
  if (finished_ < nprocs_) ReportDeadlock();
  CheckUnmatched();

  SimResult& res = result_;
  res.nprocs = nprocs_;
  res.nodes = nodes_;
  res.events = events_;
  res.machine_name = machine_.name;
  res.trace_description = trace_.description();
  for (const Proc& r : ranks_) res.predicted_time_s = std::max(res.predicted_time_s, r.now);
  res.ranks.resize(nprocs_);
  for (int i = 0; i < nprocs_; ++i) {
    const Proc& r = ranks_[i];
    RankTimes& t = res.ranks[i];
    t.rank = i;
    t.node = r.node;
    t.end_s = r.now;
    t.compute_s = r.compute_s;
    t.communication_s = r.communication_s;
    t.wait_s = r.wait_s;
    t.utilisation = res.predicted_time_s > 0 ? r.compute_s / res.predicted_time_s : 0.0;
    t.events = r.next_index - (r.has_lookahead ? cold_[i].lookahead->size() : 0);
    t.messages_sent = r.messages;
    t.bytes_sent = r.bytes;
  }
  for (const CollectiveTotals& c : coll_totals_)
    if (c.calls > 0) res.collectives.push_back(c);
  if (options_.record_timeline) {
    res.timeline.recorded = true;
    for (auto& v : intervals_)
      res.timeline.intervals.insert(res.timeline.intervals.end(), v.begin(), v.end());
    res.timeline.messages = std::move(message_records_);
    std::stable_sort(res.timeline.messages.begin(), res.timeline.messages.end(),
                     [](const MessageRecord& a, const MessageRecord& b) {
                       if (a.arrival_s != b.arrival_s) return a.arrival_s < b.arrival_s;
                       if (a.source != b.source) return a.source < b.source;
                       return a.dest < b.dest;
                     });
  }
  return std::move(res);
}

}  // namespace

SimResult Simulate(const TraceSource& trace, const Machine& machine, const SimOptions& options) {
  Engine engine(trace, machine, options);
  return engine.Run();
}

}  // namespace pas2p::sim
