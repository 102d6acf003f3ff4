#include "pas2p/core/simgrid_ti.h"

#include <algorithm>
#include <boost/regex.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace pas2p {
namespace {

namespace fs = std::filesystem;

// Tags of point-to-point messages that stand in for a collective on a sub-communicator
// (SimGrid replays collectives on MPI_COMM_WORLD only). Above any tag applications use.
constexpr std::int32_t kCollectiveTagBase = 0x3fff0000;

std::string Num(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

struct Message {
  std::int32_t peer;
  std::uint64_t bytes;
};

// One rank's export, with the request bookkeeping TI's "wait SRC DST TAG" needs.
class RankExporter {
 public:
  RankExporter(int rank, int nprocs, const CommTable& comms, const TiOptions& options,
               std::ostream& out)
      : rank_(rank), nprocs_(nprocs), comms_(comms), options_(options), out_(out) {}

  void Export(const std::vector<Event>& events) {
    bool initialized = false;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      index_ = i;
      if (!initialized && e.kind != EventKind::kInit) {
        Line("init");
        initialized = true;
      }
      Export(e);
      if (e.kind == EventKind::kInit) initialized = true;
    }
    if (!initialized) Line("init");
    if (events.empty() || events.back().kind != EventKind::kFinalize) Line("finalize");
  }

 private:
  struct Key {
    std::int32_t src, dst, tag;
  };

  void Line(const std::string& text) { out_ << rank_ << ' ' << text << '\n'; }

  [[noreturn]] void Unsupported(const std::string& what) {
    throw TraceError("rank " + std::to_string(rank_) + ": event " + std::to_string(index_) + ": " +
                     what);
  }

  void CheckPeer(std::int32_t peer) {
    if (peer < 0 || peer >= nprocs_)
      Unsupported("peer " + std::to_string(peer) + " is not a rank of this " +
                  std::to_string(nprocs_) + "-rank trace");
  }

  void Wait(RequestId request) {
    auto it = requests_.find(request);
    if (it == requests_.end()) return;  // a request we never saw (e.g. persistent): skip
    const Key& k = it->second;
    Line("wait " + std::to_string(k.src) + " " + std::to_string(k.dst) + " " +
         std::to_string(k.tag));
    requests_.erase(it);
  }

  void Export(const Event& e) {
    switch (e.kind) {
      case EventKind::kInit:
        Line("init");
        return;
      case EventKind::kFinalize:
        Line("finalize");
        return;
      case EventKind::kAbort:
      case EventKind::kCommCreate:
      case EventKind::kCommFree:
        return;  // TI has no such actions (SimGrid ignores communicators)
      case EventKind::kCompute: {
        if (e.cpu_ns <= 0) return;
        double flops = static_cast<double>(e.cpu_ns) * 1e-9 * options_.flops_per_second;
        Line("compute " + Num(std::round(flops)));
        return;
      }
      case EventKind::kSend:
        if (e.peer == kProcNull) return;
        CheckPeer(e.peer);
        Line("send " + std::to_string(e.peer) + " " + std::to_string(e.tag) + " " +
             std::to_string(e.bytes));
        return;
      case EventKind::kRecv:
        if (e.peer == kProcNull) return;
        CheckPeer(e.peer);
        Line("recv " + std::to_string(e.peer) + " " + std::to_string(e.tag) + " " +
             std::to_string(e.bytes));
        return;
      case EventKind::kIsend:
        if (e.peer == kProcNull) return;
        CheckPeer(e.peer);
        Line("isend " + std::to_string(e.peer) + " " + std::to_string(e.tag) + " " +
             std::to_string(e.bytes));
        requests_[e.request] = Key{rank_, e.peer, e.tag};
        return;
      case EventKind::kIrecv:
        if (e.peer == kProcNull) return;
        if (e.peer < 0) Unsupported("wildcard receive whose source never became known");
        CheckPeer(e.peer);
        Line("irecv " + std::to_string(e.peer) + " " + std::to_string(e.tag) + " " +
             std::to_string(e.bytes));
        requests_[e.request] = Key{e.peer, rank_, e.tag};
        return;
      case EventKind::kSendrecv: {
        // isend + recv + wait keeps the tags (TI's sendRecv has none).
        if (e.peer != kProcNull) {
          CheckPeer(e.peer);
          Line("isend " + std::to_string(e.peer) + " " + std::to_string(e.tag) + " " +
               std::to_string(e.bytes));
        }
        if (e.recv_peer != kProcNull) {
          CheckPeer(e.recv_peer);
          Line("recv " + std::to_string(e.recv_peer) + " " + std::to_string(e.recv_tag) + " " +
               std::to_string(e.recv_bytes));
        }
        if (e.peer != kProcNull)
          Line("wait " + std::to_string(rank_) + " " + std::to_string(e.peer) + " " +
               std::to_string(e.tag));
        return;
      }
      case EventKind::kWaitall: {
        // "waitall" in TI waits for every outstanding request; use it only when that is
        // what the call did.
        std::vector<RequestId> known;
        for (RequestId r : e.requests)
          if (requests_.count(r)) known.push_back(r);
        if (!known.empty() && known.size() == requests_.size()) {
          Line("waitall");
          requests_.clear();
        } else {
          for (RequestId r : known) Wait(r);
        }
        return;
      }
      default:
        break;
    }
    if (IsCompletion(e.kind)) {
      for (const Completion& c : e.completed) Wait(c.request);
      return;
    }
    if (IsCollective(e.kind)) return ExportCollective(e);
    Unsupported("event kind " + std::string(EventKindName(e.kind)) + " has no TI form");
  }

  void ExportCollective(const Event& e) {
    const bool world = e.comm == kCommWorld;
    const int c = comms_.Size(e.comm);
    auto per_peer = [c](std::uint64_t total) { return total / static_cast<std::uint64_t>(c); };
    auto counts = [](const std::vector<std::uint64_t>& v, int n) {
      std::string s;
      for (int i = 0; i < n; ++i)
        s += " " +
             std::to_string(i < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(i)] : 0);
      return s;
    };
    const std::string root = std::to_string(e.peer < 0 ? 0 : e.peer);
    const std::uint64_t buffer = std::max(e.send_bytes, e.recv_bytes);
    if (world) {
      switch (e.kind) {
        case EventKind::kBarrier:
          return Line("barrier");
        case EventKind::kBcast:
          return Line("bcast " + std::to_string(buffer) + " " + root);
        case EventKind::kReduce:
          return Line("reduce " + std::to_string(e.send_bytes) + " 0 " + root);
        case EventKind::kAllreduce:
          return Line("allreduce " + std::to_string(e.send_bytes) + " 0");
        case EventKind::kAlltoall:
          return Line("alltoall " + std::to_string(per_peer(e.send_bytes)) + " " +
                      std::to_string(per_peer(e.recv_bytes)));
        case EventKind::kAlltoallv:
          return Line("alltoallv " + std::to_string(e.send_bytes) + counts(e.send_counts, c) + " " +
                      std::to_string(e.recv_bytes) + counts(e.recv_counts, c));
        case EventKind::kGather: {
          std::uint64_t r = e.recv_bytes ? per_peer(e.recv_bytes) : e.send_bytes;
          return Line("gather " + std::to_string(e.send_bytes) + " " + std::to_string(r) + " " +
                      root);
        }
        case EventKind::kGatherv:
          return Line("gatherv " + std::to_string(e.send_bytes) + counts(e.recv_counts, c) + " " +
                      root);
        case EventKind::kScatter: {
          std::uint64_t s = e.send_bytes ? per_peer(e.send_bytes) : e.recv_bytes;
          return Line("scatter " + std::to_string(s) + " " + std::to_string(e.recv_bytes) + " " +
                      root);
        }
        case EventKind::kScatterv:
          return Line("scatterv" + counts(e.send_counts, c) + " " + std::to_string(e.recv_bytes) +
                      " " + root);
        case EventKind::kAllgather:
          return Line("allgather " + std::to_string(e.send_bytes) + " " +
                      std::to_string(per_peer(e.recv_bytes)));
        case EventKind::kAllgatherv:
          return Line("allgatherv " + std::to_string(e.send_bytes) + counts(e.recv_counts, c));
        case EventKind::kReduceScatter: {
          std::vector<std::uint64_t> rc = e.recv_counts;
          if (rc.empty()) rc.assign(static_cast<std::size_t>(c), e.recv_bytes);
          return Line("reducescatter" + counts(rc, c) + " 0");
        }
        default:
          break;  // scan, exscan: expanded below
      }
    }
    ExpandToPointToPoint(e, c);
  }

