#include "pas2p/patterns/general_equation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <tuple>

#include "test_maps.h"

namespace pas2p::patterns {
namespace {

using testing::Side;

std::vector<CommMap> At(CommMap (*make)(int), std::vector<int> counts) {
  std::vector<CommMap> maps;
  for (int p : counts) maps.push_back(make(p));
  return maps;
}

// Every source's destinations at `p` equal the map built from the pattern's definition.
void ExpectSameMap(const GeneralEquation& eq, const CommMap& expected) {
  GeneralEquation::AtCount at = eq.At(expected.nprocs);
  for (int src = 0; src < expected.nprocs; ++src) {
    std::vector<std::int64_t> want(expected.dests[src].begin(), expected.dests[src].end());
    ASSERT_EQ(at.Dests(src), want)
        << "P=" << expected.nprocs << " src=" << src << " " << eq.Describe();
    ASSERT_EQ(at.NumDests(src), static_cast<std::int64_t>(want.size()));
  }
  // The inverse gives every rank's sources: the transpose of the map.
  std::vector<std::vector<std::int64_t>> sources(static_cast<std::size_t>(expected.nprocs));
  for (int src = 0; src < expected.nprocs; ++src) {
    for (int d : expected.dests[src]) sources[static_cast<std::size_t>(d)].push_back(src);
  }
  GeneralEquation inverse = eq.Inverse();
  GeneralEquation::AtCount inv = inverse.At(expected.nprocs);
  for (int r = 0; r < expected.nprocs; ++r) {
    ASSERT_EQ(inv.Dests(r), sources[static_cast<std::size_t>(r)])
        << "sources of " << r << " at P=" << expected.nprocs << " " << inverse.Describe();
  }
}

// Paper 001: BT at 9, 16, 25, 36 -> torus general equation -> peers at 49.
TEST(GeneralEquation, PaperTorusPredictsBt49) {
  std::vector<LocalEquation> locals;
  for (int p : {9, 16, 25, 36}) locals.push_back(AnalyzeLocal(testing::TorusEast(p), 1, 1));
  GeneralEquation eq = FitGeneralEquation(locals);
  EXPECT_EQ(eq.family, Family::kStencil);
  EXPECT_EQ(eq.name, "torus");
  EXPECT_EQ(eq.grid.shape, GridShape::kSquare);
  EXPECT_EQ(eq.offsets, (std::vector<std::vector<std::int64_t>>{{1, 0}}));
  EXPECT_EQ(eq.valid.rule, CountRule::kSquares);
  EXPECT_FALSE(eq.IsValidCount(50));
  // The Dims_create grid is equally consistent with square counts: listed, not chosen.
  ASSERT_FALSE(eq.alternatives.empty());
  EXPECT_NE(eq.alternatives[0].find("MPI_Dims_create(P, 2)"), std::string::npos);

  ExpectSameMap(eq, testing::TorusEast(49));
  for (int src = 0; src < 49; ++src) {
    EXPECT_EQ(eq.Dests(src, 49), (std::vector<std::int64_t>{(src / 7) * 7 + (src % 7 + 1) % 7}));
  }
  // Fig. 7: at 49 the local equation is [+1 {+6,+7}], [-6 {+1,+7}].
  EXPECT_EQ(eq.LocalAt(49, 1, 1).ToString(), "EC2 {phase 1, comm 1, [+1 {+6,+7}], [-6 {+1,+7}]}");
  EXPECT_THROW(eq.At(50), UserError);
  // Fig. 7: the general equation in terms of P.
  EXPECT_EQ(eq.Formula(), "[+1 {+(sqrt(P)-1),+sqrt(P)}], [-(sqrt(P)-1) {+1,+sqrt(P)}]");
}

TEST(GeneralEquation, ButterflyExtrapolatesToLargePowersOfTwo) {
  // One butterfly stage at the lowest bit, and the full recursive-doubling neighbour set.
  std::vector<CommMap> stage, full;
  for (int p : {4, 8, 16, 32}) {
    stage.push_back(testing::Xor(p, {0}));
    std::vector<int> bits;
    for (int b = 0; (1 << b) < p; ++b) bits.push_back(b);
    full.push_back(testing::Xor(p, bits));
  }
  GeneralEquation s = FitGeneralEquation(stage);
  EXPECT_EQ(s.family, Family::kXorExchange);
  EXPECT_EQ(s.valid.rule, CountRule::kPowersOfTwo);
  ExpectSameMap(s, testing::Xor(64, {0}));
  ExpectSameMap(s, testing::Xor(1024, {0}));

  GeneralEquation h = FitGeneralEquation(full);
  EXPECT_EQ(h.name, "hypercube");
  EXPECT_TRUE(h.all_bits);
  ExpectSameMap(h, testing::Xor(64, {0, 1, 2, 3, 4, 5}));
  ExpectSameMap(h, testing::Xor(1024, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_FALSE(h.IsValidCount(48));

  // The top bit (src XOR P/2) is a bit counted from the end.
  std::vector<CommMap> top;
  for (int p : {4, 8, 16, 32}) top.push_back(testing::Xor(p, {__builtin_ctz(p) - 1}));
  GeneralEquation t = FitGeneralEquation(top);
  ASSERT_EQ(t.family, Family::kXorExchange);
  ASSERT_EQ(t.bits.size(), 1u);
  EXPECT_TRUE(t.bits[0].from_end);
  EXPECT_EQ(t.Dests(3, 1024), (std::vector<std::int64_t>{3 + 512}));
}

// A 2^ceil(n/2) x 2^floor(n/2) process grid (n = log2 P, rank = row * cols + col, as NAS CG
// lays out its matrix): step `step` of a butterfly reduction along the row exchanges with the
// column XOR cols / 2^(step+1) (counted from the row's top bit), and the transpose exchange
// swaps row and column, pairs of ranks when P is not a square.
CommMap RowButterflyFromTop(int p, int step) {
  const int n = __builtin_ctz(static_cast<unsigned>(p));
  const int cols = 1 << ((n + 1) / 2);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    const int bit = cols >> (step + 1);
    if (bit >= 1) m.dests[r] = {r ^ bit};
  }
  return m;
}
CommMap GridTransposeOfPairs(int p) {
  const int n = __builtin_ctz(static_cast<unsigned>(p));
  const int rows = 1 << (n / 2);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int me = 0; me < p; ++me) {
    m.dests[me] = {rows * rows == p ? (me % rows) * rows + me / rows
                                    : 2 * ((me / 2) % rows * rows + me / 2 / rows) + me % 2};
  }
  return m;
}

TEST(GeneralEquation, ButterflyAlongRowsOfARectangularPowerOfTwoGrid) {
  // Top bit of the row at 4, 8, 16, 32: bits 0, 1, 1, 2 of the rank: no rule on log2 P has it.
  std::vector<CommMap> first, second;
  for (int p : {4, 8, 16, 32}) first.push_back(RowButterflyFromTop(p, 0));
  GeneralEquation eq = FitGeneralEquation(first);
  ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
  EXPECT_EQ(eq.bit_field, BitField::kLowHalf);
  EXPECT_NE(eq.Describe().find("column index"), std::string::npos) << eq.Describe();
  for (int p : {64, 128, 1024}) ExpectSameMap(eq, RowButterflyFromTop(p, 0));
  // The second step exists from 8 ranks (rows of 4) on.
  for (int p : {8, 16, 32}) second.push_back(RowButterflyFromTop(p, 1));
  GeneralEquation eq2 = FitGeneralEquation(second);
  ASSERT_EQ(eq2.family, Family::kXorExchange) << eq2.Describe();
  for (int p : {64, 512}) ExpectSameMap(eq2, RowButterflyFromTop(p, 1));
}

// Every step of the row butterfly in one call (a rank's several partners in one slot, as a
// repeated block of irecv, send, wait gives): 1 partner at 4 ranks, 2 at 8 and 16, 3 at 32.
CommMap RowButterflyAllSteps(int p) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int step = 0; step < 30; ++step) {
    const CommMap one = RowButterflyFromTop(p, step);
    bool any = false;
    for (int r = 0; r < p; ++r) {
      for (int d : one.dests[r]) {
        m.dests[r].push_back(d);
        any = true;
      }
    }
    if (!any) break;
  }
  for (auto& d : m.dests) std::sort(d.begin(), d.end());
  return m;
}

