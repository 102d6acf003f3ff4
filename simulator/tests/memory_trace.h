// An in-memory TraceSource for the simulator tests: build TraceData, replay it directly.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pas2p/core/trace.h"

namespace pas2p::sim::testing {

class MemoryTrace : public TraceSource {
 public:
  explicit MemoryTrace(TraceData data) : data_(std::move(data)) {
    data_.metadata.nprocs = static_cast<int>(data_.ranks.size());
  }
  explicit MemoryTrace(int nprocs) { Resize(nprocs); }
  void Resize(int nprocs) {
    data_.ranks.resize(nprocs);
    data_.metadata.nprocs = nprocs;
  }
  std::vector<Event>& rank(int r) { return data_.ranks[r]; }
  const TraceMetadata& metadata() const override { return data_.metadata; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override {
    return std::make_unique<Reader>(&data_.ranks[rank], rank);
  }
  std::string description() const override { return "memory-trace"; }
  const TraceData& data() const { return data_; }

 private:
  class Reader : public RankEventSource {
   public:
    Reader(const std::vector<Event>* events, int rank) : events_(events), rank_(rank) {}
    bool Next(Event* event) override {
      if (pos_ >= events_->size()) {
        status_ = StreamStatus::kComplete;
        return false;
      }
      *event = (*events_)[pos_++];
      return true;
    }
    StreamStatus status() const override { return status_; }
    const std::string& message() const override { return message_; }
    int rank() const override { return rank_; }

   private:
    const std::vector<Event>* events_;
    int rank_;
    std::size_t pos_ = 0;
    StreamStatus status_ = StreamStatus::kReading;
    std::string message_;
  };
  TraceData data_;
};

inline Event Compute(double seconds) {
  return MakeCompute(static_cast<std::int64_t>(seconds * 1e9 + 0.5));
}
inline Event Wait(RequestId id) {
  Event e;
  e.kind = EventKind::kWait;
  e.requests = {id};
  e.completed = {Completion{id}};
  return e;
}
inline Event Waitall(std::vector<RequestId> ids) {
  Event e = MakeWaitall(ids);
  e.completed.clear();
  for (RequestId id : ids) e.completed.push_back(Completion{id});
  return e;
}
inline Event Sendrecv(std::int32_t dst, std::uint64_t send_bytes, std::int32_t src,
                      std::uint64_t recv_bytes, std::int32_t tag = 0) {
  Event e;
  e.kind = EventKind::kSendrecv;
  e.peer = dst;
  e.tag = tag;
  e.bytes = send_bytes;
  e.recv_peer = src;
  e.recv_tag = tag;
  e.recv_bytes = recv_bytes;
  return e;
}
inline Event CommCreate(CommId id, std::vector<std::int32_t> members) {
  Event e;
  e.kind = EventKind::kCommCreate;
  e.new_comm = id;
  e.members = std::move(members);
  e.value = 1;
  return e;
}

}  // namespace pas2p::sim::testing
