#include "pas2p/patterns/communicators.h"

#include <algorithm>
#include <sstream>

#include "fit_internal.h"

namespace pas2p::patterns {

using internal::CandidateGrids;
using internal::DimName;
using internal::GridCounts;
using internal::JoinCounts;

CommunicatorRule::AtCount CommunicatorRule::At(std::int64_t nprocs) const {
  return AtCount(this, nprocs);
}

CommunicatorRule::AtCount::AtCount(const CommunicatorRule* rule, std::int64_t nprocs)
    : rule_(rule), nprocs_(nprocs) {
  if (!rule_->valid.IsValid(nprocs)) {
    throw UserError("communicators (" + rule_->name + ") cannot be evaluated at " +
                    std::to_string(nprocs) + " processes: they need " + rule_->valid.Describe());
  }
  if (!rule_->block_sizes.empty()) {
    const auto sizes = BlockSizesAt(rule_->block_sizes, nprocs);
    if (!sizes) {
      throw UserError("communicators (" + rule_->name + ") cannot be evaluated at " +
                      std::to_string(nprocs) + " processes: a block would hold no rank");
    }
    std::int64_t first = 0;
    for (const std::int64_t size : *sizes) {
      offsets_.push_back(first);
      first += size;
    }
    offsets_.push_back(first);
  }
  auto e = rule_->grid.Extents(nprocs);
  if (!e) {
    throw UserError("communicators (" + rule_->name + "): no " + rule_->grid.Describe() + " at " +
                    std::to_string(nprocs) + " processes");
  }
  extents_ = *e;
}

std::int64_t CommunicatorRule::AtCount::GroupSize() const {
  if (!offsets_.empty()) {
    std::int64_t largest = 0;
    for (std::size_t i = 0; i + 1 < offsets_.size(); ++i) {
      largest = std::max(largest, offsets_[i + 1] - offsets_[i]);
    }
    return largest;
  }
  std::int64_t size = 1;
  for (std::size_t i = 0; i < extents_.size(); ++i) {
    if (rule_->group_dims[i]) size *= extents_[i];
  }
  return size;
}

std::int64_t CommunicatorRule::AtCount::GroupSizeOf(std::int64_t rank) const {
  const std::int64_t group = GroupIndex(rank);
  if (group < 0) return 0;
  if (!offsets_.empty()) {
    return offsets_[static_cast<std::size_t>(group) + 1] -
           offsets_[static_cast<std::size_t>(group)];
  }
  return GroupSize();
}

std::int64_t CommunicatorRule::AtCount::NumGroups() const {
  if (!offsets_.empty()) return static_cast<std::int64_t>(offsets_.size()) - 1;
  return rule_->only_group_of_rank0 ? 1 : nprocs_ / GroupSize();
}

std::int64_t CommunicatorRule::AtCount::GroupIndex(std::int64_t rank) const {
  if (rank < 0 || rank >= nprocs_) return -1;
  if (!offsets_.empty()) {
    return std::upper_bound(offsets_.begin(), offsets_.end(), rank) - offsets_.begin() - 1;
  }
  // Index over the coordinates of the dimensions that do not vary inside a group.
  std::vector<std::int64_t> c = RankToCoords(rank, extents_);
  std::int64_t index = 0;
  for (std::size_t i = extents_.size(); i-- > 0;) {
    if (!rule_->group_dims[i]) index = index * extents_[i] + c[i];
  }
  if (rule_->only_group_of_rank0 && index != 0) return -1;
  return index;
}

std::int64_t CommunicatorRule::AtCount::RankInGroup(std::int64_t rank) const {
  if (GroupIndex(rank) < 0) return -1;
  if (!offsets_.empty()) return rank - offsets_[static_cast<std::size_t>(GroupIndex(rank))];
  std::vector<std::int64_t> c = RankToCoords(rank, extents_);
  std::int64_t index = 0;
  for (std::size_t i = extents_.size(); i-- > 0;) {
    if (rule_->group_dims[i]) index = index * extents_[i] + c[i];
  }
  return index;
}

std::vector<std::int64_t> CommunicatorRule::AtCount::GroupOf(std::int64_t rank) const {
  std::vector<std::int64_t> members;
  if (GroupIndex(rank) < 0) return members;
  if (!offsets_.empty()) {
    const auto group = static_cast<std::size_t>(GroupIndex(rank));
    for (std::int64_t m = offsets_[group]; m < offsets_[group + 1]; ++m) members.push_back(m);
    return members;
  }
  std::vector<std::int64_t> c = RankToCoords(rank, extents_);
  std::vector<std::size_t> dims;
  for (std::size_t i = 0; i < extents_.size(); ++i) {
    if (rule_->group_dims[i]) {
      dims.push_back(i);
      c[i] = 0;
    }
  }
  // Odometer over the group dimensions, fastest first: ascending world ranks, which is the
  // communicator-rank order MPI_Comm_split gives with the world rank as key.
  while (true) {
    members.push_back(CoordsToRank(c, extents_));
    std::size_t k = 0;
    while (k < dims.size() && ++c[dims[k]] == extents_[dims[k]]) c[dims[k++]] = 0;
    if (k == dims.size()) break;
  }
  return members;
}

CommunicatorLayout CommunicatorRule::AtCount::Layout() const {
  CommunicatorLayout layout;
  layout.nprocs = static_cast<int>(nprocs_);
  std::vector<bool> seen(static_cast<std::size_t>(nprocs_), false);
  for (std::int64_t r = 0; r < nprocs_; ++r) {
    if (seen[static_cast<std::size_t>(r)]) continue;
    std::vector<std::int64_t> g = GroupOf(r);
    if (g.empty()) continue;
    std::vector<int> group;
    for (std::int64_t m : g) {
      seen[static_cast<std::size_t>(m)] = true;
      group.push_back(static_cast<int>(m));
    }
    layout.groups.push_back(group);
  }
  return layout;
}

std::string CommunicatorRule::Describe() const {
  std::ostringstream out;
  out << name;
  if (grid.shape != GridShape::kLinear) out << " of a " << grid.Describe() << " (x fastest)";
  out << "; valid counts: " << valid.Describe();
  return out.str();
}

namespace {

std::string RuleName(const GridRule& grid, const std::vector<bool>& dims, bool only0) {
  std::string name;
  const std::size_t nd = dims.size();
  std::size_t count = static_cast<std::size_t>(std::count(dims.begin(), dims.end(), true));
  if (count == 0) {
    name = "self (one rank each)";
  } else if (count == nd && grid.shape == GridShape::kLinear) {
    name = "world";
  } else if (grid.shape == GridShape::kFixedFast) {
    name = dims[0] ? "blocks of " + std::to_string(grid.fixed) + " consecutive ranks"
                   : std::to_string(grid.fixed) + " interleaved groups (rank % " +
                         std::to_string(grid.fixed) + ")";
  } else if (grid.shape == GridShape::kFixedSlow) {
    name = dims[0]
               ? std::to_string(grid.fixed) + " blocks of consecutive ranks"
               : std::to_string(grid.fixed) + " ranks at stride P/" + std::to_string(grid.fixed);
  } else if (nd == 2) {
    name = dims[0] ? "rows" : "columns";
  } else {
    std::string varying;
    for (std::size_t i = 0; i < nd; ++i) {
      if (dims[i]) varying += DimName(i);
    }
    name = (count == 1 ? "lines along " : "planes ") + varying;
  }
  if (only0) name = "the one group containing rank 0 of: " + name;
  return name;
}

// "" if the rule reproduces the layout, else the first difference.
std::string LayoutMismatch(const CommunicatorRule& rule, const CommunicatorLayout& layout) {
  if (!rule.valid.IsValid(layout.nprocs)) {
    return "does not exist at " + std::to_string(layout.nprocs) + " processes";
  }
  CommunicatorRule::AtCount at = rule.At(layout.nprocs);
  if (at.NumGroups() != static_cast<std::int64_t>(layout.groups.size())) {
    return "at " + std::to_string(layout.nprocs) + " processes there are " +
           std::to_string(layout.groups.size()) + " groups, the rule gives " +
           std::to_string(at.NumGroups());
  }
  for (const auto& g : layout.groups) {
    std::vector<std::int64_t> want(g.begin(), g.end());
    std::vector<std::int64_t> got = at.GroupOf(g.front());
    if (got != want) {
      return "at " + std::to_string(layout.nprocs) + " processes the group of rank " +
             std::to_string(g.front()) + " differs";
    }
  }
  return "";
}

}  // namespace

CommunicatorRule FitCommunicators(const std::vector<CommunicatorLayout>& input,
                                  const FitOptions& options) {
  const std::string where = options.label.empty() ? "communicators" : options.label;
  std::vector<CommunicatorLayout> layouts = input;
  for (const CommunicatorLayout& l : layouts) {
    std::string error;
    if (!l.IsValid(&error)) {
      throw UserError(where + " at " + std::to_string(l.nprocs) + " processes: " + error);
    }
  }
  std::sort(layouts.begin(), layouts.end(),
            [](const auto& a, const auto& b) { return a.nprocs < b.nprocs; });
  for (std::size_t i = 1; i < layouts.size(); ++i) {
    if (layouts[i].nprocs == layouts[i - 1].nprocs) {
      throw UserError(where + ": two layouts at " + std::to_string(layouts[i].nprocs) +
                      " processes; give one per process count");
    }
  }
  if (static_cast<int>(layouts.size()) < options.min_counts) {
    throw UserError(where + ": a general rule needs the communicators at >= " +
                    std::to_string(options.min_counts) + " different process counts, got " +
                    std::to_string(layouts.size()));
  }
  std::vector<std::int64_t> counts;
  for (const auto& l : layouts) counts.push_back(l.nprocs);

  std::vector<CommunicatorRule> fits;
  std::vector<std::string> misses;
  for (const GridRule& grid : CandidateGrids(counts)) {
    const int nd = grid.ndims;
    std::vector<unsigned> masks;
    for (unsigned m = 0; m < (1u << nd); ++m) masks.push_back(m);
    std::stable_sort(masks.begin(), masks.end(), [](unsigned a, unsigned b) {
      return __builtin_popcount(a) > __builtin_popcount(b);
    });
    std::string first_miss;
    for (unsigned m : masks) {
      if (grid.shape != GridShape::kLinear && (m == 0 || m == (1u << nd) - 1)) continue;
      for (bool only0 : {false, true}) {
        CommunicatorRule rule;
        rule.grid = grid;
        for (int i = 0; i < nd; ++i) rule.group_dims.push_back((m >> i) & 1u);
        rule.only_group_of_rank0 = only0;
        rule.name = RuleName(grid, rule.group_dims, only0);
        rule.valid = GridCounts(grid);
        std::string miss;
        for (const auto& l : layouts) {
          miss = LayoutMismatch(rule, l);
          if (!miss.empty()) break;
        }
        if (miss.empty()) {
          rule.traced_counts = counts;
          fits.push_back(rule);
        } else if (first_miss.empty()) {
          first_miss = miss;
        }
      }
    }
    misses.push_back(grid.Describe() + ": " + (first_miss.empty() ? "fits" : first_miss));
  }
  if (fits.empty()) {
    // Blocks of consecutive ranks of unequal sizes (components of a coupled model).
    std::string blocks_miss;
    try {
      const BlockSplit split = FitBlockSplit(layouts, "");
      CommunicatorRule rule;
      rule.grid.shape = GridShape::kLinear;
      rule.grid.ndims = 1;
      rule.group_dims = {true};
      rule.block_sizes = split.sizes;
      rule.name = "blocks of consecutive ranks of unequal sizes (";
      for (const ComponentSize& size : split.sizes) rule.name += size.Describe() + ", ";
      rule.name += "the rest)";
      rule.valid.rule = split.multiple > 1 ? CountRule::kMultiplesOf : CountRule::kAny;
      rule.valid.factor = split.multiple;
      rule.valid.min_count = counts.front();
      rule.traced_counts = counts;
      return rule;
    } catch (const PatternFitError& e) {
      blocks_miss = e.what();
    }
    misses.push_back("blocks of consecutive ranks of unequal sizes: " + blocks_miss);
    std::ostringstream msg;
    msg << where << ": no communicator rule (world, self, rows/columns/planes of a grid, "
        << "blocks, strides) reproduces the communicators traced at " << JoinCounts(counts)
        << " processes, so they cannot be extrapolated. Tried:";
    for (std::size_t i = 0; i < misses.size() && i < 12; ++i) msg << "\n  " << misses[i];
    throw PatternFitError(msg.str());
  }
  CommunicatorRule best = fits.front();
  for (std::size_t i = 1; i < fits.size() && best.alternatives.size() < 8; ++i) {
    best.alternatives.push_back(fits[i].Describe());
    if (best.rivals.size() < 3) {
      CommunicatorRule rival = fits[i];
      rival.alternatives.clear();
      best.rivals.push_back(std::move(rival));
    }
  }
  return best;
}

bool Disagree(const CommunicatorRule& a, const CommunicatorRule& b, std::int64_t nprocs) {
  if (nprocs < 1 || !a.valid.IsValid(nprocs) || !b.valid.IsValid(nprocs)) return false;
  try {
    const CommunicatorRule::AtCount x = a.At(nprocs), y = b.At(nprocs);
    const std::int64_t step = nprocs <= kDisagreeRanks ? 1 : nprocs / kDisagreeRanks;
    // Members are compared at every 64th rank looked at (a group can hold every rank); the
    // others compare their group's size and their place in it.
    std::int64_t looked = 0;
    auto differ = [&](std::int64_t r) {
      const bool in_x = x.GroupIndex(r) >= 0, in_y = y.GroupIndex(r) >= 0;
      if (in_x != in_y) return true;
      if (!in_x) return false;
      if (x.GroupSize() != y.GroupSize() || x.RankInGroup(r) != y.RankInGroup(r)) return true;
      return looked++ % 64 == 0 && x.GroupOf(r) != y.GroupOf(r);
    };
    for (std::int64_t r = 0; r < nprocs; r += step) {
      if (differ(r)) return true;
    }
    return differ(nprocs - 1);
  } catch (const UserError&) {
    return false;  // not a count one of them can be evaluated at
  }
}

std::int64_t FirstDisagreement(const CommunicatorRule& a, const CommunicatorRule& b,
                               std::int64_t after, std::int64_t upto) {
  return internal::FirstCountWhere(after, upto, [&](std::int64_t p) { return Disagree(a, b, p); });
}

IndexRule FitRankRule(const std::vector<std::pair<std::int64_t, std::int64_t>>& size_and_rank,
                      const std::string& label) {
  const std::string where = label.empty() ? "root rank" : label;
  if (size_and_rank.empty()) throw UserError(where + ": no observations");
  const auto& first = size_and_rank.front();
  for (IndexRule rule :
       {IndexRule{false, first.second}, IndexRule{true, first.first - 1 - first.second}}) {
    bool ok = rule.index >= 0;
    for (const auto& [size, rank] : size_and_rank) ok = ok && rule.At(size) == rank;
    if (ok) return rule;
  }
  std::ostringstream msg;
  msg << where << ": the rank is neither fixed nor at a fixed distance from the end:";
  for (const auto& [size, rank] : size_and_rank) msg << " " << rank << " of " << size << ";";
  throw PatternFitError(msg.str());
}

}  // namespace pas2p::patterns
