#include "pas2p/patterns/grid_frame.h"

#include <algorithm>
#include <set>

#include "fit_internal.h"

namespace pas2p::patterns {

namespace {

std::int64_t Wrap(std::int64_t v, std::int64_t extent) {
  v %= extent;
  return v < 0 ? v + extent : v;
}

// Offset of dest from src on `extents` (fastest first).
void OffsetOn(std::int64_t src, std::int64_t dest, const std::vector<std::int64_t>& extents,
              const std::vector<bool>& periodic, std::vector<std::int64_t>* out) {
  out->resize(extents.size());
  for (std::size_t i = 0; i < extents.size(); ++i) {
    std::int64_t diff = dest % extents[i] - src % extents[i];
    if (periodic[i]) {
      const std::int64_t r = Wrap(diff, extents[i]);
      diff = 2 * r > extents[i] ? r - extents[i] : r;
    }
    (*out)[i] = diff;
    src /= extents[i];
    dest /= extents[i];
  }
}

// A frame with more distinct offsets than this is not a grid of neighbours.
constexpr std::size_t kMaxOffsets = 256;

}  // namespace

std::vector<std::int64_t> GridFrame::Offset(std::int64_t src, std::int64_t dest,
                                            std::int64_t nprocs) const {
  std::vector<std::int64_t> out;
  if (src < 0 || dest < 0 || src >= nprocs || dest >= nprocs) return out;
  auto extents = grid.Extents(nprocs);
  if (!extents || extents->size() != periodic.size()) return out;
  OffsetOn(src, dest, *extents, periodic, &out);
  return out;
}

std::int64_t GridFrame::VaryingDims(const std::vector<std::int32_t>& members,
                                    std::int64_t nprocs) const {
  auto extents = grid.Extents(nprocs);
  if (!extents || members.empty()) return -1;
  std::int64_t mask = 0;
  for (std::int32_t m : members) {
    if (m < 0 || m >= nprocs) return -1;
    std::int64_t a = members.front(), b = m;
    for (std::size_t i = 0; i < extents->size(); ++i) {
      if (a % (*extents)[i] != b % (*extents)[i]) mask |= std::int64_t{1} << i;
      a /= (*extents)[i];
      b /= (*extents)[i];
    }
  }
  return mask;
}

std::vector<GridFrame> FindGridFrames(const std::vector<CommMap>& maps, bool any_neighbour_grid) {
  std::vector<std::int64_t> counts;
  std::set<std::int64_t> raw;
  for (const CommMap& m : maps) {
    if (std::find(counts.begin(), counts.end(), m.nprocs) == counts.end() && m.nprocs > 0) {
      counts.push_back(m.nprocs);
    }
    for (std::size_t s = 0; s < m.dests.size(); ++s) {
      for (int d : m.dests[s]) raw.insert(static_cast<std::int64_t>(d) - static_cast<int>(s));
    }
  }
  std::vector<GridFrame> best;
  if (raw.empty()) return best;
  std::sort(counts.begin(), counts.end());
  std::vector<std::int64_t> offset;
  for (const GridRule& grid : internal::CandidateGrids(counts)) {
    for (bool all_periodic : {false, true}) {
      GridFrame frame;
      frame.grid = grid;
      frame.periodic.assign(static_cast<std::size_t>(grid.ndims), all_periodic);
      std::set<std::vector<std::int64_t>> found;
      bool ok = true;
      bool wide = false;  // some count has an extent >= 3
      for (const CommMap& m : maps) {
        auto extents = grid.Extents(m.nprocs);
        if (!extents) {
          ok = false;
          break;
        }
        for (std::int64_t e : *extents) wide = wide || e >= 3;
        for (std::size_t s = 0; s < m.dests.size() && ok; ++s) {
          for (int d : m.dests[s]) {
            if (d < 0 || d >= m.nprocs) continue;
            OffsetOn(static_cast<std::int64_t>(s), d, *extents, frame.periodic, &offset);
            found.insert(offset);
          }
          ok = found.size() <= kMaxOffsets;
        }
        if (!ok) break;
      }
      // Only a grid that explains the pairs with fewer directions than the ranks themselves,
      // or a line that explains a few neighbours as well as they do (a pipeline along a chain
      // of ranks, not periodic: its calls still need a direction, +1 or -1, to align the end
      // ranks' calls with the middle ones').
      // Or a grid on which every pair is a neighbour (each coordinate differs by at most
      // 1) with as many offsets as displacements, at counts where an extent of 3 or more
      // makes that mean something: a 27-point halo that reaches all 26 neighbours (LULESH,
      // HPCG) has 26 offsets and, traced up to 27 = 3 x 3 x 3 ranks, 26 displacements too,
      // yet only the grid makes a corner's first call, to (0, 0, +1), the interior's 14th.
      constexpr std::size_t kLineNeighbours = 4;
      const bool line =
          grid.ndims == 1 && found.size() == raw.size() && found.size() <= kLineNeighbours;
      bool neighbours =
          ok && grid.ndims > 1 && wide && (any_neighbour_grid || found.size() <= raw.size());
      for (auto it = found.begin(); it != found.end() && neighbours; ++it) {
        for (std::int64_t c : *it) neighbours = neighbours && c >= -1 && c <= 1;
      }
      if (!ok || (found.size() >= raw.size() && !line && !neighbours)) continue;
      frame.distinct_offsets = found.size();
      for (const auto& off : found) {
        std::int64_t far = 0;
        for (std::int64_t c : off) far = std::max<std::int64_t>(far, c < 0 ? -c : c);
        frame.reach += far;
      }
      best.push_back(frame);
    }
  }
  std::stable_sort(best.begin(), best.end(), [](const GridFrame& a, const GridFrame& b) {
    if (a.distinct_offsets != b.distinct_offsets) return a.distinct_offsets < b.distinct_offsets;
    return a.reach < b.reach;
  });
  return best;
}

std::optional<GridFrame> FindGridFrame(const std::vector<CommMap>& maps) {
  std::vector<GridFrame> frames = FindGridFrames(maps);
  if (frames.empty()) return std::nullopt;
  return frames.front();
}

}  // namespace pas2p::patterns
