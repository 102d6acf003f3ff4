#include "pas2p/patterns/serialize.h"

#include <array>
#include <utility>

namespace pas2p::patterns {
namespace {

using nlohmann::json;

constexpr std::array<std::pair<GridShape, const char*>, 9> kShapes = {{
    {GridShape::kLinear, "linear"},
    {GridShape::kSquare, "square"},
    {GridShape::kCube, "cube"},
    {GridShape::kDimsCreate, "dims_create"},
    {GridShape::kFixedFast, "fixed_fast"},
    {GridShape::kFixedSlow, "fixed_slow"},
    {GridShape::kOptimalShapeXYZ, "optimal_shape_xyz"},
    {GridShape::kComponents, "components"},
    {GridShape::kInterleavedComponents, "interleaved_components"},
}};
constexpr std::array<std::pair<CountRule, const char*>, 7> kRules = {{
    {CountRule::kAny, "any"},
    {CountRule::kSquares, "squares"},
    {CountRule::kCubes, "cubes"},
    {CountRule::kPowersOfTwo, "powers_of_two"},
    {CountRule::kPowersOfFour, "powers_of_four"},
    {CountRule::kMultiplesOf, "multiples_of"},
    {CountRule::kGrid, "grid"},
}};
constexpr std::array<std::pair<Family, const char*>, 9> kFamilies = {{
    {Family::kStar, "star"},
    {Family::kGroupAll, "group_all"},
    {Family::kXorExchange, "xor_exchange"},
    {Family::kBitPermute, "bit_permute"},
    {Family::kStencil, "stencil"},
    {Family::kTranspose, "transpose"},
    {Family::kUnion, "union"},
    {Family::kDissemination, "dissemination"},
    {Family::kComponents, "components"},
}};
constexpr std::array<std::pair<StarDirection, const char*>, 3> kDirections = {{
    {StarDirection::kToRoot, "to_root"},
    {StarDirection::kFromRoot, "from_root"},
    {StarDirection::kBoth, "both"},
}};
constexpr std::array<std::pair<BitPermutation, const char*>, 4> kPermutations = {{
    {BitPermutation::kRotate, "rotate"},
    {BitPermutation::kRotateHalf, "rotate_half"},
    {BitPermutation::kReverse, "reverse"},
    {BitPermutation::kTransposeHigh, "transpose_high"},
}};
constexpr std::array<std::pair<BitField, const char*>, 3> kBitFields = {{
    {BitField::kRank, "rank"},
    {BitField::kLowHalf, "low_half"},
    {BitField::kHighHalf, "high_half"},
}};

constexpr std::array<std::pair<TreeRole, const char*>, 5> kTreeRoles = {{
    {TreeRole::kNone, "none"},
    {TreeRole::kLowParent, "low_parent"},
    {TreeRole::kLowChild, "low_child"},
    {TreeRole::kHighParent, "high_parent"},
    {TreeRole::kHighChild, "high_child"},
}};

template <typename E, std::size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

template <typename E, std::size_t N>
E ValueOf(const std::array<std::pair<E, const char*>, N>& table, const json& j,
          const std::string& field, const std::string& origin) {
  std::string name = j.at(field).get<std::string>();
  std::string expected;
  for (const auto& [v, n] : table) {
    if (name == n) return v;
    expected += (expected.empty() ? "" : ", ") + std::string(n);
  }
  throw UserError(origin + ": field \"" + field + "\" is \"" + name + "\", expected one of " +
                  expected);
}

// Runs `read`, turning JSON type/missing-key errors into UserError naming the origin.
template <typename F>
auto Guarded(const std::string& origin, const std::string& what, F read) {
  try {
    return read();
  } catch (const json::exception& e) {
    throw UserError(origin + ": malformed " + what + ": " + e.what());
  }
}

json IndexJson(const IndexRule& r) { return {{"from_end", r.from_end}, {"index", r.index}}; }
IndexRule IndexFromJson(const json& j) {
  return {j.at("from_end").get<bool>(), j.at("index").get<std::int64_t>()};
}

}  // namespace

json ToJson(const GridRule& grid) {
  return {{"shape", NameOf(kShapes, grid.shape)},
          {"ndims", grid.ndims},
          {"order", grid.order},
          {"fixed", grid.fixed},
          {"min_extent", grid.min_extent}};
}

GridRule GridRuleFromJson(const json& j, const std::string& origin) {
  return Guarded(origin, "grid", [&] {
    GridRule g;
    g.shape = ValueOf(kShapes, j, "shape", origin);
    g.ndims = j.at("ndims").get<int>();
    g.order = j.at("order").get<std::vector<int>>();
    g.fixed = j.at("fixed").get<std::int64_t>();
    g.min_extent = j.at("min_extent").get<std::int64_t>();
    if (g.shape == GridShape::kDimsCreate && static_cast<int>(g.order.size()) != g.ndims) {
      throw UserError(origin + ": grid \"order\" must list " + std::to_string(g.ndims) +
                      " dimensions");
    }
    if ((g.shape == GridShape::kComponents || g.shape == GridShape::kInterleavedComponents) &&
        (g.ndims < 2 || static_cast<int>(g.order.size()) != g.ndims - 1 || g.fixed < 1)) {
      throw UserError(origin + ": grid shape \"" + j.at("shape").get<std::string>() +
                      "\" needs \"fixed\" >= 1 and an \"order\" of " + std::to_string(g.ndims - 1) +
                      " dimensions");
    }
    if (g.shape == GridShape::kOptimalShapeXYZ && g.ndims != 3) {
      throw UserError(origin + ": grid shape \"optimal_shape_xyz\" is 3-D (\"ndims\": 3)");
    }
    return g;
  });
}

json ToJson(const ValidCounts& v) {
  return {{"rule", NameOf(kRules, v.rule)},
          {"min_count", v.min_count},
          {"factor", v.factor},
          {"grid", ToJson(v.grid)},
          {"description", v.Describe()}};
}

ValidCounts ValidCountsFromJson(const json& j, const std::string& origin) {
  return Guarded(origin, "valid counts", [&] {
    ValidCounts v;
    v.rule = ValueOf(kRules, j, "rule", origin);
    v.min_count = j.at("min_count").get<std::int64_t>();
    v.factor = j.at("factor").get<std::int64_t>();
    v.grid = GridRuleFromJson(j.at("grid"), origin);
    return v;
  });
}

namespace {

// Blocks' sizes (ComponentSize) of components and of communicators of unequal blocks.
json SizesJson(const std::vector<ComponentSize>& sizes) {
  json out = json::array();
  for (const ComponentSize& c : sizes)
    out.push_back({{"fixed", c.fixed}, {"num", c.num}, {"den", c.den}});
  return out;
}

std::vector<ComponentSize> SizesFromJson(const json& j, const std::string& origin,
                                         const std::string& what) {
  std::vector<ComponentSize> sizes;
  for (const json& c : j) {
    ComponentSize size;
    size.fixed = c.at("fixed").get<std::int64_t>();
    size.num = c.at("num").get<std::int64_t>();
    size.den = c.at("den").get<std::int64_t>();
    if (size.fixed < 0 || size.den < 1 ||
        (size.fixed == 0 && (size.num < 1 || size.num >= size.den))) {
      throw UserError(origin + ": " + what +
                      ": a block's size is \"fixed\" > 0 ranks or P x \"num\" / \"den\" "
                      "with 0 < num < den");
    }
    sizes.push_back(size);
  }
  return sizes;
}

}  // namespace

json ToJson(const GeneralEquation& eq) {
  json bits = json::array();
  for (const IndexRule& b : eq.bits) bits.push_back(IndexJson(b));
  json terms = json::array();
  for (const GeneralEquation& t : eq.terms) terms.push_back(ToJson(t));
  json rivals = json::array();
  for (const GeneralEquation& r : eq.rivals) rivals.push_back(ToJson(r));
  return {{"family", NameOf(kFamilies, eq.family)},
          {"name", eq.name},
          {"description", eq.Describe()},
          {"root", IndexJson(eq.root)},
          {"star_direction", NameOf(kDirections, eq.star_direction)},
          {"grid", ToJson(eq.grid)},
          {"group_dims", eq.group_dims},
          {"include_self", eq.include_self},
          {"offsets", eq.offsets},
          {"periodic", eq.periodic},
          {"skip_self", eq.skip_self},
          {"bits", bits},
          {"all_bits", eq.all_bits},
          {"bit_field", NameOf(kBitFields, eq.bit_field)},
          {"tree_role", NameOf(kTreeRoles, eq.tree_role)},
          {"folded", eq.folded},
          {"fold_pairs", eq.fold_pairs},
          {"shift_sign", eq.shift_sign},
          {"permutation", NameOf(kPermutations, eq.permutation)},
          {"rotate", eq.rotate},
          {"valid", ToJson(eq.valid)},
          {"traced_counts", eq.traced_counts},
          {"alternatives", eq.alternatives},
          {"rivals", rivals},
          {"terms", terms},
          {"component_sizes", SizesJson(eq.component_sizes)}};
}

GeneralEquation GeneralEquationFromJson(const json& j, const std::string& origin) {
  return Guarded(origin, "communication equation", [&] {
    GeneralEquation eq;
    eq.family = ValueOf(kFamilies, j, "family", origin);
    eq.name = j.at("name").get<std::string>();
    eq.root = IndexFromJson(j.at("root"));
    eq.star_direction = ValueOf(kDirections, j, "star_direction", origin);
    eq.grid = GridRuleFromJson(j.at("grid"), origin);
    eq.group_dims = j.at("group_dims").get<std::vector<bool>>();
    eq.include_self = j.at("include_self").get<bool>();
    eq.offsets = j.at("offsets").get<std::vector<std::vector<std::int64_t>>>();
    eq.periodic = j.at("periodic").get<std::vector<bool>>();
    eq.skip_self = j.value("skip_self", false);  // absent in files written before it existed
    for (const json& b : j.at("bits")) eq.bits.push_back(IndexFromJson(b));
    eq.all_bits = j.at("all_bits").get<bool>();
    // Models written before bit fields existed count bits in the whole rank.
    if (j.contains("bit_field")) eq.bit_field = ValueOf(kBitFields, j, "bit_field", origin);
    // Nor tree roles: every rank of the pairs.
    if (j.contains("tree_role")) eq.tree_role = ValueOf(kTreeRoles, j, "tree_role", origin);
    // Nor folded exchanges: every rank of the pairs.
    eq.folded = j.value("folded", false);
    eq.fold_pairs = j.value("fold_pairs", false);
    eq.shift_sign = j.value("shift_sign", std::int64_t{0});
    if ((eq.family == Family::kDissemination) != (eq.shift_sign == 1 || eq.shift_sign == -1)) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": \"shift_sign\" must be 1 or -1 exactly for family "
                      "\"dissemination\"");
    }
    if (eq.fold_pairs && !eq.folded) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": \"fold_pairs\" needs \"folded\"");
    }
    eq.permutation = ValueOf(kPermutations, j, "permutation", origin);
    eq.rotate = j.at("rotate").get<std::int64_t>();
    eq.valid = ValidCountsFromJson(j.at("valid"), origin);
    eq.traced_counts = j.at("traced_counts").get<std::vector<std::int64_t>>();
    eq.alternatives = j.at("alternatives").get<std::vector<std::string>>();
    for (const json& t : j.at("terms")) eq.terms.push_back(GeneralEquationFromJson(t, origin));
    // Absent in files written before rivals were kept: none known.
    if (j.contains("rivals")) {
      for (const json& r : j.at("rivals")) {
        eq.rivals.push_back(GeneralEquationFromJson(r, origin));
        if (!eq.rivals.back().rivals.empty()) {
          throw UserError(origin + ": communication equation \"" + eq.name +
                          "\": a rival cannot have rivals of its own");
        }
      }
    }
    if ((eq.family == Family::kUnion || eq.family == Family::kComponents) != !eq.terms.empty()) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": \"terms\" must be given exactly for families \"union\" and "
                      "\"components\"");
    }
    // Absent in files written before components existed: none.
    if (j.contains("component_sizes")) {
      eq.component_sizes = SizesFromJson(j.at("component_sizes"), origin,
                                         "communication equation \"" + eq.name + "\"");
    }
    if (eq.family == Family::kComponents && eq.component_sizes.size() + 1 != eq.terms.size()) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": family \"components\" needs one \"terms\" entry per component, "
                      "one more than \"component_sizes\" (the last holds the other ranks)");
    }
    if (eq.tree_role != TreeRole::kNone &&
        (eq.family != Family::kXorExchange || eq.all_bits || eq.bits.size() != 1 ||
         eq.bit_field != BitField::kRank)) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": a \"tree_role\" needs family \"xor_exchange\" with one bit of the "
                      "whole rank (\"bits\" of one entry, \"all_bits\" false, \"bit_field\" "
                      "\"rank\")");
    }
    if (eq.folded && (eq.family != Family::kXorExchange || eq.bit_field != BitField::kRank ||
                      eq.root != IndexRule{})) {
      throw UserError(
          origin + ": communication equation \"" + eq.name +
          "\": \"folded\" needs family \"xor_exchange\" on the whole rank (\"bit_field\" "
          "\"rank\") and the root rank 0");
    }
    if (eq.tree_role != TreeRole::kNone &&
        (eq.root.index < 0 || eq.valid.min_count <= eq.root.index)) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": the tree's \"root\" (" + eq.root.Describe("P") +
                      ") must be a rank at every valid count (\"valid\" \"min_count\" " +
                      std::to_string(eq.valid.min_count) + " is too small for it)");
    }
    const std::size_t nd = static_cast<std::size_t>(eq.grid.ndims);
    bool grid_family = eq.family == Family::kStencil || eq.family == Family::kGroupAll ||
                       eq.family == Family::kTranspose;
    bool ok = !grid_family || eq.family == Family::kTranspose ||
              (eq.family == Family::kGroupAll && eq.group_dims.size() == nd) ||
              (eq.family == Family::kStencil && eq.periodic.size() == nd);
    for (const auto& o : eq.offsets) ok = ok && o.size() == nd;
    if (!ok) {
      throw UserError(origin + ": communication equation \"" + eq.name +
                      "\": group_dims/periodic/offsets must have one entry per grid "
                      "dimension (" +
                      std::to_string(nd) + ")");
    }
    return eq;
  });
}

