// Writers of a SimResult (see outputs.h).
#include "pas2p/simulator/outputs.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "pas2p/core/error.h"
#include "pas2p/simulator/efficiency.h"

namespace pas2p::sim {

namespace {

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::int64_t Ns(double seconds) { return std::llround(seconds * 1e9); }

std::string Pad(std::string s, std::size_t width, bool left = false) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

std::string RankRow(const std::string& label, int node, double end, double compute, double comm,
                    double wait, double util) {
  std::string row = Pad(label, 10, true);
  row += Pad(node >= 0 ? std::to_string(node) : std::string("-"), 6);
  row += Pad(Format("%.6f", end), 13);
  row += Pad(Format("%.6f", compute), 13);
  row += Pad(Format("%.6f", comm), 15);
  row += Pad(Format("%.6f", wait), 13);
  row += Pad(Format("%.1f%%", util * 100.0), 8);
  return row + "\n";
}

std::ofstream OpenOut(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write " + path + (ec ? " (" + ec.message() + ")" : ""));
  return out;
}

void RequireTimeline(const SimResult& result, const char* what) {
  if (!result.timeline.recorded)
    throw UserError(std::string(what) +
                    " needs the simulated timeline (SimOptions::record_timeline)");
}

// Paraver MPI call event types and values (named in the .pcf).
constexpr int kEventP2P = 50000001;
constexpr int kEventCollective = 50000002;
constexpr int kEventOther = 50000003;

int EventTypeOf(EventKind kind) {
  if (IsCollective(kind)) return kEventCollective;
  if (IsPointToPoint(kind) || IsCompletion(kind)) return kEventP2P;
  return kEventOther;
}

}  // namespace

std::string FormatReport(const SimResult& r, const ReportOptions& options) {
  std::string out;
  out += "predicted time: " + Format("%.9f", r.predicted_time_s) + " s\n";
  out += std::to_string(r.nprocs) + " ranks on " + std::to_string(r.nodes) + " nodes, machine \"" +
         r.machine_name + "\"; " + std::to_string(r.events) + " events, " +
         std::to_string(r.messages) + " point-to-point messages (" + std::to_string(r.bytes) +
         " bytes)\n";
  if (r.remapped_completions > 0)
    out += std::to_string(r.remapped_completions) +
           " waitany/waitsome/test completions differ from the trace (first to complete "
           "wins; use --deterministic to follow the trace)\n";
  if (r.truncated_receives > 0)
    out += "warning: " + std::to_string(r.truncated_receives) +
           " receives matched a message larger than they record (MPI would report "
           "MPI_ERR_TRUNCATE; the transfer took the sender's size); first: " +
           r.first_truncated_receive + "\n";
  if (!r.ranks.empty()) {
    out += "efficiency (POP metrics): " + FormatEfficiency(EfficiencyOf(r)) + "\n";
  }
  out += "\nper rank (seconds):\n";
  const std::string header = Pad("rank", 10, true) + Pad("node", 6) + Pad("end", 13) +
                             Pad("compute", 13) + Pad("communication", 15) + Pad("wait", 13) +
                             Pad("util", 8) + "\n";
  out += header;
  if (static_cast<int>(r.ranks.size()) <= options.max_rank_rows) {
    for (const RankTimes& t : r.ranks)
      out += RankRow(std::to_string(t.rank), t.node, t.end_s, t.compute_s, t.communication_s,
                     t.wait_s, t.utilisation);
  } else if (!r.ranks.empty()) {
    auto stat = [&](auto field, int which) {
      double acc = which == 0 ? field(r.ranks[0]) : (which == 2 ? field(r.ranks[0]) : 0.0);
      for (const RankTimes& t : r.ranks) {
        const double v = field(t);
        if (which == 0) acc = std::min(acc, v);
        if (which == 1) acc += v;
        if (which == 2) acc = std::max(acc, v);
      }
      return which == 1 ? acc / static_cast<double>(r.ranks.size()) : acc;
    };
    const char* labels[] = {"min", "mean", "max"};
    for (int w = 0; w < 3; ++w)
      out += RankRow(labels[w], -1, stat([](const RankTimes& t) { return t.end_s; }, w),
                     stat([](const RankTimes& t) { return t.compute_s; }, w),
                     stat([](const RankTimes& t) { return t.communication_s; }, w),
                     stat([](const RankTimes& t) { return t.wait_s; }, w),
                     stat([](const RankTimes& t) { return t.utilisation; }, w));
    std::vector<int> order(r.ranks.size());
    std::iota(order.begin(), order.end(), 0);
    const std::size_t n = std::min<std::size_t>(options.slowest_ranks, order.size());
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](int a, int b) {
      if (r.ranks[a].end_s != r.ranks[b].end_s) return r.ranks[a].end_s > r.ranks[b].end_s;
      return a < b;
    });
    out += "slowest ranks (latest to finish):\n";
    for (std::size_t i = 0; i < n; ++i) {
      const RankTimes& t = r.ranks[order[i]];
      out += RankRow(std::to_string(t.rank), t.node, t.end_s, t.compute_s, t.communication_s,
                     t.wait_s, t.utilisation);
    }
  }
  if (!r.collectives.empty()) {
    out +=
        "\ncollectives (time = sum of FAN_IN + FAN_OUT per call; wait = members waiting "
        "for the last):\n";
    out += Pad("operation", 16, true) + Pad("calls", 10) + Pad("time_s", 14) + Pad("wait_s", 14) +
           Pad("bytes", 16) + "\n";
    for (const CollectiveTotals& c : r.collectives)
      out += Pad(std::string(EventKindName(c.kind)), 16, true) + Pad(std::to_string(c.calls), 10) +
             Pad(Format("%.6f", c.time_s), 14) + Pad(Format("%.6f", c.wait_s), 14) +
             Pad(std::to_string(c.bytes), 16) + "\n";
  }
  return out;
}

