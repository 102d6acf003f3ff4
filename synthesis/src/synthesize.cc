#include "pas2p/synthesis/synthesize.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>

#include "pas2p/core/error.h"
#include "pas2p/core/simgrid_ti.h"

namespace pas2p::synthesis {

// One slot evaluated at N.
struct SynthesizedTrace::SlotAt {
  const SlotModel* model = nullptr;
  std::optional<patterns::GeneralEquation::AtCount> peer;
  std::optional<patterns::GeneralEquation::AtCount> recv_peer;
  std::optional<patterns::CommunicatorRule::AtCount> comm;
  bool comm_is_world = true;
  CommId comm_base = 0;  // sub-communicator ids: comm_base + group index
  std::uint64_t bytes = 0, recv_bytes = 0, root_bytes = 0, root_recv_bytes = 0;
  std::int64_t cpu_ns = 0;
  std::int64_t instructions = kNotMeasured;
  struct ClassValues {
    std::string mask;
    std::int64_t cpu_ns = 0;
    std::int64_t instructions = kNotMeasured;
  };
  std::vector<ClassValues> classes;  // SlotModel::class_compute at N
};

struct SynthesizedTrace::Impl {
  std::vector<std::vector<SlotAt>> phases;  // [phase][slot]
  // Distinct sub-communicator rules: the slot that defines each (its comm_base is the id).
  std::vector<const SlotAt*> comm_defs;
};

namespace {

constexpr CommId kSynthCommBase = CommId{0x5359} << 48;  // "SY": ids of synthesized comms

std::uint64_t Round(double v) { return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v)); }

struct Pending {
  RequestId id = 0;
  bool recv = false;
  std::int32_t peer = kNoRank;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
};

class SynthRank : public RankEventSource {
 public:
  SynthRank(const SynthesizedTrace* trace, const SynthesizedTrace::Impl* impl, int rank)
      : trace_(trace), impl_(impl), rank_(rank) {}

  bool Next(Event* event) override {
    while (out_.empty()) {
      if (!Advance()) {
        status_ = StreamStatus::kComplete;
        return false;
      }
    }
    *event = std::move(out_.front());
    out_.pop_front();
    return true;
  }
  StreamStatus status() const override { return status_; }
  const std::string& message() const override { return message_; }
  int rank() const override { return rank_; }

 private:
  // Expands the next piece of the run into out_; false at the end.
  bool Advance() {
    switch (stage_) {
      case Stage::kStart: {
        Event init;
        init.kind = EventKind::kInit;
        out_.push_back(init);
        for (const auto* def : impl_->comm_defs) {
          const std::int64_t group = def->comm->GroupIndex(rank_);
          if (group < 0) continue;
          Event create;
          create.kind = EventKind::kCommCreate;
          create.comm = kCommWorld;
          create.new_comm = def->comm_base + static_cast<CommId>(group);
          create.value = static_cast<std::int64_t>(CommOrigin::kSplit);
          for (std::int64_t m : def->comm->GroupOf(rank_)) {
            create.members.push_back(static_cast<std::int32_t>(m));
          }
          out_.push_back(std::move(create));
        }
        stage_ = Stage::kBody;
        return true;
      }
      case Stage::kBody: {
        const auto& seq = trace_->sequence();
        while (seq_ < seq.size() && rep_ >= seq[seq_].second) {
          ++seq_;
          rep_ = 0;
          slot_ = 0;
        }
        if (seq_ >= seq.size()) {
          stage_ = Stage::kEnd;
          return true;
        }
        const auto& slots = impl_->phases[seq[seq_].first];
        if (slot_ == 0) StartOccurrence(slots);
        if (slot_ < slots.size()) {
          Expand(slot_, slots[slot_]);
          ++slot_;
        }
        if (slot_ >= slots.size()) {
          slot_ = 0;
          ++rep_;
        }
        return true;
      }
      case Stage::kEnd: {
        Event fin;
        fin.kind = EventKind::kFinalize;
        out_.push_back(fin);
        stage_ = Stage::kDone;
        return true;
      }
      case Stage::kDone:
        return false;
    }
    return false;
  }

