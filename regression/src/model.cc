// Curve and FittedModel: evaluation, intervals, words and JSON.
#include "pas2p/regression/model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "curve_math.h"
#include "pas2p/core/error.h"

namespace pas2p::regression {
namespace {

constexpr std::string_view kMinus = "\u2212";  // typographic minus, as in "P^−0.32"
constexpr std::string_view kDot = "\u00b7";    // multiplication dot
constexpr const char* kFormatName = "pas2p.regression.model";
constexpr int kFormatVersion = 1;

struct KindName {
  CurveKind kind;
  std::string_view name;
  int parameters;
};
constexpr KindName kKinds[] = {
    {CurveKind::kConstant, "constant", 1},
    {CurveKind::kSingleTerm, "single_term", 1},
    {CurveKind::kNormalForm, "normal_form", 2},
    {CurveKind::kPowerLaw, "power_law", 2},
    {CurveKind::kPowerLawOffset, "power_law_offset", 3},
    {CurveKind::kExponential, "exponential", 2},
    {CurveKind::kExponentialOffset, "exponential_offset", 3},
    {CurveKind::kBlockCeil, "block_ceil", 2},
    {CurveKind::kBlockFloor, "block_floor", 2},
};

// Replaces a leading '-' and the exponent of printf's %g output with typographic forms:
// "-1.235e+06" -> "−1.235·10^6".
std::string Typeset(std::string text) {
  std::string out;
  const auto e = text.find('e');
  std::string mantissa = e == std::string::npos ? text : text.substr(0, e);
  if (!mantissa.empty() && mantissa[0] == '-') {
    out.append(kMinus);
    mantissa.erase(0, 1);
  }
  out += mantissa;
  if (e != std::string::npos) {
    int exponent = std::stoi(text.substr(e + 1));
    out.append(kDot);
    out += "10^";
    if (exponent < 0) {
      out.append(kMinus);
      exponent = -exponent;
    }
    out += std::to_string(exponent);
  }
  return out;
}

std::string FormatNumber(double x, int significant_digits = 4) {
  if (x == 0) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", significant_digits, x);
  return Typeset(buffer);
}

// "P", "P^2", "P^(2/3)", "P^(−1/4)".
std::string FormatFixedPower(int numerator, int denominator) {
  const int g = std::gcd(numerator, denominator);
  if (g > 1) {
    numerator /= g;
    denominator /= g;
  }
  if (numerator == 0) return "";
  if (denominator == 1) {
    if (numerator == 1) return "P";
    return "P^" + Typeset(std::to_string(numerator));
  }
  return "P^(" + Typeset(std::to_string(numerator)) + "/" + std::to_string(denominator) + ")";
}

std::string FormatLog(int log_exponent) {
  if (log_exponent == 0) return "";
  if (log_exponent == 1) return "log2(P)";
  return "log2(P)^" + std::to_string(log_exponent);
}

// "c·factor·factor", dropping empty factors and a coefficient of exactly 1.
std::string Product(double coefficient, const std::vector<std::string>& factors) {
  std::string out;
  bool any = false;
  for (const auto& f : factors) {
    if (f.empty()) continue;
    if (any) out.append(kDot);
    out += f;
    any = true;
  }
  if (!any) return FormatNumber(coefficient);
  if (coefficient == 1) return out;
  if (coefficient == -1) return std::string(kMinus) + out;
  return FormatNumber(coefficient) + std::string(kDot) + out;
}

// "head + tail" or "head − |tail|" where tail is c·factors.
std::string Sum(const std::string& head, double coefficient,
                const std::vector<std::string>& factors) {
  if (coefficient < 0)
    return head + " " + std::string(kMinus) + " " + Product(-coefficient, factors);
  return head + " + " + Product(coefficient, factors);
}

// "P", "sqrt(P)", "cbrt(P)": the side of the process grid a block law splits.
std::string GridSideText(int d) {
  switch (d) {
    case 1:
      return "P";
    case 2:
      return "sqrt(P)";
    case 3:
      return "cbrt(P)";
  }
  return "P^(1/" + std::to_string(d) + ")";
}

// "8·P·ceil(1440/P)^2" or "240·ceil(25/sqrt(P))^2" with `n` as the text of N ("1440" or "N").
std::string BlockFormula(const Curve& curve, const std::string& n) {
  std::string block = std::string(curve.kind == CurveKind::kBlockCeil ? "ceil(" : "floor(") + n +
                      "/" + GridSideText(curve.grid_dimension) + ")";
  if (curve.block_exponent != 1) block += "^" + std::to_string(curve.block_exponent);
  return Product(curve.coefficients[0], {FormatFixedPower(curve.exponent_numerator, 1), block});
}

// "N = 1440" or "N in [1437, 1440]".
std::string NRange(double low, double high) {
  if (low == high) return "N = " + FormatNumber(low, 15);
  return "N in [" + FormatNumber(low, 15) + ", " + FormatNumber(high, 15) + "]";
}

// "bytes sent = 8·P·ceil(N/P)^2, N in [1437, 1440] (1440 used), from 5 counts (4–36), exact;
// also exact (in the interval): c = 32, N in [717, 720]". The ranges of N are read from the
// interval curves (FittedModel::interval_curves holds every exact block law at its smallest and
// largest consistent N), grouped by form and c.
std::string DescribeBlock(const FittedModel& model, std::string_view quantity) {
  struct Group {
    const Curve* curve;
    double low;
    double high;
  };
  auto same = [](const Curve& a, const Curve& b) {
    return a.kind == b.kind && a.exponent_numerator == b.exponent_numerator &&
           a.block_exponent == b.block_exponent && a.grid_dimension == b.grid_dimension &&
           a.coefficients.size() == 2 && b.coefficients.size() == 2 &&
           a.coefficients[0] == b.coefficients[0];
  };
  const Curve& c = model.curve;
  std::vector<Group> groups = {{&c, c.coefficients[1], c.coefficients[1]}};
  for (const auto& o : model.interval_curves) {
    if (!IsBlockKind(o.kind) || o.coefficients.size() != 2) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return same(*g.curve, o); });
    if (it == groups.end()) {
      groups.push_back({&o, o.coefficients[1], o.coefficients[1]});
    } else {
      it->low = std::min(it->low, o.coefficients[1]);
      it->high = std::max(it->high, o.coefficients[1]);
    }
  }
  std::string out(quantity);
  out += " = " + BlockFormula(c, "N") + ", " + NRange(groups[0].low, groups[0].high);
  if (groups[0].low != groups[0].high) out += " (" + FormatNumber(c.coefficients[1], 15) + " used)";
  out += ", from " + std::to_string(model.training.size()) + " counts";
  if (!model.training.empty()) {
    out += " (" + FormatNumber(model.training.front().p, 7) + "\u2013" +
           FormatNumber(model.training.back().p, 7) + ")";
  }
  if (model.fit_error <= 1e-10) {
    out += ", exact";
  } else {
    out += ", fit error " + FormatNumber(100 * model.fit_error, 2) + "%";
  }
  // Others of the same form differ in c only: "c = 32, N in [717, 720]".
  for (std::size_t g = 1; g < groups.size(); ++g) {
    const Curve& o = *groups[g].curve;
    out += g == 1 ? "; also exact (in the interval): " : "; ";
    if (o.kind == c.kind && o.exponent_numerator == c.exponent_numerator &&
        o.block_exponent == c.block_exponent && o.grid_dimension == c.grid_dimension) {
      out += "c = " + FormatNumber(o.coefficients[0]);
    } else {
      out += BlockFormula(o, "N");
    }
    out += ", " + NRange(groups[g].low, groups[g].high);
  }
  return out;
}

