#include "pas2p/phases/signature.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"

namespace pas2p::phases {

using Json = nlohmann::ordered_json;

void Stats::Add(double x) {
  ++n;
  if (n == 1) {
    mean = x;
    m2 = 0;
    min = max = x;
    return;
  }
  const double delta = x - mean;
  mean += delta / static_cast<double>(n);
  m2 += delta * (x - mean);
  min = std::min(min, x);
  max = std::max(max, x);
}

void Stats::Merge(const Stats& o) {
  if (o.n == 0) return;
  if (n == 0) {
    *this = o;
    return;
  }
  const double na = static_cast<double>(n);
  const double nb = static_cast<double>(o.n);
  const double delta = o.mean - mean;
  const double total = na + nb;
  mean += delta * nb / total;
  m2 += o.m2 + delta * delta * na * nb / total;
  n += o.n;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

std::string_view RootStepName(RootStep step) {
  switch (step) {
    case RootStep::kFixed:
      return "fixed";
    case RootStep::kNext:
      return "next";
    case RootStep::kPrevious:
      return "previous";
    case RootStep::kSame:
      return "same";
  }
  return "fixed";
}

bool ParseRootStep(std::string_view name, RootStep* step) {
  for (RootStep s : {RootStep::kFixed, RootStep::kNext, RootStep::kPrevious, RootStep::kSame}) {
    if (name == RootStepName(s)) {
      *step = s;
      return true;
    }
  }
  return false;
}

double Stats::stddev() const {
  return n > 1 ? std::sqrt(std::max(0.0, m2 / static_cast<double>(n - 1))) : 0;
}

const Phase* Signature::FindPhase(int id) const {
  for (const Phase& p : phases) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

namespace {

Json StatsJson(const Stats& s) {
  return Json{{"mean", s.mean}, {"stddev", s.stddev()}, {"min", s.min}, {"max", s.max}, {"n", s.n},
              {"m2", s.m2}};
}

Stats StatsFrom(const Json& j) {
  Stats s;
  s.n = j.at("n").get<std::int64_t>();
  s.mean = j.at("mean").get<double>();
  if (j.contains("m2")) {
    s.m2 = j.at("m2").get<double>();
  } else {
    const double sd = j.at("stddev").get<double>();
    s.m2 = s.n > 1 ? sd * sd * static_cast<double>(s.n - 1) : 0;
  }
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  return s;
}

Json ComputeJson(const ComputeStats& c) {
  Json j{{"cpu_ns", StatsJson(c.cpu_ns)},
         {"instructions", StatsJson(c.instructions)},
         {"cycles", StatsJson(c.cycles)}};
  // The occurrence-shared part only where it was measured (older readers ignore it).
  if (c.occurrence_cpu_ns.n > 0) {
    j["occurrence_cpu_ns"] = StatsJson(c.occurrence_cpu_ns);
    j["residual_cpu_ns"] = StatsJson(c.residual_cpu_ns);
    j["occurrence_ranks"] = c.occurrence_ranks;
    if (!c.residual_shape.empty()) j["residual_shape"] = c.residual_shape;
  }
  return j;
}

ComputeStats ComputeFrom(const Json& j) {
  ComputeStats c;
  c.cpu_ns = StatsFrom(j.at("cpu_ns"));
  c.instructions = StatsFrom(j.at("instructions"));
  c.cycles = StatsFrom(j.at("cycles"));
  if (j.contains("occurrence_cpu_ns")) {
    c.occurrence_cpu_ns = StatsFrom(j.at("occurrence_cpu_ns"));
    c.residual_cpu_ns = StatsFrom(j.at("residual_cpu_ns"));
    c.occurrence_ranks = j.at("occurrence_ranks").get<std::int32_t>();
    if (j.contains("residual_shape")) {
      c.residual_shape = j.at("residual_shape").get<std::vector<float>>();
    }
  }
  return c;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// The run's phase order.

namespace {

__extension__ typedef __int128 Int128;

bool Even(std::int64_t total, std::int64_t executions) {
  return executions <= 1 || total % executions == 0;
}

// The same count in every execution: an even total, and no first execution of its own.
bool Uniform(const SequenceItem& item, std::int64_t executions) {
  return Even(item.total, executions) && (item.counts.empty() || executions <= 1);
}

// Whether a and b (the items of bodies that run `ea` and `eb` times) make the same calls in
// every execution, each with an even count.
bool SamePerExecution(const Sequence& a, std::int64_t ea, const Sequence& b, std::int64_t eb) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const SequenceItem& x = a[i];
    const SequenceItem& y = b[i];
    if (x.phase != y.phase || !Uniform(x, ea) || !Uniform(y, eb)) return false;
    if (x.total / std::max<std::int64_t>(1, ea) != y.total / std::max<std::int64_t>(1, eb)) {
      return false;
    }
    if (x.is_loop() && !SamePerExecution(x.body, x.total, y.body, y.total)) return false;
  }
  return true;
}

// The items of a body that ran `from` times (every count even), for a body that runs `to`
// times with the same counts per execution.
void Rescale(Sequence* items, std::int64_t from, std::int64_t to) {
  for (SequenceItem& item : *items) {
    const std::int64_t old_total = item.total;
    item.total = old_total / std::max<std::int64_t>(1, from) * to;
    if (item.is_loop()) Rescale(&item.body, old_total, item.total);
  }
}

void AppendItem(Sequence* out, SequenceItem item, std::int64_t executions) {
  if (!out->empty()) {
    SequenceItem& back = out->back();
    const bool even = Uniform(back, executions) && Uniform(item, executions);
    if (even && !back.is_loop() && back.phase == item.phase) {
      back.total += item.total;
      back.counts.clear();
      return;
    }
    if (even && back.is_loop() && item.is_loop() &&
        SamePerExecution(back.body, back.total, item.body, item.total)) {
      const std::int64_t joined = back.total + item.total;
      Rescale(&back.body, back.total, joined);
      back.total = joined;
      back.counts.clear();
      return;
    }
  }
  out->push_back(std::move(item));
}

void AddTotals(const Sequence& items, std::map<int, std::int64_t>* totals) {
  for (const SequenceItem& item : items) {
    if (item.is_loop()) {
      AddTotals(item.body, totals);
    } else {
      (*totals)[item.phase] += item.total;
    }
  }
}

void AddPhases(const Sequence& items, std::vector<int>* order, std::set<int>* seen) {
  for (const SequenceItem& item : items) {
    if (item.is_loop()) {
      AddPhases(item.body, order, seen);
    } else if (seen->insert(item.phase).second) {
      order->push_back(item.phase);
    }
  }
}

void Expand(const Sequence& items, std::int64_t executions, std::int64_t k, std::size_t limit,
            std::vector<int>* out) {
  for (const SequenceItem& item : items) {
    const std::int64_t count = SequenceCountAt(item.total, executions, k, item.counts);
    if (!item.is_loop()) {
      for (std::int64_t i = 0; i < count && out->size() < limit; ++i) out->push_back(item.phase);
      continue;
    }
    const std::int64_t base = SequenceFirstAt(item.total, executions, k, item.counts);
    for (std::int64_t i = 0; i < count && out->size() < limit; ++i) {
      Expand(item.body, item.total, base + i, limit, out);
    }
    if (out->size() >= limit) return;
  }
}

std::string CountText(std::int64_t total, std::int64_t executions) {
  if (Even(total, executions)) return std::to_string(total / std::max<std::int64_t>(1, executions));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g",
                static_cast<double>(total) / static_cast<double>(executions));
  return buf;
}

std::string Format(const Sequence& items, std::int64_t executions) {
  std::string out;
  for (const SequenceItem& item : items) {
    if (!out.empty()) out += ", ";
    const std::string count = CountText(item.total, executions);
    if (item.is_loop()) {
      out.push_back('(');
      out.append(Format(item.body, item.total));
      out.push_back(')');
    } else {
      out.append(std::to_string(item.phase));
    }
    if (item.is_loop() || count != "1") out.append(" x").append(count);
    if (!item.counts.empty() && executions > 1) {
      // The executions' own counts: "x9.5 {18, 1, 18, 1}" (at most 8 shown).
      const std::int64_t shown = std::min<std::int64_t>(executions, 8);
      out.append(" {");
      for (std::int64_t k = 0; k < shown; ++k) {
        if (k) out.append(", ");
        out.append(std::to_string(SequenceCountAt(item.total, executions, k, item.counts)));
      }
      out.append(shown < executions ? ", ...}" : "}");
    }
  }
  return out;
}

Json SequenceJson(const Sequence& items, std::int64_t executions) {
  Json out = Json::array();
  for (const SequenceItem& item : items) {
    const bool even = Uniform(item, executions);
    const std::int64_t count = item.total / std::max<std::int64_t>(1, executions);
    if (!item.is_loop()) {
      Json run = Json::array({item.phase, count});
      if (!even) run.push_back(item.total);
      if (!item.counts.empty()) run.push_back(item.counts);
      out.push_back(std::move(run));
      continue;
    }
    Json loop;
    loop["loop"] = count;
    if (!even) loop["total"] = item.total;
    if (!item.counts.empty()) loop["counts"] = item.counts;
    loop["body"] = SequenceJson(item.body, item.total);
    out.push_back(std::move(loop));
  }
  return out;
}

// An item's listed counts: a list of counts, or (older files) one first execution's count.
std::vector<std::int64_t> CountsFrom(const Json& j, const std::string& origin, const Json& item) {
  std::vector<std::int64_t> out;
  if (j.is_number_integer()) {
    out.push_back(j.get<std::int64_t>());
  } else if (j.is_array() && j.size() <= SequenceItem::kMaxListedCounts) {
    for (const Json& c : j) {
      if (!c.is_number_integer()) break;
      out.push_back(c.get<std::int64_t>());
    }
    if (out.size() == j.size() && !out.empty()) return out;
    out.clear();
  }
  if (out.empty()) {
    throw TraceError(origin + ": sequence item " + item.dump() +
                     ": the counts of its first executions must be a list of 1 to " +
                     std::to_string(SequenceItem::kMaxListedCounts) + " integers, got " + j.dump());
  }
  return out;
}

Sequence SequenceFrom(const Json& j, std::int64_t executions, const std::string& origin) {
  if (!j.is_array())
    throw TraceError(origin + ": \"sequence\" (or a loop's \"body\") is not a list");
  Sequence out;
  for (const Json& e : j) {
    SequenceItem item;
    std::int64_t count = 0;
    if (e.is_array()) {
      if (e.size() < 2 || e.size() > 4) {
        throw TraceError(origin +
                         ": a sequence run must be [phase id, repetitions(, total(, [counts])))], "
                         "got " +
                         e.dump());
      }
      item.phase = e.at(0).get<int>();
      count = e.at(1).get<std::int64_t>();
      item.total = e.size() >= 3 ? e.at(2).get<std::int64_t>() : count * executions;
      if (e.size() == 4) item.counts = CountsFrom(e.at(3), origin, e);
      if (item.phase < 0) {
        throw TraceError(origin + ": a sequence run names phase " + std::to_string(item.phase));
      }
    } else if (e.is_object()) {
      count = e.at("loop").get<std::int64_t>();
      item.total = e.contains("total") ? e.at("total").get<std::int64_t>() : count * executions;
      if (e.contains("counts")) {
        item.counts = CountsFrom(e.at("counts"), origin, e);
      } else if (e.contains("first")) {
        item.counts = CountsFrom(e.at("first"), origin, e);
      }
      item.body = SequenceFrom(e.at("body"), item.total, origin);
      if (item.body.empty()) {
        throw TraceError(origin + ": sequence loop " + e.dump() + " has an empty body");
      }
    } else {
      throw TraceError(origin +
                       ": a sequence item must be a run [id, repetitions] or a loop "
                       "{\"loop\", \"body\"}, got " +
                       e.dump());
    }
    if (!item.counts.empty()) {
      const auto execs = std::max<std::int64_t>(1, executions);
      std::int64_t sum = 0;
      bool negative = false;
      for (const std::int64_t c : item.counts) {
        negative = negative || c < 0;
        sum += std::max<std::int64_t>(0, c);
      }
      const auto listed = static_cast<std::int64_t>(item.counts.size());
      if (execs <= 1 || negative || listed >= execs + (sum == item.total ? 1 : 0) ||
          sum > item.total) {
        throw TraceError(origin + ": sequence item " + e.dump() +
                         " lists counts of its first executions that are not counts of its "
                         "total (" +
                         std::to_string(item.total) + " over " + std::to_string(execs) +
                         " executions: at most " + std::to_string(execs - 1) +
                         " listed, none negative, their sum at most the total)");
      }
    }
    if (count < 0 || item.total < 0 ||
        item.total / std::max<std::int64_t>(1, executions) != count) {
      throw TraceError(origin + ": sequence item " + e.dump() +
                       " has a negative count or a total "
                       "that does not match its count (" +
                       std::to_string(executions) + " executions of the enclosing body)");
    }
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

std::int64_t SequenceFirstAt(std::int64_t total, std::int64_t executions, std::int64_t k,
                             const std::vector<std::int64_t>& counts) {
  if (executions <= 1) return k <= 0 ? 0 : total;
  if (k <= 0) return 0;
  if (k >= executions) return total;
  const auto listed =
      static_cast<std::int64_t>(std::min(counts.size(), static_cast<std::size_t>(executions)));
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < std::min(k, listed); ++i) sum += counts[static_cast<std::size_t>(i)];
  if (k <= listed) return sum;
  std::int64_t listed_sum = sum;
  for (std::int64_t i = k; i < listed; ++i) listed_sum += counts[static_cast<std::size_t>(i)];
  const std::int64_t rest = std::max<std::int64_t>(0, total - listed_sum);
  return sum +
         static_cast<std::int64_t>(static_cast<Int128>(k - listed) * rest / (executions - listed));
}

std::int64_t SequenceCountAt(std::int64_t total, std::int64_t executions, std::int64_t k,
                             const std::vector<std::int64_t>& counts) {
  return SequenceFirstAt(total, executions, k + 1, counts) -
         SequenceFirstAt(total, executions, k, counts);
}

std::vector<std::int64_t> SequenceCountsFor(std::int64_t total, std::int64_t executions,
                                            const std::vector<std::int64_t>& made) {
  const auto e = static_cast<std::size_t>(std::max<std::int64_t>(1, executions));
  if (e <= 1 || made.empty() || made.size() > e) return {};
  std::int64_t sum = 0;
  for (const std::int64_t c : made) {
    if (c < 0) return {};
    sum += c;
  }
  if (sum > total || (made.size() == e && sum != total)) return {};
  // The shortest prefix after which the even spread of the rest gives the others listed
  // (SequenceFirstAt's spread, evaluated directly: O(1) per count, O(n^2) at most).
  const std::size_t limit = std::min(made.size(), SequenceItem::kMaxListedCounts);
  std::int64_t listed = 0;  // the sum of made[0, m)
  for (std::size_t m = 0; m <= limit; ++m) {
    if (m > 0) listed += made[m - 1];
    const std::int64_t rest = total - listed;
    const auto others = static_cast<std::int64_t>(e - m);
    bool same = true;
    for (std::size_t k = m; k < made.size() && same && others > 0; ++k) {
      const auto i = static_cast<std::int64_t>(k - m);
      const auto upto = [&](std::int64_t j) {
        return static_cast<std::int64_t>(static_cast<Int128>(j) * rest / others);
      };
      same = upto(i + 1) - upto(i) == made[k];
    }
    if (same) return {made.begin(), made.begin() + static_cast<std::ptrdiff_t>(m)};
  }
  return {made.begin(), made.begin() + static_cast<std::ptrdiff_t>(limit)};
}

Sequence SimplifySequence(Sequence items, std::int64_t executions) {
  Sequence out;
  for (SequenceItem& item : items) {
    if (item.total <= 0) continue;
    if (!item.is_loop()) {
      AppendItem(&out, std::move(item), executions);
      continue;
    }
    item.body = SimplifySequence(std::move(item.body), item.total);
    if (item.body.empty()) continue;
    if (item.total == executions && Uniform(item, executions)) {
      // One iteration per execution: its body is the enclosing body's.
      for (SequenceItem& b : item.body) AppendItem(&out, std::move(b), executions);
      continue;
    }
    if (item.body.size() == 1 && Uniform(item, executions) &&
        Uniform(item.body.front(), item.total)) {
      // A loop around one evenly repeated item is that item repeated.
      AppendItem(&out, std::move(item.body.front()), executions);
      continue;
    }
    AppendItem(&out, std::move(item), executions);
  }
  return out;
}

std::vector<std::pair<int, std::int64_t>> SequencePhaseTotals(const Sequence& items) {
  std::map<int, std::int64_t> totals;
  AddTotals(items, &totals);
  return {totals.begin(), totals.end()};
}

std::vector<int> SequencePhases(const Sequence& items) {
  std::vector<int> order;
  std::set<int> seen;
  AddPhases(items, &order, &seen);
  return order;
}

std::vector<int> SequenceShape(const Sequence& items) {
  std::vector<int> shape;
  std::map<int, int> name;
  const auto walk = [&](const auto& self, const Sequence& seq) -> void {
    for (const SequenceItem& item : seq) {
      if (item.is_loop()) {
        self(self, item.body);
      } else {
        shape.push_back(name.emplace(item.phase, static_cast<int>(name.size())).first->second);
      }
    }
  };
  walk(walk, items);
  return shape;
}

std::vector<int> ExpandSequence(const Sequence& items, std::size_t limit) {
  std::vector<int> out;
  Expand(items, 1, 0, limit, &out);
  return out;
}

std::string FormatSequence(const Sequence& items) { return Format(items, 1); }

std::string SequenceToJsonText(const Sequence& items) { return SequenceJson(items, 1).dump(); }

Sequence SequenceFromJsonText(const std::string& text, const std::string& origin) {
  try {
    return SequenceFrom(Json::parse(text), 1, origin);
  } catch (const Json::exception& e) {
    throw TraceError(origin + ": malformed sequence: " + e.what());
  }
}

std::string SignatureToJson(const Signature& sig) {
  Json j;
  j["format"] = "pas2p-signature";
  j["version"] = 2;
  j["application"] = sig.application;
  j["nprocs"] = sig.nprocs;
  j["trace"] = sig.trace;
  j["traced_time_s"] = sig.traced_time_s;
  j["pet_s"] = sig.pet_s;
  j["pet_relevant_s"] = sig.pet_relevant_s;
  j["pet_error"] = sig.pet_error;
  j["coverage"] = sig.coverage;
  j["relevance_threshold"] = sig.relevance_threshold;
  j["cut"] = sig.cut;
  j["counters"] = sig.counters;
  j["warnings"] = sig.warnings;
  Json comms = Json::array();
  for (const Communicator& c : sig.communicators) {
    Json jc{{"id", c.id}, {"members", c.members}};
    if (c.origin >= 0) jc["origin"] = c.origin;
    comms.push_back(std::move(jc));
  }
  j["communicators"] = comms;
  j["sequence"] = SequenceJson(sig.sequence, 1);
  if (sig.scheduled_rounds > 0) j["scheduled_rounds"] = sig.scheduled_rounds;
  if (sig.rounds_separated) j["rounds_separated"] = true;
  if (sig.scheduled_tasks > 0) {
    j["scheduled_tasks"] = sig.scheduled_tasks;
    j["scheduled_task_cpu_sum_ns"] = sig.scheduled_task_cpu_sum_ns;
  }
  if (!sig.scheduled_task_cpu_ns.empty()) j["scheduled_task_cpu_ns"] = sig.scheduled_task_cpu_ns;
  Json phases = Json::array();
  for (const Phase& p : sig.phases) {
    Json jp;
    jp["id"] = p.id;
    jp["weight"] = p.weight;
    jp["time_s"] = p.time_s;
    jp["total_time_s"] = p.total_time_s;
    jp["share"] = p.share;
    jp["relevant"] = p.relevant;
    jp["description"] = p.description;
    jp["structure"] = p.structure;
    jp["first_step"] = p.first_step;
    jp["first_wall_s"] = p.first_wall_s;
    jp["time_per_rank_max_s"] = p.time_per_rank_max_s;
    jp["time_per_rank_min_s"] = p.time_per_rank_min_s;
    Json ranks = Json::array();
    for (const RankPhase& rp : p.ranks) {
      Json jr;
      jr["rank"] = rp.rank;
      jr["weight"] = rp.weight;
      jr["time_s"] = rp.time_s;
      jr["compute"] = ComputeJson(rp.compute);
      Json events = Json::array();
      for (const PhaseEvent& e : rp.events) {
        Json je;
        je["kind"] = std::string(EventKindName(e.kind));
        je["peer"] = e.peer;
        je["recv_peer"] = e.recv_peer;
        je["comm"] = e.comm;
        je["tag"] = e.tag;
        je["requests"] = e.requests;
        je["bytes"] = StatsJson(e.bytes);
        je["recv_bytes"] = StatsJson(e.recv_bytes);
        je["polls"] = StatsJson(e.polls);
        if (e.tested.n > 0) je["tested"] = StatsJson(e.tested);
        je["compute"] = ComputeJson(e.compute);
        if (e.reply) je["reply"] = true;
        if (e.root_step != RootStep::kFixed) {
          je["root_step"] = std::string(RootStepName(e.root_step));
          je["root_bytes"] = StatsJson(e.root_bytes);
          je["root_recv_bytes"] = StatsJson(e.root_recv_bytes);
          je["root_cpu_ns"] = StatsJson(e.root_cpu_ns);
        }
        events.push_back(std::move(je));
      }
      jr["events"] = std::move(events);
      ranks.push_back(std::move(jr));
    }
    jp["ranks"] = std::move(ranks);
    phases.push_back(std::move(jp));
  }
  j["phases"] = std::move(phases);
  return j.dump(1) + "\n";
}

Signature SignatureFromJson(const std::string& text, const std::string& origin) {
  Signature sig;
  try {
    Json j = Json::parse(text);
    if (j.value("format", std::string()) != "pas2p-signature") {
      throw TraceError(origin +
                       ": not a pas2p signature (expected \"format\": "
                       "\"pas2p-signature\")");
    }
    // Version 1 differs only in its sequence (flat), which reads as a version 2 one.
    if (const int version = j.at("version").get<int>(); version != 1 && version != 2) {
      throw TraceError(origin + ": signature version " + std::to_string(version) +
                       " is not supported (this pas2p reads versions 1 and 2)");
    }
    sig.application = j.at("application").get<std::string>();
    sig.nprocs = j.at("nprocs").get<int>();
    sig.trace = j.at("trace").get<std::string>();
    sig.traced_time_s = j.at("traced_time_s").get<double>();
    sig.pet_s = j.at("pet_s").get<double>();
    sig.pet_relevant_s = j.at("pet_relevant_s").get<double>();
    sig.pet_error = j.at("pet_error").get<double>();
    sig.coverage = j.at("coverage").get<double>();
    sig.relevance_threshold = j.at("relevance_threshold").get<double>();
    sig.cut = j.at("cut").get<bool>();
    sig.counters = j.at("counters").get<std::vector<std::string>>();
    sig.warnings = j.at("warnings").get<std::vector<std::string>>();
    for (const Json& c : j.at("communicators")) {
      sig.communicators.push_back(
          Communicator{c.at("id").get<CommId>(), c.at("members").get<std::vector<std::int32_t>>(),
                       c.contains("origin") ? c.at("origin").get<std::int32_t>() : -1});
    }
    sig.sequence = SequenceFrom(j.at("sequence"), 1, origin);
    if (j.contains("scheduled_rounds")) sig.scheduled_rounds = j.at("scheduled_rounds").get<int>();
    if (j.contains("rounds_separated")) sig.rounds_separated = j.at("rounds_separated").get<bool>();
    sig.scheduled_tasks = j.value("scheduled_tasks", std::int64_t{0});
    sig.scheduled_task_cpu_sum_ns = j.value("scheduled_task_cpu_sum_ns", std::int64_t{0});
    if (j.contains("scheduled_task_cpu_ns")) {
      sig.scheduled_task_cpu_ns = j.at("scheduled_task_cpu_ns").get<std::vector<std::int64_t>>();
    }
    for (const Json& jp : j.at("phases")) {
      Phase p;
      p.id = jp.at("id").get<int>();
      p.weight = jp.at("weight").get<double>();
      p.time_s = jp.at("time_s").get<double>();
      p.total_time_s = jp.at("total_time_s").get<double>();
      p.share = jp.at("share").get<double>();
      p.relevant = jp.at("relevant").get<bool>();
      p.description = jp.at("description").get<std::string>();
      p.structure = jp.at("structure").get<std::string>();
      p.first_step = jp.at("first_step").get<std::int64_t>();
      p.first_wall_s = jp.at("first_wall_s").get<double>();
      p.time_per_rank_max_s = jp.at("time_per_rank_max_s").get<double>();
      p.time_per_rank_min_s = jp.at("time_per_rank_min_s").get<double>();
      for (const Json& jr : jp.at("ranks")) {
        RankPhase rp;
        rp.rank = jr.at("rank").get<int>();
        rp.weight = jr.at("weight").get<double>();
        rp.time_s = jr.at("time_s").get<double>();
        rp.compute = ComputeFrom(jr.at("compute"));
        for (const Json& je : jr.at("events")) {
          PhaseEvent e;
          const std::string kind = je.at("kind").get<std::string>();
          if (!ParseEventKind(kind, &e.kind)) {
            throw TraceError(origin + ": phase " + std::to_string(p.id) + ", rank " +
                             std::to_string(rp.rank) + ": unknown event kind \"" + kind + "\"");
          }
          e.peer = je.at("peer").get<std::int32_t>();
          e.recv_peer = je.at("recv_peer").get<std::int32_t>();
          e.comm = je.at("comm").get<CommId>();
          e.tag = je.at("tag").get<std::int32_t>();
          e.requests = je.at("requests").get<std::int32_t>();
          e.bytes = StatsFrom(je.at("bytes"));
          e.recv_bytes = StatsFrom(je.at("recv_bytes"));
          e.polls = StatsFrom(je.at("polls"));
          if (je.contains("tested")) e.tested = StatsFrom(je.at("tested"));
          e.compute = ComputeFrom(je.at("compute"));
          e.reply = je.contains("reply") && je.at("reply").get<bool>();
          if (je.contains("root_step")) {
            const auto name = je.at("root_step").get<std::string>();
            if (!ParseRootStep(name, &e.root_step)) {
              throw TraceError(origin + ": phase " + std::to_string(p.id) + ", rank " +
                               std::to_string(rp.rank) + ": unknown root_step \"" + name +
                               "\" (expected fixed, next, previous or same)");
            }
            e.root_bytes = StatsFrom(je.at("root_bytes"));
            e.root_recv_bytes = StatsFrom(je.at("root_recv_bytes"));
            e.root_cpu_ns = StatsFrom(je.at("root_cpu_ns"));
          }
          rp.events.push_back(std::move(e));
        }
        p.ranks.push_back(std::move(rp));
      }
      sig.phases.push_back(std::move(p));
    }
  } catch (const Json::exception& e) {
    throw TraceError(origin + ": malformed signature: " + e.what());
  }
  return sig;
}

void SaveSignature(const Signature& signature, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write the signature to " + path.string());
  out << SignatureToJson(signature);
  out.close();
  if (!out) throw UserError("error while writing the signature to " + path.string());
}

Signature LoadSignature(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path.string() + ": cannot open the signature file");
  std::ostringstream text;
  text << in.rdbuf();
  return SignatureFromJson(text.str(), path.string());
}

}  // namespace pas2p::phases