std::string ResultToJson(const SimResult& r) {
  nlohmann::ordered_json j;
  j["predicted_time_s"] = r.predicted_time_s;
  j["events"] = r.events;
  j["nprocs"] = r.nprocs;
  j["nodes"] = r.nodes;
  j["machine"] = r.machine_name;
  j["trace"] = r.trace_description;
  j["messages"] = r.messages;
  j["bytes"] = r.bytes;
  j["remapped_completions"] = r.remapped_completions;
  j["truncated_receives"] = r.truncated_receives;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const RankTimes& t : r.ranks) {
    nlohmann::ordered_json x;
    x["rank"] = t.rank;
    x["node"] = t.node;
    x["end_s"] = t.end_s;
    x["compute_s"] = t.compute_s;
    x["communication_s"] = t.communication_s;
    x["wait_s"] = t.wait_s;
    x["utilisation"] = t.utilisation;
    x["events"] = t.events;
    x["messages_sent"] = t.messages_sent;
    x["bytes_sent"] = t.bytes_sent;
    ranks.push_back(std::move(x));
  }
  j["ranks"] = std::move(ranks);
  nlohmann::ordered_json colls = nlohmann::ordered_json::array();
  for (const CollectiveTotals& c : r.collectives) {
    nlohmann::ordered_json x;
    x["name"] = std::string(EventKindName(c.kind));
    x["calls"] = c.calls;
    x["time_s"] = c.time_s;
    x["wait_s"] = c.wait_s;
    x["bytes"] = c.bytes;
    colls.push_back(std::move(x));
  }
  j["collectives"] = std::move(colls);
  return j.dump(2) + "\n";
}

// ---------------------------------------------------------------------------------------
// Paraver.

