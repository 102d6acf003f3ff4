// Paper 000's FAN_IN + FAN_OUT collective model (see collective_model.h).
#include "pas2p/simulator/collective_model.h"

#include <algorithm>
#include <cmath>

namespace pas2p::sim {

int DimemasCollectiveId(EventKind kind) {
  switch (kind) {
    case EventKind::kBarrier:
      return 0;
    case EventKind::kBcast:
      return 1;
    case EventKind::kGather:
      return 2;
    case EventKind::kGatherv:
      return 3;
    case EventKind::kScatter:
      return 4;
    case EventKind::kScatterv:
      return 5;
    case EventKind::kAllgather:
      return 6;
    case EventKind::kAllgatherv:
      return 7;
    case EventKind::kAlltoall:
      return 8;
    case EventKind::kAlltoallv:
      return 9;
    case EventKind::kReduce:
      return 10;
    case EventKind::kAllreduce:
      return 11;
    case EventKind::kReduceScatter:
      return 12;
    case EventKind::kScan:
      return 14;
    case EventKind::kExscan:
      return 14;
    default:
      return -1;
  }
}

int LogModelSteps(int comm_size, int buses) {
  int steps = 0;
  // Stage i (1-based) pairs ranks 2^(i-1) apart: ceil((C - 2^(i-1)) / 2^i) transfers.
  for (long long half = 1; half < comm_size; half *= 2) {
    const long long transfers = (comm_size - half + 2 * half - 1) / (2 * half);
    steps += buses > 0 ? static_cast<int>((transfers + buses - 1) / buses) : 1;
  }
  return steps;
}

double CollectiveModelFactor(CollModel model, int comm_size, int buses) {
  switch (model) {
    case CollModel::kZero:
      return 0.0;
    case CollModel::kConstant:
      return 1.0;
    case CollModel::kLinear:
      return static_cast<double>(comm_size);
    case CollModel::kLog:
      return static_cast<double>(LogModelSteps(comm_size, buses));
  }
  return 0.0;
}

double CollectivePhaseBytes(CollSize size, std::uint64_t max_sent_bytes,
                            std::uint64_t max_received_bytes) {
  const double s = static_cast<double>(max_sent_bytes);
  const double r = static_cast<double>(max_received_bytes);
  switch (size) {
    case CollSize::kMin:
      return std::min(s, r);
    case CollSize::kMax:
      return std::max(s, r);
    case CollSize::kMean:
      return (s + r) / 2.0;
    case CollSize::k2Max:
      return 2.0 * std::max(s, r);
    case CollSize::kSendPlusRecv:
      return s + r;
  }
  return 0.0;
}

double CollectiveTime(const CollectiveCost& cost, int comm_size, std::uint64_t max_sent_bytes,
                      std::uint64_t max_received_bytes, double latency_s, double bandwidth_Bps,
                      int buses) {
  auto phase = [&](CollModel model, CollSize size) {
    const double factor = CollectiveModelFactor(model, comm_size, buses);
    if (factor == 0.0) return 0.0;
    const double bytes = CollectivePhaseBytes(size, max_sent_bytes, max_received_bytes);
    const double transfer_s = std::isinf(bandwidth_Bps) ? 0.0 : bytes / bandwidth_Bps;
    return (latency_s + transfer_s) * factor;
  };
  return phase(cost.model_in, cost.size_in) + phase(cost.model_out, cost.size_out);
}

}  // namespace pas2p::sim
