#include "pas2p/core/trace.h"

#include <algorithm>
#include <deque>
#include <map>

#include "pas2p/core/simgrid_ti.h"

namespace pas2p {

TraceDirectory::TraceDirectory(std::filesystem::path dir)
    : dir_(std::move(dir)), metadata_(ReadMetadata(dir_)) {}

namespace {

// ReceivesAsCompleted: reads ahead from each irecv to the completion that names its request.
class ReceivesCompleted : public RankEventSource {
 public:
  ReceivesCompleted(std::unique_ptr<RankEventSource> inner, std::size_t max_lookahead)
      : inner_(std::move(inner)), max_lookahead_(std::max<std::size_t>(max_lookahead, 1)) {}

  bool Next(Event* event) override {
    while (true) {
      if (ahead_.empty()) {
        // Nothing read ahead: events other than a receive pass straight through.
        if (done_ || !inner_->Next(event)) {
          done_ = true;
          return false;
        }
        if (event->kind != EventKind::kIrecv) return true;
        ahead_.push_back(std::move(*event));
      }
      if (ahead_.front().kind == EventKind::kIrecv && !Complete()) continue;  // dropped
      *event = std::move(ahead_.front());
      ahead_.pop_front();
      return true;
    }
  }
  StreamStatus status() const override { return inner_->status(); }
  const std::string& message() const override { return inner_->message(); }
  int rank() const override { return inner_->rank(); }

 private:
  bool Read() {
    if (done_) return false;
    Event e;
    if (!inner_->Next(&e)) {
      done_ = true;
      return false;
    }
    ahead_.push_back(std::move(e));
    return true;
  }
  // Settles the receive at the front from its completion: its bytes become the bytes that
  // arrived; a listening receive (MPI_ANY_SOURCE) that was cancelled is removed, with its
  // place in its completion (and that completion when nothing else is left in it). Returns
  // false when it was removed. A receive whose completion is not within the look-ahead is
  // left as recorded.
  bool Complete() {
    Event& irecv = ahead_.front();
    const RequestId request = irecv.request;
    const bool listening = irecv.peer == kAnySource;
    for (std::size_t i = 1;; ++i) {
      if (i == ahead_.size() && (i > max_lookahead_ || !Read())) return true;
      Event& e = ahead_[i];
      if (!IsCompletion(e.kind)) continue;
      auto done = std::find_if(e.completed.begin(), e.completed.end(),
                               [&](const Completion& c) { return c.request == request; });
      if (done == e.completed.end()) continue;
      if (done->peer >= 0) ahead_.front().bytes = done->bytes;
      if (done->peer != kCancelled || !listening) return true;
      e.completed.erase(done);
      // The request leaves every wait and test that named it (polls that found nothing
      // included); those that named nothing else go.
      for (std::size_t k = i; k >= 1; --k) {
        Event& poll = ahead_[k];
        if (!IsCompletion(poll.kind)) continue;
        auto& ids = poll.requests;
        const auto named = std::remove(ids.begin(), ids.end(), request);
        if (named == ids.end()) continue;
        ids.erase(named, ids.end());
        if (ids.empty() && poll.completed.empty()) {
          ahead_.erase(ahead_.begin() + static_cast<std::ptrdiff_t>(k));
        }
      }
      ahead_.pop_front();
      return false;
    }
  }