  // A collective as point-to-point messages among its members (flat trees; scan as a
  // chain), the cross-check of paper 004. Used where TI cannot say it natively.
  void ExpandToPointToPoint(const Event& e, int c) {
    const std::vector<std::int32_t> m = comms_.Members(e.comm, rank_);
    const auto me_it = std::find(m.begin(), m.end(), rank_);
    if (me_it == m.end())
      Unsupported("collective on communicator " + std::to_string(e.comm) +
                  " which does not contain this rank");
    const int me = static_cast<int>(me_it - m.begin());
    int root = 0;
    if (IsRooted(e.kind)) {
      auto r = std::find(m.begin(), m.end(), e.peer);
      if (r == m.end())
        Unsupported("root " + std::to_string(e.peer) + " is not a member of communicator " +
                    std::to_string(e.comm));
      root = static_cast<int>(r - m.begin());
    }
    const std::int32_t tag = kCollectiveTagBase + static_cast<std::int32_t>(e.kind);
    const std::uint64_t buffer = std::max(e.send_bytes, e.recv_bytes);
    auto at = [&m](int i) { return m[static_cast<std::size_t>(i)]; };
    auto block = [c](const std::vector<std::uint64_t>& v, int j, std::uint64_t total) {
      return j < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(j)]
                                            : total / static_cast<std::uint64_t>(c);
    };
    std::vector<Message> sends, recvs;
    auto fan_in = [&](std::uint64_t bytes) {  // everyone -> root
      if (me == root) {
        for (int j = 0; j < c; ++j)
          if (j != root) recvs.push_back({at(j), bytes});
      } else {
        sends.push_back({at(root), bytes});
      }
    };
    auto fan_out = [&](std::uint64_t bytes) {  // root -> everyone
      if (me == root) {
        for (int j = 0; j < c; ++j)
          if (j != root) sends.push_back({at(j), bytes});
      } else {
        recvs.push_back({at(root), bytes});
      }
    };
    switch (e.kind) {
      case EventKind::kBarrier:
        fan_in(0);
        Stage(sends, recvs, tag);
        fan_out(0);
        break;
      case EventKind::kBcast:
        fan_out(buffer);
        break;
      case EventKind::kReduce:
        fan_in(e.send_bytes);
        break;
      case EventKind::kAllreduce:
        fan_in(e.send_bytes);
        Stage(sends, recvs, tag);
        fan_out(e.send_bytes);
        break;
      case EventKind::kGather:
      case EventKind::kGatherv:
        if (me == root) {
          for (int j = 0; j < c; ++j)
            if (j != root) recvs.push_back({at(j), block(e.recv_counts, j, e.recv_bytes)});
        } else {
          sends.push_back({at(root), e.send_bytes});
        }
        break;
      case EventKind::kScatter:
      case EventKind::kScatterv:
        if (me == root) {
          for (int j = 0; j < c; ++j)
            if (j != root) sends.push_back({at(j), block(e.send_counts, j, e.send_bytes)});
        } else {
          recvs.push_back({at(root), e.recv_bytes});
        }
        break;
      case EventKind::kAllgather:
      case EventKind::kAllgatherv:
        for (int j = 0; j < c; ++j) {
          if (j == me) continue;
          sends.push_back({at(j), e.send_bytes});
          recvs.push_back({at(j), block(e.recv_counts, j, e.recv_bytes)});
        }
        break;
      case EventKind::kAlltoall:
      case EventKind::kAlltoallv:
        for (int j = 0; j < c; ++j) {
          if (j == me) continue;
          sends.push_back({at(j), block(e.send_counts, j, e.send_bytes)});
          recvs.push_back({at(j), block(e.recv_counts, j, e.recv_bytes)});
        }
        break;
      case EventKind::kReduceScatter:
        // Direct reduce-scatter: block j of every rank's buffer goes to rank j.
        for (int j = 0; j < c; ++j) {
          if (j == me) continue;
          sends.push_back({at(j), block(e.recv_counts, j, e.send_bytes)});
          recvs.push_back({at(j), e.recv_bytes});
        }
        break;
      case EventKind::kScan:
      case EventKind::kExscan:
        if (me > 0) recvs.push_back({at(me - 1), buffer});
        Stage(sends, recvs, tag);
        if (me + 1 < c) sends.push_back({at(me + 1), buffer});
        break;
      default:
        Unsupported("collective " + std::string(EventKindName(e.kind)) + " has no TI form");
    }
    Stage(sends, recvs, tag);
  }

  // Posts all receives, then all sends, then waits for each: no ordering deadlock.
  // Clears both lists afterwards, ready for the next stage.
  void Stage(std::vector<Message>& sends, std::vector<Message>& recvs, std::int32_t tag) {
    for (const Message& r : recvs)
      Line("irecv " + std::to_string(r.peer) + " " + std::to_string(tag) + " " +
           std::to_string(r.bytes));
    for (const Message& s : sends)
      Line("isend " + std::to_string(s.peer) + " " + std::to_string(tag) + " " +
           std::to_string(s.bytes));
    for (const Message& r : recvs)
      Line("wait " + std::to_string(r.peer) + " " + std::to_string(rank_) + " " +
           std::to_string(tag));
    for (const Message& s : sends)
      Line("wait " + std::to_string(rank_) + " " + std::to_string(s.peer) + " " +
           std::to_string(tag));
    sends.clear();
    recvs.clear();
  }

  int rank_;
  int nprocs_;
  const CommTable& comms_;
  const TiOptions& options_;
  std::ostream& out_;
  std::size_t index_ = 0;
  std::map<RequestId, Key> requests_;
};

}  // namespace

