#include "pas2p/synthesis/synthesize.h"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <boost/pool/pool.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <vector>

#include "pas2p/core/error.h"
#include "pas2p/core/huge_pages.h"
#include "pas2p/core/simgrid_ti.h"

namespace pas2p::synthesis {

namespace {
// The shape of a rank's own compute noise (SlotModel::cpu_noise_shape): the piecewise linear
// quantile function through the model's bins (bin j at u = (j + 1/2) / bins; the end
// segments' slopes carried on to u = 0 and 1, so the outer half bins keep a tail), shifted and
// scaled to mean 0 and standard deviation 1, so the spread and the mean compute stay the model's
// whatever the shape. Empty: Normalish's symmetric z.
struct NoiseShape {
  std::vector<double> bins;
  double mean = 0, inv_sd = 1;
  bool empty() const { return bins.empty(); }
  // z at u in [0, 1).
  double At(double u) const {
    const double x = u * static_cast<double>(bins.size()) - 0.5;
    const std::size_t last = bins.size() - 2;  // the last segment's first bin
    const std::size_t i = x <= 0 ? 0 : std::min(static_cast<std::size_t>(x), last);
    const double f = x - static_cast<double>(i);  // beyond the end bins: their segment's slope
    return (bins[i] * (1 - f) + bins[i + 1] * f - mean) * inv_sd;
  }
};

}  // namespace

// One slot evaluated at N.
struct SynthesizedTrace::SlotAt {
  const SlotModel* model = nullptr;
  std::optional<patterns::GeneralEquation::AtCount> peer;
  std::optional<patterns::GeneralEquation::AtCount> recv_peer;
  std::optional<patterns::CommunicatorRule::AtCount> comm;
  bool comm_is_world = true;
  CommId comm_base = 0;  // sub-communicator ids: comm_base + group index
  std::uint64_t bytes = 0, recv_bytes = 0, root_bytes = 0, root_recv_bytes = 0;
  // SlotModel::subtree_bytes: the bytes per rank of the subtree a message carries (0: the
  // slot's messages are `bytes` each).
  double subtree_unit = 0;
  std::int64_t subtree_root = 0;  // the tree's root at this count
  // SlotModel::component_bytes: each component's bytes per message, and the rank past each
  // component's last (empty: `bytes` on every rank).
  std::vector<std::uint64_t> component_bytes;
  std::vector<std::int64_t> component_ends;
  std::size_t ComponentOf(std::int64_t rank) const {
    return static_cast<std::size_t>(
        std::upper_bound(component_ends.begin(), component_ends.end(), rank) -
        component_ends.begin());
  }
  // The bytes of a message to or from `partner` (its subtree's, for a tree that carries them;
  // its component's, for a call with a law per component).
  std::uint64_t BytesWith(std::int64_t rank, std::int64_t partner, std::int64_t nprocs) const {
    if (!component_bytes.empty()) {
      const std::size_t c = ComponentOf(rank);
      return c < component_bytes.size() ? component_bytes[c] : bytes;
    }
    if (subtree_unit <= 0) return bytes;
    return static_cast<std::uint64_t>(std::llround(
        subtree_unit * static_cast<double>(SubtreeRanks(rank, partner, nprocs, subtree_root))));
  }
  // The largest message of this slot in component `c` of `ends` (any component: c past the
  // end), for a receive's room.
  std::uint64_t LargestIn(const std::vector<std::int64_t>& ends, std::size_t c) const {
    if (component_bytes.empty()) return bytes;
    if (ends == component_ends && c < component_bytes.size()) return component_bytes[c];
    return *std::max_element(component_bytes.begin(), component_bytes.end());
  }
  std::int64_t cpu_ns = 0;
  std::int64_t root_cpu_ns = 0;  // a root that moves: the burst at the root on its turn
  std::int64_t instructions = kNotMeasured;
  std::uint64_t id = 0;         // (phase, slot) as one number, for the spread's random stream
  std::uint64_t phase_key = 0;  // the phase's alone, for the shared factor's (SharedFactor)
  double spread_between = 0, spread_within = 0, spread_shared = 0;
  NoiseShape within_shape;  // the own part's shape (SlotModel::cpu_noise_shape)
  // 1 / the mean of max(0, 1 + spread x z) (a spread over ~0.3 clips the factor at 0, which
  // raises its mean: 1.9 for a spread of 3.4), so the spread keeps the model's mean compute
  // (the three factors are independent: the mean of their product is the product of means).
  double between_norm = 1, within_norm = 1, shared_norm = 1;
  double shared_square = 1;  // E[s^2] of the shared factor (SharedSquare)
  // The ranks' between factors are the spread's quantiles at the midpoints of nprocs strata,
  // rank r taking stratum (between_stride x r + between_offset) mod nprocs (a permutation,
  // keyed by the slot): the synthesized ranks spread as the model says, not as a sample of
  // it, and their mean is the model's. Drawn at random, P factors averaged 1 +- spread /
  // sqrt(P): an all-to-all whose ranks compute from 1/P to 1 of the largest share (25%
  // between ranks) came out 8% short of compute at 16 ranks. 0: not stratified.
  std::int64_t between_strata = 0;
  std::uint64_t between_stride = 1, between_offset = 0;
  // Per run length R of the phase (up to kStrataNorms): the shared factor's norm over its R
  // strata and the stride of their permutation (see SharedFactor); other runs compute the
  // stride and use shared_norm.
  struct RunStrata {
    std::int64_t reps = 0;
    std::uint64_t stride = 1;
    double norm = 1;
  };
  std::vector<RunStrata> run_strata;
  struct ClassValues {
    std::vector<std::uint64_t> bits;  // the mask as SynthRank's bit words
    std::int64_t cpu_ns = 0;
    std::int64_t instructions = kNotMeasured;
    double spread_within = -1, within_norm = 1;  // ClassCompute::spread_within (-1: the slot's)
  };
  std::vector<ClassValues> classes;  // SlotModel::class_compute at N
  // For a rank whose class was never traced (the interior of a 3 x 3 x 3 grid when 8, 12 and
  // 18 ranks were): the mean burst of the classes whose first call this slot is (`lead`),
  // and of those that make it after another (`follow`); -1 when no class does. The slot's
  // mean mixes both: a centre rank whose every call was some traced class's first took the
  // phase's main burst once per such call (61% too much compute at 27).
  std::int64_t lead_cpu_ns = -1, follow_cpu_ns = -1;
  // The CPU of the burst before this slot on a rank of the class `bits`, which makes this
  // slot first when `first`.
  std::int64_t CpuOf(std::span<const std::uint64_t> bits, bool first,
                     const ClassValues** cls) const {
    for (const auto& c : classes) {
      if (std::equal(c.bits.begin(), c.bits.end(), bits.begin(), bits.end())) {
        if (cls) *cls = &c;
        return c.cpu_ns;
      }
    }
    if (!classes.empty()) {
      if (first && lead_cpu_ns >= 0) return lead_cpu_ns;
      if (!first && follow_cpu_ns >= 0) return follow_cpu_ns;
    }
    return cpu_ns;
  }
  // The phase's classes tell its roots apart (their masks have one more character: '1' for
  // a root of one of the phase's rooted collectives); the same for every slot of a phase.
  bool root_class = false;
};

// Where the ranks' readers live. A simulation opens one per rank (a million at a million
// ranks, about 1 KiB each) and frees each when its stream ends. From the general heap they
// are scattered over small pages; here they are equal blocks carved from large chunks
// (huge_pages.h), and a freed block is the next one handed out. Several simulations of one
// trace may run at once: a lock guards the pool. Chunks go back when the trace is destroyed
// (the readers must not outlive it anyway: they read its model).
class ReaderPool {
 public:
  // Every call must ask for the same size.
  void* Allocate(std::size_t size) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!pool_) pool_.emplace(size, kFirstChunkBlocks, kMaxChunkBlocks);
    void* block = pool_->malloc();
    if (!block) throw std::bad_alloc();
    return block;
  }
  void Free(void* block) {
    const std::lock_guard<std::mutex> lock(mutex_);
    pool_->free(block);
  }

 private:
  // boost::pool's chunks, with their size in a header (FreeLarge needs it).
  struct Chunks {
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    static constexpr std::size_t kHeader = 64;
    static char* malloc(size_type bytes) {
      auto* base = static_cast<char*>(AllocateLarge(bytes + kHeader));
      *reinterpret_cast<std::size_t*>(base) = bytes + kHeader;
      return base + kHeader;
    }
    static void free(char* block) {
      char* base = block - kHeader;
      FreeLarge(base, *reinterpret_cast<std::size_t*>(base));
    }
  };
  // The chunks double from the first up to the largest; a new chunk is written through
  // (its free list), so the largest bounds what is resident beyond the readers open.
  static constexpr std::size_t kFirstChunkBlocks = 4096;
  static constexpr std::size_t kMaxChunkBlocks = 65536;
  std::mutex mutex_;
  std::optional<boost::pool<Chunks>> pool_;
};

struct SynthesizedTrace::Impl {
  mutable ReaderPool readers;               // OpenRank's readers
  std::vector<std::vector<SlotAt>> phases;  // [phase][slot]
  // Distinct sub-communicator rules: the slot that defines each (its comm_base is the id).
  std::vector<const SlotAt*> comm_defs;
  // Self-scheduling at N (PhaseModel::scheduled): phase -1 when no phase is scheduled.
  struct Schedule {
    int phase = -1;  // the scheduled phase (the workers run their tasks in its first run)
    std::int32_t master = 0;
    std::int64_t tasks = 0;  // tasks handed out = the master's replies in the synthesized run
    double master_ns = 0;    // the master's compute per reply in the scheduled phase
    // A worker's slots in one task (the phase's slots it makes) and their CPU per call.
    std::vector<const SlotAt*> worker_slots;
    std::vector<std::int64_t> worker_cpu_ns;
    std::vector<std::int32_t> tasks_of;  // per rank: the tasks it runs (the master: 0)
    // A run of several rounds (the scheduled phase runs once per round): per round, the
    // master's replies and each rank's tasks; one round holds the whole run.
    std::vector<std::int64_t> round_tasks;
    std::vector<std::vector<std::int32_t>> round_tasks_of;
    // The model's task profile (PhaseModel::task_profile) when this run hands out exactly
    // its tasks (null otherwise): the i-th task handed out costs profile[i] times the mean
    // task. Then, per round, the profile index of its first task and each worker's tasks:
    // round_workers[round] lists (worker, first) by worker for the workers with tasks, and
    // its tasks are round_ids[round][first ..) up to the next worker's first (profile
    // indices in the order it runs them). O(tasks), whatever the number of ranks.
    const std::vector<double>* profile = nullptr;
    double task_scale = 1;              // the model's mean task CPU at N over the worker slots' CPU
    std::vector<double> drawn_profile;  // SynthOptions::task_draw > 0: the drawn costs
    std::vector<std::int64_t> round_base;
    std::vector<std::vector<std::pair<std::int32_t, std::int64_t>>> round_workers;
    std::vector<std::vector<std::int64_t>> round_ids;
    double makespan_ns = 0;  // the schedule's last completion (summed over the rounds)
    std::int64_t busy = 0;   // workers with at least one task
    // The master's loop has no occurrence at N (fewer tasks than workers); the phase is kept
    // in the run, once, for the workers' tasks.
    bool master_idle = false;
  } schedule;
};

namespace {

constexpr CommId kSynthCommBase = CommId{0x5359} << 48;  // "SY": ids of synthesized comms

std::uint64_t Round(double v) { return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v)); }

