// Rank classes: ranks whose value of a quantity differs clearly from the others (the corners and
// edges of a stencil, the root of a reduction) are fitted as classes, not averaged away.
//
// Two small helpers; which ranks form a class across counts is the caller's knowledge:
//  - GroupRanksByValue looks at ONE count and clusters the per-rank values (what classes exist?).
//  - CollectClassSeries takes a caller-defined classifier (rank, P) -> class id (e.g. "corner of
//    the √P × √P grid") and turns per-count per-rank values into one series of points per class,
//    ready for Fit(), reporting how far the values inside each class spread (is the classifier
//    right?).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <vector>

#include "pas2p/regression/model.h"

namespace pas2p::regression {

// Ranks whose values lie within a relative tolerance of each other.
struct RankClass {
  std::vector<int> ranks;  // ascending
  double mean_value = 0;
  double min_value = 0;
  double max_value = 0;
};

// Sorts the values and cuts wherever two consecutive values differ by more than
// relative_tolerance × max(|a|, |b|) (equal values always join, so integer counts group exactly).
// Classes are returned ordered by their lowest rank (the class holding rank 0 comes first).
// Throws pas2p::UserError for a non-finite value (naming the rank) or a negative tolerance.
std::vector<RankClass> GroupRanksByValue(std::span<const double> value_per_rank,
                                         double relative_tolerance = 0.02);

// Per-rank values of one quantity at one traced count.
struct CountValues {
  int process_count = 0;
  std::vector<double> value_per_rank;  // size == process_count
};

// One class's training series.
struct ClassSeries {
  std::vector<Point> points;  // (P, mean value over the class's ranks at P), ascending P
  std::vector<int> rank_count_per_point;  // how many ranks the class has at each P
  // Largest (max − min) / max(|mean|, |min|, |max|) inside the class over all counts: small when
  // the classifier groups ranks that really behave alike.
  double max_relative_spread = 0;
};

// class_of(rank, process_count) returns the class id of a rank, or a negative value to leave the
// rank out. Counts where a class has no rank simply give that class no point. Throws
// pas2p::UserError when value_per_rank.size() != process_count or a value is not finite.
std::map<int, ClassSeries> CollectClassSeries(
    std::span<const CountValues> counts,
    const std::function<int(int rank, int process_count)>& class_of);

}  // namespace pas2p::regression
