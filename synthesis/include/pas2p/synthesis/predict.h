// Prediction at a target count (PAS2P's PET at N), count sweeps and validation.
//
// In:  an AppModel (model.h), a target count and a Machine (simulator/).
// Out: a Prediction: the predicted time with an interval, one row per modelled phase (what
//      it does, weight at N, simulated time of one occurrence, total, share) and the
//      valid-count check.
//
// How. For each modelled phase, the synthesized trace of that phase alone is simulated at N
// with 1 and K occurrences (K = kSteadyOccurrences, at most the phase's weight); one
// occurrence costs (T(K) - T(1)) / (K - 1) in steady state (a pipeline that fills in the
// first occurrence is charged once: total = T(1) + (W - 1) x (T(K) - T(1)) / (K - 1)).
// PET(N) = sum of the phases' totals, plus the unmodelled remainder (phases that do not
// occur at every traced count, or that fail to fit) kept at its traced share of the run
// (AppModel::RemainderRatioAt; the interval also spans the law of that ratio over the
// counts). When the whole synthesized run is small enough (PredictOptions::
// full_replay_events), it is simulated end to end and that time, with the remainder in the
// same ratio, is the prediction (the replay already holds what partial iterations and
// pipeline drains cost); the PET is still the breakdown. The
// interval repeats the one-occurrence simulations with the low and high ends of the regression
// intervals (bytes, compute, weights).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/simulator/efficiency.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/synthesis/model.h"