// Per-rank state is kept small (a million ranks are open at once in the simulator): no
// event buffer (each Next() builds exactly one event), the pending requests as (slot,
// peer) pairs whose ids are consecutive, and which slots the rank makes as a bit mask.
// A deterministic standard-normal-like number from a key (sum of four uniforms, scaled to
// unit variance): the same inputs give the same synthesized trace.
std::uint64_t SplitMix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double Normalish(std::uint64_t key) {
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    key = SplitMix(key);
    sum += static_cast<double>(key >> 11) * 0x1.0p-53;
  }
  return (sum - 2.0) * std::sqrt(3.0);  // variance of the sum of 4 uniforms is 1/3
}

// E[f(z)] for z = Normalish's variable ((U1 + .. + U4 - 2) sqrt 3, the Irwin-Hall density
// of 4 uniforms), by the midpoint rule: deterministic, and exact enough.
template <class F>
double NormalishMean(F f) {
  constexpr int kSteps = 4000;
  double mean = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = 4.0 * (i + 0.5) / kSteps;  // the sum of the 4 uniforms
    double density = 0;
    for (int k = 0; k <= static_cast<int>(x); ++k) {
      static constexpr double kChoose[] = {1, 4, 6, 4, 1};
      density += (k % 2 ? -1 : 1) * kChoose[k] * (x - k) * (x - k) * (x - k);
    }
    density /= 6;
    mean += f((x - 2.0) * std::sqrt(3.0)) * density * (4.0 / kSteps);
  }
  return mean;
}

// E[f(shape.At(u))] for u uniform on (0, 1), by the midpoint rule.
template <class F>
double ShapeMean(const NoiseShape& shape, F f) {
  constexpr int kSteps = 4000;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) sum += f(shape.At((i + 0.5) / kSteps));
  return sum / kSteps;
}

NoiseShape ShapeOf(const std::vector<double>& bins) {
  NoiseShape shape;
  if (bins.size() < 2) return shape;
  shape.bins = bins;
  const double mean = ShapeMean(shape, [](double z) { return z; });
  const double var = ShapeMean(shape, [&](double z) { return (z - mean) * (z - mean); });
  if (!(var > 0)) return NoiseShape{};
  shape.mean = mean;
  shape.inv_sd = 1 / std::sqrt(var);
  return shape;
}

// z for the draw key: from the shape when it has one, else Normalish's.
double OwnZ(const NoiseShape& shape, std::uint64_t key) {
  if (shape.empty()) return Normalish(key);
  return shape.At(static_cast<double>(SplitMix(key) >> 11) * 0x1.0p-53);
}

// 1 / E[max(0, 1 + spread x z)]: a spread over ~0.3 clips the factor at 0, which raises its
// mean, and the norm brings it back.
double ClippedFactorNorm(double spread, const NoiseShape& shape = {}) {
  if (spread <= 0) return 1;
  auto clipped = [spread](double z) { return std::max(0.0, 1 + spread * z); };
  const double mean = shape.empty() ? NormalishMean(clipped) : ShapeMean(shape, clipped);
  return mean > 0 ? 1 / mean : 1;
}

// E[s^2] of the shared factor s = norm x max(0, 1 + spread z) (mean 1): 1 + its variance.
double SharedSquare(double spread, double norm) {
  if (spread <= 0) return 1;
  return norm * norm * NormalishMean([spread](double z) {
           const double f = std::max(0.0, 1 + spread * z);
           return f * f;
         });
}

// The own spread to draw under a shared factor whose E[s^2] is `shared_square`. The traced
// own spread (SlotModel::cpu_spread_within) is what is left of a burst around its rank's and
// its occurrence's means, relative to the mean burst; the synthesized burst multiplies the
// factors, so its own deviation is the shared factor times the own one, and without this the
// bursts would vary sqrt(E[s^2]) times more than traced. A ring of P - 1 steps whose bursts
// are one large one and many small ones per iteration (shared spread 2.04, clipped at 0:
// E[s^2] 2.14) drew an own spread of 36% around the mean burst where the trace has 25%, at every
// step, and its replay waited 3x longer than the trace for that noise.
double OwnUnderShared(double own, double shared_square) {
  return shared_square > 1 ? own / std::sqrt(shared_square) : own;
}

// The quantile of Normalish's variable at u in (0, 1): (x - 2) sqrt 3 where x, the sum of 4
// uniforms, has the Irwin-Hall CDF F(x) = sum_k (-1)^k C(4, k) (x - k)^4 / 24, k <= x. From a
// table of 4096 quantiles found once by bisection, interpolated linearly.
double NormalishQuantile(double u) {
  constexpr int kTable = 4096;
  static const std::vector<double> table = [] {
    auto cdf = [](double x) {
      static constexpr double kChoose[] = {1, 4, 6, 4, 1};
      double f = 0;
      for (int k = 0; k <= static_cast<int>(x) && k <= 4; ++k) {
        const double d = x - k;
        f += (k % 2 ? -1 : 1) * kChoose[k] * d * d * d * d;
      }
      return f / 24;
    };
    std::vector<double> t(kTable + 1);
    for (int i = 0; i <= kTable; ++i) {
      const double target = static_cast<double>(i) / kTable;
      double lo = 0, hi = 4;
      for (int step = 0; step < 60; ++step) {
        const double mid = 0.5 * (lo + hi);
        (cdf(mid) < target ? lo : hi) = mid;
      }
      t[static_cast<std::size_t>(i)] = (0.5 * (lo + hi) - 2.0) * std::sqrt(3.0);
    }
    return t;
  }();
  const double x = std::clamp(u, 0.0, 1.0) * kTable;
  const auto i = std::min(static_cast<int>(x), kTable - 1);
  const double f = x - i;
  return table[static_cast<std::size_t>(i)] * (1 - f) + table[static_cast<std::size_t>(i) + 1] * f;
}

// Runs up to this many repetitions have their shared factors normed over their own strata
// (and their strides computed once).
constexpr std::int64_t kStrataNorms = 4096;

// The stride of the permutation of a run's R strata: the integer nearest above R x 0.618
// that is coprime to R (consecutive repetitions land far apart in the distribution).
std::uint64_t StrataStride(std::uint64_t reps) {
  std::uint64_t stride = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(0.6180339887498949 * static_cast<double>(reps)));
  while (std::gcd(stride, reps) != 1) ++stride;
  return stride;
}

// 1 / the mean of max(0, 1 + spread z) over the R strata midpoints of z (1 with no clipping).
double StrataNorm(double spread, std::int64_t reps) {
  double sum = 0;
  for (std::int64_t i = 0; i < reps; ++i) {
    const double u = (static_cast<double>(i) + 0.5) / static_cast<double>(reps);
    sum += std::max(0.0, 1 + spread * NormalishQuantile(u));
  }
  return sum > 0 ? static_cast<double>(reps) / sum : 1;
}

// The lengths of the runs of each phase in `items` (a body executed `executions` times; its
// k-th execution makes SequenceCountAt of an item's total, the floor or the ceiling of
// total / executions), as CurrentRun walks them.
void RunLengths(const phases::Sequence& items, std::int64_t executions,
                std::map<int, std::set<std::int64_t>>* out) {
  for (const phases::SequenceItem& item : items) {
    if (item.is_loop()) {
      RunLengths(item.body, item.total, out);
      continue;
    }
    const std::int64_t e = std::max<std::int64_t>(executions, 1);
    std::int64_t rest = item.total, others = e;
    // The listed executions' counts, the rest spread over the others.
    for (std::size_t k = 0; k < item.counts.size() && others > 1; ++k) {
      (*out)[item.phase].insert(item.counts[k]);
      rest -= item.counts[k];
      others -= 1;
    }
    (*out)[item.phase].insert(rest / others);
    if (rest % others != 0) (*out)[item.phase].insert(rest / others + 1);
  }
}

// MakeSend/MakeRecv/MakeIsend/MakeIrecv (on MPI_COMM_WORLD) and MakeCompute, in place.
void SetP2P(Event* e, EventKind kind, std::int32_t peer, std::int32_t tag, std::uint64_t bytes,
            RequestId request) {
  e->Clear();
  e->kind = kind;
  e->peer = peer;
  e->tag = tag;
  e->bytes = bytes;
  e->request = request;
}
void SetCompute(Event* e, std::int64_t cpu_ns, std::int64_t instructions) {
  e->Clear();
  e->cpu_ns = cpu_ns;
  e->instructions = instructions;
}

struct PendingRequest {
  const SynthesizedTrace::SlotAt* slot = nullptr;
  std::int32_t peer = kNoRank;
};

// The draws of a worker's bursts in a self-scheduled phase are keyed by its task number
// (from this base), so the schedule and the worker's stream draw the same compute.
constexpr std::uint64_t kTaskDrawBase = std::uint64_t{1} << 62;
// The draw key of a worker's k-th task of round `round` (the rounds draw apart).
std::uint64_t TaskDrawKey(std::uint64_t round, std::uint64_t k) {
  return kTaskDrawBase + (round << 32) + k;
}

// The factor SynthRank::StepBody applies to the burst before slot `s` on `rank` for the
// draw key `occurrence` (1 without spread).
// `cls`: the rank's class of the slot, whose own spread replaces the slot's when it has one.
double BurstFactor(const SynthesizedTrace::SlotAt& s, std::uint64_t rank, std::uint64_t occurrence,
                   const SynthesizedTrace::SlotAt::ClassValues* cls = nullptr) {
  const bool own_class = cls != nullptr && cls->spread_within >= 0;
  const double spread_within = own_class ? cls->spread_within : s.spread_within;
  const double within_norm = own_class ? cls->within_norm : s.within_norm;
  if (s.spread_between <= 0 && spread_within <= 0) return 1;
  const std::uint64_t key = SplitMix(s.id ^ SplitMix(rank));
  double z_between = 0;
  if (s.between_strata > 0 && rank < static_cast<std::uint64_t>(s.between_strata)) {
    const auto strata = static_cast<std::uint64_t>(s.between_strata);
    __extension__ using Wide = unsigned __int128;
    const auto index = static_cast<std::uint64_t>(
        (static_cast<Wide>(s.between_stride) * rank + s.between_offset) % strata);
    z_between = NormalishQuantile((static_cast<double>(index) + 0.5) / static_cast<double>(strata));
  } else {
    z_between = Normalish(key);
  }
  const double between = std::max(0.0, 1 + s.spread_between * z_between) * s.between_norm;
  const double within =
      std::max(0.0, 1 + spread_within * OwnZ(s.within_shape, key ^ SplitMix(occurrence))) *
      within_norm;
  return between * within;
}

