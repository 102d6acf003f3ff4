// The scaling model of one application: from its signatures at a few process counts to a
// description of every phase as a function of the process count P.
//
// In:  signatures (phases/) of one application at >= 3 counts (AnalyzeTrace or saved files).
// Out: an AppModel, a plain value type that says, for every phase present at every count,
//      - its weight (occurrences in the run) as a regression model of P;
//      - its events as SLOTS: the calls one occurrence makes on every rank, aligned across
//        ranks and counts. Ranks with the same sequence of calls form a class; classes that
//        lack some calls (a mesh boundary without a west neighbour, the only process row that
//        runs a reduction) are merged into one supersequence and each slot carries a PRESENCE
//        rule saying which ranks make that call at any count (every rank; ranks the slot's
//        equation gives a partner; members of the slot's communicator rule; ranks that make
//        some other slot's call; rank 0 only; every rank but 0);
//      - per slot: the general equation of its peers (patterns/), the communicator rule and
//        root of its collectives, whether completions wait for every pending request, and
//        regression models (regression/) of the bytes, the received bytes and the compute
//        burst before the call (CPU time, instructions when measured);
//      - the run's phase sequence (from the largest count) and the set of valid counts (the
//        intersection of every equation's and communicator rule's rule).
//
// How the slots are aligned: each rank's calls of one occurrence become tokens (operation,
// tag, whether the communicator is a sub-communicator). Distinct token sequences (classes)
// are merged, longest first, into one supersequence by a dynamic-programming alignment that
// only matches equal tokens and, among equal tokens, prefers the slot whose ranks at the
// same count talk at the same displacement (peer - rank), so a rank that only has a west
// neighbour lands in the west slot, not the north one.
//
// File format (ModelToJson; JSON, stable key order):
//   {"format": "pas2p-model", "version": 4, "application", "counts": [P...],
//    "valid_counts": "<words>", "warnings": [...],
//    "sequence": [item, ...] (the largest count's phase order with its nested loops, phase
//                 indices; items as in the signature's "sequence", see phases/signature.h;
//                 version 1 wrote a flat [[phase index, repetitions], ...], read as such),
//    "phases": [{"index", "ids": [phase id per count], "description", "relevant",
//                "weight": Quantity, "traced_time_s": [per count],
//                "cpu_total", "rank_cpu_total": Quantity (optional),
//                "cpu_total_per_run" (optional, absent = false: cpu_total per occurrence),
//                "scheduled", "master", "tasks": Quantity (only for self-scheduled phases),
//                "rounds": Quantity (only for a self-scheduled phase of several rounds),
//                "reordered_ranks": RankSetName ("even", "odd", "rank 0", "last rank",
//                                   "all but rank 0", "grid2 even", ...),
//                "own_order": [slot, ...] (both only when some ranks call in another order;
//                             version 2 files' "rotated_ranks" and "rotated_start" s, a
//                             rotation from slot s, are read as such),
//                "slots": [{"kind", "tag", "presence", "like_slots": [...], "wildcard", "reply",
//                           "all_pending", "requests", "polled", "polls",
//                           "equation": "<words>",
//                           "maps": [{"nprocs", "dests": [[...] per rank]}],
//                           "recv_maps": [...], "communicator": "<words>",
//                           "layouts": [{"nprocs", "groups": [[...]]}],
//                           "p2p_layouts" (the same for point-to-point calls made on
//                             sub-communicators; optional, absent = on the world),
//                           "root_points": [[comm size, root index], ...],
//                           "root_step" and "root_cpu_ns" (only for a root that moves),
//                           "bytes", "recv_bytes", "root_bytes", "root_recv_bytes",
//                           "cpu_ns", "instructions": Quantity or null, "cpu_spread_between",
//                           "cpu_spread_persistent" (optional, absent = cpu_spread_between),
//                           "cpu_spread_within", "cpu_spread_shared" (optional, absent = 0),
//                           "cpu_noise_shape" ([standardized bins], optional, absent = symmetric),
//                           "cpu_per_occurrence" (optional, absent = false),
//                           "bytes_per_occurrence" (optional, absent = false),
//                           "component_bytes": [{"own_ranks", "bytes", "recv_bytes"
//                                                (optional), "face_dim", "face_bytes",
//                                                "face_recv_bytes", "face_line",
//                                                "face_margin" (optional)}] (optional, one
//                                                per component of a "components" peer),
//                           "element_bytes" (1, 2, 4 or 8; optional, absent = 1),
//                           "class_compute": [{"mask", "cpu_ns", "instructions",
//                                              "cpu_relative" (optional), "spread_within"
//                                              (optional, absent = the slot's)}]}]}]}
// The equations and communicator rules are stored as their training maps and layouts (and
// their description in words); loading refits them, which is deterministic, so a saved model
// predicts exactly what the model that was saved predicts. A Quantity is
// {"fit": FittedModel (regression's JSON), "divided_by_p": bool}.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pas2p/core/error.h"
#include "pas2p/core/event.h"
#include "pas2p/patterns/communicators.h"
#include "pas2p/patterns/general_equation.h"
#include "pas2p/patterns/valid_counts.h"
#include "pas2p/phases/signature.h"
#include "pas2p/regression/model.h"

