#include "pas2p/patterns/general_equation.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "fit_internal.h"

namespace pas2p::patterns {

using internal::CandidateGrids;
using internal::DimName;
using internal::GridCounts;
using internal::JoinCounts;

namespace {

// Size and lowest bit of a BitField at n = log2 P bits.
int BitFieldSize(BitField field, int n) {
  switch (field) {
    case BitField::kLowHalf:
      return (n + 1) / 2;
    case BitField::kHighHalf:
      return n / 2;
    case BitField::kRank:
      break;
  }
  return n;
}
int BitFieldOffset(BitField field, int n) { return field == BitField::kHighHalf ? (n + 1) / 2 : 0; }

// The bits a folded exchange counts at P: floor(log2 P) + 1 (the top one, log2 of the largest
// power of two <= P, is the fold's).
int FoldedBits(std::int64_t nprocs) {
  return nprocs < 1 ? 0 : static_cast<int>(std::bit_width(static_cast<std::uint64_t>(nprocs)));
}

// True when `src` makes a one-bit exchange at bit b (0 <= b < 62) in `role`.
bool InTreeRole(TreeRole role, std::int64_t src, std::int64_t b) {
  const std::int64_t bit = std::int64_t{1} << b;
  switch (role) {
    case TreeRole::kNone:
      break;
    case TreeRole::kLowParent:
      return (src & (2 * bit - 1)) == 0;
    case TreeRole::kLowChild:
      return (src & (2 * bit - 1)) == bit;
    case TreeRole::kHighParent:
      return src < bit;
    case TreeRole::kHighChild:
      return src >= bit && src < 2 * bit;
  }
  return true;
}

using Dests = std::vector<std::vector<std::int64_t>>;

struct Traced {
  std::int64_t nprocs;
  Dests dests;  // sorted, unique
};

std::string Signed(std::int64_t v) { return v > 0 ? "+" + std::to_string(v) : std::to_string(v); }

std::string FormatSet(const std::vector<std::int64_t>& v) {
  std::string out = "{";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "}";
}

std::string FormatOffset(const std::vector<std::int64_t>& o) {
  if (o.size() == 1) return Signed(o[0]);
  std::string out = "(";
  for (std::size_t i = 0; i < o.size(); ++i) out += (i ? "," : "") + Signed(o[i]);
  return out + ")";
}

std::int64_t Wrap(std::int64_t v, std::int64_t extent) {
  v %= extent;
  return v < 0 ? v + extent : v;
}

// Periodic difference reduced to (-extent/2, extent/2].
std::int64_t ReduceOffset(std::int64_t diff, std::int64_t extent) {
  std::int64_t r = Wrap(diff, extent);
  return 2 * r > extent ? r - extent : r;
}

class DestBuffer {
 public:
  void push_back(std::int64_t v) {
    if (size_ < kInline) {
      inline_[size_] = v;
    } else {
      if (size_ == kInline) heap_.assign(inline_, inline_ + kInline);
      heap_.push_back(v);
    }
    ++size_;
  }
  std::int64_t* begin() { return size_ <= kInline ? inline_ : heap_.data(); }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kInline = 64;
  std::int64_t inline_[kInline];
  std::vector<std::int64_t> heap_;
  std::size_t size_ = 0;
};

std::string NameStencil(const GeneralEquation& eq) {
  const std::size_t nd = eq.periodic.size();
  std::vector<bool> used(nd, false);
  for (const auto& o : eq.offsets) {
    for (std::size_t i = 0; i < nd; ++i) used[i] = used[i] || o[i] != 0;
  }
  bool any_periodic = false, all_periodic = true;
  for (std::size_t i = 0; i < nd; ++i) {
    if (!used[i]) continue;
    any_periodic = any_periodic || eq.periodic[i];
    all_periodic = all_periodic && eq.periodic[i];
  }
  bool all_nonneg = true, all_nonpos = true;
  for (const auto& o : eq.offsets) {
    for (std::int64_t v : o) {
      all_nonneg = all_nonneg && v >= 0;
      all_nonpos = all_nonpos && v <= 0;
    }
  }
  if (std::none_of(used.begin(), used.end(), [](bool u) { return u; })) return "self";
  if (nd == 1) {
    if (all_periodic) return "ring";
    return (all_nonneg || all_nonpos) ? "shift" : "line";
  }
  if (all_periodic) return "torus";
  if (any_periodic) return "partially periodic mesh";
  // One neighbour on an open grid (the north receive of a halo exchange): a shift, not a
  // wavefront, which needs offsets along several dimensions.
  if (eq.offsets.size() == 1) return "mesh shift";
  if (all_nonneg || all_nonpos) return "wavefront";
  return "mesh";
}

}  // namespace

std::string IndexRule::Describe(const std::string& size_name) const {
  if (!from_end) return std::to_string(index);
  return size_name + "-" + std::to_string(index + 1);
}

// ---------------------------------------------------------------------------------------
// Evaluation.

GeneralEquation::AtCount GeneralEquation::At(std::int64_t nprocs) const {
  return AtCount(this, nprocs);
}

std::optional<std::int64_t> ComponentSize::At(std::int64_t nprocs) const {
  if (fixed > 0) return fixed;
  if (den <= 0 || (nprocs * num) % den != 0) return std::nullopt;
  return nprocs * num / den;
}

std::string ComponentSize::Describe() const {
  if (fixed > 0) return std::to_string(fixed);
  return (num == 1 ? std::string() : std::to_string(num)) + "P" +
         (den == 1 ? std::string() : "/" + std::to_string(den));
}

std::optional<std::vector<std::int64_t>> BlockSizesAt(const std::vector<ComponentSize>& sizes,
                                                      std::int64_t nprocs) {
  std::vector<std::int64_t> out;
  std::int64_t rest = nprocs;
  for (const ComponentSize& c : sizes) {
    const std::optional<std::int64_t> size = c.At(nprocs);
    if (!size || *size < 1 || *size >= rest) return std::nullopt;
    out.push_back(*size);
    rest -= *size;
  }
  out.push_back(rest);
  return out;
}

std::optional<std::vector<std::int64_t>> GeneralEquation::ComponentSizesAt(
    std::int64_t nprocs) const {
  return BlockSizesAt(component_sizes, nprocs);
}

GeneralEquation::AtCount::AtCount(const GeneralEquation* equation, std::int64_t nprocs)
    : equation_(equation), nprocs_(nprocs) {
  const GeneralEquation& eq = *equation_;
  if (eq.family == Family::kComponents && eq.valid.IsValid(nprocs)) {
    // The sizes are whole: say which component's own pattern has no count there.
    const auto sizes = eq.ComponentSizesAt(nprocs);
    for (std::size_t c = 0; sizes && c < sizes->size() && c < eq.terms.size(); ++c) {
      const GeneralEquation& term = eq.terms[c];
      if (!term.IsValidCount((*sizes)[c])) {
        throw UserError(eq.name + " pattern cannot be evaluated at " + std::to_string(nprocs) +
                        " processes: component " + std::to_string(c + 1) + " would have " +
                        std::to_string((*sizes)[c]) + " ranks, and its " + term.name + " needs " +
                        ValidCountSet(term.ValidRules()).Describe());
      }
    }
  }
  if (!eq.IsValidCount(nprocs)) {
    throw UserError(eq.name + " pattern cannot be evaluated at " + std::to_string(nprocs) +
                    " processes: it needs " + ValidCountSet(eq.ValidRules()).Describe());
  }
  if (eq.family == Family::kComponents) {
    const std::vector<std::int64_t> sizes = *eq.ComponentSizesAt(nprocs);  // valid: exists
    std::int64_t first = 0;
    for (std::size_t c = 0; c < sizes.size(); ++c) {
      offsets_.push_back(first);
      terms_.push_back(eq.terms[c].At(sizes[c]));
      first += sizes[c];
    }
    offsets_.push_back(first);
  } else {
    for (const GeneralEquation& term : eq.terms) terms_.push_back(term.At(nprocs));
  }
  if (eq.family == Family::kStencil || eq.family == Family::kTranspose ||
      eq.family == Family::kGroupAll) {
    auto e = eq.grid.Extents(nprocs);
    if (!e) {
      throw UserError(eq.name + " pattern: no " + eq.grid.Describe() + " at " +
                      std::to_string(nprocs) + " processes");
    }
    extents_ = *e;
    strides_.resize(extents_.size());
    std::int64_t s = 1;
    for (std::size_t i = 0; i < extents_.size(); ++i) {
      strides_[i] = s;
      s *= extents_[i];
    }
  }
  log2_ = CeilLog2(nprocs);
}

void GeneralEquation::AtCount::ForEachDest(std::int64_t src,
                                           const std::function<void(std::int64_t)>& fn) const {
  const GeneralEquation& eq = *equation_;
  if (src < 0 || src >= nprocs_) return;
  switch (eq.family) {
    case Family::kComponents: {
      // The component that holds src, its partners in the component's own ranks (ascending,
      // inside it), moved to world ranks.
      const auto next = std::upper_bound(offsets_.begin(), offsets_.end(), src);
      const auto c = static_cast<std::size_t>(next - offsets_.begin()) - 1;
      const std::int64_t first = offsets_[c];
      terms_[c].ForEachDest(src - first, [&fn, first](std::int64_t d) { fn(d + first); });
      return;
    }
    case Family::kStar: {
      const std::int64_t root = eq.root.At(nprocs_);
      const bool to = eq.star_direction != StarDirection::kFromRoot;
      const bool from = eq.star_direction != StarDirection::kToRoot;
      if (src != root && to) fn(root);
      if (src == root && from) {
        for (std::int64_t d = 0; d < nprocs_; ++d) {
          if (d != root) fn(d);
        }
      }
      return;
    }
    case Family::kGroupAll: {
      // Members share src's coordinates on the other dimensions; an odometer over the group
      // dimensions (fastest first) visits them in ascending rank order.
      std::int64_t base = src;
      std::vector<std::size_t> dims;
      for (std::size_t i = 0; i < extents_.size(); ++i) {
        if (!eq.group_dims[i]) continue;
        dims.push_back(i);
        base -= ((src / strides_[i]) % extents_[i]) * strides_[i];
      }
      std::vector<std::int64_t> c(dims.size(), 0);
      while (true) {
        std::int64_t r = base;
        for (std::size_t k = 0; k < dims.size(); ++k) r += c[k] * strides_[dims[k]];
        if (r != src || eq.include_self) fn(r);
        std::size_t k = 0;
        while (k < dims.size() && ++c[k] == extents_[dims[k]]) c[k++] = 0;
        if (k == dims.size()) break;
      }
      return;
    }
    default:
      break;
  }
  // Destinations collect in a stack buffer (no allocation per call for stencils of up to 64
  // offsets, 64 bits, ...), then go out sorted and unique.
  DestBuffer out;
  switch (eq.family) {
    case Family::kXorExchange: {
      if (eq.folded && eq.fold_pairs) {
        // Folded in pairs: the exchange counts the floor(log2 P) bits of the renumbered
        // ranks; the fold is bit 0 among the first 2R ranks.
        const int n = FoldedBits(nprocs_) - 1;
        const std::int64_t rem = nprocs_ - (std::int64_t{1} << n);
        if (eq.tree_role != TreeRole::kNone) {
          for (const IndexRule& bit : eq.bits) {
            if (bit.At(n) == 0 && src < 2 * rem && InTreeRole(eq.tree_role, src, 0)) {
              out.push_back(src ^ 1);
            }
          }
          break;
        }
        if (src < 2 * rem && (src & 1) == 0) break;  // folded away
        const std::int64_t v = src < 2 * rem ? src / 2 : src - rem;
        auto add = [&](std::int64_t b) {
          if (b < 0 || b >= n) return;
          const std::int64_t w = v ^ (std::int64_t{1} << b);
          out.push_back(w < rem ? 2 * w + 1 : w + rem);
        };
        if (eq.all_bits) {
          for (int b = 0; b < n; ++b) add(b);
        } else {
          for (const IndexRule& bit : eq.bits) add(bit.At(n));
        }
        break;
      }
      // Folded: n = floor(log2 P) + 1 bits, the top one the fold's (FoldedBits).
      const int n = eq.folded ? FoldedBits(nprocs_) : log2_;
      // Folded, a bit below the top one pairs only the first 2^(n-1) ranks.
      auto outside = [&eq, n](std::int64_t v, std::int64_t b) {
        return eq.folded && b < n - 1 && v >= (std::int64_t{1} << (n - 1));
      };
      if (eq.folded && eq.tree_role == TreeRole::kNone) {
        if (outside(src, 0)) break;
        if (eq.all_bits) {
          for (int b = 0; b + 1 < n; ++b) out.push_back(src ^ (std::int64_t{1} << b));
        } else {
          for (const IndexRule& bit : eq.bits) {
            const std::int64_t b = bit.At(n);
            if (b >= 0 && b + 1 < n) out.push_back(src ^ (std::int64_t{1} << b));
          }
        }
        break;
      }
      if (eq.bit_field == BitField::kRank) {
        if (eq.all_bits) {
          for (int b = 0; b < n; ++b) out.push_back(src ^ (std::int64_t{1} << b));
        } else if (eq.tree_role != TreeRole::kNone) {
          // A tree rooted at `root`: ranks counted from it, v = (src - root) mod P, as MPI
          // libraries count them; the partner is (v ^ 2^b) + root mod P, if v ^ 2^b < P.
          const std::int64_t root = eq.root.At(nprocs_);
          const std::int64_t v = Wrap(src - root, nprocs_);
          for (const IndexRule& bit : eq.bits) {
            const std::int64_t b = bit.At(n);
            if (b < 0 || b >= 62 || !InTreeRole(eq.tree_role, v, b) || outside(v, b)) continue;
            const std::int64_t w = v ^ (std::int64_t{1} << b);
            if (w < nprocs_) out.push_back(Wrap(w + root, nprocs_));
          }
        } else {
          for (const IndexRule& bit : eq.bits) {
            std::int64_t b = bit.At(n);
            if (b >= 0 && b < 62) out.push_back(src ^ (std::int64_t{1} << b));
          }
        }
        break;
      }
      const int size = BitFieldSize(eq.bit_field, n);
      const int offset = BitFieldOffset(eq.bit_field, n);
      if (eq.all_bits) {
        for (int b = 0; b < size; ++b) out.push_back(src ^ (std::int64_t{1} << (offset + b)));
      } else {
        for (const IndexRule& bit : eq.bits) {
          const std::int64_t b = bit.At(size);
          if (b >= 0 && b < size) out.push_back(src ^ (std::int64_t{1} << (offset + b)));
        }
      }
      break;
    }
    case Family::kDissemination: {
      const int n = nprocs_ > 1
                        ? static_cast<int>(std::bit_width(static_cast<std::uint64_t>(nprocs_ - 1)))
                        : 0;
      auto add = [&](std::int64_t b) {
        if (b < 0 || b >= n) return;  // 2^b < P exactly for b < ceil(log2 P)
        out.push_back(Wrap(src + eq.shift_sign * (std::int64_t{1} << b), nprocs_));
      };
      if (eq.all_bits) {
        for (int b = 0; b < n; ++b) add(b);
      } else {
        for (const IndexRule& bit : eq.bits) add(bit.At(n));
      }
      break;
    }
    case Family::kBitPermute: {
      const int n = log2_;
      std::int64_t d = 0;
      for (int i = 0; i < n; ++i) {
        if (!(src & (std::int64_t{1} << i))) continue;
        std::int64_t to = 0;
        switch (eq.permutation) {
          case BitPermutation::kRotate:
            to = Wrap(i + eq.rotate, n);
            break;
          case BitPermutation::kRotateHalf:
            to = (i + n / 2) % n;
            break;
          case BitPermutation::kReverse:
            to = n - 1 - i;
            break;
          case BitPermutation::kTransposeHigh: {
            const int keep = n % 2;
            const int half = n / 2;
            to = i < keep ? i : keep + (i - keep + half) % (2 * half);
            break;
          }
        }
        d |= std::int64_t{1} << to;
      }
      out.push_back(d);
      break;
    }
    case Family::kStencil: {
      const std::size_t nd = extents_.size();
      std::int64_t coords[8];
      for (std::size_t i = 0; i < nd; ++i) coords[i] = (src / strides_[i]) % extents_[i];
      for (const auto& o : eq.offsets) {
        std::int64_t d = 0;
        bool inside = true;
        for (std::size_t i = 0; i < nd && inside; ++i) {
          std::int64_t c = coords[i] + o[i];
          if (eq.periodic[i]) {
            c = Wrap(c, extents_[i]);
          } else if (c < 0 || c >= extents_[i]) {
            inside = false;
          }
          d += c * strides_[i];
        }
        if (inside && !(eq.skip_self && d == src)) out.push_back(d);
      }
      break;
    }
    case Family::kUnion:
      for (const AtCount& term : terms_) {
        term.ForEachDest(src, [&out](std::int64_t d) { out.push_back(d); });
      }
      break;
    case Family::kTranspose: {
      // (x, y) on extents (e0, e1) -> (y, x) on extents (e1, e0).
      std::int64_t x = src % extents_[0], y = src / extents_[0];
      out.push_back(y + extents_[1] * x);
      break;
    }
    default:
      break;
  }
  std::int64_t* begin = out.begin();
  std::int64_t* end = begin + out.size();
  std::sort(begin, end);
  end = std::unique(begin, end);
  for (std::int64_t* d = begin; d != end; ++d) {
    if (*d >= 0 && *d < nprocs_) fn(*d);
  }
}

std::vector<std::int64_t> GeneralEquation::AtCount::Dests(std::int64_t src) const {
  std::vector<std::int64_t> out;
  ForEachDest(src, [&out](std::int64_t d) { out.push_back(d); });
  return out;
}

std::int64_t GeneralEquation::AtCount::NumDests(std::int64_t src) const {
  const GeneralEquation& eq = *equation_;
  if (src < 0 || src >= nprocs_) return 0;
  if (eq.family == Family::kStar) {
    const std::int64_t root = eq.root.At(nprocs_);
    if (src == root) return eq.star_direction == StarDirection::kToRoot ? 0 : nprocs_ - 1;
    return eq.star_direction == StarDirection::kFromRoot ? 0 : 1;
  }
  if (eq.family == Family::kGroupAll) {
    std::int64_t size = 1;
    for (std::size_t i = 0; i < extents_.size(); ++i) {
      if (eq.group_dims[i]) size *= extents_[i];
    }
    return eq.include_self ? size : size - 1;
  }
  // Counted, not listed: the synthesis asks this per slot, rank and occurrence.
  std::int64_t count = 0;
  ForEachDest(src, [&count](std::int64_t) { ++count; });
  return count;
}

CommMap GeneralEquation::AtCount::Map() const {
  CommMap map;
  map.nprocs = static_cast<int>(nprocs_);
  map.dests.resize(static_cast<std::size_t>(nprocs_));
  for (std::int64_t src = 0; src < nprocs_; ++src) {
    ForEachDest(src, [&](std::int64_t d) {
      map.dests[static_cast<std::size_t>(src)].push_back(static_cast<int>(d));
    });
  }
  return map;
}

GeneralEquation GeneralEquation::Inverse() const {
  GeneralEquation inv = *this;
  inv.alternatives.clear();
  inv.rivals.clear();
  switch (family) {
    case Family::kStar:
      if (star_direction == StarDirection::kToRoot) inv.star_direction = StarDirection::kFromRoot;
      if (star_direction == StarDirection::kFromRoot) inv.star_direction = StarDirection::kToRoot;
      break;
    case Family::kGroupAll:
      break;  // symmetric
    case Family::kXorExchange:
      // Symmetric, but a tree level's one side receives from the other.
      switch (tree_role) {
        case TreeRole::kNone:
          break;
        case TreeRole::kLowParent:
          inv.tree_role = TreeRole::kLowChild;
          break;
        case TreeRole::kLowChild:
          inv.tree_role = TreeRole::kLowParent;
          break;
        case TreeRole::kHighParent:
          inv.tree_role = TreeRole::kHighChild;
          break;
        case TreeRole::kHighChild:
          inv.tree_role = TreeRole::kHighParent;
          break;
      }
      break;
    case Family::kDissemination:
      inv.shift_sign = -shift_sign;
      break;
    case Family::kBitPermute:
      if (permutation == BitPermutation::kRotate) inv.rotate = -rotate;
      break;  // a half rotation (n even), a reversal and kTransposeHigh are self-inverse
    case Family::kStencil:
      for (auto& o : inv.offsets) {
        for (auto& v : o) v = -v;
      }
      std::sort(inv.offsets.begin(), inv.offsets.end());
      break;
    case Family::kTranspose:
      // (x, y) on (e0, e1) -> (y, x) on (e1, e0); the inverse transposes the (e1, e0) grid.
      if (grid.shape == GridShape::kDimsCreate) {
        std::reverse(inv.grid.order.begin(), inv.grid.order.end());
      } else if (grid.shape == GridShape::kFixedFast) {
        inv.grid.shape = GridShape::kFixedSlow;
      } else if (grid.shape == GridShape::kFixedSlow) {
        inv.grid.shape = GridShape::kFixedFast;
      }
      if (inv.valid.rule == CountRule::kGrid) inv.valid.grid = inv.grid;
      break;
    case Family::kUnion:
    case Family::kComponents:
      for (auto& t : inv.terms) t = t.Inverse();
      break;
  }
  return inv;
}

namespace {

// A variable of the symbolic formula and its value at each count.
struct Variable {
  std::string name;
  std::vector<std::int64_t> values;
};

// "+1", "+sqrt(P)", "-(sqrt(P)-1)", "+(2*P+3)" for a + b * name.
std::string FormatAffine(std::int64_t a, std::int64_t b, const std::string& name) {
  if (b == 0) return Signed(a);
  std::string term = (b == 1 || b == -1) ? name : std::to_string(b < 0 ? -b : b) + "*" + name;
  // value = sign * (term + c) with sign = sign of b.
  const std::int64_t c = b > 0 ? a : -a;
  std::string inner =
      c == 0 ? term : "(" + term + (c > 0 ? "+" : "-") + std::to_string(c < 0 ? -c : c) + ")";
  return (b > 0 ? "+" : "-") + inner;
}

// Writes `values` (one per count) as a + b * X for the first variable X that fits exactly.
std::optional<std::string> Affine(const std::vector<std::int64_t>& values,
                                  const std::vector<Variable>& variables) {
  if (std::all_of(values.begin(), values.end(), [&](std::int64_t v) { return v == values[0]; })) {
    return Signed(values[0]);
  }
  for (const Variable& x : variables) {
    const auto& xs = x.values;
    std::size_t j = 1;
    while (j < xs.size() && xs[j] == xs[0]) ++j;
    if (j == xs.size() || (values[j] - values[0]) % (xs[j] - xs[0]) != 0) continue;
    const std::int64_t b = (values[j] - values[0]) / (xs[j] - xs[0]);
    const std::int64_t a = values[0] - b * xs[0];
    bool ok = true;
    for (std::size_t k = 0; k < xs.size(); ++k) ok = ok && a + b * xs[k] == values[k];
    if (ok) return FormatAffine(a, b, x.name);
  }
  return std::nullopt;
}

}  // namespace

std::string GeneralEquation::Formula() const {
  if (family != Family::kStencil && family != Family::kTranspose) return "";
  // Local equations at the traced counts and the next valid ones (small, to stay cheap).
  std::vector<std::int64_t> counts = traced_counts;
  if (counts.empty()) return "";
  for (std::int64_t p = counts.back(); counts.size() < traced_counts.size() + 2;) {
    auto next = ValidCountSet(ValidRules()).AtLeast(p + 1);
    if (!next || *next > 4096) break;
    counts.push_back(p = *next);
  }
  if (counts.size() < 3) return "";
  std::vector<LocalEquation> locals;
  for (std::int64_t p : counts) locals.push_back(LocalAt(p));
  // Variables: the grid's extents (by name), then P.
  std::vector<Variable> variables;
  for (std::size_t i = 0; i < static_cast<std::size_t>(grid.ndims); ++i) {
    std::string var;
    switch (grid.shape) {
      case GridShape::kLinear:
        var = "P";
        break;
      case GridShape::kSquare:
        var = "sqrt(P)";
        break;
      case GridShape::kCube:
        var = "cbrt(P)";
        break;
      case GridShape::kDimsCreate:
        var = "d" + std::to_string(grid.order[i]);
        break;
      case GridShape::kOptimalShapeXYZ:
        var = std::string(1, "xyz"[i]) + "(P)";
        break;
      case GridShape::kComponents:
        var = i < grid.order.size() ? "d" + std::to_string(grid.order[i]) : "components";
        break;
      case GridShape::kInterleavedComponents:
        var = i == 0 ? "components" : "d" + std::to_string(grid.order[i - 1]);
        break;
      case GridShape::kFixedFast:
      case GridShape::kFixedSlow:
        var = "P/" + std::to_string(grid.fixed);
        break;
    }
    Variable v{var, {}};
    for (std::int64_t p : counts) v.values.push_back((*grid.Extents(p))[i]);
    variables.push_back(v);
  }
  variables.push_back({"P", counts});
  // Same shape at every count: as many runs, each with as many displacements.
  const LocalEquation& first = locals.front();
  for (const LocalEquation& l : locals) {
    if (l.period.size() != first.period.size()) return "";
    for (std::size_t r = 0; r < l.period.size(); ++r) {
      if (l.period[r].displacements.size() != first.period[r].displacements.size()) return "";
    }
  }
  auto field = [&](auto get) -> std::optional<std::string> {
    std::vector<std::int64_t> values;
    for (const LocalEquation& l : locals) values.push_back(get(l));
    return Affine(values, variables);
  };
  auto reps = field([](const LocalEquation& l) { return std::int64_t{l.repetitions}; });
  if (!reps) return "";
  std::string out;
  for (std::size_t r = 0; r < first.period.size(); ++r) {
    std::string disp;
    const std::size_t n = first.period[r].displacements.size();
    for (std::size_t k = 0; k < n; ++k) {
      auto d = field([&](const LocalEquation& l) { return l.period[r].displacements[k]; });
      if (!d) return "";
      disp += (k ? "," : "") + *d;
    }
    if (n == 0) disp = "-";
    if (n > 1) disp = "{" + disp + "}";
    auto count = field([&](const LocalEquation& l) { return std::int64_t{l.period[r].count}; });
    if (!count) return "";
    out += (r ? ", " : "") + std::string("[") + disp + " {" + *count + "," + *reps + "}]";
  }
  return out;
}

bool GeneralEquation::IsValidCount(std::int64_t nprocs) const {
  if (!valid.IsValid(nprocs)) return false;
  if (family == Family::kComponents) {
    // Each component's pattern at its own size.
    const auto sizes = ComponentSizesAt(nprocs);
    if (!sizes || sizes->size() != terms.size()) return false;
    for (std::size_t c = 0; c < terms.size(); ++c) {
      if (!terms[c].IsValidCount((*sizes)[c])) return false;
    }
    return true;
  }
  return std::all_of(terms.begin(), terms.end(),
                     [nprocs](const GeneralEquation& t) { return t.IsValidCount(nprocs); });
}

std::vector<ValidCounts> GeneralEquation::ValidRules() const {
  ValidCountSet set;
  set.Add(valid);
  // A component's own rules hold at its size, not at P: `valid` names the counts where the
  // sizes are whole; At() says which component a count leaves without its pattern.
  if (family == Family::kComponents) return set.rules();
  for (const GeneralEquation& t : terms) {
    for (const ValidCounts& v : t.ValidRules()) set.Add(v);
  }
  return set.rules();
}

std::vector<std::int64_t> GeneralEquation::Dests(std::int64_t src, std::int64_t nprocs) const {
  return At(nprocs).Dests(src);
}

LocalEquation GeneralEquation::LocalAt(std::int64_t nprocs, int phase, int comm) const {
  LocalEquation local = AnalyzeLocal(At(nprocs).Map(), phase, comm);
  local.shape = name;
  return local;
}

std::string GeneralEquation::Describe() const {
  std::ostringstream out;
  out << name << ": ";
  switch (family) {
    case Family::kStar:
      out << (star_direction == StarDirection::kToRoot     ? "every rank sends to rank "
              : star_direction == StarDirection::kFromRoot ? "rank "
                                                           : "every rank exchanges with rank ")
          << root.Describe("P");
      if (star_direction == StarDirection::kFromRoot) out << " sends to every rank";
      break;
    case Family::kGroupAll: {
      bool whole = std::all_of(group_dims.begin(), group_dims.end(), [](bool b) { return b; });
      if (whole) {
        out << "every rank sends to every "
            << (include_self ? "rank, itself included" : "other rank");
      } else {
        out << "every rank sends to the ranks (itself " << (include_self ? "included" : "excluded")
            << ") that share its ";
        bool first = true;
        for (std::size_t i = 0; i < group_dims.size(); ++i) {
          if (group_dims[i]) continue;
          out << (first ? "" : ", ") << DimName(i);
          first = false;
        }
        out << " coordinate on a " << grid.Describe() << " (x fastest)";
      }
      break;
    }
    case Family::kXorExchange:
      if (folded && fold_pairs) {
        // Bits from the top are counted from log2(P') - 1 = floor(log2(P)) - 1.
        auto bit_name = [](const IndexRule& r) {
          if (!r.from_end) return std::to_string(r.index);
          return "floor(log2(P))-" + std::to_string(r.index + 1);
        };
        out << "recursive doubling folded in pairs (as MPI libraries run it; P' = "
               "2^floor(log2(P)), R = P - P'): ";
        if (tree_role == TreeRole::kLowParent) {
          out << "the fold, the even ranks below 2R to rank + 1";
        } else if (tree_role == TreeRole::kLowChild) {
          out << "the fold, the odd ranks below 2R to rank - 1";
        } else {
          out << "the other P' ranks renumbered (v = rank/2 below 2R, rank - R from there), "
                 "v XOR 2^b for ";
          if (all_bits) {
            out << "every bit b < log2(P')";
          } else {
            out << "b in {";
            for (std::size_t i = 0; i < bits.size(); ++i) {
              out << (i ? ", " : "") << bit_name(bits[i]);
            }
            out << "}";
          }
          out << ", taken back to rank 2w + 1 below R, w + R from there";
        }
      } else if (folded) {
        // Bits from the top are counted from the fold's bit, floor(log2(P)).
        auto bit_name = [](const IndexRule& r) {
          if (!r.from_end) return std::to_string(r.index);
          return "floor(log2(P))" + (r.index == 0 ? std::string() : "-" + std::to_string(r.index));
        };
        out << "folded recursive doubling (the ranks from P' = 2^floor(log2(P)) up fold onto the "
               "first P'): ";
        if (tree_role == TreeRole::kNone) out << "among the first P' ranks, ";
        out << "src XOR 2^b for ";
        if (all_bits) {
          out << "every bit b < log2(P')";
        } else {
          out << "b in {";
          for (std::size_t i = 0; i < bits.size(); ++i) out << (i ? ", " : "") << bit_name(bits[i]);
          out << "}";
        }
        if (tree_role != TreeRole::kNone) out << " (at b = floor(log2(P)): the fold)";
        out << " (partners >= P dropped)";
      } else if (tree_role != TreeRole::kNone && root != IndexRule{}) {
        // A tree rooted elsewhere than rank 0 counts ranks from its root.
        const std::string r = root.from_end ? "(" + root.Describe("P") + ")" : root.Describe("P");
        out << "ranks counted from the root " << root.Describe("P") << ", v = (src - " << r
            << ") mod P: ((v XOR 2^b) + " << r << ") mod P (v XOR 2^b < P) for ";
      } else {
        out << "src XOR 2^b for ";
      }
      if (!folded) {
        if (all_bits) {
          out << "every bit b < "
              << (bit_field == BitField::kRank      ? "log2(P)"
                  : bit_field == BitField::kLowHalf ? "ceil(log2(P)/2)"
                                                    : "floor(log2(P)/2)");
        } else {
          out << "b in {";
          const char* size_name = bit_field == BitField::kRank      ? "log2(P)"
                                  : bit_field == BitField::kLowHalf ? "ceil(log2(P)/2)"
                                                                    : "floor(log2(P)/2)";
          for (std::size_t i = 0; i < bits.size(); ++i) {
            out << (i ? ", " : "") << bits[i].Describe(size_name);
          }
          out << "}";
        }
        if (bit_field == BitField::kLowHalf) {
          out << " of the column index (rows of 2^ceil(log2(P)/2) ranks)";
        } else if (bit_field == BitField::kHighHalf) {
          out << " of the row index (rows of 2^ceil(log2(P)/2) ranks)";
        }
        out << " (partners >= P dropped)";
      }
      if (!fold_pairs) {
        const bool rooted = root != IndexRule{};
        const char* const of = rooted ? " of v" : "";
        const char* const rank = rooted ? "v" : "src";
        switch (tree_role) {
          case TreeRole::kNone:
            break;
          case TreeRole::kLowParent:
            out << ", from the ranks whose bits" << of << " up to b are 0 (a binomial tree's "
                << "parents at that level, rank " << root.Describe("P") << "'s tree: partner "
                << rank << " + 2^b)";
            break;
          case TreeRole::kLowChild:
            out << ", from the ranks whose lowest set bit" << of << " is b (a binomial tree's "
                << "children at that level, rank " << root.Describe("P") << "'s tree: partner "
                << rank << " - 2^b)";
            break;
          case TreeRole::kHighParent:
            out << ", from the ranks" << of << " below 2^b (a tree grown by doubling from rank "
                << root.Describe("P") << ": partner " << rank << " + 2^b)";
            break;
          case TreeRole::kHighChild:
            out << ", from the ranks whose highest set bit" << of << " is b (a tree grown by "
                << "doubling from rank " << root.Describe("P") << ": partner " << rank << " - 2^b)";
            break;
        }
      }
      break;
    case Family::kBitPermute:
      out << "the log2(P) bits of src ";
      if (permutation == BitPermutation::kReverse) {
        out << "reversed";
      } else if (permutation == BitPermutation::kRotateHalf) {
        out << "rotated by log2(P)/2 (transpose of a sqrt(P) x sqrt(P) matrix)";
      } else if (permutation == BitPermutation::kTransposeHigh) {
        out << "above the lowest log2(P) mod 2 swapped by halves (transpose of a 2^h x 2^h "
               "matrix of blocks of 2^(log2(P) mod 2) ranks, h = floor(log2(P)/2))";
      } else {
        out << "rotated left by " << rotate;
      }
      break;
    case Family::kStencil: {
      out << "offsets {";
      for (std::size_t i = 0; i < offsets.size(); ++i)
        out << (i ? ", " : "") << FormatOffset(offsets[i]);
      out << "}";
      if (periodic.size() > 1) {
        out << " in (";
        for (std::size_t i = 0; i < periodic.size(); ++i) out << (i ? "," : "") << DimName(i);
        out << ")";
      }
      // Periodicity only matters along dimensions some offset moves in.
      std::string per, open;
      for (std::size_t i = 0; i < periodic.size(); ++i) {
        bool moves = false;
        for (const auto& o : offsets) moves = moves || o[i] != 0;
        if (moves)
          (periodic[i] ? per : open) +=
              (per.empty() && periodic[i]) || (open.empty() && !periodic[i]) ? DimName(i)
                                                                             : ", " + DimName(i);
      }
      if (periodic.size() == 1) {
        out << (periodic[0] ? ", periodic" : ", not periodic (ends have no partner)");
      } else {
        if (!per.empty()) out << ", periodic in " << per;
        if (!open.empty()) out << ", open in " << open << " (boundary ranks have no partner)";
      }
      if (skip_self) out << ", none to itself (where an offset wraps onto the rank)";
      out << ", on a " << grid.Describe() << " (x fastest)";
      break;
    }
    case Family::kTranspose:
      out << "(x, y) -> (y, x) on a " << grid.Describe() << " (x fastest)";
      break;
    case Family::kDissemination:
      out << "(src " << (shift_sign < 0 ? "-" : "+") << " 2^b) mod P for ";
      if (all_bits) {
        out << "every b with 2^b < P";
      } else {
        out << "b in {";
        for (std::size_t i = 0; i < bits.size(); ++i) {
          out << (i ? ", " : "") << bits[i].Describe("ceil(log2(P))");
        }
        out << "} (none where 2^b >= P)";
      }
      break;
    case Family::kUnion:
      out << "the union of";
      for (std::size_t i = 0; i < terms.size(); ++i) {
        out << (i ? "; and " : " ") << "(" << (i + 1) << ") " << terms[i].Describe();
      }
      return out.str();
    case Family::kComponents: {
      out << "blocks of consecutive ranks, each with partners in its own ranks only: ";
      bool same = true;
      for (const GeneralEquation& t : terms) same = same && t.Describe() == terms[0].Describe();
      auto size = [this](std::size_t i) {
        return i < component_sizes.size() ? component_sizes[i].Describe() + " ranks"
                                          : std::string("the other ranks");
      };
      if (same) {
        for (std::size_t i = 0; i < terms.size(); ++i) {
          out << (i == 0 ? "" : i + 1 == terms.size() ? " and " : ", ") << size(i);
        }
        out << ", each " << terms[0].Describe() << " (P the component's ranks)";
      } else {
        for (std::size_t i = 0; i < terms.size(); ++i) {
          out << (i ? "; " : "") << "(" << (i + 1) << ") " << size(i) << ", "
              << terms[i].Describe();
        }
        out << " (P each component's ranks)";
      }
      out << "; valid counts: " << valid.Describe();
      return out.str();
    }
  }
  out << "; valid counts: " << valid.Describe();
  return out.str();
}

// ---------------------------------------------------------------------------------------
// Fitting.

namespace {

// First disagreement between an equation and one traced count, or "" if it reproduces it.
std::string Mismatch(const GeneralEquation& eq, const Traced& t) {
  if (!eq.IsValidCount(t.nprocs)) {
    return "does not exist at " + std::to_string(t.nprocs) + " processes";
  }
  GeneralEquation::AtCount at = eq.At(t.nprocs);
  for (std::int64_t src = 0; src < t.nprocs; ++src) {
    std::vector<std::int64_t> got = at.Dests(src);
    if (got != t.dests[static_cast<std::size_t>(src)]) {
      return "at " + std::to_string(t.nprocs) + " processes rank " + std::to_string(src) +
             " sends to " + FormatSet(t.dests[static_cast<std::size_t>(src)]) +
             ", the family gives " + FormatSet(got);
    }
  }
  return "";
}

std::vector<std::int64_t> Counts(const std::vector<Traced>& traced) {
  std::vector<std::int64_t> c;
  for (const Traced& t : traced) c.push_back(t.nprocs);
  return c;
}

bool AllPowersOfTwo(const std::vector<Traced>& traced) {
  return std::all_of(traced.begin(), traced.end(),
                     [](const Traced& t) { return ExactLog2(t.nprocs).has_value(); });
}

// Candidate equations of each family, in preference order, appended to `out`.

void StarCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  const Traced& big = traced.back();
  // The root is the rank with the most partners (in + out) at the largest count.
  std::vector<std::int64_t> degree(static_cast<std::size_t>(big.nprocs), 0);
  for (std::int64_t s = 0; s < big.nprocs; ++s) {
    for (std::int64_t d : big.dests[static_cast<std::size_t>(s)]) {
      ++degree[static_cast<std::size_t>(s)];
      ++degree[static_cast<std::size_t>(d)];
    }
  }
  const std::int64_t root = std::max_element(degree.begin(), degree.end()) - degree.begin();
  for (IndexRule rule : {IndexRule{false, root}, IndexRule{true, big.nprocs - 1 - root}}) {
    for (StarDirection dir :
         {StarDirection::kToRoot, StarDirection::kFromRoot, StarDirection::kBoth}) {
      GeneralEquation eq;
      eq.family = Family::kStar;
      eq.name = "master-worker";
      eq.root = rule;
      eq.star_direction = dir;
      eq.valid.rule = CountRule::kAny;
      eq.valid.min_count = std::max<std::int64_t>(2, rule.index + 1);
      out->push_back(eq);
    }
  }
}

void GroupAllCandidates(const GridRule& grid, std::vector<GeneralEquation>* out) {
  const int nd = grid.ndims;
  // Group dimension masks: the whole grid first, then larger groups before smaller ones.
  std::vector<unsigned> masks;
  for (unsigned m = 1; m < (1u << nd); ++m) masks.push_back(m);
  std::stable_sort(masks.begin(), masks.end(), [](unsigned a, unsigned b) {
    return __builtin_popcount(a) > __builtin_popcount(b);
  });
  for (unsigned m : masks) {
    if (grid.shape != GridShape::kLinear && m == (1u << nd) - 1) continue;  // = all-to-all
    GeneralEquation eq;
    eq.family = Family::kGroupAll;
    eq.grid = grid;
    eq.group_dims.resize(static_cast<std::size_t>(nd));
    for (int i = 0; i < nd; ++i) eq.group_dims[static_cast<std::size_t>(i)] = (m >> i) & 1u;
    if (grid.shape == GridShape::kLinear) {
      eq.name = "all-to-all";
    } else {
      std::string dims;
      for (int i = 0; i < nd; ++i) {
        if ((m >> i) & 1u) dims += DimName(static_cast<std::size_t>(i));
      }
      eq.name = nd == 2 ? (m == 1u ? "all-to-all within rows" : "all-to-all within columns")
                        : "all-to-all within " + dims + " groups";
    }
    eq.valid = GridCounts(grid);
    eq.valid.min_count = std::max<std::int64_t>(eq.valid.min_count, 2);
    out->push_back(eq);
    eq.include_self = true;  // e.g. MPI_Alltoall written as point-to-point with the self copy
    eq.name += " (with self)";
    out->push_back(eq);
  }
}

void XorCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  std::set<int> bits;
  for (const Traced& t : traced) {
    for (std::int64_t s = 0; s < t.nprocs; ++s) {
      for (std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
        std::int64_t m = s ^ d;
        auto b = ExactLog2(m);
        if (!b) return;  // not a single-bit exchange
        if (&t == &traced.back()) bits.insert(*b);
      }
    }
  }
  if (bits.empty()) return;
  const bool pow2 = AllPowersOfTwo(traced);
  const int n = CeilLog2(traced.back().nprocs);
  auto make = [&](std::vector<IndexRule> rules, bool all) {
    GeneralEquation eq;
    eq.family = Family::kXorExchange;
    eq.bits = std::move(rules);
    eq.all_bits = all;
    std::int64_t need = 1;  // bits a count needs for every rule to name a bit
    for (const IndexRule& r : eq.bits) need = std::max<std::int64_t>(need, r.index + 1);
    eq.valid.rule = pow2 ? CountRule::kPowersOfTwo : CountRule::kAny;
    eq.valid.min_count = std::int64_t{1} << need;
    if (all) {
      eq.name = "hypercube";
    } else if (eq.bits.size() == 1) {
      eq.name = "pairwise exchange";
    } else {
      eq.name = "butterfly";
    }
    out->push_back(eq);
  };
  make({}, true);
  std::vector<IndexRule> low, high;
  for (int b : bits) {
    low.push_back({false, b});
    high.push_back({true, n - 1 - b});
  }
  make(low, false);
  make(high, false);

