#include "pas2p/patterns/serialize.h"

#include <gtest/gtest.h>

#include "test_maps.h"

namespace pas2p::patterns {
namespace {

TEST(Serialize, GeneralEquationRoundTripsAndStillEvaluates) {
  std::vector<CommMap> halo, butterfly, both;
  for (int p : {8, 12, 16, 24}) halo.push_back(testing::Halo3D(p, DimsCreate(p, 3)));
  for (int p : {4, 8, 16}) butterfly.push_back(testing::Xor(p, {__builtin_ctz(p) - 1}));
  for (int p : {9, 16, 25}) {  // a union: ring neighbours plus reports to rank 0
    CommMap m = testing::Ring(p);
    for (int r = 2; r < p - 1; ++r) m.dests[r].push_back(0);
    both.push_back(m.Normalized());
  }
  // Bits counted in the row of a 2^ceil(n/2) x 2^floor(n/2) grid: the column's top bit.
  std::vector<CommMap> row_top;
  for (int p : {4, 8, 16, 32}) {
    const int n = __builtin_ctz(static_cast<unsigned>(p));
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) m.dests[r] = {r ^ (1 << ((n + 1) / 2 - 1))};
    row_top.push_back(m);
  }
  // One side of a binomial tree's level 1: the ranks whose lowest set bit is 1 send down.
  std::vector<CommMap> tree;
  for (int p : {4, 6, 8, 12}) {
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) {
      if (r % 4 == 2) m.dests[r] = {r - 2};
    }
    tree.push_back(m);
  }
  for (const auto& maps : {halo, butterfly, both, row_top, tree}) {
    GeneralEquation eq = FitGeneralEquation(maps);
    nlohmann::json j = ToJson(eq);
    GeneralEquation back = GeneralEquationFromJson(nlohmann::json::parse(j.dump()), "model.json");
    EXPECT_EQ(ToJson(back), j);
    EXPECT_EQ(back.tree_role, eq.tree_role);
    for (std::int64_t src : {0, 5, 6, 63}) EXPECT_EQ(back.Dests(src, 64), eq.Dests(src, 64));
  }
}

TEST(Serialize, CommunicatorRuleRoundTrips) {
  std::vector<CommunicatorLayout> rows;
  for (int p : {9, 16, 25}) {
    int s = testing::Side(p);
    CommunicatorLayout l{p, std::vector<std::vector<int>>(static_cast<std::size_t>(s))};
    for (int r = 0; r < p; ++r) l.groups[r / s].push_back(r);
    rows.push_back(l);
  }
  CommunicatorRule rule = FitCommunicators(rows);
  CommunicatorRule back = CommunicatorRuleFromJson(ToJson(rule), "model.json");
  EXPECT_EQ(back.At(49).GroupOf(8), rule.At(49).GroupOf(8));
  EXPECT_EQ(ToJson(back), ToJson(rule));
}

// Rivals go into the file and come back (they still evaluate); files without them read as
// none; a rival with rivals of its own is refused.
TEST(Serialize, RivalsRoundTrip) {
  std::vector<CommMap> maps;
  std::vector<CommunicatorLayout> blocks;
  for (int p : {8, 12, 16}) {
    const int cols = static_cast<int>(DimsCreate(p, 2)[1]);
    CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
    for (int r = 0; r < p; ++r) {
      if (r % cols > 0) m.dests[static_cast<std::size_t>(r)].push_back(r - 1);
    }
    maps.push_back(m);
    CommunicatorLayout l{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p / 4))};
    for (int r = 0; r < p; ++r) l.groups[static_cast<std::size_t>(r / 4)].push_back(r);
    blocks.push_back(l);
  }
  const GeneralEquation eq = FitGeneralEquation(maps);
  ASSERT_FALSE(eq.rivals.empty());
  const GeneralEquation back = GeneralEquationFromJson(ToJson(eq), "model.json");
  ASSERT_EQ(back.rivals.size(), eq.rivals.size());
  EXPECT_EQ(ToJson(back), ToJson(eq));
  for (std::size_t i = 0; i < eq.rivals.size(); ++i) {
    EXPECT_EQ(Disagree(back, back.rivals[i], 24), Disagree(eq, eq.rivals[i], 24));
  }
  nlohmann::json old = ToJson(eq);
  old.erase("rivals");
  EXPECT_TRUE(GeneralEquationFromJson(old, "model.json").rivals.empty());
  nlohmann::json nested = ToJson(eq);
  nested["rivals"][0]["rivals"] = nlohmann::json::array({ToJson(eq.rivals[0])});
  EXPECT_THROW(GeneralEquationFromJson(nested, "model.json"), UserError);

  const CommunicatorRule rule = FitCommunicators(blocks);
  ASSERT_FALSE(rule.rivals.empty());
  EXPECT_EQ(ToJson(CommunicatorRuleFromJson(ToJson(rule), "model.json")), ToJson(rule));
  nlohmann::json bad = ToJson(rule);
  bad["rivals"][0]["rivals"] = nlohmann::json::array({ToJson(rule.rivals[0])});
  EXPECT_THROW(CommunicatorRuleFromJson(bad, "model.json"), UserError);
}

