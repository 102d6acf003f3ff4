// General equations: one communication's source -> destination rule as a function of the
// process count P, found from its local equations at several traced counts by functional
// similarity (paper 001, Fig. 2b and Fig. 7).
//
// In: the maps of the same communication at several counts (e.g. 9, 16, 25, 36).
// Out: a GeneralEquation from one of the families below whose parameters are functions of P
// (grid side sqrt(P), cbrt(P), MPI_Dims_create factors, log2 P bits, a fixed displacement,
// the root rank), that reproduces every traced map exactly, plus the counts the application
// can run at. It is evaluated lazily at any count N: At(N).Dests(src) costs O(destinations),
// so N may be 2^20 or more. A communication that fits no family is an error that says so; the
// fitter never guesses.
//
// Families, tried in this order (the first that reproduces every traced count wins; the
// others that also do are listed as alternatives):
//   kStar          master/worker: every rank to the root, the root to every rank, or both
//   kGroupAll      every rank to all others of its group: all-to-all (whole world), or rows /
//                  columns / planes of a grid
//   kXorExchange   EC1 exchange: src ^ 2^b for bits b fixed, counted from the top (log2 P - 1 -
//                  j) or all log2 P bits (butterfly, recursive doubling, hypercube); or the
//                  same within a row or a column of a 2^ceil(n/2) x 2^floor(n/2) process
//                  grid (n = log2 P; a butterfly reduction along rows, as NAS CG does); or
//                  one bit made by one side of a tree level only (TreeRole: a binomial
//                  reduction or broadcast written by hand)
//   kBitPermute    EC1 permutation: the rank's log2 P bits rotated by a fixed amount or by half
//                  (transpose of a 2^h x 2^h matrix), or reversed (FFT bit reversal), or the
//                  top 2 floor(n/2) bits swapped by halves with the lowest n mod 2 kept (the
//                  transpose of a 2^h x 2^h matrix of blocks of 1 or 2 ranks)
//   kStencil       EC2 displacements on a grid: fixed offset vectors, each dimension periodic or
//                  not (ring, line/shift, torus, mesh, wavefront, 2-D/3-D halos, 9/27-point)
//   kTranspose     grid transpose: (x, y) -> (y, x) on an R x C grid
//   kDissemination (src + s 2^b) mod P, s = +1 or -1, for bits b with 2^b < P counted in
//                  ceil(log2 P) bits: a dissemination barrier, Bruck's allgather, one step
//                  per bit at any count (tried after the stencils along one dimension, which
//                  fit a fixed step, and before those of grids of more)
//   kUnion         only when no single family fits: the destinations are the union of a few
//                  terms of the families above, each contained in the traces at every count
//                  (e.g. a halo exchange plus workers reporting to rank 0 in one phase)
//   kComponents    a world split into blocks of consecutive ranks of unequal sizes (a
//                  coupled model's atmosphere and ocean, a few I/O servers), each with a
//                  pattern of the families above in its own ranks: fitted only by
//                  FitComponents, from the communicators the calls are made on
// Grids are tried from the fewest dimensions, and among them from the most specific count rule
// (sqrt/cbrt grids before MPI_Dims_create grids before grids with one fixed extent), because
// the traced counts are the evidence of what the application accepts.
// Grids of components (a world split into parts, each with a grid of its own ranks, one
// dimension for the parts: the slowest for blocks of consecutive ranks, the fastest for parts
// interleaved by rank % k) are tried only when no other grid fits: at many counts they
// coincide with a simpler grid (AllFittingEquations can list them too).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pas2p/core/error.h"
#include "pas2p/patterns/comm_map.h"
#include "pas2p/patterns/grid.h"
#include "pas2p/patterns/local_equation.h"
#include "pas2p/patterns/valid_counts.h"

