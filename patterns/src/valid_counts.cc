#include "pas2p/patterns/valid_counts.h"

#include <algorithm>
#include <sstream>

#include "pas2p/core/error.h"

namespace pas2p::patterns {
namespace {

std::string JoinCounts(const std::vector<std::int64_t>& counts) {
  std::ostringstream out;
  for (std::size_t i = 0; i < counts.size(); ++i) out << (i ? ", " : "") << counts[i];
  return out.str();
}

}  // namespace

bool ValidCounts::IsValid(std::int64_t count) const {
  if (count < std::max<std::int64_t>(min_count, 1)) return false;
  switch (rule) {
    case CountRule::kAny:
      return true;
    case CountRule::kSquares:
      return ExactSqrt(count).has_value();
    case CountRule::kCubes:
      return ExactCbrt(count).has_value();
    case CountRule::kPowersOfTwo:
      return ExactLog2(count).has_value();
    case CountRule::kPowersOfFour: {
      auto n = ExactLog2(count);
      return n && *n % 2 == 0;
    }
    case CountRule::kMultiplesOf:
      return factor > 0 && count % factor == 0;
    case CountRule::kGrid:
      return grid.Extents(count).has_value();
  }
  return false;
}

std::optional<std::int64_t> ValidCounts::AtMost(std::int64_t count) const {
  const std::int64_t low = std::max<std::int64_t>(min_count, 1);
  if (count < low) return std::nullopt;
  std::int64_t x = count;
  switch (rule) {
    case CountRule::kAny:
      break;
    case CountRule::kSquares:
      x = FloorSqrt(count) * FloorSqrt(count);
      break;
    case CountRule::kCubes:
      x = FloorCbrt(count) * FloorCbrt(count) * FloorCbrt(count);
      break;
    case CountRule::kPowersOfTwo:
      x = std::int64_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(count)));
      break;
    case CountRule::kPowersOfFour: {
      int n = 63 - __builtin_clzll(static_cast<unsigned long long>(count));
      x = std::int64_t{1} << (n - n % 2);
      break;
    }
    case CountRule::kMultiplesOf:
      if (factor < 1) return std::nullopt;
      x = count - count % factor;
      break;
    case CountRule::kGrid:
      while (x >= low && !IsValid(x)) --x;
      break;
  }
  if (x < low || !IsValid(x)) return std::nullopt;
  return x;
}

std::optional<std::int64_t> ValidCounts::AtLeast(std::int64_t count, std::int64_t limit) const {
  std::int64_t x = std::max<std::int64_t>({count, min_count, 1});
  if (x > limit) return std::nullopt;
  switch (rule) {
    case CountRule::kAny:
      break;
    case CountRule::kSquares: {
      std::int64_t s = FloorSqrt(x);
      if (s * s < x) ++s;
      x = s * s;
      break;
    }
    case CountRule::kCubes: {
      std::int64_t c = FloorCbrt(x);
      if (c * c * c < x) ++c;
      x = c * c * c;
      break;
    }
    case CountRule::kPowersOfTwo:
      x = std::int64_t{1} << CeilLog2(x);
      break;
    case CountRule::kPowersOfFour: {
      int n = CeilLog2(x);
      x = std::int64_t{1} << (n + n % 2);
      break;
    }
    case CountRule::kMultiplesOf:
      if (factor < 1) return std::nullopt;
      x = (x + factor - 1) / factor * factor;
      break;
    case CountRule::kGrid:
      while (x <= limit && !IsValid(x)) ++x;
      break;
  }
  if (x > limit || !IsValid(x)) return std::nullopt;
  return x;
}

std::string ValidCounts::Describe() const {
  std::ostringstream out;
  const std::int64_t low = std::max<std::int64_t>(min_count, 1);
  switch (rule) {
    case CountRule::kAny:
      out << "any count";
      break;
    case CountRule::kSquares:
      out << "perfect squares";
      break;
    case CountRule::kCubes:
      out << "perfect cubes";
      break;
    case CountRule::kPowersOfTwo:
      out << "powers of two";
      break;
    case CountRule::kPowersOfFour:
      out << "powers of four";
      break;
    case CountRule::kMultiplesOf:
      out << "multiples of " << factor;
      break;
    case CountRule::kGrid: {
      out << "counts whose " << grid.Describe() << " has every extent >= " << grid.min_extent;
      std::vector<std::int64_t> examples;
      for (auto x = AtLeast(low, ValidCountSet::kSearchLimit); x && examples.size() < 6;
           x = AtLeast(*x + 1, ValidCountSet::kSearchLimit)) {
        examples.push_back(*x);
      }
      out << " (" << JoinCounts(examples) << ", ...)";
      return out.str();
    }
  }
  if (low > 1) out << " >= " << low;
  return out.str();
}

