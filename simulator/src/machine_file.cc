// Machine files in TOML (toml++) and Dimemas collective tables (Boost.Regex).
#include "pas2p/simulator/machine_file.h"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <boost/regex.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "machine_text.h"
#include "pas2p/core/error.h"
#include "pas2p/simulator/dimemas_cfg.h"

namespace pas2p::sim {

namespace {

constexpr std::array<std::string_view, kDimemasCollectiveCount> kCollectiveNames = {
    "MPI_Barrier",        "MPI_Bcast",
    "MPI_Gather",         "MPI_Gatherv",
    "MPI_Scatter",        "MPI_Scatterv",
    "MPI_Allgather",      "MPI_Allgatherv",
    "MPI_Alltoall",       "MPI_Alltoallv",
    "MPI_Reduce",         "MPI_Allreduce",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Scan",           "MPI_Alltoallw"};

using internal::FormatDouble;
using internal::Lower;
using internal::ReadWholeFile;
using internal::Upper;

// ---------------------------------------------------------------------------------------
// Collective tables.

std::string JoinNames(std::initializer_list<std::string_view> names) {
  std::string out;
  for (auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

bool ParseModel(std::string_view token, CollModel* out) {
  const std::string t = Upper(token);
  if (t == "0")
    *out = CollModel::kZero;
  else if (t == "CT" || t == "CTE")
    *out = CollModel::kConstant;
  else if (t == "LIN")
    *out = CollModel::kLinear;
  else if (t == "LOG")
    *out = CollModel::kLog;
  else
    return false;
  return true;
}

bool ParseSize(std::string_view token, CollSize* out) {
  const std::string t = Upper(token);
  if (t == "MIN")
    *out = CollSize::kMin;
  else if (t == "MAX")
    *out = CollSize::kMax;
  else if (t == "MEAN")
    *out = CollSize::kMean;
  else if (t == "2MAX" || t == "2*MAX")
    *out = CollSize::k2Max;
  else if (t == "S+R")
    *out = CollSize::kSendPlusRecv;
  else
    return false;
  return true;
}

// Id from "11", "MPI_Allreduce" or "allreduce"; -1 if unknown.
int ParseCollectiveId(std::string_view token) {
  if (!token.empty() && std::isdigit(static_cast<unsigned char>(token[0]))) {
    int id = -1;
    auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), id);
    if (ec != std::errc() || p != token.data() + token.size()) return -1;
    return id >= 0 && id < kDimemasCollectiveCount ? id : -1;
  }
  std::string t = Lower(token);
  if (t.rfind("mpi_", 0) == 0) t = t.substr(4);
  for (int id = 0; id < kDimemasCollectiveCount; ++id)
    if (Lower(kCollectiveNames[id].substr(4)) == t) return id;
  return -1;
}

}  // namespace

std::string_view DimemasCollectiveName(int id) {
  return id >= 0 && id < kDimemasCollectiveCount ? kCollectiveNames[id] : std::string_view();
}

std::string_view CollModelName(CollModel model) {
  switch (model) {
    case CollModel::kZero:
      return "0";
    case CollModel::kConstant:
      return "CTE";
    case CollModel::kLinear:
      return "LIN";
    case CollModel::kLog:
      return "LOG";
  }
  return "?";
}

std::string_view CollSizeName(CollSize size) {
  switch (size) {
    case CollSize::kMin:
      return "MIN";
    case CollSize::kMax:
      return "MAX";
    case CollSize::kMean:
      return "MEAN";
    case CollSize::k2Max:
      return "2MAX";
    case CollSize::kSendPlusRecv:
      return "S+R";
  }
  return "?";
}

std::string_view MappingName(Mapping mapping) {
  switch (mapping) {
    case Mapping::kFill:
      return "fill";
    case Mapping::kRoundRobin:
      return "round_robin";
    case Mapping::kExplicit:
      return "explicit";
  }
  return "?";
}

std::string_view TopologyKindName(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::kNone:
      return "none";
    case TopologyKind::kRing:
      return "ring";
    case TopologyKind::kTorus2D:
      return "torus2d";
    case TopologyKind::kTorus3D:
      return "torus3d";
    case TopologyKind::kHypercube:
      return "hypercube";
    case TopologyKind::kFatTree:
      return "fat_tree";
    case TopologyKind::kLinks:
      return "links";
  }
  return "?";
}

std::string CollectiveLine(int id, const CollectiveCost& c) {
  std::string s = std::to_string(id);
  for (auto part : {CollModelName(c.model_in), CollSizeName(c.size_in), CollModelName(c.model_out),
                    CollSizeName(c.size_out)}) {
    s += ' ';
    s += part;
  }
  return s;
}

std::string CollectiveTableToText(const CollectiveTable& table) {
  std::string out;
  for (int id = 0; id < kDimemasCollectiveCount; ++id) {
    std::string line = CollectiveLine(id, table[id]);
    line.resize(std::max<std::size_t>(line.size(), 22), ' ');
    out += line + " /* " + std::string(kCollectiveNames[id]) + " */\n";
  }
  return out;
}

namespace {

struct NumberedLine {
  int line_no;
  std::string text;
};

// Blanks `/* ... */` comments (keeping newlines, so line numbers stay right).
std::string StripBlockComments(const std::string& body, const std::string& source, int first_line) {
  static const boost::regex kBlockComment(R"(/\*.*?\*/)");
  std::string cleaned;
  std::string::const_iterator start = body.begin();
  boost::smatch m;
  while (boost::regex_search(start, body.cend(), m, kBlockComment)) {
    cleaned.append(start, m[0].first);
    for (auto it = m[0].first; it != m[0].second; ++it) cleaned += (*it == '\n' ? '\n' : ' ');
    start = m[0].second;
  }
  cleaned.append(start, body.cend());
  const auto pos = cleaned.find("/*");
  if (pos != std::string::npos) {
    const int line =
        first_line + static_cast<int>(std::count(cleaned.begin(), cleaned.begin() + pos, '\n'));
    throw UserError(source + ":" + std::to_string(line) +
                    ": collective table: a '/*' comment is never closed with '*/'");
  }
  return cleaned;
}

// `label` names the table in errors ("collective table", "collectives.table").
CollectiveTable ParseCollectiveLines(const std::vector<NumberedLine>& lines,
                                     const std::string& source, const CollectiveTable& base,
                                     const std::string& label) {
  static const boost::regex kLineComment(R"((#|//).*$)");
  static const boost::regex kFields(R"(\S+)");
  CollectiveTable table = base;
  std::array<int, kDimemasCollectiveCount> defined_at{};
  for (const auto& [line_no, original] : lines) {
    const std::string code = boost::regex_replace(original, kLineComment, "");
    std::vector<std::string> tok;
    for (boost::sregex_iterator it(code.begin(), code.end(), kFields), end; it != end; ++it)
      tok.push_back(it->str());
    if (tok.empty()) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": " + label;
    const std::string quoted = " (line: '" + original + "')";
    if (tok.size() != 5)
      throw UserError(where +
                      ": expected 5 fields 'ID MODEL_IN SIZE_IN MODEL_OUT SIZE_OUT' "
                      "(e.g. '11 LOG 2MAX LOG MAX'), got " +
                      std::to_string(tok.size()) + quoted);
    const int id = ParseCollectiveId(tok[0]);
    if (id < 0)
      throw UserError(where + ": field ID: expected an operation id 0.." +
                      std::to_string(kDimemasCollectiveCount - 1) +
                      " or a name such as MPI_Allreduce, got '" + tok[0] + "'" + quoted);
    CollectiveCost c;
    const std::string model_names = JoinNames({"0", "CT", "CTE", "LIN", "LOG"});
    const std::string size_names = JoinNames({"MIN", "MAX", "MEAN", "2MAX", "2*MAX", "S+R"});
    if (!ParseModel(tok[1], &c.model_in))
      throw UserError(where + ": field MODEL_IN: expected one of " + model_names + ", got '" +
                      tok[1] + "'" + quoted);
    if (!ParseSize(tok[2], &c.size_in))
      throw UserError(where + ": field SIZE_IN: expected one of " + size_names + ", got '" +
                      tok[2] + "'" + quoted);
    if (!ParseModel(tok[3], &c.model_out))
      throw UserError(where + ": field MODEL_OUT: expected one of " + model_names + ", got '" +
                      tok[3] + "'" + quoted);
    if (!ParseSize(tok[4], &c.size_out))
      throw UserError(where + ": field SIZE_OUT: expected one of " + size_names + ", got '" +
                      tok[4] + "'" + quoted);
    if (defined_at[id] != 0)
      throw UserError(where + ": operation " + std::to_string(id) + " (" +
                      std::string(kCollectiveNames[id]) + ") is already defined on line " +
                      std::to_string(defined_at[id]) + quoted);
    defined_at[id] = line_no;
    table[id] = c;
  }
  return table;
}

std::vector<NumberedLine> SplitLines(const std::string& text, int first_line) {
  std::vector<NumberedLine> out;
  std::istringstream in(text);
  std::string line;
  int line_no = first_line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back({line_no++, line});
  }
  return out;
}

}  // namespace

