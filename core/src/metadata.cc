#include <algorithm>
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