namespace pas2p::synthesis {

// Which ranks make a slot's call at a given count.
enum class Presence {
  kAll,          // every rank
  kHasPartner,   // ranks the slot's equation gives a partner (send or receive side)
  kCommMember,   // ranks in a group of the slot's communicator rule
  kLikeSlots,    // ranks that make the call of any of `like_slots` in this occurrence
  kOnlyRank0,    // rank 0 alone
  kAllButRank0,  // every rank but 0
};
std::string_view PresenceName(Presence presence);

// Ranks that make a phase's calls in an order of their own (PhaseModel::own_order): a
// red-black exchange, where even ranks send and then receive and odd ranks receive and then
// send (a rotation of the slots' order); a checkerboard exchange on a process grid, where in
// each direction the ranks with x + y even send first (a permutation). In one order for
// every rank the blocking calls deadlock or serialize.
// The grid sets are on the MPI_Dims_create(P, d) grid: row-major (as MPI_Cart_create, the
// last extent fastest) or fastest first (the first extent fastest); the parity is that of
// the sum of the rank's coordinates.
enum class RankSet {
  kNone,                // every rank calls in slot order
  kEvenRanks,           // ranks 0, 2, 4, ...
  kOddRanks,            // ranks 1, 3, 5, ...
  kOnlyRank0,           // rank 0 alone
  kLastRank,            // rank P - 1 alone
  kAllButRank0,         // every rank but 0
  kGrid2Even,           // x + y even on the MPI_Dims_create(P, 2) grid, row-major
  kGrid2Odd,            // x + y odd, the same grid
  kGrid2FastFirstEven,  // x + y even on the MPI_Dims_create(P, 2) grid, first extent fastest
  kGrid2FastFirstOdd,   // x + y odd, the same grid
  kGrid3Even,           // x + y + z even on the MPI_Dims_create(P, 3) grid, row-major
  kGrid3Odd,            // x + y + z odd, the same grid
};
// Every set but kNone, in the order the model tries them.
const std::vector<RankSet>& AllRankSets();
std::string_view RankSetName(RankSet set);
// "the even ranks", "the ranks with x + y even on the MPI_Dims_create(P, 2) grid ...".
std::string RankSetWords(RankSet set);
bool InRankSet(RankSet set, std::int64_t rank, std::int64_t nprocs);

// The order in which a rank calls its partners when a slot has several (a repeated block's
// stages, a master's workers): ascending rank, ascending distance |peer - rank| (ties: lower
// rank first), or ring order (peer - rank) mod P.
// kFarthest: by distance |dest - rank|, largest first (recursive halving: XOR P/2 first).
// kRingBack: (rank - peer) mod P ascending, the ring walked the other way (the receive
// half of a pairwise exchange: send to rank + i, receive from rank - i).
enum class DestOrder { kAscending, kDistance, kRing, kFarthest, kRingBack };
std::string_view DestOrderName(DestOrder order);
// Sorts `dests` of rank `rank` at `nprocs` in that order.
void SortDests(DestOrder order, std::int64_t rank, std::int64_t nprocs,
               std::vector<std::int64_t>* dests);
void SortDests(DestOrder order, std::int64_t rank, std::int64_t nprocs,
               std::span<std::int64_t> dests);

// A quantity of a slot as a function of P (absent when not measured).
struct Quantity {
  bool present = false;
  regression::FittedModel model;
  // The model is of P x the quantity (the total over the ranks: strong scaling divides a
  // fixed total), chosen when that predicts the left-out counts better than fitting the
  // quantity itself; At() divides by P.
  bool divided_by_p = false;
  // Value at P (clamped at 0); `side` -1 low end of the interval, 0 the model, +1 high end.
  double At(double p, int side = 0) const;
  // The same without the clamp at 0 (a difference between two quantities).
  double SignedAt(double p, int side = 0) const;
  // At(p) with a block law's rounding left out (regression::Curve::EvaluateUnrounded): the
  // share of a split below one item that a padded block shows as one.
  double UnroundedAt(double p) const;
  std::string Describe(const std::string& what) const;
};

// The ranks of the subtree that a message between a parent and its child at one level of
// the binomial tree rooted at `root` carries. In ranks counted from the root (v = (rank -
// root) mod P, as the tree's equation counts them), the child c = max(v, w) heads ranks
// c .. c + 2^b - 1 (2^b = |v - w|), cut at P: min(2^b, P - c). 0 when rank == partner or a
// rank or the root is outside 0..P-1.
std::int64_t SubtreeRanks(std::int64_t rank, std::int64_t partner, std::int64_t nprocs,
                          std::int64_t root = 0);

// The largest value size SlotModel::element_bytes claims: a double. Messages that are all
// multiples of 16 B are as often doubles in pairs as double complex values.
inline constexpr std::int64_t kLargestElementBytes = 8;

// The bytes of a call's messages within one component of a world split into blocks of
// unequal sizes (patterns::Family::kComponents; SlotModel::component_bytes). An ocean of P/4
// ranks and an atmosphere of 3P/4 each send the faces of their own grid, of their own
// domain: one law of P over both mixes two grids whose shapes part differently with P.
struct ComponentBytes {
  // The laws are of the component's own ranks (its size at N), and a face is of its own
  // grid; false: of P (a component whose size is the same at every traced count, such as a
  // few I/O servers, whose messages can still scale with the world's split).
  bool own_ranks = true;
  Quantity bytes;       // per message (sendrecv: sent)
  Quantity recv_bytes;  // sendrecv: received
  // As SlotModel's face fields, on the component's own grid (its equation at its size).
  int face_dim = -1;
  bool face_line = false;
  double face_bytes = 0, face_recv_bytes = 0, face_margin = 0;
};

struct SlotModel {
  EventKind kind = EventKind::kCompute;
  std::int32_t tag = 0;
  bool sub_comm = false;  // collective on a communicator other than the world
  Presence presence = Presence::kAll;
  std::vector<int> like_slots;  // kLikeSlots

