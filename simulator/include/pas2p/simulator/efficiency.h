// The POP efficiency metrics of a simulated run, as the POP Centre of Excellence defines them
// and computes them with Dimemas: how much of the run the ranks spend computing, and why not
// more.
//
//   parallel efficiency       = mean compute / runtime = load balance x communication
//   load balance              = mean compute / max compute (over the ranks)
//   communication efficiency  = max compute / runtime = serialization x transfer
//   serialization efficiency  = max compute / runtime on an ideal network
//   transfer efficiency       = runtime on an ideal network / runtime
//
// "Compute" is the ranks' compute bursts (RankTimes::compute_s), everything else is MPI. The
// ideal network (IdealNetwork) moves every message instantly and makes collectives free, and
// keeps the CPU, the mapping and the protocol: what remains of the MPI time there is waiting
// for partners (dependencies, imbalance along the way), the rest is transfer.
#pragma once

#include "pas2p/simulator/machine.h"
#include "pas2p/simulator/result.h"

namespace pas2p::sim {

struct Efficiency {
  double runtime_s = 0;
  double compute_mean_s = 0, compute_max_s = 0;  // over the ranks
  double communication_mean_s = 0;               // blocked while its own data moved
  double wait_mean_s = 0;                        // blocked waiting for a partner
  double ideal_runtime_s = -1;                   // on IdealNetwork; < 0 when not simulated

  double LoadBalance() const;    // 0 when nothing computes
  double Communication() const;  // 0 for an empty run
  double Parallel() const;
  bool HasTransfer() const { return ideal_runtime_s >= 0; }
  double Serialization() const;  // needs HasTransfer()
  double Transfer() const;       // needs HasTransfer()
};

// The metrics of `result` (ideal_runtime_s left at -1; set it from a simulation on
// IdealNetwork(machine) for the serialization/transfer split).
Efficiency EfficiencyOf(const SimResult& result);

// `machine` with an ideal network: latencies 0, bandwidths unlimited (inf), no bus, link or
// topology limits, collectives free (CollModel::kZero); CPU, nodes, mapping and the eager
// threshold as they are.
Machine IdealNetwork(const Machine& machine);

// "parallel 71.2% = load balance 93.1% x communication 76.5% (serialization 80.0% x
// transfer 95.6%)"; the parenthesis only with HasTransfer().
std::string FormatEfficiency(const Efficiency& e);

}  // namespace pas2p::sim