  // The same bits counted within a row or a column of a 2^ceil(n/2) x 2^floor(n/2) grid: a
  // butterfly along rows whose partners are counted from the row's top bit (NAS CG).
  if (!pow2) return;
  for (BitField field : {BitField::kLowHalf, BitField::kHighHalf}) {
    const int size = BitFieldSize(field, n);
    const int offset = BitFieldOffset(field, n);
    std::vector<IndexRule> from_start, from_end;
    bool inside = true;
    for (int b : bits) {
      if (b < offset || b >= offset + size) inside = false;
      from_start.push_back({false, b - offset});
      from_end.push_back({true, offset + size - 1 - b});
    }
    if (!inside) continue;
    // Every bit of the field: a butterfly along the rows whose number of steps follows the
    // row's bits (NAS CG's dot products: 1 step at 4 ranks, 2 at 8 and 16, 3 at 32 and 64).
    // Tried first, as every bit of the rank is before fixed bits: fixed bits {0, 1} fit 4, 8
    // and 16 as well (a rule naming no bit of the field at a count gives no partner there)
    // and would keep 2 steps at 32.
    if (static_cast<int>(bits.size()) == size) {
      GeneralEquation eq;
      eq.family = Family::kXorExchange;
      eq.all_bits = true;
      eq.bit_field = field;
      eq.name = field == BitField::kLowHalf ? "hypercube in rows" : "hypercube in columns";
      eq.valid.rule = CountRule::kPowersOfTwo;
      eq.valid.min_count = 2;
      out->push_back(eq);
    }
    for (auto* rules : {&from_start, &from_end}) {
      GeneralEquation eq;
      eq.family = Family::kXorExchange;
      eq.bits = *rules;
      eq.bit_field = field;
      eq.name = eq.bits.size() == 1
                    ? (field == BitField::kLowHalf ? "pairwise exchange in rows"
                                                   : "pairwise exchange in columns")
                    : (field == BitField::kLowHalf ? "butterfly in rows" : "butterfly in columns");
      // A count whose row has too few bits for a rule makes no exchange there (a butterfly
      // step that exists from rows of 4 on): that is a valid count, not an error.
      eq.valid.rule = CountRule::kPowersOfTwo;
      eq.valid.min_count = 2;
      out->push_back(eq);
    }
  }
}