  bool Present(const SynthesizedTrace::SlotAt& s) const {
    switch (s.model->presence) {
      case Presence::kAll:
        return true;
      case Presence::kHasPartner:
        return (s.peer && s.peer->NumDests(rank_) > 0) ||
               (s.recv_peer && s.recv_peer->NumDests(rank_) > 0);
      case Presence::kCommMember:
        return s.comm && s.comm->GroupIndex(rank_) >= 0;
      case Presence::kLikeSlots:
        for (int k : s.model->like_slots) {
          if (k >= 0 && static_cast<std::size_t>(k) < made_.size() && made_[k]) return true;
        }
        return false;
      case Presence::kOnlyRank0:
        return rank_ == 0;
      case Presence::kAllButRank0:
        return rank_ != 0;
    }
    return true;
  }

  // Which slots of the occurrence this rank makes (presence rules that depend on other
  // slots last), and so its class.
  void StartOccurrence(const std::vector<SynthesizedTrace::SlotAt>& slots) {
    made_.assign(slots.size(), false);
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].model->presence != Presence::kLikeSlots) made_[k] = Present(slots[k]);
    }
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].model->presence == Presence::kLikeSlots) made_[k] = Present(slots[k]);
    }
    mask_.assign(slots.size(), '0');
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (made_[k]) mask_[k] = '1';
    }
  }

  // Emits the slot's compute burst and call(s) if this rank makes the call.
  void Expand(std::size_t index, const SynthesizedTrace::SlotAt& s) {
    if (!made_[index]) return;
    const SlotModel& m = *s.model;
    std::int64_t cpu = s.cpu_ns, ins = s.instructions;
    for (const auto& c : s.classes) {
      if (c.mask == mask_) {
        cpu = c.cpu_ns;
        ins = c.instructions;
        break;
      }
    }
    if (cpu > 0 || ins > 0) out_.push_back(MakeCompute(cpu, ins));
    const EventKind kind = m.kind;
    if (kind == EventKind::kInit || kind == EventKind::kFinalize ||
        kind == EventKind::kCommCreate || kind == EventKind::kCommFree ||
        kind == EventKind::kAbort || kind == EventKind::kCompute) {
      return;  // lifecycle and communicators are generated at the start and the end
    }
    if (IsPointToPoint(kind)) {
      ExpandP2p(s);
    } else if (IsCompletion(kind)) {
      ExpandCompletion(s);
    } else if (IsCollective(kind)) {
      ExpandCollective(s);
    }
  }

  void ExpandP2p(const SynthesizedTrace::SlotAt& s) {
    const SlotModel& m = *s.model;
    std::vector<std::int64_t> dests;
    if (s.peer) dests = s.peer->Dests(rank_);
    const bool recv_kind = m.kind == EventKind::kRecv || m.kind == EventKind::kIrecv;
    if (recv_kind && m.wildcard) dests.assign(1, kAnySource);
    if (m.kind == EventKind::kSendrecv) {
      std::vector<std::int64_t> sources;
      if (s.recv_peer) sources = s.recv_peer->Dests(rank_);
      const std::size_t n = std::max<std::size_t>({dests.size(), sources.size(), 1});
      for (std::size_t i = 0; i < n; ++i) {
        Event e;
        e.kind = EventKind::kSendrecv;
        e.peer = i < dests.size() ? static_cast<std::int32_t>(dests[i]) : kProcNull;
        e.recv_peer = i < sources.size() ? static_cast<std::int32_t>(sources[i]) : kProcNull;
        e.tag = e.recv_tag = m.tag;
        e.bytes = s.bytes;
        e.recv_bytes = s.recv_bytes;
        out_.push_back(std::move(e));
      }
      return;
    }
    if (dests.empty()) dests.push_back(kProcNull);
    for (std::int64_t d : dests) {
      const auto peer = static_cast<std::int32_t>(d);
      switch (m.kind) {
        case EventKind::kSend:
          out_.push_back(MakeSend(peer, m.tag, s.bytes));
          break;
        case EventKind::kRecv:
          out_.push_back(MakeRecv(peer, m.tag, s.bytes));
          break;
        case EventKind::kIsend: {
          const RequestId id = next_request_++;
          out_.push_back(MakeIsend(peer, m.tag, s.bytes, id));
          pending_.push_back(Pending{id, false, peer, m.tag, s.bytes});
          break;
        }
        case EventKind::kIrecv: {
          const RequestId id = next_request_++;
          out_.push_back(MakeIrecv(peer, m.tag, s.bytes, id));
          pending_.push_back(Pending{id, true, peer, m.tag, s.bytes});
          break;
        }
        default:
          break;
      }
    }
  }

  void ExpandCompletion(const SynthesizedTrace::SlotAt& s) {
    const SlotModel& m = *s.model;
    std::size_t k = m.all_pending
                        ? pending_.size()
                        : std::min<std::size_t>(pending_.size(),
                                                static_cast<std::size_t>(std::max(0, m.requests)));
    Event e;
    e.kind = m.kind;
    const bool one = m.kind == EventKind::kWait || m.kind == EventKind::kWaitany ||
                     m.kind == EventKind::kTest || m.kind == EventKind::kTestany;
    for (std::size_t i = 0; i < k; ++i) e.requests.push_back(pending_[i].id);
    const std::size_t done = one ? std::min<std::size_t>(1, k) : k;
    for (std::size_t i = 0; i < done; ++i) {
      const Pending& p = pending_[i];
      Completion c;
      c.request = p.id;
      if (p.recv) {
        c.peer = p.peer;
        c.tag = p.tag;
        c.bytes = p.bytes;
      }
      e.completed.push_back(c);
    }
    if (m.kind == EventKind::kWait) e.requests.resize(done);
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
    out_.push_back(std::move(e));
  }

  void ExpandCollective(const SynthesizedTrace::SlotAt& s) {
    const SlotModel& m = *s.model;
    CommId comm = kCommWorld;
    std::int64_t size = trace_->nprocs();
    std::vector<std::int64_t> members;
    if (!s.comm_is_world) {
      const std::int64_t group = s.comm->GroupIndex(rank_);
      if (group < 0) return;  // not a member: MPI_COMM_NULL
      comm = s.comm_base + static_cast<CommId>(group);
      size = s.comm->GroupSize();
    }
    std::int32_t root = kNoRank;
    bool is_root = false;
    if (IsRooted(m.kind)) {
      std::int64_t index = m.root ? m.root->At(size) : 0;
      index = std::clamp<std::int64_t>(index, 0, size - 1);
      if (s.comm_is_world) {
        root = static_cast<std::int32_t>(index);
      } else {
        members = s.comm->GroupOf(rank_);
        root = static_cast<std::int32_t>(members[static_cast<std::size_t>(index)]);
      }
      is_root = root == rank_;
    }
    const std::uint64_t send = is_root ? s.root_bytes : s.bytes;
    const std::uint64_t recv = is_root ? s.root_recv_bytes : s.recv_bytes;
    out_.push_back(MakeCollective(m.kind, send, recv, root, comm));
  }

  enum class Stage { kStart, kBody, kEnd, kDone };
  const SynthesizedTrace* trace_;
  const SynthesizedTrace::Impl* impl_;
  int rank_;
  Stage stage_ = Stage::kStart;
  std::size_t seq_ = 0;
  std::int64_t rep_ = 0;
  std::size_t slot_ = 0;
  std::vector<bool> made_;
  std::string mask_;
  std::deque<Pending> pending_;
  RequestId next_request_ = 1;
  std::deque<Event> out_;
  StreamStatus status_ = StreamStatus::kReading;
  std::string message_;
};

}  // namespace