CollectiveTable ParseCollectiveTable(std::string_view text, const std::string& source,
                                     const CollectiveTable& base, int first_line) {
  const std::string cleaned = StripBlockComments(std::string(text), source, first_line);
  return ParseCollectiveLines(SplitLines(cleaned, first_line), source, base, "collective table");
}

CollectiveTable LoadCollectiveTableFile(const std::string& path, const CollectiveTable& base) {
  return ParseCollectiveTable(ReadWholeFile(path, "collective table"), path, base);
}

// -----------------------------------------------------------------------------------------
// TOML machine files.

namespace {

std::string NodeText(const toml::node& n) {
  std::ostringstream ss;
  if (n.is_string()) {
    ss << '"' << n.as_string()->get() << '"';
  } else if (n.is_table()) {
    ss << "a table";
  } else if (n.is_array()) {
    ss << "an array";
  } else {
    n.visit([&ss](const auto& v) { ss << v; });
  }
  return ss.str();
}

class TomlReader {
 public:
  explicit TomlReader(const std::string& source) : source_(source) {}

  [[noreturn]] void Fail(const toml::node& n, const std::string& field,
                         const std::string& what) const {
    throw UserError(source_ + ":" + std::to_string(n.source().begin.line) + ": " + field + ": " +
                    what);
  }