ValidCountSet::ValidCountSet(std::vector<ValidCounts> rules) {
  for (const ValidCounts& r : rules) Add(r);
}

void ValidCountSet::Add(const ValidCounts& rule) {
  // The same rule with another lower bound ("powers of two >= 2" and ">= 4"): the
  // intersection is the rule with the larger bound, said once.
  for (ValidCounts& r : rules_) {
    ValidCounts same_bound = rule;
    same_bound.min_count = r.min_count;
    if (same_bound == r) {
      r.min_count = std::max(r.min_count, rule.min_count);
      return;
    }
  }
  rules_.push_back(rule);
}

bool ValidCountSet::IsValid(std::int64_t count) const {
  if (count < 1) return false;
  return std::all_of(rules_.begin(), rules_.end(),
                     [count](const ValidCounts& r) { return r.IsValid(count); });
}

// Each rule only moves the candidate down (up) to its own nearest valid count, so repeating
// until no rule moves it gives the largest (smallest) count valid for all of them.
std::optional<std::int64_t> ValidCountSet::AtMost(std::int64_t count) const {
  if (count < 1) return std::nullopt;
  std::int64_t x = count;
  for (bool moved = true; moved;) {
    moved = false;
    for (const ValidCounts& r : rules_) {
      auto y = r.AtMost(x);
      if (!y) return std::nullopt;
      if (*y != x) {
        x = *y;
        moved = true;
      }
    }
  }
  return x;
}

std::optional<std::int64_t> ValidCountSet::AtLeast(std::int64_t count) const {
  std::int64_t x = std::max<std::int64_t>(count, 1);
  for (bool moved = true; moved;) {
    moved = false;
    for (const ValidCounts& r : rules_) {
      auto y = r.AtLeast(x, kSearchLimit);
      if (!y) return std::nullopt;
      if (*y != x) {
        x = *y;
        moved = true;
      }
    }
  }
  return x;
}

std::vector<std::int64_t> ValidCountSet::InRange(std::int64_t low, std::int64_t high,
                                                 std::size_t max_results) const {
  std::vector<std::int64_t> out;
  for (auto x = AtLeast(low); x && *x <= high && out.size() < max_results; x = AtLeast(*x + 1)) {
    out.push_back(*x);
  }
  return out;
}

std::int64_t ValidCountSet::Hops(std::int64_t from, std::int64_t to) const {
  if (to <= from) return 0;
  return static_cast<std::int64_t>(InRange(from + 1, to).size());
}

std::string ValidCountSet::Describe() const {
  if (rules_.empty()) return "any count";
  std::string out;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    out += (i ? " and " : "") + rules_[i].Describe();
  }
  return out;
}

TargetCheck CheckTarget(const ValidCountSet& counts, std::int64_t target, bool allow_idle,
                        const std::vector<std::int64_t>& traced_counts) {
  TargetCheck check;
  check.target = target;
  if (counts.IsValid(target)) {
    check.valid = true;
    check.run_count = target;
    check.below = target;
    check.above = target;
    return check;
  }
  check.below = counts.AtMost(target);
  check.above = counts.AtLeast(target);
  std::ostringstream why;
  why << target << " is not a process count this application runs at: its communication "
      << "patterns need " << counts.Describe();
  if (!traced_counts.empty()) why << " (traced at " << JoinCounts(traced_counts) << ")";
  if (allow_idle && check.below) {
    check.run_count = *check.below;
    check.idle_ranks = target - *check.below;
    std::ostringstream msg;
    msg << why.str() << "; predicting the run on " << target << " ranks with " << *check.below
        << " working and " << check.idle_ranks << " idle (--allow-idle)";
    check.message = msg.str();
    return check;
  }
  std::ostringstream msg;
  msg << why.str() << ". Nearest valid counts: ";
  if (check.below) msg << *check.below << " below";
  if (check.below && check.above) msg << ", ";
  if (check.above) msg << *check.above << " above";
  if (!check.below && !check.above) msg << "none";
  msg << ". ";
  if (check.below || check.above) {
    msg << "Predict one of those (";
    if (check.below) msg << "--target " << *check.below;
    if (check.below && check.above) msg << " or ";
    if (check.above) msg << "--target " << *check.above;
    msg << ")";
    if (check.below) {
      msg << ", or add --allow-idle to predict " << target << " ranks of which "
          << target - *check.below << " stay idle";
    }
    msg << ".";
  }
  check.message = msg.str();
  return check;
}

TargetCheck RequireTarget(const ValidCountSet& counts, std::int64_t target, bool allow_idle,
                          const std::vector<std::int64_t>& traced_counts) {
  TargetCheck check = CheckTarget(counts, target, allow_idle, traced_counts);
  if (check.run_count == 0) throw UserError(check.message);
  return check;
}

}  // namespace pas2p::patterns
