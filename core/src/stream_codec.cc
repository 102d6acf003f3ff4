#include <algorithm>

#include "stream_format.h"

namespace pas2p::internal {
namespace {

enum Field : int {
  kWallStart = 0,
  kWallDuration,
  kCpuNs,
  kInstructions,
  kCycles,
  kComm,
  kPeer,
  kTag,
  kBytes,
  kRequest,
  kSync,
  kRecvPeer,
  kRecvTag,
  kRecvBytes,
  kSendBytes,
  kSendCounts,
  kRecvCounts,
  kRequests,
  kCompleted,
  kNewComm,
  kMembers,
  kValue,
  kFieldCount
};

inline std::uint64_t ZigZag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
inline std::int64_t UnZigZag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

inline void PutSigned(std::int64_t v, std::vector<std::uint8_t>* out) { PutVarint(ZigZag(v), out); }

class Decoder {
 public:
  Decoder(const std::uint8_t* data, std::size_t size, std::size_t pos)
      : data_(data), size_(size), pos_(pos) {}
  bool Varint(std::uint64_t* v) {
    std::uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= size_) return Fail("record runs past the end of its block");
      std::uint8_t byte = data_[pos_++];
      result |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        *v = result;
        return true;
      }
    }
    return Fail("varint longer than 10 bytes");
  }
  bool Signed(std::int64_t* v) {
    std::uint64_t u;
    if (!Varint(&u)) return false;
    *v = UnZigZag(u);
    return true;
  }
  template <typename T>
  bool SignedAs(T* v) {
    std::int64_t x;
    if (!Signed(&x)) return false;
    *v = static_cast<T>(x);
    return true;
  }
  bool Count(std::size_t* n) {
    std::uint64_t v;
    if (!Varint(&v)) return false;
    if (v > size_ - pos_) return Fail("list length " + std::to_string(v) + " exceeds the block");
    *n = static_cast<std::size_t>(v);
    return true;
  }
  bool Byte(std::uint8_t* b) {
    if (pos_ >= size_) return Fail("record runs past the end of its block");
    *b = data_[pos_++];
    return true;
  }
  bool Fail(const std::string& what) {
    error_ = what;
    return false;
  }
  std::size_t pos() const { return pos_; }
  const std::string& error() const { return error_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_;
  std::string error_;
};

void PutU64List(const std::vector<std::uint64_t>& values, std::vector<std::uint8_t>* out) {
  PutVarint(values.size(), out);
  for (std::uint64_t v : values) PutVarint(v, out);
}

}  // namespace

void PutVarint(std::uint64_t v, std::vector<std::uint8_t>* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<std::uint8_t>(v));
}