// The list schedule of a self-scheduled phase: the master first hands one task to each
// worker (ascending rank), then each time a result arrives - from the worker that becomes
// free first (ties: the lower rank) - replies to that worker with the next task, or with a
// stop once every task is handed out. A worker's k-th task costs its slots' compute with
// the model's spread (deterministic draws keyed by rank and k); the master serves one
// result at a time and spends its own compute per reply; messages are taken as free (the
// tasks' compute dominates such codes; the simulator then times the real messages). State:
// O(P) (the free times and each worker's tasks so far), whatever the number of tasks.
class ListSchedule {
 public:
  using Schedule = SynthesizedTrace::Impl::Schedule;
  // Round `round` of `tasks` tasks (a run of one round: round 0 of all the tasks).
  // `workers`: if not null, receives the worker of each task in hand-out order.
  ListSchedule(const Schedule& s, std::int64_t nprocs, std::int64_t tasks, std::uint64_t round,
               std::vector<std::int32_t>* workers = nullptr)
      : s_(s),
        tasks_(tasks),
        round_(round),
        given_(static_cast<std::size_t>(nprocs), 0),
        workers_(workers) {
    for (std::int64_t w = 0; w < nprocs && assigned_ < tasks_; ++w) {
      if (w == s_.master) continue;
      Give(static_cast<std::int32_t>(w), clock_);
    }
  }
  // The worker whose result the master receives next (its reply goes there); -1 when every
  // result has been received.
  std::int32_t Next() {
    if (free_.empty()) return -1;
    const auto [t, w] = free_.top();
    free_.pop();
    makespan_ns_ = std::max(makespan_ns_, t);
    clock_ = std::max(clock_, t) + s_.master_ns;
    if (assigned_ < tasks_) Give(w, clock_);
    return w;
  }
  std::int32_t TasksOf(std::int64_t rank) const { return given_[static_cast<std::size_t>(rank)]; }
  double makespan_ns() const { return makespan_ns_; }

 private:
  void Give(std::int32_t w, double at) {
    double cost = 0;
    const std::uint64_t k = static_cast<std::uint64_t>(given_[static_cast<std::size_t>(w)]);
    if (s_.profile) {
      const double f =
          s_.task_scale * (*s_.profile)[static_cast<std::size_t>(
                              s_.round_base[static_cast<std::size_t>(round_)] + assigned_)];
      for (std::int64_t c : s_.worker_cpu_ns) cost += static_cast<double>(c) * f;
    } else {
      for (std::size_t i = 0; i < s_.worker_slots.size(); ++i) {
        cost +=
            static_cast<double>(s_.worker_cpu_ns[i]) * s_.task_scale *
            BurstFactor(*s_.worker_slots[i], static_cast<std::uint64_t>(w), TaskDrawKey(round_, k));
      }
    }
    if (workers_) workers_->push_back(w);
    free_.emplace(at + cost, w);
    ++given_[static_cast<std::size_t>(w)];
    ++assigned_;
  }
  const Schedule& s_;
  std::int64_t tasks_ = 0;
  std::uint64_t round_ = 0;
  std::priority_queue<std::pair<double, std::int32_t>, std::vector<std::pair<double, std::int32_t>>,
                      std::greater<>>
      free_;
  std::vector<std::int32_t> given_;
  std::int64_t assigned_ = 0;
  double clock_ = 0;  // the master's clock
  double makespan_ns_ = 0;
  std::vector<std::int32_t>* workers_ = nullptr;
};

class SynthRank : public RankEventSource {
  // The lists of a rank reader hold a few entries on most ranks: kept inline, a reader is
  // one allocation (a million of them are open at once in the simulator).
  template <typename T, std::size_t N>
  using SmallVector = boost::container::small_vector<T, N>;
  using Dests = SmallVector<std::int64_t, 8>;

 public:
  SynthRank(const SynthesizedTrace* trace, const SynthesizedTrace::Impl* impl, int rank)
      : trace_(trace), impl_(impl), rank_(rank) {}

  // Readers are made in their trace's ReaderPool (new (pool) SynthRank(...)); deleting one
  // through its base returns it there (a destroying delete reads the pool before the
  // reader is destroyed). Blocks are whole cache lines, so every reader's lines are aligned.
  static void* operator new(std::size_t size, ReaderPool& pool) {
    return pool.Allocate((size + 63) / 64 * 64);
  }
  static void operator delete(SynthRank* reader, std::destroying_delete_t) {
    ReaderPool& pool = reader->impl_->readers;
    reader->~SynthRank();
    pool.Free(reader);
  }
  static void operator delete(void* reader, ReaderPool& pool) { pool.Free(reader); }  // a throw

  bool Next(Event* event) override {
    for (;;) {
      switch (stage_) {
        case Stage::kInit:
          event->Clear();
          event->kind = EventKind::kInit;
          stage_ = Stage::kComms;
          return true;
        case Stage::kComms:
          while (comm_index_ < impl_->comm_defs.size()) {
            const auto* def = impl_->comm_defs[comm_index_++];
            const std::int64_t group = def->comm->GroupIndex(rank_);
            if (group < 0) continue;
            event->Clear();
            event->kind = EventKind::kCommCreate;
            event->comm = kCommWorld;
            event->new_comm = def->comm_base + static_cast<CommId>(group);
            event->value = static_cast<std::int64_t>(CommOrigin::kSplit);
            for (std::int64_t m : def->comm->GroupOf(rank_)) {
              event->members.push_back(static_cast<std::int32_t>(m));
            }
            return true;
          }
          stage_ = Stage::kBody;
          break;
        case Stage::kBody:
          if (StepBody(event)) return true;
          stage_ = Stage::kEnd;
          break;
        case Stage::kEnd:
          event->Clear();
          event->kind = EventKind::kFinalize;
          stage_ = Stage::kDone;
          return true;
        case Stage::kDone:
          status_ = StreamStatus::kComplete;
          return false;
      }
    }
  }
  StreamStatus status() const override { return status_; }
  const std::string& message() const override { return message_; }
  int rank() const override { return rank_; }

 private:
  using SlotAt = SynthesizedTrace::SlotAt;

  // One event of the run body; false at its end.
  bool StepBody(Event* event) {
    for (;;) {
      if (call_index_ < num_calls_) {
        // A polled completion's wait comes after the burst that followed its test, before
        // the rank's next call (SlotModel::polled).
        if (deferred_) return EmitDeferred(event);
        EmitCall(event, call_index_++);
        return true;
      }
      if (!NextSlot()) {
        if (deferred_) return EmitDeferred(event);
        return false;
      }
      const SlotAt::ClassValues* cls = nullptr;
      std::int64_t cpu = cur_->CpuOf({made_.data(), made_.size()}, FirstMade() == cur_index_, &cls);
      std::int64_t ins = cls ? cls->instructions : cur_->instructions;
      PrepareCalls();
      if (cur_->model->root_step != phases::RootStep::kFixed && MovingRoot().second) {
        cpu = cur_->root_cpu_ns;  // the root's turn: its own work before the call
      }
      if (cur_->model->cpu_per_occurrence && iters_ > 1) {  // the occurrence's total, split
        const auto k = static_cast<std::int64_t>(iters_);
        cpu = (cpu + k / 2) / k;
        if (ins > 0) ins = (ins + k / 2) / k;
      }
      if (double f = 0; cpu > 0 && ProfiledTask(&f)) {
        // A task of a self-scheduled phase with a cost profile: its own cost, as the list
        // schedule that handed it to this worker took it.
        cpu = static_cast<std::int64_t>(std::llround(static_cast<double>(cpu) * f));
      } else if (cpu > 0 && (cur_->spread_between > 0 || cur_->spread_within > 0 ||
                             (cls && cls->spread_within > 0) || InStep().spread_shared > 0)) {
        // The rank's own factors (BurstFactor) and the shared one: the same on every rank in
        // the same occurrence of the phase.
        const double own =
            BurstFactor(*cur_, static_cast<std::uint64_t>(rank_), DrawOccurrence(), cls);
        const double shared = SharedFactor();
        cpu = static_cast<std::int64_t>(
            std::llround(static_cast<double>(cpu) * own * shared * TaskScale()));
      } else if (cpu > 0) {
        cpu = static_cast<std::int64_t>(std::llround(static_cast<double>(cpu) * TaskScale()));
      }
      if (cpu > 0 || ins > 0) {
        SetCompute(event, cpu, ins);
        return true;
      }
    }
  }