void WriteParaver(const SimResult& r, const std::string& prefix) {
  RequireTimeline(r, "the Paraver output");
  // CPUs: the ranks of each node, numbered node by node (1-based, as Paraver counts).
  const int nodes = std::max(r.nodes, 1);
  std::vector<int> per_node(nodes, 0);
  for (const RankTimes& t : r.ranks) ++per_node[t.node];
  std::vector<int> first_cpu(nodes, 1);
  for (int n = 1; n < nodes; ++n) first_cpu[n] = first_cpu[n - 1] + per_node[n - 1];
  std::vector<int> cpu_of(r.ranks.size());
  {
    std::vector<int> used(nodes, 0);
    for (const RankTimes& t : r.ranks) cpu_of[t.rank] = first_cpu[t.node] + used[t.node]++;
  }
  const std::int64_t end_ns = Ns(r.predicted_time_s);

  struct Record {
    std::int64_t time;
    int order;  // states before events before communications at equal times
    int rank;
    std::string text;
  };
  std::vector<Record> records;
  records.reserve(r.timeline.intervals.size() * 3 + r.timeline.messages.size() + r.ranks.size());
  auto thread = [&](int rank) {
    return std::to_string(cpu_of[rank]) + ":1:" + std::to_string(rank + 1) + ":1";
  };
  for (const StateInterval& s : r.timeline.intervals) {
    const std::int64_t b = Ns(s.begin_s), e = Ns(s.end_s);
    if (e <= b) continue;
    records.push_back({b, 0, s.rank,
                       "1:" + thread(s.rank) + ":" + std::to_string(b) + ":" + std::to_string(e) +
                           ":" + std::to_string(static_cast<int>(s.state))});
    if (s.call != EventKind::kCompute) {
      const int type = EventTypeOf(s.call);
      records.push_back({b, 1, s.rank,
                         "2:" + thread(s.rank) + ":" + std::to_string(b) + ":" +
                             std::to_string(type) + ":" +
                             std::to_string(static_cast<int>(s.call) + 1)});
      records.push_back(
          {e, 1, s.rank,
           "2:" + thread(s.rank) + ":" + std::to_string(e) + ":" + std::to_string(type) + ":0"});
    }
  }
  for (const RankTimes& t : r.ranks) {
    const std::int64_t b = Ns(t.end_s);
    if (b < end_ns)
      records.push_back(
          {b, 0, t.rank,
           "1:" + thread(t.rank) + ":" + std::to_string(b) + ":" + std::to_string(end_ns) + ":0"});
  }
  for (const MessageRecord& m : r.timeline.messages) {
    const std::int64_t ls = Ns(m.send_posted_s), ps = Ns(m.transfer_start_s);
    const std::int64_t lr = Ns(m.recv_posted_s), pr = Ns(m.arrival_s);
    records.push_back({ls, 2, m.source,
                       "3:" + thread(m.source) + ":" + std::to_string(ls) + ":" +
                           std::to_string(ps) + ":" + thread(m.dest) + ":" + std::to_string(lr) +
                           ":" + std::to_string(pr) + ":" + std::to_string(m.bytes) + ":" +
                           std::to_string(m.tag)});
  }
  std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.order != b.order) return a.order < b.order;
    return a.rank < b.rank;
  });

  std::ofstream prv = OpenOut(prefix + ".prv");
  // A fixed date keeps the output byte-identical from run to run.
  prv << "#Paraver (01/01/70 at 00:00):" << end_ns << "_ns:" << nodes << "(";
  for (int n = 0; n < nodes; ++n) prv << (n ? "," : "") << per_node[n];
  prv << "):1:" << r.ranks.size() << "(";
  for (std::size_t i = 0; i < r.ranks.size(); ++i)
    prv << (i ? "," : "") << "1:" << (r.ranks[i].node + 1);
  prv << ")\n";
  for (const Record& rec : records) prv << rec.text << '\n';
  if (!prv) throw UserError("cannot write " + prefix + ".prv");

  std::ofstream pcf = OpenOut(prefix + ".pcf");
  pcf << "DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
         "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
         "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\nDEFAULT_SEMANTIC\n\n"
         "THREAD_FUNC          State As Is\n\n\nSTATES\n";
  const RankState states[] = {RankState::kIdle,
                              RankState::kRunning,
                              RankState::kWaitMessage,
                              RankState::kBlockingSend,
                              RankState::kSynchronization,
                              RankState::kTestProbe,
                              RankState::kWaitRequests,
                              RankState::kGroupCommunication,
                              RankState::kSendReceive};
  for (RankState s : states) pcf << static_cast<int>(s) << "    " << RankStateName(s) << "\n";
  pcf << "\n\nSTATES_COLOR\n";
  const char* colors[] = {"{117,195,255}", "{0,0,255}", "{255,0,0}",    "{255,0,174}", "{179,0,0}",
                          "{0,255,0}",     "{235,0,0}", "{255,144,26}", "{2,255,177}"};
  for (std::size_t i = 0; i < std::size(states); ++i)
    pcf << static_cast<int>(states[i]) << "    " << colors[i] << "\n";
  const std::pair<int, const char*> types[] = {{kEventP2P, "MPI point-to-point"},
                                               {kEventCollective, "MPI collective"},
                                               {kEventOther, "MPI other"}};
  for (const auto& [type, name] : types) {
    pcf << "\n\nEVENT_TYPE\n0    " << type << "    " << name << "\nVALUES\n0      End\n";
    for (int k = 0; k < kEventKindCount; ++k) {
      const EventKind kind = static_cast<EventKind>(k);
      if (kind == EventKind::kCompute || EventTypeOf(kind) != type) continue;
      pcf << (k + 1) << "      MPI_" << EventKindName(kind) << "\n";
    }
  }
  if (!pcf) throw UserError("cannot write " + prefix + ".pcf");

  std::ofstream row = OpenOut(prefix + ".row");
  row << "LEVEL CPU SIZE " << r.ranks.size() << "\n";
  for (int n = 0; n < nodes; ++n)
    for (int c = 0; c < per_node[n]; ++c) row << (n + 1) << "." << (c + 1) << "\n";
  row << "\nLEVEL NODE SIZE " << nodes << "\n";
  for (int n = 0; n < nodes; ++n) row << "node " << n << "\n";
  row << "\nLEVEL THREAD SIZE " << r.ranks.size() << "\n";
  for (const RankTimes& t : r.ranks) row << "rank " << t.rank << "\n";
  if (!row) throw UserError("cannot write " + prefix + ".row");
}