// One level of a tree written by hand: a single bit b (v ^ 2^b, counted from the start or
// from the top of the rank's ceil(log2 P) bits) that only one side of the pairs makes (a
// binomial reduction's children send, its parents receive), in ranks counted from the tree's
// root, v = (src - root) mod P, as MPI libraries count them. The root is rank 0, or a rank
// named from the start or from the end of the ranks (the last rank, which a code keeps for
// its output): each that makes every pair of the largest count one bit apart, the same bit
// for all, is tried, rank 0 first, then the last rank, then the others in order. Tried after
// every other family (a map that the exchange of every rank, a stencil or a group reproduces
// is that), or right after the exchanges by bit with FitOptions::prefer_trees. A known root
// (FitOptions::tree_root) is tried first, with its own rule.
void TreeCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out,
                    const std::optional<IndexRule>& preferred = std::nullopt) {
  const Traced& t = traced.back();
  const std::int64_t p = t.nprocs;
  // The bit every pair of the largest count differs in, counted from `root`; nullopt if the
  // pairs are not one bit apart there, or not all in the same bit.
  auto level_from = [&t, p](std::int64_t root) -> std::optional<int> {
    std::optional<int> level;
    for (std::int64_t s = 0; s < p; ++s) {
      for (std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
        const auto b = ExactLog2(Wrap(s - root, p) ^ Wrap(d - root, p));
        if (!b || (level && *level != *b)) return std::nullopt;
        level = *b;
      }
    }
    return level;
  };
  const std::int64_t known =
      preferred && preferred->At(p) >= 0 && preferred->At(p) < p ? preferred->At(p) : -1;
  std::vector<std::int64_t> roots;
  if (known >= 0) roots.push_back(known);
  for (const std::int64_t r : {std::int64_t{0}, p - 1}) {
    if (r != known && (r == 0 || p > 1)) roots.push_back(r);
  }
  for (std::int64_t r = 1; r + 1 < p; ++r) {
    if (r != known) roots.push_back(r);
  }
  const bool pow2 = AllPowersOfTwo(traced);
  const int n = CeilLog2(p);
  for (const std::int64_t root : roots) {
    const std::optional<int> level = level_from(root);
    if (!level) continue;
    const int b = *level;
    const std::vector<IndexRule> low{{false, b}}, high{{true, n - 1 - b}};
    // The root named from the start (rank r) and from the end (rank P - 1 - k): the traced
    // counts tell which holds; rank 0 only from the start; a known root by its own rule.
    std::vector<IndexRule> root_rules{{false, root}};
    if (root == known) {
      root_rules = {*preferred};
    } else if (root != 0) {
      root_rules.push_back({true, p - 1 - root});
    }
    for (const IndexRule& root_rule : root_rules) {
      for (const TreeRole role : {TreeRole::kLowParent, TreeRole::kLowChild, TreeRole::kHighParent,
                                  TreeRole::kHighChild}) {
        for (const auto* rules : {&low, &high}) {
          GeneralEquation eq;
          eq.family = Family::kXorExchange;
          eq.bits = *rules;
          eq.tree_role = role;
          eq.root = root_rule;
          eq.valid.rule = pow2 ? CountRule::kPowersOfTwo : CountRule::kAny;
          eq.valid.min_count = std::max<std::int64_t>(2, root_rule.index + 1);
          eq.name = role == TreeRole::kLowParent    ? "binomial tree, parents"
                    : role == TreeRole::kLowChild   ? "binomial tree, children"
                    : role == TreeRole::kHighParent ? "doubling tree, parents"
                                                    : "doubling tree, children";
          if (root != 0) eq.name += " (root " + root_rule.Describe("P") + ")";
          out->push_back(eq);
        }
      }
    }
  }
}