TEST(GeneralEquation, EveryBitOfTheRowWhenTheStepsGrowWithIt) {
  // Fixed bits {0, 1} of the column index fit 4, 8 and 16 too (the row of 4 ranks has no
  // bit 1), but would keep 2 steps at 32.
  GeneralEquation eq = FitGeneralEquation(At(RowButterflyAllSteps, {4, 8, 16}));
  ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
  EXPECT_TRUE(eq.all_bits) << eq.Describe();
  EXPECT_EQ(eq.bit_field, BitField::kLowHalf);
  EXPECT_NE(eq.Describe().find("every bit b < ceil(log2(P)/2)"), std::string::npos)
      << eq.Describe();
  for (int p : {32, 64, 1024}) ExpectSameMap(eq, RowButterflyAllSteps(p));
}

// One level of trees written by hand, at any count: the binomial tree on the low bits (a
// reduction to rank 0: at level b the ranks whose lowest set bit is b send to rank - 2^b,
// those whose bits up to b are 0 receive from rank + 2^b if it exists) and the tree grown by
// doubling from rank 0 (a broadcast: at step b the ranks below 2^b send to rank + 2^b).
// Each side is its own family member; a map made by both sides is the plain exchange.
// With `root` other than 0 the tree is rooted there (negative: counted from the end, -1 is
// P - 1), its ranks counted from it: v = (rank - root) mod P makes the calls above.
CommMap TreeLevel(int p, int b, TreeRole role, int root = 0) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  const int bit = 1 << b;
  const int base = root >= 0 ? root : p + root;
  for (int r = 0; r < p; ++r) {
    bool in = false;
    switch (role) {
      case TreeRole::kLowParent:
        in = r % (2 * bit) == 0;
        break;
      case TreeRole::kLowChild:
        in = r % (2 * bit) == bit;
        break;
      case TreeRole::kHighParent:
        in = r < bit;
        break;
      case TreeRole::kHighChild:
        in = r >= bit && r < 2 * bit;
        break;
      case TreeRole::kNone:
        in = true;
        break;
    }
    if (in && (r ^ bit) < p) m.dests[(r + base) % p].push_back(((r ^ bit) + base) % p);
  }
  return m;
}

TEST(GeneralEquation, OneLevelOfAHandWrittenTree) {
  for (const TreeRole role :
       {TreeRole::kLowParent, TreeRole::kLowChild, TreeRole::kHighParent, TreeRole::kHighChild}) {
    // A fixed level (bit 1) and the top level (bit ceil(log2 P) - 1) over any counts.
    std::vector<CommMap> fixed, top;
    for (int p : {4, 6, 8, 12, 16}) {
      fixed.push_back(TreeLevel(p, 1, role));
      int n = 0;
      while ((1 << n) < p) ++n;
      top.push_back(TreeLevel(p, n - 1, role));
    }
    const GeneralEquation eq = FitGeneralEquation(fixed);
    ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
    EXPECT_EQ(eq.tree_role, role) << eq.Describe();
    ASSERT_EQ(eq.bits.size(), 1u);
    EXPECT_FALSE(eq.bits[0].from_end);
    EXPECT_TRUE(eq.IsValidCount(24) && eq.IsValidCount(1000)) << eq.Describe();
    for (int p : {24, 37, 64, 1000}) ExpectSameMap(eq, TreeLevel(p, 1, role));
    const GeneralEquation t = FitGeneralEquation(top);
    ASSERT_EQ(t.bits.size(), 1u);
    EXPECT_TRUE(t.bits[0].from_end) << t.Describe();
    EXPECT_EQ(t.tree_role, role);
    ExpectSameMap(t, TreeLevel(100, 6, role));
  }
  // Both sides: the plain pairwise exchange, as before.
  std::vector<CommMap> both;
  for (int p : {4, 8, 16}) both.push_back(TreeLevel(p, 1, TreeRole::kNone));
  EXPECT_EQ(FitGeneralEquation(both).tree_role, TreeRole::kNone);
  const std::string words =
      FitGeneralEquation(std::vector<CommMap>{TreeLevel(4, 1, TreeRole::kLowChild),
                                              TreeLevel(8, 1, TreeRole::kLowChild)})
          .Describe();
  EXPECT_NE(words.find("from the ranks whose lowest set bit is b"), std::string::npos) << words;
}

// The same levels rooted elsewhere: at the last rank (a code's output rank) and at rank 3.
// Their pairs are one bit apart only in ranks counted from the root; the root's rule (from
// the end, or from the start) is what the counts agree on, and the levels hold beyond them.
// Recursive doubling folded the textbook way at a count that is not a power of two:
// the ranks from P' = 2^floor(log2 P) up send to rank - P' (the fold), the first P' exchange
// by bit, then send back (the unfold). Built from that definition at every count.
enum class FoldPart { kFoldSend, kFoldRecv, kExchange };
CommMap Folded(int p, FoldPart part, int bit) {
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    auto& d = m.dests[static_cast<std::size_t>(r)];
    if (part == FoldPart::kFoldSend && r >= p2) d.push_back(r - p2);
    if (part == FoldPart::kFoldRecv && r + p2 < p) d.push_back(r + p2);
    if (part == FoldPart::kExchange && r < p2 && (1 << bit) < p2) d.push_back(r ^ (1 << bit));
  }
  return m;
}