  // The run item the rank is at: its phase and its repetitions in this execution of the
  // enclosing loop body; false at the end of the run. Descends into loops and leaves the
  // finished ones (the stack holds one frame per open loop).
  bool CurrentRun(std::size_t* phase, std::int64_t* reps) {
    if (!cursor_started_) {
      cursor_started_ = true;
      stack_.push_back(Frame{&trace_->sequence(), 1, 0, 0, -1, 0});
    }
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      if (f.index >= f.items->size()) {
        stack_.pop_back();
        if (!stack_.empty()) ++stack_.back().done;
        continue;
      }
      const phases::SequenceItem& item = (*f.items)[f.index];
      if (f.count < 0) {
        f.count = phases::SequenceCountAt(item.total, f.executions, f.execution, item.counts);
        f.done = 0;
      }
      if (!item.is_loop()) {
        *phase = static_cast<std::size_t>(item.phase);
        *reps = f.count;
        return true;
      }
      if (f.done >= f.count) {
        ++f.index;
        f.count = -1;
        continue;
      }
      // Iteration `done` of this execution is the body's execution number first + done.
      const std::int64_t execution =
          phases::SequenceFirstAt(item.total, f.executions, f.execution, item.counts) + f.done;
      stack_.push_back(Frame{&item.body, item.total, execution, 0, -1, 0});
    }
    return false;
  }

  // Moves to the next slot this rank makes; false at the end of the run.
  bool NextSlot() {
    for (;;) {
      std::size_t phase = 0;
      std::int64_t reps = 0;
      if (!CurrentRun(&phase, &reps)) return false;
      const auto& slots = impl_->phases[phase];
      reps_ = Repetitions(phase, reps);
      if (rep_ >= reps_ || slots.empty()) {
        Frame& f = stack_.back();
        ++f.index;
        f.count = -1;
        ++runs_done_;
        rep_ = 0;
        slot_ = 0;
        started_ = false;
        continue;
      }
      if (!started_) {
        const PhaseModel& pm = trace_->model().phases[phase];
        own_order_ = pm.OrderOf(rank_, trace_->nprocs());
        if (own_order_ && own_order_->size() != slots.size()) own_order_ = nullptr;
        StartOccurrence(slots, pm);
        started_ = true;
      }
      if (slot_ >= slots.size()) {
        slot_ = 0;
        if (++iter_ < iters_) {  // the next iteration of a repeated block
          ++occurrence_;
          continue;
        }
        started_ = false;
        ++rep_;
        continue;
      }
      const std::size_t k = own_order_ ? (*own_order_)[slot_] : slot_;
      ++slot_;
      if (!Made(k)) continue;
      cur_ = &slots[k];
      cur_index_ = k;
      // The slot whose shared factor this burst takes: the one the ranks that start at slot 0
      // are at in the same step of the loop body (SharedFactor).
      in_step_ = &slots[slot_ - 1];
      return true;
    }
  }

  // The shared factor of the current slot in the current occurrence: a function only of
  // which occurrence of the run it is (which run item of the order it is in, counted over the
  // whole run: every rank walks the same order; the repetition, the block iteration), not
  // of the rank (occurrence_ counts per rank: a block runs as many
  // iterations as the rank has partners), so it is the same on every rank. Drawn once per
  // occurrence, the ranks do not average it out, so a run of R repetitions is stratified
  // rather than drawn independently: repetition k takes the quantile of Normalish's variable
  // at (pi(k) + 1/2) / R, pi a permutation of 0..R-1 (a stride near R x 0.618 coprime to R,
  // from an offset keyed by the phase, the run item and the block iteration), and the factors
  // max(0, 1 + spread z) are normed over those R strata. The run's total compute is then the
  // model's, whatever R, instead of drifting by spread / sqrt(R): a phase whose shared
  // bursts shrink over its 29 iterations (an LU's trailing update) came out 3% off at 16
  // ranks from independent antithetic pairs (the unpaired one and the clipped ones). A run
  // of one repetition takes the middle stratum, the mean; so the first k repetitions of a
  // phase simulated alone cost k times its mean, whatever k (predict's per-phase times).
  // Every slot of the phase takes the same quantile in the same occurrence: what the ranks
  // share is shared in time, and an occurrence is the time they share, whichever of its
  // calls each rank is at (a multigrid cycle's coarse level is small in every burst of its
  // halo exchange; the host that slows every rank for a while slows the burst each is in).
  // Keyed by the slot, each burst of an occurrence drew its own quantile, a large burst
  // before one send and a small one before the next, and as the ranks make their sends in
  // orders of their own, a rank's large burst met its partner's small one at every step:
  // SpreadTest.OccurrencesThatAreMultigridLevelsCostWhatTheyCostInTheTrace replayed 2.2 times
  // as long as its trace at 32 ranks (now 2.6% over it); HPCG's pattern traced at 4-32
  // ranks and predicted at 48 came out 70% over its trace (now 41%).
  // A rank that starts the occurrence at another slot (PhaseModel::reordered_ranks: a
  // red-black exchange, an odd-even sort's odd ranks) takes the factor of the slot the other
  // ranks are at in the same step of the body, not of its own call's slot: the work both
  // classes do at the top of the loop is one burst in time, and drawn apart, every step
  // would make one partner wait for the other's draw (an odd-even sort from 4-12 ranks
  // predicted 16 ranks 26% slow, all of it such waits).
  const SlotAt& InStep() const { return in_step_ ? *in_step_ : *cur_; }
  double SharedFactor() const {
    const SlotAt* at = &InStep();
    const double spread = at->spread_shared;
    std::uint64_t key = SplitMix(at->phase_key ^ 0x5348415245440000ULL);
    key = SplitMix(key ^ runs_done_);
    key = SplitMix(key ^ static_cast<std::uint64_t>(iter_));
    const auto reps = static_cast<std::uint64_t>(std::max<std::int64_t>(reps_, 0));
    const auto k = static_cast<std::uint64_t>(rep_);
    if (k >= reps) {  // not in a counted run: an independent draw
      return std::max(0.0, 1 + spread * Normalish(key ^ SplitMix(k))) * at->shared_norm;
    }
    const SlotAt::RunStrata* strata = nullptr;
    for (const SlotAt::RunStrata& r : at->run_strata) {
      if (r.reps == reps_) strata = &r;
    }
    const std::uint64_t stride = strata ? strata->stride : StrataStride(reps);
    __extension__ using Wide = unsigned __int128;
    const auto index = static_cast<std::uint64_t>(
        (static_cast<Wide>(stride) * k + static_cast<Wide>(key % reps)) % reps);
    const double z =
        NormalishQuantile((static_cast<double>(index) + 0.5) / static_cast<double>(reps));
    return std::max(0.0, 1 + spread * z) * (strata ? strata->norm : at->shared_norm);
  }

  bool Made(std::size_t k) const { return (made_[k / 64] >> (k % 64)) & 1U; }
  // The first slot this rank makes in the occurrence, in slot order as the class masks are
  // (SIZE_MAX: none).
  std::size_t FirstMade() const { return first_made_; }

 public:
  // Counting mode (used once, on the master, before the schedule exists): replies go to
  // MPI_PROC_NULL and are counted, per round (a round starts with a run of the scheduled
  // phase; replies before the first run count in the first round).
  void CountReplies() { counting_ = true; }
  std::int64_t replies() const { return replies_; }
  const std::vector<std::int64_t>& replies_per_round() const { return round_replies_; }
  // The slots this rank makes in one occurrence of `phase`, with their CPU per call (its
  // class's where it has one), as StepBody draws them.
  void SlotsMadeIn(int phase, std::vector<const SlotAt*>* slots, std::vector<std::int64_t>* cpu) {
    const auto& all = impl_->phases[static_cast<std::size_t>(phase)];
    StartOccurrence(all, trace_->model().phases[static_cast<std::size_t>(phase)]);
    for (std::size_t k = 0; k < all.size(); ++k) {
      if (!Made(k)) continue;
      const std::int64_t c = all[k].CpuOf({made_.data(), made_.size()}, FirstMade() == k, nullptr);
      slots->push_back(&all[k]);
      cpu->push_back(c);
    }
  }

 private:
  // With a self-scheduled phase whose tasks are fewer than the workers, the workers without
  // a task stay idle: no messages between them and the master (the traces, where every
  // worker had tasks, cannot say what such a worker would exchange).
  bool Busy() const { return !impl_->schedule.tasks_of.empty() && IsBusyRankRelevant(); }
  bool IsBusyRankRelevant() const {
    const auto& sch = impl_->schedule;
    return rank_ == sch.master || sch.tasks_of[static_cast<std::size_t>(rank_)] == 0;
  }
  // Whether `peer` exchanges messages with this rank under the rule above.
  bool IsBusy(std::int64_t peer) const {
    const auto& sch = impl_->schedule;
    if (peer < 0 || peer >= trace_->nprocs()) return true;
    if (rank_ == sch.master)
      return peer == sch.master || sch.tasks_of[static_cast<std::size_t>(peer)] > 0;
    return peer != sch.master;  // an idle worker
  }
  std::size_t BusyPartners(const patterns::GeneralEquation::AtCount& eq) const {
    std::size_t n = 0;
    eq.ForEachDest(rank_, [&](std::int64_t d) { n += IsBusy(d); });
    return n;
  }
  // A worker of a self-scheduled run receives whatever its master sends next, task or stop:
  // the master's replies carry one tag per slot, while the code tells a stop by its tag
  // (the trace has the tags received, not that the worker posted MPI_ANY_TAG), so a
  // worker's receives from its master match any tag; their order is the master's
  // (messages between two ranks do not overtake).
  std::int32_t WorkerTag(std::int32_t peer, std::int32_t tag) const {
    const auto& sch = impl_->schedule;
    return sch.phase >= 0 && rank_ != sch.master && peer == sch.master ? kAnyTag : tag;
  }
  // Repetitions of sequence entry `entry` on this rank: a worker runs its tasks of a
  // self-scheduled phase's round in the phase's run of that round (the first run for a run
  // of one round, and none in later runs).
  std::int64_t Repetitions(std::size_t phase, std::int64_t reps) {
    const auto& sch = impl_->schedule;
    cur_phase_ = static_cast<int>(phase);
    if (cur_phase_ == sch.phase && runs_done_ + 1 != sched_run_at_) {
      // A new run of the scheduled phase: the next round.
      sched_run_at_ = runs_done_ + 1;
      ++round_;
      if (counting_) round_replies_.resize(static_cast<std::size_t>(round_ + 1), 0);
    }
    if (cur_phase_ == sch.phase && rank_ == sch.master && sch.master_idle) return 0;
    if (cur_phase_ != sch.phase || rank_ == sch.master || sch.tasks_of.empty()) return reps;
    const auto r = static_cast<std::size_t>(round_);
    return r < sch.round_tasks_of.size() ? sch.round_tasks_of[r][static_cast<std::size_t>(rank_)]
                                         : 0;
  }
  // The key of this occurrence's within-rank draws: a worker's task number in a
  // self-scheduled phase (so that ListSchedule draws the same), else the occurrence count.
  std::uint64_t DrawOccurrence() const {
    const auto& sch = impl_->schedule;
    if (sch.phase >= 0 && rank_ != sch.master && cur_phase_ == sch.phase) {
      return TaskDrawKey(static_cast<std::uint64_t>(ScheduleRound()),
                         static_cast<std::uint64_t>(rep_));
    }
    return occurrence_;
  }
  // A worker's burst in a task of the self-scheduled phase: the scale of the workers' calls
  // to the model's mean task (Schedule::task_scale); 1 elsewhere.
  double TaskScale() const {
    const auto& sch = impl_->schedule;
    return sch.phase >= 0 && rank_ != sch.master && cur_phase_ == sch.phase ? sch.task_scale : 1;
  }
  // A worker's burst in a task of the self-scheduled phase when the model has a task
  // profile: `*factor` = that task's cost relative to the mean task.
  bool ProfiledTask(double* factor) const {
    const auto& sch = impl_->schedule;
    if (!sch.profile || rank_ == sch.master || cur_phase_ != sch.phase) return false;
    const auto round = static_cast<std::size_t>(ScheduleRound());
    if (round >= sch.round_workers.size()) return false;
    const auto& workers = sch.round_workers[round];
    const auto it = std::lower_bound(workers.begin(), workers.end(),
                                     std::pair<std::int32_t, std::int64_t>{rank_, 0});
    if (it == workers.end() || it->first != rank_) return false;
    const std::int64_t end = std::next(it) == workers.end()
                                 ? static_cast<std::int64_t>(sch.round_ids[round].size())
                                 : std::next(it)->second;
    const std::int64_t at = it->second + static_cast<std::int64_t>(rep_);
    if (at >= end) return false;
    *factor = sch.task_scale * (*sch.profile)[static_cast<std::size_t>(
                                   sch.round_ids[round][static_cast<std::size_t>(at)])];
    return true;
  }
  // The round whose schedule the master's replies follow: the latest run of the scheduled
  // phase in a model of several rounds; the only round otherwise.
  std::int64_t ScheduleRound() const {
    const auto& sch = impl_->schedule;
    if (sch.phase < 0 ||
        !trace_->model().phases[static_cast<std::size_t>(sch.phase)].rounds.present)
      return 0;
    return std::max<std::int64_t>(0, round_);
  }
  // The partner of a reply: the worker whose result the schedule has arrive next.
  std::int32_t ReplyPeer() {
    ++replies_;
    const std::int64_t round = ScheduleRound();
    if (counting_) {
      round_replies_.resize(std::max(round_replies_.size(), static_cast<std::size_t>(round + 1)),
                            0);
      ++round_replies_[static_cast<std::size_t>(round)];
    }
    const auto& sch = impl_->schedule;
    if (counting_ || sch.phase < 0) return kProcNull;
    if (!schedule_ || schedule_round_ != round) {
      const auto r = static_cast<std::size_t>(round);
      schedule_ = std::make_unique<ListSchedule>(
          sch, trace_->nprocs(), r < sch.round_tasks.size() ? sch.round_tasks[r] : 0,
          static_cast<std::uint64_t>(round));
      schedule_round_ = round;
    }
    const std::int32_t w = schedule_->Next();
    return w >= 0 ? w : kProcNull;
  }

  // The source a wildcard receive posted as `posted` completes with: on the master of a
  // self-scheduled run, the worker its next reply goes to (drawn now from the schedule and
  // used by the reply), so the stream names its sources as a traced one does and a replay
  // can hand the tasks out anew; -1 otherwise (not a wildcard, not the master, or counting).
  std::int32_t WildcardSource(std::int32_t posted) {
    const auto& sch = impl_->schedule;
    if (posted != kAnySource || rank_ != sch.master || sch.phase < 0 || counting_) return -1;
    if (!has_peek_) {
      peek_ = ReplyPeer();
      has_peek_ = true;
    }
    return peek_;
  }

  bool Present(const SlotAt& s) const {
    if (s.model->carried && trace_->options().only_phase >= 0) return false;
    switch (s.model->presence) {
      case Presence::kAll:
        return true;
      case Presence::kHasPartner:
        return (s.peer && s.peer->NumDests(rank_) > 0) ||
               (s.recv_peer && s.recv_peer->NumDests(rank_) > 0);
      case Presence::kCommMember:
        return s.comm && s.comm->GroupIndex(rank_) >= 0;
      case Presence::kLikeSlots:
        for (int k : s.model->like_slots) {
          if (k >= 0 && static_cast<std::size_t>(k) < num_slots_ &&
              Made(static_cast<std::size_t>(k))) {
            return true;
          }
        }
        return false;
      case Presence::kOnlyRank0:
        return rank_ == 0;
      case Presence::kAllButRank0:
        return rank_ != 0;
    }
    return true;
  }

  // Which slots of the occurrence this rank makes (presence rules that depend on other
  // slots last); the mask is also the rank's class for the compute models.
  // Then a character for the roots of the phase's rooted collectives (when they are a
  // class), and one for the ranks that make the slots in an order of their own
  // (PhaseModel::reordered_ranks).
  void StartOccurrence(const std::vector<SlotAt>& slots, const PhaseModel& pm) {
    num_slots_ = slots.size();
    ++occurrence_;
    block_ = pm.block;
    iter_ = 0;
    iters_ = 1;
    const bool roles = !slots.empty() && slots.front().root_class;
    const bool reordered = pm.reordered_ranks != RankSet::kNone;
    made_.assign((slots.size() + (roles ? 1 : 0) + (reordered ? 1 : 0) + 63) / 64, 0);
    if (reordered && InRankSet(pm.reordered_ranks, rank_, trace_->nprocs())) {
      const std::size_t bit = slots.size() + (roles ? 1 : 0);
      made_[bit / 64] |= std::uint64_t{1} << (bit % 64);
    }
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t k = 0; k < slots.size(); ++k) {
        const bool like = slots[k].model->presence == Presence::kLikeSlots;
        if (like != (pass == 1)) continue;
        if (Present(slots[k])) made_[k / 64] |= std::uint64_t{1} << (k % 64);
      }
    }
    if (roles && IsRootIn(slots)) {
      made_[slots.size() / 64] |= std::uint64_t{1} << (slots.size() % 64);
    }
    first_made_ = SIZE_MAX;
    for (std::size_t k = 0; k < slots.size() && first_made_ == SIZE_MAX; ++k) {
      if (Made(k)) first_made_ = k;
    }
    if (block_) {
      // As many iterations as the rank's most partners in any slot.
      std::size_t most = 0;
      for (std::size_t k = 0; k < slots.size(); ++k) {
        if (!Made(k)) continue;
        if (slots[k].peer) {
          most = std::max<std::size_t>(
              most, Busy() ? BusyPartners(*slots[k].peer)
                           : static_cast<std::size_t>(slots[k].peer->NumDests(rank_)));
        }
        // Replies in a block (a master's last reply, the stop, to each worker that ran
        // tasks): one per such worker.
        if (slots[k].model->reply && impl_->schedule.phase >= 0 && !slots[k].peer) {
          most = std::max<std::size_t>(most, static_cast<std::size_t>(impl_->schedule.busy));
        }
        if (slots[k].recv_peer) {
          most = std::max<std::size_t>(
              most, static_cast<std::size_t>(slots[k].recv_peer->NumDests(rank_)));
        }
      }
      if (most == 0) made_.assign(made_.size(), 0);  // no partner: nothing to do
      iters_ = std::max<std::size_t>(most, 1);
    }
  }

  // Whether this rank is the root of one of the rooted collectives it makes in `slots`.
  bool IsRootIn(const std::vector<SlotAt>& slots) const {
    for (std::size_t k = 0; k < slots.size(); ++k) {
      const SlotModel& m = *slots[k].model;
      if (!Made(k) || !IsRooted(m.kind) || m.root_step != phases::RootStep::kFixed) continue;
      const SlotAt& s = slots[k];
      const bool world = s.comm_is_world || !s.comm;
      const std::int64_t size = world ? trace_->nprocs() : s.comm->GroupSizeOf(rank_);
      std::int64_t index = m.root ? m.root->At(size) : 0;
      index = std::clamp<std::int64_t>(index, 0, size - 1);
      if (world ? index == rank_ : s.comm->RankInGroup(rank_) == index) return true;
    }
    return false;
  }

  // The calls the current slot makes on this rank (point-to-point: one per partner).
  void PrepareCalls() {
    call_index_ = 0;
    num_calls_ = 0;
    const SlotModel& m = *cur_->model;
    const EventKind kind = m.kind;
    if (IsPointToPoint(kind)) {
      dests_.clear();
      if (InCache()) {
        // A later iteration of a block with many partners (a master handing out one task to
        // each worker, a pairwise exchange with every other rank): its i-th partner from the
        // list sorted once, not P per iteration.
        if (iter_ < cache_.size()) dests_.push_back(cache_[iter_]);
      } else {
        if (cur_->peer)
          cur_->peer->ForEachDest(rank_, [this](std::int64_t d) {
            if (!Busy() || IsBusy(d)) dests_.push_back(d);
          });
        if (block_ && dests_.size() > kCacheFrom) {
          SortDests(cur_->model->dest_order, rank_, trace_->nprocs(),
                    std::span<std::int64_t>(dests_.data(), dests_.size()));
          cache_.assign(dests_.begin(), dests_.end());
          cache_slot_ = cur_;
          cache_run_ = runs_done_;
          cache_rep_ = rep_;
          source_cache_.clear();
          if (kind == EventKind::kSendrecv && cur_->recv_peer) {
            cur_->recv_peer->ForEachDest(rank_,
                                         [this](std::int64_t d) { source_cache_.push_back(d); });
            SortDests(cur_->model->recv_order, rank_, trace_->nprocs(), &source_cache_);
          }
          dests_.assign(iter_ < cache_.size() ? 1 : 0, iter_ < cache_.size() ? cache_[iter_] : 0);
        } else {
          OrderAndPick(&dests_, cur_->model->dest_order);
        }
      }
      const bool recv_kind = kind == EventKind::kRecv || kind == EventKind::kIrecv;
      if (recv_kind && m.wildcard) dests_.assign(1, kAnySource);
      if (m.reply && impl_->schedule.phase >= 0) dests_.assign(1, kProcNull);  // see ReplyPeer
      // A block iteration beyond this slot's partners makes no call.
      if (block_ && dests_.empty() && kind != EventKind::kSendrecv) return;
      if (kind == EventKind::kSendrecv) {
        sources_.clear();
        if (InCache()) {  // sorted with the partners, when they were
          if (iter_ < source_cache_.size()) sources_.push_back(source_cache_[iter_]);
        } else if (cur_->recv_peer) {
          cur_->recv_peer->ForEachDest(rank_, [this](std::int64_t d) { sources_.push_back(d); });
          OrderAndPick(&sources_, cur_->model->recv_order);
        }
        num_calls_ = std::max<std::size_t>({dests_.size(), sources_.size(), 1});
      } else {
        if (dests_.empty()) dests_.assign(1, kProcNull);
        num_calls_ = dests_.size();
      }
    } else if (IsCompletion(kind)) {
      num_calls_ = 1;
    } else if (IsCollective(kind)) {
      num_calls_ = (cur_->comm_is_world || cur_->comm->GroupIndex(rank_) >= 0) ? 1 : 0;
    }
  }

  // Whether the current block slot's partners (and a sendrecv's sources) of this occurrence
  // are sorted in cache_ (and source_cache_).
  bool InCache() const {
    return block_ && cur_ == cache_slot_ && runs_done_ == cache_run_ && rep_ == cache_rep_;
  }

  // Partners in the slot's call order; in a repeated block only this iteration's one.
  void OrderAndPick(Dests* dests, DestOrder order) const {
    if (dests->size() > 1) {
      SortDests(order, rank_, trace_->nprocs(),
                std::span<std::int64_t>(dests->data(), dests->size()));
    }
    if (!block_) return;
    if (iter_ < dests->size()) {
      const std::int64_t d = (*dests)[iter_];
      dests->assign(1, d);
    } else {
      dests->clear();
    }
  }

  void EmitCall(Event* event, std::size_t i) {
    const SlotAt& s = *cur_;
    const SlotModel& m = *s.model;
    if (IsCompletion(m.kind)) return EmitCompletion(event);
    if (IsCollective(m.kind)) return EmitCollective(event);
    if (m.kind == EventKind::kSendrecv) {
      event->Clear();
      event->kind = EventKind::kSendrecv;
      event->peer = i < dests_.size() ? static_cast<std::int32_t>(dests_[i]) : kProcNull;
      event->recv_peer = i < sources_.size() ? static_cast<std::int32_t>(sources_[i]) : kProcNull;
      event->tag = event->recv_tag = m.tag;
      event->bytes = s.BytesWith(rank_, event->peer, trace_->nprocs());
      // What the receive half gets is the message its partner's same call sends (the tracer
      // records the bytes received, MPI_Get_count of the status): nothing from MPI_PROC_NULL.
      // Not the fitted mean of the receive half, which counts a mesh's open boundary as 0 and
      // so would receive less than the partner sends (a truncated receive in MPI terms). (A
      // call on components has its partners in the rank's own component, of the same size.)
      event->recv_bytes = event->recv_peer == kProcNull ? 0 : event->bytes;
      return;
    }
    auto peer = static_cast<std::int32_t>(dests_[i]);
    if (m.reply && impl_->schedule.phase >= 0 &&
        (m.kind == EventKind::kSend || m.kind == EventKind::kIsend)) {
      peer = has_peek_ ? peek_ : ReplyPeer();
      has_peek_ = false;
    }
    const std::uint64_t bytes = s.BytesWith(rank_, peer, trace_->nprocs());
    switch (m.kind) {
      case EventKind::kSend:
        SetP2P(event, EventKind::kSend, peer, m.tag, bytes, 0);
        break;
      case EventKind::kRecv:
        SetP2P(event, EventKind::kRecv, peer, WorkerTag(peer, m.tag), bytes, 0);
        // A blocking wildcard receive, recorded as a tracer records one: the actual source,
        // recv_peer = kAnySource.
        if (const std::int32_t w = WildcardSource(peer); w >= 0) {
          event->peer = w;
          event->recv_peer = kAnySource;
        }
        break;
      case EventKind::kIsend:
        SetP2P(event, EventKind::kIsend, peer, m.tag, bytes, next_request_++);
        pending_.push_back(PendingRequest{&s, peer});
        break;
      case EventKind::kIrecv:
        SetP2P(event, EventKind::kIrecv, peer, WorkerTag(peer, m.tag), bytes, next_request_++);
        pending_.push_back(PendingRequest{&s, peer});
        break;
      default:
        SetP2P(event, EventKind::kSend, peer, m.tag, bytes, 0);
        break;
    }
  }

  bool EmitDeferred(Event* event) {
    *event = std::move(*deferred_);
    deferred_.reset();
    return true;
  }

  // Completions take the oldest pending requests; their ids are consecutive from
  // next_request_ - pending. A polled one is a test that completes nothing yet (the
  // simulation completes there what has arrived) and the completion itself, kept in
  // deferred_, is made before the rank's next call.
  void EmitCompletion(Event* event) {
    EmitCompletionNow(event);
    if (!cur_->model->polled || event->completed.empty()) return;
    deferred_ = std::make_unique<Event>(*event);
    event->completed.clear();
    event->kind = event->kind == EventKind::kWait      ? EventKind::kTest
                  : event->kind == EventKind::kWaitany ? EventKind::kTestany
                  : event->kind == EventKind::kWaitall ? EventKind::kTestall
                                                       : EventKind::kTestsome;
  }

  void EmitCompletionNow(Event* event) {
    const SlotModel& m = *cur_->model;
    const std::size_t pending = pending_.size() - head_;
    const std::size_t k =
        m.all_pending
            ? pending
            : std::min<std::size_t>(pending, static_cast<std::size_t>(std::max(0, m.requests)));
    event->Clear();
    event->kind = m.kind;
    const bool one = m.kind == EventKind::kWait || m.kind == EventKind::kWaitany ||
                     m.kind == EventKind::kTest || m.kind == EventKind::kTestany;
    const RequestId first = next_request_ - static_cast<RequestId>(pending);
    const std::size_t done = one ? std::min<std::size_t>(1, k) : k;
    event->requests.reserve(m.kind == EventKind::kWait ? done : k);
    for (std::size_t i = 0; i < (m.kind == EventKind::kWait ? done : k); ++i) {
      event->requests.push_back(first + static_cast<RequestId>(i));
    }
    event->completed.reserve(done);
    for (std::size_t i = 0; i < done; ++i) {
      const PendingRequest& p = pending_[head_ + i];
      Completion c;
      c.request = first + static_cast<RequestId>(i);
      const EventKind created = p.slot->model->kind;
      if (created == EventKind::kIrecv) {
        c.peer = p.peer;
        if (const std::int32_t w = WildcardSource(p.peer); w >= 0) c.peer = w;
        c.tag = p.slot->model->tag;
        c.bytes = p.slot->BytesWith(rank_, p.peer, trace_->nprocs());
      }
      event->completed.push_back(c);
    }
    head_ += done;
    if (head_ == pending_.size()) {
      pending_.clear();
      head_ = 0;
    } else if (head_ >= 64 && head_ * 2 >= pending_.size()) {
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  void EmitCollective(Event* event) {
    const SlotAt& s = *cur_;
    const SlotModel& m = *s.model;
    CommId comm = kCommWorld;
    std::int64_t size = trace_->nprocs();
    std::int64_t group = 0;
    if (!s.comm_is_world) {
      group = s.comm->GroupIndex(rank_);
      comm = s.comm_base + static_cast<CommId>(group);
      size = s.comm->GroupSizeOf(rank_);
    }
    std::int32_t root = kNoRank;
    bool is_root = false;
    if (IsRooted(m.kind)) {
      std::int64_t index = m.root ? m.root->At(size) : 0;
      index = std::clamp<std::int64_t>(index, 0, size - 1);
      if (m.root_step != phases::RootStep::kFixed) index = MovingRoot().first;
      LastRoot(m.kind, comm) = index;
      if (s.comm_is_world) {
        root = static_cast<std::int32_t>(index);
      } else {
        const std::vector<std::int64_t> members = s.comm->GroupOf(rank_);
        root = static_cast<std::int32_t>(members[static_cast<std::size_t>(index)]);
      }
      is_root = root == rank_;
    }
    std::uint64_t send = is_root ? s.root_bytes : s.bytes;
    std::uint64_t recv = is_root ? s.root_recv_bytes : s.recv_bytes;
    if ((m.bytes_max_ratio != 1 || m.recv_bytes_max_ratio != 1) && size > 1 && root == kNoRank) {
      // Uneven parts (SlotModel::bytes_max_ratio): the communicator's first member moves the
      // largest rank's share, the others what keeps the mean.
      const bool first = s.comm_is_world ? rank_ == 0 : s.comm->RankInGroup(rank_) == 0;
      const auto share = [&](std::uint64_t mean, double ratio) {
        const double r = std::min(ratio, static_cast<double>(size));
        const double f =
            first ? r : (static_cast<double>(size) - r) / static_cast<double>(size - 1);
        return static_cast<std::uint64_t>(std::llround(static_cast<double>(mean) * f));
      };
      send = share(send, m.bytes_max_ratio);
      recv = share(recv, m.recv_bytes_max_ratio);
    }
    event->Clear();
    event->kind = m.kind;
    event->send_bytes = send;
    event->recv_bytes = recv;
    event->peer = root;
    event->comm = comm;
  }

  // The previous root (communicator rank) of `kind` on `comm` on this rank; -1 before any.
  std::int64_t& LastRoot(EventKind kind, CommId comm) {
    for (auto& r : roots_) {
      if (r.kind == kind && r.comm == comm) return r.last;
    }
    roots_.push_back(RootTrack{kind, comm, -1});
    return roots_.back().last;
  }
  // The current slot's moving root (communicator rank) and whether it is this rank: every
  // member of the communicator makes the same collectives on it in the same order, so each
  // follows the same roots from its own history.
  std::pair<std::int64_t, bool> MovingRoot() {
    const SlotAt& s = *cur_;
    CommId comm = kCommWorld;
    std::int64_t size = trace_->nprocs(), me = rank_;
    if (!s.comm_is_world) {
      comm = s.comm_base + static_cast<CommId>(s.comm->GroupIndex(rank_));
      size = s.comm->GroupSizeOf(rank_);
      me = s.comm->RankInGroup(rank_);
    }
    const std::int64_t last = LastRoot(s.model->kind, comm);
    std::int64_t index = last;
    switch (s.model->root_step) {
      case phases::RootStep::kNext:
        index = (last + 1) % size;
        break;
      case phases::RootStep::kPrevious:
        index = last < 0 ? size - 1 : (last - 1 + size) % size;
        break;
      case phases::RootStep::kSame:
      case phases::RootStep::kFixed:
        index = std::max<std::int64_t>(last, 0);
        break;
    }
    return {index, index == me};
  }

  enum class Stage : std::uint8_t { kInit, kComms, kBody, kEnd, kDone };
  struct RootTrack {
    EventKind kind;
    CommId comm;
    std::int64_t last;
  };
  // The members in the order of how often they are read. A simulation of a million ranks
  // resumes a rank whose reader is far out of the cache; the fields nearly every event reads
  // are together in the first lines (the simulator fetches those ahead), the per-slot and
  // per-call state next, what only some runs use (rooted collectives, self-scheduling, big
  // partner lists, errors) last.
  //
  // Every event.
  Stage stage_ = Stage::kInit;
  bool cursor_started_ = false;
  bool started_ = false;   // StartOccurrence ran for the current occurrence
  bool block_ = false;     // the current phase is a repeated block
  bool counting_ = false;  // CountReplies
  bool has_peek_ = false;  // peek_ holds the master's next reply partner
  std::size_t call_index_ = 0, num_calls_ = 0;
  const SlotAt* cur_ = nullptr;
  // A polled completion's wait (EmitCompletion); a pointer, as a million rank streams are
  // open at once and few ever hold one.
  std::unique_ptr<Event> deferred_;
  std::size_t slot_ = 0;
  std::int64_t rep_ = 0;
  // Every slot.
  std::int64_t reps_ = 0;  // repetitions of the current run item on this rank
  std::size_t iter_ = 0, iters_ = 1;
  // The order this rank makes the slots in (PhaseModel::OrderOf); null: slot order.
  const std::vector<std::size_t>* own_order_ = nullptr;
  const SlotAt* in_step_ = nullptr;  // the slot at this step of the body from slot 0
  const SynthesizedTrace* trace_;
  const SynthesizedTrace::Impl* impl_;
  int rank_;
  // The master's next reply partner, drawn from the schedule when a wildcard receive
  // completed (its source) and not yet used by the reply.
  std::int32_t peek_ = kProcNull;
  std::uint64_t runs_done_ = 0;        // run items finished so far (the same count on every rank)
  std::uint64_t occurrence_ = 0;       // occurrences (and block iterations) started so far
  std::size_t first_made_ = SIZE_MAX;  // FirstMade()
  std::size_t cur_index_ = 0;          // the index of cur_ in its phase's slots
  std::size_t head_ = 0;               // pending_[head_..] are pending
  RequestId next_request_ = 1;
  std::size_t num_slots_ = 0;
  int cur_phase_ = -1;  // the phase of the run item being made
  StreamStatus status_ = StreamStatus::kReading;
  SmallVector<std::uint64_t, 1> made_;  // bit k: the rank makes slot k in this occurrence
  // Where the rank is in the run's order: the body being run (top level: the sequence),
  // which of its `executions` executions this is, the item in it, the item's count in this
  // execution (-1: not computed yet) and, for a loop item, its iterations done.
  struct Frame {
    const phases::Sequence* items;
    std::int64_t executions;
    std::int64_t execution;
    std::size_t index;
    std::int64_t count;
    std::int64_t done;
  };
  SmallVector<Frame, 2> stack_;
  // Every call.
  SmallVector<PendingRequest, 8> pending_;
  Dests dests_, sources_;
  // Some runs only.
  // Sorted partners of the current block slot with more than kCacheFrom of them (only such
  // ranks hold them: a master, O(P)).
  static constexpr std::size_t kCacheFrom = 64;
  const SlotAt* cache_slot_ = nullptr;
  std::uint64_t cache_run_ = 0;
  std::int64_t cache_rep_ = -1;
  std::vector<std::int64_t> cache_;
  std::vector<std::int64_t> source_cache_;  // a sendrecv's sources, sorted alike
  std::vector<RootTrack> roots_;            // empty (no allocation) until a rooted collective
  std::size_t comm_index_ = 0;
  std::int64_t replies_ = 0;
  // The round of the scheduled phase: its runs entered so far - 1 (-1 before the first),
  // and the run item (runs_done_ + 1) of the latest.
  std::int64_t round_ = -1;
  std::uint64_t sched_run_at_ = 0;
  std::vector<std::int64_t> round_replies_;  // counting mode: replies per round
  std::int64_t schedule_round_ = -1;         // the round schedule_ hands out
  std::unique_ptr<ListSchedule> schedule_;   // the master's replies, generated on demand
  std::string message_;
};

}  // namespace