  // Point-to-point: the partner (send side; the source of receives) and, for sendrecv, the
  // source of the receive half. `wildcard`: every receive of the slot was MPI_ANY_SOURCE.
  std::optional<patterns::GeneralEquation> peer;
  std::optional<patterns::GeneralEquation> recv_peer;
  bool wildcard = false;
  // A reply: a send to the rank whose wildcard receive completed last (a master handing the
  // next task, or a stop, to whichever worker answered). It has no equation: synthesis takes
  // the partner from the self-scheduling model (see PhaseModel::scheduled).
  bool reply = false;
  DestOrder dest_order = DestOrder::kAscending;  // several partners: the order of the calls
  DestOrder recv_order = DestOrder::kAscending;  // sendrecv: the order of its sources
  std::vector<patterns::CommMap> maps;           // training maps (rank -> partner) per count
  std::vector<patterns::CommMap> recv_maps;      // sendrecv receive half

  // Collectives on sub-communicators: the rule and the root's rank in the communicator.
  std::optional<patterns::CommunicatorRule> communicator;
  std::optional<patterns::IndexRule> root;
  // A root that moves (phases::RootStep): the root is the communicator rank after, before or
  // the same as the previous root of this kind of collective on the communicator, and `root`
  // is unset; root_bytes, root_recv_bytes and root_cpu_ns are what a rank does in the
  // occurrences it is the root of, the other quantities what it does in the others.
  phases::RootStep root_step = phases::RootStep::kFixed;
  std::vector<patterns::CommunicatorLayout> layouts;
  // Point-to-point calls made on a communicator other than the world at every traced count:
  // its groups per count (training only, not saved). Partners are members of the caller's
  // group, which decides between grids the traced counts cannot tell apart.
  std::vector<patterns::CommunicatorLayout> p2p_layouts;
  std::vector<std::pair<std::int64_t, std::int64_t>> root_points;  // (comm size, root index)

  // Completions: wait for every request pending on the rank, or for `requests` of them
  // (the oldest first).
  bool all_pending = true;
  std::int32_t requests = 0;
  // Found by polling: most of the traced completions were a test that completed (MPI_Test*
  // in a loop of work), not a wait. Such a call never blocks: synthesis makes it a test
  // (which completes what has arrived) and waits for the rest only after the burst that
  // follows, before the rank's next call, so that the work done while polling overlaps the
  // messages as it did in the traced run. `polls`: the failed tests per completion (mean).
  bool polled = false;
  double polls = 0;