  std::unique_ptr<RankEventSource> inner_;
  std::size_t max_lookahead_;
  std::deque<Event> ahead_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<RankEventSource> ReceivesAsCompleted(std::unique_ptr<RankEventSource> inner,
                                                     std::size_t max_lookahead) {
  return std::make_unique<ReceivesCompleted>(std::move(inner), max_lookahead);
}

std::unique_ptr<RankEventSource> TraceDirectory::OpenRank(int rank) const {
  return ReceivesAsCompleted(OpenRankAsRecorded(rank));
}

std::unique_ptr<RankEventSource> TraceDirectory::OpenRankAsRecorded(int rank) const {
  if (rank < 0 || rank >= metadata_.nprocs) {
    throw TraceError(dir_.string() + ": rank " + std::to_string(rank) +
                     " out of range: the trace has ranks 0.." +
                     std::to_string(metadata_.nprocs - 1));
  }
  std::filesystem::path path = RankStreamPath(dir_, rank);
  if (!std::filesystem::exists(path)) {
    throw TraceError(path.string() + ": rank " + std::to_string(rank) +
                     ": event stream missing (trace.json says " + std::to_string(metadata_.nprocs) +
                     " ranks)");
  }
  return std::make_unique<RankStreamReader>(path, rank);
}

std::unique_ptr<TraceSource> OpenTrace(const std::filesystem::path& path) {
  if (std::filesystem::is_directory(path) && std::filesystem::exists(path / kMetadataFileName)) {
    return std::make_unique<TraceDirectory>(path);
  }
  if (IsSimgridTi(path)) return OpenSimgridTi(path);
  if (!std::filesystem::exists(path))
    throw TraceError(path.string() + ": no such file or directory");
  throw TraceError(path.string() +
                   ": not a trace: expected a pas2p trace directory (with trace.json) or a "
                   "SimGrid time-independent trace list file");
}

namespace {

TraceData ReadEvents(const TraceSource& source, bool as_recorded, bool require_complete,
                     std::vector<std::string>* warnings) {
  TraceData data;
  data.metadata = source.metadata();
  data.ranks.resize(static_cast<std::size_t>(source.nprocs()));
  for (int r = 0; r < source.nprocs(); ++r) {
    auto reader = as_recorded ? source.OpenRankAsRecorded(r) : source.OpenRank(r);
    auto& events = data.ranks[static_cast<std::size_t>(r)];
    Event e;
    while (reader->Next(&e)) events.push_back(std::move(e));
    if (reader->status() != StreamStatus::kComplete) {
      if (require_complete) throw TraceError(reader->message());
      if (warnings) warnings->push_back(reader->message());
    }
  }
  return data;
}

}  // namespace

TraceData ReadTrace(const TraceSource& source, bool require_complete,
                    std::vector<std::string>* warnings) {
  return ReadEvents(source, false, require_complete, warnings);
}

TraceData ReadTraceAsRecorded(const TraceSource& source) {
  return ReadEvents(source, true, true, nullptr);
}

void WriteTrace(const std::filesystem::path& dir, const TraceData& data) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw TraceError(dir.string() + ": cannot create trace directory: " + ec.message());
  TraceMetadata metadata = data.metadata;
  metadata.nprocs = static_cast<int>(data.ranks.size());
  // A placement recorded for another rank count (ranks added or dropped since) no longer
  // describes this trace: unknown rather than wrong.
  long long placed = 0;
  for (const HostPlacement& h : metadata.hosts) placed += h.ranks;
  if (placed != metadata.nprocs) metadata.hosts.clear();
  for (int r = 0; r < metadata.nprocs; ++r) {
    RankStreamWriter writer;
    bool ok = writer.Open(RankStreamPath(dir, r), r);
    for (const Event& e : data.ranks[static_cast<std::size_t>(r)]) ok = ok && writer.Append(e);
    ok = ok && writer.Close();
    if (!ok) throw TraceError(RankStreamPath(dir, r).string() + ": " + writer.error());
  }
  WriteMetadata(dir, metadata);
}

namespace {
class VectorRank : public RankEventSource {
 public:
  VectorRank(const std::vector<Event>* events, int rank) : events_(events), rank_(rank) {}
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
}  // namespace

MemoryTrace::MemoryTrace(TraceData data) : data_(std::move(data)) {
  data_.metadata.nprocs = static_cast<int>(data_.ranks.size());
}

MemoryTrace::MemoryTrace(int nprocs) { Resize(nprocs); }

void MemoryTrace::Resize(int nprocs) {
  data_.ranks.resize(static_cast<std::size_t>(nprocs));
  data_.metadata.nprocs = nprocs;
}

std::unique_ptr<RankEventSource> MemoryTrace::OpenRank(int rank) const {
  return ReceivesAsCompleted(OpenRankAsRecorded(rank));
}

std::unique_ptr<RankEventSource> MemoryTrace::OpenRankAsRecorded(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(data_.ranks.size()))
    throw TraceError(description() + ": rank " + std::to_string(rank) + " out of range");
  return std::make_unique<VectorRank>(&data_.ranks[static_cast<std::size_t>(rank)], rank);
}

void ResolveWildcards(std::vector<Event>* events) {
  std::map<RequestId, std::size_t> pending;  // wildcard irecv request -> event index
  for (std::size_t i = 0; i < events->size(); ++i) {
    Event& e = (*events)[i];
    if (e.kind == EventKind::kIrecv && (e.peer == kAnySource || e.tag == kAnyTag)) {
      pending[e.request] = i;
    } else if (IsCompletion(e.kind)) {
      for (const Completion& c : e.completed) {
        auto it = pending.find(c.request);
        if (it == pending.end()) continue;
        Event& irecv = (*events)[it->second];
        if (c.peer >= 0) irecv.peer = c.peer;
        if (irecv.tag == kAnyTag && c.tag != kAnyTag) irecv.tag = c.tag;
        pending.erase(it);
      }
    }
  }
}

CommTable::CommTable(int nprocs) : nprocs_(nprocs) {}

void CommTable::Add(const Event& e, int rank) {
  auto it = std::lower_bound(comms_.begin(), comms_.end(), e.new_comm,
                             [](const auto& entry, CommId id) { return entry.first < id; });
  if (it != comms_.end() && it->first == e.new_comm) {
    if (it->second != e.members) {
      throw TraceError("rank " + std::to_string(rank) + ": communicator " +
                       std::to_string(e.new_comm) +
                       " is defined with different members than another rank saw");
    }
    return;
  }
  if (e.new_comm == kCommWorld || e.new_comm == kCommSelf) {
    throw TraceError("rank " + std::to_string(rank) + ": communicator id " +
                     std::to_string(e.new_comm) + " is reserved (world/self)");
  }
  for (std::int32_t m : e.members) {
    if (m < 0 || m >= nprocs_) {
      throw TraceError("rank " + std::to_string(rank) + ": communicator " +
                       std::to_string(e.new_comm) + " has member " + std::to_string(m) +
                       " outside 0.." + std::to_string(nprocs_ - 1));
    }
  }
  comms_.insert(it, {e.new_comm, e.members});
}

bool CommTable::Has(CommId comm) const {
  if (comm == kCommWorld || comm == kCommSelf) return true;
  return std::binary_search(comms_.begin(), comms_.end(),
                            std::make_pair(comm, std::vector<std::int32_t>{}),
                            [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::vector<std::int32_t> CommTable::Members(CommId comm, int rank) const {
  if (comm == kCommWorld) {
    std::vector<std::int32_t> all(static_cast<std::size_t>(nprocs_));
    for (int i = 0; i < nprocs_; ++i) all[static_cast<std::size_t>(i)] = i;
    return all;
  }
  if (comm == kCommSelf) return {rank};
  auto it = std::lower_bound(comms_.begin(), comms_.end(), comm,
                             [](const auto& entry, CommId id) { return entry.first < id; });
  if (it == comms_.end() || it->first != comm) {
    throw TraceError("rank " + std::to_string(rank) + ": communicator " + std::to_string(comm) +
                     " is used but was never created in the trace");
  }
  return it->second;
}

int CommTable::Size(CommId comm) const {
  if (comm == kCommWorld) return nprocs_;
  if (comm == kCommSelf) return 1;
  return static_cast<int>(Members(comm, 0).size());
}

}  // namespace pas2p
