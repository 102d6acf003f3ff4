// Dimemas .cfg import/export (record syntax: see dimemas_cfg.h).
#include "pas2p/simulator/dimemas_cfg.h"

#include <algorithm>
#include <boost/regex.hpp>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "machine_text.h"
#include "pas2p/core/error.h"
#include "pas2p/simulator/machine_file.h"

namespace pas2p::sim {

namespace {

constexpr double kBytesPerMB = 1024.0 * 1024.0;  // Dimemas MB = 2^20 bytes

struct CfgField {
  enum Kind { kString, kNumber, kArray } kind;
  std::string text;                // string contents, number text, or array body
  std::vector<std::string> items;  // array elements
  int line;
};

struct CfgRecord {
  std::string name;
  int line;
  std::vector<CfgField> fields;
};

int LineAt(const std::string& text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

std::string Trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

class CfgParser {
 public:
  CfgParser(std::string_view text, const std::string& source) : source_(source) {
    text_ = BlankComments(std::string(text));
  }

  std::vector<CfgRecord> Records() {
    static const boost::regex kRecord(
        R"re("([^"\n]*)"\s*\{((?:[^{}"]|"[^"]*"|\{[^{}]*\})*)\}\s*;;)re");
    std::vector<CfgRecord> out;
    auto start = text_.cbegin();
    boost::smatch m;
    while (boost::regex_search(start, text_.cend(), m, kRecord)) {
      CheckBlank(start, m[0].first);
      CfgRecord rec;
      rec.name = m[1].str();
      rec.line = LineAt(text_, m[0].first - text_.cbegin());
      rec.fields = SplitFields(m[2].first - text_.cbegin(), m[2].second - text_.cbegin(), rec);
      out.push_back(std::move(rec));
      start = m[0].second;
    }
    CheckBlank(start, text_.cend());
    return out;
  }

  [[noreturn]] void Fail(int line, const std::string& what) const {
    throw UserError(source_ + ":" + std::to_string(line) + ": " + what);
  }

 private:
  // `/* ... */` and `#...` line comments become spaces (newlines kept for line numbers).
  std::string BlankComments(std::string s) const {
    for (std::size_t i = 0; i < s.size();) {
      if (s[i] == '"') {
        const auto close = s.find('"', i + 1);
        i = close == std::string::npos ? s.size() : close + 1;
      } else if (s.compare(i, 2, "/*") == 0) {
        const auto close = s.find("*/", i + 2);
        if (close == std::string::npos)
          Fail(LineAt(s, i), "a '/*' comment is never closed with '*/'");
        for (std::size_t k = i; k < close + 2; ++k)
          if (s[k] != '\n') s[k] = ' ';
        i = close + 2;
      } else if (s[i] == '#' && (i == 0 || s[i - 1] == '\n')) {
        while (i < s.size() && s[i] != '\n') s[i++] = ' ';
      } else {
        ++i;
      }
    }
    return s;
  }

  void CheckBlank(std::string::const_iterator b, std::string::const_iterator e) const {
    for (auto it = b; it != e; ++it)
      if (!std::isspace(static_cast<unsigned char>(*it))) {
        const std::size_t pos = it - text_.cbegin();
        const auto eol = text_.find('\n', pos);
        Fail(LineAt(text_, pos), "expected a record '\"name\" {field, ...};;', got '" +
                                     Trim(text_.substr(pos, eol - pos)) + "'");
      }
  }

  std::vector<CfgField> SplitFields(std::size_t b, std::size_t e, const CfgRecord& rec) const {
    std::vector<CfgField> fields;
    std::size_t i = b;
    auto skip_ws = [&] {
      while (i < e && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
    };
    skip_ws();
    if (i == e) return fields;
    while (true) {
      skip_ws();
      CfgField f;
      f.line = LineAt(text_, i);
      if (i < e && text_[i] == '"') {
        const auto close = text_.find('"', i + 1);
        f.kind = CfgField::kString;
        f.text = text_.substr(i + 1, close - i - 1);
        i = close + 1;
      } else if (i < e && text_[i] == '[') {
        const auto open = text_.find('{', i);
        const auto close = text_.find('}', i);
        if (open == std::string::npos || open > e || close == std::string::npos || close > e)
          Fail(f.line, "record \"" + rec.name + "\" field " + std::to_string(fields.size() + 1) +
                           ": expected an array '[n] {v1, ..., vn}'");
        f.kind = CfgField::kArray;
        const std::string count = Trim(text_.substr(i + 1, text_.find(']', i) - i - 1));
        const std::string body = text_.substr(open + 1, close - open - 1);
        std::size_t s = 0;
        while (s <= body.size() && !Trim(body).empty()) {
          const auto comma = body.find(',', s);
          f.items.push_back(
              Trim(body.substr(s, comma == std::string::npos ? std::string::npos : comma - s)));
          if (comma == std::string::npos) break;
          s = comma + 1;
        }
        f.text = count;
        if (count != std::to_string(f.items.size()))
          Fail(f.line, "record \"" + rec.name + "\" field " + std::to_string(fields.size() + 1) +
                           ": array says [" + count + "] but lists " +
                           std::to_string(f.items.size()) + " values");
        i = close + 1;
      } else {
        const auto comma = std::min(text_.find(',', i), e);
        f.kind = CfgField::kNumber;
        f.text = Trim(text_.substr(i, comma - i));
        i = comma;
      }
      fields.push_back(std::move(f));
      skip_ws();
      if (i >= e) break;
      if (text_[i] != ',')
        Fail(LineAt(text_, i), "record \"" + rec.name + "\": expected ',' between fields, got '" +
                                   std::string(1, text_[i]) + "'");
      ++i;
    }
    return fields;
  }

  std::string text_;
  const std::string& source_;
};

// Typed access to one record's fields, with errors naming the record, field and meaning.
class RecordReader {
 public:
  RecordReader(const CfgParser& p, const CfgRecord& r, std::vector<const char*> meanings)
      : p_(p), r_(r), meanings_(std::move(meanings)) {}

  void ExpectCount(std::size_t min, std::size_t max) const {
    if (r_.fields.size() < min || r_.fields.size() > max)
      p_.Fail(r_.line, "record \"" + r_.name + "\": expected " + std::to_string(min) +
                           (min == max ? "" : " to " + std::to_string(max)) + " fields, got " +
                           std::to_string(r_.fields.size()));
  }

  std::string Where(std::size_t i) const {
    return "record \"" + r_.name + "\" field " + std::to_string(i + 1) +
           (i < meanings_.size() ? std::string(" (") + meanings_[i] + ")" : std::string());
  }

  const std::string& String(std::size_t i) const {
    const CfgField& f = r_.fields.at(i);
    if (f.kind != CfgField::kString)
      p_.Fail(f.line, Where(i) + ": expected a quoted string, got '" + f.text + "'");
    return f.text;
  }

  double Number(std::size_t i, double min) const {
    const CfgField& f = r_.fields.at(i);
    double v = 0;
    bool ok = f.kind == CfgField::kNumber && !f.text.empty();
    if (ok) {
      try {
        std::size_t used = 0;
        v = std::stod(f.text, &used);
        ok = used == f.text.size() && std::isfinite(v);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || v < min)
      p_.Fail(f.line, Where(i) + ": expected a number >= " + internal::FormatDouble(min) +
                          ", got '" + f.text + "'");
    return v;
  }

  int Int(std::size_t i, int min) const {
    const CfgField& f = r_.fields.at(i);
    const double v = Number(i, min);
    if (v != std::floor(v) || v > std::numeric_limits<int>::max())
      p_.Fail(f.line, Where(i) + ": expected an integer, got '" + f.text + "'");
    return static_cast<int>(v);
  }

  std::vector<int> IntArray(std::size_t i) const {
    const CfgField& f = r_.fields.at(i);
    if (f.kind != CfgField::kArray)
      p_.Fail(f.line, Where(i) + ": expected an array '[n] {v1, ..., vn}', got '" + f.text + "'");
    std::vector<int> out;
    for (const std::string& item : f.items) {
      int v = -1;
      auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (ec != std::errc() || end != item.data() + item.size() || v < 0)
        p_.Fail(f.line, Where(i) + ": expected node ids >= 0, got '" + item + "'");
      out.push_back(v);
    }
    return out;
  }

  int line() const { return r_.line; }

 private:
  const CfgParser& p_;
  const CfgRecord& r_;
  std::vector<const char*> meanings_;
};

double BandwidthFromMB(double mb_per_s) {
  return mb_per_s == 0.0 ? std::numeric_limits<double>::infinity() : mb_per_s * kBytesPerMB;
}

double BandwidthToMB(double bytes_per_s) {
  return std::isinf(bytes_per_s) ? 0.0 : bytes_per_s / kBytesPerMB;
}

// The per-node parameters shared by "node information" and "multi node information".
struct NodeParams {
  int processors;
  double dimemas_ratio;
  double intra_latency_s, intra_bw_MBps, inter_latency_s;
  int inter_in_links, inter_out_links;
  bool operator==(const NodeParams&) const = default;
};

const std::vector<const char*> kMultiNodeMeanings = {"machine id",
                                                     "number of nodes with this configuration",
                                                     "architecture",
                                                     "processors per node",
                                                     "CPU speed ratio (divisive)",
                                                     "intra-node latency (s)",
                                                     "intra-node bandwidth (MB/s)",
                                                     "intra-node buses",
                                                     "intra-node input links",
                                                     "intra-node output links",
                                                     "inter-node latency (s)",
                                                     "inter-node input links",
                                                     "inter-node output links",
                                                     "WAN latency (s)"};
const std::vector<const char*> kNodeMeanings = {"machine id",
                                                "architecture",
                                                "processors per node",
                                                "CPU speed ratio (divisive)",
                                                "intra-node latency (s)",
                                                "intra-node bandwidth (MB/s)",
                                                "intra-node buses",
                                                "intra-node input links",
                                                "intra-node output links",
                                                "inter-node latency (s)",
                                                "inter-node input links",
                                                "inter-node output links",
                                                "WAN latency (s)"};
const std::vector<const char*> kEnvironmentMeanings = {"machine name",
                                                       "machine id",
                                                       "architecture",
                                                       "number of nodes",
                                                       "inter-node bandwidth (MB/s)",
                                                       "inter-node buses (0 = unlimited)",
                                                       "collective model"};

}  // namespace

Machine ParseDimemasCfg(std::string_view text, const std::string& source,
                        const std::string& base_dir, const Machine& base) {
  CfgParser parser(text, source);
  const std::vector<CfgRecord> records = parser.Records();
  Machine m = base;
  m.mapping = Mapping::kFill;
  m.rank_to_node.clear();

  std::optional<int> env_nodes;
  int env_line = 0;
  std::optional<NodeParams> node;
  int node_line = 0;
  int multi_node_total = 0;
  bool have_multi = false;
  std::optional<int> tasks_per_node;
  std::optional<Mapping> predefined;
  std::string collectives_file;
  int collectives_line = 0;

  auto merge_node = [&](const NodeParams& p, int line) {
    if (node && !(*node == p))
      parser.Fail(line, "nodes differ from the node described on line " +
                            std::to_string(node_line) +
                            "; pas2p models machines whose nodes are all alike");
    if (!node) node = p, node_line = line;
  };

  for (const CfgRecord& rec : records) {
    if (rec.name == "environment information") {
      RecordReader r(parser, rec, kEnvironmentMeanings);
      r.ExpectCount(7, 7);
      if (env_nodes)
        parser.Fail(rec.line,
                    "a second \"environment information\" record (pas2p "
                    "models one machine)");
      const std::string& name = r.String(0);
      if (!name.empty()) m.name = name;
      env_nodes = r.Int(3, 0);
      env_line = rec.line;
      m.inter_bandwidth_Bps = BandwidthFromMB(r.Number(4, 0));
      m.buses = r.Int(5, 0);
    } else if (rec.name == "multi node information") {
      RecordReader r(parser, rec, kMultiNodeMeanings);
      r.ExpectCount(13, 14);
      have_multi = true;
      multi_node_total += r.Int(1, 0);
      merge_node({r.Int(3, 1), r.Number(4, 0), r.Number(5, 0), r.Number(6, 0), r.Number(10, 0),
                  r.Int(11, 0), r.Int(12, 0)},
                 rec.line);
      (void)r.Int(7, 0), (void)r.Int(8, 0), (void)r.Int(9, 0);  // validated, not modelled
    } else if (rec.name == "node information") {
      RecordReader r(parser, rec, kNodeMeanings);
      r.ExpectCount(12, 13);
      merge_node({r.Int(2, 1), r.Number(3, 0), r.Number(4, 0), r.Number(5, 0), r.Number(9, 0),
                  r.Int(10, 0), r.Int(11, 0)},
                 rec.line);
      (void)r.Int(6, 0), (void)r.Int(7, 0), (void)r.Int(8, 0);
    } else if (rec.name == "predefined mapping information") {
      RecordReader r(parser, rec, {"trace file name (optional)", "predefined map"});
      r.ExpectCount(1, 2);
      const std::string map = Trim(r.String(rec.fields.size() - 1));
      static const boost::regex kTasksPerNode(R"((\d+)\s+TASKS_PER_NODE)", boost::regex::icase);
      boost::smatch mm;
      if (boost::regex_match(map, mm, kTasksPerNode)) {
        tasks_per_node = std::stoi(mm[1].str());
        if (*tasks_per_node < 1) parser.Fail(rec.line, "\"N TASKS_PER_NODE\" needs N >= 1");
        predefined = Mapping::kFill;
      } else if (internal::Upper(map) == "FILL_NODES") {
        predefined = Mapping::kFill;
      } else if (internal::Upper(map) == "INTERLEAVED") {
        predefined = Mapping::kRoundRobin;
      } else {
        parser.Fail(rec.line,
                    "record \"predefined mapping information\": expected "
                    "\"FILL_NODES\", \"<n> TASKS_PER_NODE\" or \"INTERLEAVED\", got \"" +
                        map + "\"");
      }
    } else if (rec.name == "mapping information") {
      RecordReader r(parser, rec, {"trace file name", "number of tasks", "node of each task"});
      r.ExpectCount(3, 3);
      const int ntasks = r.Int(1, 1);
      m.rank_to_node = r.IntArray(2);
      if (static_cast<int>(m.rank_to_node.size()) != ntasks)
        parser.Fail(rec.line, "record \"mapping information\": says " + std::to_string(ntasks) +
                                  " tasks but maps " + std::to_string(m.rank_to_node.size()));
      m.mapping = Mapping::kExplicit;
    } else if (rec.name == "configuration files") {
      RecordReader r(
          parser, rec,
          {"scheduler file", "file system file", "collectives table file", "sensitivity file"});
      r.ExpectCount(4, 4);
      collectives_file = r.String(2);
      collectives_line = rec.line;
    } else if (rec.name == "wide area network information" || rec.name == "modules information" ||
               rec.name == "file system parameters" ||
               rec.name == "dedicated connection information") {
      // Accepted, not modelled: pas2p simulates a single machine without I/O.
    } else {
      parser.Fail(rec.line, "unknown record \"" + rec.name +
                                "\"; known records: \"wide area network information\", "
                                "\"environment information\", \"node information\", \"multi node "
                                "information\", \"mapping information\", \"predefined mapping "
                                "information\", \"configuration files\", \"modules information\", "
                                "\"file system parameters\", \"dedicated connection information\"");
    }
  }

  if (!env_nodes) parser.Fail(1, "missing record \"environment information\"");
  if (!node) parser.Fail(1, "missing record \"multi node information\" (or \"node information\")");
  if (have_multi && multi_node_total != *env_nodes)
    parser.Fail(node_line, "\"multi node information\" describes " +
                               std::to_string(multi_node_total) +
                               " nodes but \"environment "
                               "information\" (line " +
                               std::to_string(env_line) + ") says " + std::to_string(*env_nodes));
  m.nodes = *env_nodes;
  m.cpus_per_node = tasks_per_node.value_or(node->processors);
  if (m.mapping != Mapping::kExplicit) m.mapping = predefined.value_or(Mapping::kFill);
  m.cpu_ratio = node->dimemas_ratio == 0.0 ? 0.0 : 1.0 / node->dimemas_ratio;
  m.intra_latency_s = node->intra_latency_s;
  m.intra_bandwidth_Bps = BandwidthFromMB(node->intra_bw_MBps);
  m.inter_latency_s = node->inter_latency_s;
  m.input_links = node->inter_in_links;
  m.output_links = node->inter_out_links;

  if (!collectives_file.empty()) {
    std::filesystem::path p(collectives_file);
    if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
    try {
      m.collectives = LoadCollectiveTableFile(p.string(), base.collectives);
    } catch (const UserError& e) {
      parser.Fail(collectives_line,
                  "record \"configuration files\" field 3 (collectives table file): " +
                      std::string(e.what()));
    }
  }

  std::string error;
  if (!m.IsValid(&error)) throw UserError(source + ": " + error);
  return m;
}

Machine LoadDimemasCfg(const std::string& path, const Machine& base) {
  const std::string text = internal::ReadWholeFile(path, "Dimemas configuration");
  return ParseDimemasCfg(text, path, std::filesystem::path(path).parent_path().string(), base);
}

std::string DimemasCfgToString(const Machine& m, const std::string& collectives_file) {
  using internal::FormatDouble;
  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char c : s) out += (c == '"' || c == '\n') ? '_' : c;  // .cfg strings have no escapes
    return out + "\"";
  };
  std::string out = "#DIMEMAS_CONFIGURATION\n\n";
  out += "/* Written by pas2p from machine '" + m.name + "'.\n";
  out += " * Bandwidths in MB/s with MB = 2^20 bytes (0 = instantaneous); CPU ratio divides\n";
  out += " * traced burst times. Not expressible here (kept in the pas2p machine file):\n";
  out += " *   eager threshold " + std::to_string(m.eager_threshold_bytes) +
         " bytes, instructions/s " + FormatDouble(m.instructions_per_second) + ", flop/s " +
         FormatDouble(m.flops_per_second) + ", " + (m.half_duplex ? "half" : "full") +
         "-duplex links, topology " + std::string(TopologyKindName(m.topology.kind)) + ".\n";
  out += " * pas2p does not model intra-node contention: intra-node buses 0, links 1/1. */\n\n";
  out += "\"wide area network information\" {\"\", 1, 0, 4, 0.0, 0.0, 1};;\n\n";
  out += "\"environment information\" {" + quoted(m.name) + ", 0, \"\", " +
         std::to_string(m.nodes) + ", " + FormatDouble(BandwidthToMB(m.inter_bandwidth_Bps)) +
         ", " + std::to_string(m.buses) + ", 1};;\n\n";
  const double ratio = m.cpu_ratio == 0.0 ? 0.0 : 1.0 / m.cpu_ratio;
  out += "\"multi node information\" {0, " + std::to_string(m.nodes) + ", \"\", " +
         std::to_string(m.cpus_per_node) + ", " + FormatDouble(ratio) + ", " +
         FormatDouble(m.intra_latency_s) + ", " +
         FormatDouble(BandwidthToMB(m.intra_bandwidth_Bps)) + ", 0, 1, 1, " +
         FormatDouble(m.inter_latency_s) + ", " + std::to_string(m.input_links) + ", " +
         std::to_string(m.output_links) + ", 0.0};;\n\n";
  switch (m.mapping) {
    case Mapping::kFill:
      out += "\"predefined mapping information\" {\"" + std::to_string(m.cpus_per_node) +
             " TASKS_PER_NODE\"};;\n\n";
      break;
    case Mapping::kRoundRobin:
      out += "\"predefined mapping information\" {\"INTERLEAVED\"};;\n\n";
      break;
    case Mapping::kExplicit: {
      const std::string n = std::to_string(m.rank_to_node.size());
      out += "\"mapping information\" {\"\", " + n + ", [" + n + "] {";
      for (std::size_t i = 0; i < m.rank_to_node.size(); ++i)
        out += (i > 0 ? "," : "") + std::to_string(m.rank_to_node[i]);
      out += "}};;\n\n";
      break;
    }
  }
  out += "\"configuration files\" {\"\", \"\", " + quoted(collectives_file) + ", \"\"};;\n";
  return out;
}

void SaveDimemasCfg(const Machine& machine, const std::string& path) {
  std::filesystem::path table = path;
  table.replace_extension(".collectives");
  internal::WriteWholeFile(table.string(),
                           "# Dimemas collective table: ID MODEL_IN SIZE_IN MODEL_OUT SIZE_OUT\n" +
                               CollectiveTableToText(machine.collectives),
                           "collective table");
  internal::WriteWholeFile(path, DimemasCfgToString(machine, table.filename().string()),
                           "Dimemas configuration");
}

}  // namespace pas2p::sim