namespace pas2p::patterns {

// No family reproduces the traced maps. The message says which communication, which
// families were tried and where each first disagreed with the traces.
class PatternFitError : public UserError {
 public:
  explicit PatternFitError(const std::string& message) : UserError(message) {}
};

enum class Family {
  kStar,
  kGroupAll,
  kXorExchange,
  kBitPermute,
  kStencil,
  kTranspose,
  kUnion,
  kDissemination,
  kComponents
};

// A rank (root) or bit position as a function of P: `index` from the start, or from the end
// (size - 1 - index) when from_end.
struct IndexRule {
  bool from_end = false;
  std::int64_t index = 0;
  std::int64_t At(std::int64_t size) const { return from_end ? size - 1 - index : index; }
  std::string Describe(const std::string& size_name) const;  // "0", "P-1", "log2(P)-2"
  bool operator==(const IndexRule&) const = default;
};

// kComponents: the ranks of one component as a function of P, `fixed` (> 0) or P x num / den
// (num / den in lowest terms).
struct ComponentSize {
  std::int64_t fixed = 0;
  std::int64_t num = 0, den = 1;
  // Its ranks at `nprocs`; nullopt where P x num / den is not whole.
  std::optional<std::int64_t> At(std::int64_t nprocs) const;
  std::string Describe() const;  // "4", "P/4", "3P/4"
  bool operator==(const ComponentSize&) const = default;
};

// Each of consecutive blocks' ranks at `nprocs`: `sizes` for all but the last, which holds the
// rest; nullopt where one is not whole or not at least 1.
std::optional<std::vector<std::int64_t>> BlockSizesAt(const std::vector<ComponentSize>& sizes,
                                                      std::int64_t nprocs);

// Blocks of consecutive ranks that tile the world in rank order at every traced count, as
// many at each, each block's size fixed or the same fraction of P (the last the rest).
struct BlockSplit {
  std::vector<ComponentSize> sizes;  // all blocks but the last
  std::int64_t multiple = 1;         // P must be a multiple of this for the sizes to be whole
};
// From the groups at each count. Throws PatternFitError(`prefix` + why) when they are not such
// blocks (a group of ranks that are not consecutive, not as many groups at every count, a
// size that is neither fixed nor one fraction of P).
BlockSplit FitBlockSplit(const std::vector<CommunicatorLayout>& layouts, const std::string& prefix);

enum class StarDirection { kToRoot, kFromRoot, kBoth };
enum class BitPermutation { kRotate, kRotateHalf, kReverse, kTransposeHigh };

// Which bits of a rank an XOR exchange counts its bit positions in (n = log2 P):
// kRank all n bits; kLowHalf the lowest ceil(n/2) bits (the column index of a grid with rows
// of 2^ceil(n/2) ranks, MPI_Dims_create(P, 2) with the larger extent fastest); kHighHalf the
// floor(n/2) bits above them (the row index). A rule that names no bit of the field at a
// count gives no partner there.
enum class BitField { kRank, kLowHalf, kHighHalf };

// Which sources of a one-bit XOR exchange (src ^ 2^b, bits counted in the whole rank) take
// part: all of them, or one side of one level of a tree written by hand.
//   kLowParent   bits below b zero and bit b clear: a parent at level b of the binomial tree
//                on the low bits (rank 0 receives from 1, 2, 4, ...; a rank whose lowest set
//                bit is b receives from its children below 2^b, then sends to rank - 2^b:
//                a reduction to rank 0, or a broadcast from it run backwards)
//   kLowChild    the lowest set bit is b: the child at that level (partner rank - 2^b)
//   kHighParent  src < 2^b: a parent at step b of the tree built from the top (the ranks
//                below 2^b send to rank + 2^b: a broadcast by doubling)
//   kHighChild   the highest set bit is b: the child at that step (partner rank - 2^b)
// Partners >= P are dropped as for every XOR exchange.
enum class TreeRole { kNone, kLowParent, kLowChild, kHighParent, kHighChild };

struct GeneralEquation {
  Family family = Family::kStencil;
  std::string name;  // "torus", "mesh", "ring", "butterfly", "master-worker", ...

