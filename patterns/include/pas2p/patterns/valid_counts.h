// The process counts an application can run at, as its communication patterns show them.
//
// Each general equation carries the rule its family imposes (a sqrt(P) grid needs perfect
// squares, a bit exchange powers of two, an MPI_Dims_create grid any count whose grid keeps
// every extent the traces had). An application's rule is the intersection over all its
// communications (ValidCountSet). A target outside the set is reported with the nearest valid
// counts below and above; with idle ranks allowed, the run is predicted at the largest valid
// count <= target, as benchmark codes do when started on more ranks than they use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pas2p/patterns/grid.h"

namespace pas2p::patterns {

enum class CountRule {
  kAny,           // every count >= min_count
  kSquares,       // perfect squares
  kCubes,         // perfect cubes
  kPowersOfTwo,   // 2^k
  kPowersOfFour,  // 2^(2k): a square grid of a power-of-two side
  kMultiplesOf,   // multiples of `factor`
  kGrid,          // counts at which `grid` exists with every extent >= grid.min_extent
};

struct ValidCounts {
  CountRule rule = CountRule::kAny;
  std::int64_t min_count = 1;
  std::int64_t factor = 1;  // kMultiplesOf
  GridRule grid;            // kGrid

  bool IsValid(std::int64_t count) const;
  // Largest valid count <= count / smallest valid count >= count (nullopt if none exists
  // below / within `limit`).
  std::optional<std::int64_t> AtMost(std::int64_t count) const;
  std::optional<std::int64_t> AtLeast(std::int64_t count, std::int64_t limit) const;
  // "perfect squares >= 4", "powers of two >= 2", "any count >= 2", ...
  std::string Describe() const;

  bool operator==(const ValidCounts&) const = default;
};

// Intersection of the rules of several communications (empty = any count >= 1).
class ValidCountSet {
 public:
  static constexpr std::int64_t kSearchLimit = std::int64_t{1} << 40;

  ValidCountSet() = default;
  explicit ValidCountSet(std::vector<ValidCounts> rules);
  // A rule already present with another lower bound only raises its bound to the larger one.
  void Add(const ValidCounts& rule);

  bool IsValid(std::int64_t count) const;
  std::optional<std::int64_t> AtMost(std::int64_t count) const;
  std::optional<std::int64_t> AtLeast(std::int64_t count) const;
  // Valid counts in [low, high], ascending (for sweeps); at most max_results of them.
  std::vector<std::int64_t> InRange(std::int64_t low, std::int64_t high,
                                    std::size_t max_results = 1u << 20) const;
  // Number of valid counts in (from, to]: the paper's K "hops" from the last traced count.
  std::int64_t Hops(std::int64_t from, std::int64_t to) const;
  // "perfect squares >= 4" or "perfect squares >= 4 and powers of two >= 2".
  std::string Describe() const;
  const std::vector<ValidCounts>& rules() const { return rules_; }

 private:
  std::vector<ValidCounts> rules_;
};

// The outcome of checking a target count.
struct TargetCheck {
  std::int64_t target = 0;
  bool valid = false;
  std::int64_t run_count = 0;         // count to predict at (target, or the idle-mode count)
  std::int64_t idle_ranks = 0;        // target - run_count in idle mode
  std::optional<std::int64_t> below;  // nearest valid count <= target
  std::optional<std::int64_t> above;  // nearest valid count >= target
  std::string message;                // empty when valid; otherwise what and what to do
};

// Checks `target` against `counts`. When it is not valid: without allow_idle, the message
// explains and names the nearest valid counts (run_count = 0); with allow_idle, run_count is
// the largest valid count <= target and idle_ranks the rest (message says so).
// `traced_counts` only enrich the message.
TargetCheck CheckTarget(const ValidCountSet& counts, std::int64_t target, bool allow_idle,
                        const std::vector<std::int64_t>& traced_counts = {});
// The same, throwing pas2p::UserError with the message when no count can be predicted.
TargetCheck RequireTarget(const ValidCountSet& counts, std::int64_t target, bool allow_idle,
                          const std::vector<std::int64_t>& traced_counts = {});

}  // namespace pas2p::patterns