TEST(Serialize, HpcgGridRoundTripsAndIsThreeDimensional) {
  const GridRule hpcg{GridShape::kOptimalShapeXYZ, 3, {}, 0, 2};
  nlohmann::json j = ToJson(hpcg);
  EXPECT_EQ(j.at("shape"), "optimal_shape_xyz");
  EXPECT_EQ(GridRuleFromJson(j, "m.json"), hpcg);
  j["ndims"] = 2;
  try {
    GridRuleFromJson(j, "m.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"optimal_shape_xyz\" is 3-D"), std::string::npos)
        << e.what();
  }
}

TEST(Serialize, ComponentsGridRoundTripsAndNeedsItsOrder) {
  const GridRule halves{GridShape::kComponents, 3, {1, 0}, 2, 1};
  nlohmann::json j = ToJson(halves);
  EXPECT_EQ(j.at("shape"), "components");
  EXPECT_EQ(GridRuleFromJson(j, "m.json"), halves);
  j["order"] = {0};
  try {
    GridRuleFromJson(j, "m.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"components\" needs"), std::string::npos) << e.what();
  }
  const GridRule even_odd{GridShape::kInterleavedComponents, 3, {1, 0}, 2, 1};
  j = ToJson(even_odd);
  EXPECT_EQ(j.at("shape"), "interleaved_components");
  EXPECT_EQ(GridRuleFromJson(j, "m.json"), even_odd);
  j["fixed"] = 0;
  try {
    GridRuleFromJson(j, "m.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"interleaved_components\" needs"), std::string::npos)
        << e.what();
  }
}

// A tree's root is saved with it and must be a rank at every count the equation allows.
TEST(Serialize, ATreesRootRoundTripsAndMustBeARank) {
  GeneralEquation eq;
  eq.family = Family::kXorExchange;
  eq.name = "binomial tree, children (root 3)";
  eq.bits = {{false, 1}};
  eq.tree_role = TreeRole::kLowChild;
  eq.root = {false, 3};
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 4;
  nlohmann::json j = ToJson(eq);
  const GeneralEquation back = GeneralEquationFromJson(j, "m.json");
  EXPECT_EQ(back.root, eq.root);
  EXPECT_EQ(back.Dests(0, 8), eq.Dests(0, 8));
  EXPECT_EQ(back.Dests(1, 8), (std::vector<std::int64_t>{7}));  // v = 6 sends to v = 4
  j["valid"]["min_count"] = 2;
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL() << "a root beyond the smallest valid count was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the tree's \"root\" (3) must be a rank"),
              std::string::npos)
        << e.what();
  }
}

// A folded exchange keeps its folding (read as an exchange of every rank it would give rank 5
// of 6 a partner); a file without the field is not folded; a folding of another family is
// refused by name.
TEST(Serialize, AFoldedExchangeRoundTrips) {
  GeneralEquation eq;
  eq.family = Family::kXorExchange;
  eq.name = "pairwise exchange, folded";
  eq.bits = {{false, 0}};
  eq.folded = true;
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 2;
  nlohmann::json j = ToJson(eq);
  const GeneralEquation back = GeneralEquationFromJson(j, "m.json");
  EXPECT_TRUE(back.folded);
  EXPECT_TRUE(back.Dests(5, 6).empty());
  EXPECT_EQ(back.Dests(3, 6), (std::vector<std::int64_t>{2}));
  j.erase("folded");
  EXPECT_EQ(GeneralEquationFromJson(j, "m.json").Dests(5, 6), (std::vector<std::int64_t>{4}));
  j = ToJson(eq);
  j["family"] = "star";
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL() << "a folded star was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"folded\" needs family \"xor_exchange\""),
              std::string::npos)
        << e.what();
  }
}

// An exchange folded in pairs keeps the fold in pairs (read as the other fold, rank 5 of 6
// would exchange with rank 1; in pairs, renumbered 3, with rank 4); the field without
// "folded" is refused by name.
TEST(Serialize, AnExchangeFoldedInPairsRoundTrips) {
  GeneralEquation eq;
  eq.family = Family::kXorExchange;
  eq.name = "pairwise exchange, folded in pairs";
  eq.bits = {{false, 0}};
  eq.folded = true;
  eq.fold_pairs = true;
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 2;
  nlohmann::json j = ToJson(eq);
  const GeneralEquation back = GeneralEquationFromJson(j, "m.json");
  EXPECT_TRUE(back.fold_pairs);
  EXPECT_EQ(back.Dests(5, 6), (std::vector<std::int64_t>{4}));
  EXPECT_TRUE(back.Dests(0, 6).empty());
  j.erase("fold_pairs");
  EXPECT_EQ(GeneralEquationFromJson(j, "m.json").Dests(5, 6), (std::vector<std::int64_t>{}));
  j = ToJson(eq);
  j["folded"] = false;
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL() << "a fold in pairs without \"folded\" was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"fold_pairs\" needs \"folded\""), std::string::npos)
        << e.what();
  }
}