[[noreturn]] void BadJson(const std::string& what) {
  throw UserError("not a pas2p regression model: " + what);
}

const nlohmann::json& Member(const nlohmann::json& object, const char* key,
                             const std::string& where) {
  if (!object.is_object()) BadJson(where + " is not a JSON object");
  const auto it = object.find(key);
  if (it == object.end()) BadJson(where + " has no \"" + key + "\"");
  return *it;
}

double NumberMember(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto& v = Member(object, key, where);
  if (!v.is_number()) BadJson(where + "." + key + " is not a number");
  return v.get<double>();
}

int IntMember(const nlohmann::json& object, const char* key, const std::string& where) {
  const auto& v = Member(object, key, where);
  if (!v.is_number_integer()) BadJson(where + "." + key + " is not an integer");
  return v.get<int>();
}

std::vector<double> NumberArray(const nlohmann::json& value, const std::string& where) {
  if (!value.is_array()) BadJson(where + " is not an array");
  std::vector<double> out;
  for (const auto& v : value) {
    if (!v.is_number()) BadJson(where + " holds a non-number");
    out.push_back(v.get<double>());
  }
  return out;
}

}  // namespace

std::string_view CurveKindName(CurveKind kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

CurveKind CurveKindFromName(std::string_view name) {
  std::string valid;
  for (const auto& k : kKinds) {
    if (k.name == name) return k.kind;
    valid += (valid.empty() ? "" : ", ") + std::string(k.name);
  }
  throw UserError("unknown model kind \"" + std::string(name) + "\" (expected one of " + valid +
                  ")");
}

int ParameterCount(CurveKind kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return k.parameters;
  }
  return 0;
}