SynthesizedTrace::SynthesizedTrace(AppModel model, std::int64_t nprocs, const SynthOptions& options)
    : model_(std::move(model)),
      nprocs_(nprocs),
      options_(options),
      impl_(std::make_unique<Impl>()) {
  if (nprocs < 1 || nprocs > std::numeric_limits<int>::max()) {
    throw UserError("cannot synthesize a run of " + std::to_string(nprocs) + " processes");
  }
  if (!model_.valid.IsValid(nprocs)) {
    std::vector<std::int64_t> traced(model_.counts.begin(), model_.counts.end());
    patterns::RequireTarget(model_.valid, nprocs, false, traced);
  }
  // Steps by bit extended to the bits the target count has.
  for (PhaseModel& pm : model_.phases) pm = PhaseAt(pm, model_.counts, nprocs);
  metadata_.application = model_.application;
  metadata_.nprocs = static_cast<int>(nprocs);
  metadata_.source = "synthesized";
  metadata_.command = {"pas2p", "synthesize", "--target", std::to_string(nprocs)};
  if (model_.HasInstructions()) metadata_.counters = {"PAPI_TOT_INS"};
  const double p = static_cast<double>(nprocs);
  // Slots at N.
  std::map<std::string, const SlotAt*> comm_by_rule;
  impl_->phases.resize(model_.phases.size());
  CommId next_base = kSynthCommBase;
  for (std::size_t ph = 0; ph < model_.phases.size(); ++ph) {
    const PhaseModel& pm = model_.phases[ph];
    auto& slots = impl_->phases[ph];
    slots.resize(pm.slots.size());
    // The totalled slots follow the phase's compute model (their shares at N, the model's
    // interval); the others their own.
    const double cpu_scale = pm.CpuScaleAt(p, options_.side);
    const bool time_noise = options_.time_noise || pm.scheduled;  // SynthOptions::time_noise
    for (std::size_t s = 0; s < pm.slots.size(); ++s) {
      const SlotModel& sm = pm.slots[s];
      SlotAt& at = slots[s];
      at.model = &sm;
      at.id = (static_cast<std::uint64_t>(ph) << 32) | static_cast<std::uint64_t>(s);
      at.phase_key = static_cast<std::uint64_t>(ph) << 32;
      if (options_.noise_seed != 0) {
        const std::uint64_t seed = SplitMix(options_.noise_seed ^ 0x4E4F495345ULL);
        at.id ^= seed;
        at.phase_key ^= seed;
      }
      if (options_.spread) {
        // A quiet machine keeps only the part of the ranks' differences their own noise
        // does not explain. The noisy run keeps all of it: its draws add their own spread
        // of the means, but leaving out the traced sampling part there made the bundled
        // checks 0.1% worse on average (4.77% against 4.66%).
        at.spread_between = time_noise ? sm.cpu_spread_between : sm.cpu_spread_persistent;
        at.spread_shared = time_noise ? sm.cpu_spread_shared : 0;
        at.shared_norm = ClippedFactorNorm(at.spread_shared);
        at.shared_square = SharedSquare(at.spread_shared, at.shared_norm);
        at.spread_within = time_noise ? OwnUnderShared(sm.cpu_spread_within, at.shared_square) : 0;
        if (at.spread_between > 0) {
          at.between_strata = nprocs;
          at.between_stride = StrataStride(static_cast<std::uint64_t>(nprocs));
          at.between_offset =
              SplitMix(at.id ^ 0x4245545745454EULL) % static_cast<std::uint64_t>(nprocs);
          at.between_norm = StrataNorm(at.spread_between, nprocs);
        }
        at.within_shape = ShapeOf(sm.cpu_noise_shape);
        at.within_norm = ClippedFactorNorm(at.spread_within, at.within_shape);
      }
      if (sm.peer) at.peer.emplace(sm.peer->At(nprocs));
      if (sm.recv_peer) at.recv_peer.emplace(sm.recv_peer->At(nprocs));
      if (sm.communicator) {
        at.comm.emplace(sm.communicator->At(nprocs));
        at.comm_is_world = at.comm->NumGroups() == 1 && at.comm->GroupSize() == nprocs;
      }
      const int side = options_.side;
      at.bytes = Round(sm.BytesAt(nprocs, side));
      at.recv_bytes = Round(sm.RecvBytesAt(nprocs, side));
      if (const SlotModel::ComponentsAt parts = sm.ComponentBytesAt(nprocs, side);
          !parts.bytes.empty()) {
        std::int64_t end = 0;
        for (std::size_t c = 0; c < parts.bytes.size(); ++c) {
          at.component_bytes.push_back(Round(parts.bytes[c]));
          at.component_ends.push_back(end += parts.sizes[c]);
        }
      }
      if (sm.subtree_bytes) {
        at.subtree_unit = sm.bytes.At(p, side);
        if (sm.peer) at.subtree_root = sm.peer->root.At(nprocs);
      }
      at.root_bytes = Round(sm.root_bytes.At(p, side));
      at.root_recv_bytes = Round(sm.root_recv_bytes.At(p, side));
      const bool totalled = pm.cpu_total.present && pm.TotalledSlot(s);
      const int cpu_side = totalled ? 0 : side;
      const double cpu_factor = totalled ? cpu_scale : 1.0;
      const double slot_cpu = pm.SlotCpuAt(s, p, cpu_side);
      at.cpu_ns = static_cast<std::int64_t>(Round(slot_cpu * cpu_factor));
      // The root's turn: the others' burst and what the root adds (it may add less than 0).
      at.root_cpu_ns = std::max<std::int64_t>(
          0, at.cpu_ns + static_cast<std::int64_t>(
                             std::llround(sm.root_cpu_ns.SignedAt(p, cpu_side) * cpu_factor)));
      at.instructions = sm.instructions.present
                            ? static_cast<std::int64_t>(Round(sm.instructions.At(p, side)))
                            : kNotMeasured;
      for (const auto& cc : sm.class_compute) {
        SlotAt::ClassValues v;
        v.bits.assign((cc.mask.size() + 63) / 64, 0);
        for (std::size_t k = 0; k < cc.mask.size(); ++k) {
          if (cc.mask[k] == '1') v.bits[k / 64] |= std::uint64_t{1} << (k % 64);
        }
        if (cc.cpu_of_rank_total > 0 && pm.rank_cpu_total.present) {
          v.cpu_ns = static_cast<std::int64_t>(
              Round(cc.cpu_of_rank_total * pm.rank_cpu_total.At(p, side)));
        } else {
          v.cpu_ns = static_cast<std::int64_t>(
              Round((cc.cpu_relative > 0 ? cc.cpu_relative * slot_cpu : cc.cpu_ns.At(p, cpu_side)) *
                    cpu_factor));
        }
        v.instructions = cc.instructions.present
                             ? static_cast<std::int64_t>(Round(cc.instructions.At(p, side)))
                             : kNotMeasured;
        if (options_.spread && time_noise && cc.spread_within >= 0) {
          v.spread_within = OwnUnderShared(cc.spread_within, at.shared_square);
          v.within_norm = ClippedFactorNorm(v.spread_within, at.within_shape);
        }
        at.root_class =
            at.root_class ||
            cc.mask.size() == slots.size() + 1 + (pm.reordered_ranks != RankSet::kNone ? 1 : 0);
        at.classes.push_back(std::move(v));
      }
      // Lead and follow bursts (SlotAt::lead_cpu_ns) from the classes that make this slot.
      double lead = 0, follow = 0;
      int leads = 0, follows = 0;
      for (std::size_t c = 0; c < sm.class_compute.size(); ++c) {
        const std::string& mask = sm.class_compute[c].mask;
        const std::size_t first = mask.find('1');
        if (s >= mask.size() || mask[s] != '1') continue;
        (first == s ? lead : follow) += static_cast<double>(at.classes[c].cpu_ns);
        ++(first == s ? leads : follows);
      }
      if (leads > 0) at.lead_cpu_ns = static_cast<std::int64_t>(std::llround(lead / leads));
      if (follows > 0) at.follow_cpu_ns = static_cast<std::int64_t>(std::llround(follow / follows));
    }
    bool roles = false;
    for (const SlotAt& at : slots) roles = roles || at.root_class;
    for (SlotAt& at : slots) at.root_class = roles;
    // An irecv posts room for what it is sent: at least the largest message of the phase's
    // sends with its tag. The sizes of a call pair are fitted apart, and the receive's law can
    // come out a few bytes under the send's (LAMMPS's exchanges at 64 ranks: 6058 B posted
    // for 6065 B sent), which in MPI is a truncated receive. A larger posted buffer is what
    // such codes post anyway; the transfer takes the sender's size.
    for (SlotAt& at : slots) {
      // (A tree's level that carries subtrees posts each receive for its own subtree.)
      if (at.model->kind != EventKind::kIrecv || at.model->wildcard || at.subtree_unit > 0)
        continue;
      for (const SlotAt& other : slots) {
        const EventKind k = other.model->kind;
        if ((k == EventKind::kSend || k == EventKind::kIsend || k == EventKind::kSendrecv) &&
            other.model->tag == at.model->tag && other.model->sub_comm == at.model->sub_comm) {
          at.bytes = std::max(at.bytes, other.LargestIn({}, 0));
          for (std::size_t c = 0; c < at.component_bytes.size(); ++c) {
            at.component_bytes[c] =
                std::max(at.component_bytes[c], other.LargestIn(at.component_ends, c));
          }
        }
      }
    }
  }
  // Communicator ids: one family per distinct rule.
  for (auto& slots : impl_->phases) {
    for (SlotAt& at : slots) {
      if (!at.comm || at.comm_is_world) continue;
      const std::string key = at.model->communicator->Describe() +
                              (at.model->communicator->only_group_of_rank0 ? "#0" : "");
      auto it = comm_by_rule.find(key);
      if (it != comm_by_rule.end()) {
        at.comm_base = it->second->comm_base;
      } else {
        at.comm_base = next_base;
        next_base += CommId{1} << 32;
        comm_by_rule[key] = &at;
        impl_->comm_defs.push_back(&at);
      }
    }
  }
  // The run.
  if (options_.only_phase >= 0) {
    if (static_cast<std::size_t>(options_.only_phase) >= model_.phases.size()) {
      throw UserError("no phase " + std::to_string(options_.only_phase) + " in the model");
    }
    if (options_.repetitions > 0) {
      sequence_.push_back(phases::SequenceItem::Run(options_.only_phase, options_.repetitions));
    }
  } else {
    // Per phase, its weight at N over its weight at the largest traced count.
    std::vector<double> factor(model_.phases.size(), 1.0);
    for (const int ph : phases::SequencePhases(model_.sequence)) {
      const Quantity& w = model_.phases[static_cast<std::size_t>(ph)].weight;
      double traced = w.model.training.empty() ? 0 : w.model.training.back().y;
      if (w.divided_by_p && !w.model.training.empty()) traced /= w.model.training.back().p;
      factor[static_cast<std::size_t>(ph)] = traced > 0 ? PhaseWeight(ph) / traced : 1.0;
      // A self-scheduled phase keeps at least one occurrence (the workers run their tasks
      // in it, even when the master's loop has none at N: fewer tasks than workers).
      if (model_.phases[static_cast<std::size_t>(ph)].scheduled && traced > 0 &&
          PhaseWeight(ph) < 1) {
        factor[static_cast<std::size_t>(ph)] = 1.0 / traced;
      }
    }
    std::vector<double> carry(model_.phases.size(), 0.0);
    sequence_ = phases::SimplifySequence(ScaleSequence(model_.sequence, 1, 1, 1.0, factor, &carry));
  }
  std::map<int, std::set<std::int64_t>> lengths;
  RunLengths(sequence_, 1, &lengths);
  for (const auto& [ph, runs] : lengths) {
    if (ph < 0 || static_cast<std::size_t>(ph) >= impl_->phases.size()) continue;
    for (SlotAt& at : impl_->phases[static_cast<std::size_t>(ph)]) {
      if (!(at.spread_shared > 0)) continue;
      for (const std::int64_t r : runs) {
        if (r >= 1 && r <= kStrataNorms) {
          at.run_strata.push_back(
              {r, StrataStride(static_cast<std::uint64_t>(r)), StrataNorm(at.spread_shared, r)});
        }
      }
    }
  }
  BuildSchedule();
}