fs::path ExportSimgridTi(const TraceSource& source, const fs::path& out_dir,
                         const TiOptions& options) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw TraceError(out_dir.string() + ": cannot create: " + ec.message());
  const int nprocs = source.nprocs();
  // Pass 1: communicators (needed to expand sub-communicator collectives).
  CommTable comms(nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto reader = source.OpenRank(r);
    Event e;
    while (reader->Next(&e))
      if (e.kind == EventKind::kCommCreate) comms.Add(e, r);
    if (reader->status() != StreamStatus::kComplete) throw TraceError(reader->message());
  }
  // Pass 2: one rank at a time.
  fs::path list = out_dir / "traces.list";
  std::ofstream list_out(list);
  if (!list_out) throw TraceError(list.string() + ": cannot write");
  for (int r = 0; r < nprocs; ++r) {
    auto reader = source.OpenRank(r);
    std::vector<Event> events;
    Event e;
    while (reader->Next(&e)) events.push_back(std::move(e));
    ResolveWildcards(&events);
    fs::path file = out_dir / ("rank-" + std::to_string(r) + ".txt");
    std::ofstream out(file);
    if (!out) throw TraceError(file.string() + ": cannot write");
    RankExporter(r, nprocs, comms, options, out).Export(events);
    if (!out) throw TraceError(file.string() + ": write failed");
    list_out << fs::absolute(file).string() << '\n';
  }
  return list;
}