namespace pas2p::synthesis {

// Beyond this share of the largest traced run in phases the model leaves out (phases that
// do not occur at every count, or whose communication no family reproduces), a prediction
// would extrapolate a small part of the run and keep the rest at its traced share: Predict
// refuses unless PredictOptions::allow_remainder.
inline constexpr double kMostlyUnmodelled = 0.5;

// Occurrences of a repeated phase simulated for its steady-state cost per occurrence (the
// default of PredictOptions::steady_occurrences). The ranks' own noise has a long tail (a
// held-up burst), and a straggler's delay takes several occurrences to spread and be
// absorbed, so the second occurrence alone still carries the first's. On the bundled stencil
// at 1024 the PET was 8.0% above the full replay from 2 occurrences, 3.5% from 3, 1.1% from 4
// (13.7, 12.8 and 12.5 us per halo iteration); on a stencil with held-up bursts at 256
// (SpreadTest.ThePetOfHeldUpBurstsStaysNearTheFullReplay) +12% from 2, -6.6% from 3. Each
// more occurrence costs about a third more simulation at 1M ranks (45 s with 3, 65 s with 4).
inline constexpr std::int64_t kSteadyOccurrences = 3;

struct PredictOptions {
  bool allow_idle = false;  // predict at the largest valid count <= target, the rest idle
  // Predict even when most of the largest traced run is in phases the model leaves out
  // (AppModel::unmodelled_share > kMostlyUnmodelled); otherwise that is an error.
  bool allow_remainder = false;
  // Simulate the whole synthesized run when ranks x events per rank stay below this.
  std::uint64_t full_replay_events = 20'000'000;
  // Occurrences a repeated phase is simulated with for its steady cost (>= 2).
  std::int64_t steady_occurrences = kSteadyOccurrences;
  bool intervals = true;  // simulate the low/high ends (costs two more simulations per phase)
  // With intervals and a full replay of at most noise_replay_events events: that many more
  // full replays with the compute noise drawn anew (SynthOptions::noise_seed 1, 2, ...; and
  // task_draw, for a self-scheduled run with a task profile), and
  // the interval holds them all (a run of the model is one draw of its noise; another run
  // would draw other noise). 0 = none.
  int noise_replays = 4;
  std::uint64_t noise_replay_events = 2'000'000;
  // With a full replay: one more, of the run on a quiet machine (SynthOptions::time_noise
  // false), for Prediction::quiet_time_s.
  bool quiet_replay = true;
  // With a full replay: one more, on the machine with an ideal network (sim::IdealNetwork),
  // for the POP metrics' split of the communication efficiency into serialization and
  // transfer (Prediction::efficiency).
  bool ideal_network = true;
  // Validation only: simulations of the real trace with its compute noise re-drawn, for the
  // noise floor (Validation::noise_floor); 0 = do not compute it.
  int noise_draws = 8;
  // Simulations run at once (they are independent: one per phase and number of
  // occurrences, the interval ends, the full replay); 0 = the hardware threads, at most 4;
  // 1 = one after another. Each holds its own per-rank state (about 1.8 KiB per rank:
  // 2 GiB at a million ranks). The prediction is the same whatever the number.
  int threads = 0;
};

struct PhasePrediction {
  int phase = 0;
  std::string description;
  double weight = 0;
  double time_per_occurrence_s = 0;
  double first_occurrence_s = 0;
  double total_s = 0;
  double share = 0;
  bool relevant = false;
};

// The model's own error where it can be checked: trained on every traced count but the
// largest, the largest predicted and compared with the simulation of its trace (as
// `pas2p validate`). A prediction's interval is widened to at least +-|error| around it
// (WidenBySelfCheck): an error the model makes one step beyond its training counts is a
// floor for its error further out, which the regressions' intervals alone do not include
// (they know the fits' uncertainty, not the compute noise of the traced runs).
struct SelfCheck {
  bool done = false;
  std::int64_t count = 0;            // the largest traced count, predicted from the others
  std::vector<int> training_counts;  // the others
  double predicted_s = 0;
  double real_simulated_s = 0;
  double error = 0;  // predicted / real - 1 (signed)
  // How much the largest traced run's time depends on how its compute noise falls in time:
  // the trace simulated with each rank's noise shuffled (Validation's noise floor draws,
  // kSelfCheckNoiseDraws of them), half the range of those times over their mean (0 when not
  // measured, noise_draws 0). A run at the target is one arrangement of its noise as the
  // traced run was, and varies from one run to the next at least as much; the interval is
  // widened to at least +- this too. (The draws' offset from the trace itself, the noise
  // floor, is left out: noise the real run had correlated in time shows there, and it is no
  // spread between runs.)
  int noise_draws = 0;
  double noise_spread = 0;
  std::string note;  // why it was not done (empty when done)
};

struct Prediction {
  std::int64_t target = 0;
  std::int64_t run_count = 0;  // target, or the largest valid count <= target (idle mode)
  std::int64_t idle_ranks = 0;
  std::string valid_counts;   // in words
  std::string check_message;  // idle-mode explanation, empty when the target is valid
  double predicted_time_s = 0;
  double interval_low_s = 0;
  double interval_high_s = 0;
  double pet_s = 0;        // sum of the phase totals + remainder
  double remainder_s = 0;  // unmodelled phases (kept at their traced share)
  // When the remainder's part in phases every count has follows a law of P that takes it
  // far from its traced share at this count (AppModel::unmodelled_ratio): that law, what
  // the prediction would be with it, and that the interval holds it. Empty otherwise.
  std::string remainder_law;
  std::string method;  // "full replay of the synthesized run" or "PET"
  std::uint64_t simulated_events = 0;
  // PredictOptions::noise_replays done (0: none) and the range of their times.
  int noise_replays = 0;
  double noise_low_s = 0, noise_high_s = 0;
  // The full replay with the compute noise that varies in time left out (each rank's own
  // draw per burst and the occurrence's shared draw; every mean kept, and of the spread
  // between ranks the part their own noise does not explain, SlotModel::cpu_spread_persistent):
  // the time on a quiet machine, where only lasting differences between ranks make them wait.
  // predicted_time_s - quiet_time_s is what the traced machine's noise costs at this count (it
  // grows with P where collectives wait for the slowest of more ranks). -1 when not replayed
  // (PredictOptions::quiet_replay, or a run too large).
  double quiet_time_s = -1;
  std::vector<PhasePrediction> phases;
  // The POP efficiency metrics of the full replay (sim/efficiency.h): where the time goes at
  // the target, of the modelled phases. efficiency_done = false when the run was predicted
  // phase by phase (PET); ideal_runtime_s < 0 without PredictOptions::ideal_network.
  bool efficiency_done = false;
  sim::Efficiency efficiency;
  SelfCheck self_check;  // set by WidenBySelfCheck; done = false when not checked
  // Where the model is extrapolated past what the traced problem can give at this count:
  // a call that carried at least one value per partner at the largest traced count is
  // predicted under one value per partner here (the problem is too small to split over this
  // many ranks; the application most likely cannot run here with this input). A value is
  // SlotModel::element_bytes: 8 bytes for a call whose traced messages were all multiples of
  // 8, one byte where they were not. One line per phase, in words; empty when nothing is out
  // of range.
  std::vector<std::string> limits;
  // Grid dimensions along which every traced count had at most 2 ranks and the target has
  // more: a rank's neighbours either way along it were one rank (or none), so the traces
  // could not tell the exchanges in each direction apart. One line per grid, in words.
  std::vector<std::string> untraced_extents;
  // Calls whose partners (or communicators) two rules reproduce at every traced count that
  // part at or below this count: the traces cannot tell which the application follows, the
  // prediction takes the first. One line per call, in words, naming a count to trace that
  // decides.
  std::vector<std::string> ambiguous_rules;
  // Repeated phases holding at least kUncertainWeightShare of the predicted time whose number
  // of occurrences at this count is uncertain by more than a factor kUncertainWeightSpread
  // (the high end of its interval over the low end): laws that fit the traced weights nearly
  // as well part that far here (a solver's iteration count, a few integers apart at the traced
  // counts). One line per phase, in words, with the range and the traced values.
  std::vector<std::string> uncertain_weights;
  // The model's own warnings (AppModel::warnings: oversubscribed or disturbed training
  // traces, phases left out, guessed directions), which hold for every prediction of it.
  std::vector<std::string> model_warnings;
};

inline constexpr double kUncertainWeightShare = 0.05;
inline constexpr double kUncertainWeightSpread = 2.0;

// The `limits` of a prediction at `nprocs` (see Prediction::limits).
std::vector<std::string> ProblemSizeLimits(const AppModel& model, std::int64_t nprocs);
// The `untraced_extents` of a prediction at `nprocs` (see Prediction::untraced_extents).
std::vector<std::string> UntracedExtents(const AppModel& model, std::int64_t nprocs);
// The `ambiguous_rules` of a prediction at `nprocs` (see Prediction::ambiguous_rules).
std::vector<std::string> AmbiguousRules(const AppModel& model, std::int64_t nprocs);

// What one occurrence of a phase does at `nprocs` (calls, partners' grid, bytes at that
// count), e.g. "4 irecv on a 64 x 64 grid, 301 B each; 4 isend on a 64 x 64 grid, ...". A
// phase of more than 8 runs of calls gives one run per kind of call and its range of sizes:
// "26 irecv on a 5 x 5 x 5 grid, 8 B to 2.9 KiB each; 26 isend ...; 1 waitall".
std::string DescribePhaseAt(const PhaseModel& phase, std::int64_t nprocs);

Prediction Predict(const AppModel& model, std::int64_t target, const sim::Machine& machine,
                   const PredictOptions& options = {});

// The self-check of `signatures` (>= 4 counts; `largest` is the trace of the largest one,
// null when only its signature is at hand): never throws for what the check cannot do, it
// says why in SelfCheck::note.
SelfCheck CheckLargestCount(const std::vector<phases::Signature>& signatures,
                            const TraceSource* largest, const sim::Machine& machine,
                            const PredictOptions& options = {});
// Keeps `check` in `p` and, when it was done, widens p's interval to at least
// predicted x (1 +- |error|) (the low end not below 0).
void WidenBySelfCheck(const SelfCheck& check, Prediction* p);

std::string FormatPrediction(const Prediction& p, const std::string& machine_name);
std::string PredictionToJson(const Prediction& p, const std::string& machine_name);

struct SweepRow {
  std::int64_t count = 0;
  bool beyond_problem = false;  // the prediction has limits: never recommended
  double time_s = 0;
  double speedup = 0;     // time at the first count / time here
  double efficiency = 0;  // speedup x first count / count
  double core_hours = 0;  // count x time / 3600
  // POP metrics at this count (Prediction::efficiency), -1 where it was predicted phase by
  // phase: the load balance and communication efficiency whose product is the parallel
  // efficiency, absolute (not relative to the first count as `efficiency` is).
  double load_balance = -1, communication = -1;
  // Prediction::quiet_time_s at this count (-1 where the run was predicted phase by phase).
  double quiet_time_s = -1;
};

struct Sweep {
  std::vector<SweepRow> rows;
  double efficiency_threshold = 0.5;
  std::int64_t recommended = 0;  // 0 when no count qualifies
  // The same rule on the quiet times (SweepRow::quiet_time_s, efficiency relative to the
  // first count's quiet time), over the rows that have one from the first on; 0 when the
  // first has none or no count qualifies.
  std::int64_t recommended_quiet = 0;
  std::string rule;  // the recommendation rule in words
  // Jumps in time between consecutive counts, explained (link contention or not).
  std::vector<std::string> notes;
  std::vector<std::string> model_warnings;  // as Prediction::model_warnings
};

// Valid counts in [low, high] (at most max_points of them, log-spaced when there are more,
// see SweepPoints), each predicted. Throws UserError when the range holds no valid count.
Sweep RunSweep(const AppModel& model, std::int64_t low, std::int64_t high,
               const sim::Machine& machine, double efficiency_threshold,
               std::size_t max_points = 12, const PredictOptions& options = {});
std::string FormatSweep(const Sweep& sweep);
// At most max_points of the sorted valid `counts`, log-spaced from the lowest (the sweep's
// baseline), each the count an allocation would ask for near its spot: whole nodes of
// cpus_per_node ranks first, then the smoothest count (smallest largest prime factor), then
// the nearest.
std::vector<std::int64_t> SweepPoints(const std::vector<std::int64_t>& counts,
                                      std::size_t max_points, int cpus_per_node);
std::string SweepToJson(const Sweep& sweep);
// CSV for a spreadsheet or a plot (predict --csv): a header line, then one line per count,
// with the columns of kCsvColumns (seconds and ratios as plain numbers, an empty field where
// a value was not computed: the interval in a sweep, the quiet time and POP metrics where
// the run was predicted phase by phase, speedup and efficiency for a single target).
inline constexpr const char* kCsvColumns =
    "processes,time_s,interval_low_s,interval_high_s,quiet_time_s,speedup,efficiency,"
    "core_hours,load_balance,communication_efficiency,beyond_problem,recommended";
std::string SweepToCsv(const Sweep& sweep);
std::string PredictionToCsv(const Prediction& p);

// Validation: train on every signature but the one of the largest count, predict that count
// and compare with its real trace.
// One phase of a validation: where the prediction's compute and time go, beside the real
// run's compute in the same phase (the real trace's signature, matched by functional
// similarity). CPU seconds are summed over the ranks and occurrences of the phase.
struct PhaseCheck {
  int phase = 0;  // index into AppModel::phases
  std::string description;
  double weight = 0;               // predicted occurrences
  double real_weight = -1;         // occurrences in the real run (-1: no matching phase)
  double predicted_compute_s = 0;  // CPU, all ranks and occurrences
  double real_compute_s = -1;      // -1: no matching phase in the real run
  double compute_error = -1;       // |predicted - real| / real, -1 when not compared
  double predicted_time_s = 0;     // the phase's share of the predicted time (Predict's total)
  double real_traced_share = -1;   // the phase's share of the real run's traced wall time
};

struct Validation {
  std::int64_t count = 0;      // the held-out count
  std::string held_out_trace;  // ValidateAgainst: the trace compared with (empty otherwise)
  std::vector<int> training_counts;
  std::uint64_t messages = 0;  // point-to-point messages sent in the real trace
  double pattern_match = 0;    // share of them with exactly the predicted peer
  // Of `messages`, those sent by the master of a self-scheduled phase: their partners depend
  // on the timing, so they count as matched up to the number of messages each partner gets
  // in both runs (the multiset of destinations), whatever their order.
  std::uint64_t scheduled_messages = 0;
  double scheduled_match = 1;  // share of scheduled_messages matched that way
  // (against the rescheduled replay's destinations when `rescheduled`, see below)
  double scheduled_match_traced_assignment = 1;  // the same against the traced destinations
  // The same share between the rescheduled replay and the rescheduled replays of the real
  // trace with its compute noise shuffled in time (the noise floor's draws, below; mean over
  // the draws): how far the traced noise alone moves which worker gets how many tasks, so
  // the most a model that knew each task's mean cost could match. -1 when not computed
  // (no rescheduled replay or no noise draws).
  double scheduled_match_floor = -1;
  // Collective calls of the real run (per rank, in order), and the share of them that the
  // prediction makes as the same collective on a communicator with the same members (and,
  // rooted ones, the same root): a collective's "peers".
  std::uint64_t collective_calls = 0;
  double collective_match = 1;
  // Self-scheduled runs: the real trace's CPU time of all workers, and of the busiest one
  // (how unevenly the traced run handed out its tasks; 0 without a self-scheduled phase).
  double workers_cpu_s = 0, busiest_worker_cpu_s = 0;
  // Self-scheduled runs: the simulation of the real trace as the simulated machine would run
  // it (sim::RescheduledTrace: the master's replies go to whichever worker answers first in
  // the simulation, each task's compute and result sends move with it). When `rescheduled`,
  // real_simulated_time_s, time_error, in_interval, the noise floor and scheduled_match are
  // against that replay, and the plain replay of the traced assignment (which worker ran
  // which task in the traced run, decided by the OS on the traced machine) is kept in
  // real_simulated_traced_assignment_s and time_error_traced_assignment. reschedule_note
  // says why a self-scheduled run was not rescheduled (empty otherwise).
  bool rescheduled = false;
  std::uint64_t rescheduled_tasks = 0;
  double rescheduled_busiest_worker_cpu_s = 0;
  double real_simulated_traced_assignment_s = 0;
  double time_error_traced_assignment = 0;
  std::string reschedule_note;
  // The share of the largest training run in phases the model leaves out (predicted at its
  // traced share, not synthesized: bytes, compute and peers compare the modelled part only).
  double unmodelled_share = 0;
  double unmodelled_bytes_share = 0;  // the same for the bytes sent