  void CheckKeys(const toml::table& t, const std::string& section,
                 std::initializer_list<std::string_view> known) const {
    for (auto&& [key, node] : t) {
      bool ok = false;
      for (auto k : known) ok = ok || key.str() == k;
      if (!ok) {
        const std::string field =
            section.empty() ? std::string(key.str()) : section + "." + std::string(key.str());
        throw UserError(source_ + ":" + std::to_string(key.source().begin.line) + ": unknown " +
                        (section.empty() ? "section or field '" : "field '") + field + "'; known " +
                        (section.empty() ? "ones" : "fields of [" + section + "]") + ": " +
                        JoinNames(known));
      }
    }
  }

  const toml::table* Section(const toml::table& root, std::string_view name) const {
    const toml::node* n = root.get(name);
    if (n == nullptr) return nullptr;
    if (!n->is_table())
      Fail(*n, std::string(name),
           "expected a section [" + std::string(name) + "], got " + NodeText(*n));
    return n->as_table();
  }

  // A number (integer or float). `min_exclusive`: > min instead of >= min.
  void Double(const toml::table* t, const std::string& section, std::string_view key, double* out,
              double min, bool min_exclusive, bool allow_inf, const char* expected) const {
    const toml::node* n = t == nullptr ? nullptr : t->get(key);
    if (n == nullptr) return;
    const std::string field = section + "." + std::string(key);
    double v;
    if (n->is_floating_point())
      v = n->as_floating_point()->get();
    else if (n->is_integer())
      v = static_cast<double>(n->as_integer()->get());
    else
      Fail(*n, field, std::string("expected ") + expected + ", got " + NodeText(*n));
    const bool bad = std::isnan(v) || (std::isinf(v) && !(allow_inf && v > 0)) ||
                     (min_exclusive ? !(v > min) : !(v >= min));
    if (bad) Fail(*n, field, std::string("expected ") + expected + ", got " + NodeText(*n));
    *out = v;
  }