  // kStar
  IndexRule root;
  StarDirection star_direction = StarDirection::kToRoot;

  // kGroupAll, kStencil, kTranspose
  GridRule grid;
  std::vector<bool> group_dims;  // kGroupAll: dims that vary inside a group (fastest first)
  bool include_self = false;     // kGroupAll: a rank also sends to itself

  // kStencil: offsets in grid coordinates (fastest first), periodic per dimension.
  std::vector<std::vector<std::int64_t>> offsets;
  std::vector<bool> periodic;
  // kStencil: an offset that lands on the source itself (a periodic dimension of extent 1,
  // as at 4 = 2 x 2 x 1 ranks) is no message: the code skips the exchange with itself (a
  // neighbour from MPI_Cart_shift that is the rank). Tried after the same stencil with such
  // messages, so a code that does send to itself keeps them.
  bool skip_self = false;

  // kXorExchange: XOR with 2^b for each bit b of `bits`, or of every bit if all_bits.
  // Partners >= P are dropped (recursive doubling at counts that are not powers of two).
  std::vector<IndexRule> bits;
  bool all_bits = false;
  BitField bit_field = BitField::kRank;  // where `bits` (and all_bits) are counted
  // One bit of the whole rank only: the sources that take part (a level of a tree).
  TreeRole tree_role = TreeRole::kNone;
  // kXorExchange on the whole rank, folded as the textbook runs recursive doubling at a count
  // that is not a power of two: bits are counted in n = floor(log2 P) + 1 bits, and the
  // ranks from P' = 2^floor(log2 P) up fold onto the first P'. An exchange (no tree role)
  // runs among the first P' ranks only, on the bits below log2 P'. A tree level at the top
  // bit, log2 P', is the fold itself: rank v >= P' to v - P' (kHighChild), and the first
  // P - P' ranks to v + P' (kHighParent); at a power of two it has no pairs.
  bool folded = false;
  // With folded: the fold in pairs instead, as MPICH and Open MPI run their recursive
  // doubling at a count that is not a power of two. With P' = 2^floor(log2 P) and
  // R = P - P', of the first 2R ranks the even ones fold onto rank + 1 and sit out; the
  // exchange runs on the other P' ranks renumbered (v = rank / 2 below 2R, rank - R from
  // there), partner v XOR 2^b for bits b < log2 P' (counted in those bits), taken back to a
  // rank as 2w + 1 below R and w + R from there. A tree level at bit 0 is the fold itself:
  // the even ranks below 2R to rank + 1 (kLowParent) and the odd ones to rank - 1
  // (kLowChild); at a power of two it has no pairs.
  bool fold_pairs = false;

  // kDissemination: the step's sign, +1 (src + 2^b) or -1 (src - 2^b), mod P, for each bit b
  // of `bits` (or every bit, all_bits) counted in ceil(log2 P) bits, where 2^b < P.
  std::int64_t shift_sign = 0;

  // kBitPermute: destination bit of source bit i is (i + rotate) mod n (kRotate), (i + n/2)
  // mod n (kRotateHalf) or n - 1 - i (kReverse), n = log2 P; kTransposeHigh: with k = n mod 2
  // and h = n / 2, bits below k stay and bit i >= k goes to k + (i - k + h) mod 2h.
  BitPermutation permutation = BitPermutation::kRotate;
  std::int64_t rotate = 0;

