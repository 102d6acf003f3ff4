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

std::vector<std::int64_t> OptimalShapeXYZ(std::int64_t nprocs) {
  if (nprocs < 1) return {};
  // (prime, power) ascending, as the std::map HPCG's ComputePrimeFactors fills.
  std::vector<std::int64_t> primes;
  std::vector<int> powers;
  for (std::int64_t f : PrimeFactors(nprocs)) {
    if (!primes.empty() && primes.back() == f) {
      ++powers.back();
    } else {
      primes.push_back(f);
      powers.push_back(1);
    }
  }
  if (primes.empty()) return {1, 1, 1};
  auto pow = [](std::int64_t base, int e) {
    std::int64_t v = 1;
    while (e-- > 0) v *= base;
    return v;
  };
  const std::size_t n = primes.size();
  if (n == 1) {
    const int e = powers[0];
    return {pow(primes[0], e / 3 + (e % 3 >= 1 ? 1 : 0)),
            pow(primes[0], e / 3 + (e % 3 >= 2 ? 1 : 0)), pow(primes[0], e / 3)};
  }
  if (n == 2 && powers[0] == 1 && powers[1] == 1) return {primes[0], primes[1], 1};
  if (n == 2 && powers[0] + powers[1] == 3) {
    return {primes[0], primes[1], powers[0] == 2 ? primes[0] : primes[1]};
  }
  if (n == 3 && powers[0] == 1 && powers[1] == 1 && powers[2] == 1) {
    return {primes[0], primes[1], primes[2]};
  }
  // Every split into x * y * z, x and y enumerated by HPCG's MixedBaseCounter (the power of
  // the smallest prime varying fastest; x's counter outside, y's over what x leaves); the
  // first of least area x y + y z + x z wins.
  auto next = [n](std::vector<int>& cur, const std::vector<int>& max) {
    for (std::size_t i = 0; i < n; ++i) {
      if (++cur[i] <= max[i]) return;
      cur[i] = 0;
    }
  };
  auto zero = [](const std::vector<int>& cur) {
    return std::all_of(cur.begin(), cur.end(), [](int c) { return c == 0; });
  };
  auto product = [&](const std::vector<int>& cur) {
    std::int64_t v = 1;
    for (std::size_t i = 0; i < n; ++i) v *= pow(primes[i], cur[i]);
    return v;
  };
  std::vector<std::int64_t> best = {primes[0], primes[1], 1};
  std::int64_t least = 2 * nprocs + 1;
  std::vector<int> c1(n, 0);
  for (next(c1, powers); !zero(c1); next(c1, powers)) {
    std::vector<int> left(n);
    for (std::size_t i = 0; i < n; ++i) left[i] = powers[i] - c1[i];
    std::vector<int> c2(n, 0);
    for (next(c2, left); !zero(c2); next(c2, left)) {
      const std::int64_t x = product(c1), y = product(c2), z = nprocs / x / y;
      const std::int64_t area = x * y + y * z + x * z;
      if (area < least) {
        least = area;
        best = {x, y, z};
      }
    }
  }
  return best;
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
    case GridShape::kOptimalShapeXYZ:
      extents = OptimalShapeXYZ(nprocs);
      break;
    case GridShape::kComponents:
    case GridShape::kInterleavedComponents: {
      if (fixed < 1 || ndims < 2 || nprocs % fixed != 0 ||
          order.size() != static_cast<std::size_t>(ndims - 1)) {
        return std::nullopt;
      }
      const std::vector<std::int64_t> dims = DimsCreate(nprocs / fixed, ndims - 1);
      if (shape == GridShape::kInterleavedComponents) extents.push_back(fixed);
      for (int i : order) extents.push_back(dims.at(static_cast<std::size_t>(i)));
      if (shape == GridShape::kComponents) extents.push_back(fixed);
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
    case GridShape::kOptimalShapeXYZ:
      out << "HPCG ComputeOptimalShapeXYZ(P) grid";
      break;
    case GridShape::kComponents:
    case GridShape::kInterleavedComponents: {
      out << fixed << " x MPI_Dims_create(P/" << fixed << ", " << ndims - 1 << ") grid (";
      bool row_major = true;
      const int inner = ndims - 1;
      for (int i = 0; i < inner; ++i) {
        row_major = row_major && i < static_cast<int>(order.size()) && order[i] == inner - 1 - i;
      }
      if (row_major) {
        out << "row-major, as MPI_Cart_create";
      } else {
        out << "fastest first: ";
        for (std::size_t i = 0; i < order.size(); ++i) out << (i ? ", " : "") << "d" << order[i];
      }
      if (shape == GridShape::kComponents) {
        out << "; " << fixed << " components, the slowest dimension)";
      } else {
        out << "; " << fixed << " components interleaved, rank % " << fixed
            << ", the fastest dimension)";
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