void SynthesizedTrace::BuildSchedule() {
  auto& sch = impl_->schedule;
  for (const int ph : phases::SequencePhases(sequence_)) {
    const PhaseModel& pm = model_.phases[static_cast<std::size_t>(ph)];
    if (!pm.scheduled || sch.phase >= 0) continue;
    sch.phase = ph;
    sch.master = pm.master;
    sch.master_idle = PhaseWeight(ph) < 1;
  }
  if (sch.phase < 0) return;
  // A worker's mean task cost differs from another's by the mix of tasks it happened to run,
  // which the within-rank draws (per task) already reproduce; the traced spread between the
  // workers' means is that mix again (plus the noise of tracing many ranks on few cores), so
  // it is not drawn a second time per worker.
  // Nor is a shared (per occurrence) part: a worker's k-th task is not the same occurrence
  // as another worker's k-th task.
  for (SlotAt& at : impl_->phases[static_cast<std::size_t>(sch.phase)]) {
    at.spread_between = 0;
    at.between_norm = 1;
    at.spread_shared = 0;
    at.shared_norm = 1;
    // Without the shared factor the own spread is drawn as traced (OwnUnderShared undone).
    const double undo = std::sqrt(at.shared_square);
    at.shared_square = 1;
    at.spread_within *= undo;
    at.within_norm = ClippedFactorNorm(at.spread_within, at.within_shape);
    for (SlotAt::ClassValues& v : at.classes) {
      if (v.spread_within <= 0) continue;
      v.spread_within *= undo;
      v.within_norm = ClippedFactorNorm(v.spread_within, at.within_shape);
    }
  }
  if (sch.master < 0 || sch.master >= nprocs_) {
    throw UserError("the self-scheduled phase " + std::to_string(sch.phase) +
                    " has its master at rank " + std::to_string(sch.master) + ", which a run of " +
                    std::to_string(nprocs_) + " processes does not have");
  }
  {
    // The master's compute per reply, and a worker's per task (every worker makes the same
    // slots: all ranks but the master are one class).
    SynthRank master(this, impl_.get(), sch.master);
    std::vector<const SlotAt*> slots;
    std::vector<std::int64_t> cpu;
    master.SlotsMadeIn(sch.phase, &slots, &cpu);
    for (std::int64_t c : cpu) sch.master_ns += static_cast<double>(c);
    if (nprocs_ > 1) {
      SynthRank worker(this, impl_.get(), sch.master == 0 ? 1 : 0);
      worker.SlotsMadeIn(sch.phase, &sch.worker_slots, &sch.worker_cpu_ns);
    }
  }
  {
    // The workers that run tasks: all of them unless the model's tasks are fewer.
    const PhaseModel& pm = model_.phases[static_cast<std::size_t>(sch.phase)];
    const double tasks = pm.tasks.present ? pm.tasks.At(static_cast<double>(nprocs_)) : 0;
    sch.busy = std::min<std::int64_t>(nprocs_ - 1, std::max<std::int64_t>(0, std::llround(tasks)));
  }
  {
    // Every result gets one reply (a task or a stop), so the tasks are the master's replies
    // in this run: counting them keeps the workers' receives equal to the master's sends.
    SynthRank master(this, impl_.get(), sch.master);
    master.CountReplies();
    Event e;
    while (master.Next(&e)) {
    }
    sch.tasks = master.replies();
    sch.round_tasks = master.replies_per_round();
    // A run of one round schedules all its replies at once (replies in later runs of the
    // phase, if any, belong to it).
    if (!model_.phases[static_cast<std::size_t>(sch.phase)].rounds.present)
      sch.round_tasks.assign(1, sch.tasks);
    if (sch.round_tasks.empty()) sch.round_tasks.assign(1, 0);
  }
  {
    // The workers' calls scaled to the model's mean task, when it has one.
    const PhaseModel& pm = model_.phases[static_cast<std::size_t>(sch.phase)];
    double slots = 0;
    for (std::int64_t c : sch.worker_cpu_ns) slots += static_cast<double>(c);
    const double task =
        pm.task_cpu_ns.present ? pm.task_cpu_ns.At(static_cast<double>(nprocs_), options_.side) : 0;
    if (slots > 0 && task > 0) sch.task_scale = task / slots;
    // The task profile holds this run's tasks when it hands out as many as were traced.
    if (!pm.task_profile.empty() && static_cast<std::size_t>(sch.tasks) == pm.task_profile.size()) {
      std::int64_t base = 0;
      for (std::int64_t t : sch.round_tasks) {
        sch.round_base.push_back(base);
        base += t;
      }
      if (base == sch.tasks && slots > 0 && task > 0) {
        sch.profile = &pm.task_profile;
        if (options_.task_draw > 0 && pm.task_profile_spread > 0) {
          sch.drawn_profile = pm.task_profile;
          const std::uint64_t key = SplitMix(static_cast<std::uint64_t>(options_.task_draw));
          for (std::size_t i = 0; i < sch.drawn_profile.size(); ++i) {
            sch.drawn_profile[i] *=
                std::max(0.0, 1 + pm.task_profile_spread * Normalish(key ^ SplitMix(i + 1)));
          }
          sch.profile = &sch.drawn_profile;
        }
      }
    }
  }
  sch.tasks_of.assign(static_cast<std::size_t>(nprocs_), 0);
  sch.makespan_ns = 0;
  for (std::size_t k = 0; k < sch.round_tasks.size(); ++k) {
    std::vector<std::int32_t> workers;
    ListSchedule run(sch, nprocs_, sch.round_tasks[k], k, sch.profile ? &workers : nullptr);
    while (run.Next() >= 0) {
    }
    if (sch.profile) {
      // Each worker's tasks, as profile indices in the order it runs them: the tasks sorted
      // by worker, stably (hand-out order within a worker).
      std::vector<std::int64_t> ids(workers.size());
      for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = sch.round_base[k] + static_cast<std::int64_t>(i);
      }
      const std::int64_t base = sch.round_base[k];
      std::stable_sort(ids.begin(), ids.end(), [&](std::int64_t a, std::int64_t b) {
        return workers[static_cast<std::size_t>(a - base)] <
               workers[static_cast<std::size_t>(b - base)];
      });
      std::vector<std::pair<std::int32_t, std::int64_t>> firsts;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::int32_t w = workers[static_cast<std::size_t>(ids[i] - base)];
        if (firsts.empty() || firsts.back().first != w) {
          firsts.emplace_back(w, static_cast<std::int64_t>(i));
        }
      }
      sch.round_workers.push_back(std::move(firsts));
      sch.round_ids.push_back(std::move(ids));
    }
    sch.makespan_ns += run.makespan_ns();
    std::vector<std::int32_t> of(static_cast<std::size_t>(nprocs_), 0);
    for (std::int64_t r = 0; r < nprocs_; ++r) {
      of[static_cast<std::size_t>(r)] = run.TasksOf(r);
      sch.tasks_of[static_cast<std::size_t>(r)] += run.TasksOf(r);
    }
    sch.round_tasks_of.push_back(std::move(of));
  }
}

