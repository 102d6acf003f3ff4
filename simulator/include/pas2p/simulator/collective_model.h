// The collective cost model of paper 000 (Girona, Labarta, Badia): a collective on a
// communicator of C ranks costs FAN_IN + FAN_OUT, each phase
//     (L + SIZE / B) x MODEL_FACTOR,
// MODEL_FACTOR = 0 (0), 1 (CTE), C (LIN) or Nsteps (LOG), where Nsteps sums over the
// ceil(log2 C) stages of a binomial tree ceil(C_i / buses) steps, C_i being the number of
// simultaneous transfers in stage i (ceil((C - 2^(i-1)) / 2^i)); buses = 0 is unlimited.
// SIZE is taken from the largest send (S) and receive (R) of any member:
//     MAX = max(S, R), MIN = min(S, R), MEAN = (S + R) / 2, 2MAX = 2 max(S, R), S+R = S + R.
// (For rooted operations the root is the member with the largest send or receive, so this
// is the paper's "sent/received by root".)
#pragma once

#include <cstdint>

#include "pas2p/core/event.h"
#include "pas2p/simulator/machine.h"

namespace pas2p::sim {

// Dimemas collective id (0 Barrier ... 14 Scan) of a collective event kind; -1 otherwise.
// Exscan is charged as Scan.
int DimemasCollectiveId(EventKind kind);

// Nsteps of the LOG model for C ranks and `buses` (0 = unlimited).
int LogModelSteps(int comm_size, int buses);
// MODEL_FACTOR for a phase.
double CollectiveModelFactor(CollModel model, int comm_size, int buses);
// SIZE of a phase, in bytes.
double CollectivePhaseBytes(CollSize size, std::uint64_t max_sent_bytes,
                            std::uint64_t max_received_bytes);
// FAN_IN + FAN_OUT in seconds.
double CollectiveTime(const CollectiveCost& cost, int comm_size, std::uint64_t max_sent_bytes,
                      std::uint64_t max_received_bytes, double latency_s, double bandwidth_Bps,
                      int buses);

}  // namespace pas2p::sim