// A folded exchange (GeneralEquation::folded; in pairs with `pairs`) valid at any count.
GeneralEquation FoldedExchange(bool pairs, std::vector<IndexRule> bits, bool all_bits,
                               TreeRole role, std::string name) {
  GeneralEquation eq;
  eq.family = Family::kXorExchange;
  eq.folded = true;
  eq.fold_pairs = pairs;
  eq.bits = std::move(bits);
  eq.all_bits = all_bits;
  eq.tree_role = role;
  eq.name = std::move(name);
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 2;
  return eq;
}

// Recursive doubling folded the textbook way at a count that is not a power of two
// (GeneralEquation::folded): the exchange among the first P' = 2^floor(log2 P) ranks, by
// every bit or by fixed bits, and the fold onto them (one side of the pairs at bit log2 P').
// The bits are those of the largest count with pairs: at a power of two the fold has none.
// Tried right after the exchanges by bit among all ranks (which, where they hold, are that):
// the silent ranks beyond P' and the empty maps at powers of two are strong evidence, and a
// grid can fit such maps by chance at a few counts.
void FoldedCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  const Traced* largest = nullptr;
  std::set<int> bits;
  for (const Traced& t : traced) {
    std::set<int> here;
    for (std::int64_t s = 0; s < t.nprocs; ++s) {
      for (const std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
        const auto b = ExactLog2(s ^ d);
        if (!b) return;  // not a single-bit exchange
        here.insert(*b);
      }
    }
    if (!here.empty()) {
      largest = &t;
      bits = std::move(here);
    }
  }
  if (largest == nullptr) return;
  const int n = FoldedBits(largest->nprocs);
  auto make = [out](std::vector<IndexRule> rules, bool all, TreeRole role, std::string name) {
    out->push_back(FoldedExchange(false, std::move(rules), all, role, std::move(name)));
  };
  make({}, true, TreeRole::kNone, "recursive doubling, folded");
  std::vector<IndexRule> low, high;
  for (const int b : bits) {
    low.push_back({false, b});
    high.push_back({true, n - 1 - b});
  }
  const char* const kind = bits.size() == 1 ? "pairwise exchange, folded" : "butterfly, folded";
  make(low, false, TreeRole::kNone, kind);
  make(high, false, TreeRole::kNone, kind);
  // The fold: one side of the pairs at the top bit (a tree level below it is one of a plain
  // tree's, tried with the trees).
  if (bits.size() != 1 || *bits.begin() != n - 1) return;
  make({{true, 0}}, false, TreeRole::kHighChild, "fold onto the first 2^floor(log2 P) ranks");
  make({{true, 0}}, false, TreeRole::kHighParent, "fold from the ranks beyond 2^floor(log2 P)");
}

