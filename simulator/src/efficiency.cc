#include "pas2p/simulator/efficiency.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace pas2p::sim {

namespace {
double Ratio(double num, double den) { return den > 0 ? num / den : 0; }
}  // namespace

double Efficiency::LoadBalance() const { return Ratio(compute_mean_s, compute_max_s); }
double Efficiency::Communication() const { return Ratio(compute_max_s, runtime_s); }
double Efficiency::Parallel() const { return Ratio(compute_mean_s, runtime_s); }
double Efficiency::Serialization() const { return Ratio(compute_max_s, ideal_runtime_s); }
double Efficiency::Transfer() const { return Ratio(ideal_runtime_s, runtime_s); }

Efficiency EfficiencyOf(const SimResult& result) {
  Efficiency e;
  e.runtime_s = result.predicted_time_s;
  if (result.ranks.empty()) return e;
  for (const RankTimes& t : result.ranks) {
    e.compute_mean_s += t.compute_s;
    e.compute_max_s = std::max(e.compute_max_s, t.compute_s);
    e.communication_mean_s += t.communication_s;
    e.wait_mean_s += t.wait_s;
  }
  const auto n = static_cast<double>(result.ranks.size());
  e.compute_mean_s /= n;
  e.communication_mean_s /= n;
  e.wait_mean_s /= n;
  return e;
}

Machine IdealNetwork(const Machine& machine) {
  Machine ideal = machine;
  ideal.name = machine.name + " (ideal network)";
  ideal.intra_latency_s = ideal.inter_latency_s = 0;
  ideal.intra_bandwidth_Bps = ideal.inter_bandwidth_Bps = std::numeric_limits<double>::infinity();
  ideal.buses = 0;
  ideal.input_links = ideal.output_links = 0;
  ideal.half_duplex = false;
  ideal.topology = Topology{};
  for (CollectiveCost& c : ideal.collectives) c = CollectiveCost{};
  return ideal;
}

std::string FormatEfficiency(const Efficiency& e) {
  auto pct = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
    return std::string(buf);
  };
  std::string s = "parallel " + pct(e.Parallel()) + " = load balance " + pct(e.LoadBalance()) +
                  " x communication " + pct(e.Communication());
  if (e.HasTransfer()) {
    s += " (serialization " + pct(e.Serialization()) + " x transfer " + pct(e.Transfer()) + ")";
  }
  return s;
}

}  // namespace pas2p::sim