  double bytes_error = 0;    // |predicted - real| / real, bytes sent
  double compute_error = 0;  // same for the CPU time of compute bursts
  double time_error = 0;     // predicted time vs simulated real trace (rescheduled: above)
  // When the model has a law for its remainder (AppModel::unmodelled_ratio): the prediction
  // with the remainder's part in phases every count has following that law instead of its
  // kept share (Prediction::remainder_law), and its error as time_error's; -1 and 0
  // otherwise. Which of the two came closer says which to trust for this code.
  double law_predicted_time_s = -1;
  double time_error_law = 0;
  double predicted_time_s = 0;
  double real_simulated_time_s = 0;
  // The prediction's interval (Prediction::interval_low_s/high_s) and whether the simulated
  // real trace lies in it: how honest the interval is.
  double interval_low_s = 0, interval_high_s = 0;
  bool in_interval = false;
  // The POP metrics (sim/efficiency.h) of the prediction (Prediction::efficiency) and of the
  // simulated real trace on the same machine (with an ideal network too): whether the model
  // says rightly where the time goes. efficiency_done = false when the prediction was made
  // phase by phase.
  bool efficiency_done = false;
  sim::Efficiency predicted_efficiency, real_efficiency;
  // The self-check of the training counts (their largest predicted from the others), when
  // WidenBySelfCheck was applied: the interval above includes it, as `predict`'s does.
  SelfCheck self_check;
  // Noise floor: how far from its own trace a model that knew the real run's compute noise
  // exactly (each rank's mean per call, each occurrence's shared factor, each rank's own
  // residuals) but drew it independently from burst to burst (as the synthesis does) would
  // be; large when the real noise was correlated in time. Every compute burst of the real
  // trace is split into rank mean x occurrence factor x residual (bursts grouped by the calls
  // around them and their ordinal on the rank), each rank's residuals are shuffled in time
  // `noise_draws` times (deterministic seeds) and each shuffled trace is simulated on the
  // same machine. noise_floor = |their mean - real_simulated_time_s| / real_simulated_time_s;
  // a time_error near it is as close as the traced noise lets any model come. noise_draws = 0
  // when it was not computed (noise_note says why).
  int noise_draws = 0;
  double noise_low_s = 0, noise_high_s = 0, noise_mean_s = 0;
  double noise_floor = 0;
  std::string noise_note;
  // Both runs on a quiet machine: the prediction's quiet replay (Prediction::quiet_time_s)
  // against the real trace with every burst at its rank's mean for the calls around it (the
  // noise floor's split, without the occurrence's factor and the residual). quiet_error is
  // their relative difference: how well the model knows the means and the ranks' lasting
  // differences, whatever the noise did. -1 when not computed (no full replay, or no noise
  // draws).
  double predicted_quiet_s = -1, real_quiet_s = -1, quiet_error = 0;
  std::uint64_t real_bytes = 0, predicted_bytes = 0;
  double real_compute_s = 0, predicted_compute_s = 0;
  std::vector<PhaseCheck> phases;  // per modelled phase, in model order
  std::string phases_note;         // why the real run's phases could not be matched, if so
  // The trained model's own warnings (a direction the traces cannot tell, a phase left
  // out...), without those about the traces (oversubscribed, untraced calls), which the
  // caller has from the signatures.
  std::vector<std::string> model_warnings;
};

// `real` is the trace at the largest count; `signatures` include its signature (it is left
// out of training). Throws UserError with fewer than 4 signatures (3 to train).
Validation Validate(const std::vector<phases::Signature>& signatures, const TraceSource& real,
                    const sim::Machine& machine, const PredictOptions& options = {});
// Held-out check: train on every signature of `training` (>= 3 counts) and compare the
// prediction at real.nprocs() with `real`, a run at a count larger than every training count
// that was not trained on. Throws UserError when `real` is of another application or not
// larger than the training counts. `real` is analyzed with `analyze`, as the training traces
// were.
Validation ValidateAgainst(const std::vector<phases::Signature>& training, const TraceSource& real,
                           const sim::Machine& machine, const PredictOptions& options = {},
                           const phases::AnalyzeOptions& analyze = {});
// The same for a validation's prediction (interval and in_interval updated), with the
// self-check of its training counts.
void WidenBySelfCheck(const SelfCheck& check, Validation* v);
std::string FormatValidation(const Validation& v, const std::string& application);
std::string ValidationToJson(const Validation& v, const std::string& application);
// The check as CSV (validate --csv): a header line of kValidationCsvColumns and one line, so
// that several applications' checks concatenate into one table (errors as fractions, an
// empty field where not measured; the training counts space-separated in one field).
inline constexpr const char* kValidationCsvColumns =
    "application,count,training_counts,held_out_trace,pattern_match,collective_match,"
    "bytes_error,compute_error,time_error,noise_floor,quiet_error,predicted_time_s,"
    "real_simulated_time_s,interval_low_s,interval_high_s,in_interval";
std::string ValidationToCsv(const Validation& v, const std::string& application);

}  // namespace pas2p::synthesis