  ValidCounts valid;                        // counts this communication can run at
  std::vector<std::int64_t> traced_counts;  // the counts it was fitted on
  std::vector<std::string> alternatives;    // other families that fit the traces equally
  // Equations of the same family (stencils with as many offsets) that reproduce the traced
  // maps as well, at most 3: the traces cannot tell them from this one. At a count where one
  // gives other partners (Disagree), a prediction is a guess between them. Their own
  // `rivals` and `alternatives` are empty.
  std::vector<GeneralEquation> rivals;
  std::vector<GeneralEquation> terms;  // kUnion: destinations are the union of these
  // kComponents: `terms` are the components' equations in their own ranks, in rank order;
  // the sizes of every component but the last, which holds the rest of the ranks.
  std::vector<ComponentSize> component_sizes;
  // kComponents: every component's ranks at `nprocs` (nullopt where one is not whole or
  // not at least 1).
  std::optional<std::vector<std::int64_t>> ComponentSizesAt(std::int64_t nprocs) const;

  // One line in words, e.g. "torus: +1 along x, periodic, on a sqrt(P) x sqrt(P) grid
  // (x fastest); valid counts: perfect squares >= 4".
  std::string Describe() const;
  // The EC2 local equation with its numbers as functions of P, as in paper 001 Fig. 7:
  // "[+1 {+(sqrt(P)-1),+sqrt(P)}], [-(sqrt(P)-1) {+1,+sqrt(P)}]" for the BT torus. Each number
  // is a + b * X with X one of P or the grid's extents (sqrt(P), cbrt(P), d0.. for
  // MPI_Dims_create's factors, P/c). Empty when the displacement runs change shape with P
  // (a non-periodic mesh's boundary rows) or the family is not a stencil or transpose.
  std::string Formula() const;
  // The local equation (EC1/EC2) it predicts at `nprocs` (materializes the map: small
  // counts). Throws UserError if nprocs is not valid.
  LocalEquation LocalAt(std::int64_t nprocs, int phase = 0, int comm = 0) const;

  // True if every rule of ValidRules() accepts nprocs.
  bool IsValidCount(std::int64_t nprocs) const;
  // The count rules this equation imposes: `valid`, and for kUnion every term's rule (add
  // them all to the application's ValidCountSet).
  std::vector<ValidCounts> ValidRules() const;
  // Destinations of `src` at `nprocs` (sorted, unique). Recomputes the grid each call: use
  // At(nprocs) to evaluate many sources.
  std::vector<std::int64_t> Dests(std::int64_t src, std::int64_t nprocs) const;

  // The receive side: the equation whose Dests(r) are the ranks that send to r here (negated
  // offsets, swapped star direction, inverse permutation, ...), so a rank's sources are found
  // in O(sources) at any count.
  GeneralEquation Inverse() const;

  class AtCount;
  // The equation at one count, with the grid computed once. Throws UserError naming the
  // valid counts if `nprocs` is not one.
  AtCount At(std::int64_t nprocs) const;
};

// A GeneralEquation evaluated at one count: Dests(src) in O(number of destinations).
class GeneralEquation::AtCount {
 public:
  std::int64_t nprocs() const { return nprocs_; }
  const std::vector<std::int64_t>& extents() const { return extents_; }  // grid families
  std::vector<std::int64_t> Dests(std::int64_t src) const;
  // Calls fn(dest) for each destination, ascending, without building a vector.
  void ForEachDest(std::int64_t src, const std::function<void(std::int64_t)>& fn) const;
  std::int64_t NumDests(std::int64_t src) const;
  // The whole map (for small counts and tests).
  CommMap Map() const;