// Recursive doubling folded in pairs, as MPICH and Open MPI run it at a count that is not a
// power of two (GeneralEquation::fold_pairs): the exchange among the P' ranks left after the
// fold, renumbered, by every bit or by fixed bits of the renumbered ranks; or the fold itself
// (bit 0 among the first 2(P - P') ranks, one side). The bits are those of the largest count
// with pairs. Tried after the fold onto the first P' ranks: at a power of two both are the
// plain exchange, and a map of neither kind returns nothing.
void PairFoldedCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  const Traced* largest = nullptr;
  std::set<int> bits;
  bool folds = false, exchanges = false;
  for (const Traced& t : traced) {
    const int n = FoldedBits(t.nprocs) - 1;
    const std::int64_t rem = t.nprocs - (std::int64_t{1} << n);
    auto renumbered = [rem](std::int64_t r) { return r < 2 * rem ? r / 2 : r - rem; };
    auto away = [rem](std::int64_t r) { return r < 2 * rem && (r & 1) == 0; };
    std::set<int> here;
    for (std::int64_t s = 0; s < t.nprocs; ++s) {
      for (const std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
        if (s < 2 * rem && d < 2 * rem && (s ^ d) == 1) {
          folds = true;
          continue;
        }
        if (away(s) || away(d)) return;
        const auto b = ExactLog2(renumbered(s) ^ renumbered(d));
        if (!b) return;
        here.insert(*b);
        exchanges = true;
      }
    }
    if (!here.empty()) {
      largest = &t;
      bits = std::move(here);
    }
  }
  if (folds == exchanges) return;  // both kinds of pairs in one map, or none
  auto make = [out](std::vector<IndexRule> rules, bool all, TreeRole role, std::string name) {
    out->push_back(FoldedExchange(true, std::move(rules), all, role, std::move(name)));
  };
  if (folds) {
    make({{false, 0}}, false, TreeRole::kLowParent, "fold in pairs onto the odd ranks");
    make({{false, 0}}, false, TreeRole::kLowChild, "fold in pairs onto the even ranks");
    return;
  }
  const int n = FoldedBits(largest->nprocs) - 1;
  make({}, true, TreeRole::kNone, "recursive doubling, folded in pairs");
  std::vector<IndexRule> low, high;
  for (const int b : bits) {
    low.push_back({false, b});
    high.push_back({true, n - 1 - b});
  }
  const char* const kind =
      bits.size() == 1 ? "pairwise exchange, folded in pairs" : "butterfly, folded in pairs";
  make(low, false, TreeRole::kNone, kind);
  make(high, false, TreeRole::kNone, kind);
}

// Dissemination steps (Family::kDissemination): every pair of every count is src + s 2^b
// mod P for one sign s and bits b with 2^b < P: by every such bit, or by the bits of the
// largest count with pairs, counted from bit 0 (a dissemination's steps are 1, 2, 4, ...;
// counted from the top, one step of a bit that moves with P, such a pair is more often a
// grid's neighbour at a few counts by chance).
void DisseminationCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  for (const std::int64_t sign : {-1, +1}) {
    const Traced* largest = nullptr;
    std::set<int> bits;
    bool ok = true;
    for (const Traced& t : traced) {
      std::set<int> here;
      for (std::int64_t s = 0; s < t.nprocs && ok; ++s) {
        for (const std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
          const auto b = ExactLog2(Wrap(sign * (d - s), t.nprocs));
          if (!b) {
            ok = false;
            break;
          }
          here.insert(*b);
        }
      }
      if (!ok) break;
      if (!here.empty()) {
        largest = &t;
        bits = std::move(here);
      }
    }
    if (!ok || largest == nullptr) continue;
    auto make = [out, sign](std::vector<IndexRule> rules, bool all, std::string name) {
      GeneralEquation eq;
      eq.family = Family::kDissemination;
      eq.shift_sign = sign;
      eq.bits = std::move(rules);
      eq.all_bits = all;
      eq.name = std::move(name);
      eq.valid.rule = CountRule::kAny;
      eq.valid.min_count = 2;
      out->push_back(eq);
    };
    make({}, true, "dissemination");
    std::vector<IndexRule> low;
    for (const int b : bits) low.push_back({false, b});
    make(low, false, bits.size() == 1 ? "dissemination step" : "dissemination steps");
  }
}

}  // namespace

std::optional<IndexRule> FindTreeRoot(const std::vector<CommMap>& maps) {
  if (maps.empty()) return std::nullopt;
  std::int64_t smallest = std::numeric_limits<std::int64_t>::max();
  for (const CommMap& m : maps) {
    if (m.IsEmpty()) return std::nullopt;
    smallest = std::min<std::int64_t>(smallest, m.nprocs);
  }
  auto fits = [&maps](const IndexRule& rule) {
    for (const CommMap& m : maps) {
      const std::int64_t p = m.nprocs, root = rule.At(p);
      if (root < 0 || root >= p) return false;
      for (std::int64_t s = 0; s < p; ++s) {
        for (const int d : m.dests[static_cast<std::size_t>(s)]) {
          if (!ExactLog2(Wrap(s - root, p) ^ Wrap(d - root, p))) return false;
        }
      }
    }
    return true;
  };
  if (fits({false, 0})) return IndexRule{false, 0};
  for (std::int64_t k = 0; k < smallest; ++k) {
    for (const IndexRule rule : {IndexRule{true, k}, IndexRule{false, k + 1}}) {
      if (rule.index < smallest && fits(rule)) return rule;
    }
  }
  return std::nullopt;
}