// The order at N (see the header): `items` ran `from` times at the largest traced count and
// run `to` times at N; `applied` is the factor the enclosing loops already scaled by.
phases::Sequence SynthesizedTrace::ScaleSequence(const phases::Sequence& items, std::int64_t from,
                                                 std::int64_t to, double applied,
                                                 const std::vector<double>& factor,
                                                 std::vector<double>* carry) const {
  phases::Sequence out;
  const double executions =
      static_cast<double>(to) / static_cast<double>(std::max<std::int64_t>(1, from));
  for (const phases::SequenceItem& item : items) {
    if (!item.is_loop()) {
      const auto ph = static_cast<std::size_t>(item.phase);
      const double exact =
          static_cast<double>(item.total) * executions * factor[ph] / applied + (*carry)[ph];
      const auto n = static_cast<std::int64_t>(std::floor(exact + 1e-9));
      (*carry)[ph] = exact - static_cast<double>(n);
      if (n > 0) out.push_back(phases::SequenceItem::Run(item.phase, n));
      continue;
    }
    // The loop scales when every phase in it scales by the same factor (within 0.1%).
    double lo = 0, hi = 0;
    bool first = true;
    for (const int ph : phases::SequencePhases(item.body)) {
      const double f = factor[static_cast<std::size_t>(ph)] / applied;
      lo = first ? f : std::min(lo, f);
      hi = first ? f : std::max(hi, f);
      first = false;
    }
    double g = !first && hi - lo <= 1e-3 * std::max(hi, 1e-300) ? 0.5 * (lo + hi) : 1.0;
    // The loop of a self-scheduled run's rounds (it holds the scheduled phase of a model of
    // several rounds) runs the model's rounds at N.
    for (const phases::SequenceItem& b : item.body) {
      if (b.is_loop() || executions != 1.0 || applied != 1.0) continue;
      const PhaseModel& pm = model_.phases[static_cast<std::size_t>(b.phase)];
      if (!pm.scheduled || !pm.rounds.present || item.total <= 0) continue;
      const double rounds = std::max(1.0, std::round(pm.rounds.At(static_cast<double>(nprocs_))));
      g = rounds / static_cast<double>(item.total);
    }
    const auto total =
        static_cast<std::int64_t>(std::llround(static_cast<double>(item.total) * executions * g));
    if (total <= 0) continue;
    out.push_back(phases::SequenceItem::Loop(
        total, ScaleSequence(item.body, item.total, total, applied * g, factor, carry)));
    // The executions' own counts, where the loop and the one around it run as traced.
    if (to == from && total == item.total) out.back().counts = item.counts;
  }
  return out;
}