 private:
  friend class GeneralEquation;
  AtCount(const GeneralEquation* equation, std::int64_t nprocs);
  const GeneralEquation* equation_;
  std::int64_t nprocs_;
  std::vector<std::int64_t> extents_;
  std::vector<std::int64_t> strides_;
  int log2_ = 0;
  std::vector<AtCount> terms_;         // kUnion; kComponents: each at its component's size
  std::vector<std::int64_t> offsets_;  // kComponents: each component's first rank, then P
};

struct FitOptions {
  // Require at least this many distinct counts (a single count cannot show how a pattern
  // grows; AnalyzeLocal names the shape at one count).
  int min_counts = 2;
  // Label for messages ("phase 2, communication 1").
  std::string label;
  // Try one level of a tree (TreeRole) right after the exchanges by bit, before grids: the
  // calls of a phase already found to be a tree's levels (the same map is also a shift on
  // a (P/2) x 2 grid at bit 0, which holds at even counts only). Otherwise trees come last.
  bool prefer_trees = false;
  // The root of the tree the call is a level of, when known (FindTreeRoot of the whole
  // tree's pairs): tried before every other root, as one level alone can fit several at the
  // traced counts (rank 2's and rank 0's level 0 at even counts) that part at others.
  std::optional<IndexRule> tree_root;
  // Try the recursive doubling folded in pairs (GeneralEquation::fold_pairs) before the one
  // folded onto the first P' ranks: the calls of a phase already found to fold in pairs (a
  // step of a bit that only the largest count has, a power of two, fits both).
  bool fold_pairs_first = false;
  // Try the dissemination steps (Family::kDissemination) right after the exchanges by bit,
  // before grids: the calls of a phase already found to be such steps (the steps of bits
  // that every traced count has are also fixed ring shifts).
  bool dissemination_first = false;
};

// Fits the general equation of one communication from its maps at several counts (any
// order; one map per count). Throws PatternFitError when no family reproduces all of them,
// UserError on malformed input (fewer than min_counts counts, a count given twice).
GeneralEquation FitGeneralEquation(const std::vector<CommMap>& maps,
                                   const FitOptions& options = {});
GeneralEquation FitGeneralEquation(const std::vector<LocalEquation>& locals,
                                   const FitOptions& options = {});

// A world split into components of unequal sizes, each with partners in its own ranks only
// (Family::kComponents): `layouts` are the groups of the communicators the calls were made
// on, one per map (same counts). Each count's groups must be blocks of consecutive ranks
// covering the world in rank order, as many at every count; each component's size is a
// fixed count or the same fraction of P at every count; its partners (in its own ranks) are
// fitted with FitGeneralEquation. Throws PatternFitError saying what does not hold.
GeneralEquation FitComponents(const std::vector<CommMap>& maps,
                              const std::vector<CommunicatorLayout>& layouts,
                              const FitOptions& options = {});

// Every family that reproduces the maps, in preference order (empty if none). For tests and
// for explaining ambiguity to users. With `components`, also on grids of components
// (GridShape::kComponents, kInterleavedComponents), which FitGeneralEquation tries only when
// nothing else fits: a caller that knows the calls stay inside a communicator's groups can
// look there.
std::vector<GeneralEquation> AllFittingEquations(const std::vector<CommMap>& maps,
                                                 bool components = false);

// The root of a tree written by hand, from its maps at several counts: the rank that every
// pair of every count is one bit apart from in ranks counted from it (v = (rank - root) mod
// P, as MPI libraries count a tree's ranks), the same rule at every count. Rank 0 when it
// holds; else the first of rank P-1, rank 1, rank P-2, ... (below the smallest count) that
// does; nullopt when none does (no pair at some count, or pairs not one bit apart). Pass the
// whole tree's pairs: one level alone is one bit apart from several roots (rank 3 and rank
// P-1 at 4, 8, 12 and 16 for bit 1), which only the level's sides tell apart.
std::optional<IndexRule> FindTreeRoot(const std::vector<CommMap>& maps);

// True when `a` and `b` are both valid at `nprocs` and give some rank other partners there
// (every rank is compared up to kDisagreeRanks ranks, that many spread evenly beyond).
inline constexpr std::int64_t kDisagreeRanks = 4096;
bool Disagree(const GeneralEquation& a, const GeneralEquation& b, std::int64_t nprocs);
// The least count in (after, upto] at which `a` and `b` Disagree, looking at the first 256
// counts after `after` and at `upto` itself; 0 when they agree at all of those.
std::int64_t FirstDisagreement(const GeneralEquation& a, const GeneralEquation& b,
                               std::int64_t after, std::int64_t upto);

}  // namespace pas2p::patterns