// A dissemination step keeps its sign; a dissemination without one is refused by name.
TEST(Serialize, ADisseminationStepRoundTrips) {
  GeneralEquation eq;
  eq.family = Family::kDissemination;
  eq.name = "dissemination step";
  eq.bits = {{false, 1}};
  eq.shift_sign = -1;
  eq.valid.rule = CountRule::kAny;
  eq.valid.min_count = 2;
  nlohmann::json j = ToJson(eq);
  const GeneralEquation back = GeneralEquationFromJson(j, "m.json");
  EXPECT_EQ(back.family, Family::kDissemination);
  EXPECT_EQ(back.Dests(1, 6), (std::vector<std::int64_t>{5}));
  j.erase("shift_sign");
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL() << "a dissemination without a sign was loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("\"shift_sign\" must be 1 or -1"), std::string::npos)
        << e.what();
  }
}

TEST(Serialize, ComponentsRoundTrip) {
  std::vector<CommMap> maps;
  std::vector<CommunicatorLayout> layouts;
  for (const int p : {8, 12, 16}) {  // P/4 ranks in a ring, the others sending to their first
    CommMap map;
    map.nprocs = p;
    map.dests.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p / 4; ++r) map.dests[static_cast<std::size_t>(r)] = {(r + 1) % (p / 4)};
    for (int r = p / 4 + 1; r < p; ++r) map.dests[static_cast<std::size_t>(r)] = {p / 4};
    CommunicatorLayout layout;
    layout.nprocs = p;
    layout.groups.resize(2);
    for (int r = 0; r < p; ++r) layout.groups[r < p / 4 ? 0 : 1].push_back(r);
    maps.push_back(map);
    layouts.push_back(layout);
  }
  const GeneralEquation eq = FitComponents(maps, layouts);
  nlohmann::json j = ToJson(eq);
  const GeneralEquation back = GeneralEquationFromJson(j, "m.json");
  EXPECT_EQ(back.Describe(), eq.Describe());
  EXPECT_EQ(back.At(400).Map(), eq.At(400).Map());
  EXPECT_EQ(back.At(400).Dests(399), (std::vector<std::int64_t>{100}));
  j["component_sizes"] = nlohmann::json::array();
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL() << "components without their sizes were loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("one more than \"component_sizes\""), std::string::npos)
        << e.what();
  }
}

TEST(Serialize, BlocksOfUnequalSizesRoundTrip) {
  std::vector<CommunicatorLayout> layouts = {
      {8, {{0, 1}, {2, 3, 4, 5, 6, 7}}},
      {12, {{0, 1, 2}, {3, 4, 5, 6, 7, 8, 9, 10, 11}}},
      {16, {{0, 1, 2, 3}, {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}};
  const CommunicatorRule rule = FitCommunicators(layouts);
  const CommunicatorRule back = CommunicatorRuleFromJson(ToJson(rule), "m.json");
  EXPECT_EQ(back.Describe(), rule.Describe());
  EXPECT_EQ(back.At(400).GroupSizeOf(0), 100);
  EXPECT_EQ(back.At(400).GroupSizeOf(399), 300);
}

TEST(Serialize, BadFieldsNameTheFileAndField) {
  GeneralEquation eq = FitGeneralEquation(std::vector<CommMap>{testing::Ring(4), testing::Ring(6)});
  nlohmann::json j = ToJson(eq);
  j["family"] = "spiral";
  try {
    GeneralEquationFromJson(j, "traces/model.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("traces/model.json: field \"family\" is \"spiral\""),
              std::string::npos)
        << e.what();
  }
  j = ToJson(eq);
  j.erase("offsets");
  EXPECT_THROW(GeneralEquationFromJson(j, "m.json"), UserError);
  j = ToJson(eq);
  j["offsets"] = {{1, 0}};
  EXPECT_THROW(GeneralEquationFromJson(j, "m.json"), UserError);
  // A tree level is one bit of an exchange by bit: on a ring it means nothing.
  j = ToJson(eq);
  j["tree_role"] = "low_child";
  try {
    GeneralEquationFromJson(j, "m.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("a \"tree_role\" needs family \"xor_exchange\""),
              std::string::npos)
        << e.what();
  }
  j["tree_role"] = "sideways";
  EXPECT_THROW(GeneralEquationFromJson(j, "m.json"), UserError);
}

}  // namespace
}  // namespace pas2p::patterns