json ToJson(const CommunicatorRule& rule) {
  json rivals = json::array();
  for (const CommunicatorRule& r : rule.rivals) rivals.push_back(ToJson(r));
  return {{"name", rule.name},
          {"description", rule.Describe()},
          {"grid", ToJson(rule.grid)},
          {"group_dims", rule.group_dims},
          {"only_group_of_rank0", rule.only_group_of_rank0},
          {"valid", ToJson(rule.valid)},
          {"traced_counts", rule.traced_counts},
          {"alternatives", rule.alternatives},
          {"rivals", rivals},
          {"block_sizes", SizesJson(rule.block_sizes)}};
}

CommunicatorRule CommunicatorRuleFromJson(const json& j, const std::string& origin) {
  return Guarded(origin, "communicator rule", [&] {
    CommunicatorRule rule;
    rule.name = j.at("name").get<std::string>();
    rule.grid = GridRuleFromJson(j.at("grid"), origin);
    rule.group_dims = j.at("group_dims").get<std::vector<bool>>();
    rule.only_group_of_rank0 = j.at("only_group_of_rank0").get<bool>();
    rule.valid = ValidCountsFromJson(j.at("valid"), origin);
    rule.traced_counts = j.at("traced_counts").get<std::vector<std::int64_t>>();
    rule.alternatives = j.at("alternatives").get<std::vector<std::string>>();
    // Absent in files written before blocks of unequal sizes: none.
    if (j.contains("block_sizes")) {
      rule.block_sizes =
          SizesFromJson(j.at("block_sizes"), origin, "communicator rule \"" + rule.name + "\"");
    }
    if (j.contains("rivals")) {  // absent in files written before rivals were kept
      for (const json& r : j.at("rivals")) {
        rule.rivals.push_back(CommunicatorRuleFromJson(r, origin));
        if (!rule.rivals.back().rivals.empty()) {
          throw UserError(origin + ": communicator rule \"" + rule.name +
                          "\": a rival cannot have rivals of its own");
        }
      }
    }
    if (rule.group_dims.size() != static_cast<std::size_t>(rule.grid.ndims)) {
      throw UserError(origin + ": communicator rule \"" + rule.name +
                      "\": group_dims must have one entry per grid dimension");
    }
    return rule;
  });
}

}  // namespace pas2p::patterns