namespace {

void PermuteCandidates(const std::vector<Traced>& traced, std::vector<GeneralEquation>* out) {
  if (!AllPowersOfTwo(traced)) return;
  const Traced& big = traced.back();
  const int n = *ExactLog2(big.nprocs);
  if (n < 2 || big.nprocs < 2 || big.dests[1].size() != 1) return;
  auto b = ExactLog2(big.dests[1][0]);
  if (!b) return;
  auto make = [&](BitPermutation kind, std::int64_t rotate, const std::string& name) {
    GeneralEquation eq;
    eq.family = Family::kBitPermute;
    eq.permutation = kind;
    eq.rotate = rotate;
    eq.name = name;
    eq.valid.rule =
        kind == BitPermutation::kRotateHalf ? CountRule::kPowersOfFour : CountRule::kPowersOfTwo;
    eq.valid.min_count = 4;
    out->push_back(eq);
  };
  make(BitPermutation::kRotateHalf, 0, "transpose");
  make(BitPermutation::kTransposeHigh, 0, "transpose of rank pairs");
  make(BitPermutation::kReverse, 0, "bit reversal");
  if (*b != 0) {
    make(BitPermutation::kRotate, *b, *b == 1 ? "perfect shuffle" : "bit rotation");
    make(BitPermutation::kRotate, *b - n, *b - n == -1 ? "perfect unshuffle" : "bit rotation");
  }
}

bool IsSymmetric(const std::vector<Traced>& traced) {
  for (const Traced& t : traced) {
    for (std::int64_t s = 0; s < t.nprocs; ++s) {
      for (std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
        const auto& back = t.dests[static_cast<std::size_t>(d)];
        if (!std::binary_search(back.begin(), back.end(), s)) return false;
      }
    }
  }
  return true;
}

bool AtMostOnePartner(const std::vector<Traced>& traced) {
  for (const Traced& t : traced) {
    for (const auto& d : t.dests) {
      if (d.size() > 1) return false;
    }
  }
  return true;
}

// Offsets of every pair of one traced count on `extents`, periodic dims reduced.
// A stencil has a handful of offsets (26 for a 27-point 3-D stencil); more distinct offsets
// than this means the pattern is something else, and looking further would only cost time.
constexpr std::size_t kMaxStencilOffsets = 128;

// Offsets of every pair of one traced count on `extents`, periodic dims reduced; nullopt if
// there are more than kMaxStencilOffsets distinct ones.
std::optional<std::vector<std::vector<std::int64_t>>> OffsetsAt(
    const Traced& t, const std::vector<std::int64_t>& extents, const std::vector<bool>& periodic) {
  std::set<std::vector<std::int64_t>> found;
  const std::size_t nd = extents.size();
  std::vector<std::int64_t> o(nd);
  for (std::int64_t s = 0; s < t.nprocs; ++s) {
    for (std::int64_t d : t.dests[static_cast<std::size_t>(s)]) {
      std::int64_t a = s, b = d;
      for (std::size_t i = 0; i < nd; ++i) {
        std::int64_t diff = b % extents[i] - a % extents[i];
        o[i] = periodic[i] ? ReduceOffset(diff, extents[i]) : diff;
        a /= extents[i];
        b /= extents[i];
      }
      if (found.insert(o).second && found.size() > kMaxStencilOffsets) return std::nullopt;
    }
  }
  return std::vector<std::vector<std::int64_t>>(found.begin(), found.end());
}

void StencilCandidates(const GridRule& grid, const std::vector<Traced>& traced,
                       std::vector<GeneralEquation>* out) {
  const int nd = grid.ndims;
  // Periodic in every dimension (torus, ring), then in none (mesh), then mixed: where the
  // traces cannot tell (an extent of 2 everywhere), the dimensions are assumed alike.
  const unsigned full = (1u << nd) - 1;
  std::vector<unsigned> masks = {full};
  if (full != 0) masks.push_back(0);
  for (unsigned m = full; m-- > 1;) masks.push_back(m);
  std::stable_sort(masks.begin() + 2, masks.end(), [](unsigned a, unsigned b) {
    return __builtin_popcount(a) > __builtin_popcount(b);
  });
  // A symmetric exchange (every s -> d has d -> s) keeps its offsets closed under negation,
  // even where an extent of 2 makes +1 and -1 the same rank. Not a call that has at most one
  // partner per rank at every traced count (one MPI_Send or MPI_Irecv): there the closure
  // adds an alias of the offset, not a partner, and at a count with 3 or more ranks along
  // that dimension the call would go to two ranks (NAS MG, x always 1 or 2 ranks wide: every
  // halo message along x doubled).
  const bool symmetric = IsSymmetric(traced) && !AtMostOnePartner(traced);
  for (unsigned m : masks) {
    std::vector<bool> periodic(static_cast<std::size_t>(nd));
    for (int i = 0; i < nd; ++i) periodic[static_cast<std::size_t>(i)] = (m >> i) & 1u;
    // Offsets seen at each count (largest first) and their union: at small extents two
    // offsets can name the same rank (+1 and -1 on an extent of 2), so one count may not
    // show them all, and the union may hold aliases; the verification picks what holds.
    std::vector<std::vector<std::vector<std::int64_t>>> sets;
    std::set<std::vector<std::int64_t>> all;
    for (auto it = traced.rbegin(); it != traced.rend(); ++it) {
      auto found = OffsetsAt(*it, *grid.Extents(it->nprocs), periodic);
      if (!found) return;  // too many offsets on this grid: not a stencil
      std::vector<std::vector<std::int64_t>> offsets = std::move(*found);
      if (symmetric) {
        std::set<std::vector<std::int64_t>> closed(offsets.begin(), offsets.end());
        for (auto o : offsets) {
          for (auto& v : o) v = -v;
          closed.insert(o);
        }
        offsets.assign(closed.begin(), closed.end());
      }
      all.insert(offsets.begin(), offsets.end());
      if (std::find(sets.begin(), sets.end(), offsets) == sets.end()) sets.push_back(offsets);
    }
    std::vector<std::vector<std::int64_t>> all_v(all.begin(), all.end());
    if (std::find(sets.begin(), sets.end(), all_v) == sets.end()) sets.push_back(all_v);
    for (auto& offsets : sets) {
      // As many offsets as ranks: the traces are too small to tell a stencil from a group
      // exchange (+-1..+-3 cover a ring of 6); leave it to the group families.
      if (static_cast<std::int64_t>(offsets.size()) >= traced.back().nprocs) continue;
      GeneralEquation eq;
      eq.family = Family::kStencil;
      eq.grid = grid;
      eq.offsets = offsets;
      eq.periodic = periodic;
      // Periodicity of a dimension no offset moves along means nothing: call it open.
      for (int i = 0; i < nd; ++i) {
        bool moves = false;
        for (const auto& o : offsets) moves = moves || o[static_cast<std::size_t>(i)] != 0;
        if (!moves) eq.periodic[static_cast<std::size_t>(i)] = false;
      }
      eq.name = NameStencil(eq);
      eq.valid = GridCounts(grid);
      eq.valid.min_count = std::max<std::int64_t>(eq.valid.min_count, 2);
      out->push_back(eq);
      // The same stencil without the messages a rank would send to itself, where a periodic
      // dimension wraps an offset onto the source (extent 1) or an offset is zero.
      // Only where that happens at some traced count (otherwise both read the traces alike).
      bool hits_self = false;
      for (const Traced& t : traced) {
        const std::vector<std::int64_t> extents = *grid.Extents(t.nprocs);
        for (const auto& o : eq.offsets) {
          bool self = true;
          for (int i = 0; i < nd && self; ++i) {
            const auto u = static_cast<std::size_t>(i);
            self = o[u] == 0 || (eq.periodic[u] && o[u] % extents[u] == 0);
          }
          hits_self = hits_self || self;
        }
      }
      if (hits_self) {
        eq.skip_self = true;
        out->push_back(eq);
      }
    }
  }
}

void TransposeCandidates(const GridRule& grid, std::vector<GeneralEquation>* out) {
  if (grid.ndims != 2) return;
  GeneralEquation eq;
  eq.family = Family::kTranspose;
  eq.grid = grid;
  eq.name = "transpose";
  eq.valid = GridCounts(grid);
  eq.valid.min_count = std::max<std::int64_t>(eq.valid.min_count, 4);
  out->push_back(eq);
}

bool SameEquation(const GeneralEquation& a, const GeneralEquation& b) {
  return a.family == b.family && a.name == b.name && a.root == b.root &&
         a.star_direction == b.star_direction && a.grid == b.grid && a.group_dims == b.group_dims &&
         a.include_self == b.include_self && a.offsets == b.offsets && a.periodic == b.periodic &&
         a.skip_self == b.skip_self && a.bits == b.bits && a.all_bits == b.all_bits &&
         a.bit_field == b.bit_field && a.tree_role == b.tree_role && a.folded == b.folded &&
         a.fold_pairs == b.fold_pairs && a.permutation == b.permutation && a.rotate == b.rotate;
}

std::vector<Traced> Prepare(const std::vector<CommMap>& maps, const std::string& label,
                            int min_counts) {
  const std::string where = label.empty() ? "communication" : label;
  std::vector<Traced> traced;
  for (const CommMap& raw : maps) {
    std::string error;
    if (!raw.IsValid(&error)) throw UserError(where + ": " + error);
    CommMap map = raw.Normalized();
    Traced t{map.nprocs, {}};
    for (const auto& d : map.dests) t.dests.emplace_back(d.begin(), d.end());
    traced.push_back(std::move(t));
  }
  std::sort(traced.begin(), traced.end(),
            [](const Traced& a, const Traced& b) { return a.nprocs < b.nprocs; });
  // A run of one rank without a message says nothing of the pattern: every family gives a
  // lone rank no partner (a code that runs at cube counts is traced at 1, 8 and 27).
  if (traced.size() > 1 && traced.front().nprocs == 1 && traced.front().dests.front().empty()) {
    traced.erase(traced.begin());
  }
  for (std::size_t i = 1; i < traced.size(); ++i) {
    if (traced[i].nprocs == traced[i - 1].nprocs) {
      throw UserError(where + ": two maps at " + std::to_string(traced[i].nprocs) +
                      " processes; give one map per process count");
    }
  }
  if (static_cast<int>(traced.size()) < min_counts) {
    throw UserError(
        where + ": a general equation needs the communication at >= " + std::to_string(min_counts) +
        " different process counts, got " + std::to_string(traced.size()) +
        " (trace the application at more counts, e.g. pas2p trace -n 4,9,16,25)");
  }
  return traced;
}

std::vector<GeneralEquation> Fit(const std::vector<Traced>& traced, bool all,
                                 std::vector<std::string>* misses, bool prefer_trees = false,
                                 bool components = false,
                                 const std::optional<IndexRule>& tree_root = std::nullopt,
                                 bool fold_pairs_first = false, bool dissemination_first = false) {
  std::vector<GeneralEquation> fits;
  if (traced.empty()) return fits;
  const std::vector<std::int64_t> counts = Counts(traced);
  auto try_all = [&](std::vector<GeneralEquation> candidates, const std::string& family,
                     const std::string& why_none = "does not apply") {
    std::string first_miss;
    for (GeneralEquation& eq : candidates) {
      if (!all && !fits.empty()) return;
      std::string miss;
      for (const Traced& t : traced) {
        miss = Mismatch(eq, t);
        if (!miss.empty()) break;
      }
      if (!miss.empty()) {
        if (first_miss.empty()) first_miss = miss;
        continue;
      }
      bool dup = std::any_of(fits.begin(), fits.end(),
                             [&](const GeneralEquation& f) { return SameEquation(f, eq); });
      if (!dup) {
        eq.traced_counts = counts;
        fits.push_back(eq);
      }
    }
    if (misses && !family.empty()) {
      misses->push_back(family + ": " +
                        (candidates.empty()   ? why_none
                         : first_miss.empty() ? std::string("fits")
                                              : first_miss));
    }
  };
  const bool empty = std::all_of(traced.begin(), traced.end(), [](const Traced& t) {
    return std::all_of(t.dests.begin(), t.dests.end(), [](const auto& d) { return d.empty(); });
  });
  if (empty) return fits;  // nothing to describe

  const std::vector<GridRule> grids = CandidateGrids(counts, components);
  std::vector<GeneralEquation> c;
  StarCandidates(traced, &c);
  try_all(c, "master-worker");
  const auto done = [&] { return !all && !fits.empty(); };
  c.clear();
  GroupAllCandidates(GridRule{GridShape::kLinear, 1, {}, 0, 1}, &c);
  try_all(c, "all-to-all");
  if (done()) return fits;
  c.clear();
  XorCandidates(traced, &c);
  try_all(c, "bit exchange (butterfly, hypercube)",
          "some destination differs from its source in more than one bit");
  if (done()) return fits;
  const char* const kTreeFamily = "one level of a tree (binomial, doubling)";
  const char* const kTreeNone = "needs one bit b, the same at the largest count for every rank";
  if (prefer_trees) {
    c.clear();
    TreeCandidates(traced, &c, tree_root);
    try_all(c, kTreeFamily, kTreeNone);
    if (done()) return fits;
  }
  auto try_folded = [&] {
    c.clear();
    FoldedCandidates(traced, &c);
    try_all(c, "recursive doubling folded at counts that are not powers of two",
            "some destination differs from its source in more than one bit");
  };
  auto try_pair_folded = [&] {
    c.clear();
    PairFoldedCandidates(traced, &c);
    try_all(c, "recursive doubling folded in pairs (MPI libraries' fold)",
            "some pair is neither the fold of ranks 2i and 2i + 1 below 2(P - P') nor one bit "
            "apart once the others are renumbered");
  };
  if (fold_pairs_first) {
    try_pair_folded();
    if (done()) return fits;
  }
  try_folded();
  if (done()) return fits;
  if (!fold_pairs_first) {
    try_pair_folded();
    if (done()) return fits;
  }
  const char* const kDissemination = "dissemination (src +- 2^b mod P, 2^b < P)";
  const char* const kDisseminationNone = "some pair is not 2^b apart (mod P) in one direction";
  if (dissemination_first) {
    c.clear();
    DisseminationCandidates(traced, &c);
    try_all(c, kDissemination, kDisseminationNone);
    if (done()) return fits;
  }
  c.clear();
  PermuteCandidates(traced, &c);
  try_all(c, "bit permutation (transpose, shuffle, reversal)",
          "needs power-of-two counts and one destination per rank, rank 1 to a power of two");
  // Whole rows/columns/planes of >= 4 ranks at the largest count: a group, not a stencil
  // whose offsets happen to cover it (+-1 and +-2 cover a row of 5). Smaller groups are tried
  // after the stencils.
  auto group_size = [&](const GeneralEquation& eq) {
    std::int64_t size = 1;
    auto e = eq.grid.Extents(counts.back());
    for (std::size_t i = 0; e && i < e->size(); ++i) {
      if (eq.group_dims[i]) size *= (*e)[i];
    }
    return size;
  };
  std::vector<GeneralEquation> small_groups;
  for (const GridRule& grid : grids) {
    if (grid.shape == GridShape::kLinear) continue;
    c.clear();
    GroupAllCandidates(grid, &c);
    std::vector<GeneralEquation> large;
    for (GeneralEquation& eq : c) (group_size(eq) >= 4 ? large : small_groups).push_back(eq);
    try_all(large, "");
  }
  // Dissemination steps right after the stencils along one dimension that need no offset to
  // wrap onto the rank itself (a ring shift by a fixed offset is a dissemination step too),
  // before those that do and before grids of more dimensions: the sends of a dissemination
  // at 4-12 ranks (rank - 1, -2, -4, -8) are also a ring with offsets {-4, -2, -1, +4} whose
  // -4 and +4 land on the rank at 4, and a grid of more can fit a step of a bit that only
  // some counts have by chance.
  bool disseminated = dissemination_first;
  auto try_dissemination = [&] {
    c.clear();
    DisseminationCandidates(traced, &c);
    try_all(c, kDissemination, kDisseminationNone);
    disseminated = true;
  };
  for (const GridRule& grid : grids) {
    if (done()) return fits;
    if (!disseminated && grid.ndims >= 2) {
      try_dissemination();
      if (done()) return fits;
    }
    c.clear();
    StencilCandidates(grid, traced, &c);
    if (!disseminated && grid.ndims == 1) {
      std::vector<GeneralEquation> plain, onto_self;
      for (GeneralEquation& eq : c) (eq.skip_self ? onto_self : plain).push_back(std::move(eq));
      try_all(plain, "stencil on a " + grid.Describe());
      if (done()) return fits;
      try_dissemination();
      if (done()) return fits;
      try_all(onto_self, "");
      continue;
    }
    try_all(c, "stencil on a " + grid.Describe());
  }
  if (!disseminated) {
    if (done()) return fits;
    try_dissemination();
  }
  for (const GridRule& grid : grids) {
    if (done()) return fits;
    c.clear();
    TransposeCandidates(grid, &c);
    try_all(c, grid.ndims == 2 ? "transpose of a " + grid.Describe() : "");
  }
  try_all(small_groups, "all-to-all in rows, columns or planes of a grid");
  if (done() || prefer_trees) return fits;
  c.clear();
  TreeCandidates(traced, &c, tree_root);
  try_all(c, kTreeFamily, kTreeNone);
  return fits;
}

// ---------------------------------------------------------------------------------------
// Unions: a communication whose destinations are the union of a few simple terms.

// Pairs the term generates at one count, or -1 if one of them is not in the traces.
std::int64_t ContainedPairs(const GeneralEquation& term, const Traced& t) {
  if (!term.IsValidCount(t.nprocs)) return -1;
  GeneralEquation::AtCount at = term.At(t.nprocs);
  std::int64_t pairs = 0;
  for (std::int64_t src = 0; src < t.nprocs; ++src) {
    const auto& traced = t.dests[static_cast<std::size_t>(src)];
    for (std::int64_t d : at.Dests(src)) {
      if (!std::binary_search(traced.begin(), traced.end(), d)) return -1;
      ++pairs;
    }
  }
  return pairs;
}

// Simple terms: stars, single bits, single offsets (or +-offset pairs) on every grid
// (periodic everywhere or nowhere), whole groups.
std::vector<GeneralEquation> AtomicTerms(const std::vector<Traced>& traced) {
  std::vector<GeneralEquation> out;
  StarCandidates(traced, &out);
  const Traced& big = traced.back();
  const int n = CeilLog2(big.nprocs);
  for (int b = 0; b < n; ++b) {
    for (IndexRule rule : {IndexRule{false, b}, IndexRule{true, n - 1 - b}}) {
      GeneralEquation eq;
      eq.family = Family::kXorExchange;
      eq.name = "pairwise exchange";
      eq.bits = {rule};
      eq.valid.rule = AllPowersOfTwo(traced) ? CountRule::kPowersOfTwo : CountRule::kAny;
      eq.valid.min_count = std::int64_t{1} << (rule.index + 1);
      out.push_back(eq);
    }
  }
  const bool symmetric = IsSymmetric(traced);
  for (const GridRule& grid : CandidateGrids(Counts(traced))) {
    const unsigned full = (1u << grid.ndims) - 1;
    for (unsigned m : {full, 0u}) {
      std::vector<bool> periodic(static_cast<std::size_t>(grid.ndims));
      for (int i = 0; i < grid.ndims; ++i) periodic[static_cast<std::size_t>(i)] = (m >> i) & 1u;
      auto found = OffsetsAt(big, *grid.Extents(big.nprocs), periodic);
      if (!found) continue;
      for (auto o : *found) {
        GeneralEquation eq;
        eq.family = Family::kStencil;
        eq.grid = grid;
        eq.periodic = periodic;
        eq.offsets = {o};
        if (symmetric) {
          for (auto& v : o) v = -v;
          if (o != eq.offsets[0]) eq.offsets.push_back(o);
          std::sort(eq.offsets.begin(), eq.offsets.end());
        }
        eq.name = NameStencil(eq);
        eq.valid = GridCounts(grid);
        eq.valid.min_count = std::max<std::int64_t>(eq.valid.min_count, 2);
        out.push_back(eq);
      }
    }
    GroupAllCandidates(grid, &out);
  }
  return out;
}

// Greedy cover of the traced pairs by contained terms (the one adding the most pairs first);
// stencil terms on the same grid are merged. Nothing if more than kMaxTerms remain or some
// pair is left uncovered.
std::optional<GeneralEquation> FitUnion(const std::vector<Traced>& traced) {
  constexpr std::size_t kMaxTerms = 3;
  std::vector<GeneralEquation> candidates;
  std::vector<std::vector<Dests>> generated;  // per candidate, per count
  for (GeneralEquation& term : AtomicTerms(traced)) {
    bool contained = true;
    for (const Traced& t : traced) contained = contained && ContainedPairs(term, t) > 0;
    if (!contained) continue;
    std::vector<Dests> per_count;
    for (const Traced& t : traced) {
      GeneralEquation::AtCount at = term.At(t.nprocs);
      Dests d(static_cast<std::size_t>(t.nprocs));
      for (std::int64_t src = 0; src < t.nprocs; ++src)
        d[static_cast<std::size_t>(src)] = at.Dests(src);
      per_count.push_back(std::move(d));
    }
    candidates.push_back(std::move(term));
    generated.push_back(std::move(per_count));
  }
  // covered[count][src] = destinations already explained.
  std::vector<std::vector<std::set<std::int64_t>>> covered;
  std::int64_t remaining = 0;
  for (const Traced& t : traced) {
    covered.emplace_back(static_cast<std::size_t>(t.nprocs));
    for (const auto& d : t.dests) remaining += static_cast<std::int64_t>(d.size());
  }
  std::vector<GeneralEquation> chosen;
  while (remaining > 0 && chosen.size() < 4 * kMaxTerms) {
    std::int64_t best_gain = 0;
    std::size_t best = 0;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      std::int64_t gain = 0;
      for (std::size_t k = 0; k < traced.size(); ++k) {
        for (std::size_t src = 0; src < generated[c][k].size(); ++src) {
          for (std::int64_t d : generated[c][k][src]) gain += covered[k][src].count(d) ? 0 : 1;
        }
      }
      if (gain > best_gain) {
        best_gain = gain;
        best = c;
      }
    }
    if (best_gain == 0) return std::nullopt;
    for (std::size_t k = 0; k < traced.size(); ++k) {
      for (std::size_t src = 0; src < generated[best][k].size(); ++src) {
        for (std::int64_t d : generated[best][k][src]) covered[k][src].insert(d);
      }
    }
    remaining -= best_gain;
    chosen.push_back(candidates[best]);
  }
  if (remaining > 0) return std::nullopt;
  // Merge stencil terms that share grid and periodicity.
  std::vector<GeneralEquation> terms;
  for (const GeneralEquation& t : chosen) {
    auto same = std::find_if(terms.begin(), terms.end(), [&t](const GeneralEquation& u) {
      return t.family == Family::kStencil && u.family == Family::kStencil && u.grid == t.grid &&
             u.periodic == t.periodic && u.skip_self == t.skip_self;
    });
    if (same == terms.end()) {
      terms.push_back(t);
      continue;
    }
    for (const auto& o : t.offsets) {
      if (std::find(same->offsets.begin(), same->offsets.end(), o) == same->offsets.end()) {
        same->offsets.push_back(o);
      }
    }
    std::sort(same->offsets.begin(), same->offsets.end());
    same->name = NameStencil(*same);
  }
  if (terms.size() < 2 || terms.size() > kMaxTerms) return std::nullopt;
  GeneralEquation eq;
  eq.family = Family::kUnion;
  eq.traced_counts = Counts(traced);
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 1;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    eq.name += (i ? " + " : "") + terms[i].name;
    terms[i].traced_counts = eq.traced_counts;
  }
  eq.terms = std::move(terms);
  for (const Traced& t : traced) {
    if (!Mismatch(eq, t).empty()) return std::nullopt;
  }
  return eq;
}

