#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pas2p/core/trace.h"

namespace pas2p {

using ordered_json = nlohmann::ordered_json;

bool TraceMetadata::HasInstructions() const {
  return std::find(counters.begin(), counters.end(), "PAPI_TOT_INS") != counters.end();
}
bool TraceMetadata::HasCycles() const {
  return std::find(counters.begin(), counters.end(), "PAPI_TOT_CYC") != counters.end();
}

bool TraceMetadata::IsOversubscribed() const {
  return std::any_of(hosts.begin(), hosts.end(),
                     [](const HostPlacement& h) { return h.Oversubscribed(); });
}

namespace {

// "24.5", "2", "0.333": ranks per core with at most 3 significant digits.
std::string PerCore(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", value);
  return buf;
}

std::string Plural(long long n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string DescribeHost(const HostPlacement& h) {
  std::string out = h.host + ": " + Plural(h.ranks, "rank");
  if (h.cores <= 0) return out + ", cores unknown";
  return out + " on " + Plural(h.cores, "core") + ", " + PerCore(h.RanksPerCore()) + " per core";
}

}  // namespace

std::string ApplicationBaseName(const std::string& name, int nprocs) {
  if (nprocs <= 0) return name;
  const std::string count = std::to_string(nprocs);
  const auto is_delim = [](char c) { return c == '.' || c == '_' || c == '-'; };
  // The last occurrence wins: "app.4.4" at 4 -> "app.4".
  for (std::size_t pos = name.rfind(count); pos != std::string::npos;
       pos = pos == 0 ? std::string::npos : name.rfind(count, pos - 1)) {
    const std::size_t end = pos + count.size();
    const bool left = pos == 0 || is_delim(name[pos - 1]);
    const bool right = end == name.size() || is_delim(name[end]);
    if (!left || !right) continue;
    if (pos > 0) return name.substr(0, pos - 1) + name.substr(end);  // "cg.S.16", "a.16.x"
    if (end < name.size()) return name.substr(end + 1);              // "16.cg" -> "cg"
    return name;                                                     // the name is the count
  }
  return name;
}

std::string TraceMetadata::DescribePlacement() const {
  if (hosts.empty()) {
    return "unknown (no hosts and cores in the trace: written by an older pas2p tracer, or "
           "converted from another format)";
  }
  // Up to kListed hosts by name; beyond that the most crowded one and the rest as a count.
  constexpr std::size_t kListed = 4;
  std::string list;
  if (hosts.size() <= kListed) {
    for (const HostPlacement& h : hosts) list += (list.empty() ? "" : "; ") + DescribeHost(h);
  } else {
    const auto busiest = std::max_element(hosts.begin(), hosts.end(),
                                          [](const HostPlacement& a, const HostPlacement& b) {
                                            return a.RanksPerCore() < b.RanksPerCore();
                                          });
    list =
        "most crowded " + DescribeHost(*busiest) + "; " +
        std::to_string(std::count_if(hosts.begin(), hosts.end(),
                                     [](const HostPlacement& h) { return h.Oversubscribed(); })) +
        " of " + std::to_string(hosts.size()) + " hosts with more ranks than cores";
  }
  return Plural(nprocs, "rank") + " on " + Plural(static_cast<long long>(hosts.size()), "host") +
         " (" + list + ")";
}

std::string MetadataToJson(const TraceMetadata& m) {
  ordered_json j;
  j["format"] = "pas2p-trace";
  j["format_version"] = m.format_version;
  j["application"] = m.application;
  j["command"] = m.command;
  j["nprocs"] = m.nprocs;
  j["host"] = m.host;
  j["mpi_library"] = m.mpi_library;
  j["tracer_version"] = m.tracer_version;
  j["counters"] = m.counters;
  j["counters_note"] = m.counters_note;
  j["time_unit"] = "ns";
  j["source"] = m.source;
  j["status"] = m.status;
  j["status_reason"] = m.status_reason;
  j["started"] = m.started;
  if (!m.untraced_calls.empty()) j["untraced_calls"] = m.untraced_calls;
  if (!m.hosts.empty()) {
    ordered_json hosts = ordered_json::array();
    for (const HostPlacement& h : m.hosts) {
      hosts.push_back({{"host", h.host}, {"ranks", h.ranks}, {"cores", h.cores}});
    }
    j["hosts"] = hosts;
  }
  return j.dump(2) + "\n";
}

TraceMetadata MetadataFromJson(const std::string& text, const std::string& origin) {
  ordered_json j;
  try {
    j = ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw TraceError(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw TraceError(origin + ": expected a JSON object");
  if (j.value("format", std::string()) != "pas2p-trace")
    throw TraceError(origin + ": field \"format\" must be \"pas2p-trace\"");
  TraceMetadata m;
  try {
    m.format_version = j.at("format_version").get<int>();
    if (m.format_version > kTraceFormatVersion) {
      throw TraceError(origin + ": format_version " + std::to_string(m.format_version) +
                       " is newer than this pas2p reads (" + std::to_string(kTraceFormatVersion) +
                       "); upgrade pas2p");
    }
    m.nprocs = j.at("nprocs").get<int>();
    m.application = j.value("application", std::string());
    m.command = j.value("command", std::vector<std::string>());
    m.host = j.value("host", std::string());
    m.mpi_library = j.value("mpi_library", std::string());
    m.tracer_version = j.value("tracer_version", std::string());
    m.counters = j.value("counters", std::vector<std::string>());
    m.counters_note = j.value("counters_note", std::string());
    m.source = j.value("source", std::string("pas2p-tracer"));
    m.status = j.value("status", std::string("complete"));
    m.status_reason = j.value("status_reason", std::string());
    m.started = j.value("started", std::string());
    m.untraced_calls = j.value("untraced_calls", std::map<std::string, std::uint64_t>());
    if (j.contains("hosts")) {
      const ordered_json& hosts = j.at("hosts");
      if (!hosts.is_array()) throw TraceError(origin + ": field \"hosts\" must be an array");
      long long placed = 0;
      for (std::size_t i = 0; i < hosts.size(); ++i) {
        const ordered_json& h = hosts[i];
        const std::string where = origin + ": hosts[" + std::to_string(i) + "]";
        if (!h.is_object()) throw TraceError(where + ": expected an object {host, ranks, cores}");
        HostPlacement p;
        p.host = h.at("host").get<std::string>();
        p.ranks = h.at("ranks").get<int>();
        p.cores = h.value("cores", 0);
        if (p.ranks <= 0 || p.cores < 0) {
          throw TraceError(where + " (" + p.host + "): expected ranks >= 1 and cores >= 0, found " +
                           std::to_string(p.ranks) + " ranks and " + std::to_string(p.cores) +
                           " cores");
        }
        placed += p.ranks;
        m.hosts.push_back(std::move(p));
      }
      if (placed != m.nprocs) {
        throw TraceError(origin + ": \"hosts\" places " + std::to_string(placed) +
                         " ranks, but nprocs is " + std::to_string(m.nprocs));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(origin + ": missing or malformed field: " + e.what());
  }
  if (m.nprocs <= 0)
    throw TraceError(origin + ": nprocs must be positive, found " + std::to_string(m.nprocs));
  return m;
}

std::filesystem::path RankStreamPath(const std::filesystem::path& dir, int rank) {
  return dir / ("rank-" + std::to_string(rank) + ".p2t");
}

void WriteMetadata(const std::filesystem::path& dir, const TraceMetadata& metadata) {
  std::filesystem::path path = dir / kMetadataFileName;
  std::filesystem::path tmp = dir / (std::string(kMetadataFileName) + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw TraceError(tmp.string() + ": cannot write trace metadata");
    out << MetadataToJson(metadata);
    if (!out) throw TraceError(tmp.string() + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);  // atomic: readers never see half a file
  if (ec) throw TraceError(path.string() + ": cannot write trace metadata: " + ec.message());
}

TraceMetadata ReadMetadata(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / kMetadataFileName;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!std::filesystem::exists(dir)) throw TraceError(dir.string() + ": no such trace directory");
    throw TraceError(path.string() + ": missing trace metadata (is " + dir.string() +
                     " a pas2p trace directory?)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return MetadataFromJson(text.str(), path.string());
}

}  // namespace pas2p