  // A halo exchange on a grid whose extents are not smooth in P (MPI_Dims_create: 36 ->
  // 4 x 3 x 3, 49 -> 7 x 7 x 1) sends a face of the local block: bytes = face_bytes x the
  // product of 1 / extent over the grid dimensions other than the exchange's (face_dim).
  // Chosen instead of `bytes` / `recv_bytes` when it predicts the left-out counts better.
  int face_dim = -1;  // -1: bytes and recv_bytes are functions of P
  double face_bytes = 0, face_recv_bytes = 0;
  // Or a line: bytes = face_bytes / the extent along face_dim itself (a vector split over the
  // ranks of the exchange's row, as a reduction along the rows of a 2^ceil(n/2) x
  // 2^floor(n/2) grid sends: NAS CG), chosen when it predicts the left-out counts better.
  bool face_line = false;
  // A face with its halo (not a line): each other extent's 1/extent gets face_margin added,
  // bytes = face_bytes x the product of (1/extent + face_margin): the slab a molecular-dynamics
  // code sends spans the neighbours' ghost layers too (LAMMPS), whose width does not shrink
  // with the block. 0: the bare face. Chosen when it predicts the left-out counts clearly better.
  double face_margin = 0;
  // A call whose request crosses the phase's boundary (a receive posted at the end of one
  // phase whose send and wait begin the next, every time): made in the run, left out when the
  // phase is synthesized alone (SynthOptions::only_phase), where nothing is there to meet it.
  bool carried = false;
  // One level of a binomial tree (TreeRole kLowParent or kLowChild) whose messages carry the
  // whole subtree below the child: a gather or reduction of blocks to the root written by
  // hand, or the scatter back. `bytes` is then per rank of that subtree, and a message between
  // `rank` and `partner` is bytes x SubtreeRanks(rank, partner, P, root), the root that of
  // `peer` (rank 0, or a rank named from either end, as the last). Chosen
  // when, at every traced count, the messages of all the phase's tree levels carried the same
  // bytes per rank of their subtrees and the subtrees differed in size (levels 0, 1, 2 with
  // 1, 2, 4 ranks below the child, or one cut at P), so the levels a larger count adds grow
  // as the tree does.
  bool subtree_bytes = false;
  // A dissemination step that carries blocks (Bruck's allgather: the step of bit b sends
  // min(2^b, P - 2^b) blocks): `bytes` and `recv_bytes` are per block. Chosen when, at every
  // traced count, the steps of a run carried the same bytes per block and their blocks
  // differed, so the steps a larger count adds carry their own.
  bool step_blocks = false;
  // A repeated block's messages whose bytes follow no law per message but do per occurrence
  // (a dissemination written as one block: the step of bit b sends min(2^b, P - 2^b) blocks,
  // so the mean message is a staircase of P while the rank's total is (P - 1) blocks):
  // `bytes` and `recv_bytes` are the bytes a rank moves over an occurrence of the block, and
  // each message carries them over the rank's partners at N (MeanPartners). Chosen, like
  // cpu_per_occurrence, when it predicts the left-out counts better, and only when the
  // partners' equation counts every traced rank's messages.
  bool bytes_per_occurrence = false;
  // A call on components of unequal sizes (peer of Family::kComponents): one bytes law per
  // component, in the peer's component order, each fitted to that component's messages
  // alone. Chosen when every component's law predicts its left-out counts better than the
  // call's one law predicts the mean (by kComponentBytesGain). Empty: `bytes` for every rank.
  std::vector<ComponentBytes> component_bytes;
  // Training only (not saved): per traced count, (rank, bytes, received bytes) of each
  // message the call moved (FitComponentBytes reads them once the partners are fitted).
  struct RankMessage {
    std::int64_t rank = 0;
    double bytes = 0, recv_bytes = 0;
  };
  std::vector<std::pair<std::int64_t, std::vector<RankMessage>>> rank_messages;
  // component_bytes at `nprocs`: each component's bytes per message (received: the sendrecv
  // receive half), and its ranks; empty without component_bytes or where the components'
  // sizes are not whole.
  struct ComponentsAt {
    std::vector<double> bytes;
    std::vector<std::int64_t> sizes;
  };
  ComponentsAt ComponentBytesAt(std::int64_t nprocs, int side = 0, bool recv = false) const;
  // The size of one value the call moves, as far as the traces show it: the largest of 1, 2,
  // 4 and 8 bytes that divides every traced message size of the slot (8 for a code that
  // sends doubles; 1 for a call that moved no bytes). A prediction that puts less than this per
  // partner splits the traced problem finer than one value (predict's `limits`).
  std::int64_t element_bytes = 1;
  // Bytes per message at `nprocs`; with subtree_bytes, the largest: the full subtree of the
  // level's first child (2^b ranks, cut at P); with component_bytes, the mean over the ranks.
  double BytesAt(std::int64_t nprocs, int side = 0) const;
  double RecvBytesAt(std::int64_t nprocs, int side = 0) const;

