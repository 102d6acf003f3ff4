// The logical trace at a target count, generated lazily rank by rank from an AppModel.
//
// In:  an AppModel and a target count N (a valid count of the model).
// Out: a TraceSource whose OpenRank(r) generates rank r's events on demand: MPI_Init, the
//      communicators the rank belongs to (kCommCreate, from the slots' communicator rules),
//      then the run's phase order (the largest traced count's order with its nested loops,
//      scaled to N as below), each
//      occurrence's calls from the slots (present on the rank by the slot's presence rule;
//      peers from the general equations at N, bytes and compute from the regressions at N),
//      and MPI_Finalize. Request ids are per rank and increasing; a completion waits for the
//      requests pending on the rank (all of them, or the slot's number, oldest first).
//
// Scaling the order to N: each phase must occur f = (its weight model at N) / (its weight at
// the largest traced count) times as often. Walking the order from the outside in, a loop
// whose phases all have the same f (within 0.1%) has its iteration count scaled by f and
// everything inside it keeps its counts per iteration: the outermost loop that can carry the
// change carries it (a time-step loop that runs longer at N stays [halo x10, allreduce] x
// more). Where the phases of a loop scale differently, the loop keeps its count and the
// rule applies to its body; a run of one phase outside any such loop has its repetitions
// scaled by its f, rounded down with a carry per phase (the remainder goes to the phase's
// next run), so the phase's total over the run is its weight at N. An inner loop's count
// that grows with N while the outer loop's does not is thus only right when the phases of
// the outer loop scale differently (a loop of one phase is a run, scaled by its own f).
// Counts that differ between executions are kept as totals spread evenly (SequenceItem).
//
// Self-scheduling: a self-scheduled phase (PhaseModel::scheduled) runs on the master as its
// weight says and on each worker once per task of a list schedule at N (the next task to the
// worker that becomes free first, from the model's compute per task with its spread; tasks =
// the master's replies in the run); the master's replies go to the workers in that schedule's
// order of completions, its wildcard receives stay MPI_ANY_SOURCE (the simulator matches what
// arrives first), and workers receive their master's messages with any tag. With fewer tasks
// than workers, the workers without a task exchange nothing with the master. Memory: O(P)
// for the tasks per rank and the master's schedule, whatever the number of tasks.
//
// Memory: the model, the equations evaluated at N (a grid's extents) and the scaled order
// (its size is the loop structure's, not the iterations'); a rank reader holds its position
// (one frame per open loop) and its pending requests; occurrences are generated on demand. Nothing
// grows with N x events, so a million ranks work; only the simulator's own per-rank state grows
// with N.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/synthesis/model.h"

namespace pas2p::synthesis {

struct SynthOptions {
  // Which end of the regression intervals the bytes and compute come from: -1 low, 0 the
  // fitted value, +1 high. The same for the phase weights (weight_side).
  int side = 0;
  int weight_side = 0;
  // Only this phase (index into AppModel::phases), `repetitions` times; -1 = the whole run.
  int only_phase = -1;
  std::int64_t repetitions = 1;
  // Reproduce the traced spread of the compute bursts (SlotModel::cpu_spread_*): each rank's
  // bursts are the model's value times (1 + between x z_rank) (1 + within x z_rank,occurrence)
  // (1 + shared x z_occurrence), each factor clipped at 0 and scaled to keep the mean, z
  // deterministic pseudo-normal numbers of (phase, slot) and the rank and/or occurrence: the
  // shared factor is the same on every rank in the same occurrence of the phase, and `within`
  // is the traced own spread over sqrt(E[shared factor^2]), so that a burst's deviation from
  // its occurrence's mean is the traced one; false = every rank computes exactly the
  // model's value.
  bool spread = true;
  // With spread, false leaves out the noise that varies in time: each rank's own draw per
  // burst and the draw the ranks share in an occurrence. Of the spread between ranks (a rank
  // computes more than another in every occurrence) the part their own noise does not
  // explain stays (SlotModel::cpu_spread_persistent): the run on a quiet machine
  // (Prediction::quiet_time_s). A self-scheduled phase keeps its per-task draws, which are
  // the mix of tasks a worker ran, not noise.
  bool time_noise = true;
  // A self-scheduled phase with a task profile (PhaseModel::task_profile): 0 runs the
  // profile's costs; k > 0 multiplies each task's cost by (1 + task_profile_spread x z), z a
  // deterministic pseudo-normal number of (k, task) - one draw of how far the traced counts
  // disagreed task by task, to see how far that moves the schedule (predict's interval).
  int task_draw = 0;
  // The seed of the compute noise draws (spread): 0 is the prediction's own draw; another
  // seed draws every burst's noise anew (the same model, another run of it).
  std::uint64_t noise_seed = 0;
};

class SynthesizedTrace : public TraceSource {
 public:
  // Throws UserError when `nprocs` is not a valid count of the model (naming the nearest).
  SynthesizedTrace(AppModel model, std::int64_t nprocs, const SynthOptions& options = {});
  ~SynthesizedTrace() override;
  SynthesizedTrace(const SynthesizedTrace&) = delete;
  SynthesizedTrace& operator=(const SynthesizedTrace&) = delete;

  const TraceMetadata& metadata() const override { return metadata_; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override;
  std::string description() const override;

  const AppModel& model() const { return model_; }
  const SynthOptions& options() const { return options_; }
  // The run's order at N (phase indices; see the header for how it is scaled).
  const phases::Sequence& sequence() const { return sequence_; }
  // Occurrences of a phase at N (its weight model, clamped at 0).
  double PhaseWeight(int phase) const;
  // Upper bound of the events of one rank (for choosing between a full replay and PET).
  std::uint64_t MaxEventsPerRank() const;
  // Self-scheduling (PhaseModel::scheduled; the first such phase of the run): the phase (-1:
  // none), each rank's tasks from the list schedule (empty: none), and the time the schedule
  // ends, compute only (ListSchedule in synthesize.cc: task i goes to the worker that
  // becomes free first; the master's replies follow that order, its receives stay
  // MPI_ANY_SOURCE so the simulator matches whatever arrives first).
  int ScheduledPhase() const;
  const std::vector<std::int32_t>& TasksPerRank() const;
  double ScheduleMakespanS() const;

  struct SlotAt;
  struct Impl;

 private:
  void BuildSchedule();
  AppModel model_;
  std::int64_t nprocs_;
  SynthOptions options_;
  TraceMetadata metadata_;
  phases::Sequence ScaleSequence(const phases::Sequence& items, std::int64_t from, std::int64_t to,
                                 double applied, const std::vector<double>& factor,
                                 std::vector<double>* carry) const;

  phases::Sequence sequence_;
  std::unique_ptr<Impl> impl_;
};

// Writes the trace at `nprocs` to `out_dir`, as a pas2p trace directory (format "pas2p") or
// SimGrid time-independent text files ("simgrid-ti"). Returns the path written (the
// directory, or the TI list file). Throws UserError on an unknown format.
std::string WriteSynthesized(const SynthesizedTrace& trace, const std::string& out_dir,
                             const std::string& format, double flops_per_second = 1e9);

}  // namespace pas2p::synthesis