  std::int64_t Integer(const toml::node& n, const std::string& field, std::int64_t min,
                       std::int64_t max, const char* expected) const {
    if (!n.is_integer())
      Fail(n, field, std::string("expected ") + expected + ", got " + NodeText(n));
    const std::int64_t v = n.as_integer()->get();
    if (v < min || v > max)
      Fail(n, field, std::string("expected ") + expected + ", got " + NodeText(n));
    return v;
  }

  void Int(const toml::table* t, const std::string& section, std::string_view key, int* out,
           int min, const char* expected) const {
    const toml::node* n = t == nullptr ? nullptr : t->get(key);
    if (n == nullptr) return;
    *out = static_cast<int>(Integer(*n, section + "." + std::string(key), min,
                                    std::numeric_limits<int>::max(), expected));
  }

  void Bool(const toml::table* t, const std::string& section, std::string_view key,
            bool* out) const {
    const toml::node* n = t == nullptr ? nullptr : t->get(key);
    if (n == nullptr) return;
    if (!n->is_boolean())
      Fail(*n, section + "." + std::string(key), "expected true or false, got " + NodeText(*n));
    *out = n->as_boolean()->get();
  }

  const std::string* String(const toml::node* n, const std::string& field,
                            const char* expected) const {
    if (n == nullptr) return nullptr;
    if (!n->is_string())
      Fail(*n, field, std::string("expected ") + expected + ", got " + NodeText(*n));
    return &n->as_string()->get();
  }

  std::vector<int> IntList(const toml::node& n, const std::string& field, int min,
                           const char* expected) const {
    if (!n.is_array()) Fail(n, field, std::string("expected ") + expected + ", got " + NodeText(n));
    std::vector<int> out;
    std::size_t i = 0;
    for (const toml::node& e : *n.as_array()) {
      out.push_back(static_cast<int>(Integer(e, field + "[" + std::to_string(i) + "]", min,
                                             std::numeric_limits<int>::max(), expected)));
      ++i;
    }
    return out;
  }

  const std::string& source() const { return source_; }

 private:
  const std::string& source_;
};

}  // namespace