  Quantity bytes;       // bytes sent (p2p send, collective send side) or received (recv)
  Quantity recv_bytes;  // sendrecv receive half; collectives: bytes received
  Quantity root_bytes;  // rooted collectives: the root's send and receive bytes
  Quantity root_recv_bytes;
  // Collectives that are not rooted, whose ranks send (receive) different sizes (an
  // MPI_Alltoallv or MPI_Allgatherv over uneven parts): the largest rank's bytes over the mean
  // of the ranks of its communicator (the mean over the communicators, median over the
  // counts; 1 where they are even or the spread is under 1%).
  // The Dimemas collective model charges the largest member's bytes, so synthesis gives one
  // member of each communicator that share and the others less, keeping the mean.
  double bytes_max_ratio = 1;
  double recv_bytes_max_ratio = 1;
  Quantity cpu_ns;       // compute burst before the call (mean over the ranks making it)
  Quantity root_cpu_ns;  // a root that moves: the burst before the call at the root
  // How the traced bursts spread around that mean (standard deviation / mean): between the
  // ranks' own means (median over the counts); within a rank from one occurrence to the next,
  // split into the part every rank shares in the same occurrence (`cpu_spread_shared`, median
  // over the counts: a cold first iteration, noise that slows all nodes at once; it costs no
  // waiting, as no rank waits for another) and the part that is each rank's own
  // (`cpu_spread_within`, at the largest traced count: a rank's own noise grows with the ranks
  // that share its node and network, and the largest count is the run closest to the target;
  // a rank slow alone makes its partners wait). Both are measured apart at each count (shares
  // of the within-rank variance, phases::ComputeStats), not one as the rest of the other. Synthesis
  // reproduces all three (SynthOptions::spread), the shared factor drawn once per occurrence
  // for all ranks, so stragglers cost at N what they cost in the traced runs. Signatures
  // without the occurrence statistics (older files) give shared = 0 (all of it per rank).
  double cpu_spread_between = 0;
  // The part of cpu_spread_between the ranks' own noise does not explain: a rank's traced
  // mean is one of n bursts, and its own noise alone spreads such means by (own spread) /
  // sqrt(n). What is left is the ranks' persistent difference (the median over the counts
  // of sqrt(max(0, between^2 - sampling^2))), which a quiet machine keeps
  // (SynthOptions::time_noise). Per-occurrence compute (cpu_per_occurrence) keeps its
  // between spread. Model files without it read cpu_spread_between.
  double cpu_spread_persistent = 0;
  double cpu_spread_within = 0;
  double cpu_spread_shared = 0;
  // The shape of each rank's own part, at the largest traced count that measured it: the
  // ranks' residual bins (phases::ComputeStats::residual_shape, each standardized) averaged
  // bin by bin, mean 0 and standard deviation 1 (empty: not measured; drawn symmetric).
  // Compute noise is rarely symmetric: a burst that the OS, a page fault or a cold cache
  // holds up runs long, none runs much short, and that tail is what makes the stragglers
  // every partner waits for. Synthesis draws the own part from this shape (a piecewise
  // linear quantile function through the bins), so a straggler at N is as likely, and as
  // long, as in the traced runs.
  std::vector<double> cpu_noise_shape;
  // Repeated-block phases (PhaseModel::block): cpu_ns and instructions are what a rank
  // computes before this call over a whole occurrence (all its iterations), not per
  // iteration; synthesis divides it by the rank's iterations at N. Chosen when it predicts
  // the left-out counts better: a butterfly's work per iteration is split over log2 P
  // stages, so its per-stage burst follows no smooth law in P, its per-occurrence total does.
  bool cpu_per_occurrence = false;
  // Data-bound bursts: the burst before the call is the work of packing what the call sends
  // (and unpacking what it receives), and with cpu_bytes_with_previous also of unpacking
  // what the previous call of the phase received, plus cpu_bytes_base / P (0: none) of work
  // that is not data's (a sweep over a strong-scaled block before the first send):
  // CPU ns = cpu_bytes_base / P + cpu_ns_per_byte x those bytes at N (PhaseModel::SlotCpuAt),
  // instead of cpu_ns's law of P. A halo's faces are not a power of P when the grid changes
  // shape (halo3d's 36 = 4 x 3 x 3 and 49 = 7 x 7 x 1: the faces along the 7s are 1.7x the
  // 36's, the volume 0.73x); the bytes laws know the faces. Chosen when it predicts the
  // left-out counts better than cpu_ns's law (cpu_bytes_loo_error, over the counts cpu_ns
  // was fitted to). 0: cpu_ns.
  double cpu_ns_per_byte = 0;
  bool cpu_bytes_with_previous = false;
  double cpu_bytes_base = 0;
  double cpu_bytes_loo_error = 0;
  // A slot seen at fewer than 3 counts (the fold of a recursive doubling, made only at counts
  // that are not powers of two) has no law of its own: > 0, its CPU is this share of its
  // phase's law of CPU per rank (PhaseModel::rank_cpu_total) at N, the mean over the counts
  // where it was seen of its mean burst over the phase's mean CPU per rank. 0: cpu_ns.
  double cpu_of_rank_total = 0;
  Quantity instructions;
  // The same per rank class, where ranks differ in which of the phase's calls they make (a
  // mesh corner, an edge, the interior): `mask` has '1' for each slot of the phase the class
  // makes. A rank whose mask has no class here uses cpu_ns / instructions.
  struct ClassCompute {
    std::string mask;
    Quantity cpu_ns;
    Quantity instructions;
    // A class seen at fewer than 3 counts (ranks with a neighbour set the smaller grids do
    // not have) has no law of its own: > 0, its CPU is this factor times the slot's
    // (cpu_ns above is then its traced value, not used), the mean of its CPU over the
    // slot's at the counts where it was seen. One count's shift of the whole slot is not
    // then taken for the class's level.
    double cpu_relative = 0;
    // A class seen at fewer than 3 counts, when its phase has a law of its CPU per rank
    // (PhaseModel::rank_cpu_total): > 0, its CPU is this share of that law at N instead,
    // the mean over the counts where it was seen of its burst before this call over the
    // phase's mean CPU per rank. A class's burst before one call is often the rank's whole
    // work (a sweep's first column receives only from below: its plane's work comes before
    // that receive), while the slot's mean mixes classes whose proportions change with P
    // (NAS LU's first-column ranks are a quarter of those receiving from below on 4 x 4, an
    // eighth on 8 x 4): a ratio to that mean gave them 3.6x their work at 32 ranks.
    double cpu_of_rank_total = 0;
    // The class's own noise (as cpu_spread_within, relative to the class's mean burst, at
    // the largest traced count that has the class); -1: the slot's. A sweep's corner ranks,
    // whose first burst of a sweep holds the end of the last one too, vary by 23% where the
    // others vary by 1%: pooled over the slot that is 14% on every rank.
    double spread_within = -1;
  };
  std::vector<ClassCompute> class_compute;

