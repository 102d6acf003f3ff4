#include "pas2p/patterns/grid.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace pas2p::patterns {
namespace {

// Prime factors in ascending order, with repetition (Open MPI's getfactors(); its 4.1
// release factors completely, e.g. 9 = 3 * 3, as checked against the library in the tests).
std::vector<std::int64_t> PrimeFactors(std::int64_t num) {
  std::vector<std::int64_t> factors;
  while (num > 1 && num % 2 == 0) {
    num /= 2;
    factors.push_back(2);
  }
  for (std::int64_t d = 3; d * d <= num; d += 2) {
    while (num % d == 0) {
      num /= d;
      factors.push_back(d);
    }
  }
  if (num > 1) factors.push_back(num);
  return factors;
}

// Open MPI's assignnodes(): factors from the largest into the bin with the least product
// (first such bin on ties), then bins sorted non-increasing.
std::vector<std::int64_t> AssignNodes(int ndims, const std::vector<std::int64_t>& factors) {
  std::vector<std::int64_t> bins(static_cast<std::size_t>(ndims), 1);
  for (auto it = factors.rbegin(); it != factors.rend(); ++it) {
    auto min_bin = bins.begin();
    for (auto b = bins.begin() + 1; b != bins.end(); ++b) {
      if (*b < *min_bin) min_bin = b;
    }
    *min_bin *= *it;
  }
  std::sort(bins.begin(), bins.end(), std::greater<>());
  return bins;
}

}  // namespace

std::vector<std::int64_t> DimsCreate(std::int64_t nnodes, int ndims) {
  return DimsCreate(nnodes, std::vector<std::int64_t>(static_cast<std::size_t>(ndims), 0));
}

std::vector<std::int64_t> DimsCreate(std::int64_t nnodes, std::vector<std::int64_t> dims) {
  if (nnodes < 1 || dims.empty()) return {};
  std::int64_t freeprocs = nnodes;
  int freedims = 0;
  for (std::int64_t d : dims) {
    if (d == 0) {
      ++freedims;
    } else if (d < 0 || nnodes % d != 0) {
      return {};
    } else {
      freeprocs /= d;
    }
  }
  if (freedims == 0) {
    return freeprocs == 1 ? dims : std::vector<std::int64_t>{};
  }
  std::vector<std::int64_t> procs(static_cast<std::size_t>(freedims), 1);
  if (freeprocs != 1) procs = AssignNodes(freedims, PrimeFactors(freeprocs));
  std::size_t j = 0;
  for (std::int64_t& d : dims) {
    if (d == 0) d = procs[j++];
  }
  return dims;
}

std::int64_t FloorSqrt(std::int64_t value) {
  if (value < 2) return value < 0 ? 0 : value;
  auto r = static_cast<std::int64_t>(__builtin_sqrt(static_cast<double>(value)));
  while (r * r > value) --r;
  while ((r + 1) * (r + 1) <= value) ++r;
  return r;
}

std::int64_t FloorCbrt(std::int64_t value) {
  if (value < 2) return value < 0 ? 0 : value;
  auto r = static_cast<std::int64_t>(__builtin_cbrt(static_cast<double>(value)));
  while (r > 0 && r * r * r > value) --r;
  while ((r + 1) * (r + 1) * (r + 1) <= value) ++r;
  return r;
}

std::optional<std::int64_t> ExactSqrt(std::int64_t value) {
  if (value < 0) return std::nullopt;
  std::int64_t r = FloorSqrt(value);
  if (r * r == value) return r;
  return std::nullopt;
}

std::optional<std::int64_t> ExactCbrt(std::int64_t value) {
  if (value < 0) return std::nullopt;
  std::int64_t r = FloorCbrt(value);
  if (r * r * r == value) return r;
  return std::nullopt;
}