// Traced at 4, 6, 8, 12 and 16, each part of a folded recursive doubling takes the folded
// exchange (not a grid that fits the few counts with a fold by chance), exact at counts with
// and without a fold, and an exchange among all ranks is still that.
TEST(GeneralEquation, RecursiveDoublingFoldedAtCountsThatAreNotPowersOfTwo) {
  const std::vector<int> traced{4, 6, 8, 12, 16};
  for (const auto& [part, bit, role] : std::vector<std::tuple<FoldPart, int, TreeRole>>{
           {FoldPart::kFoldSend, 0, TreeRole::kHighChild},
           {FoldPart::kFoldRecv, 0, TreeRole::kHighParent},
           {FoldPart::kExchange, 0, TreeRole::kNone},
           {FoldPart::kExchange, 1, TreeRole::kNone},
           {FoldPart::kExchange, 2, TreeRole::kNone}}) {
    std::vector<CommMap> maps;
    for (const int p : traced) maps.push_back(Folded(p, part, bit));
    const GeneralEquation eq = FitGeneralEquation(maps);
    ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
    EXPECT_TRUE(eq.folded) << eq.Describe();
    EXPECT_EQ(eq.tree_role, role) << eq.Describe();
    EXPECT_TRUE(eq.valid.IsValid(24) && eq.valid.IsValid(1000)) << eq.Describe();
    for (const int p : {2, 3, 5, 24, 32, 33, 100, 1024, 1500})
      ExpectSameMap(eq, Folded(p, part, bit));
    EXPECT_NE(eq.Describe().find("folded recursive doubling (the ranks from P' = "
                                 "2^floor(log2(P)) up fold onto the first P')"),
              std::string::npos)
        << eq.Describe();
    // The receive side of the fold is the other side of the same pairs.
    if (role != TreeRole::kNone) {
      const FoldPart other =
          part == FoldPart::kFoldSend ? FoldPart::kFoldRecv : FoldPart::kFoldSend;
      ExpectSameMap(eq.Inverse(), Folded(24, other, bit));
    }
  }
  // An exchange of every rank at powers of two is the plain one.
  std::vector<CommMap> pow2;
  for (const int p : {4, 8, 16}) pow2.push_back(Folded(p, FoldPart::kExchange, 1));
  EXPECT_FALSE(FitGeneralEquation(pow2).folded);
}

// Recursive doubling folded in pairs, as MPICH and Open MPI run it (MPIR_Allreduce's
// recursive doubling): with R = P - P', of the first 2R ranks the even ones send to rank + 1
// (the fold) and get the result back from it (the unfold); the other P' ranks, renumbered
// (rank / 2 below 2R, rank - R from there), exchange by bit. Built from that definition.
enum class PairPart { kFoldSend, kFoldRecv, kExchange };
CommMap PairFolded(int p, PairPart part, int bit) {
  int p2 = 1;
  while (p2 * 2 <= p) p2 *= 2;
  const int rem = p - p2;
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    auto& d = m.dests[static_cast<std::size_t>(r)];
    if (r < 2 * rem) {
      if (part == PairPart::kFoldSend && r % 2 == 0) d.push_back(r + 1);
      if (part == PairPart::kFoldRecv && r % 2 == 1) d.push_back(r - 1);
      if (r % 2 == 0) continue;
    }
    if (part != PairPart::kExchange || (1 << bit) >= p2) continue;
    const int v = r < 2 * rem ? r / 2 : r - rem;
    const int w = v ^ (1 << bit);
    d.push_back(w < rem ? 2 * w + 1 : w + rem);
  }
  return m;
}

// Traced at 4, 6, 8, 12 and 16 (at 6, bit 0 pairs ranks 1 and 3, and 4 and 5), each part
// takes the fold in pairs and holds at counts with and without a fold; its receive side is
// the other side of the pairs.
TEST(GeneralEquation, RecursiveDoublingFoldedInPairsAsMpiLibrariesRunIt) {
  const std::vector<int> traced{4, 6, 8, 12, 16};
  for (const auto& [part, bit, role] : std::vector<std::tuple<PairPart, int, TreeRole>>{
           {PairPart::kFoldSend, 0, TreeRole::kLowParent},
           {PairPart::kFoldRecv, 0, TreeRole::kLowChild},
           {PairPart::kExchange, 0, TreeRole::kNone},
           {PairPart::kExchange, 1, TreeRole::kNone},
           {PairPart::kExchange, 3, TreeRole::kNone}}) {
    std::vector<CommMap> maps;
    for (const int p : traced) maps.push_back(PairFolded(p, part, bit));
    // Bit 3 pairs ranks at 16 only, a power of two: the other fold fits it as well, and
    // comes first unless the phase is known to fold in pairs.
    FitOptions options;
    options.fold_pairs_first = bit == 3;
    const GeneralEquation eq = FitGeneralEquation(maps, options);
    ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
    EXPECT_TRUE(eq.folded && eq.fold_pairs) << eq.Describe();
    if (bit == 3) {
      EXPECT_FALSE(FitGeneralEquation(maps).fold_pairs);
    }
    EXPECT_EQ(eq.tree_role, role) << eq.Describe();
    for (const int p : {2, 3, 5, 7, 24, 32, 33, 100, 1024, 1500})
      ExpectSameMap(eq, PairFolded(p, part, bit));
    EXPECT_NE(eq.Describe().find("recursive doubling folded in pairs (as MPI libraries run it"),
              std::string::npos)
        << eq.Describe();
    ExpectSameMap(eq.Inverse(), PairFolded(24,
                                           part == PairPart::kFoldSend   ? PairPart::kFoldRecv
                                           : part == PairPart::kFoldRecv ? PairPart::kFoldSend
                                                                         : part,
                                           bit));
  }
}

// Step b of a dissemination (Bruck's allgather, a dissemination barrier): every rank sends
// to (rank - 2^b) mod P where 2^b < P, so the step of bit 2 is absent at 4 ranks and that of
// bit 3 at 4, 6 and 8. A ring shift by a fixed offset does not hold those (at 6, rank - 8
// would be rank - 2).
CommMap Dissemination(int p, int bit, int sign) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p && (1 << bit) < p; ++r) {
    m.dests[static_cast<std::size_t>(r)].push_back(((r + sign * (1 << bit)) % p + p) % p);
  }
  return m;
}

