// One communication of one phase at one process count, as plain values.
//
// CommMap is who sends to whom: dests[src] lists the world ranks `src` sends to in this
// communication (a rank with no partner, e.g. a mesh boundary, has an empty list). Order and
// repetition do not matter to the patterns: how many messages go to each peer is a volume
// question for the regression. CommunicatorLayout is the membership of the communicators a
// collective runs on (e.g. the rows of a grid made by MPI_Comm_split), at one count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pas2p::patterns {

struct CommMap {
  int nprocs = 0;
  std::vector<std::vector<int>> dests;  // dests[src], world ranks; size nprocs

  // Builds a map from (source, destination) pairs. Throws pas2p::UserError naming the pair if
  // a rank is outside [0, nprocs).
  static CommMap FromPairs(int nprocs, const std::vector<std::pair<int, int>>& pairs);
  // Destinations of every source sorted and without repeats (what the analysis compares).
  CommMap Normalized() const;
  // False with a reason ("dests has 8 entries for 9 processes", "rank 3 sends to 12 (nprocs
  // 9)") if the map is malformed.
  bool IsValid(std::string* error) const;
  std::size_t NumPairs() const;
  bool IsEmpty() const { return NumPairs() == 0; }

  bool operator==(const CommMap&) const = default;
};

// Displacements dest - src of every source (sorted, unique), one list per source.
std::vector<std::vector<std::int64_t>> Displacements(const CommMap& map);

// The distance matrix as text: one row per source, one column per destination, the
// displacement where the source sends ('.' elsewhere). For small counts (documentation, dumps).
std::string FormatDistanceMatrix(const CommMap& map);

struct CommunicatorLayout {
  int nprocs = 0;
  // Every communicator of this kind at this count: its world ranks in communicator-rank
  // order. Ranks in no group are not members (MPI_COMM_NULL from the split).
  std::vector<std::vector<int>> groups;

  bool IsValid(std::string* error) const;  // ranks in range, no rank in two groups
};

}  // namespace pas2p::patterns