SynthesizedTrace::~SynthesizedTrace() = default;

double SynthesizedTrace::ScheduleMakespanS() const { return impl_->schedule.makespan_ns * 1e-9; }
int SynthesizedTrace::ScheduledPhase() const { return impl_->schedule.phase; }
const std::vector<std::int32_t>& SynthesizedTrace::TasksPerRank() const {
  return impl_->schedule.tasks_of;
}

double SynthesizedTrace::PhaseWeight(int phase) const {
  const Quantity& w = model_.phases.at(static_cast<std::size_t>(phase)).weight;
  return w.At(static_cast<double>(nprocs_), options_.weight_side);
}

std::uint64_t SynthesizedTrace::MaxEventsPerRank() const {
  std::uint64_t total = 2;
  for (const auto* def : impl_->comm_defs) (void)def, ++total;
  for (const auto& [ph, reps] : phases::SequencePhaseTotals(sequence_)) {
    std::uint64_t per = 0, most = 1;
    for (const SlotAt& s : impl_->phases[ph]) {
      std::uint64_t calls = 1;
      if (s.peer) calls = std::max<std::uint64_t>(1, s.peer->NumDests(0));
      most = std::max(most, calls);
      per += 2 * calls;
    }
    // A repeated block makes every slot once per iteration.
    if (model_.phases[ph].block) per = 2 * most * impl_->phases[ph].size();
    total += per * static_cast<std::uint64_t>(reps);
  }
  return total;
}

std::unique_ptr<RankEventSource> SynthesizedTrace::OpenRank(int rank) const {
  if (rank < 0 || rank >= nprocs_) {
    throw TraceError(description() + ": no rank " + std::to_string(rank));
  }
  return std::unique_ptr<RankEventSource>(new (impl_->readers) SynthRank(this, impl_.get(), rank));
}

std::string SynthesizedTrace::description() const {
  return "synthesized " + (model_.application.empty() ? std::string("run") : model_.application) +
         " at " + std::to_string(nprocs_) + " processes";
}

std::string WriteSynthesized(const SynthesizedTrace& trace, const std::string& out_dir,
                             const std::string& format, double flops_per_second) {
  namespace fs = std::filesystem;
  if (format == "simgrid-ti") {
    TiOptions ti;
    ti.flops_per_second = flops_per_second;
    return ExportSimgridTi(trace, out_dir, ti).string();
  }
  if (format != "pas2p") {
    throw UserError("unknown output format \"" + format + "\": use pas2p or simgrid-ti");
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw UserError("cannot create the directory " + out_dir + ": " + ec.message());
  WriteMetadata(out_dir, trace.metadata());
  for (int r = 0; r < trace.nprocs(); ++r) {
    RankStreamWriter writer;
    const fs::path path = RankStreamPath(out_dir, r);
    if (!writer.Open(path, r))
      throw UserError("cannot write " + path.string() + ": " + writer.error());
    auto source = trace.OpenRank(r);
    Event e;
    while (source->Next(&e)) {
      if (!writer.Append(e)) break;
    }
    if (!writer.Close()) throw UserError("cannot write " + path.string() + ": " + writer.error());
  }
  return out_dir;
}

}  // namespace pas2p::synthesis