TEST(GeneralEquation, DisseminationStepsHoldAtAnyCount) {
  for (const int sign : {-1, +1}) {
    for (const int bit : {0, 2, 3}) {
      std::vector<CommMap> maps;
      for (const int p : {4, 6, 8, 12, 16}) maps.push_back(Dissemination(p, bit, sign));
      // Bit 0 is also a ring shift at every count: a stencil, unless the phase's calls are
      // known to be dissemination steps. Bit 2's ring shift would wrap onto the rank itself at
      // 4 (rank - 4), which the dissemination step explains without.
      if (bit == 0) {
        EXPECT_EQ(FitGeneralEquation(maps).family, Family::kStencil);
      }
      FitOptions options;
      options.dissemination_first = bit == 0;
      const GeneralEquation eq = FitGeneralEquation(maps, options);
      ASSERT_EQ(eq.family, Family::kDissemination) << eq.Describe();
      EXPECT_EQ(eq.shift_sign, sign);
      for (const int p : {2, 3, 5, 7, 24, 33, 100, 1024, 1500})
        ExpectSameMap(eq, Dissemination(p, bit, sign));
      ExpectSameMap(eq.Inverse(), Dissemination(24, bit, -sign));
      EXPECT_NE(eq.Describe().find(sign < 0 ? "(src - 2^b) mod P for b in {" + std::to_string(bit)
                                            : "(src + 2^b) mod P for b in {" + std::to_string(bit)),
                std::string::npos)
          << eq.Describe();
    }
  }
}

TEST(GeneralEquation, OneLevelOfATreeRootedElsewhere) {
  for (const int root : {-1, 3}) {
    for (const TreeRole role :
         {TreeRole::kLowParent, TreeRole::kLowChild, TreeRole::kHighParent, TreeRole::kHighChild}) {
      std::vector<CommMap> fixed;
      for (int p : {4, 6, 8, 12, 16}) fixed.push_back(TreeLevel(p, 1, role, root));
      const IndexRule expected = root < 0 ? IndexRule{true, 0} : IndexRule{false, root};
      const GeneralEquation eq = FitGeneralEquation(fixed);
      ASSERT_EQ(eq.family, Family::kXorExchange) << eq.Describe();
      EXPECT_EQ(eq.tree_role, role) << eq.Describe();
      EXPECT_EQ(eq.root, expected) << eq.Describe();
      EXPECT_EQ(eq.valid.min_count, root < 0 ? 2 : 4) << eq.Describe();
      for (int p : {24, 37, 64, 1000}) ExpectSameMap(eq, TreeLevel(p, 1, role, root));
      EXPECT_NE(eq.Describe().find(root < 0 ? "counted from the root P-1, v = (src - (P-1))"
                                            : "counted from the root 3, v = (src - 3)"),
                std::string::npos)
          << eq.Describe();
      // The inverse (the other side's receives) keeps the root.
      const GeneralEquation inv = eq.Inverse();
      EXPECT_EQ(inv.root, expected);
    }
  }
  // The whole tree's pairs (every level, both sides) name its root; one level alone may be
  // one bit apart from other roots too (rank 3 and P-1 at 4, 8, 12 and 16 for bit 1), which
  // the sides tell apart when it is fitted.
  for (const int root : {-1, 3}) {
    std::vector<CommMap> whole;
    for (int p : {4, 6, 8, 12, 16}) {
      CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
      for (int b = 0; (1 << b) < p; ++b) {
        const CommMap level = TreeLevel(p, b, TreeRole::kNone, root);
        for (int r = 0; r < p; ++r) {
          for (int d : level.dests[r]) m.dests[r].push_back(d);
        }
      }
      whole.push_back(m.Normalized());
    }
    const IndexRule expected = root < 0 ? IndexRule{true, 0} : IndexRule{false, root};
    EXPECT_EQ(FindTreeRoot(whole), expected);
  }
  // One level alone can fit several roots at the traced counts: rank 2's level 0 at even
  // counts is rank 0's too (the same pairs), and they part at odd counts. The tree's root,
  // when known (FitOptions::tree_root), is tried first.
  {
    std::vector<CommMap> level0;
    for (int p : {4, 6, 8, 12, 16}) level0.push_back(TreeLevel(p, 0, TreeRole::kLowChild, 2));
    FitOptions trees;  // as the model fits a tree's levels
    trees.prefer_trees = true;
    const GeneralEquation zero = FitGeneralEquation(level0, trees);
    EXPECT_EQ(zero.tree_role, TreeRole::kLowChild) << zero.Describe();
    EXPECT_EQ(zero.root, (IndexRule{false, 0})) << zero.Describe();
    FitOptions known = trees;
    known.tree_root = IndexRule{false, 2};
    const GeneralEquation eq = FitGeneralEquation(level0, known);
    EXPECT_EQ(eq.root, (IndexRule{false, 2})) << eq.Describe();
    for (int p : {25, 33}) ExpectSameMap(eq, TreeLevel(p, 0, TreeRole::kLowChild, 2));
  }
  // Rank 0's tree keeps rank 0 and its words.
  std::vector<CommMap> zero;
  for (int p : {4, 8, 16}) zero.push_back(TreeLevel(p, 1, TreeRole::kLowChild));
  EXPECT_EQ(FindTreeRoot(zero), (IndexRule{false, 0}));
  EXPECT_EQ(FitGeneralEquation(zero).Describe().find("counted from the root"), std::string::npos);
  // A stencil is no tree from any root.
  std::vector<CommMap> ring;
  for (int p : {4, 6, 8}) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) m.dests[r] = {(r + 1) % p, (r + 2) % p};
    ring.push_back(m);
  }
  EXPECT_FALSE(FindTreeRoot(ring).has_value());
}

TEST(GeneralEquation, TransposeOfRankPairsOnNonSquarePowersOfTwo) {
  GeneralEquation eq = FitGeneralEquation(At(GridTransposeOfPairs, {4, 8, 16, 32}));
  ASSERT_EQ(eq.family, Family::kBitPermute) << eq.Describe();
  EXPECT_EQ(eq.permutation, BitPermutation::kTransposeHigh);
  EXPECT_EQ(eq.valid.rule, CountRule::kPowersOfTwo);
  for (int p : {64, 128, 2048}) ExpectSameMap(eq, GridTransposeOfPairs(p));
  // Square counts only: still the plain transpose (powers of four).
  GeneralEquation sq = FitGeneralEquation(At(GridTransposeOfPairs, {4, 16, 64}));
  EXPECT_EQ(sq.permutation, BitPermutation::kRotateHalf);
}