std::optional<double> FallingLevel(const Curve& c) {
  const auto& k = c.coefficients;
  if (c.kind == CurveKind::kNormalForm && k.size() == 2 && c.exponent_denominator > 0 &&
      c.exponent_numerator < 0 && c.log_exponent == 0 && k[0] > 0 && k[1] > 0) {
    return k[0];
  }
  if (c.kind == CurveKind::kPowerLawOffset && k.size() == 3 && k[0] > 0 && k[1] < 0 && k[2] > 0) {
    return k[2];
  }
  return std::nullopt;
}

bool FallsToZero(const Curve& c) {
  const auto& k = c.coefficients;
  if (c.kind == CurveKind::kSingleTerm) {
    return k.size() == 1 && k[0] > 0 && c.exponent_denominator > 0 && c.exponent_numerator < 0;
  }
  return c.kind == CurveKind::kPowerLaw && k.size() == 2 && k[0] > 0 && k[1] < 0;
}

bool IsBlockKind(CurveKind kind) {
  return kind == CurveKind::kBlockCeil || kind == CurveKind::kBlockFloor;
}

std::string_view IntervalMethodName(IntervalMethod method) {
  return method == IntervalMethod::kLooEnvelope ? "loo_envelope" : "residual_bootstrap";
}

IntervalMethod IntervalMethodFromName(std::string_view name) {
  if (name == "loo_envelope") return IntervalMethod::kLooEnvelope;
  if (name == "residual_bootstrap") return IntervalMethod::kResidualBootstrap;
  throw UserError("unknown interval method \"" + std::string(name) +
                  "\" (expected loo_envelope or residual_bootstrap)");
}

double Curve::Evaluate(double p) const {
  const auto& c = coefficients;
  switch (kind) {
    case CurveKind::kConstant:
      return c[0];
    case CurveKind::kSingleTerm:
      return c[0] *
             internal::NormalFormTerm(exponent_numerator, exponent_denominator, log_exponent, p);
    case CurveKind::kNormalForm:
      return c[0] + c[1] * internal::NormalFormTerm(exponent_numerator, exponent_denominator,
                                                    log_exponent, p);
    case CurveKind::kPowerLaw:
      return c[0] * std::pow(p, c[1]);
    case CurveKind::kPowerLawOffset:
      return c[0] * std::pow(p, c[1]) + c[2];
    case CurveKind::kExponential:
      return c[0] * std::exp(c[1] * p);
    case CurveKind::kExponentialOffset:
      return c[0] * std::exp(c[1] * p) + c[2];
    case CurveKind::kBlockCeil:
    case CurveKind::kBlockFloor:
      return c[0] * internal::NormalFormTerm(exponent_numerator, 1, 0, p) *
             internal::BlockTerm(kind == CurveKind::kBlockCeil, c[1], p, block_exponent,
                                 grid_dimension);
  }
  return std::nan("");
}

double Curve::EvaluateUnrounded(double p) const {
  if (!IsBlockKind(kind) || coefficients.size() != 2) return Evaluate(p);
  const double share = coefficients[1] / internal::GridSide(p, grid_dimension);
  double term = 1.0;
  for (int i = 0; i < block_exponent; ++i) term *= share;
  return coefficients[0] * internal::NormalFormTerm(exponent_numerator, 1, 0, p) * term;
}

std::string Curve::Formula() const {
  const auto& c = coefficients;
  const std::string power = FormatFixedPower(exponent_numerator, exponent_denominator);
  const std::string log = FormatLog(log_exponent);
  auto free_power = [&](double b) { return "P^" + FormatNumber(b, 3); };
  auto free_exp = [&](double b) { return "e^(" + FormatNumber(b, 4) + std::string(kDot) + "P)"; };
  switch (kind) {
    case CurveKind::kConstant:
      return FormatNumber(c[0]);
    case CurveKind::kSingleTerm:
      return Product(c[0], {power, log});
    case CurveKind::kNormalForm:
      return Sum(FormatNumber(c[0]), c[1], {power, log});
    case CurveKind::kPowerLaw:
      return Product(c[0], {free_power(c[1])});
    case CurveKind::kPowerLawOffset:
      return Sum(Product(c[0], {free_power(c[1])}), c[2], {});
    case CurveKind::kExponential:
      return Product(c[0], {free_exp(c[1])});
    case CurveKind::kExponentialOffset:
      return Sum(Product(c[0], {free_exp(c[1])}), c[2], {});
    case CurveKind::kBlockCeil:
    case CurveKind::kBlockFloor:
      return BlockFormula(*this, FormatNumber(c[1], 15));
  }
  return "?";
}