  std::string Describe() const;  // "isend to torus: +1 along x ...; bytes per message ≈ ..."
};

struct PhaseModel {
  int index = 0;            // position in AppModel::phases
  std::vector<int> ids;     // the phase id in each count's signature (AppModel::counts)
  std::string description;  // from the largest count's signature
  bool relevant = false;    // relevant in at least one signature
  // A repeated block: one occurrence is the slots' calls repeated k times on a rank, k a
  // function of P (log2 P stages of a butterfly, P - 1 workers); iteration i makes each
  // slot's i-th partner (in dest_order). k = the most partners of any of the rank's slots.
  bool block = false;
  Quantity weight;
  // Self-scheduled (master/worker): one rank, `master`, makes its slots `weight` times and
  // replies to whoever answered; every other rank (a worker) makes its slots once per task
  // it runs, a number that depends on the timing. `tasks` models the workers' tasks summed
  // (a function of P); synthesis splits them over the workers with a list schedule.
  // A master that hands out a new pool per round (once per time step, each round ended by a
  // collective of all ranks: phases::Signature::rounds_separated): `rounds` models the rounds
  // (absent for one round) and `tasks` the tasks of one round; the run's sequence repeats
  // the round's phases in a loop and synthesis schedules each round's pool on its own.
  bool scheduled = false;
  int master = 0;
  Quantity tasks;
  Quantity rounds;
  // Each task's cost relative to the mean task (mean 1), in the order the master hands the
  // tasks out, over the whole run: when every traced count ran the same tasks and each
  // task cost the same at every count (phases::Signature::scheduled_task_cpu_ns; the codes
  // whose task t costs f(t)). Synthesis then gives the i-th task handed out this cost
  // instead of a draw, so the list schedule runs the real sequence of costs. Empty
  // otherwise. task_profile_spread: the per-task spread between the counts (rms, relative).
  // task_cpu_ns: the mean task's CPU time (ns) as a function of P, from every count's tasks
  // (phases::Signature::scheduled_tasks and scheduled_task_cpu_sum_ns; absent when a count
  // lacks them), profile or not: synthesis scales the workers' calls to it (their per-call
  // means weigh a worker that ran few costly tasks like one that ran many cheap ones; the
  // mean over tasks does not).
  std::vector<double> task_profile;
  double task_profile_spread = 0;
  Quantity task_cpu_ns;
  // The ranks of `reordered_ranks` make the slots in `own_order` (slot indices, each slot
  // once: their own traced order - a rotation of the slots' for a red-black exchange, a
  // permutation for a checkerboard one); kNone: every rank in slot order.
  RankSet reordered_ranks = RankSet::kNone;
  std::vector<std::size_t> own_order;
  // The slots' order in which `rank` makes them at P: own_order for the ranks of
  // reordered_ranks, null for slot order.
  const std::vector<std::size_t>* OrderOf(std::int64_t rank, std::int64_t nprocs) const {
    return reordered_ranks != RankSet::kNone && InRankSet(reordered_ranks, rank, nprocs)
               ? &own_order
               : nullptr;
  }
  std::vector<double> traced_time_s;  // total time of the phase in each traced run
  std::vector<SlotModel> slots;
  // The phase's compute per occurrence as one quantity: the sum over its slots of the CPU
  // burst before each call (cpu_ns, per rank), fitted as a function of P. A phase's bursts
  // are measured with run-to-run noise of several percent each; fitted one by one, a slot
  // whose few noisy points happen to fall picks a law that keeps falling, and the phase's
  // compute at N is off by the sum of such choices. Summed over the slots, the noise partly
  // cancels and the law of the phase's work shows. Chosen (present) only when it predicts
  // the left-out counts better than the sum of the slots' own models; synthesis then keeps
  // each slot's share of the sum at N and scales the slots to the total (CpuScaleAt). The
  // slots summed are those with a CPU model fitted at every traced count (TotalledSlot).
  Quantity cpu_total;
  // cpu_total is over the run: per rank, summed over the calls and over the phase's
  // occurrences (the traced weight); an occurrence at N computes cpu_total / weight there.
  // A phase made 2(P - 1) times per iteration (a ring allreduce written by hand) splits a
  // rank's fixed work over more calls as P grows: each burst falls as 1/P towards a constant,
  // which a law of the burst alone can follow only as a power that keeps falling, while the
  // work over the run levels off as it does. Tried when the weight grows with P, chosen when
  // it predicts the left-out counts better than the per-occurrence models.
  bool cpu_total_per_run = false;
  bool TotalledSlot(std::size_t slot) const;
  // The phase's mean CPU per rank and occurrence, over all the calls each rank makes, as a
  // function of P (present when a rank class of the phase needs it: ClassCompute::
  // cpu_of_rank_total).
  Quantity rank_cpu_total;
  // The factor that brings the totalled slots' cpu_ns (and class_compute) at P to cpu_total
  // at P (`side`: the interval's low / high end, or the model); 1 when cpu_total is absent.
  double CpuScaleAt(double p, int side = 0) const;
  // The bytes a data-bound burst before `slot` works on at N (SlotModel::cpu_ns_per_byte):
  // what the call sends and receives, plus with cpu_bytes_with_previous what the call before
  // it in the phase received.
  double DataBytesAt(std::size_t slot, std::int64_t nprocs, bool with_previous) const;
  // The mean burst before `slot` at N, per rank making it: cpu_ns's law, or for a
  // data-bound burst its base + cpu_ns_per_byte x DataBytesAt (its interval +- its LOO
  // error); not scaled by CpuScaleAt.
  double SlotCpuAt(std::size_t slot, double p, int side = 0) const;
  // A data-bound burst's part that is not data's at N (SlotModel::cpu_bytes_base).
  double SlotCpuBaseAt(std::size_t slot, double p) const;
};

struct AppModel {
  std::string application;
  std::vector<int> counts;  // traced counts, ascending
  std::vector<PhaseModel> phases;
  // The run at the largest count in order, with its nested loops (phases::SequenceItem,
  // phase = phase index): the largest signature's sequence with its phase ids mapped to
  // phase indices; phases that are not modelled (missing at some count) are left out (or
  // folded into the phase whose calls they repeat) and counted in `unmodelled_share`.
  phases::Sequence sequence;
  double unmodelled_share = 0;  // share of the largest count's time in unmodelled phases
  // Share of the largest count's bytes (sent by point-to-point calls and collectives) in
  // unmodelled phases: a phase can be a small part of the time and most of the traffic.
  double unmodelled_bytes_share = 0;
  // The part of the remainder in the same phases at every count (calls of modelled phases
  // left out, phases every count has that failed to fit): its time over the modelled time
  // at each traced count, as a function of P. Start-up work that does not shrink with P
  // takes a growing share of a strong-scaled run (Amdahl's serial part), which a share kept
  // at its traced value hides. unmodelled_fitted_share: that part's share of the largest
  // traced run. Absent when some count lacks such a remainder (or in a model saved before
  // it existed).
  Quantity unmodelled_ratio;
  double unmodelled_fitted_share = 0;
  // Unmodelled over modelled time at P. The prediction (side 0) keeps the largest traced
  // run's share: on the real codes tried, a law fitted to a few noisy ratios missed the
  // held-out count's remainder more often than the kept share did (QE 43% against 13%, the
  // pattern zoo's waitany 24% against 13%; the zoo's groups 5.5% against 20%). The
  // interval's ends (side -1, +1) reach out to unmodelled_ratio's law and its interval at P
  // too, so a remainder that grows (or shrinks) against the modelled time is inside it.
  double RemainderRatioAt(double p, int side = 0) const;
  // The same at P with the part in phases every count has following unmodelled_ratio's law
  // (`side`: its interval's low / high end; RemainderRatioAt(p) when it is absent).
  double RemainderLawRatioAt(double p, int side = 0) const;
  patterns::ValidCountSet valid;
  std::vector<std::string> warnings;