TEST(GeneralEquation, TransposeOfPowerOfTwoAndSquareGrids) {
  GeneralEquation bits = FitGeneralEquation(At(testing::Transpose, {4, 16, 64}));
  EXPECT_EQ(bits.family, Family::kBitPermute);
  EXPECT_EQ(bits.valid.rule, CountRule::kPowersOfFour);
  ExpectSameMap(bits, testing::Transpose(256));
  ExpectSameMap(bits, testing::Transpose(1024));

  GeneralEquation grid = FitGeneralEquation(At(testing::Transpose, {9, 16, 25}));
  EXPECT_EQ(grid.family, Family::kTranspose);
  EXPECT_EQ(grid.valid.rule, CountRule::kSquares);
  ExpectSameMap(grid, testing::Transpose(49));
  ExpectSameMap(grid, testing::Transpose(100));
}

TEST(GeneralEquation, TransposeOfARectangularCartGrid) {
  // A rows x cols matrix distributed one element per rank (row-major, cols varies fastest,
  // {rows, cols} = MPI_Dims_create(P, 2)) sent to its transpose (cols x rows, row-major).
  auto transpose = [](int p) {
    std::vector<std::int64_t> dims = DimsCreate(p, 2);
    const int rows = static_cast<int>(dims[0]), cols = static_cast<int>(dims[1]);
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) m.dests[r] = {(r % cols) * rows + r / cols};
    return m;
  };
  GeneralEquation eq = FitGeneralEquation(At(transpose, {6, 8, 12, 20}));
  EXPECT_EQ(eq.family, Family::kTranspose);
  EXPECT_EQ(eq.grid.shape, GridShape::kDimsCreate);
  for (int p : {30, 48, 100}) ExpectSameMap(eq, transpose(p));
}

TEST(GeneralEquation, Halo3DOnDimsCreateGrids) {
  std::vector<CommMap> maps;
  for (int p : {8, 12, 16, 24}) maps.push_back(testing::Halo3D(p, DimsCreate(p, 3)));
  GeneralEquation eq = FitGeneralEquation(maps);
  EXPECT_EQ(eq.family, Family::kStencil);
  EXPECT_EQ(eq.name, "mesh");
  EXPECT_EQ(eq.grid.shape, GridShape::kDimsCreate);
  EXPECT_EQ(eq.grid.ndims, 3);
  EXPECT_EQ(eq.offsets.size(), 6u);
  for (int p : {64, 1000, 36, 30}) {
    ASSERT_TRUE(eq.IsValidCount(p)) << p;
    ExpectSameMap(eq, testing::Halo3D(p, DimsCreate(p, 3)));
  }
  EXPECT_FALSE(eq.IsValidCount(13));  // Dims_create(13, 3) = {13, 1, 1}: not a 3-D grid
}

// One swap of a halo exchanged swap by swap on a periodic MPI_Cart_create grid of
// MPI_Dims_create(P, 3) (row-major): every rank sends to its +1 neighbour along `dim`, and
// skips the send when that neighbour is itself (an extent of 1: 4 = 2 x 2 x 1, 9 = 3 x 3 x 1).
CommMap PeriodicSwapSkippingSelf(int p, int dim) {
  const std::vector<std::int64_t> dims = DimsCreate(p, 3);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    std::int64_t c[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    c[dim] = (c[dim] + 1) % dims[static_cast<std::size_t>(dim)];
    const int d = static_cast<int>((c[0] * dims[1] + c[1]) * dims[2] + c[2]);
    if (d != r) m.dests[static_cast<std::size_t>(r)].push_back(d);
  }
  return m.Normalized();
}

TEST(GeneralEquation, PeriodicSwapWithoutMessagesToItself) {
  // Counts 4 and 9 have an extent of 1 in dimension 2, 18 and 27 tell the 3-D grid from 2-D
  // ones.
  for (int dim : {1, 2}) {
    std::vector<CommMap> maps;
    for (int p : {4, 8, 9, 12, 18, 27}) maps.push_back(PeriodicSwapSkippingSelf(p, dim));
    GeneralEquation eq = FitGeneralEquation(maps);
    EXPECT_EQ(eq.family, Family::kStencil) << eq.Describe();
    // Only dimension 2 has an extent of 1 at a traced count; dimension 1 never shows whether
    // a rank would send to itself, and either reading reproduces its traces.
    if (dim == 2) {
      EXPECT_TRUE(eq.skip_self) << eq.Describe();
    }
    for (int p : {36, 64, 100}) ExpectSameMap(eq, PeriodicSwapSkippingSelf(p, dim));
    if (dim == 2) ExpectSameMap(eq, PeriodicSwapSkippingSelf(5, dim));  // 5 x 1 x 1
  }
  // A stencil whose ranks do send to themselves keeps those messages.
  std::vector<CommMap> maps;
  for (int p : {4, 8, 9, 12}) {
    CommMap m = PeriodicSwapSkippingSelf(p, 2);
    for (int r = 0; r < p; ++r) {
      if (m.dests[static_cast<std::size_t>(r)].empty()) m.dests[static_cast<std::size_t>(r)] = {r};
    }
    maps.push_back(m);
  }
  GeneralEquation eq = FitGeneralEquation(maps);
  EXPECT_FALSE(eq.skip_self) << eq.Describe();
  EXPECT_EQ(eq.At(9).Dests(4), std::vector<std::int64_t>{4});
}

TEST(GeneralEquation, RingMeshWavefrontAndMasterWorker) {
  GeneralEquation ring = FitGeneralEquation(At(testing::Ring, {4, 5, 8, 12}));
  EXPECT_EQ(ring.name, "ring");
  EXPECT_EQ(ring.valid.rule, CountRule::kAny);
  ExpectSameMap(ring, testing::Ring(97));

  GeneralEquation mesh = FitGeneralEquation(At(testing::Mesh, {9, 16, 25, 36}));
  EXPECT_EQ(mesh.name, "mesh");
  ExpectSameMap(mesh, testing::Mesh(49));
  ExpectSameMap(mesh, testing::Mesh(100));

  GeneralEquation wave = FitGeneralEquation(At(testing::Wavefront, {4, 9, 16}));
  EXPECT_EQ(wave.name, "wavefront");
  ExpectSameMap(wave, testing::Wavefront(64));

  GeneralEquation star = FitGeneralEquation(At(testing::ToMaster, {3, 4, 7}));
  EXPECT_EQ(star.family, Family::kStar);
  EXPECT_EQ(star.star_direction, StarDirection::kToRoot);
  ExpectSameMap(star, testing::ToMaster(50));
  EXPECT_EQ(star.At(1048576).NumDests(0), 0);
  EXPECT_EQ(star.Dests(77, 1048576), (std::vector<std::int64_t>{0}));
}