std::optional<int> ExactLog2(std::int64_t value) {
  if (value < 1 || (value & (value - 1)) != 0) return std::nullopt;
  return __builtin_ctzll(static_cast<unsigned long long>(value));
}

int CeilLog2(std::int64_t value) {
  int n = 0;
  while ((std::int64_t{1} << n) < value) ++n;
  return n;
}

std::optional<std::vector<std::int64_t>> GridRule::Extents(std::int64_t nprocs) const {
  if (nprocs < 1) return std::nullopt;
  std::vector<std::int64_t> extents;
  switch (shape) {
    case GridShape::kLinear:
      extents = {nprocs};
      break;
    case GridShape::kSquare: {
      auto s = ExactSqrt(nprocs);
      if (!s) return std::nullopt;
      extents = {*s, *s};
      break;
    }
    case GridShape::kCube: {
      auto c = ExactCbrt(nprocs);
      if (!c) return std::nullopt;
      extents = {*c, *c, *c};
      break;
    }
    case GridShape::kDimsCreate: {
      std::vector<std::int64_t> dims = DimsCreate(nprocs, ndims);
      extents.resize(dims.size());
      for (std::size_t i = 0; i < dims.size(); ++i) {
        extents[i] = dims[static_cast<std::size_t>(order.at(i))];
      }
      break;
    }
    case GridShape::kFixedFast:
    case GridShape::kFixedSlow:
      if (fixed < 1 || nprocs % fixed != 0) return std::nullopt;
      extents = shape == GridShape::kFixedFast ? std::vector<std::int64_t>{fixed, nprocs / fixed}
                                               : std::vector<std::int64_t>{nprocs / fixed, fixed};
      break;
  }
  for (std::int64_t e : extents) {
    if (e < min_extent) return std::nullopt;
  }
  return extents;
}

std::string GridRule::Describe() const {
  std::ostringstream out;
  switch (shape) {
    case GridShape::kLinear:
      out << "line of P ranks";
      break;
    case GridShape::kSquare:
      out << "sqrt(P) x sqrt(P) grid";
      break;
    case GridShape::kCube:
      out << "cbrt(P) x cbrt(P) x cbrt(P) grid";
      break;
    case GridShape::kDimsCreate: {
      out << "MPI_Dims_create(P, " << ndims << ") grid";
      bool row_major = true;
      for (int i = 0; i < ndims; ++i) row_major = row_major && order[i] == ndims - 1 - i;
      if (row_major) {
        out << " (row-major, as MPI_Cart_create)";
      } else {
        out << " (fastest first: ";
        for (int i = 0; i < ndims; ++i) out << (i ? ", " : "") << "d" << order[i];
        out << ")";
      }
      break;
    }
    case GridShape::kFixedFast:
      out << "(P/" << fixed << ") x " << fixed << " grid (rows of " << fixed << " ranks)";
      break;
    case GridShape::kFixedSlow:
      out << fixed << " x (P/" << fixed << ") grid (" << fixed << " rows)";
      break;
  }
  return out.str();
}

std::string GridRule::FormatExtents(const std::vector<std::int64_t>& extents) {
  std::ostringstream out;
  for (std::size_t i = extents.size(); i-- > 0;) {
    out << extents[i] << (i ? " x " : "");
  }
  return out.str();
}

std::vector<std::int64_t> RankToCoords(std::int64_t rank,
                                       const std::vector<std::int64_t>& extents) {
  std::vector<std::int64_t> coords(extents.size());
  for (std::size_t i = 0; i < extents.size(); ++i) {
    coords[i] = rank % extents[i];
    rank /= extents[i];
  }
  return coords;
}

std::int64_t CoordsToRank(const std::vector<std::int64_t>& coords,
                          const std::vector<std::int64_t>& extents) {
  std::int64_t rank = 0;
  for (std::size_t i = extents.size(); i-- > 0;) rank = rank * extents[i] + coords[i];
  return rank;
}

}  // namespace pas2p::patterns