Machine ParseMachineToml(std::string_view text, const std::string& source,
                         const std::string& base_dir) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw UserError(source + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) +
                    ": not valid TOML: " + std::string(e.description()));
  }
  const TomlReader r(source);
  Machine m;
  r.CheckKeys(
      root, "",
      {"name", "nodes", "intra_node", "inter_node", "protocol", "cpu", "collectives", "topology"});
  if (const std::string* s = r.String(root.get("name"), "name", "a string")) m.name = *s;

  if (const toml::table* t = r.Section(root, "nodes")) {
    r.CheckKeys(*t, "nodes", {"count", "cpus_per_node", "mapping", "rank_to_node"});
    r.Int(t, "nodes", "count", &m.nodes, 0, "an integer >= 0 (0 = as many as the ranks need)");
    r.Int(t, "nodes", "cpus_per_node", &m.cpus_per_node, 1, "an integer >= 1");
    if (const std::string* s = r.String(t->get("mapping"), "nodes.mapping",
                                        "\"fill\", \"round_robin\" or \"explicit\"")) {
      if (*s == "fill")
        m.mapping = Mapping::kFill;
      else if (*s == "round_robin")
        m.mapping = Mapping::kRoundRobin;
      else if (*s == "explicit")
        m.mapping = Mapping::kExplicit;
      else
        r.Fail(*t->get("mapping"), "nodes.mapping",
               "expected \"fill\", \"round_robin\" or \"explicit\", got \"" + *s + "\"");
    }
    if (const toml::node* n = t->get("rank_to_node"))
      m.rank_to_node = r.IntList(*n, "nodes.rank_to_node", 0, "a list of node ids >= 0");
  }

  if (const toml::table* t = r.Section(root, "intra_node")) {
    r.CheckKeys(*t, "intra_node", {"latency_s", "bandwidth_Bps"});
    r.Double(t, "intra_node", "latency_s", &m.intra_latency_s, 0, false, false,
             "a latency in seconds >= 0");
    r.Double(t, "intra_node", "bandwidth_Bps", &m.intra_bandwidth_Bps, 0, true, true,
             "a bandwidth in bytes/s > 0 (inf = instantaneous)");
  }
  if (const toml::table* t = r.Section(root, "inter_node")) {
    r.CheckKeys(
        *t, "inter_node",
        {"latency_s", "bandwidth_Bps", "buses", "input_links", "output_links", "half_duplex"});
    r.Double(t, "inter_node", "latency_s", &m.inter_latency_s, 0, false, false,
             "a latency in seconds >= 0");
    r.Double(t, "inter_node", "bandwidth_Bps", &m.inter_bandwidth_Bps, 0, true, true,
             "a bandwidth in bytes/s > 0 (inf = instantaneous)");
    r.Int(t, "inter_node", "buses", &m.buses, 0, "an integer >= 0 (0 = unlimited)");
    r.Int(t, "inter_node", "input_links", &m.input_links, 0, "an integer >= 0 (0 = unlimited)");
    r.Int(t, "inter_node", "output_links", &m.output_links, 0, "an integer >= 0 (0 = unlimited)");
    r.Bool(t, "inter_node", "half_duplex", &m.half_duplex);
  }
  if (const toml::table* t = r.Section(root, "protocol")) {
    r.CheckKeys(*t, "protocol", {"eager_threshold_bytes"});
    if (const toml::node* n = t->get("eager_threshold_bytes"))
      m.eager_threshold_bytes = static_cast<std::uint64_t>(
          r.Integer(*n, "protocol.eager_threshold_bytes", 0,
                    std::numeric_limits<std::int64_t>::max(), "a size in bytes >= 0"));
  }
  if (const toml::table* t = r.Section(root, "cpu")) {
    r.CheckKeys(*t, "cpu", {"instructions_per_second", "cpu_ratio", "flops_per_second"});
    r.Double(t, "cpu", "instructions_per_second", &m.instructions_per_second, 0, false, false,
             "instructions per second >= 0 (0 = use cpu_ratio)");
    r.Double(t, "cpu", "cpu_ratio", &m.cpu_ratio, 0, false, false,
             "a ratio >= 0 applied to traced CPU time");
    r.Double(t, "cpu", "flops_per_second", &m.flops_per_second, 0, false, false,
             "flop/s >= 0 (0 = unknown)");
  }
  if (const toml::table* t = r.Section(root, "collectives")) {
    r.CheckKeys(*t, "collectives", {"file", "table"});
    if (const std::string* f = r.String(t->get("file"), "collectives.file",
                                        "the path of a Dimemas collective table")) {
      std::filesystem::path p(*f);
      if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
      try {
        m.collectives = LoadCollectiveTableFile(p.string(), m.collectives);
      } catch (const UserError& e) {
        r.Fail(*t->get("file"), "collectives.file", e.what());
      }
    }
    if (const toml::node* n = t->get("table")) {
      // Lines here override the file's rows; an id twice within `table` is an error.
      std::vector<NumberedLine> lines;
      if (n->is_string()) {
        const std::string& lines_text = n->as_string()->get();
        // A multi-line string starts on the line after its opening `"""`.
        const int first = static_cast<int>(n->source().begin.line) +
                          (lines_text.find('\n') == std::string::npos ? 0 : 1);
        lines = SplitLines(StripBlockComments(lines_text, source, first), first);
      } else if (n->is_array()) {
        for (const toml::node& e : *n->as_array()) {
          if (!e.is_string())
            r.Fail(e, "collectives.table",
                   "expected strings in Dimemas syntax such as \"11 LOG 2MAX LOG MAX\", got " +
                       NodeText(e));
          const int at = static_cast<int>(e.source().begin.line);
          lines.push_back({at, StripBlockComments(e.as_string()->get(), source, at)});
        }
      } else {
        r.Fail(*n, "collectives.table",
               "expected a list of lines in Dimemas syntax, got " + NodeText(*n));
      }
      m.collectives = ParseCollectiveLines(lines, source, m.collectives, "collectives.table");
    }
  }
  if (const toml::table* t = r.Section(root, "topology")) {
    r.CheckKeys(*t, "topology", {"kind", "dims", "fat_tree_arity", "links", "hop_latency_s"});
    constexpr const char* kKinds =
        "\"none\", \"ring\", \"torus2d\", \"torus3d\", \"hypercube\", \"fat_tree\" or \"links\"";
    if (const std::string* s = r.String(t->get("kind"), "topology.kind", kKinds)) {
      bool found = false;
      for (auto k : {TopologyKind::kNone, TopologyKind::kRing, TopologyKind::kTorus2D,
                     TopologyKind::kTorus3D, TopologyKind::kHypercube, TopologyKind::kFatTree,
                     TopologyKind::kLinks})
        if (*s == TopologyKindName(k)) m.topology.kind = k, found = true;
      if (!found)
        r.Fail(*t->get("kind"), "topology.kind",
               std::string("expected ") + kKinds + ", got \"" + *s + "\"");
    }
    if (const toml::node* n = t->get("dims"))
      m.topology.dims = r.IntList(*n, "topology.dims", 1, "a list of dimensions >= 1");
    r.Int(t, "topology", "fat_tree_arity", &m.topology.fat_tree_arity, 0,
          "an integer >= 2 (switch down-links)");
    if (const toml::node* n = t->get("links")) {
      if (!n->is_array())
        r.Fail(*n, "topology.links", "expected a list of [node, node] pairs, got " + NodeText(*n));
      std::size_t i = 0;
      for (const toml::node& e : *n->as_array()) {
        const std::string field = "topology.links[" + std::to_string(i++) + "]";
        const std::vector<int> pair = r.IntList(e, field, 0, "a [node, node] pair of ids >= 0");
        if (pair.size() != 2)
          r.Fail(e, field,
                 "expected a [node, node] pair, got " + std::to_string(pair.size()) + " entries");
        m.topology.links.emplace_back(pair[0], pair[1]);
      }
    }
    r.Double(t, "topology", "hop_latency_s", &m.topology.hop_latency_s, 0, false, false,
             "a latency per extra hop in seconds >= 0");
  }

  std::string error;
  if (!m.IsValid(&error)) throw UserError(source + ": " + error);
  return m;
}

