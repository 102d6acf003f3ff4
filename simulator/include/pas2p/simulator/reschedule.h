// The replay of a self-scheduled (master/worker) trace with its tasks handed out the way
// the simulated machine would hand them out.
//
// Why. In a self-scheduled run the master sends the next task to whichever worker answered
// its MPI_ANY_SOURCE receive first. Which one that was is a fact of the traced run (with
// more ranks than cores the OS scheduler decided it), and a plain replay keeps it: a
// worker's compute bursts and the master's send destinations are fixed in the trace, so the
// few workers that got most tasks in the traced run get them in the simulation too, even on
// a machine with a core per rank. RescheduledTrace keeps the tasks and their order and lets
// the simulation decide who runs them.
//
// What is a task. The master is the one rank that replies to whoever answered: it sends to
// the rank its latest wildcard receive (a blocking MPI_Recv(MPI_ANY_SOURCE) or a wait/test
// that returned an MPI_ANY_SOURCE irecv) came from. Its workers are the ranks it sends to.
// A worker's stream is cut at its blocking receives from the master: each message the
// master sends a worker is followed, on that worker, by a *piece* up to the worker's next
// receive from the master. A piece that sends to the master (its result) and does nothing
// but compute, send to the master and complete those sends is a task body; any other piece
// (after a stop message, the worker's own code between rounds and at the end) stays with
// its worker.
//
// How. The master's stream is replayed as traced except the destinations of its replies:
// the reply to the j-th wildcard receive the trace completed goes to the rank the j-th
// wildcard receive completed in the simulation came from (SimOptions::on_wildcard_receive),
// so the worker that answers first in the simulation gets the next message. The master's
// other sends (the first hand-out) keep their destination. Every message carries its piece:
// a worker that receives a task message runs that task's body (its compute bursts and
// result sends, moved from the worker that ran it in the trace), and a worker that receives
// a message whose piece stayed with its worker (a stop) runs its own next such piece. A
// blocking MPI_Recv(MPI_ANY_SOURCE) of the master is replayed as a wildcard (the plain replay
// takes its traced source), and the master's polls (tests that found nothing) before a
// wait or test that completes on the same requests are left out: a poll that finds a
// result in the simulation would otherwise take it from that call, which would then wait
// for another. A trace in which no single rank replies to whoever answered is replayed
// unchanged.
//
// Limits (SelfScheduledRun::note says which one stopped it; the trace is then replayed
// unchanged): one master; workers receive the master's messages with blocking receives,
// all on one communicator, and the master sends them with send/isend, pairing one to one
// with the workers' receives; the master receives from workers only with MPI_ANY_SOURCE
// receives; a task body is compute, sends to the master and their completions; a worker
// that gets more stop messages in the simulation than in the trace is a SimulationError.
// The worker's streams are held in memory (the master's is re-read).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/simulator/result.h"

namespace pas2p::sim {

// What RescheduledTrace found in a trace.
struct SelfScheduledRun {
  bool rescheduled = false;   // a self-scheduled run whose tasks are handed out anew
  int master = -1;            // -1 when no single rank replies to whoever answered
  std::vector<int> workers;   // ranks the master sends to, ascending
  std::uint64_t tasks = 0;    // master messages followed by a task body
  std::uint64_t stops = 0;    // master messages followed by a piece that stays (stops)
  std::uint64_t replies = 0;  // master messages sent to whoever answered (redirected)
  std::string note;           // why the trace is replayed unchanged (empty when rescheduled)
};

class RescheduledTrace : public TraceSource {
 public:
  // Reads `base` (every rank once, the workers' streams kept); throws TraceError for a cut
  // or damaged stream. `base` must outlive this object.
  explicit RescheduledTrace(const TraceSource& base);
  ~RescheduledTrace() override;

  const SelfScheduledRun& run() const { return run_; }
  const TraceMetadata& metadata() const override { return base_.metadata(); }
  std::string description() const override;
  // Unchanged ranks read `base`; the master and its workers read the rescheduled streams,
  // which depend on the simulation: replay them with Simulate(*this, machine, Attach(o)),
  // which opens every rank once. Reading the master's replies outside such a replay throws
  // TraceError.
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override;
  // `options` with on_wildcard_receive feeding the reply destinations (an existing hook is
  // still called), and the hand-out state reset: call it once per replay. Throws UserError
  // for deterministic mode (it follows the traced sources, which the rescheduling replaces).
  SimOptions Attach(SimOptions options) const;

  // After a replay: the send destinations (sends, isends, sendrecvs with a rank as partner)
  // of the master and of each worker in their order in the replay (empty for the ranks
  // replayed as in `base`), and each rank's compute CPU time in the replay (ns, by rank;
  // a worker's includes the tasks it ran).
  const std::vector<std::vector<std::int32_t>>& send_peers_by_rank() const;
  const std::vector<std::int64_t>& cpu_ns_by_rank() const;

  // Implementation types (reschedule.cc).
  struct Piece;
  struct Session;
  struct MasterSend;

 private:
  const TraceSource& base_;
  SelfScheduledRun run_;
  std::vector<Piece> pieces_;              // task bodies and kept pieces
  std::vector<std::vector<int>> own_;      // per rank: its prologue, then its kept pieces
  std::vector<CommId> recv_comm_;          // per worker: the communicator of its receives
  std::vector<std::int64_t> base_cpu_ns_;  // per rank: compute CPU of the base stream
  std::vector<MasterSend> sends_;          // the master's sends to workers, in its program order
  std::shared_ptr<Session> session_;
};

// The simulation of `trace` with its self-scheduled tasks handed out by the simulation
// (RescheduledTrace), or, when the trace is not rescheduled (run.rescheduled false, run.note
// says why), of the trace as it is.
struct RescheduledReplay {
  SelfScheduledRun run;
  SimResult result;
  std::vector<std::vector<std::int32_t>> send_peers_by_rank;  // rescheduled runs: as
                                                              // RescheduledTrace's
  std::vector<std::int64_t> cpu_ns_by_rank;  // rescheduled runs: as RescheduledTrace's
};
RescheduledReplay SimulateRescheduled(const TraceSource& trace, const Machine& machine,
                                      const SimOptions& options = {});

}  // namespace pas2p::sim