TEST(GeneralEquation, AllToAllAndRowExchanges) {
  auto all = [](int p) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int s = 0; s < p; ++s) {
      for (int d = 0; d < p; ++d) {
        if (d != s) m.dests[s].push_back(d);
      }
    }
    return m;
  };
  GeneralEquation eq = FitGeneralEquation(At(all, {3, 4, 6}));
  EXPECT_EQ(eq.name, "all-to-all");
  ExpectSameMap(eq, all(10));
  // Alltoall written as point-to-point, the copy to itself included.
  auto with_self = [](int p) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int s = 0; s < p; ++s) {
      for (int d = 0; d < p; ++d) m.dests[s].push_back(d);
    }
    return m;
  };
  GeneralEquation self = FitGeneralEquation(At(with_self, {3, 4, 6}));
  EXPECT_EQ(self.name, "all-to-all (with self)") << self.Describe();
  ExpectSameMap(self, with_self(10));
  EXPECT_EQ(eq.At(1048576).NumDests(5), 1048575);

  auto rows = [](int p) {
    const int s = Side(p);
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) {
      for (int c = 0; c < s; ++c) {
        if ((r / s) * s + c != r) m.dests[r].push_back((r / s) * s + c);
      }
    }
    return m;
  };
  GeneralEquation row = FitGeneralEquation(At(rows, {9, 16, 25}));
  EXPECT_EQ(row.name, "all-to-all within rows");
  ExpectSameMap(row, rows(49));
}

TEST(GeneralEquation, ShiftByHalfUsesAFixedExtent) {
  auto half = [](int p) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p / 2; ++r) m.dests[r] = {r + p / 2};
    return m;
  };
  GeneralEquation eq = FitGeneralEquation(At(half, {6, 10, 12, 14}));
  EXPECT_EQ(eq.valid.rule, CountRule::kMultiplesOf);
  EXPECT_EQ(eq.valid.factor, 2);
  ExpectSameMap(eq, half(1000));
}

TEST(GeneralEquation, UnknownPatternIsAClearError) {
  // A different random permutation at each count: no rule of P explains it.
  std::mt19937 rng(7);
  std::vector<CommMap> maps;
  for (int p : {8, 16, 32}) {
    std::vector<int> perm(static_cast<std::size_t>(p));
    for (int i = 0; i < p; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int i = 0; i < p; ++i) m.dests[i] = {perm[i]};
    maps.push_back(m);
  }
  FitOptions options;
  options.label = "phase 3, communication 2";
  try {
    FitGeneralEquation(maps, options);
    FAIL() << "expected PatternFitError";
  } catch (const PatternFitError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("phase 3, communication 2: no communication-pattern family"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("cannot be extrapolated"), std::string::npos);
    EXPECT_NE(what.find("8 processes: "), std::string::npos);
    EXPECT_NE(what.find("Families tried"), std::string::npos);
    EXPECT_NE(what.find("bit exchange (butterfly, hypercube): some destination differs"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("stencil on a line of P ranks: at 8 processes"), std::string::npos);
  }
}

// A call that moves nothing at some counts and something at others (PETSc multigrid: a phase
// matched across the counts that was a set-up exchange at 8 and the V-cycle at 27) says so,
// and where to look; a map that is unknown at every count does not.
TEST(GeneralEquation, ACallSilentAtSomeCountsSaysThePhasesMayNotBeTheSame) {
  std::vector<CommMap> maps;
  for (int p : {8, 12, 18}) maps.push_back(CommMap{p, std::vector<std::vector<int>>(p)});
  CommMap odd{27, std::vector<std::vector<int>>(27)};
  for (int r : {13, 14, 16, 22}) odd.dests[r] = {r * r % 27};
  maps.push_back(odd);
  try {
    FitGeneralEquation(maps, {});
    FAIL() << "expected PatternFitError";
  } catch (const PatternFitError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("At 8, 12, 18 processes this call moves nothing, at 27 it does"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("`pas2p analyze`"), std::string::npos) << what;
  }
  std::mt19937 rng(3);
  std::vector<CommMap> unknown;
  for (int p : {8, 16, 32}) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int i = 0; i < p; ++i) m.dests[i] = {static_cast<int>(rng() % p)};
    unknown.push_back(m);
  }
  try {
    FitGeneralEquation(unknown, {});
    FAIL() << "expected PatternFitError";
  } catch (const PatternFitError& e) {
    EXPECT_EQ(std::string(e.what()).find("moves nothing"), std::string::npos) << e.what();
  }
}

TEST(GeneralEquation, BadInputIsExplained) {
  EXPECT_THROW(FitGeneralEquation(std::vector<CommMap>{testing::TorusEast(9)}), UserError);
  EXPECT_THROW(
      FitGeneralEquation(std::vector<CommMap>{testing::TorusEast(9), testing::TorusEast(9)}),
      UserError);
  CommMap broken{4, {{1}, {2}}};
  EXPECT_THROW(FitGeneralEquation(std::vector<CommMap>{broken, testing::TorusEast(9)}), UserError);
}

TEST(GeneralEquation, EvaluatesAMillionRanksLazily) {
  GeneralEquation torus = FitGeneralEquation(At(testing::TorusEast, {9, 16, 25, 36}));
  std::vector<CommMap> halo;
  for (int p : {8, 12, 16, 24}) halo.push_back(testing::Halo3D(p, DimsCreate(p, 3)));
  GeneralEquation h3 = FitGeneralEquation(halo);
  const std::int64_t n = 1048576;  // 1024^2 = 2^20; Dims_create(2^20, 3) = {128, 128, 64}
  GeneralEquation::AtCount t = torus.At(n);
  GeneralEquation::AtCount h = h3.At(n);
  std::int64_t sum = 0;
  for (std::int64_t src = 0; src < n; ++src) {
    t.ForEachDest(src, [&sum](std::int64_t d) { sum += d; });
    h.ForEachDest(src, [&sum](std::int64_t d) { sum += d & 1; });
  }
  EXPECT_GT(sum, 0);
  EXPECT_EQ(t.Dests(1023), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(h.extents(), (std::vector<std::int64_t>{64, 128, 128}));
  // Rank 0 is a corner: 3 neighbours.
  EXPECT_EQ(h.Dests(0), (std::vector<std::int64_t>{1, 64, 64 * 128}));
}

}  // namespace
}  // namespace pas2p::patterns