// ---------------------------------------------------------------------------------------
// Perfetto / Chrome trace events.

void WritePerfetto(const SimResult& r, std::ostream& out) {
  RequireTimeline(r, "the Perfetto output");
  auto us = [](double seconds) { return Format("%.3f", seconds * 1e6); };
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&]() -> std::ostream& {
    if (!first) out << ",\n";
    first = false;
    return out;
  };
  std::vector<bool> node_named(std::max(r.nodes, 1), false);
  for (const RankTimes& t : r.ranks) {
    if (!node_named[t.node]) {
      node_named[t.node] = true;
      sep() << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << t.node
            << ",\"args\":{\"name\":\"node " << t.node << "\"}}";
    }
    sep() << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << t.node << ",\"tid\":" << t.rank
          << ",\"args\":{\"name\":\"rank " << t.rank << "\"}}";
  }
  for (const StateInterval& s : r.timeline.intervals) {
    const std::string name =
        s.call == EventKind::kCompute ? std::string("compute") : std::string(EventKindName(s.call));
    sep() << "{\"name\":\"" << name << "\",\"cat\":\"" << RankStateName(s.state)
          << "\",\"ph\":\"X\",\"ts\":" << us(s.begin_s) << ",\"dur\":" << us(s.end_s - s.begin_s)
          << ",\"pid\":" << r.ranks[s.rank].node << ",\"tid\":" << s.rank << "}";
  }
  std::uint64_t id = 0;
  for (const MessageRecord& m : r.timeline.messages) {
    ++id;
    sep() << "{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":" << id
          << ",\"ts\":" << us(m.send_posted_s) << ",\"pid\":" << r.ranks[m.source].node
          << ",\"tid\":" << m.source << ",\"args\":{\"bytes\":" << m.bytes << ",\"tag\":" << m.tag
          << "}}";
    sep() << "{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" << id
          << ",\"ts\":" << us(std::max(m.arrival_s, m.recv_posted_s))
          << ",\"pid\":" << r.ranks[m.dest].node << ",\"tid\":" << m.dest << "}";
  }
  out << "\n]}\n";
}