nlohmann::json Curve::ToJson() const {
  nlohmann::json j;
  j["kind"] = std::string(CurveKindName(kind));
  j["exponent"] = {exponent_numerator, exponent_denominator};
  j["log_exponent"] = log_exponent;
  j["coefficients"] = coefficients;
  if (IsBlockKind(kind)) j["block_exponent"] = block_exponent;
  if (IsBlockKind(kind) && grid_dimension != 1) j["grid_dimension"] = grid_dimension;
  return j;
}

Curve Curve::FromJson(const nlohmann::json& json) {
  Curve curve;
  const auto& kind = Member(json, "kind", "curve");
  if (!kind.is_string()) BadJson("curve.kind is not a string");
  curve.kind = CurveKindFromName(kind.get<std::string>());
  const auto& exponent = Member(json, "exponent", "curve");
  if (!exponent.is_array() || exponent.size() != 2 || !exponent[0].is_number_integer() ||
      !exponent[1].is_number_integer() || exponent[1].get<int>() <= 0) {
    BadJson("curve.exponent must be [numerator, positive denominator]");
  }
  curve.exponent_numerator = exponent[0].get<int>();
  curve.exponent_denominator = exponent[1].get<int>();
  curve.log_exponent = IntMember(json, "log_exponent", "curve");
  if (curve.log_exponent < 0) BadJson("curve.log_exponent is negative");
  curve.coefficients = NumberArray(Member(json, "coefficients", "curve"), "curve.coefficients");
  if (static_cast<int>(curve.coefficients.size()) != ParameterCount(curve.kind)) {
    BadJson("a " + std::string(CurveKindName(curve.kind)) + " curve needs " +
            std::to_string(ParameterCount(curve.kind)) + " coefficients, got " +
            std::to_string(curve.coefficients.size()));
  }
  if (IsBlockKind(curve.kind)) {
    curve.block_exponent = IntMember(json, "block_exponent", "curve");
    if (curve.block_exponent < 1) BadJson("curve.block_exponent must be >= 1");
    if (curve.exponent_denominator != 1) BadJson("a block curve's exponent must be an integer");
    const double n = curve.coefficients[1];
    if (!(n >= 1) || n != std::floor(n)) BadJson("a block curve's N must be an integer >= 1");
    if (json.contains("grid_dimension")) {
      curve.grid_dimension = IntMember(json, "grid_dimension", "curve");
      if (curve.grid_dimension < 2 || curve.grid_dimension > 3) {
        BadJson("curve.grid_dimension must be 2 or 3 (1 is written by leaving it out), got " +
                std::to_string(curve.grid_dimension));
      }
    }
  } else if (json.is_object() && json.contains("grid_dimension")) {
    BadJson("curve.grid_dimension is only for block_ceil / block_floor curves, not " +
            std::string(CurveKindName(curve.kind)));
  }
  return curve;
}

PredictionInterval FittedModel::Interval(double p) const {
  const double y = Evaluate(p);
  if (!std::isfinite(y)) return {y, y};
  double low = y;
  double high = y;
  if (interval_method == IntervalMethod::kLooEnvelope) {
    for (const auto& c : interval_curves) {
      const double v = c.Evaluate(p);
      if (!std::isfinite(v)) continue;
      low = std::min(low, v);
      high = std::max(high, v);
    }
    const double margin = interval_margin * std::abs(y);
    return {low - margin, high + margin};
  }
  std::vector<double> values;
  values.reserve(interval_curves.size());
  for (const auto& c : interval_curves) {
    const double v = c.Evaluate(p);
    if (std::isfinite(v)) values.push_back(v);
  }
  if (values.empty()) return {y, y};
  std::sort(values.begin(), values.end());
  auto quantile = [&](double q) {
    const double position = q * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(position));
    const auto above = std::min(below + 1, values.size() - 1);
    const double t = position - static_cast<double>(below);
    return values[below] + t * (values[above] - values[below]);
  };
  return {std::min(y, quantile(interval_quantile)), std::max(y, quantile(1 - interval_quantile))};
}