namespace pas2p::patterns {
namespace {

// A phase with a 2-D halo (mesh) and every worker reporting to rank 0: no single family,
// a union of two.
CommMap MeshAndMaster(int p) {
  CommMap m = testing::Mesh(p);
  for (int r = 1; r < p; ++r) m.dests[r].push_back(0);
  return m.Normalized();
}

TEST(GeneralEquation, UnionOfHaloAndMasterWorker) {
  std::vector<CommMap> maps;
  for (int p : {9, 16, 25, 36}) maps.push_back(MeshAndMaster(p));
  GeneralEquation eq = FitGeneralEquation(maps);
  ASSERT_EQ(eq.family, Family::kUnion) << eq.Describe();
  EXPECT_EQ(eq.terms.size(), 2u);
  EXPECT_FALSE(eq.IsValidCount(50));  // the mesh term lives on a sqrt(P) grid
  EXPECT_EQ(ValidCountSet(eq.ValidRules()).AtMost(50), 49);
  ExpectSameMap(eq, MeshAndMaster(49));
  ExpectSameMap(eq, MeshAndMaster(144));
}

// A shift along x of an open MPI_Dims_create(P, 2) grid traced at 8, 12 and 16 ranks
// (4 x 2, 4 x 3, 4 x 4: always 4 rows) is the same shift on a 4 x (P/4) grid: the traces
// cannot tell them apart, and at 24 (6 x 4 against 4 x 6) they part. The fit keeps the other
// grid's shift as a rival; 20 is the first count where they give other partners.
TEST(GeneralEquation, AShiftKeepsTheGridsTheTracesCannotTellApartAsRivals) {
  std::vector<CommMap> maps;
  for (int p : {8, 12, 16}) {
    const auto dims = DimsCreate(p, 2);
    const int cols = static_cast<int>(dims[1]);
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) {
      if (r % cols > 0) m.dests[static_cast<std::size_t>(r)].push_back(r - 1);
    }
    maps.push_back(m);
  }
  const GeneralEquation eq = FitGeneralEquation(maps);
  ASSERT_EQ(eq.family, Family::kStencil);
  const GeneralEquation* other = nullptr;
  for (const GeneralEquation& r : eq.rivals) {
    EXPECT_EQ(r.family, Family::kStencil);
    EXPECT_EQ(r.offsets.size(), eq.offsets.size());
    EXPECT_TRUE(r.rivals.empty());
    for (int p : {8, 12, 16}) EXPECT_FALSE(Disagree(eq, r, p)) << r.Describe();
    if (Disagree(eq, r, 24)) other = &r;
  }
  ASSERT_NE(other, nullptr) << eq.Describe();
  EXPECT_EQ(FirstDisagreement(eq, *other, 16, 24), 20);
  EXPECT_EQ(FirstDisagreement(eq, *other, 16, 4096), 20);
  const std::int64_t later = FirstDisagreement(eq, *other, 1000, 1 << 20);
  EXPECT_GT(later, 1000);
  EXPECT_LE(later, 1256);
  EXPECT_EQ(FirstDisagreement(eq, *other, 16, 16), 0);
  // The receive side is fitted on its own: an inverse keeps no rivals.
  EXPECT_TRUE(eq.Inverse().rivals.empty());
}

// Each half of the world (ranks below P/2, the rest) with a periodic MPI_Dims_create(P/2, 2)
// grid of its own: the receive from -1 along the half's fastest dimension. `interleaved`:
// the halves are the even and the odd ranks (local rank r / 2).
CommMap HalvesWest(int p, bool interleaved = false) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  const int half = p / 2;
  const std::vector<std::int64_t> dims = DimsCreate(half, 2);  // row-major: d1 fastest
  for (int r = 0; r < p; ++r) {
    const int base = interleaved ? r % 2 : (r < half ? 0 : half);
    const int stride = interleaved ? 2 : 1, local = (r - base) / stride;
    const int x = static_cast<int>(local % dims[1]), y = static_cast<int>(local / dims[1]);
    const int west = static_cast<int>((x - 1 + dims[1]) % dims[1]);
    m.dests[static_cast<std::size_t>(r)].push_back(base +
                                                   stride * (y * static_cast<int>(dims[1]) + west));
  }
  return m;
}

// At 4-16 the halves' grid has MPI_Dims_create(P, 3)'s extents, the simpler rule, which is
// kept (AllFittingEquations lists the halves' grid when asked); with 24 traced only the
// halves' grid reproduces the maps, and the fitter finds it there.
TEST(ComponentsGrid, HalvesWithAGridEachAreFoundWhereNoSimplerGridFits) {
  std::vector<CommMap> maps;
  for (int p : {4, 6, 8, 12, 16}) maps.push_back(HalvesWest(p));
  const GeneralEquation small = FitGeneralEquation(maps);
  EXPECT_EQ(small.family, Family::kStencil);
  EXPECT_EQ(small.grid.shape, GridShape::kDimsCreate) << small.Describe();
  auto has_halves = [](const std::vector<GeneralEquation>& fits) {
    return std::any_of(fits.begin(), fits.end(), [](const GeneralEquation& f) {
      return f.grid.shape == GridShape::kComponents && f.grid.fixed == 2;
    });
  };
  EXPECT_FALSE(has_halves(AllFittingEquations(maps)));
  EXPECT_TRUE(has_halves(AllFittingEquations(maps, true)));
  maps.push_back(HalvesWest(24));
  const GeneralEquation all = FitGeneralEquation(maps);
  EXPECT_EQ(all.grid.shape, GridShape::kComponents) << all.Describe();
  EXPECT_EQ(all.grid.fixed, 2);
  EXPECT_EQ(all.At(48).Map().dests, HalvesWest(48).dests);
  EXPECT_FALSE(all.IsValidCount(25));
}

// The same with the halves interleaved (the even and the odd ranks): their grid has the
// component fastest, and is found the same way.
TEST(ComponentsGrid, InterleavedHalvesAreFoundWhereNoSimplerGridFits) {
  std::vector<CommMap> maps;
  for (int p : {4, 6, 8, 12, 16}) maps.push_back(HalvesWest(p, true));
  EXPECT_EQ(FitGeneralEquation(maps).grid.shape, GridShape::kDimsCreate);
  const auto listed = AllFittingEquations(maps, true);
  EXPECT_TRUE(std::any_of(listed.begin(), listed.end(), [](const GeneralEquation& f) {
    return f.grid.shape == GridShape::kInterleavedComponents && f.grid.fixed == 2;
  }));
  maps.push_back(HalvesWest(24, true));
  const GeneralEquation all = FitGeneralEquation(maps);
  EXPECT_EQ(all.grid.shape, GridShape::kInterleavedComponents) << all.Describe();
  EXPECT_EQ(all.At(48).Map().dests, HalvesWest(48, true).dests);
  // The receive side: every rank's west neighbour sends to it.
  std::vector<std::pair<int, int>> east;
  const CommMap west48 = HalvesWest(48, true);
  for (int r = 0; r < 48; ++r) {
    for (int d : west48.dests[static_cast<std::size_t>(r)]) east.emplace_back(d, r);
  }
  EXPECT_EQ(all.Inverse().At(48).Map().Normalized(), CommMap::FromPairs(48, east).Normalized());
}

