// Grouping per-rank values into classes, and per-class training series across counts.
#include "pas2p/regression/rank_classes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "pas2p/core/error.h"

namespace pas2p::regression {

std::vector<RankClass> GroupRanksByValue(std::span<const double> value_per_rank,
                                         double relative_tolerance) {
  if (!(relative_tolerance >= 0)) {
    throw UserError("rank grouping: the relative tolerance must be >= 0");
  }
  const int n = static_cast<int>(value_per_rank.size());
  for (int r = 0; r < n; ++r) {
    if (!std::isfinite(value_per_rank[r])) {
      throw UserError("rank grouping: the value of rank " + std::to_string(r) +
                      " is not a finite number");
    }
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return value_per_rank[a] < value_per_rank[b]; });
  std::vector<RankClass> classes;
  for (int k = 0; k < n; ++k) {
    const int rank = order[k];
    const double v = value_per_rank[rank];
    bool join = false;
    if (k > 0) {
      const double previous = value_per_rank[order[k - 1]];
      join = v == previous ||
             v - previous <= relative_tolerance * std::max(std::abs(v), std::abs(previous));
    }
    if (!join) classes.push_back(RankClass{{}, 0, v, v});
    auto& c = classes.back();
    c.ranks.push_back(rank);
    c.mean_value += v;  // sum for now
    c.max_value = v;
  }
  for (auto& c : classes) {
    c.mean_value /= static_cast<double>(c.ranks.size());
    std::sort(c.ranks.begin(), c.ranks.end());
  }
  std::sort(classes.begin(), classes.end(), [](const RankClass& a, const RankClass& b) {
    return a.ranks.front() < b.ranks.front();
  });
  return classes;
}

std::map<int, ClassSeries> CollectClassSeries(
    std::span<const CountValues> counts,
    const std::function<int(int rank, int process_count)>& class_of) {
  struct Accumulator {
    double sum = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    int ranks = 0;
  };
  std::map<int, ClassSeries> series;
  for (const auto& count : counts) {
    if (static_cast<int>(count.value_per_rank.size()) != count.process_count) {
      throw UserError("rank classes: at P = " + std::to_string(count.process_count) +
                      " there are " + std::to_string(count.value_per_rank.size()) +
                      " per-rank values (one per rank expected)");
    }
    std::map<int, Accumulator> per_class;
    for (int rank = 0; rank < count.process_count; ++rank) {
      const double v = count.value_per_rank[rank];
      if (!std::isfinite(v)) {
        throw UserError("rank classes: the value of rank " + std::to_string(rank) + " at P = " +
                        std::to_string(count.process_count) + " is not a finite number");
      }
      const int id = class_of(rank, count.process_count);
      if (id < 0) continue;
      auto& a = per_class[id];
      a.sum += v;
      a.min = std::min(a.min, v);
      a.max = std::max(a.max, v);
      ++a.ranks;
    }
    for (const auto& [id, a] : per_class) {
      auto& s = series[id];
      const double mean = a.sum / a.ranks;
      s.points.push_back({static_cast<double>(count.process_count), mean});
      s.rank_count_per_point.push_back(a.ranks);
      const double scale = std::max({std::abs(mean), std::abs(a.min), std::abs(a.max)});
      const double spread = scale > 0 ? (a.max - a.min) / scale : 0.0;
      s.max_relative_spread = std::max(s.max_relative_spread, spread);
    }
  }
  for (auto& [id, s] : series) {
    std::vector<int> order(s.points.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return s.points[a].p < s.points[b].p; });
    ClassSeries sorted;
    sorted.max_relative_spread = s.max_relative_spread;
    for (int i : order) {
      sorted.points.push_back(s.points[i]);
      sorted.rank_count_per_point.push_back(s.rank_count_per_point[i]);
    }
    s = std::move(sorted);
  }
  return series;
}

}  // namespace pas2p::regression
