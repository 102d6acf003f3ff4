#include "pas2p/patterns/comm_map.h"

#include <algorithm>
#include <sstream>

#include "pas2p/core/error.h"

namespace pas2p::patterns {

CommMap CommMap::FromPairs(int nprocs, const std::vector<std::pair<int, int>>& pairs) {
  if (nprocs < 1) {
    throw UserError("communication map: process count must be >= 1, got " + std::to_string(nprocs));
  }
  CommMap map;
  map.nprocs = nprocs;
  map.dests.resize(static_cast<std::size_t>(nprocs));
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    auto [src, dst] = pairs[i];
    if (src < 0 || src >= nprocs || dst < 0 || dst >= nprocs) {
      throw UserError("communication map at " + std::to_string(nprocs) + " processes: pair " +
                      std::to_string(i) + " (" + std::to_string(src) + " -> " +
                      std::to_string(dst) + ") names a rank outside [0, " + std::to_string(nprocs) +
                      ")");
    }
    map.dests[static_cast<std::size_t>(src)].push_back(dst);
  }
  return map.Normalized();
}

CommMap CommMap::Normalized() const {
  CommMap out = *this;
  for (auto& d : out.dests) {
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
  }
  return out;
}

bool CommMap::IsValid(std::string* error) const {
  auto fail = [error](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (nprocs < 1) return fail("process count must be >= 1, got " + std::to_string(nprocs));
  if (dests.size() != static_cast<std::size_t>(nprocs)) {
    return fail("dests has " + std::to_string(dests.size()) + " entries for " +
                std::to_string(nprocs) + " processes");
  }
  for (std::size_t src = 0; src < dests.size(); ++src) {
    for (int d : dests[src]) {
      if (d < 0 || d >= nprocs) {
        return fail("rank " + std::to_string(src) + " sends to " + std::to_string(d) +
                    ", outside [0, " + std::to_string(nprocs) + ")");
      }
    }
  }
  return true;
}

std::size_t CommMap::NumPairs() const {
  std::size_t n = 0;
  for (const auto& d : dests) n += d.size();
  return n;
}

std::vector<std::vector<std::int64_t>> Displacements(const CommMap& map) {
  std::vector<std::vector<std::int64_t>> out(map.dests.size());
  for (std::size_t src = 0; src < map.dests.size(); ++src) {
    for (int d : map.dests[src]) out[src].push_back(static_cast<std::int64_t>(d) - src);
    std::sort(out[src].begin(), out[src].end());
    out[src].erase(std::unique(out[src].begin(), out[src].end()), out[src].end());
  }
  return out;
}

std::string FormatDistanceMatrix(const CommMap& map) {
  const int n = map.nprocs;
  std::vector<std::vector<std::string>> cells(static_cast<std::size_t>(n),
                                              std::vector<std::string>(n, "."));
  std::size_t width = 1;
  for (int src = 0; src < n; ++src) {
    for (int d : map.dests[static_cast<std::size_t>(src)]) {
      int disp = d - src;
      std::string s = disp > 0 ? "+" + std::to_string(disp) : std::to_string(disp);
      width = std::max(width, s.size());
      cells[static_cast<std::size_t>(src)][static_cast<std::size_t>(d)] = s;
    }
  }
  width = std::max(width, std::to_string(n - 1).size());
  std::ostringstream out;
  auto pad = [&out, width](const std::string& s) {
    out << std::string(width + 1 - s.size(), ' ') << s;
  };
  pad("");
  for (int d = 0; d < n; ++d) pad(std::to_string(d));
  out << "\n";
  for (int src = 0; src < n; ++src) {
    pad(std::to_string(src));
    for (int d = 0; d < n; ++d)
      pad(cells[static_cast<std::size_t>(src)][static_cast<std::size_t>(d)]);
    out << "\n";
  }
  return out.str();
}

bool CommunicatorLayout::IsValid(std::string* error) const {
  auto fail = [error](const std::string& why) {
    if (error) *error = why;
    return false;
  };
  if (nprocs < 1) return fail("process count must be >= 1, got " + std::to_string(nprocs));
  std::vector<int> group_of(static_cast<std::size_t>(nprocs), -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return fail("group " + std::to_string(g) + " is empty");
    for (int r : groups[g]) {
      if (r < 0 || r >= nprocs) {
        return fail("group " + std::to_string(g) + " names rank " + std::to_string(r) +
                    ", outside [0, " + std::to_string(nprocs) + ")");
      }
      if (group_of[static_cast<std::size_t>(r)] >= 0) {
        return fail("rank " + std::to_string(r) + " is in groups " +
                    std::to_string(group_of[static_cast<std::size_t>(r)]) + " and " +
                    std::to_string(g));
      }
      group_of[static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
  }
  return true;
}

}  // namespace pas2p::patterns