// ---------------------------------------------------------------------------------------
// Import.

namespace {

fs::path FindListFile(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "traces.list")) return path / "traces.list";
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.path().extension() == ".list") return entry.path();
    }
  }
  return {};
}

// The files a list names, relative ones resolved against the list's folder; at most
// max_files of them (probing a file that may be anything reads just its first entry). A line
// that cannot be a path (any text file passes through here when it is probed) is kept as it
// is, and the caller's open of it fails with its name.
std::vector<fs::path> ReadList(const fs::path& list,
                               std::size_t max_files = static_cast<std::size_t>(-1)) {
  std::ifstream in(list);
  std::vector<fs::path> files;
  std::string line;
  while (files.size() < max_files && std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty() || line[0] == '#') continue;
    fs::path p(line);
    std::error_code ec;
    if (p.is_relative() && fs::exists(list.parent_path() / p, ec)) p = list.parent_path() / p;
    files.push_back(p);
  }
  return files;
}

class TiRankReader : public RankEventSource {
 public:
  TiRankReader(fs::path file, int rank, int nprocs, bool shared, const TiOptions& options)
      : file_(std::move(file)),
        rank_(rank),
        nprocs_(nprocs),
        shared_(shared),
        options_(options),
        in_(file_) {
    if (!in_) throw TraceError(file_.string() + ": rank " + std::to_string(rank) + ": cannot open");
  }

  bool Next(Event* event) override {
    if (status_ != StreamStatus::kReading) return false;
    std::string line;
    while (std::getline(in_, line)) {
      ++line_no_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#') continue;
      if (Parse(line, event)) return true;
    }
    if (in_.bad()) {
      status_ = StreamStatus::kCorrupt;
      message_ = file_.string() + ": rank " + std::to_string(rank_) + ": read error after line " +
                 std::to_string(line_no_);
      return false;
    }
    status_ = StreamStatus::kComplete;
    return false;
  }
  StreamStatus status() const override { return status_; }
  const std::string& message() const override { return message_; }
  int rank() const override { return rank_; }