void EncodeEvent(const Event& e, std::uint32_t version, CodecState* state,
                 std::vector<std::uint8_t>* out, std::vector<std::uint8_t>* times) {
  static const Event kDefault{};
  const bool request_deltas = version >= kStreamVersion;
  const std::int64_t start_delta = e.wall_start_ns - state->last_wall_ns;
  std::int64_t duration = e.wall_end_ns - e.wall_start_ns;
  if (e.kind == EventKind::kCompute) duration -= e.cpu_ns;
  std::uint64_t mask = 0;
  auto set = [&mask](Field f, bool present) {
    if (present) mask |= 1ull << f;
  };
  set(kWallStart, start_delta != 0);
  set(kWallDuration, duration != 0);
  set(kCpuNs, e.cpu_ns != kDefault.cpu_ns);
  set(kInstructions, e.instructions != kDefault.instructions);
  set(kCycles, e.cycles != kDefault.cycles);
  set(kComm, e.comm != kDefault.comm);
  set(kPeer, e.peer != kDefault.peer);
  set(kTag, e.tag != kDefault.tag);
  set(kBytes, e.bytes != kDefault.bytes);
  set(kRequest, e.request != kDefault.request);
  set(kSync, e.sync);
  set(kRecvPeer, e.recv_peer != kDefault.recv_peer);
  set(kRecvTag, e.recv_tag != kDefault.recv_tag);
  set(kRecvBytes, e.recv_bytes != kDefault.recv_bytes);
  set(kSendBytes, e.send_bytes != kDefault.send_bytes);
  set(kSendCounts, !e.send_counts.empty());
  set(kRecvCounts, !e.recv_counts.empty());
  set(kRequests, !e.requests.empty());
  set(kCompleted, !e.completed.empty());
  set(kNewComm, e.new_comm != kDefault.new_comm);
  set(kMembers, !e.members.empty());
  set(kValue, e.value != kDefault.value);

  out->push_back(static_cast<std::uint8_t>(e.kind));
  PutVarint(mask, out);
  if (mask & (1ull << kWallStart)) PutSigned(start_delta, times);
  if (mask & (1ull << kWallDuration)) PutSigned(duration, times);
  if (mask & (1ull << kCpuNs)) PutSigned(e.cpu_ns, times);
  if (mask & (1ull << kInstructions)) PutSigned(e.instructions, out);
  if (mask & (1ull << kCycles)) PutSigned(e.cycles, out);
  if (mask & (1ull << kComm)) PutVarint(e.comm, out);
  if (mask & (1ull << kPeer)) PutSigned(e.peer, out);
  if (mask & (1ull << kTag)) PutSigned(e.tag, out);
  if (mask & (1ull << kBytes)) PutVarint(e.bytes, out);
  if (mask & (1ull << kRequest)) {
    if (request_deltas) {
      PutSigned(static_cast<std::int64_t>(e.request - state->last_request), out);
      state->last_request = e.request;
    } else {
      PutVarint(e.request, out);
    }
  }
  // Version 3: the first id of `requests` against the block's previous request id, the
  // others against the id before them in the list; a completed id as its position in
  // `requests` + 1 (0: not listed, then against the previous request id).
  auto put_delta = [out](RequestId base, RequestId id) {
    PutSigned(static_cast<std::int64_t>(base - id), out);
  };
  if (mask & (1ull << kRecvPeer)) PutSigned(e.recv_peer, out);
  if (mask & (1ull << kRecvTag)) PutSigned(e.recv_tag, out);
  if (mask & (1ull << kRecvBytes)) PutVarint(e.recv_bytes, out);
  if (mask & (1ull << kSendBytes)) PutVarint(e.send_bytes, out);
  if (mask & (1ull << kSendCounts)) PutU64List(e.send_counts, out);
  if (mask & (1ull << kRecvCounts)) PutU64List(e.recv_counts, out);
  if (mask & (1ull << kRequests)) {
    if (request_deltas) {
      PutVarint(e.requests.size(), out);
      RequestId base = state->last_request;
      for (RequestId id : e.requests) {
        put_delta(base, id);
        base = id;
      }
    } else {
      PutU64List(e.requests, out);
    }
  }
  if (mask & (1ull << kCompleted)) {
    PutVarint(e.completed.size(), out);
    for (const Completion& c : e.completed) {
      if (request_deltas) {
        auto listed = std::find(e.requests.begin(), e.requests.end(), c.request);
        if (listed != e.requests.end()) {
          PutVarint(static_cast<std::uint64_t>(listed - e.requests.begin()) + 1, out);
        } else {
          PutVarint(0, out);
          put_delta(state->last_request, c.request);
        }
      } else {
        PutVarint(c.request, out);
      }
      PutSigned(c.peer, out);
      PutSigned(c.tag, out);
      PutVarint(c.bytes, out);
    }
  }
  if (mask & (1ull << kNewComm)) PutVarint(e.new_comm, out);
  if (mask & (1ull << kMembers)) {
    PutVarint(e.members.size(), out);
    std::int64_t previous = 0;
    for (std::int32_t m : e.members) {
      PutSigned(m - previous, out);
      previous = m;
    }
  }
  if (mask & (1ull << kValue)) PutSigned(e.value, out);
  state->last_wall_ns = e.wall_end_ns;
}

