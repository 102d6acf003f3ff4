#include "pas2p/patterns/local_equation.h"

#include <gtest/gtest.h>

#include "pas2p/core/error.h"
#include "test_maps.h"

namespace pas2p::patterns {
namespace {

using testing::TorusEast;

// Paper 001, Table 1: local equations of BT's first communication of phase 1.
TEST(LocalEquation, PaperTable1) {
  const std::vector<std::pair<int, std::string>> table = {
      {9, "[+1 {+2,+3}], [-2 {+1,+3}]"},
      {16, "[+1 {+3,+4}], [-3 {+1,+4}]"},
      {25, "[+1 {+4,+5}], [-4 {+1,+5}]"},
      {36, "[+1 {+5,+6}], [-5 {+1,+6}]"},
  };
  for (const auto& [p, formula] : table) {
    LocalEquation eq = AnalyzeLocal(TorusEast(p), 1, 1);
    EXPECT_EQ(eq.pattern_class, PatternClass::kStatic) << p;
    EXPECT_EQ(eq.Formula(), formula) << p;
    EXPECT_EQ(eq.ToString(), "EC2 {phase 1, comm 1, " + formula + "}");
    EXPECT_EQ(eq.shape, "torus") << p;
  }
  EXPECT_EQ(AnalyzeLocal(TorusEast(16)).Sequence(), "{+1,+1,+1,-3} x 4");
}

TEST(LocalEquation, ButterflyIsEc1Exchange) {
  LocalEquation eq = AnalyzeLocal(testing::Xor(8, {0, 2}), 2, 3);
  EXPECT_EQ(eq.pattern_class, PatternClass::kDynamic);
  EXPECT_EQ(eq.dynamic_kind, DynamicKind::kExchange);
  EXPECT_EQ(eq.bits, (std::vector<int>{0, 2}));
  EXPECT_EQ(eq.ToString(), "EC1 {phase 2, comm 3, exchange, bits {0,2}}");
}

TEST(LocalEquation, TransposeIsEc1Permutation) {
  LocalEquation eq = AnalyzeLocal(testing::Transpose(16));
  EXPECT_EQ(eq.pattern_class, PatternClass::kDynamic);
  EXPECT_EQ(eq.dynamic_kind, DynamicKind::kPermutation);
  EXPECT_EQ(eq.permutation, (std::vector<int>{2, 3, 0, 1}));
  EXPECT_EQ(eq.Formula(), "permutation bits (0->2, 1->3, 2->0, 3->1)");
  EXPECT_EQ(eq.shape, "transpose");
}

TEST(LocalEquation, PaperFigure4SequenceIsStatic) {
  // {+3, +1, -1, -3} x 2 over 8 processes (paper 001, Fig. 4).
  CommMap m{8, {{3}, {2}, {1}, {0}, {7}, {6}, {5}, {4}}};
  LocalEquation eq = AnalyzeLocal(m);
  EXPECT_EQ(eq.pattern_class, PatternClass::kStatic);
  EXPECT_EQ(eq.Sequence(), "{+3,+1,-1,-3} x 2");
  EXPECT_EQ(eq.repetitions, 2);
}

TEST(LocalEquation, MeshBoundaryRanksHaveNoPartner) {
  CommMap line{4, {{1}, {2}, {3}, {}}};
  LocalEquation eq = AnalyzeLocal(line);
  EXPECT_EQ(eq.Formula(), "[+1 {+3,+1}], [- {+1,+1}]");
  EXPECT_EQ(eq.shape, "shift");
  EXPECT_EQ(AnalyzeLocal(testing::Mesh(9)).shape, "mesh");
  EXPECT_EQ(AnalyzeLocal(testing::Wavefront(16)).shape, "wavefront");
  EXPECT_EQ(AnalyzeLocal(testing::Ring(6)).shape, "ring");
  EXPECT_EQ(AnalyzeLocal(testing::ToMaster(6)).shape, "master-worker");
}

TEST(LocalEquation, DistanceMatrixAndDisplacements) {
  CommMap m = TorusEast(4);
  auto disp = Displacements(m);
  EXPECT_EQ(disp[1], (std::vector<std::int64_t>{-1}));
  EXPECT_EQ(FormatDistanceMatrix(m),
            "     0  1  2  3\n"
            "  0  . +1  .  .\n"
            "  1 -1  .  .  .\n"
            "  2  .  .  . +1\n"
            "  3  .  . -1  .\n");
}

TEST(LocalEquation, MalformedMapIsAUserError) {
  CommMap bad{3, {{1}, {5}, {0}}};
  EXPECT_THROW(AnalyzeLocal(bad), UserError);
  EXPECT_THROW(CommMap::FromPairs(3, {{0, 3}}), UserError);
  CommMap from = CommMap::FromPairs(3, {{0, 1}, {0, 1}, {2, 0}});
  EXPECT_EQ(from.dests, (std::vector<std::vector<int>>{{1}, {}, {0}}));
}

}  // namespace
}  // namespace pas2p::patterns