SynthesizedTrace::SynthesizedTrace(AppModel model, std::int64_t nprocs, const SynthOptions& options)
    : model_(std::move(model)),
      nprocs_(nprocs),
      options_(options),
      impl_(std::make_unique<Impl>()) {
  if (nprocs < 1 || nprocs > std::numeric_limits<int>::max()) {
    throw UserError("cannot synthesize a run of " + std::to_string(nprocs) + " processes");
  }
  if (!model_.valid.IsValid(nprocs)) {
    std::vector<std::int64_t> traced(model_.counts.begin(), model_.counts.end());
    patterns::RequireTarget(model_.valid, nprocs, false, traced);
  }
  metadata_.application = model_.application;
  metadata_.nprocs = static_cast<int>(nprocs);
  metadata_.source = "synthesized";
  metadata_.command = {"pas2p", "synthesize", "--target", std::to_string(nprocs)};
  if (model_.HasInstructions()) metadata_.counters = {"PAPI_TOT_INS"};
  const double p = static_cast<double>(nprocs);
  // Slots at N.
  std::map<std::string, const SlotAt*> comm_by_rule;
  impl_->phases.resize(model_.phases.size());
  CommId next_base = kSynthCommBase;
  for (std::size_t ph = 0; ph < model_.phases.size(); ++ph) {
    const PhaseModel& pm = model_.phases[ph];
    auto& slots = impl_->phases[ph];
    slots.resize(pm.slots.size());
    for (std::size_t s = 0; s < pm.slots.size(); ++s) {
      const SlotModel& sm = pm.slots[s];
      SlotAt& at = slots[s];
      at.model = &sm;
      if (sm.peer) at.peer.emplace(sm.peer->At(nprocs));
      if (sm.recv_peer) at.recv_peer.emplace(sm.recv_peer->At(nprocs));
      if (sm.communicator) {
        at.comm.emplace(sm.communicator->At(nprocs));
        at.comm_is_world = at.comm->NumGroups() == 1 && at.comm->GroupSize() == nprocs;
      }
      const int side = options_.side;
      at.bytes = Round(sm.bytes.At(p, side));
      at.recv_bytes = Round(sm.recv_bytes.At(p, side));
      at.root_bytes = Round(sm.root_bytes.At(p, side));
      at.root_recv_bytes = Round(sm.root_recv_bytes.At(p, side));
      at.cpu_ns = static_cast<std::int64_t>(Round(sm.cpu_ns.At(p, side)));
      at.instructions = sm.instructions.present
                            ? static_cast<std::int64_t>(Round(sm.instructions.At(p, side)))
                            : kNotMeasured;
      for (const auto& cc : sm.class_compute) {
        SlotAt::ClassValues v;
        v.mask = cc.mask;
        v.cpu_ns = static_cast<std::int64_t>(Round(cc.cpu_ns.At(p, side)));
        v.instructions = cc.instructions.present
                             ? static_cast<std::int64_t>(Round(cc.instructions.At(p, side)))
                             : kNotMeasured;
        at.classes.push_back(std::move(v));
      }
    }
  }
  // Communicator ids: one family per distinct rule.
  for (auto& slots : impl_->phases) {
    for (SlotAt& at : slots) {
      if (!at.comm || at.comm_is_world) continue;
      const std::string key = at.model->communicator->Describe() +
                              (at.model->communicator->only_group_of_rank0 ? "#0" : "");
      auto it = comm_by_rule.find(key);
      if (it != comm_by_rule.end()) {
        at.comm_base = it->second->comm_base;
      } else {
        at.comm_base = next_base;
        next_base += CommId{1} << 32;
        comm_by_rule[key] = &at;
        impl_->comm_defs.push_back(&at);
      }
    }
  }
  // The run.
  if (options_.only_phase >= 0) {
    if (static_cast<std::size_t>(options_.only_phase) >= model_.phases.size()) {
      throw UserError("no phase " + std::to_string(options_.only_phase) + " in the model");
    }
    if (options_.repetitions > 0) sequence_.emplace_back(options_.only_phase, options_.repetitions);
  } else {
    std::vector<double> carry(model_.phases.size(), 0.0);
    for (const auto& [ph, reps] : model_.sequence) {
      const Quantity& w = model_.phases[ph].weight;
      double traced = w.model.training.empty() ? 0 : w.model.training.back().y;
      if (w.divided_by_p && !w.model.training.empty()) traced /= w.model.training.back().p;
      const double factor = traced > 0 ? PhaseWeight(ph) / traced : 1.0;
      const double exact = static_cast<double>(reps) * factor + carry[ph];
      const auto n = static_cast<std::int64_t>(std::floor(exact + 1e-9));
      carry[ph] = exact - static_cast<double>(n);
      if (n <= 0) continue;
      if (!sequence_.empty() && sequence_.back().first == ph) {
        sequence_.back().second += n;
      } else {
        sequence_.emplace_back(ph, n);
      }
    }
  }
}