 private:
  [[noreturn]] void Error(const std::string& line, const std::string& expected) const {
    throw TraceError(file_.string() + ":" + std::to_string(line_no_) + ": rank " +
                     std::to_string(rank_) + ": \"" + line + "\": " + expected);
  }

  std::uint64_t Count(const std::string& line, const std::vector<std::string>& t, std::size_t i,
                      const char* what) const {
    if (i >= t.size()) Error(line, std::string("missing ") + what);
    static const boost::regex kNumber(R"([0-9]+(\.[0-9]*)?([eE][+]?[0-9]+)?)");
    if (!boost::regex_match(t[i], kNumber))
      Error(line,
            std::string("expected a non-negative number for ") + what + ", found \"" + t[i] + "\"");
    return static_cast<std::uint64_t>(std::llround(std::stod(t[i]) * type_bytes_));
  }
  std::int32_t Int(const std::string& line, const std::vector<std::string>& t, std::size_t i,
                   const char* what) const {
    if (i >= t.size()) Error(line, std::string("missing ") + what);
    static const boost::regex kInt(R"(-?[0-9]+)");
    if (!boost::regex_match(t[i], kInt))
      Error(line, std::string("expected an integer for ") + what + ", found \"" + t[i] + "\"");
    return static_cast<std::int32_t>(std::stol(t[i]));
  }
  std::int32_t Rank(const std::string& line, const std::vector<std::string>& t, std::size_t i,
                    const char* what) const {
    std::int32_t r = Int(line, t, i, what);
    if (r < 0 || r >= nprocs_)
      Error(line, std::string(what) + " " + std::to_string(r) + " is not a rank (0.." +
                      std::to_string(nprocs_ - 1) + ")");
    return r;
  }
  std::vector<std::uint64_t> Counts(const std::string& line, const std::vector<std::string>& t,
                                    std::size_t first, const char* what) const {
    std::vector<std::uint64_t> v;
    for (int i = 0; i < nprocs_; ++i)
      v.push_back(Count(line, t, first + static_cast<std::size_t>(i), what));
    return v;
  }