  std::int64_t largest_count() const { return counts.empty() ? 0 : counts.back(); }
  bool HasInstructions() const;
};

// Steps by bit: consecutive groups of a phase's calls, each one exchange with the partner
// rank XOR 2^b (a p2p call, or several with the same bit, and the completions after them),
// alike in their calls, whose bits b follow one another (ascending or descending in the
// program's order): a recursive doubling written by hand, hypercube steps, a butterfly, a
// reduction along the rows of a power-of-two grid (NAS CG). The traces align each step with
// its own across counts by its bit, so a step for a bit that no traced count has would be
// missing at a larger count; when the steps follow the bits of their field at every traced
// count (`grows`), PhaseAt extends them to the bits of the target count.
struct BitSteps {
  std::size_t first_slot = 0;  // the first group's first slot
  std::size_t step_slots = 0;  // slots per group
  std::size_t steps = 0;       // groups (at the largest traced count)
  bool ascending = true;       // the lowest bit first in the program's order
  std::int64_t low_bit = 0, top_bit = 0;
  patterns::BitField field = patterns::BitField::kRank;  // where the top step counts its bit
  // At every traced count the steps are those of the field's bits from low_bit up (and the
  // field has more bits at some counts than at others): the top step is the field's top bit.
  bool grows = false;
  // The rank's bits counted as ceil(log2 P), not floor: every bit that pairs some ranks below
  // P (a binomial tree at 12 ranks has a level for bit 3, rank 0 with rank 8). Only for the
  // whole rank, when the traced counts follow it and not floor(log2 P).
  bool ceil_bits = false;
  // Bits of the field at `nprocs` as this run counts them.
  std::int64_t BitsAt(std::int64_t nprocs) const;
};
// Bits of `field` at `nprocs` (n = floor(log2 nprocs): n, ceil(n/2), floor(n/2)).
std::int64_t FieldBits(patterns::BitField field, std::int64_t nprocs);
// The phase's steps by bit (`counts`: the model's traced counts), in slot order.
std::vector<BitSteps> FindBitSteps(const PhaseModel& phase, std::span<const int> counts);
// The phase as synthesized at `nprocs`: every growing run of steps by bit (FindBitSteps) gets
// one group of calls per bit of its field at nprocs beyond its top traced bit, in the
// program's order (after the top step when ascending, before it when descending), each a copy
// of the top step with its bit (bytes, compute, presence; the completions are made by the
// ranks that make the copy's exchange). Descending, the copy that becomes the first step
// takes the first step's compute (what the program does before the run) and the old first
// step that of a later one. Other phases are returned unchanged.
PhaseModel PhaseAt(const PhaseModel& phase, std::span<const int> counts, std::int64_t nprocs);

struct ModelOptions {
  int min_counts = 3;
  // Phases that are not relevant in any signature are still modelled when they are present
  // at every count.
  bool keep_irrelevant = true;
  // A phase whose calls cannot be fitted is left out (its time becomes the unmodelled
  // remainder, with a warning) when it takes at most this share of every traced run;
  // a larger one is an error.
  double max_dropped_share = 0.2;
  // When no relevant phase corresponds at every count, build from the largest counts whose
  // phases do correspond (at least min_counts of them), leaving the smallest out (BuildModel).
  bool drop_smallest_counts = true;
  // Phases built at once on threads; 0: the hardware threads, at most 4 (DefaultThreads).
  // The model is the same whatever the number.
  int threads = 0;
};

// What BuildModel throws when no relevant phase occurs at every count (the phases of the
// traces do not correspond); a model from the largest counts alone may still build.
class PhasesDoNotCorrespond : public UserError {
 public:
  using UserError::UserError;
};

// Builds the model. Throws UserError (naming the phase, slot and counts) when there are
// fewer than min_counts counts, the signatures are of different applications, a count
// appears twice, no phase corresponds at every count, or a relevant phase cannot be fitted.
// When no relevant phase corresponds at every count but one does across the largest counts
// (at least min_counts of them: a loop whose iterations grow with P is unrolled into the
// phase around it at the smallest counts), the model is built from those counts alone
// (AppModel::counts) and its first warning names the counts left out.
AppModel BuildModel(std::vector<phases::Signature> signatures, const ModelOptions& options = {});

// BuildModel(signatures, options), and, when it fails only because phases that no model fits
// are each more than options.max_dropped_share of a run, the model that leaves them out too
// (BuildModel with max_dropped_share = 1), from the same build: the build goes on past the
// phase the strict one stops at. For --allow-remainder, which wants the lenient model only
// when the strict one fails, in one build where trying both would take two.
struct ModelAttempt {
  std::optional<AppModel> model;        // BuildModel(signatures, options), when it builds
  std::exception_ptr error;             // else what BuildModel throws
  std::optional<AppModel> leaving_out;  // else, when the same build gave it, the lenient model
};
ModelAttempt TryBuildModel(std::vector<phases::Signature> signatures,
                           const ModelOptions& options = {});

// The model in words (what `pas2p model` prints), optionally with values at a target count.
std::string DescribeModel(const AppModel& model, std::int64_t target = 0);

// A time in seconds in the unit that reads best, to 3 decimals ("942.733 us", "1.020 ms",
// "2.500 s"), as predictions and the model's warnings print times.
std::string FormatSeconds(double s);

std::string ModelToJson(const AppModel& model);
// Throws UserError naming `origin` when the text is not a model (or does not refit).
AppModel ModelFromJson(const std::string& json, const std::string& origin);
void SaveModel(const AppModel& model, const std::string& path);
AppModel LoadModel(const std::string& path);

}  // namespace pas2p::synthesis