void WritePerfettoFile(const SimResult& result, const std::string& path) {
  std::ofstream out = OpenOut(path);
  WritePerfetto(result, out);
  if (!out) throw UserError("cannot write " + path);
}

// ---------------------------------------------------------------------------------------
// ASCII timeline.

std::string FormatAsciiTimeline(const SimResult& r, const AsciiTimelineOptions& options) {
  if (!r.timeline.recorded) return "(no timeline recorded)\n";
  const int width = std::max(options.width, 10);
  const int nprocs = static_cast<int>(r.ranks.size());
  std::vector<int> rows;
  const int max_rows = std::max(options.max_rows, 2);
  if (nprocs <= max_rows) {
    for (int i = 0; i < nprocs; ++i) rows.push_back(i);
  } else {
    for (int i = 0; i < max_rows; ++i)
      rows.push_back(static_cast<int>(static_cast<long long>(i) * (nprocs - 1) / (max_rows - 1)));
  }
  std::vector<int> row_of(nprocs, -1);
  for (std::size_t i = 0; i < rows.size(); ++i) row_of[rows[i]] = static_cast<int>(i);
  // Classes: 0 compute, 1 point-to-point, 2 collective wait, 3 collective transfer.
  constexpr char kGlyph[] = {'#', '-', '.', '='};
  const double total = r.predicted_time_s > 0 ? r.predicted_time_s : 1.0;
  const double col_s = total / width;
  std::vector<std::array<double, 4>> acc(rows.size() * width, {0, 0, 0, 0});
  for (const StateInterval& s : r.timeline.intervals) {
    const int row = row_of[s.rank];
    if (row < 0) continue;
    int cls = 1;
    if (s.state == RankState::kRunning) cls = 0;
    if (s.state == RankState::kSynchronization) cls = 2;
    if (s.state == RankState::kGroupCommunication) cls = 3;
    int c0 = std::clamp(static_cast<int>(s.begin_s / col_s), 0, width - 1);
    const int c1 = std::clamp(static_cast<int>(s.end_s / col_s), 0, width - 1);
    for (int c = c0; c <= c1; ++c) {
      const double lo = std::max(s.begin_s, c * col_s), hi = std::min(s.end_s, (c + 1) * col_s);
      if (hi > lo) acc[row * width + c][cls] += hi - lo;
    }
  }
  std::string out;
  out += "timeline: 0 .. " + Format("%.6f", r.predicted_time_s) + " s, " + Format("%.3g", col_s) +
         " s per column";
  if (rows.size() < static_cast<std::size_t>(nprocs))
    out += "; " + std::to_string(rows.size()) + " of " + std::to_string(nprocs) + " ranks shown";
  out += "\n'#' compute  '-' point-to-point  '.' collective wait  '=' collective transfer\n";
  const int label = static_cast<int>(std::to_string(nprocs).size()) + 5;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line = Pad("rank " + std::to_string(rows[i]), label, true) + "|";
    for (int c = 0; c < width; ++c) {
      const auto& a = acc[i * width + c];
      int best = -1;
      double best_v = 0.0;
      for (int k = 0; k < 4; ++k)
        if (a[k] > best_v) {
          best_v = a[k];
          best = k;
        }
      // A column is blank only if the rank did nothing during most of it.
      line += (best >= 0 && (a[0] + a[1] + a[2] + a[3]) * 2 >= col_s) ? kGlyph[best] : ' ';
    }
    out += line + "|\n";
  }
  return out;
}

}  // namespace pas2p::sim