  bool Parse(const std::string& line, Event* out) {
    std::istringstream words(line);
    std::vector<std::string> t;
    for (std::string w; words >> w;) t.push_back(w);
    if (t.size() < 2) Error(line, "expected \"RANK ACTION [ARGS...]\"");
    const std::int32_t who = Int(line, t, 0, "rank");
    if (who != rank_) {
      if (shared_) return false;
      Error(line, "line of rank " + std::to_string(who) + " in the file of rank " +
                      std::to_string(rank_));
    }
    const std::string& a = t[1];
    Event e;
    auto collective = [&](EventKind kind, std::uint64_t send, std::uint64_t recv,
                          std::int32_t root) { e = MakeCollective(kind, send, recv, root); };
    const std::uint64_t n = static_cast<std::uint64_t>(nprocs_);
    if (a == "init") {
      if (t.size() > 2) type_bytes_ = 8;  // "init 1": MPI_DOUBLE is the default type
      e.kind = EventKind::kInit;
    } else if (a == "finalize") {
      e.kind = EventKind::kFinalize;
    } else if (a == "compute") {
      double flops = static_cast<double>(Count(line, t, 2, "flops")) / type_bytes_;
      e = MakeCompute(std::llround(flops / options_.flops_per_second * 1e9));
    } else if (a == "sleep") {
      if (t.size() < 3) Error(line, "missing seconds");
      e = MakeCompute(std::llround(std::stod(t[2]) * 1e9));
    } else if (a == "send" || a == "recv" || a == "isend" || a == "irecv") {
      std::int32_t peer = Rank(line, t, 2, "peer");
      std::int32_t tag = Int(line, t, 3, "tag");
      std::uint64_t bytes = Count(line, t, 4, "count");
      if (a == "send") e = MakeSend(peer, tag, bytes);
      if (a == "recv") e = MakeRecv(peer, tag, bytes);
      if (a == "isend" || a == "irecv") {
        RequestId id = ++next_request_;
        e = a == "isend" ? MakeIsend(peer, tag, bytes, id) : MakeIrecv(peer, tag, bytes, id);
        pending_.push_back({a == "isend" ? rank_ : peer, a == "isend" ? peer : rank_, tag, id});
      }
    } else if (a == "wait" || a == "test") {
      std::int32_t src = Int(line, t, 2, "source"), dst = Int(line, t, 3, "destination"),
                   tag = Int(line, t, 4, "tag");
      e.kind = a == "wait" ? EventKind::kWait : EventKind::kTest;
      for (auto it = pending_.begin(); it != pending_.end(); ++it) {
        if (it->src == src && it->dst == dst && it->tag == tag) {
          e.requests = {it->id};
          e.completed = {
              Completion{it->id, src == rank_ ? kNoRank : src, src == rank_ ? kAnyTag : tag, 0}};
          pending_.erase(it);
          break;
        }
      }
    } else if (a == "waitall") {
      e.kind = EventKind::kWaitall;
      for (const auto& p : pending_) {
        e.requests.push_back(p.id);
        e.completed.push_back(Completion{p.id, p.src == rank_ ? kNoRank : p.src,
                                         p.src == rank_ ? kAnyTag : p.tag, 0});
      }
      pending_.clear();
    } else if (a == "sendRecv") {
      e.kind = EventKind::kSendrecv;
      e.bytes = Count(line, t, 2, "send count");
      e.peer = Rank(line, t, 3, "destination");
      e.recv_bytes = Count(line, t, 4, "receive count");
      e.recv_peer = Rank(line, t, 5, "source");
    } else if (a == "barrier") {
      collective(EventKind::kBarrier, 0, 0, kNoRank);
    } else if (a == "bcast") {
      std::uint64_t size = Count(line, t, 2, "size");
      std::int32_t root = t.size() > 3 ? Rank(line, t, 3, "root") : 0;
      collective(EventKind::kBcast, root == rank_ ? size : 0, root == rank_ ? 0 : size, root);
    } else if (a == "reduce") {
      std::uint64_t size = Count(line, t, 2, "size");
      std::int32_t root = t.size() > 4 ? Rank(line, t, 4, "root") : 0;
      collective(EventKind::kReduce, size, root == rank_ ? size : 0, root);
    } else if (a == "allreduce") {
      std::uint64_t size = Count(line, t, 2, "size");
      collective(EventKind::kAllreduce, size, size, kNoRank);
    } else if (a == "alltoall") {
      collective(EventKind::kAlltoall, Count(line, t, 2, "send size") * n,
                 Count(line, t, 3, "receive size") * n, kNoRank);
    } else if (a == "alltoallv") {
      collective(EventKind::kAlltoallv, 0, 0, kNoRank);
      e.send_counts = Counts(line, t, 3, "send count");
      e.recv_counts = Counts(line, t, 4 + n, "receive count");
      for (auto c : e.send_counts) e.send_bytes += c;
      for (auto c : e.recv_counts) e.recv_bytes += c;
    } else if (a == "gather" || a == "scatter") {
      std::uint64_t s = Count(line, t, 2, "send size"), r = Count(line, t, 3, "receive size");
      std::int32_t root = t.size() > 4 ? Rank(line, t, 4, "root") : 0;
      if (a == "gather")
        collective(EventKind::kGather, s, root == rank_ ? r * n : 0, root);
      else
        collective(EventKind::kScatter, root == rank_ ? s * n : 0, r, root);
    } else if (a == "allgather") {
      collective(EventKind::kAllgather, Count(line, t, 2, "send size"),
                 Count(line, t, 3, "receive size") * n, kNoRank);
    } else if (a == "gatherv" || a == "allgatherv") {
      std::uint64_t s = Count(line, t, 2, "send size");
      auto rc = Counts(line, t, 3, "receive count");
      std::int32_t root = kNoRank;
      if (a == "gatherv") root = t.size() > 3 + n ? Rank(line, t, 3 + n, "root") : 0;
      bool reads = a == "allgatherv" || root == rank_;
      collective(a == "gatherv" ? EventKind::kGatherv : EventKind::kAllgatherv, s, 0, root);
      if (reads) {
        e.recv_counts = rc;
        for (auto c : rc) e.recv_bytes += c;
      }
    } else if (a == "scatterv") {
      auto sc = Counts(line, t, 2, "send count");
      std::uint64_t r = Count(line, t, 2 + n, "receive size");
      std::int32_t root = t.size() > 3 + n ? Rank(line, t, 3 + n, "root") : 0;
      collective(EventKind::kScatterv, 0, r, root);
      if (root == rank_) {
        e.send_counts = sc;
        for (auto c : sc) e.send_bytes += c;
      }
    } else if (a == "reducescatter") {
      auto rc = Counts(line, t, 2, "receive count");
      collective(EventKind::kReduceScatter, 0, rc[static_cast<std::size_t>(rank_)], kNoRank);
      for (auto c : rc) e.send_bytes += c;
      e.recv_counts = rc;
    } else if (a == "scan" || a == "exscan") {
      std::uint64_t size = Count(line, t, 2, "size");
      collective(a == "scan" ? EventKind::kScan : EventKind::kExscan, size, size, kNoRank);
    } else if (a == "comm_size" || a == "comm_split" || a == "comm_dup" || a == "location") {
      return false;  // SimGrid parses and ignores these
    } else {
      Error(line, "unknown TI action \"" + a +
                      "\" (expected init, finalize, compute, sleep, send, isend, recv, irecv, "
                      "wait, waitall, test, sendRecv, barrier, bcast, reduce, allreduce, "
                      "alltoall(v), gather(v), scatter(v), allgather(v), reducescatter, scan, "
                      "exscan)");
    }
    *out = std::move(e);
    return true;
  }