GeneralEquation FitTraced(const std::vector<Traced>& traced, const std::vector<CommMap>& maps,
                          const FitOptions& options) {
  const std::string where = options.label.empty() ? "communication" : options.label;
  std::vector<std::string> misses;
  std::vector<GeneralEquation> fits =
      Fit(traced, true, &misses, options.prefer_trees, false, options.tree_root,
          options.fold_pairs_first, options.dissemination_first);
  if (fits.empty()) {
    // Components with a grid each, the grids of last resort (see CandidateGrids).
    std::vector<std::string> more;
    fits = Fit(traced, true, &more, options.prefer_trees, true, options.tree_root,
               options.fold_pairs_first, options.dissemination_first);
    if (fits.empty()) misses = std::move(more);
  }
  if (fits.empty()) {
    if (auto united = FitUnion(traced)) return *united;
    std::ostringstream msg;
    msg << where << ": no communication-pattern family reproduces the traced maps at "
        << JoinCounts(Counts(traced)) << " processes, so it cannot be extrapolated. Traced:";
    // A call that moves nothing at some counts and something at others is rarely one call of
    // the program: more often the phases matched as one across the counts are different
    // parts of the run (a phase split in two at one count shifts the pairing), or only ranks
    // that some grids have (an interior rank of a 3-D grid, from 3 per dimension) make it.
    std::vector<std::int64_t> silent, talking;
    for (const CommMap& m : maps) {
      LocalEquation local = AnalyzeLocal(m);
      (local.pattern_class == PatternClass::kNone ? silent : talking).push_back(m.nprocs);
      std::string f = local.Formula();
      if (f.size() > 160) f = f.substr(0, 157) + "...";
      msg << "\n  " << m.nprocs << " processes: " << f;
    }
    msg << "\nFamilies tried (first disagreement):";
    std::size_t shown = 0;
    for (const std::string& miss : misses) {
      if (++shown > 12) {
        msg << "\n  ... and " << misses.size() - 12 << " more grids";
        break;
      }
      msg << "\n  " << miss;
    }
    if (!silent.empty() && !talking.empty()) {
      msg << "\nAt " << JoinCounts(silent) << " processes this call moves nothing, at "
          << JoinCounts(talking)
          << " it does: the phases matched as one across the counts may be different parts "
             "of the run (`pas2p analyze` of all the traces lists each count's phases and how "
             "they were matched), or the call is made only by ranks that the grids of some "
             "counts do not have.";
    }
    msg << "\nIf the application's ranks talk in a way these families do not cover, its "
           "communications cannot be predicted at other counts.";
    throw PatternFitError(msg.str());
  }
  GeneralEquation best = fits.front();
  for (std::size_t i = 1; i < fits.size() && best.alternatives.size() < 8; ++i) {
    best.alternatives.push_back(fits[i].Describe());
  }
  // Rivals: the same family and as many offsets, so as simple an explanation of the traces.
  for (std::size_t i = 1; i < fits.size() && best.rivals.size() < 3; ++i) {
    const GeneralEquation& f = fits[i];
    if (f.family != best.family || f.family == Family::kUnion ||
        f.offsets.size() != best.offsets.size()) {
      continue;
    }
    GeneralEquation rival = f;
    rival.alternatives.clear();
    rival.rivals.clear();
    best.rivals.push_back(std::move(rival));
  }
  return best;
}

}  // namespace