std::string FittedModel::Describe(std::string_view quantity) const {
  if (IsBlockKind(curve.kind)) return DescribeBlock(*this, quantity);
  std::string out(quantity);
  const bool exact_constant = curve.kind == CurveKind::kConstant && loo_error == 0;
  out += exact_constant ? " = " : " \u2248 ";
  out += curve.Formula();
  if (exact_constant) {
    // Rule 4's exact tail (fit.h): the counts from which every value is the constant.
    // (At least 3 counts: a median kept as a constant can equal the last value by itself.)
    std::size_t from = training.size();
    const double c = curve.coefficients.empty() ? 0.0 : curve.coefficients[0];
    while (from > 0 && std::fabs(training[from - 1].y - c) <= 1e-9 * std::fabs(c)) --from;
    out += from == 0 || from + 3 > training.size()
               ? " (constant)"
               : " (constant from P = " + FormatNumber(training[from].p, 7) +
                     " on; smaller counts differ)";
  }
  out += ", from " + std::to_string(training.size()) + " counts";
  if (!training.empty()) {
    out += " (" + FormatNumber(training.front().p, 7) + "\u2013" +
           FormatNumber(training.back().p, 7) + ")";
  }
  if (training.size() < 3) {
    // One or two counts leave none to check a law on (a run of one rank makes no call of a
    // halo: its bytes are known at two counts only).
    return out + ", too few counts to check it by leaving one out";
  }
  out += ", LOO error ";
  const double percent = 100 * loo_error;
  if (percent == 0) {
    out += "0%";
  } else if (percent < 1e-4) {
    out += "<0.0001% (exact fit)";
  } else {
    out += FormatNumber(percent, 2) + "%";
  }
  return out;
}

std::string FittedModel::Describe(std::string_view quantity, double target_p) const {
  const auto interval = Interval(target_p);
  return Describe(quantity) + "; at P = " + FormatNumber(target_p, 7) + ": " +
         FormatNumber(Evaluate(target_p)) + " [" + FormatNumber(interval.low) + ", " +
         FormatNumber(interval.high) + "]";
}

nlohmann::json FittedModel::ToJson() const {
  nlohmann::json j;
  j["format"] = kFormatName;
  j["version"] = kFormatVersion;
  j["curve"] = curve.ToJson();
  auto& points = j["training"] = nlohmann::json::array();
  for (const auto& point : training) points.push_back({point.p, point.y});
  j["loo_error"] = loo_error;
  j["fit_error"] = fit_error;
  j["integer_valued"] = integer_valued;
  auto& interval = j["interval"];
  interval["method"] = std::string(IntervalMethodName(interval_method));
  interval["quantile"] = interval_quantile;
  interval["margin"] = interval_margin;
  auto& curves = interval["curves"] = nlohmann::json::array();
  for (const auto& c : interval_curves) curves.push_back(c.ToJson());
  return j;
}

FittedModel FittedModel::FromJson(const nlohmann::json& json) {
  const auto& format = Member(json, "format", "model");
  if (format != kFormatName) BadJson("\"format\" is not \"" + std::string(kFormatName) + "\"");
  if (IntMember(json, "version", "model") != kFormatVersion) {
    BadJson("unsupported version (this build reads version " + std::to_string(kFormatVersion) +
            ")");
  }
  FittedModel model;
  model.curve = Curve::FromJson(Member(json, "curve", "model"));
  const auto& points = Member(json, "training", "model");
  if (!points.is_array()) BadJson("model.training is not an array");
  for (const auto& point : points) {
    const auto pair = NumberArray(point, "model.training[]");
    if (pair.size() != 2) BadJson("model.training[] entries must be [p, y]");
    model.training.push_back({pair[0], pair[1]});
  }
  model.loo_error = NumberMember(json, "loo_error", "model");
  model.fit_error = NumberMember(json, "fit_error", "model");
  const auto& integer_valued = Member(json, "integer_valued", "model");
  if (!integer_valued.is_boolean()) BadJson("model.integer_valued is not true/false");
  model.integer_valued = integer_valued.get<bool>();
  const auto& interval = Member(json, "interval", "model");
  const auto& method = Member(interval, "method", "model.interval");
  if (!method.is_string()) BadJson("model.interval.method is not a string");
  model.interval_method = IntervalMethodFromName(method.get<std::string>());
  model.interval_quantile = NumberMember(interval, "quantile", "model.interval");
  model.interval_margin = NumberMember(interval, "margin", "model.interval");
  const auto& curves = Member(interval, "curves", "model.interval");
  if (!curves.is_array()) BadJson("model.interval.curves is not an array");
  for (const auto& c : curves) model.interval_curves.push_back(Curve::FromJson(c));
  return model;
}

}  // namespace pas2p::regression