SynthesizedTrace::~SynthesizedTrace() = default;

double SynthesizedTrace::PhaseWeight(int phase) const {
  const Quantity& w = model_.phases.at(static_cast<std::size_t>(phase)).weight;
  return w.At(static_cast<double>(nprocs_), options_.weight_side);
}

std::uint64_t SynthesizedTrace::MaxEventsPerRank() const {
  std::uint64_t total = 2;
  for (const auto* def : impl_->comm_defs) (void)def, ++total;
  for (const auto& [ph, reps] : sequence_) {
    std::uint64_t per = 0;
    for (const SlotAt& s : impl_->phases[ph]) {
      std::uint64_t calls = 1;
      if (s.peer) calls = std::max<std::uint64_t>(1, s.peer->NumDests(0));
      per += 2 * calls;
    }
    total += per * static_cast<std::uint64_t>(reps);
  }
  return total;
}

std::unique_ptr<RankEventSource> SynthesizedTrace::OpenRank(int rank) const {
  if (rank < 0 || rank >= nprocs_) {
    throw TraceError(description() + ": no rank " + std::to_string(rank));
  }
  return std::make_unique<SynthRank>(this, impl_.get(), rank);
}

std::string SynthesizedTrace::description() const {
  return "synthesized " + (model_.application.empty() ? std::string("run") : model_.application) +
         " at " + std::to_string(nprocs_) + " processes";
}

std::string WriteSynthesized(const SynthesizedTrace& trace, const std::string& out_dir,
                             const std::string& format, double flops_per_second) {
  namespace fs = std::filesystem;
  if (format == "simgrid-ti") {
    TiOptions ti;
    ti.flops_per_second = flops_per_second;
    return ExportSimgridTi(trace, out_dir, ti).string();
  }
  if (format != "pas2p") {
    throw UserError("unknown output format \"" + format + "\": use pas2p or simgrid-ti");
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw UserError("cannot create the directory " + out_dir + ": " + ec.message());
  WriteMetadata(out_dir, trace.metadata());
  for (int r = 0; r < trace.nprocs(); ++r) {
    RankStreamWriter writer;
    const fs::path path = RankStreamPath(out_dir, r);
    if (!writer.Open(path, r))
      throw UserError("cannot write " + path.string() + ": " + writer.error());
    auto source = trace.OpenRank(r);
    Event e;
    while (source->Next(&e)) {
      if (!writer.Append(e)) break;
    }
    if (!writer.Close()) throw UserError("cannot write " + path.string() + ": " + writer.error());
  }
  return out_dir;
}

}  // namespace pas2p::synthesis