// A world in consecutive blocks of `sizes` ranks (the last takes the rest), each a ring
// (+1, periodic) of its own ranks, and the blocks as the communicators' layout.
std::pair<CommMap, CommunicatorLayout> RingsOfBlocks(int p, std::vector<int> sizes) {
  int used = 0;
  for (const int s : sizes) used += s;
  sizes.push_back(p - used);
  CommMap map;
  map.nprocs = p;
  map.dests.resize(static_cast<std::size_t>(p));
  CommunicatorLayout layout;
  layout.nprocs = p;
  int first = 0;
  for (const int s : sizes) {
    std::vector<int> group;
    for (int r = 0; r < s; ++r) {
      group.push_back(first + r);
      map.dests[static_cast<std::size_t>(first + r)] = {first + (r + 1) % s};
    }
    layout.groups.push_back(group);
    first += s;
  }
  return {map, layout};
}

TEST(Components, BlocksOfUnequalSizesEachWithTheirOwnPattern) {
  std::vector<CommMap> maps;
  std::vector<CommunicatorLayout> layouts;
  for (const int p : {8, 12, 16, 20}) {  // P/4 and 3P/4
    auto [map, layout] = RingsOfBlocks(p, {p / 4});
    maps.push_back(map);
    layouts.push_back(layout);
  }
  EXPECT_THROW(FitGeneralEquation(maps), PatternFitError);  // no grid of world ranks
  const GeneralEquation eq = FitComponents(maps, layouts);
  EXPECT_EQ(eq.family, Family::kComponents);
  ASSERT_EQ(eq.component_sizes.size(), 1u);
  EXPECT_EQ(eq.component_sizes[0].Describe(), "P/4");
  EXPECT_NE(eq.Describe().find("P/4 ranks and the other ranks, each ring"), std::string::npos)
      << eq.Describe();
  EXPECT_NE(eq.Describe().find("valid counts: multiples of 4 >= 8"), std::string::npos)
      << eq.Describe();
  const auto at = eq.At(40);  // blocks of 10 and 30
  EXPECT_EQ(at.Dests(9), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(at.Dests(10), (std::vector<std::int64_t>{11}));
  EXPECT_EQ(at.Dests(39), (std::vector<std::int64_t>{10}));
  EXPECT_EQ(at.NumDests(25), 1);
  EXPECT_EQ(eq.Inverse().At(40).Dests(0), (std::vector<std::int64_t>{9}));
  EXPECT_EQ(eq.At(40).Map().Normalized(), RingsOfBlocks(40, {10}).first.Normalized());
  EXPECT_FALSE(eq.IsValidCount(42));
  EXPECT_THROW(eq.At(42), UserError);
  // A block of fixed size before the rest (two servers that exchange with each other).
  maps.clear();
  layouts.clear();
  for (const int p : {6, 8, 10, 14}) {
    auto [map, layout] = RingsOfBlocks(p, {2});
    maps.push_back(map);
    layouts.push_back(layout);
  }
  const GeneralEquation servers = FitComponents(maps, layouts);
  EXPECT_EQ(servers.component_sizes[0].fixed, 2);
  EXPECT_EQ(servers.At(1000).Dests(1), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(servers.At(1000).Dests(999), (std::vector<std::int64_t>{2}));
  EXPECT_TRUE(servers.IsValidCount(7));
  // A component whose own pattern has no count at its size is named: blocks of P/4 and the
  // rest, each a torus on a sqrt(P) x sqrt(P) grid (traced at 16 and 64: blocks of 4 and 12,
  // 16 and 48, fitted separately), at 32 would have 8 ranks, no square.
  maps.clear();
  layouts.clear();
  for (const int p : {16, 64}) {
    CommMap map;
    map.nprocs = p;
    map.dests.resize(static_cast<std::size_t>(p));
    const int q = p / 4, side = testing::Side(q);
    for (int r = 0; r < q; ++r) {  // the first block: east on its square grid
      map.dests[static_cast<std::size_t>(r)] = {(r / side) * side + (r % side + 1) % side};
    }
    for (int r = q; r < p; ++r) map.dests[static_cast<std::size_t>(r)] = {r == p - 1 ? q : r + 1};
    CommunicatorLayout layout{p, std::vector<std::vector<int>>(2)};
    for (int r = 0; r < p; ++r) layout.groups[r < q ? 0 : 1].push_back(r);
    maps.push_back(map);
    layouts.push_back(layout);
  }
  const GeneralEquation squares = FitComponents(maps, layouts);
  try {
    squares.At(32);
    FAIL() << squares.Describe();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("component 1 would have 8 ranks, and its"),
              std::string::npos)
        << e.what();
  }
}

TEST(Components, WhatIsNotComponentsIsSaid) {
  std::vector<CommMap> maps;
  std::vector<CommunicatorLayout> layouts;
  for (const int p : {8, 12, 16}) {
    auto [map, layout] = RingsOfBlocks(p, {p / 4});
    maps.push_back(map);
    layouts.push_back(layout);
  }
  auto message = [](const std::vector<CommMap>& m, const std::vector<CommunicatorLayout>& l) {
    FitOptions fo;
    fo.label = "phase 1 call 0";
    try {
      FitComponents(m, l, fo);
    } catch (const PatternFitError& e) {
      return std::string(e.what());
    }
    return std::string("fitted");
  };
  // Groups that are not blocks of consecutive ranks (every other rank).
  std::vector<CommunicatorLayout> strided = layouts;
  strided[1].groups = {{0, 2, 4, 6, 8, 10}, {1, 3, 5, 7, 9, 11}};
  EXPECT_NE(message(maps, strided)
                .find("phase 1 call 0: not components of the world, each with "
                      "its own pattern: at 12 processes a group is not a "
                      "block of consecutive ranks"),
            std::string::npos)
      << message(maps, strided);
  // A partner outside the sender's group.
  std::vector<CommMap> leaving = maps;
  leaving[0].dests[1] = {7};
  EXPECT_NE(message(leaving, layouts)
                .find("at 8 processes rank 1 sends to rank 7, outside its "
                      "group"),
            std::string::npos)
      << message(leaving, layouts);
  // Sizes that follow no rule: 2 of 8, 4 of 12, 4 of 16.
  std::vector<CommunicatorLayout> uneven = layouts;
  std::vector<CommMap> uneven_maps = maps;
  std::tie(uneven_maps[1], uneven[1]) = RingsOfBlocks(12, {4});
  EXPECT_NE(message(uneven_maps, uneven)
                .find("component 1's size is neither fixed nor P/4 at "
                      "every count (4 of 12)"),
            std::string::npos)
      << message(uneven_maps, uneven);
}

}  // namespace
}  // namespace pas2p::patterns