  struct Pending {
    std::int32_t src, dst, tag;
    RequestId id;
  };

  fs::path file_;
  int rank_;
  int nprocs_;
  bool shared_;
  TiOptions options_;
  std::ifstream in_;
  std::size_t line_no_ = 0;
  double type_bytes_ = 1;
  RequestId next_request_ = 0;
  std::vector<Pending> pending_;
  StreamStatus status_ = StreamStatus::kReading;
  std::string message_;
};

class TiTrace : public TraceSource {
 public:
  TiTrace(fs::path list, const TiOptions& options) : list_(std::move(list)), options_(options) {
    files_ = ReadList(list_);
    if (files_.empty()) throw TraceError(list_.string() + ": the TI list file names no trace");
    for (const auto& f : files_)
      if (!fs::exists(f))
        throw TraceError(list_.string() + ": names " + f.string() + ", which does not exist");
    metadata_.source = "simgrid-ti";
    metadata_.application = list_.parent_path().filename().string();
    if (files_.size() > 1) {
      metadata_.nprocs = static_cast<int>(files_.size());
    } else {
      // One shared file: the ranks are the distinct rank ids in it.
      std::ifstream in(files_[0]);
      int max_rank = -1;
      for (std::string line; std::getline(in, line);) {
        std::istringstream w(line);
        int r;
        if (w >> r) max_rank = std::max(max_rank, r);
      }
      metadata_.nprocs = max_rank + 1;
      shared_ = true;
    }
    if (metadata_.nprocs <= 0) throw TraceError(files_[0].string() + ": no TI actions found");
  }
  const TraceMetadata& metadata() const override { return metadata_; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override {
    if (rank < 0 || rank >= metadata_.nprocs)
      throw TraceError(list_.string() + ": rank " + std::to_string(rank) + " out of range");
    const fs::path& f = shared_ ? files_[0] : files_[static_cast<std::size_t>(rank)];
    return std::make_unique<TiRankReader>(f, rank, metadata_.nprocs, shared_, options_);
  }
  std::string description() const override { return list_.string(); }

 private:
  fs::path list_;
  TiOptions options_;
  std::vector<fs::path> files_;
  bool shared_ = false;
  TraceMetadata metadata_;
};

}  // namespace

bool IsSimgridTi(const fs::path& path) {
  fs::path list = FindListFile(path);
  if (list.empty()) return false;
  if (list.filename() == kMetadataFileName) return false;
  // A list file names existing files, and the first of them starts with "RANK ACTION".
  auto files = ReadList(list, 1);
  std::error_code ec;
  if (files.empty() || !fs::is_regular_file(files[0], ec)) return false;
  std::ifstream in(files[0]);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    static const boost::regex kAction(R"(\s*[0-9]+\s+[A-Za-z_]+.*)");
    return boost::regex_match(line, kAction);
  }
  return false;
}

std::unique_ptr<TraceSource> OpenSimgridTi(const fs::path& path, const TiOptions& options) {
  fs::path list = FindListFile(path);
  if (list.empty())
    throw TraceError(path.string() + ": not a SimGrid TI trace (no list file found)");
  return std::make_unique<TiTrace>(list, options);
}

}  // namespace pas2p
