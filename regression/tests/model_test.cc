#include "pas2p/regression/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pas2p/core/error.h"
#include "pas2p/regression/fit.h"
#include "test_data.h"

namespace pas2p::regression {
namespace {

using ::testing::HasSubstr;
using testing::Noise;
using testing::Sample;

FittedModel PaperExample() {
  FittedModel model;
  model.curve = Curve{CurveKind::kPowerLaw, 0, 1, 0, {5965, -0.32}};
  model.training = {{9, 2892}, {16, 2496}, {25, 2132}, {36, 1849}};
  model.loo_error = 0.011;
  return model;
}

TEST(Describe, ReadsLikeTheIssueExample) {
  EXPECT_EQ(PaperExample().Describe("bytes per message"),
            "bytes per message \u2248 5965\u00b7P^\u22120.32, from 4 counts (9\u201336), LOO error "
            "1.1%");
  EXPECT_THAT(PaperExample().Describe("bytes per message", 49),
              HasSubstr("; at P = 49: 1717 [1717, 1717]"));
}

TEST(Formula, EveryKind) {
  EXPECT_EQ((Curve{CurveKind::kConstant, 0, 1, 0, {16}}).Formula(), "16");
  EXPECT_EQ((Curve{CurveKind::kSingleTerm, 2, 3, 1, {2.5}}).Formula(),
            "2.5\u00b7P^(2/3)\u00b7log2(P)");
  EXPECT_EQ((Curve{CurveKind::kSingleTerm, 0, 1, 2, {1}}).Formula(), "log2(P)^2");
  EXPECT_EQ((Curve{CurveKind::kNormalForm, -1, 4, 0, {12, -3.5}}).Formula(),
            "12 \u2212 3.5\u00b7P^(\u22121/4)");
  EXPECT_EQ((Curve{CurveKind::kNormalForm, 1, 1, 0, {-4, 4}}).Formula(), "\u22124 + 4\u00b7P");
  EXPECT_EQ((Curve{CurveKind::kPowerLawOffset, 0, 1, 0, {2, 1.3, 40}}).Formula(),
            "2\u00b7P^1.3 + 40");
  EXPECT_EQ((Curve{CurveKind::kExponential, 0, 1, 0, {100, 0.05}}).Formula(),
            "100\u00b7e^(0.05\u00b7P)");
  EXPECT_EQ((Curve{CurveKind::kExponentialOffset, 0, 1, 0, {1, -0.5, -7}}).Formula(),
            "e^(\u22120.5\u00b7P) \u2212 7");
  EXPECT_EQ((Curve{CurveKind::kSingleTerm, -1, 1, 0, {1234567}}).Formula(),
            "1.235\u00b710^6\u00b7P^\u22121");
}

TEST(Evaluate, EveryKind) {
  EXPECT_EQ((Curve{CurveKind::kConstant, 0, 1, 0, {16}}).Evaluate(1e6), 16);
  EXPECT_DOUBLE_EQ((Curve{CurveKind::kSingleTerm, 1, 2, 1, {3}}).Evaluate(64), 3 * 8 * 6);
  EXPECT_DOUBLE_EQ((Curve{CurveKind::kNormalForm, -1, 1, 0, {1, 8}}).Evaluate(4), 3);
  EXPECT_DOUBLE_EQ((Curve{CurveKind::kPowerLaw, 0, 1, 0, {2, 0.5}}).Evaluate(16), 8);
  EXPECT_DOUBLE_EQ((Curve{CurveKind::kExponentialOffset, 0, 1, 0, {1, 0, 2}}).Evaluate(5), 3);
}

TEST(Json, RoundTripsExactly) {
  Noise noise(5);
  std::vector<FittedModel> models = {PaperExample()};
  models.push_back(Fit(std::vector<Point>{{9, 2892}, {16, 2496}, {25, 2132}, {36, 1849}}));
  models.push_back(
      Fit(Sample([](double p) { return 100 * std::exp(0.05 * p); }, {4, 9, 16, 25, 36})));
  models.push_back(Fit(Sample([](double p) { return 2 * std::pow(p, 1.3) + 40; },
                              {4, 9, 16, 25, 36}, 0.01, &noise)));
  Options bootstrap;
  bootstrap.interval_method = IntervalMethod::kResidualBootstrap;
  models.push_back(Fit(
      Sample([](double p) { return 1 / 3.0 + std::sqrt(p) / 7; }, {4, 9, 16, 25, 36}, 0.01, &noise),
      bootstrap));
  models.push_back(Fit(Sample([](double) { return 16.0; }, {2, 4, 8})));
  for (const auto& model : models) {
    const std::string text = model.ToJson().dump();
    const FittedModel back = FittedModel::FromJson(nlohmann::json::parse(text));
    EXPECT_EQ(back, model) << text;
    EXPECT_EQ(back.ToJson().dump(), text);
    EXPECT_EQ(back.Interval(1000).low, model.Interval(1000).low);
    EXPECT_EQ(back.Interval(1000).high, model.Interval(1000).high);
  }
}

std::string LoadError(const nlohmann::json& json) {
  try {
    FittedModel::FromJson(json);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Json, MalformedModelsAreExplained) {
  const nlohmann::json good = PaperExample().ToJson();
  EXPECT_EQ(LoadError(good), "no error");
  auto j = good;
  j.erase("loo_error");
  EXPECT_THAT(LoadError(j), HasSubstr("model has no \"loo_error\""));
  j = good;
  j["format"] = "something else";
  EXPECT_THAT(LoadError(j), HasSubstr("\"format\""));
  j = good;
  j["curve"]["kind"] = "spline";
  EXPECT_THAT(LoadError(j), HasSubstr("unknown model kind \"spline\""));
  j = good;
  j["curve"]["coefficients"] = {1, 2, 3};
  EXPECT_THAT(LoadError(j), HasSubstr("power_law curve needs 2 coefficients, got 3"));
  j = good;
  j["training"] = {{1, 2, 3}};
  EXPECT_THAT(LoadError(j), HasSubstr("[p, y]"));
  EXPECT_THAT(LoadError(nlohmann::json::array()), HasSubstr("not a JSON object"));
}

TEST(Names, RoundTrip) {
  for (auto kind : {CurveKind::kConstant, CurveKind::kSingleTerm, CurveKind::kNormalForm,
                    CurveKind::kPowerLaw, CurveKind::kPowerLawOffset, CurveKind::kExponential,
                    CurveKind::kExponentialOffset, CurveKind::kBlockCeil, CurveKind::kBlockFloor}) {
    EXPECT_EQ(CurveKindFromName(CurveKindName(kind)), kind);
  }
  EXPECT_THROW(CurveKindFromName("cubic"), UserError);
  EXPECT_EQ(IntervalMethodFromName("residual_bootstrap"), IntervalMethod::kResidualBootstrap);
  EXPECT_THROW(IntervalMethodFromName("bayes"), UserError);
}

}  // namespace
}  // namespace pas2p::regression
