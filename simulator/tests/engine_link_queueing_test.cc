// Link queueing must not cascade across nodes (found by the predict sweep, 08:20; was an
// acceptance check until the network booked intervals instead of "free from" times).
//
// A 2-D periodic stencil (each rank: 5 us compute, 4 irecv + 4 isend of 400 B to its
// N/S/E/W neighbours, waitall) on a machine like datasets/machines/default.toml (48 ranks
// per node, one input and one output link per node, L = 1.5 us, B = 10 GB/s). Each node
// sends and receives about 96 inter-node messages per iteration, 40 ns each, so an
// iteration needs about 5 + 1.5 + 2 x 3.84 us whatever the grid width. With both links
// booked at request time, first come first served and without gaps, one node's batch
// delayed the next node's, which delayed the next: 89 us per iteration at 2304 ranks
// (48 x 48) and 190 us at 2401 (49 x 49); now about 7 us at both.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"

namespace pas2p::sim {
namespace {

double StencilIterationSeconds(int ranks, int iterations) {
  const int q = static_cast<int>(std::lround(std::sqrt(ranks)));
  MemoryTrace t(ranks);
  for (int r = 0; r < ranks; ++r) {
    const int x = r % q, y = r / q;
    const int neighbours[4] = {y * q + (x + 1) % q, y * q + (x + q - 1) % q, ((y + 1) % q) * q + x,
                               ((y + q - 1) % q) * q + x};
    for (int it = 0; it < iterations; ++it) {
      t.rank(r).push_back(MakeCompute(5000));
      std::vector<RequestId> ids;
      for (int k = 0; k < 4; ++k) {
        t.rank(r).push_back(MakeIrecv(neighbours[k], 0, 400, 1 + k));
        ids.push_back(1 + k);
      }
      for (int k = 0; k < 4; ++k) {
        t.rank(r).push_back(MakeIsend(neighbours[k], 0, 400, 5 + k));
        ids.push_back(5 + k);
      }
      Event wait = MakeWaitall(ids);
      wait.completed.clear();
      for (RequestId id : ids) wait.completed.push_back(Completion{id});
      t.rank(r).push_back(wait);
    }
  }
  Machine m;
  m.nodes = 0;  // as many as needed
  m.cpus_per_node = 48;
  m.inter_latency_s = 1.5e-6;
  m.inter_bandwidth_Bps = 1e10;
  m.intra_latency_s = 5e-7;
  m.intra_bandwidth_Bps = 1e10;
  m.buses = 0;
  m.input_links = m.output_links = 1;
  return Simulate(t, m).predicted_time_s / iterations;
}

TEST(LinkQueueing, StencilIterationStaysNearTheSerialisationBound) {
  const double bound_s = 5e-6 + 1.5e-6 + 2 * 96 * 400 / 1e10;
  for (int ranks : {2304, 2401}) {
    const double per_iteration_s = StencilIterationSeconds(ranks, 3);
    EXPECT_LT(per_iteration_s, 1.5 * bound_s) << ranks << " ranks";
  }
}

}  // namespace
}  // namespace pas2p::sim