Machine LoadMachineFile(const std::string& path) {
  const std::string text = ReadWholeFile(path, "machine file");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return ParseMachineToml(text, path, parent.string());
}

Machine LoadAnyMachine(const std::string& path) {
  const std::string ext = Lower(std::filesystem::path(path).extension().string());
  if (ext == ".cfg") return LoadDimemasCfg(path);
  return LoadMachineFile(path);
}

namespace {

std::string TomlString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

template <typename T>
std::string IntListText(const std::vector<T>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(v[i]);
  }
  return out + "]";
}

void Field(std::string& out, std::string_view key, const std::string& value,
           std::string_view comment) {
  std::string line = std::string(key) + " = " + value;
  if (!comment.empty()) {
    if (line.size() < 34)
      line.resize(34, ' ');
    else
      line += ' ';
    line += "# ";
    line += comment;
  }
  out += line + "\n";
}

}  // namespace

std::string MachineToToml(const Machine& m, std::string_view comment) {
  std::string out;
  if (!comment.empty()) {
    std::istringstream lines{std::string(comment)};
    std::string line;
    while (std::getline(lines, line)) out += line.empty() ? "#\n" : "# " + line + "\n";
    out += "\n";
  }
  out += "# pas2p machine file; datasets/machines/default.toml documents every field.\n";
  Field(out, "name", TomlString(m.name), "");
  out += "\n[nodes]\n";
  Field(out, "count", std::to_string(m.nodes), "nodes (0 = as many as the ranks need)");
  Field(out, "cpus_per_node", std::to_string(m.cpus_per_node),
        "ranks per node (fill, round_robin)");
  Field(out, "mapping", TomlString(MappingName(m.mapping)), "fill | round_robin | explicit");
  Field(out, "rank_to_node", IntListText(m.rank_to_node), "explicit: node of each rank");
  out += "\n[intra_node]  # ranks on the same node: T = latency_s + bytes / bandwidth_Bps\n";
  Field(out, "latency_s", FormatDouble(m.intra_latency_s), "");
  Field(out, "bandwidth_Bps", FormatDouble(m.intra_bandwidth_Bps), "bytes/s (inf = instantaneous)");
  out += "\n[inter_node]  # ranks on different nodes\n";
  Field(out, "latency_s", FormatDouble(m.inter_latency_s), "");
  Field(out, "bandwidth_Bps", FormatDouble(m.inter_bandwidth_Bps), "bytes/s (inf = instantaneous)");
  Field(out, "buses", std::to_string(m.buses), "concurrent inter-node transfers (0 = unlimited)");
  Field(out, "input_links", std::to_string(m.input_links), "per node (0 = unlimited)");
  Field(out, "output_links", std::to_string(m.output_links), "per node (0 = unlimited)");
  Field(out, "half_duplex", m.half_duplex ? "true" : "false",
        "a link carries one direction at a time");
  out += "\n[protocol]\n";
  Field(out, "eager_threshold_bytes", std::to_string(m.eager_threshold_bytes),
        "larger messages use rendezvous");
  out += "\n[cpu]\n";
  Field(out, "instructions_per_second", FormatDouble(m.instructions_per_second),
        "used when the trace has instructions (0 = off)");
  Field(out, "cpu_ratio", FormatDouble(m.cpu_ratio), "else: traced CPU time x cpu_ratio");
  Field(out, "flops_per_second", FormatDouble(m.flops_per_second),
        "per core, for SimGrid TI export (0 = unknown)");
  out += "\n[collectives]  # ID MODEL_IN SIZE_IN MODEL_OUT SIZE_OUT (paper 000, Dimemas syntax)\n";
  out += "table = [\n";
  for (int id = 0; id < kDimemasCollectiveCount; ++id) {
    std::string line = "  " + TomlString(CollectiveLine(id, m.collectives[id])) + ",";
    line.resize(std::max<std::size_t>(line.size(), 26), ' ');
    out += line + "# " + std::string(kCollectiveNames[id]) + "\n";
  }
  out += "]\n";
  out += "\n[topology]  # hop-dependent latency along shortest routes (paper 002)\n";
  Field(out, "kind", TomlString(TopologyKindName(m.topology.kind)),
        "none | ring | torus2d | torus3d | hypercube | fat_tree | links");
  Field(out, "dims", IntListText(m.topology.dims), "torus dimensions");
  Field(out, "fat_tree_arity", std::to_string(m.topology.fat_tree_arity), "fat tree switch radix");
  {
    std::string links = "[";
    for (std::size_t i = 0; i < m.topology.links.size(); ++i) {
      if (i > 0) links += ", ";
      links += "[" + std::to_string(m.topology.links[i].first) + ", " +
               std::to_string(m.topology.links[i].second) + "]";
    }
    Field(out, "links", links + "]", "links: undirected node pairs");
  }
  Field(out, "hop_latency_s", FormatDouble(m.topology.hop_latency_s), "per hop beyond the first");
  return out;
}

void SaveMachineFile(const Machine& machine, const std::string& path, std::string_view comment) {
  internal::WriteWholeFile(path, MachineToToml(machine, comment), "machine file");
}

}  // namespace pas2p::sim
