// Communicators as functions of P: the groups a collective runs on, extrapolated.
//
// In: the layout of one kind of communicator at several counts (e.g. the row communicators
// MPI_Comm_split makes on a sqrt(P) grid at 9, 16, 25, 36). Out: a rule - the whole world,
// self, or the groups of ranks that share all grid coordinates except the kept ones (rows,
// columns, planes; contiguous blocks of k ranks; k groups of every k-th rank) - optionally only the
// group that contains rank 0 (leader communicators), evaluated lazily at any count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pas2p/patterns/comm_map.h"
#include "pas2p/patterns/general_equation.h"
#include "pas2p/patterns/grid.h"
#include "pas2p/patterns/valid_counts.h"

namespace pas2p::patterns {

struct CommunicatorRule {
  GridRule grid;                     // kLinear with group_dims {true}: the world
  std::vector<bool> group_dims;      // dims that vary inside a group (fastest first); none: self
  bool only_group_of_rank0 = false;  // only one communicator exists: the one with rank 0
  // Non-empty: the groups are blocks of consecutive ranks of unequal sizes (a coupled model's
  // components), these sizes for all but the last, which holds the rest (the grid and
  // group_dims are then the world's and unused). Tried when no rule above fits.
  std::vector<ComponentSize> block_sizes;
  std::string name;  // "world", "rows", "columns", "blocks of 4", "4 interleaved groups (rank % 4)"
  ValidCounts valid;
  std::vector<std::int64_t> traced_counts;
  std::vector<std::string> alternatives;
  // Other rules that reproduce every traced layout as well, at most 3 (rows of another grid
  // that has the same rows at every traced count): at a count where one makes other groups
  // (Disagree), a prediction is a guess between them. Their own `rivals` are empty.
  std::vector<CommunicatorRule> rivals;

  std::string Describe() const;  // "rows of a sqrt(P) x sqrt(P) grid (sqrt(P) ranks each)"

  class AtCount;
  AtCount At(std::int64_t nprocs) const;  // throws UserError if nprocs is not valid
};

class CommunicatorRule::AtCount {
 public:
  std::int64_t nprocs() const { return nprocs_; }
  std::int64_t NumGroups() const;
  // The size of every group; with unequal blocks (block_sizes), the largest.
  std::int64_t GroupSize() const;
  // The size of the group `rank` belongs to (0 if in none), in O(1).
  std::int64_t GroupSizeOf(std::int64_t rank) const;
  // Members (world ranks, communicator-rank order) of the group `rank` belongs to; empty if
  // `rank` is in none.
  std::vector<std::int64_t> GroupOf(std::int64_t rank) const;
  // Index of rank's group in [0, NumGroups()), -1 if in none; its rank inside the group.
  std::int64_t GroupIndex(std::int64_t rank) const;
  std::int64_t RankInGroup(std::int64_t rank) const;
  // All groups (small counts and tests).
  CommunicatorLayout Layout() const;

 private:
  friend struct CommunicatorRule;
  AtCount(const CommunicatorRule* rule, std::int64_t nprocs);
  const CommunicatorRule* rule_;
  std::int64_t nprocs_;
  std::vector<std::int64_t> extents_;
  std::vector<std::int64_t> offsets_;  // block_sizes: each block's first rank, then P
};

// Throws PatternFitError if no rule reproduces every layout, UserError on malformed input.
CommunicatorRule FitCommunicators(const std::vector<CommunicatorLayout>& layouts,
                                  const FitOptions& options = {});

// As for equations: both valid at `nprocs` and some rank (every one up to kDisagreeRanks,
// that many spread evenly beyond) in another group, or at another place in it.
bool Disagree(const CommunicatorRule& a, const CommunicatorRule& b, std::int64_t nprocs);
std::int64_t FirstDisagreement(const CommunicatorRule& a, const CommunicatorRule& b,
                               std::int64_t after, std::int64_t upto);

// The root of a rooted collective as a function of the communicator size: fixed index or
// counted from the end. Input: (size, root) at several counts. Throws PatternFitError.
IndexRule FitRankRule(const std::vector<std::pair<std::int64_t, std::int64_t>>& size_and_rank,
                      const std::string& label = {});

}  // namespace pas2p::patterns
