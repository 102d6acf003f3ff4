// Small text helpers shared by the machine-file readers and writers (private).
#pragma once

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "pas2p/core/error.h"

namespace pas2p::sim::internal {

inline std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

inline std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The whole file; UserError naming `what` and `path` when it cannot be read.
inline std::string ReadWholeFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open " + std::string(what) + " '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw UserError("cannot read " + std::string(what) + " '" + path + "'");
  return ss.str();
}

inline void WriteWholeFile(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError("cannot write " + std::string(what) + " '" + path + "'");
  out << text;
  out.close();
  if (!out) throw UserError("error writing " + std::string(what) + " '" + path + "'");
}

// Shortest text that reads back as exactly `v`, with a '.' or exponent so that it is a
// float in TOML; "inf" / "nan" for those.
inline std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

}  // namespace pas2p::sim::internal