GeneralEquation FitGeneralEquation(const std::vector<CommMap>& maps, const FitOptions& options) {
  std::vector<Traced> traced = Prepare(maps, options.label, options.min_counts);
  return FitTraced(traced, maps, options);
}

GeneralEquation FitGeneralEquation(const std::vector<LocalEquation>& locals,
                                   const FitOptions& options) {
  std::vector<CommMap> maps;
  for (const LocalEquation& l : locals) maps.push_back(l.map);
  return FitGeneralEquation(maps, options);
}

std::optional<GeneralEquation> internal::FirstFittingEquation(const std::vector<CommMap>& maps) {
  std::vector<Traced> traced = Prepare(maps, "", 1);
  std::vector<GeneralEquation> fits = Fit(traced, false, nullptr);
  if (fits.empty()) return std::nullopt;
  return fits.front();
}

std::vector<GeneralEquation> AllFittingEquations(const std::vector<CommMap>& maps,
                                                 bool components) {
  std::vector<Traced> traced = Prepare(maps, "", 1);
  return Fit(traced, true, nullptr, false, components);
}

BlockSplit FitBlockSplit(const std::vector<CommunicatorLayout>& layouts,
                         const std::string& prefix) {
  auto fail = [&prefix](const std::string& why) { return PatternFitError(prefix + why); };
  if (layouts.empty()) throw fail("no communicator at any count");
  std::vector<std::vector<std::int64_t>> sizes(layouts.size());
  for (std::size_t k = 0; k < layouts.size(); ++k) {
    const CommunicatorLayout& layout = layouts[k];
    std::int64_t next = 0;
    for (const std::vector<int>& g : layout.groups) {
      for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i] != next + static_cast<std::int64_t>(i)) {
          throw fail("at " + std::to_string(layout.nprocs) +
                     " processes a group is not a block of consecutive ranks following the one "
                     "before it");
        }
      }
      sizes[k].push_back(static_cast<std::int64_t>(g.size()));
      next += static_cast<std::int64_t>(g.size());
    }
    if (next != layout.nprocs) {
      throw fail("at " + std::to_string(layout.nprocs) + " processes the groups hold " +
                 std::to_string(next) + " ranks, not all");
    }
    if (sizes[k].size() < 2 || sizes[k].size() != sizes[0].size()) {
      throw fail("not as many groups (at least 2) at every count");
    }
  }
  BlockSplit split;
  for (std::size_t c = 0; c + 1 < sizes[0].size(); ++c) {
    ComponentSize rule;
    bool fixed = true;
    for (std::size_t k = 0; k < layouts.size(); ++k) fixed = fixed && sizes[k][c] == sizes[0][c];
    if (fixed && layouts.size() > 1) {
      rule.fixed = sizes[0][c];
    } else {
      const std::int64_t n0 = layouts[0].nprocs;
      const std::int64_t g = std::gcd(sizes[0][c], n0);
      rule.num = sizes[0][c] / g;
      rule.den = n0 / g;
      for (std::size_t k = 0; k < layouts.size(); ++k) {
        if (sizes[k][c] * rule.den != std::int64_t{layouts[k].nprocs} * rule.num) {
          throw fail("component " + std::to_string(c + 1) + "'s size is neither fixed nor " +
                     rule.Describe() + " at every count (" + std::to_string(sizes[k][c]) + " of " +
                     std::to_string(layouts[k].nprocs) + ")");
        }
      }
      split.multiple = std::lcm(split.multiple, rule.den);
    }
    split.sizes.push_back(rule);
  }
  return split;
}

GeneralEquation FitComponents(const std::vector<CommMap>& maps,
                              const std::vector<CommunicatorLayout>& layouts,
                              const FitOptions& options) {
  const std::string what = options.label.empty() ? "the communication" : options.label;
  auto fail = [&what](const std::string& why) {
    return PatternFitError(what +
                           ": not components of the world, each with its own pattern: " + why);
  };
  if (maps.empty() || layouts.size() != maps.size()) throw fail("no communicator at some count");
  for (std::size_t k = 0; k < maps.size(); ++k) {
    if (layouts[k].nprocs != maps[k].nprocs) throw fail("the communicators' counts differ");
  }
  const BlockSplit split =
      FitBlockSplit(layouts, what + ": not components of the world, each with its own pattern: ");
  GeneralEquation eq;
  eq.family = Family::kComponents;
  eq.name = "components";
  eq.component_sizes = split.sizes;
  const std::int64_t multiple = split.multiple;
  const std::size_t parts = split.sizes.size() + 1;
  // Per count: each component's first rank and size.
  std::vector<std::vector<std::int64_t>> firsts(maps.size()), sizes(maps.size());
  for (std::size_t k = 0; k < maps.size(); ++k) {
    std::int64_t next = 0;
    const std::optional<std::vector<std::int64_t>> here = BlockSizesAt(split.sizes, maps[k].nprocs);
    if (!here) throw fail("the blocks' sizes do not hold at " + std::to_string(maps[k].nprocs));
    for (const std::int64_t size : *here) {
      firsts[k].push_back(next);
      sizes[k].push_back(size);
      next += size;
    }
  }
  // Each component's partners in its own ranks, one map per size it had.
  std::vector<std::map<std::int64_t, CommMap>> locals(parts);
  for (std::size_t c = 0; c < parts; ++c) {
    std::map<std::int64_t, CommMap>& local = locals[c];
    for (std::size_t k = 0; k < maps.size(); ++k) {
      const std::int64_t first = firsts[k][c], size = sizes[k][c];
      CommMap m;
      m.nprocs = static_cast<int>(size);
      m.dests.resize(static_cast<std::size_t>(size));
      for (std::int64_t r = 0; r < size; ++r) {
        for (const int d : maps[k].dests[static_cast<std::size_t>(first + r)]) {
          if (d < first || d >= first + size) {
            throw fail("at " + std::to_string(maps[k].nprocs) + " processes rank " +
                       std::to_string(first + r) + " sends to rank " + std::to_string(d) +
                       ", outside its group");
          }
          m.dests[static_cast<std::size_t>(r)].push_back(static_cast<int>(d - first));
        }
      }
      auto [at, added] = local.emplace(size, m);
      if (!added && !(at->second == m)) {
        throw fail("component " + std::to_string(c + 1) + " has " + std::to_string(size) +
                   " ranks at two counts and other partners at each");
      }
    }
  }
  // One pattern for every component when one reproduces them all (the same code in each
  // part): the components' sizes are evidence for each other. A 2-D halo's +1 and -1 along
  // an extent of 1 or 2, where a small component always had one, are told apart by a
  // larger one's; fitted alone, the small component kept a guess that deadlocked at 1024.
  std::map<std::int64_t, CommMap> all;
  bool agree = true;
  for (const auto& local : locals) {
    for (const auto& [size, m] : local) {
      auto [at, added] = all.emplace(size, m);
      agree = agree && (added || at->second == m);
    }
  }
  FitOptions fo = options;
  fo.min_counts = 1;  // a component of fixed size has one map: the one it keeps
  if (agree) {
    std::vector<CommMap> every;
    for (const auto& [size, m] : all) every.push_back(m);
    fo.label = what + ", every component";
    try {
      const GeneralEquation shared = FitGeneralEquation(every, fo);
      eq.terms.assign(parts, shared);
    } catch (const PatternFitError&) {
      eq.terms.clear();  // the components' own patterns, below
    }
  }
  for (std::size_t c = 0; eq.terms.size() < parts; ++c) {
    std::vector<CommMap> own;
    for (const auto& [size, m] : locals[c]) own.push_back(m);
    fo.label = what + ", component " + std::to_string(c + 1);
    eq.terms.push_back(FitGeneralEquation(own, fo));
  }
  std::int64_t least = maps[0].nprocs;
  for (const CommMap& m : maps) {
    least = std::min<std::int64_t>(least, m.nprocs);
    eq.traced_counts.push_back(m.nprocs);
  }
  std::sort(eq.traced_counts.begin(), eq.traced_counts.end());
  eq.valid.rule = multiple > 1 ? CountRule::kMultiplesOf : CountRule::kAny;
  eq.valid.factor = multiple;
  eq.valid.min_count = least;
  return eq;
}

bool Disagree(const GeneralEquation& a, const GeneralEquation& b, std::int64_t nprocs) {
  if (nprocs < 1 || !a.IsValidCount(nprocs) || !b.IsValidCount(nprocs)) return false;
  try {
    const GeneralEquation::AtCount x = a.At(nprocs), y = b.At(nprocs);
    const std::int64_t step = nprocs <= kDisagreeRanks ? 1 : nprocs / kDisagreeRanks;
    for (std::int64_t src = 0; src < nprocs; src += step) {
      if (x.Dests(src) != y.Dests(src)) return true;
    }
    return x.Dests(nprocs - 1) != y.Dests(nprocs - 1);
  } catch (const UserError&) {
    return false;  // not a count one of them can be evaluated at
  }
}

std::int64_t FirstDisagreement(const GeneralEquation& a, const GeneralEquation& b,
                               std::int64_t after, std::int64_t upto) {
  return internal::FirstCountWhere(after, upto, [&](std::int64_t p) { return Disagree(a, b, p); });
}

}  // namespace pas2p::patterns