bool DecodeEvent(BlockCursor* cursor, CodecState* state, Event* event, std::string* error) {
  const bool one_column = cursor->version == kStreamVersionOneColumn;
  const bool request_deltas = cursor->version >= kStreamVersion;
  Decoder d(cursor->structure, cursor->structure_size, cursor->structure_pos);
  Decoder t = one_column ? Decoder(nullptr, 0, 0)
                         : Decoder(cursor->times, cursor->times_size, cursor->times_pos);
  Decoder& tc = one_column ? d : t;
  Event e;
  std::uint8_t kind;
  std::uint64_t mask;
  auto fail = [&]() {
    *error = d.error();
    return false;
  };
  if (!d.Byte(&kind)) return fail();
  if (kind >= kEventKindCount) {
    *error = "unknown event kind " + std::to_string(kind) + " (expected 0.." +
             std::to_string(kEventKindCount - 1) + ")";
    return false;
  }
  e.kind = static_cast<EventKind>(kind);
  if (!d.Varint(&mask)) return fail();
  if (mask >> kFieldCount) {
    *error = "field mask has unknown fields set";
    return false;
  }
  auto has = [mask](Field f) { return (mask & (1ull << f)) != 0; };
  std::int64_t start_delta = 0, duration = 0;
  auto u64_list = [&d](std::vector<std::uint64_t>* values) {
    std::size_t n;
    if (!d.Count(&n)) return false;
    values->resize(n);
    for (auto& v : *values)
      if (!d.Varint(&v)) return false;
    return true;
  };
  // Request ids of completions (see EncodeEvent): as is in versions 1 and 2.
  auto request_list = [&](std::vector<RequestId>* ids) {
    if (!request_deltas) return u64_list(ids);
    std::size_t n;
    if (!d.Count(&n)) return false;
    ids->resize(n);
    RequestId base = state->last_request;
    for (auto& id : *ids) {
      std::int64_t delta;
      if (!d.Signed(&delta)) return false;
      id = base - static_cast<std::uint64_t>(delta);
      base = id;
    }
    return true;
  };
  auto completed_request = [&](RequestId* id) {
    if (!request_deltas) return d.Varint(id);
    std::uint64_t position;
    if (!d.Varint(&position)) return false;
    if (position > 0) {
      if (position > e.requests.size()) {
        return d.Fail("completed request " + std::to_string(position) + " of a list of " +
                      std::to_string(e.requests.size()));
      }
      *id = e.requests[static_cast<std::size_t>(position - 1)];
      return true;
    }
    std::int64_t delta;
    if (!d.Signed(&delta)) return false;
    *id = state->last_request - static_cast<std::uint64_t>(delta);
    return true;
  };
  auto fail_times = [&]() {
    *error = "time column: " + tc.error();
    return false;
  };
  if (has(kWallStart) && !tc.Signed(&start_delta)) return fail_times();
  if (has(kWallDuration) && !tc.Signed(&duration)) return fail_times();
  if (has(kCpuNs) && !tc.Signed(&e.cpu_ns)) return fail_times();
  if (!one_column && e.kind == EventKind::kCompute) duration += e.cpu_ns;
  if (has(kInstructions) && !d.Signed(&e.instructions)) return fail();
  if (has(kCycles) && !d.Signed(&e.cycles)) return fail();
  if (has(kComm) && !d.Varint(&e.comm)) return fail();
  if (has(kPeer) && !d.SignedAs(&e.peer)) return fail();
  if (has(kTag) && !d.SignedAs(&e.tag)) return fail();
  if (has(kBytes) && !d.Varint(&e.bytes)) return fail();
  if (has(kRequest)) {
    if (request_deltas) {
      std::int64_t delta;
      if (!d.Signed(&delta)) return fail();
      e.request = state->last_request + static_cast<std::uint64_t>(delta);
      state->last_request = e.request;
    } else if (!d.Varint(&e.request)) {
      return fail();
    }
  }
  e.sync = has(kSync);
  if (has(kRecvPeer) && !d.SignedAs(&e.recv_peer)) return fail();
  if (has(kRecvTag) && !d.SignedAs(&e.recv_tag)) return fail();
  if (has(kRecvBytes) && !d.Varint(&e.recv_bytes)) return fail();
  if (has(kSendBytes) && !d.Varint(&e.send_bytes)) return fail();
  if (has(kSendCounts) && !u64_list(&e.send_counts)) return fail();
  if (has(kRecvCounts) && !u64_list(&e.recv_counts)) return fail();
  if (has(kRequests) && !request_list(&e.requests)) return fail();
  if (has(kCompleted)) {
    std::size_t n;
    if (!d.Count(&n)) return fail();
    e.completed.resize(n);
    for (Completion& c : e.completed) {
      if (!completed_request(&c.request) || !d.SignedAs(&c.peer) || !d.SignedAs(&c.tag) ||
          !d.Varint(&c.bytes))
        return fail();
    }
  }
  if (has(kNewComm) && !d.Varint(&e.new_comm)) return fail();
  if (has(kMembers)) {
    std::size_t n;
    if (!d.Count(&n)) return fail();
    e.members.resize(n);
    std::int64_t previous = 0;
    for (auto& m : e.members) {
      std::int64_t delta;
      if (!d.Signed(&delta)) return fail();
      previous += delta;
      m = static_cast<std::int32_t>(previous);
    }
  }
  if (has(kValue) && !d.Signed(&e.value)) return fail();
  e.wall_start_ns = state->last_wall_ns + start_delta;
  e.wall_end_ns = e.wall_start_ns + duration;
  state->last_wall_ns = e.wall_end_ns;
  cursor->structure_pos = d.pos();
  if (!one_column) cursor->times_pos = t.pos();
  *event = std::move(e);
  return true;
}

}  // namespace pas2p::internal
