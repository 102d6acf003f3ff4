#include "pas2p/synthesis/model.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <span>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "pas2p/core/error.h"
#include "pas2p/core/parallel.h"
#include "pas2p/core/trace.h"
#include "pas2p/patterns/grid.h"
#include "pas2p/patterns/grid_frame.h"
#include "pas2p/patterns/serialize.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/correspondence.h"
#include "pas2p/regression/fit.h"

namespace pas2p::synthesis {

using nlohmann::json;

std::string_view PresenceName(Presence presence) {
  switch (presence) {
    case Presence::kAll:
      return "all";
    case Presence::kHasPartner:
      return "has_partner";
    case Presence::kCommMember:
      return "comm_member";
    case Presence::kLikeSlots:
      return "like_slots";
    case Presence::kOnlyRank0:
      return "only_rank0";
    case Presence::kAllButRank0:
      return "all_but_rank0";
  }
  return "all";
}

const std::vector<RankSet>& AllRankSets() {
  static const std::vector<RankSet> all = {
      RankSet::kEvenRanks,         RankSet::kOddRanks,
      RankSet::kOnlyRank0,         RankSet::kLastRank,
      RankSet::kAllButRank0,       RankSet::kGrid2Even,
      RankSet::kGrid2Odd,          RankSet::kGrid2FastFirstEven,
      RankSet::kGrid2FastFirstOdd, RankSet::kGrid3Even,
      RankSet::kGrid3Odd};
  return all;
}

std::string_view RankSetName(RankSet set) {
  switch (set) {
    case RankSet::kNone:
      return "none";
    case RankSet::kEvenRanks:
      return "even";
    case RankSet::kOddRanks:
      return "odd";
    case RankSet::kOnlyRank0:
      return "rank 0";
    case RankSet::kLastRank:
      return "last rank";
    case RankSet::kAllButRank0:
      return "all but rank 0";
    case RankSet::kGrid2Even:
      return "grid2 even";
    case RankSet::kGrid2Odd:
      return "grid2 odd";
    case RankSet::kGrid2FastFirstEven:
      return "grid2 fastest-first even";
    case RankSet::kGrid2FastFirstOdd:
      return "grid2 fastest-first odd";
    case RankSet::kGrid3Even:
      return "grid3 even";
    case RankSet::kGrid3Odd:
      return "grid3 odd";
  }
  return "none";
}

std::string RankSetWords(RankSet set) {
  switch (set) {
    case RankSet::kEvenRanks:
      return "the even ranks";
    case RankSet::kOddRanks:
      return "the odd ranks";
    case RankSet::kOnlyRank0:
      return "rank 0";
    case RankSet::kLastRank:
      return "the last rank";
    case RankSet::kAllButRank0:
      return "every rank but 0";
    case RankSet::kGrid2Even:
    case RankSet::kGrid2Odd:
      return std::string("the ranks with x + y ") + (set == RankSet::kGrid2Even ? "even" : "odd") +
             " on the MPI_Dims_create(P, 2) grid (row-major, as MPI_Cart_create)";
    case RankSet::kGrid2FastFirstEven:
    case RankSet::kGrid2FastFirstOdd:
      return std::string("the ranks with x + y ") +
             (set == RankSet::kGrid2FastFirstEven ? "even" : "odd") +
             " on the MPI_Dims_create(P, 2) grid (first extent fastest)";
    case RankSet::kGrid3Even:
    case RankSet::kGrid3Odd:
      return std::string("the ranks with x + y + z ") +
             (set == RankSet::kGrid3Even ? "even" : "odd") +
             " on the MPI_Dims_create(P, 3) grid (row-major, as MPI_Cart_create)";
    case RankSet::kNone:
      break;
  }
  return "no rank";
}

namespace {
// The parity of the sum of `rank`'s coordinates on the MPI_Dims_create(nprocs, ndims) grid,
// row-major or with the first extent fastest.
int GridParity(std::int64_t rank, std::int64_t nprocs, int ndims, bool fast_first) {
  // Synthesis asks once per rank and occurrence: the grid of the last count asked is kept.
  thread_local std::int64_t last_nprocs = -1;
  thread_local int last_ndims = 0;
  thread_local std::vector<std::int64_t> last_dims;
  if (nprocs != last_nprocs || ndims != last_ndims) {
    last_dims = patterns::DimsCreate(nprocs, ndims);
    last_nprocs = nprocs;
    last_ndims = ndims;
  }
  const std::size_t d = last_dims.size();
  std::int64_t sum = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const std::int64_t extent = fast_first ? last_dims[k] : last_dims[d - 1 - k];
    if (extent <= 0) return 0;
    sum += rank % extent;
    rank /= extent;
  }
  return static_cast<int>(sum % 2);
}
}  // namespace

bool InRankSet(RankSet set, std::int64_t rank, std::int64_t nprocs) {
  switch (set) {
    case RankSet::kNone:
      return false;
    case RankSet::kEvenRanks:
      return rank % 2 == 0;
    case RankSet::kOddRanks:
      return rank % 2 == 1;
    case RankSet::kOnlyRank0:
      return rank == 0;
    case RankSet::kLastRank:
      return rank == nprocs - 1;
    case RankSet::kAllButRank0:
      return rank != 0;
    case RankSet::kGrid2Even:
    case RankSet::kGrid2Odd:
      return GridParity(rank, nprocs, 2, false) == (set == RankSet::kGrid2Odd ? 1 : 0);
    case RankSet::kGrid2FastFirstEven:
    case RankSet::kGrid2FastFirstOdd:
      return GridParity(rank, nprocs, 2, true) == (set == RankSet::kGrid2FastFirstOdd ? 1 : 0);
    case RankSet::kGrid3Even:
    case RankSet::kGrid3Odd:
      return GridParity(rank, nprocs, 3, false) == (set == RankSet::kGrid3Odd ? 1 : 0);
  }
  return false;
}

std::string_view DestOrderName(DestOrder order) {
  switch (order) {
    case DestOrder::kAscending:
      return "ascending";
    case DestOrder::kDistance:
      return "distance";
    case DestOrder::kRing:
      return "ring";
    case DestOrder::kFarthest:
      return "farthest";
    case DestOrder::kRingBack:
      return "ring_back";
  }
  return "ascending";
}

void SortDests(DestOrder order, std::int64_t rank, std::int64_t nprocs,
               std::vector<std::int64_t>* dests) {
  SortDests(order, rank, nprocs, std::span<std::int64_t>(*dests));
}

void SortDests(DestOrder order, std::int64_t rank, std::int64_t nprocs,
               std::span<std::int64_t> dests) {
  switch (order) {
    case DestOrder::kAscending:
      std::sort(dests.begin(), dests.end());
      break;
    case DestOrder::kDistance:
      std::sort(dests.begin(), dests.end(), [rank](std::int64_t a, std::int64_t b) {
        const std::int64_t da = a > rank ? a - rank : rank - a;
        const std::int64_t db = b > rank ? b - rank : rank - b;
        return da != db ? da < db : a < b;
      });
      break;
    case DestOrder::kRing:
      std::sort(dests.begin(), dests.end(), [rank, nprocs](std::int64_t a, std::int64_t b) {
        const std::int64_t p = std::max<std::int64_t>(1, nprocs);
        return ((a - rank) % p + p) % p < ((b - rank) % p + p) % p;
      });
      break;
    case DestOrder::kFarthest:
      std::sort(dests.begin(), dests.end(), [rank](std::int64_t a, std::int64_t b) {
        const std::int64_t da = a > rank ? a - rank : rank - a;
        const std::int64_t db = b > rank ? b - rank : rank - b;
        return da != db ? da > db : a < b;
      });
      break;
    case DestOrder::kRingBack:
      std::sort(dests.begin(), dests.end(), [rank, nprocs](std::int64_t a, std::int64_t b) {
        const std::int64_t p = std::max<std::int64_t>(1, nprocs);
        return ((rank - a) % p + p) % p < ((rank - b) % p + p) % p;
      });
      break;
  }
}

namespace {

DestOrder DestOrderFromName(const std::string& name, const std::string& origin) {
  for (DestOrder o : {DestOrder::kAscending, DestOrder::kDistance, DestOrder::kRing,
                      DestOrder::kFarthest, DestOrder::kRingBack}) {
    if (DestOrderName(o) == name) return o;
  }
  throw UserError(origin + ": unknown partner order \"" + name + "\"");
}

Presence PresenceFromName(const std::string& name, const std::string& origin) {
  for (Presence p : {Presence::kAll, Presence::kHasPartner, Presence::kCommMember,
                     Presence::kLikeSlots, Presence::kOnlyRank0, Presence::kAllButRank0}) {
    if (PresenceName(p) == name) return p;
  }
  throw UserError(origin + ": unknown slot presence \"" + name + "\"");
}

// The first line of an error, for a warning or a note. A first line that announces a list
// ("... cannot be extrapolated. Traced:") would end on the colon: it keeps the list's last
// item instead (the traced map at the largest count), or ends at its last sentence.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.empty() || line.back() != ':') return line;
  std::string last;
  for (std::size_t at = text.find('\n'); at != std::string::npos;) {
    const std::size_t end = text.find('\n', at + 1);
    const std::string next = text.substr(at + 1, end == std::string::npos ? end : end - at - 1);
    if (!next.starts_with("  ")) break;
    last = next.substr(next.find_first_not_of(' '));
    at = end;
  }
  if (line.ends_with(" Traced:") && !last.empty()) {
    return line.substr(0, line.size() - 1) + " at " + last;
  }
  if (const auto stop = line.rfind(". "); stop != std::string::npos) line.resize(stop + 1);
  return line;
}

std::string JoinCounts(const std::vector<int>& counts) {
  std::string s;
  for (std::size_t i = 0; i < counts.size(); ++i) s += (i ? ", " : "") + std::to_string(counts[i]);
  return s;
}

bool CreatesRequest(EventKind kind) {
  return kind == EventKind::kIsend || kind == EventKind::kIrecv;
}

// The coarse identity of a call used to align ranks and counts.
struct Token {
  EventKind kind = EventKind::kCompute;
  std::int32_t tag = 0;
  bool sub_comm = false;
  bool reply = false;     // a reply to the latest wildcard source is not a send to a fixed peer
  bool wildcard = false;  // a receive from MPI_ANY_SOURCE is not one from a named rank
  phases::RootStep root_step = phases::RootStep::kFixed;  // a moving root is no fixed one
  auto operator<=>(const Token&) const = default;
};

// Where a call goes, the same at every count (see DirectionOf); empty when unknown.
using Direction = std::vector<std::int64_t>;

// One slot while the supersequence is being built.
struct SlotAcc {
  Token token;
  // Per count index: displacements (peer - rank) of the ranks placed in this slot.
  std::map<int, std::set<std::int64_t>> displacements;
  // Directions of the calls placed in this slot, over every count.
  std::set<Direction> directions;
};

// Per count: which ranks make this slot's call, and what they did.
struct SlotCountData {
  std::vector<const phases::PhaseEvent*> event_of_rank;  // size nprocs, null = absent
  // Repeated-block phases (PhaseModel::block): the rank's calls of this slot in the block's
  // later iterations (the first is event_of_rank). Empty otherwise.
  std::vector<std::vector<const phases::PhaseEvent*>> more_of_rank;
};

class CommLookup {
 public:
  explicit CommLookup(const phases::Signature& sig) : nprocs_(sig.nprocs) {
    for (const auto& c : sig.communicators) {
      members_[c.id] = &c.members;
      // A split or a create is a subset by design: at a count where it holds every rank
      // (groups of 4 at 4 ranks) it is still the communicator it is at the other counts.
      if (c.origin == static_cast<std::int32_t>(CommOrigin::kSplit) ||
          c.origin == static_cast<std::int32_t>(CommOrigin::kCreate)) {
        subsets_.insert(c.id);
      }
    }
  }
  // Members of `comm` (world ranks), or null for the world (or a duplicate or cartesian
  // copy of it).
  const std::vector<std::int32_t>* SubMembers(CommId comm) const {
    if (comm == kCommWorld) return nullptr;
    auto it = members_.find(comm);
    if (it == members_.end()) return nullptr;
    if (static_cast<int>(it->second->size()) == nprocs_ && subsets_.count(comm) == 0) {
      // A duplicate (or a cartesian copy) of the world; the world unless it reorders ranks.
      bool identity = true;
      for (int i = 0; i < nprocs_ && identity; ++i) identity = (*it->second)[i] == i;
      if (identity) return nullptr;
    }
    return it->second;
  }
  bool Known(CommId comm) const { return comm == kCommWorld || members_.count(comm) > 0; }

 private:
  int nprocs_;
  std::map<CommId, const std::vector<std::int32_t>*> members_;
  std::set<CommId> subsets_;  // made by a split or a create
};

Token TokenOf(const phases::PhaseEvent& e, const CommLookup& comms) {
  Token t;
  t.kind = e.kind;
  // Tags are not part of the identity: the same call can show different tags where a
  // rank has the same partner twice (a 2 x 2 torus); slots keep their most common tag.
  if (IsCollective(e.kind)) t.sub_comm = comms.SubMembers(e.comm) != nullptr;
  t.reply = e.reply;
  // A root that moves one rank either way is one kind of call: on a communicator of 2 ranks
  // the next rank is the previous one, and the compressor called it the next (BuildSlot takes
  // the direction from the larger communicators).
  t.root_step = e.root_step == phases::RootStep::kPrevious ? phases::RootStep::kNext : e.root_step;
  t.wildcard = (e.kind == EventKind::kRecv || e.kind == EventKind::kIrecv) && e.peer == kAnySource;
  return t;
}

std::int64_t Displacement(const phases::PhaseEvent& e, int rank) {
  if (!IsPointToPoint(e.kind) || e.peer < 0) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(e.peer) - rank;
}

// A class: ranks of one count with the same token sequence.
struct ClassRef {
  int count_index = 0;
  std::vector<Token> tokens;
  std::vector<int> ranks;
};

// The direction of one call of `rank` at count index `count_index` (empty: unknown).
using DirectionFn =
    std::function<Direction(int count_index, int rank, const phases::PhaseEvent& e)>;

// Per rank of count index `ci`: whether it is the root of one of the phase's rooted
// collectives (data: [slot][count index]).
std::vector<bool> RootRanks(const std::vector<std::vector<SlotCountData>>& data, std::size_t ci,
                            int nprocs) {
  std::vector<bool> roots(static_cast<std::size_t>(nprocs), false);
  for (const auto& slot : data) {
    for (int r = 0; r < nprocs; ++r) {
      const phases::PhaseEvent* e = slot[ci].event_of_rank[static_cast<std::size_t>(r)];
      if (e && IsRooted(e->kind) && e->peer == r) roots[static_cast<std::size_t>(r)] = true;
    }
  }
  return roots;
}

// True when, in some slot, the roots' bursts and the other ranks' differ by more than half
// of the larger and by more than 10 us at every traced count (both present): a root that
// works alone. `roots`: RootRanks per count index.
bool RootsComputeApart(const std::vector<std::vector<SlotCountData>>& data,
                       const std::vector<int>& counts,
                       const std::vector<std::vector<bool>>& roots) {
  bool any_root = false;
  for (const auto& at_count : roots) {
    for (const bool b : at_count) any_root = any_root || b;
  }
  if (!any_root) return false;
  constexpr double kMinApartNs = 10'000;
  for (const auto& slot : data) {
    bool apart = true;
    for (std::size_t ci = 0; ci < counts.size() && apart; ++ci) {
      double root_sum = 0, other_sum = 0;
      int root_n = 0, other_n = 0;
      for (int r = 0; r < counts[ci]; ++r) {
        const phases::PhaseEvent* e = slot[ci].event_of_rank[static_cast<std::size_t>(r)];
        if (!e || e->compute.cpu_ns.n == 0) continue;
        (roots[ci][static_cast<std::size_t>(r)] ? root_sum : other_sum) += e->compute.cpu_ns.mean;
        ++(roots[ci][static_cast<std::size_t>(r)] ? root_n : other_n);
      }
      if (root_n == 0 || other_n == 0) {
        apart = false;
        break;
      }
      const double a = root_sum / root_n, b = other_sum / other_n;
      apart = std::fabs(a - b) > 0.5 * std::max(a, b) && std::fabs(a - b) > kMinApartNs;
    }
    if (apart) return true;
  }
  return false;
}

// Replaces `order` (slot ids in supersequence order) with `moved`, the same slots in another
// order, when every class (its slot ids in `assignment`) makes its calls in the same order
// under both; otherwise `order` stays as it is. Returns whether it was replaced.
bool TakeOrderIfClassesKeepTheirs(std::size_t slot_count,
                                  const std::vector<std::vector<int>>& assignment,
                                  std::vector<int> moved, std::vector<int>* order) {
  if (moved.size() != order->size() || moved == *order) return false;
  std::vector<int> position(slot_count, -1), moved_position(slot_count, -1);
  for (std::size_t i = 0; i < order->size(); ++i) position[(*order)[i]] = static_cast<int>(i);
  for (std::size_t i = 0; i < moved.size(); ++i) moved_position[moved[i]] = static_cast<int>(i);
  for (const auto& slots : assignment) {
    std::vector<int> was = slots, now = slots;
    std::sort(was.begin(), was.end(), [&](int a, int b) { return position[a] < position[b]; });
    std::sort(now.begin(), now.end(),
              [&](int a, int b) { return moved_position[a] < moved_position[b]; });
    if (was != now) return false;
  }
  *order = std::move(moved);
  return true;
}

// A tree written by hand, aligned by bit and side (BuildPhaseAs with bit_sides): at the
// largest count its top level is made by the root alone on one side (rank 0 receives from
// rank + 2^B and sends straight back down), so the alignment places the top level's calls
// around the root's, not as the level below is placed; then the levels are no run of alike
// steps by bit and a larger count would lack its further levels. Each call of the top bit
// (a slot whose calls all go one (bit, side) way) moves to the position its counterpart of
// the level below has (the same call and side), relative to that level: after it where
// the levels ascend in the program's order, before it where they descend (the direction
// from the two levels below). Only when every rank's calls keep their order; otherwise
// `order` stays as it is.
void MirrorTopBitLevel(const std::vector<SlotAcc>& accs,
                       const std::vector<std::vector<int>>& assignment, std::vector<int>* order) {
  // A slot's bit, and the rest of its one direction (the side, and for a wait the call
  // whose request it completes): {3, b, side} for a call, {6, b, side, kind} for a wait.
  struct Key {
    std::int64_t bit = -1;
    Direction rest;
  };
  auto key_of = [&](int id) {
    Key k;
    const auto& dirs = accs[static_cast<std::size_t>(id)].directions;
    if (dirs.size() != 1) return k;
    const Direction& d = *dirs.begin();
    if ((d.size() == 3 && d[0] == 3) || (d.size() == 4 && d[0] == 6)) {
      k.bit = d[1];
      k.rest = d;
      k.rest.erase(k.rest.begin() + 1);
    }
    return k;
  };
  std::vector<int> position(accs.size(), -1);
  for (std::size_t i = 0; i < order->size(); ++i) position[(*order)[i]] = static_cast<int>(i);
  std::int64_t top = -1;
  for (const int id : *order) top = std::max(top, key_of(id).bit);
  if (top < 2) return;
  // The slot of one (token, way) at one bit, if exactly one.
  auto counterpart = [&](int id, std::int64_t bit) {
    int found = -1;
    for (const int other : *order) {
      const Key k = key_of(other);
      if (k.bit != bit || k.rest != key_of(id).rest ||
          !(accs[static_cast<std::size_t>(other)].token ==
            accs[static_cast<std::size_t>(id)].token)) {
        continue;
      }
      if (found >= 0) return -2;
      found = other;
    }
    return found;
  };
  std::vector<std::pair<int, int>> ascending, descending;  // (counterpart's position, slot)
  int last_below = -1, first_below = static_cast<int>(order->size());
  for (const int id : *order) {
    if (key_of(id).bit != top) continue;
    const int below = counterpart(id, top - 1), below2 = counterpart(id, top - 2);
    if (below < 0 || below2 < 0) return;
    if (position[below2] < position[below]) {
      ascending.push_back({position[below], id});
    } else {
      descending.push_back({position[below], id});
    }
  }
  // Where each direction's new step goes: after the whole level below of the ascending
  // calls, before the whole level below of the descending ones.
  for (const int id : *order) {
    const Key k = key_of(id);
    if (k.bit != top - 1) continue;
    const int below2 = counterpart(id, top - 2);
    if (below2 < 0) continue;
    if (position[below2] < position[id]) {
      last_below = std::max(last_below, position[id]);
    } else {
      first_below = std::min(first_below, position[id]);
    }
  }
  std::sort(ascending.begin(), ascending.end());
  std::sort(descending.begin(), descending.end());
  std::vector<int> moved;
  for (const int id : *order) {
    if (key_of(id).bit == top) continue;
    const int at = position[id];
    if (at == first_below) {
      for (const auto& [p, t] : descending) moved.push_back(t);
    }
    moved.push_back(id);
    if (at == last_below) {
      for (const auto& [p, t] : ascending) moved.push_back(t);
    }
  }
  TakeOrderIfClassesKeepTheirs(accs.size(), assignment, std::move(moved), order);
}

// A recursive doubling folded at counts that are not powers of two, aligned with its folds
// apart (BuildPhaseAs with fold_sides): a step of a bit that only the largest count has
// (bit 3 at 16 ranks) and the unfold that only the other counts make (at 6 and 12) are
// never made by one rank, so the alignment may place the step after the unfold; then the
// steps are no run by bit, and a larger count would lack its further steps. The steps (the
// slots whose calls all go one bit's way) are drawn together where the first of them is,
// the other slots keeping their order around them. Only when every rank's calls keep their
// order; otherwise `order` stays as it is.
void GatherBitSteps(const std::vector<SlotAcc>& accs,
                    const std::vector<std::vector<int>>& assignment, std::vector<int>* order) {
  auto is_step = [&](int id) {
    const auto& dirs = accs[static_cast<std::size_t>(id)].directions;
    return !dirs.empty() && std::all_of(dirs.begin(), dirs.end(), [](const Direction& d) {
      return !d.empty() && (d[0] == 3 || d[0] == 6);
    });
  };
  std::vector<int> before, steps, after;
  for (const int id : *order) {
    if (is_step(id)) {
      steps.push_back(id);
    } else {
      (steps.empty() ? before : after).push_back(id);
    }
  }
  std::vector<int> moved = before;
  moved.insert(moved.end(), steps.begin(), steps.end());
  moved.insert(moved.end(), after.begin(), after.end());
  TakeOrderIfClassesKeepTheirs(accs.size(), assignment, std::move(moved), order);
}

// The best rotation of a class against the slots (AlignClasses) is a function of the table
// of scores alone, and a phase's build meets the same tables again and again: each try of
// BuildPhase, each count's classes of one shape, and each model that AnalyzeForModel tries
// (PETSc multigrid's set-up met 148 tables 2368 times, 16 to 64 times each, 136 rotations of
// a 136 x 136 table every time). A table seen before gives its rotation without the
// alignments. Kept process-wide (the phases are built on several threads), up to
// kRotationMemoBytes of tables; then it starts again empty.
class RotationMemo {
 public:
  struct Best {
    std::size_t rotation = 0;
    std::int64_t score = -1;
  };
  static constexpr std::size_t kRotationMemoBytes = std::size_t{64} << 20;

  bool Find(std::size_t m, const std::vector<std::int32_t>& table, Best* best) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto range = entries_.equal_range(Hash(m, table));
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second.m == m && it->second.table == table) {
        *best = it->second.best;
        return true;
      }
    }
    return false;
  }
  void Add(std::size_t m, const std::vector<std::int32_t>& table, const Best& best) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t size = table.size() * sizeof(std::int32_t);
    if (bytes_ + size > kRotationMemoBytes) {
      entries_.clear();
      bytes_ = 0;
    }
    entries_.emplace(Hash(m, table), Entry{m, table, best});
    bytes_ += size;
  }

 private:
  struct Entry {
    std::size_t m;
    std::vector<std::int32_t> table;
    Best best;
  };
  static std::uint64_t Hash(std::size_t m, const std::vector<std::int32_t>& table) {
    std::uint64_t h = 1469598103934665603ull ^ m;  // FNV-1a
    for (const std::int32_t v : table) {
      h ^= static_cast<std::uint32_t>(v);
      h *= 1099511628211ull;
    }
    return h;
  }
  std::mutex mutex_;
  std::unordered_multimap<std::uint64_t, Entry> entries_;
  std::size_t bytes_ = 0;
};

RotationMemo& Rotations() {
  static RotationMemo* memo = new RotationMemo;  // never destroyed: used until exit
  return *memo;
}

// Aligns every class into one supersequence; returns, per class, the slot id of each of its
// tokens; `order` receives the slot ids in supersequence order. A class may be aligned
// rotated: a loop body seen from a different starting call on some ranks (a rank whose first
// call of the loop is its second receive) is the same body.
//
// Among equal tokens the alignment prefers the slot whose calls go the same way: the same
// direction (`direction`: an offset on the phase's process grid, the dimensions a
// sub-communicator spans), which holds at every count, so a corner rank of the smallest count
// whose only calls are to the south and east lands in the south and east slots even though
// no rank of that count makes the other calls; calls without a direction fall back on the
// displacement (peer - rank) of the slot's ranks at the same count. Directions only choose
// among alignments that match the most tokens, except with `strict_directions` (the second
// try of BuildPhase on an open grid, where every direction is exact): then a call never
// joins a slot that goes none of its ways.
std::vector<std::vector<int>> AlignClasses(
    const std::vector<ClassRef>& classes,
    const std::vector<std::vector<const phases::RankPhase*>>& rank_phases,
    const DirectionFn& direction, bool strict_directions, std::vector<SlotAcc>* slots,
    std::vector<int>* order) {
  std::vector<std::vector<int>> assignment(classes.size());
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const ClassRef& cls = classes[c];
    const std::size_t m = cls.tokens.size();
    const std::size_t n = order->size();
    // Per token of the class: displacements and directions of its ranks.
    std::vector<std::vector<std::int64_t>> disp0(m);
    std::vector<std::vector<Direction>> dir0(m);
    for (int r : cls.ranks) {
      const phases::RankPhase* rp = rank_phases[cls.count_index][r];
      for (std::size_t i = 0; i < m; ++i) {
        disp0[i].push_back(Displacement(rp->events[i], r));
        Direction d = direction(cls.count_index, r, rp->events[i]);
        if (!d.empty()) dir0[i].push_back(std::move(d));
      }
    }
    std::size_t rot = 0;
    auto tok = [&](std::size_t i) -> const Token& { return cls.tokens[(i + rot) % m]; };
    auto dirs = [&](std::size_t i) -> const std::vector<Direction>& { return dir0[(i + rot) % m]; };
    // Matching tokens first (a direction never buys leaving a call unmatched), then the
    // agreement of directions (up to 1000 per token).
    constexpr std::int64_t kMatch = std::int64_t{1} << 20;
    // Each token's directions and displacements counted by value: the ranks of a class
    // mostly go the same few ways. The class's ways are numbered, and whether a slot goes
    // one of them is looked up once per slot and way.
    std::vector<std::map<Direction, std::size_t>> dir_counts(m);
    std::vector<std::map<std::int64_t, std::size_t>> disp_counts(m);
    std::map<Direction, std::size_t> way_of;                                // the class's ways
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> ways(m);  // (way, ranks)
    for (std::size_t t = 0; t < m; ++t) {
      for (const Direction& d : dir0[t]) ++dir_counts[t][d];
      for (const std::int64_t d : disp0[t]) ++disp_counts[t][d];
      for (const auto& [d, ranks] : dir_counts[t])
        ways[t].push_back({way_of.try_emplace(d, way_of.size()).first->second, ranks});
    }
    std::vector<const Direction*> way_direction(way_of.size());
    for (const auto& [d, w] : way_of) way_direction[w] = &d;
    // Per slot and way: 0 not looked up yet, 1 the slot does not go that way, 2 it does.
    std::vector<std::uint8_t> goes(n * way_of.size(), 0);
    auto slot_goes = [&](std::size_t j, const SlotAcc& s, std::size_t w) -> std::size_t {
      std::uint8_t& g = goes[j * way_of.size() + w];
      if (g == 0) g = s.directions.count(*way_direction[w]) ? 2 : 1;
      return g == 2 ? 1 : 0;
    };
    // The score of token t (in the class's own order) in the slot at position j: computed
    // once for every rotation and the traceback (the slots do not change until the class
    // is merged), where each entry counts the ranks' directions in the slot's set.
    std::vector<std::int32_t> score0(m * n, -1);
    for (std::size_t t = 0; t < m; ++t) {
      for (std::size_t j = 0; j < n; ++j) {
        const SlotAcc& s = (*slots)[(*order)[j]];
        if (!(s.token == cls.tokens[t])) continue;
        std::int64_t bonus = 0;
        if (!dir0[t].empty() && !s.directions.empty()) {
          std::size_t hits = 0;
          for (const auto& [w, ranks] : ways[t]) hits += ranks * slot_goes(j, s, w);
          if (hits == 0 && strict_directions) continue;
          bonus = static_cast<std::int64_t>(1000 * hits / dir0[t].size());
        } else if (auto it = s.displacements.find(cls.count_index);
                   it != s.displacements.end() && !it->second.empty()) {
          std::size_t hits = 0;
          for (const auto& [d, ranks] : disp_counts[t]) hits += ranks * it->second.count(d);
          bonus =
              static_cast<std::int64_t>(1000 * hits / std::max<std::size_t>(1, disp0[t].size()));
        }
        score0[t * n + j] = static_cast<std::int32_t>(kMatch + bonus);
      }
    }
    auto match_score = [&](std::size_t i, std::size_t j) -> std::int64_t {
      return score0[((i + rot) % m) * n + j];
    };
    // dp(i, j): best score aligning the first i tokens with the first j slots. The whole
    // table is filled once, for the traceback of the rotation taken; the rotations are
    // scored on one row updated in place (the same values, without writing a table per
    // rotation).
    std::vector<std::int64_t> dp;
    auto cell = [&](std::size_t i, std::size_t j) -> std::int64_t& { return dp[i * (n + 1) + j]; };
    auto fill = [&]() {
      dp.assign((m + 1) * (n + 1), 0);
      for (std::size_t i = 1; i <= m; ++i) {
        const std::int32_t* scores = score0.data() + ((i - 1 + rot) % m) * n;
        const std::int64_t* up = &cell(i - 1, 0);
        std::int64_t* row = &cell(i, 0);
        for (std::size_t j = 1; j <= n; ++j) {  // as score() below, without a branch
          row[j] = std::max(row[j - 1], std::max(up[j], up[j - 1] + scores[j - 1]));
        }
      }
    };
    std::vector<std::int64_t> line;
    auto score = [&]() {
      line.assign(n + 1, 0);
      for (std::size_t i = 1; i <= m; ++i) {
        const std::int32_t* scores = score0.data() + ((i - 1 + rot) % m) * n;
        // Without a branch, and with only the max over the left cell in the chain from one
        // cell to the next. A slot that does not match scores -1, and dp(i - 1, j - 1) - 1
        // never wins: it is less than dp(i - 1, j).
        std::int64_t diagonal = line[0];  // dp(i - 1, j - 1)
        std::int64_t left = line[0];      // dp(i, j - 1)
        for (std::size_t j = 1; j <= n; ++j) {
          const std::int64_t up = line[j];
          left = std::max(left, std::max(up, diagonal + scores[j - 1]));
          diagonal = up;
          line[j] = left;
        }
      }
      return line[n];
    };
    // The best rotation (the first on ties); long sequences are not rotated (cost).
    std::size_t best_rot = 0;
    std::int64_t best_score = -1;
    const std::size_t rotations = (n > 0 && m * m * n <= 4'000'000) ? m : 1;
    // No alignment scores more than every token in its best slot: once one does, no later
    // rotation can take its place.
    std::int64_t ceiling = 0;
    for (std::size_t t = 0; t < m; ++t) {
      const auto row = std::span(score0).subspan(t * n, n);
      if (n > 0) ceiling += std::max<std::int64_t>(0, *std::max_element(row.begin(), row.end()));
    }
    RotationMemo::Best memo;
    if (rotations > 1 && Rotations().Find(m, score0, &memo)) {
      best_rot = memo.rotation;
      best_score = memo.score;
    } else {
      for (rot = 0; rot < std::max<std::size_t>(1, rotations) && best_score < ceiling; ++rot) {
        const std::int64_t sc = score();
        if (sc > best_score) {
          best_score = sc;
          best_rot = rot;
        }
      }
      if (rotations > 1) Rotations().Add(m, score0, {best_rot, best_score});
    }
    // A class that makes the slots' calls in an order of its own, neither theirs nor a
    // rotation of it (a checkerboard exchange with blocking calls: in each direction the
    // ranks with x + y even send and then receive, the others receive and then send): every
    // one of its calls joins a slot of its kind, the one going its way (the best score, the
    // first slot on ties), in whatever order - when every call that has a direction finds a
    // slot going exactly that way, and that scores more than every alignment in order (by
    // matching more calls, or the same calls each to a slot going its own way). FindReorderedRanks
    // then keeps that order for its ranks. Blocking calls only: the order in which a rank posts
    // nonblocking ones matters little, and an open halo whose ranks post the receives that they
    // have in different orders is aligned by exact direction instead (BuildPhase's second try).
    std::vector<int> own(m, -1);  // the slot of each token in the class's order
    std::int64_t own_score = -1;
    const bool blocking = std::none_of(cls.tokens.begin(), cls.tokens.end(),
                                       [](const Token& t) { return CreatesRequest(t.kind); });
    if (n > 0 && m <= n && blocking) {
      rot = 0;
      std::vector<bool> used(n, false);
      own_score = 0;
      for (std::size_t t = 0; t < m && own_score >= 0; ++t) {
        std::int64_t best = -1;
        std::size_t at = n;
        for (std::size_t k = 0; k < n; ++k) {
          if (used[k]) continue;
          if (const std::int64_t sc = match_score(t, k); sc > best) {
            best = sc;
            at = k;
          }
        }
        // Only where every call that has a direction finds a slot going exactly its way:
        // a permutation is no guess among slots that the directions cannot tell apart.
        if (at == n || (!dirs(t).empty() && best != kMatch + 1000)) {
          own_score = -1;
        } else {
          used[at] = true;
          own[t] = (*order)[at];
          own_score += best;
        }
      }
    }
    std::vector<int> merged_rev;
    std::vector<int> slot_of(m, -1);  // by rotated position
    std::size_t i = m, j = n;
    if (own_score > best_score) {
      rot = 0;
      slot_of = own;
      merged_rev.assign(order->rbegin(), order->rend());
      i = 0;
      j = 0;
    } else {
      rot = best_rot;
      fill();
    }
    // Traceback (from the end), building the merged order.
    while (i > 0 || j > 0) {
      if (i > 0 && j > 0) {
        const std::int64_t sc = match_score(i - 1, j - 1);
        if (sc >= 0 && cell(i, j) == cell(i - 1, j - 1) + sc) {
          slot_of[i - 1] = (*order)[j - 1];
          merged_rev.push_back((*order)[j - 1]);
          --i;
          --j;
          continue;
        }
      }
      if (j > 0 && (i == 0 || cell(i, j) == cell(i, j - 1))) {
        merged_rev.push_back((*order)[j - 1]);
        --j;
        continue;
      }
      // A token with no slot: a new slot, placed after the slots aligned before it.
      const int id = static_cast<int>(slots->size());
      slots->push_back(SlotAcc{tok(i - 1), {}, {}});
      slot_of[i - 1] = id;
      merged_rev.push_back(id);
      --i;
    }
    order->assign(merged_rev.rbegin(), merged_rev.rend());
    std::vector<int> by_original(m, -1);
    for (std::size_t k = 0; k < m; ++k) {
      by_original[(k + rot) % m] = slot_of[k];
      auto& set = (*slots)[slot_of[k]].displacements[cls.count_index];
      for (const auto& [d, ranks] : disp_counts[(k + rot) % m]) {
        if (d != std::numeric_limits<std::int64_t>::min()) set.insert(d);
      }
      for (const auto& [d, ranks] : dir_counts[(k + rot) % m]) {
        (*slots)[slot_of[k]].directions.insert(d);
      }
    }
    assignment[c] = std::move(by_original);
  }
  return assignment;
}

// After an alignment by exact direction: two slots of the same call going the same single
// way that no class makes both are one slot, where every class can keep its order. The
// classes are aligned one after another, and the order of two calls that no class aligned so
// far makes both is a guess: a 27-point halo traced where every rank has one neighbour along
// x (an extent of 2) at all counts but one gets (+1, 0, 0) before (-1, 0, 0) from those
// counts, and the ranks of the one count whose grid is 4 wide, which make both in the other
// order, open a second (-1, 0, 0) slot - a call their count alone makes, which no family
// can extrapolate. Merged, the slots keep the order every class makes them in (the earlier
// position first where none says).
void MergeSameDirectionSlots(std::vector<SlotAcc>* accs, std::vector<std::vector<int>>* assignment,
                             std::vector<int>* order) {
  const std::size_t n = accs->size();
  auto positions = [&]() {
    std::vector<int> at(n, -1);
    for (std::size_t k = 0; k < order->size(); ++k) at[(*order)[k]] = static_cast<int>(k);
    return at;
  };
  // The order of the slots that keeps every class's calls in their order, with `from` made
  // `into`; empty if there is none.
  auto reorder = [&](int from, int into) -> std::vector<int> {
    const std::vector<int> at = positions();
    auto id = [&](int slot) { return slot == from ? into : slot; };
    std::vector<std::set<int>> next(n);
    std::vector<int> indegree(n, 0);
    for (const auto& slots : *assignment) {
      std::vector<int> seq = slots;
      std::sort(seq.begin(), seq.end(), [&](int a, int b) { return at[a] < at[b]; });
      for (std::size_t k = 1; k < seq.size(); ++k) {
        const int a = id(seq[k - 1]), b = id(seq[k]);
        if (a == b) return {};
        if (next[a].insert(b).second) ++indegree[b];
      }
    }
    std::set<std::pair<int, int>> ready;  // (position, slot)
    for (int slot : *order) {
      if (slot != from && indegree[slot] == 0) ready.insert({at[slot], slot});
    }
    std::vector<int> out;
    while (!ready.empty()) {
      const int slot = ready.begin()->second;
      ready.erase(ready.begin());
      out.push_back(slot);
      for (int b : next[slot]) {
        if (--indegree[b] == 0) ready.insert({at[b], b});
      }
    }
    if (out.size() + 1 != order->size()) return {};  // a cycle
    return out;
  };
  bool merged = true;
  while (merged) {
    merged = false;
    for (std::size_t x = 0; x < order->size() && !merged; ++x) {
      const int a = (*order)[x];
      const SlotAcc& sa = (*accs)[static_cast<std::size_t>(a)];
      if (sa.directions.size() != 1) continue;
      for (std::size_t y = x + 1; y < order->size() && !merged; ++y) {
        const int b = (*order)[y];
        const SlotAcc& sb = (*accs)[static_cast<std::size_t>(b)];
        if (!(sb.token == sa.token) || sb.directions != sa.directions) continue;
        std::vector<int> new_order = reorder(b, a);
        if (new_order.empty()) continue;
        for (auto& slots : *assignment) {
          for (int& slot : slots) slot = slot == b ? a : slot;
        }
        SlotAcc& into = (*accs)[static_cast<std::size_t>(a)];
        for (auto& [ci, d] : (*accs)[static_cast<std::size_t>(b)].displacements) {
          into.displacements[ci].insert(d.begin(), d.end());
        }
        *order = std::move(new_order);
        merged = true;
      }
    }
  }
}

regression::FittedModel ConstantModel(const std::vector<regression::Point>& points, double value) {
  regression::FittedModel m;
  m.curve.kind = regression::CurveKind::kConstant;
  m.curve.coefficients = {value};
  m.training = points;
  bool integer = true;
  for (const auto& p : points) integer = integer && std::floor(p.y) == p.y;
  m.integer_valued = integer;
  return m;
}

// How precisely a quantity is measured: bytes and counts are exact; CPU times and
// instruction counts of bursts carry run-to-run noise of a few percent (more on a shared
// machine), so a leave-one-out improvement below that floor is noise being fitted and does not
// justify another parameter - a P^3 term that explains a 3% wobble at the largest count
// would predict hours at 65536 ranks. Noisy quantities also keep competing models out of
// their interval (those are the ones that only fit the noise).
enum class Precision { kExact, kMeasured };
constexpr double kMeasuredNoiseFloor = 0.05;
// A collective's largest rank moving this many times the mean bytes of its ranks or more is
// uneven (SlotModel::bytes_max_ratio); below, the parts differ by rounding only (N / P values
// and one more on N mod P ranks) and the ranks are given the mean.
constexpr double kUnevenBytesRatio = 1.01;
// The regression's Occam factor (regression::Options::occam_factor).
constexpr double kOccamFactor = 2.0;
// A measured series that falls towards a level holding at least this share of its value at
// the largest count levels off, rather than keeping on falling as one power of P within the
// noise (regression::Options::level_off_share): five times the noise floor, so that a level
// the noise alone could fit never stands in for a burst that falls as 1/P.
constexpr double kLevelOffShare = 5 * kMeasuredNoiseFloor;

// The regression options for a quantity of this precision.
regression::Options FitOptions(Precision precision) {
  regression::Options options;
  // Bytes and counts that no law reproduces exactly (sizes mixing cases whose proportions
  // change with P) do not get a law steeper than P from a lucky leave-one-out error.
  options.steep_needs_exact = precision == Precision::kExact;
  // Nor a law that crosses zero beyond the traced counts (Options::positive_unless_exact).
  options.positive_unless_exact = precision == Precision::kExact;
  if (precision == Precision::kMeasured) {
    options.occam_absolute_tolerance = kMeasuredNoiseFloor;
    options.interval_model_factor = 1.0;
    options.level_off_share = kLevelOffShare;
    // Few noisy points cannot tell P^3 from a wobble: measured quantities get exponents in
    // [-1, 1] (with the x P form, per-rank values from P^-2 to P^1), at most one log factor,
    // and no exponential laws.
    std::vector<std::array<int, 2>> kept;
    for (const auto& e : options.exponents) {
      if (std::abs(e[0]) <= std::abs(e[1])) kept.push_back(e);
    }
    options.exponents = kept;
    options.max_log_exponent = 1;
    options.power_exponent_bound = 1;
    options.use_exponentials = false;
    // A CPU time or instruction count is positive: no candidate that crosses zero beyond the
    // traced counts (c0 - c1 P^(1/4) fitted to a falling series predicts 0 s at 49 ranks).
    options.positive = true;
    // Nor one whose trend turns beyond them (Options::no_turn_beyond): cg's and transpose's
    // bursts (per call or per rank class) fell as 1/P over 4-36 ranks and grew back to 7-10 ms
    // at 1024, 25-29 times the work the traced runs did in all.
    options.no_turn_beyond = true;
    // A block law (c P^a ceil(N/P)^k) is only ever taken when it reproduces every value
    // exactly: a measured quantity never does, so it is not searched for.
    options.use_block_laws = false;
  }
  return options;
}

// A measured quantity whose best law still misses the left-out counts by more than this
// (relative leave-one-out error) follows no law the traces support: run-to-run noise of a
// burst of a few microseconds, or contention that differs from run to run. The steepest
// form that happens to miss least (66 P^(3/4) log2(P) ns fitted to 2.4, 0.8, 3.8 and 3.9 us
// at 4-32 ranks) extrapolates that noise: 9 us at 64 ranks, where the burst took 3.4 us.
constexpr double kNoLawLooError = 0.3;

// A left-out phase is folded into a modelled one (k occurrences of it) only when those
// compute at most this factor times what the left-out phase computed, plus the slack, on
// the busiest rank (BuildModel).
constexpr double kFoldCpuFactor = 2.0;
constexpr double kFoldCpuSlackNs = 50'000;

// The median of the traced values, with the traced range as its interval (its LOO error:
// the median of the other counts against each count).
regression::FittedModel NoLawModel(const std::vector<regression::Point>& points) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  std::vector<double> ys;
  for (const auto& p : points) ys.push_back(p.y);
  regression::FittedModel m = ConstantModel(points, median(ys));
  std::sort(m.training.begin(), m.training.end(),
            [](const regression::Point& a, const regression::Point& b) { return a.p < b.p; });
  const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
  m.interval_method = regression::IntervalMethod::kLooEnvelope;
  m.interval_curves = {regression::Curve{regression::CurveKind::kConstant, 0, 1, 0, {*lo}},
                       regression::Curve{regression::CurveKind::kConstant, 0, 1, 0, {*hi}}};
  double sq = 0;
  for (std::size_t k = 0; k < ys.size(); ++k) {
    std::vector<double> rest;
    for (std::size_t i = 0; i < ys.size(); ++i) {
      if (i != k) rest.push_back(ys[i]);
    }
    const double e = ys[k] != 0 ? (median(rest) - ys[k]) / ys[k] : 0;
    sq += e * e;
  }
  m.loo_error = std::sqrt(sq / static_cast<double>(ys.size()));
  return m;
}

// Fits (P, value) points; fewer than 3 points (a slot only some counts have) or identical
// values give a constant.
// `exact_tail`: values identical at the largest counts are the constant from there on
// (regression::Options::exact_tail_min_counts).
Quantity FitQuantity(const std::vector<regression::Point>& points, const std::string& what,
                     Precision precision = Precision::kExact, bool exact_tail = false) {
  Quantity q;
  if (points.empty()) return q;
  q.present = true;
  bool same = true;
  for (const auto& p : points) same = same && p.y == points.front().y;
  if (same) {
    q.model = ConstantModel(points, points.front().y);
    return q;
  }
  if (points.size() == 2 && precision == Precision::kExact && points[0].y > 0 && points[1].y > 0 &&
      points[0].p > 0 && points[1].p > 0 && points[0].p != points[1].p) {
    // Two exact values (the bytes of calls that a run of one rank does not make, traced at
    // 1, 8 and 27 ranks): the power law through both. On cube counts a face falls as
    // P^(-2/3) and an edge as P^(-1/3) exactly, where their mean was 2.8 times a face at 64.
    // An exponent within 0.001 of a third or a quarter is taken as that fraction.
    const double b = std::log(points[1].y / points[0].y) / std::log(points[1].p / points[0].p);
    regression::Curve& c = q.model.curve;
    c.kind = regression::CurveKind::kPowerLaw;
    c.coefficients = {points[0].y / std::pow(points[0].p, b), b};
    for (const int den : {1, 2, 3, 4}) {
      const double num = std::round(b * den);
      if (std::fabs(num / den - b) <= 1e-3) {
        c.kind = regression::CurveKind::kSingleTerm;
        c.exponent_numerator = static_cast<int>(num);
        c.exponent_denominator = den;
        c.coefficients = {points[0].y / std::pow(points[0].p, num / den)};
        break;
      }
    }
    q.model.training = points;
    bool integer = true;
    for (const auto& p : points) integer = integer && std::floor(p.y) == p.y;
    q.model.integer_valued = integer;
    return q;
  }
  if (points.size() < 3) {
    double mean = 0;
    for (const auto& p : points) mean += p.y;
    q.model = ConstantModel(points, mean / static_cast<double>(points.size()));
    return q;
  }
  regression::Options options = FitOptions(precision);
  if (exact_tail) options.exact_tail_min_counts = 3;
  q.model = regression::Fit(points, options, what);
  // The total over P ranks may scale more simply (a fixed domain split P ways).
  std::vector<regression::Point> totals;
  for (const auto& p : points) totals.push_back({p.p, p.y * p.p});
  regression::Options total_options = options;
  total_options.turn_of_quotient = true;  // the quantity is the total over P
  regression::FittedModel total = regression::Fit(totals, total_options, what + " x P");
  // Within the noise floor both describe the data: the one with fewer parameters.
  const double floor = precision == Precision::kMeasured ? kMeasuredNoiseFloor : 0.0;
  const double own = std::max(q.model.loo_error, floor), tot = std::max(total.loo_error, floor);
  const bool simpler = total.curve.coefficients.size() < q.model.curve.coefficients.size();
  // A quantity that levels off (as the fit chose it, over a law that keeps falling) keeps that
  // level unless the total predicts better outright: within the noise the total's one-term
  // law is the falling one again (c P^(1/2) over P: P^(-1/2)). Only a level as large as the
  // fit's own rule takes (regression::Options::level_off_share): a small one (NAS CG's burst
  // at 8-32, 11% of the value at 32) is the noise's, and the total's law stays the simpler.
  const std::optional<double> level = regression::FallingLevel(q.model.curve);
  const double p_max = std::max_element(points.begin(), points.end(),
                                        [](const regression::Point& a, const regression::Point& b) {
                                          return a.p < b.p;
                                        })
                           ->p;
  const bool levels = precision == Precision::kMeasured && level &&
                      *level >= kLevelOffShare * q.model.curve.Evaluate(p_max) &&
                      q.model.loo_error <= total.loo_error;
  if (tot < own || (tot == own && simpler && !levels)) {
    q.model = std::move(total);
    q.divided_by_p = true;
  }
  return q;
}

std::vector<bool> PresentSet(const SlotCountData& d) {
  std::vector<bool> s(d.event_of_rank.size());
  for (std::size_t r = 0; r < s.size(); ++r) s[r] = d.event_of_rank[r] != nullptr;
  return s;
}

struct PhaseBuild {
  PhaseModel model;
  std::vector<std::vector<SlotCountData>> data;  // [slot][count]
  std::vector<std::string> warnings;             // for AppModel::warnings
  // Calls the phase's signature has that the model leaves out (requests no call of an
  // occurrence completes, or completes that belong to requests made before it), at the
  // largest count: their share of the phase's bytes sent and of its compute (the bursts
  // before them). AppModel::unmodelled_bytes_share and unmodelled_share count them.
  double dropped_bytes_share = 0;
  double dropped_cpu_share = 0;
  // Some ranks make the phase's calls in an order of their own that no rank set names: they
  // are synthesized in the slots' order, which can deadlock (FindReorderedRanks).
  bool unordered_ranks = false;
};

// Which ranks a slot's equation gives a partner at count P (from the fitted equations).
std::vector<bool> PartnerSet(const SlotModel& slot, std::int64_t nprocs) {
  std::vector<bool> s(static_cast<std::size_t>(nprocs), false);
  // A lone rank has no partner, whatever count the pattern needs (its fit leaves a 1-rank
  // run without messages out).
  if (nprocs == 1 && ((slot.peer && !slot.peer->IsValidCount(1)) ||
                      (slot.recv_peer && !slot.recv_peer->IsValidCount(1)))) {
    return s;
  }
  if (slot.peer) {
    auto at = slot.peer->At(nprocs);
    for (std::int64_t r = 0; r < nprocs; ++r) s[r] = s[r] || at.NumDests(r) > 0;
  }
  if (slot.recv_peer) {
    auto at = slot.recv_peer->At(nprocs);
    for (std::int64_t r = 0; r < nprocs; ++r) s[r] = s[r] || at.NumDests(r) > 0;
  }
  return s;
}

std::vector<bool> MemberSet(const SlotModel& slot, std::int64_t nprocs) {
  std::vector<bool> s(static_cast<std::size_t>(nprocs), false);
  auto at = slot.communicator->At(nprocs);
  for (std::int64_t r = 0; r < nprocs; ++r) s[r] = at.GroupIndex(r) >= 0;
  return s;
}

std::string SlotLabel(const PhaseModel& phase, std::size_t slot, const SlotModel& s) {
  return "phase " + std::to_string(phase.index) + " call " + std::to_string(slot) + " (" +
         std::string(EventKindName(s.kind)) + ")";
}

// Why a point-to-point call made on sub-communicators of unequal sizes fits no family of
// world ranks: its partners are members of the caller's group, and those groups make no one
// grid of world ranks (a world split at P/4 into two components, each with a grid of its
// own). Empty when the calls are not on such communicators at every count.
std::string UnequalGroupsNote(const std::vector<patterns::CommunicatorLayout>& layouts) {
  std::string sizes;
  bool unequal = false;
  for (const patterns::CommunicatorLayout& layout : layouts) {
    std::set<std::size_t> seen;
    std::string here;
    for (const auto& g : layout.groups) {
      if (!seen.insert(g.size()).second) continue;
      here += (here.empty() ? "" : " and ") + std::to_string(g.size());
    }
    unequal = unequal || seen.size() > 1;
    sizes += (sizes.empty() ? "" : "; ") + std::string("at ") + std::to_string(layout.nprocs) +
             ": groups of " + here + " ranks";
  }
  if (!unequal) return {};
  return "\nIts calls are made on sub-communicators of unequal sizes (" + sizes +
         "), each partner in the caller's group: a world split into components of different "
         "sizes (a coupled model's parts) is fitted when the groups are blocks of consecutive "
         "ranks whose sizes are fixed or a fraction of P, each with a pattern of its own ranks.";
}

// The maps' equation in world ranks; failing that, on calls made on sub-communicators of
// unequal sizes (UnequalGroupsNote), components each with an equation of its own ranks
// (patterns::FitComponents). When neither fits, the first error, with the note and why the
// components did not fit.
patterns::GeneralEquation FitOrComponents(const std::vector<patterns::CommMap>& maps,
                                          const std::vector<patterns::CommunicatorLayout>& layouts,
                                          const patterns::FitOptions& fo) {
  try {
    return patterns::FitGeneralEquation(maps, fo);
  } catch (const patterns::PatternFitError& e) {
    const std::string note = UnequalGroupsNote(layouts);
    if (note.empty()) throw;
    try {
      return patterns::FitComponents(maps, layouts, fo);
    } catch (const patterns::PatternFitError& why) {
      throw patterns::PatternFitError(e.what() + note + "\nFitted as components: " + why.what());
    }
  }
}

// Whether `eq` gives every rank of every map exactly its traced partners (in any order).
bool Reproduces(const patterns::GeneralEquation& eq, const std::vector<patterns::CommMap>& maps) {
  for (const patterns::CommMap& m : maps) {
    if (!eq.IsValidCount(m.nprocs)) return false;
    const patterns::GeneralEquation::AtCount at = eq.At(m.nprocs);
    for (std::size_t r = 0; r < m.dests.size(); ++r) {
      std::vector<std::int64_t> want(m.dests[r].begin(), m.dests[r].end());
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      if (at.Dests(static_cast<std::int64_t>(r)) != want) return false;
    }
  }
  return true;
}

void FitSlotEquations(SlotModel* slot, const std::string& label, bool prefer_trees = false,
                      const std::optional<patterns::IndexRule>& tree_root = std::nullopt,
                      bool fold_pairs_first = false, bool dissemination_first = false) {
  bool any = false;
  for (const auto& m : slot->maps) any = any || !m.IsEmpty();
  if (any && slot->reply) {
    // A reply goes to whoever answered: in a self-scheduled run no equation describes it
    // (the schedule does, at synthesis); a master that answers every worker once per round
    // still has one (every worker, in some order).
    patterns::FitOptions fo;
    fo.label = label;
    try {
      slot->peer = patterns::FitGeneralEquation(slot->maps, fo);
    } catch (const UserError&) {
      slot->peer.reset();
    }
  } else if (any) {
    patterns::FitOptions fo;
    fo.label = label;
    fo.prefer_trees = prefer_trees;
    fo.tree_root = tree_root;
    fo.fold_pairs_first = fold_pairs_first;
    fo.dissemination_first = dissemination_first;
    slot->peer = FitOrComponents(slot->maps, slot->p2p_layouts, fo);
  }
  bool any_recv = false;
  for (const auto& m : slot->recv_maps) any_recv = any_recv || !m.IsEmpty();
  // A sendrecv's receive half is the inverse of its send half when that reproduces the traced
  // sources (a shift sends to rank + d and receives from rank - d): fitted alone it can take
  // another family that the traced counts cannot tell from it (the sources of a
  // dissemination, rank + 2^b for 2^b < P, are a ring's +1, +2, +4, +8 up to 16 ranks, and
  // only those at larger counts).
  if (any_recv && slot->peer && slot->peer->family != patterns::Family::kUnion &&
      Reproduces(slot->peer->Inverse(), slot->recv_maps)) {
    slot->recv_peer = slot->peer->Inverse();
    slot->recv_peer->traced_counts = slot->peer->traced_counts;
    any_recv = false;
  }
  if (any_recv) {
    patterns::FitOptions fo;
    fo.label = label + ", receive half";
    fo.fold_pairs_first = fold_pairs_first;
    fo.dissemination_first = dissemination_first;
    slot->recv_peer = FitOrComponents(slot->recv_maps, slot->p2p_layouts, fo);
  }
  if (!slot->layouts.empty()) {
    patterns::FitOptions fo;
    fo.label = label + ", communicator";
    slot->communicator = patterns::FitCommunicators(slot->layouts, fo);
  }
  if (!slot->root_points.empty()) slot->root = patterns::FitRankRule(slot->root_points, label);
}

// The order in which ranks call their partners (a slot with several per rank): the first of
// ascending rank, ascending distance |peer - rank| (recursive doubling: bit 0 first), ring
// order (peer - rank) mod P, descending distance, or the ring walked back (rank - peer) mod P
// that reproduces every traced rank; ascending when none does.
DestOrder DestOrderOf(const std::vector<patterns::CommMap>& maps) {
  for (DestOrder order : {DestOrder::kAscending, DestOrder::kDistance, DestOrder::kRing,
                          DestOrder::kFarthest, DestOrder::kRingBack}) {
    bool ok = true;
    for (const auto& m : maps) {
      for (std::size_t r = 0; r < m.dests.size() && ok; ++r) {
        std::vector<std::int64_t> v(m.dests[r].begin(), m.dests[r].end());
        std::vector<std::int64_t> sorted = v;
        SortDests(order, static_cast<std::int64_t>(r), m.nprocs, &sorted);
        ok = sorted == v;
      }
      if (!ok) break;
    }
    if (ok) return order;
  }
  return DestOrder::kAscending;
}

// A transpose of the 2^ceil(n/2) x 2^floor(n/2) grid of a power-of-two count (n = log2 P):
// the bits above the lowest n mod 2 swapped by halves.
bool TransposesBitGrid(const patterns::GeneralEquation& eq) {
  return eq.family == patterns::Family::kBitPermute &&
         eq.permutation == patterns::BitPermutation::kTransposeHigh;
}
bool TransposesBitGrid(const std::optional<patterns::GeneralEquation>& eq) {
  return eq && TransposesBitGrid(*eq);
}

// The grid dimensions a stencil's messages cross: those its offsets move along, when every
// offset moves along the same ones (an open mesh's -1 and +1 in one call; a 27-point halo's
// edge (0, +1, -1)), and not along all of them (a corner's message is the same size
// whatever the extents). Empty otherwise, or for another family. (A zero offset, the rank
// itself, crosses nothing and is passed over.)
std::vector<int> CrossedDims(const patterns::GeneralEquation& eq) {
  if (eq.family != patterns::Family::kStencil) return {};
  std::optional<std::vector<int>> dims;
  std::size_t rank = 0;  // the grid's dimensions
  for (const auto& off : eq.offsets) {
    std::vector<int> moved;
    for (std::size_t i = 0; i < off.size(); ++i) {
      if (off[i] != 0) moved.push_back(static_cast<int>(i));
    }
    rank = std::max(rank, off.size());
    if (moved.empty()) continue;
    if (dims && *dims != moved) return {};
    dims = std::move(moved);
  }
  if (!dims || (dims->size() > 1 && dims->size() >= rank)) return {};
  return *dims;
}

// The grid dimension a stencil exchanges along (its offsets all along one; for an edge, the
// first of the dimensions it crosses, see CrossedDims), or -1.
int ExchangeDim(const SlotModel& slot) {
  // A butterfly along the rows (columns) of a power-of-two grid exchanges along dimension 0
  // (1) of its 2^ceil(n/2) x 2^floor(n/2) grid (see GridExtents).
  if (slot.peer && slot.peer->family == patterns::Family::kXorExchange &&
      slot.peer->bit_field != patterns::BitField::kRank) {
    return slot.peer->bit_field == patterns::BitField::kLowHalf ? 0 : 1;
  }
  // The transpose of that grid (the bits of the row and the column index swapped) moves a
  // block between the rows and the columns: its messages are a share of a row's extent (the
  // face across dimension 1) or a column's (the line along it), as FitFaceBytes finds.
  if (TransposesBitGrid(slot.peer)) return 1;
  if (!slot.peer) return -1;
  const std::vector<int> dims = CrossedDims(*slot.peer);
  return dims.empty() ? -1 : dims.front();
}

// Product of 1 / extent over the grid's dimensions other than `dim` at `nprocs`.
// The grid the equation's ranks lie on at `nprocs`: its grid, or for an XOR exchange counted
// in a row or column, or a transpose of that grid, the 2^ceil(n/2) x 2^floor(n/2) grid
// (n = log2 P, rows fastest).
std::vector<std::int64_t> GridExtents(const patterns::GeneralEquation& eq, std::int64_t nprocs) {
  if ((eq.family == patterns::Family::kXorExchange && eq.bit_field != patterns::BitField::kRank) ||
      TransposesBitGrid(eq)) {
    int n = 0;
    while ((std::int64_t{1} << n) < nprocs) ++n;
    return {std::int64_t{1} << ((n + 1) / 2), std::int64_t{1} << (n / 2)};
  }
  return eq.At(nprocs).extents();
}

// An edge's (a stencil crossing several dimensions, CrossedDims) is over the dimensions it
// does not cross: the line of the local block it carries.
double FaceFactor(const patterns::GeneralEquation& eq, int dim, std::int64_t nprocs,
                  bool line = false, double margin = 0) {
  const std::vector<std::int64_t> extents = GridExtents(eq, nprocs);
  if (line) {
    const auto d = static_cast<std::size_t>(dim);
    return d < extents.size() && extents[d] > 0 ? 1.0 / static_cast<double>(extents[d]) : 1.0;
  }
  std::vector<int> crossed = CrossedDims(eq);
  if (std::find(crossed.begin(), crossed.end(), dim) == crossed.end()) crossed = {dim};
  double f = 1;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (std::find(crossed.begin(), crossed.end(), static_cast<int>(i)) == crossed.end() &&
        extents[i] > 0) {
      f *= 1.0 / static_cast<double>(extents[i]) + margin;
    }
  }
  return f;
}

// The margins a face with its halo is tried with (FitFaceBytes): 1/512 to 2 of the domain's
// side, log-spaced.
std::vector<double> FaceMargins() {
  std::vector<double> m;
  for (int i = 0; i <= 60; ++i) m.push_back(std::pow(2.0, -9.0 + 10.0 * i / 60.0));
  return m;
}

// Fits bytes = c x FaceFactor (one coefficient, relative least squares) and keeps it when its
// leave-one-out error is at most the P-model's (on a sqrt(P) grid both are the same law). A
// tie goes to the face: when one extent of the grid is the same at every traced count (a
// 3-D halo traced at 8, 12 and 18 ranks, 2 x 2 x 2, 3 x 2 x 2 and 3 x 3 x 2, always 2 along
// one dimension), the face along it and c / P agree at every traced count, but only the face
// is what a halo sends at 27 (3 x 3 x 3).
//
// A line instead (bytes = c / the extent along the exchange's own dimension: a vector split
// over the ranks of a row, reduced along the row) when it predicts the left-out counts
// strictly better than the face.
//
// `chosen_loo`, when given, gets the leave-one-out error of the face it keeps.
void FitFaceBytes(SlotModel* slot, const std::vector<regression::Point>& bytes,
                  const std::vector<regression::Point>& recv_bytes, double* chosen_loo = nullptr) {
  const int dim = ExchangeDim(*slot);
  if (dim < 0 || bytes.size() < 3 || !slot->bytes.present) return;
  bool line = false;
  // Relative least squares of y = c f over the points but `skip`: c, and the sum of squares.
  auto solve = [](const std::vector<regression::Point>& pts, const std::vector<double>& f,
                  std::size_t skip, double* sse) {
    double num = 0, den = 0;  // minimise sum ((c f - y) / y)^2
    for (std::size_t k = 0; k < pts.size(); ++k) {
      if (k == skip || pts[k].y <= 0) continue;
      num += f[k] / pts[k].y;
      den += (f[k] / pts[k].y) * (f[k] / pts[k].y);
    }
    const double c = den > 0 ? num / den : 0.0;
    if (sse) {
      *sse = 0;
      for (std::size_t k = 0; k < pts.size(); ++k) {
        if (k == skip || pts[k].y <= 0) continue;
        const double e = (c * f[k] - pts[k].y) / pts[k].y;
        *sse += e * e;
      }
    }
    return c;
  };
  auto factors = [&](const std::vector<regression::Point>& pts, double margin) {
    std::vector<double> f;
    for (const auto& p : pts) {
      f.push_back(FaceFactor(*slot->peer, dim, static_cast<std::int64_t>(p.p), line, margin));
    }
    return f;
  };
  auto fit = [&](const std::vector<regression::Point>& pts, double* coef, double* loo) {
    const std::vector<double> f = factors(pts, 0);
    *coef = solve(pts, f, pts.size(), nullptr);
    double sq = 0;
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const double c = solve(pts, f, k, nullptr);
      const double e = pts[k].y > 0 ? (c * f[k] - pts[k].y) / pts[k].y : 0;
      sq += e * e;
    }
    *loo = std::sqrt(sq / static_cast<double>(pts.size()));
  };
  // The face with a halo margin: the margin that fits the points but `skip` best (and its
  // coefficient), so that the leave-one-out error chooses the margin without the left-out
  // count too.
  auto fit_margin = [&](const std::vector<regression::Point>& pts, std::size_t skip,
                        double* margin) {
    double best = std::numeric_limits<double>::infinity(), best_c = 0;
    for (const double m : FaceMargins()) {
      double sse = 0;
      const double c = solve(pts, factors(pts, m), skip, &sse);
      if (c > 0 && sse < best - 1e-15) {
        best = sse;
        best_c = c;
        *margin = m;
      }
    }
    return best_c;
  };
  double coef = 0, loo = 0;
  fit(bytes, &coef, &loo);
  if (CrossedDims(*slot->peer).size() <= 1) {  // an edge is not a line of its own dimension
    double line_coef = 0, line_loo = 0;
    line = true;
    fit(bytes, &line_coef, &line_loo);
    if (line_coef > 0 && (!(coef > 0) || line_loo + 1e-9 < loo)) {
      coef = line_coef;
      loo = line_loo;
    } else {
      line = false;
    }
  }
  // A margin is one more parameter: it needs 4 counts (3 left when one is out), a leave-one-out
  // error no worse than the bare face's, and to fit the counts with at most half its error.
  // (Where only one traced count has other extents along the face, as 27, 36, 45 and 48 ranks
  // have 3 x 3 but for 4 x 3, the margin is free without that count, and leave-one-out ties.)
  double margin = 0;
  auto fit_error = [&](double c, double m) {
    double sq = 0;
    for (const auto& p : bytes) {
      const double f = FaceFactor(*slot->peer, dim, static_cast<std::int64_t>(p.p), false, m);
      const double e = p.y > 0 ? (c * f - p.y) / p.y : 0;
      sq += e * e;
    }
    return std::sqrt(sq / static_cast<double>(bytes.size()));
  };
  if (!line && coef > 0 && bytes.size() >= 4 && slot->peer->offsets.size() == 1) {
    double sq = 0;
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      double m = 0;
      const double c = fit_margin(bytes, k, &m);
      const double f =
          FaceFactor(*slot->peer, dim, static_cast<std::int64_t>(bytes[k].p), false, m);
      const double e = bytes[k].y > 0 ? (c * f - bytes[k].y) / bytes[k].y : 0;
      sq += e * e;
    }
    const double margin_loo = std::sqrt(sq / static_cast<double>(bytes.size()));
    double m = 0;
    const double c = fit_margin(bytes, bytes.size(), &m);
    if (c > 0 && margin_loo <= loo + 1e-9 && fit_error(c, m) < 0.5 * fit_error(coef, 0)) {
      coef = c;
      loo = margin_loo;
      margin = m;
    }
  }
  // Traced sizes are whole bytes and a face is not: a face within that rounding of the best
  // law's error is as good. It is then preferred, being the law of an exchange on a grid: where
  // the extent along the exchange stayed the same at every traced count (a y of 3 at 27, 36,
  // 45 and 48), bytes ~ N/P fits the faces exactly too, and is wrong once that extent changes.
  double rounding = 0;
  for (const auto& p : bytes) rounding = std::max(rounding, p.y > 0 ? 1.0 / p.y : 0.0);
  if (!(coef > 0) || loo > slot->bytes.model.loo_error + rounding + 1e-9) return;
  double rcoef = 0, rloo = 0;
  if (!recv_bytes.empty()) {
    if (margin > 0) {
      rcoef = solve(recv_bytes, factors(recv_bytes, margin), recv_bytes.size(), nullptr);
    } else {
      fit(recv_bytes, &rcoef, &rloo);
    }
    if (!(rcoef > 0)) return;
  }
  slot->face_dim = dim;
  slot->face_line = line;
  slot->face_bytes = coef;
  slot->face_recv_bytes = rcoef;
  slot->face_margin = margin;
  if (chosen_loo) *chosen_loo = loo;
}

// The points a fitted quantity was fitted to, per rank (undoing the x P form).
std::vector<regression::Point> TrainingPoints(const Quantity& q) {
  std::vector<regression::Point> pts = q.model.training;
  if (q.divided_by_p) {
    for (auto& p : pts) p.y /= p.p;
  }
  return pts;
}

// A rank class's CPU before a call as a share of the slot's (the mean over every rank making
// the call): `ratio` is the mean over the class's counts of class / slot; `loo_error` the
// root mean square relative error of predicting each of the class's counts from the others
// (the ratio of the other counts times the slot's law refitted without that count); +inf when
// it cannot be measured (fewer than 3 counts).
struct RelativeCpu {
  double ratio = 0;
  double loo_error = std::numeric_limits<double>::infinity();
};

RelativeCpu ClassRelativeCpu(const Quantity& slot, const std::vector<regression::Point>& slot_cpu,
                             const std::vector<regression::Point>& class_cpu) {
  RelativeCpu out;
  std::vector<std::pair<double, double>> ratios;  // (p, class / slot)
  for (const regression::Point& c : class_cpu) {
    for (const regression::Point& all : slot_cpu) {
      if (all.p == c.p && all.y > 0) {
        ratios.emplace_back(c.p, c.y / all.y);
        break;
      }
    }
  }
  if (ratios.empty()) return out;
  double sum = 0;
  for (const auto& [p, r] : ratios) sum += r;
  out.ratio = sum / static_cast<double>(ratios.size());
  if (ratios.size() < 3 || ratios.size() != class_cpu.size() || !(out.ratio > 0)) return out;
  const regression::Options options = FitOptions(Precision::kMeasured);
  const std::vector<regression::Point>& law_points = slot.model.training;  // as fitted
  double m2 = 0;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    const double p = ratios[i].first;
    const double others = (sum - ratios[i].second) / static_cast<double>(ratios.size() - 1);
    std::vector<regression::Point> rest;
    for (const regression::Point& q : law_points) {
      if (q.p != p) rest.push_back(q);
    }
    regression::Curve refit;
    if (slot.model.curve.coefficients.empty() || rest.size() < 2 ||
        !regression::FitCurve(slot.model.curve, rest, options, &refit)) {
      refit = slot.model.curve;
    }
    double law = refit.Evaluate(p);
    if (slot.divided_by_p) law /= p;
    const double y = class_cpu[i].y;
    if (!(y > 0)) return out;
    const double e = (others * std::max(0.0, law) - y) / y;
    m2 += e * e;
  }
  out.loo_error = std::sqrt(m2 / static_cast<double>(ratios.size()));
  return out;
}

// A measured quantity whose model misses the left-out counts by more than kNoLawLooError
// becomes the median of its traced values (NoLawModel).
void UnlessSupported(Quantity* q) {
  if (!q->present || !(q->model.loo_error > kNoLawLooError)) return;
  q->model = NoLawModel(TrainingPoints(*q));
  q->divided_by_p = false;
}

// A call on components of unequal sizes takes a bytes law per component only when each
// predicts its left-out counts better than the call's one law predicts the mean, by at least
// this much (relative leave-one-out error).
constexpr double kComponentBytesGain = 1e-3;

// SlotModel::component_bytes from the traced messages (SlotModel::rank_messages), once the
// partners' equation is fitted. Each component's messages get a law of their own: of the
// component's size (or of P, for a component as large at every traced count) and, on a grid,
// the face of the component's own grid, whichever predicts its left-out counts better (as
// the call's own bytes are chosen). A loaded model, which has no messages, keeps its own.
void FitComponentBytes(SlotModel* slot, const std::string& what) {
  if (slot->rank_messages.empty()) return;
  slot->component_bytes.clear();
  if (!slot->peer || slot->peer->family != patterns::Family::kComponents || !slot->bytes.present ||
      slot->face_dim >= 0 || slot->subtree_bytes || slot->step_blocks ||
      slot->bytes_per_occurrence || slot->wildcard || slot->reply) {
    return;
  }
  const patterns::GeneralEquation& eq = *slot->peer;
  const std::size_t k = eq.terms.size();
  struct CountMean {
    double nprocs, size, bytes, recv_bytes;
  };
  std::vector<std::vector<CountMean>> means(k);
  std::vector<std::set<std::int64_t>> sizes_seen(k);
  for (const auto& [n, messages] : slot->rank_messages) {
    const auto sizes = eq.ComponentSizesAt(n);
    if (!sizes || sizes->size() != k) return;
    std::vector<std::int64_t> ends(k);
    std::partial_sum(sizes->begin(), sizes->end(), ends.begin());
    std::vector<double> sum(k), recv_sum(k), count(k);
    for (const SlotModel::RankMessage& m : messages) {
      const auto c = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), m.rank) -
                                              ends.begin());
      if (c >= k) return;
      sum[c] += m.bytes;
      recv_sum[c] += m.recv_bytes;
      ++count[c];
    }
    for (std::size_t c = 0; c < k; ++c) {
      sizes_seen[c].insert((*sizes)[c]);
      if (count[c] > 0) {
        means[c].push_back({static_cast<double>(n), static_cast<double>((*sizes)[c]),
                            sum[c] / count[c], recv_sum[c] / count[c]});
      }
    }
  }
  const bool sendrecv = slot->kind == EventKind::kSendrecv;
  std::vector<ComponentBytes> laws(k);
  double worst = 0;
  for (std::size_t c = 0; c < k; ++c) {
    if (means[c].size() < 3) return;  // too few counts for a law of its own
    ComponentBytes& law = laws[c];
    law.own_ranks = sizes_seen[c].size() > 1;
    std::vector<regression::Point> sent, received;
    for (const CountMean& m : means[c]) {
      const double x = law.own_ranks ? m.size : m.nprocs;
      sent.push_back({x, m.bytes});
      received.push_back({x, m.recv_bytes});
    }
    const std::string label = what + "component " + std::to_string(c) + ": ";
    SlotModel alone;  // the component's messages as a call of their own
    alone.kind = slot->kind;
    alone.peer = eq.terms[c];
    alone.bytes = FitQuantity(sent, label + (sendrecv ? "bytes sent" : "bytes per message"));
    if (sendrecv) alone.recv_bytes = FitQuantity(received, label + "bytes received");
    double loo = alone.bytes.model.loo_error;
    if (law.own_ranks) {
      double face_loo = 0;
      FitFaceBytes(&alone, sent, sendrecv ? received : std::vector<regression::Point>{}, &face_loo);
      if (alone.face_dim >= 0) loo = face_loo;
    }
    worst = std::max(worst, loo);
    law.bytes = std::move(alone.bytes);
    law.recv_bytes = std::move(alone.recv_bytes);
    law.face_dim = alone.face_dim;
    law.face_line = alone.face_line;
    law.face_bytes = alone.face_bytes;
    law.face_recv_bytes = alone.face_recv_bytes;
    law.face_margin = alone.face_margin;
  }
  if (worst + kComponentBytesGain < slot->bytes.model.loo_error) {
    slot->component_bytes = std::move(laws);
  }
}

// FitFaceBytes again after the slot's equation changed (HarmonizeGrids).
void RefitFaceBytes(SlotModel* slot) {
  slot->face_dim = -1;
  slot->face_line = false;
  slot->face_bytes = slot->face_recv_bytes = 0;
  slot->face_margin = 0;
  if (!slot->bytes.present || slot->bytes_per_occurrence) return;
  const bool sendrecv = slot->kind == EventKind::kSendrecv;
  if (!sendrecv && !IsPointToPoint(slot->kind)) return;
  FitFaceBytes(slot, TrainingPoints(slot->bytes),
               sendrecv && slot->recv_bytes.present ? TrainingPoints(slot->recv_bytes)
                                                    : std::vector<regression::Point>{});
  FitComponentBytes(slot, "a call on components: ");
}

// The share of the within-rank variance of a slot's bursts at one count that every rank
// shares in an occurrence, from the events' occurrence statistics (phases::ComputeStats); -1
// when they were not measured. The occurrence means over R ranks vary with the shared part
// s plus 1/R of the ranks' own part e; the residuals (burst - occurrence mean) with
// (1 - 1/R) of e. So var(e) = residual x R / (R - 1), var(s) = occurrence - var(e) / R.
// Measured on the first occurrences only, the share (not the variance) is what is kept: it
// applies to the spread over all occurrences.
double SharedShare(const std::vector<const phases::ComputeStats*>& events) {
  double occ_m2 = 0, occ_n = 0, res_m2 = 0, res_n = 0, ranks = 0, measured = 0;
  for (const phases::ComputeStats* c : events) {
    if (c->occurrence_ranks < 2) continue;  // one rank: shared and own cannot be told apart
    ++measured;
    occ_m2 += c->occurrence_cpu_ns.m2;
    occ_n += static_cast<double>(c->occurrence_cpu_ns.n - 1);
    res_m2 += c->residual_cpu_ns.m2;
    res_n += static_cast<double>(c->residual_cpu_ns.n - 1);
    ranks += c->occurrence_ranks;
  }
  if (!(occ_n > 0) || !(res_n > 0)) return -1;
  const double r = ranks / measured;
  const double own = res_m2 / res_n * r / (r - 1);
  const double shared = std::max(0.0, occ_m2 / occ_n - own / r);
  return shared + own > 0 ? shared / (shared + own) : 0;
}

// The shape of the ranks' own part of the bursts (SlotModel::cpu_noise_shape): each rank's
// residual bins (phases::ComputeStats::residual_shape) standardized, averaged over the ranks
// bin by bin (the quantiles of a shape that the ranks share), and standardized again. Empty
// when no rank measured one or none has a spread.
std::vector<double> OwnNoiseShape(const std::vector<const phases::ComputeStats*>& events) {
  constexpr std::size_t kBins = phases::kNoiseShapeBins;
  std::vector<double> pooled(kBins, 0.0);
  int ranks = 0;
  for (const phases::ComputeStats* c : events) {
    if (c->occurrence_ranks < 2 || c->residual_shape.size() != kBins) continue;
    double mean = 0, var = 0;
    for (float b : c->residual_shape) mean += b;
    mean /= kBins;
    for (float b : c->residual_shape) var += (b - mean) * (b - mean);
    const double sd = std::sqrt(var / kBins);
    if (!(sd > 0)) continue;
    for (std::size_t j = 0; j < kBins; ++j) pooled[j] += (c->residual_shape[j] - mean) / sd;
    ++ranks;
  }
  if (ranks == 0) return {};
  double mean = 0, var = 0;
  for (double& b : pooled) mean += b /= ranks;
  mean /= kBins;
  for (double b : pooled) var += (b - mean) * (b - mean);
  const double sd = std::sqrt(var / kBins);
  if (!(sd > 0)) return {};
  for (double& b : pooled) b = (b - mean) / sd;
  return pooled;
}

// What the traced messages of a level of a binomial tree rooted at rank 0 say about
// SlotModel::subtree_bytes: per count, the bytes per rank of the subtree each message
// carries when every message of the count gives the same, and the smallest and largest
// subtree (empty when some count does not agree, or the slot is no such level).
struct SubtreeEvidence {
  struct Count {
    double p = 0, unit = 0;
    std::int64_t smallest = 0, largest = 0;
  };
  std::vector<Count> counts;
};

// Per-rank messages of one count agree on their bytes per subtree rank within this fraction.
constexpr double kSubtreeUnitTolerance = 0.005;

// The blocks a dissemination step of `eq` (one bit b) carries at `nprocs` in a run with
// SlotModel::step_blocks: min(2^b, P - 2^b), 0 where 2^b >= P; -1 for another equation.
std::int64_t StepBlocks(const std::optional<patterns::GeneralEquation>& eq, std::int64_t nprocs) {
  if (!eq || eq->family != patterns::Family::kDissemination || eq->all_bits ||
      eq->bits.size() != 1) {
    return -1;
  }
  const std::int64_t b = eq->bits[0].At(patterns::CeilLog2(nprocs));
  if (b < 0 || b >= 62 || (std::int64_t{1} << b) >= nprocs) return 0;
  return std::min(std::int64_t{1} << b, nprocs - (std::int64_t{1} << b));
}

// A repeated block's bytes are a law per occurrence only when that predicts the left-out
// counts better by more than this (a fraction: 0.1 percentage point): a law per message that
// already holds (a pairwise exchange's constant blocks) stays per message.
constexpr double kOccurrenceBytesGain = 1e-3;
// Nor from fewer counts than this: from 3, each left-out count is predicted from 2 by laws
// of 2 parameters, and which of two inexact laws does better is chance (a master's tasks
// from 4, 9, 25 and from 4, 16, 25, checked at 36 and 49: per occurrence, the bytes were
// further off in two of the four checks and closer in two).
constexpr std::size_t kOccurrenceBytesCounts = 4;

// The mean number of partners of `eq` at `nprocs` over the ranks that have any (the messages
// a rank of a repeated block sends per occurrence: SlotModel::bytes_per_occurrence); 0 where
// no rank has one or the count is not one of the equation's. Past kPartnerSamples ranks, the
// mean over that many spread evenly over the ranks (an equation's partners vary along the
// ranks in a few classes: boundaries, a remainder, a root).
constexpr std::int64_t kPartnerSamples = 4096;
double MeanPartners(const patterns::GeneralEquation& eq, std::int64_t nprocs) {
  if (nprocs < 1) return 0;
  try {
    const auto at = eq.At(nprocs);
    const std::int64_t samples = std::min(nprocs, kPartnerSamples);
    double sum = 0, with = 0;
    for (std::int64_t i = 0; i < samples; ++i) {
      const std::int64_t r = samples == nprocs ? i : i * nprocs / samples;
      const std::int64_t k = at.NumDests(r);
      if (k > 0) {
        sum += static_cast<double>(k);
        ++with;
      }
    }
    return with > 0 ? sum / with : 0;
  } catch (const UserError&) {
    return 0;
  }
}

bool IsLowTreeLevel(const std::optional<patterns::GeneralEquation>& eq) {
  return eq && eq->family == patterns::Family::kXorExchange && eq->bits.size() == 1 &&
         !eq->all_bits && eq->bit_field == patterns::BitField::kRank && !eq->folded &&
         (eq->tree_role == patterns::TreeRole::kLowParent ||
          eq->tree_role == patterns::TreeRole::kLowChild);
}

// Builds one slot from its per-count data.
SlotModel BuildSlot(const PhaseModel& phase, std::size_t index, const SlotAcc& acc,
                    const std::vector<SlotCountData>& data, const std::vector<int>& counts,
                    const std::vector<const phases::Signature*>& sigs,
                    const std::vector<std::vector<std::string>>& masks, bool* direction_unknown,
                    SubtreeEvidence* subtree, bool prefer_trees = false,
                    const std::optional<patterns::IndexRule>& tree_root = std::nullopt,
                    bool fold_pairs_first = false, bool dissemination_first = false) {
  SlotModel slot;
  slot.kind = acc.token.kind;
  slot.tag = acc.token.tag;
  slot.sub_comm = acc.token.sub_comm;
  slot.reply = acc.token.reply;
  slot.root_step = acc.token.root_step;
  const bool moving_root = slot.root_step != phases::RootStep::kFixed;
  const std::string label = SlotLabel(phase, index, slot);
  const bool p2p = IsPointToPoint(slot.kind);
  const bool coll = IsCollective(slot.kind);
  const bool rooted = coll && IsRooted(slot.kind);

  std::vector<regression::Point> bytes, recv_bytes, root_bytes, root_recv, cpu, instr, root_cpu;
  int forwards = 0, backwards = 0;  // a moving root: ranks that saw it step +1, -1
  // Repeated blocks: the compute before this slot summed over a rank's iterations; the bytes
  // likewise, over the ranks that sent any, and those ranks' messages per occurrence.
  std::vector<regression::Point> cpu_occ, instr_occ, bytes_occ, recv_occ;
  // Collectives: the largest rank's bytes over the mean, per count (SlotModel::bytes_max_ratio).
  std::vector<double> send_max_ratio, recv_max_ratio;
  std::map<double, double> messages_per_rank;
  bool wildcard_any = false, specific_any = false;
  std::map<std::int32_t, int> requests_seen;
  double polls = 0, polled_events = 0;  // completions: failed tests folded into the call
  double tested = 0;                    // the share of them that was a test that completed, summed
  std::map<std::int32_t, int> tags_seen;
  std::vector<patterns::CommMap> traced_order;  // partners in the order the rank called them
  std::vector<double> spread_between, spread_persistent, spread_within, spread_shared, spread_own;
  // Per class of ranks (mask): its own spread at the largest count that has it.
  std::map<std::string, double> class_own;
  std::vector<double> shape_own;  // the own part's shape at the last count that measured it
  std::vector<double> occ_between, occ_within, occ_shared, occ_own;  // block: per occurrence
  // Messages as a subtree's data (SubtreeEvidence): kept per count (rank, partner, bytes) and
  // read once the partners' equation names the tree's root (subtree_alike: still a candidate).
  const bool subtree_kind = p2p && slot.kind != EventKind::kSendrecv;
  bool subtree_alike = subtree_kind;
  struct SubtreeMessage {
    std::int64_t rank, partner;
    double bytes;
  };
  std::vector<std::vector<SubtreeMessage>> subtree_msgs(counts.size());
  // SlotModel::element_bytes: halved until it divides every traced message size (1 if the
  // call moved none). An all-to-all's sizes are its blocks to each member (the call's bytes
  // over the members, as predict reads them): a total that splits unevenly gives 1.
  std::int64_t element = kLargestElementBytes;
  bool sized = false;
  auto keep_dividing = [&element, &sized](const phases::Stats& sizes, double parts) {
    if (sizes.n == 0) return;
    for (const double total : {sizes.min, sizes.max}) {
      if (!(total > 0)) continue;  // nothing moved (MPI_PROC_NULL, an empty part)
      sized = true;
      const double v = total / parts;
      const auto whole = static_cast<std::int64_t>(v);
      if (static_cast<double>(whole) != v) {
        element = 1;
        return;
      }
      while (element > 1 && whole % element != 0) element /= 2;
    }
  };
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const int n = counts[ci];
    const CommLookup comms(*sigs[ci]);
    patterns::CommMap map, rmap;
    map.nprocs = rmap.nprocs = n;
    map.dests.resize(n);
    rmap.dests.resize(n);
    std::set<std::vector<int>> groups;
    std::set<std::vector<int>> p2p_groups;  // the communicators point-to-point calls are on
    bool p2p_on_world = false;
    double sb = 0, rb = 0, c = 0, ins = 0, rsb = 0, rrb = 0, rc = 0;
    // Per communicator (null: the world), for SlotModel::bytes_max_ratio: its ranks' bytes
    // sent and received, summed and the largest, and how many.
    struct GroupBytes {
      double sent = 0, received = 0, sent_max = 0, received_max = 0;
      int n = 0;
    };
    std::map<const std::vector<std::int32_t>*, GroupBytes> group_bytes;
    int nb = 0, nroot = 0, nins = 0, nall = 0, nranks = 0;
    int ranks_moved = 0;  // ranks with a message counted in sb
    double nrc = 0;       // a moving root's turns (their bursts are pooled: one per turn)
    double others = 0, nothers = 0;  // and the other occurrences', pooled alike
    // For the spread of the bursts: each rank's burst statistics and its class (mask, and in
    // a repeated block the iteration: the first stage's burst is not the last one's).
    struct CpuStat {
      const std::string* mask;
      std::size_t position;
      const phases::Stats* st;
    };
    std::vector<CpuStat> cpu_stats;
    std::vector<const phases::ComputeStats*> occurrence_stats;  // with the shared part
    // Repeated blocks: per rank, the mean and variance of its compute before this slot summed
    // over an occurrence's iterations (the iterations' bursts taken as independent).
    struct RankTotal {
      const std::string* mask;
      double mean = 0, var = 0;
    };
    std::vector<RankTotal> rank_totals;
    for (int r = 0; r < n; ++r) {
      const phases::PhaseEvent* first = data[ci].event_of_rank[r];
      if (!first) continue;
      ++nranks;
      if (phase.block) rank_totals.push_back({&masks[ci][r]});
      std::vector<const phases::PhaseEvent*> all_events{first};
      bool rank_moved = false;
      if (!data[ci].more_of_rank.empty()) {
        const auto& more = data[ci].more_of_rank[static_cast<std::size_t>(r)];
        all_events.insert(all_events.end(), more.begin(), more.end());
      }
      for (std::size_t position = 0; position < all_events.size(); ++position) {
        const phases::PhaseEvent* e = all_events[position];
        ++nall;
        if (e->compute.cpu_ns.n > 0) {
          cpu_stats.push_back({&masks[ci][r], position, &e->compute.cpu_ns});
          if (phase.block) {
            rank_totals.back().mean += e->compute.cpu_ns.mean;
            rank_totals.back().var +=
                e->compute.cpu_ns.m2 / static_cast<double>(e->compute.cpu_ns.n);
          }
        }
        if (e->compute.occurrence_cpu_ns.n > 1) occurrence_stats.push_back(&e->compute);
        c += e->compute.cpu_ns.n > 0 ? e->compute.cpu_ns.mean : 0;
        if (e->compute.instructions.n > 0) {
          ins += e->compute.instructions.mean;
          ++nins;
        }
        if (p2p) {
          if (const auto* members = comms.SubMembers(e->comm)) {
            p2p_groups.insert(std::vector<int>(members->begin(), members->end()));
          } else {
            p2p_on_world = true;
          }
          if (e->peer == kAnySource) {
            wildcard_any = true;
          } else if (e->peer >= 0 && e->peer < n) {
            specific_any = true;
            map.dests[r].push_back(e->peer);
          }
          if (slot.kind == EventKind::kSendrecv && e->recv_peer >= 0 && e->recv_peer < n) {
            rmap.dests[r].push_back(e->recv_peer);
          }
        }
        bool is_root = false;
        if (coll) {
          const auto* members = comms.SubMembers(e->comm);
          if (slot.sub_comm && members) {
            groups.insert(std::vector<int>(members->begin(), members->end()));
          }
          if (rooted && e->peer >= 0) {
            std::int64_t size = n, root_index = e->peer;
            if (slot.sub_comm && members) {
              size = static_cast<std::int64_t>(members->size());
              auto it = std::find(members->begin(), members->end(), e->peer);
              root_index = it == members->end() ? 0 : it - members->begin();
            }
            if (std::find(slot.root_points.begin(), slot.root_points.end(),
                          std::make_pair(size, root_index)) == slot.root_points.end()) {
              slot.root_points.emplace_back(size, root_index);
            }
            is_root = e->peer == r;
          }
        }
        if (IsCompletion(slot.kind)) {
          requests_seen[e->requests]++;
          if (e->polls.n > 0) {
            polls += e->polls.mean;
            ++polled_events;
            tested += static_cast<double>(e->tested.n) / static_cast<double>(e->polls.n);
          }
        }
        if (IsPointToPoint(slot.kind)) tags_seen[e->tag]++;
        if (p2p || coll) {
          double parts = 1;
          if (slot.kind == EventKind::kAlltoall || slot.kind == EventKind::kAlltoallv) {
            const auto* members = comms.SubMembers(e->comm);
            parts = static_cast<double>(members ? members->size() : static_cast<std::size_t>(n));
          }
          keep_dividing(e->bytes, parts);
          keep_dividing(e->recv_bytes, parts);
          keep_dividing(e->root_bytes, parts);
          keep_dividing(e->root_recv_bytes, parts);
        }
        if (moving_root) {  // the rank's turns as the root apart from the others
          if (e->root_bytes.n > 0) {
            rsb += e->root_bytes.mean;
            rrb += e->root_recv_bytes.mean;
            ++nroot;
          }
          if (e->root_cpu_ns.n > 0) {
            rc += e->root_cpu_ns.sum();
            nrc += static_cast<double>(e->root_cpu_ns.n);
          }
          others += e->compute.cpu_ns.sum();
          nothers += static_cast<double>(e->compute.cpu_ns.n);
          const auto* members = comms.SubMembers(e->comm);
          if ((members ? static_cast<int>(members->size()) : n) > 2) {
            ++(e->root_step == phases::RootStep::kPrevious ? backwards : forwards);
          }
        }
        if (is_root) {
          rsb += e->bytes.mean;
          rrb += e->recv_bytes.mean;
          ++nroot;
        } else if ((slot.kind == EventKind::kRecv || slot.kind == EventKind::kIrecv) &&
                   e->peer == kProcNull) {
          // A receive from MPI_PROC_NULL gets nothing (its status counts 0 bytes): averaged
          // in, the other ranks' receives were posted smaller than the messages they get.
        } else if (!moving_root || e->bytes.n > 0 || e->recv_bytes.n > 0) {
          sb += e->bytes.mean;
          rb += e->recv_bytes.mean;
          if (coll) {
            GroupBytes& g = group_bytes[comms.SubMembers(e->comm)];
            g.sent += e->bytes.mean;
            g.received += e->recv_bytes.mean;
            g.sent_max = std::max(g.sent_max, e->bytes.mean);
            g.received_max = std::max(g.received_max, e->recv_bytes.mean);
            ++g.n;
          }
          ++nb;
          rank_moved = true;
          if (subtree_alike) subtree_msgs[ci].push_back({r, e->peer, e->bytes.mean});
          if (p2p) {
            if (slot.rank_messages.empty() || slot.rank_messages.back().first != n) {
              slot.rank_messages.emplace_back(n, std::vector<SlotModel::RankMessage>{});
            }
            slot.rank_messages.back().second.push_back({r, e->bytes.mean, e->recv_bytes.mean});
          }
        }
      }
      if (rank_moved) ++ranks_moved;
    }
    if (p2p) {
      traced_order.push_back(map);
      for (auto& d : map.dests) {
        std::sort(d.begin(), d.end());
        d.erase(std::unique(d.begin(), d.end()), d.end());
      }
      slot.maps.push_back(map);
      if (slot.kind == EventKind::kSendrecv) slot.recv_maps.push_back(rmap);
    }
    // The groups seen at this count, ordered by their first member.
    auto layout_of = [n](const std::set<std::vector<int>>& seen) {
      patterns::CommunicatorLayout layout;
      layout.nprocs = n;
      layout.groups.assign(seen.begin(), seen.end());
      std::sort(layout.groups.begin(), layout.groups.end(),
                [](const auto& a, const auto& b) { return a.front() < b.front(); });
      return layout;
    };
    if (p2p && ci == slot.p2p_layouts.size() && !p2p_on_world && !p2p_groups.empty()) {
      slot.p2p_layouts.push_back(layout_of(p2p_groups));
    }
    if (coll && slot.sub_comm) slot.layouts.push_back(layout_of(groups));
    if (nall == 0) continue;
    const double p = n;
    if (nb > 0) {
      bytes.push_back({p, sb / nb});
      recv_bytes.push_back({p, rb / nb});
      if (coll && !rooted && !moving_root) {
        // The mean over the communicators of each one's largest rank over its mean (groups
        // that move different sizes are not uneven within).
        double sent = 0, received = 0;
        int ngroups = 0;
        for (const auto& [members, g] : group_bytes) {
          if (g.n < 2) continue;
          sent += g.sent > 0 ? g.sent_max * g.n / g.sent : 1.0;
          received += g.received > 0 ? g.received_max * g.n / g.received : 1.0;
          ++ngroups;
        }
        if (ngroups > 0) {
          send_max_ratio.push_back(sent / ngroups);
          recv_max_ratio.push_back(received / ngroups);
        }
      }
    }
    if (nroot > 0) {
      root_bytes.push_back({p, rsb / nroot});
      root_recv.push_back({p, rrb / nroot});
    }
    cpu.push_back({p, c / nall});
    // What the root adds: the panel it factors alone, over the work every rank does before
    // the call (the update, shrinking with the iteration, is in both and cancels).
    if (nrc > 0 && nothers > 0) root_cpu.push_back({p, rc / nrc - others / nothers});
    if (phase.block) {
      cpu_occ.push_back({p, c / nranks});
      if (nins == nall) instr_occ.push_back({p, ins / nranks});
      if (ranks_moved > 0) {
        bytes_occ.push_back({p, sb / ranks_moved});
        recv_occ.push_back({p, rb / ranks_moved});
        messages_per_rank[p] = static_cast<double>(nb) / ranks_moved;
      }
    }
    // Spread of the bursts at this count, relative to their mean: between the ranks' means
    // (around their class's mean: a mesh corner that computes less is a class, not noise;
    // each rank's relative offset weighted by its class mean squared, so that the spread is
    // that of the CPU the slot holds: a class whose bursts are a few hundred ns, varying by
    // 20%, beside one of 740 us varying by 0.3% (a red-black ring's ranks that compute before
    // the other call) is not 13% between ranks), and within a rank over its occurrences.
    if (!cpu_stats.empty() && c > 0) {
      const double mean = c / nall;
      std::map<std::pair<std::string, std::size_t>, std::pair<double, int>> class_sum;
      for (const auto& [mask, position, st] : cpu_stats) {
        auto& cs = class_sum[{*mask, position}];
        cs.first += st->mean;
        ++cs.second;
      }
      double between = 0, class_square = 0, within = 0, occurrences = 0, sampling = 0;
      for (const auto& [mask, position, st] : cpu_stats) {
        const auto& cs = class_sum[{*mask, position}];
        const double class_mean = cs.first / cs.second;
        between += (st->mean - class_mean) * (st->mean - class_mean);
        class_square += class_mean * class_mean;
        within += st->m2;
        occurrences += static_cast<double>(st->n);
        // What the rank's noise alone puts between its mean and its class's: the variance of
        // a mean of n bursts, less the rank's own share in the class mean.
        if (st->n > 1) {
          const auto count = static_cast<double>(st->n);
          sampling += st->m2 / (count * (count - 1)) * (1 - 1.0 / cs.second);
        }
      }
      const double between_square = class_square > 0 ? between / class_square : 0;
      const double sampling_square = class_square > 0 ? sampling / class_square : 0;
      between = std::sqrt(between_square);
      within = occurrences > 0 ? std::sqrt(within / occurrences) / mean : 0;
      spread_between.push_back(between);
      spread_within.push_back(within);
      if (phase.block && !rank_totals.empty()) {
        // The same over an occurrence: what a per-occurrence compute model spreads.
        std::map<std::string, std::pair<double, int>> total_sum;
        double total_mean = 0, var = 0, b2 = 0;
        for (const RankTotal& t : rank_totals) {
          auto& ts = total_sum[*t.mask];
          ts.first += t.mean;
          ++ts.second;
          total_mean += t.mean;
          var += t.var;
        }
        total_mean /= static_cast<double>(rank_totals.size());
        double total_square = 0;  // weighted as the bursts' spread above
        for (const RankTotal& t : rank_totals) {
          const auto& ts = total_sum[*t.mask];
          const double class_mean = ts.first / ts.second;
          b2 += (t.mean - class_mean) * (t.mean - class_mean);
          total_square += class_mean * class_mean;
        }
        const auto k = static_cast<double>(rank_totals.size());
        occ_between.push_back(total_square > 0 ? std::sqrt(b2 / total_square) : 0);
        occ_within.push_back(total_mean > 0 ? std::sqrt(var / k) / total_mean : 0);
      }
      const double shared = SharedShare(occurrence_stats);
      // The part every rank shares in an occurrence moves no rank's mean from another's.
      spread_persistent.push_back(std::sqrt(
          std::max(0.0, between_square - (shared >= 0 ? 1 - shared : 1) * sampling_square)));
      if (shared >= 0) spread_shared.push_back(within * std::sqrt(shared));
      spread_own.push_back(shared >= 0 ? within * std::sqrt(1 - shared) : within);
      // The own part within each class of ranks, relative to the class's own mean burst.
      if (!phase.block) {
        std::map<std::string, std::array<double, 4>> by_class;  // ranks, sum of means, m2, n
        for (const auto& [mask, position, st] : cpu_stats) {
          auto& bc = by_class[*mask];
          bc[0] += 1;
          bc[1] += st->mean;
          bc[2] += st->m2;
          bc[3] += static_cast<double>(st->n);
        }
        for (const auto& [mask, bc] : by_class) {
          const double class_mean = bc[1] / bc[0];
          if (!(class_mean > 0) || !(bc[3] > 0)) continue;
          const double w = std::sqrt(bc[2] / bc[3]) / class_mean;
          class_own[mask] = shared >= 0 ? w * std::sqrt(1 - shared) : w;
        }
      }
      if (std::vector<double> shape = OwnNoiseShape(occurrence_stats); !shape.empty()) {
        shape_own = std::move(shape);
      }
      if (!occ_within.empty() && occ_within.size() == spread_within.size()) {
        const double w = occ_within.back();
        if (shared >= 0) occ_shared.push_back(w * std::sqrt(shared));
        occ_own.push_back(shared >= 0 ? w * std::sqrt(1 - shared) : w);
      }
    }
    if (nins == nall) instr.push_back({p, ins / nins});
  }
  slot.wildcard = p2p && wildcard_any;
  if (slot.wildcard && specific_any) {
    // Some receives named their source, some did not: model all as wildcards (they still
    // match the same sends) rather than guess which ranks name a source elsewhere.
    for (auto& m : slot.maps) m.dests.assign(m.dests.size(), {});
  }
  std::sort(slot.root_points.begin(), slot.root_points.end());
  slot.dest_order = DestOrderOf(traced_order);
  // A sendrecv's sources in their own order (recv_maps are in call order until fitted): a
  // pairwise exchange sends to rank + i and receives from rank - i.
  slot.recv_order =
      slot.kind == EventKind::kSendrecv ? DestOrderOf(slot.recv_maps) : slot.dest_order;
  // The spread between ranks is kept as the median over the counts (robust to one noisy run).
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  slot.cpu_spread_between = median(spread_between);
  slot.cpu_spread_persistent = median(spread_persistent);
  // Uneven collectives: the largest rank's share, where it is 1% or more above the mean.
  for (auto [ratios, out] : {std::pair{&send_max_ratio, &slot.bytes_max_ratio},
                             std::pair{&recv_max_ratio, &slot.recv_bytes_max_ratio}}) {
    const double r = median(*ratios);
    *out = r >= kUnevenBytesRatio ? r : 1.0;
  }
  // Each rank's own part of the within-rank spread at the largest count (it grew with P in
  // every bundled app, e.g. stencil2d's halo burst 0.05 at 9 ranks, 0.14 at 36, so the median
  // of the counts underestimates the stragglers at a larger target: cg 25% too fast at 36
  // from 4-25); the part every rank shares in an occurrence as the median over the counts
  // that measured it (steady with P). Both are measured apart at each count, not one taken
  // as what is left of the other: a burst that is structurally different in a few
  // occurrences (the first iteration's, one after a periodic reduction) makes a large shared
  // spread, and the own part left after subtracting it from the total would be lost in the
  // noise of two nearly equal numbers (stencil2d_f's halo burst: total 0.33, shared 0.32,
  // own 0.08 measured, 0 by subtraction).
  slot.cpu_spread_shared = median(spread_shared);
  slot.cpu_spread_within = spread_own.empty() ? 0.0 : spread_own.back();
  slot.cpu_noise_shape = shape_own;
  int most = 0;
  for (const auto& [tag, times] : tags_seen) {
    if (times > most) {
      most = times;
      slot.tag = tag;
    }
  }
  FitSlotEquations(&slot, label, prefer_trees, tree_root, fold_pairs_first, dissemination_first);

  const std::string what = label + ": ";
  if (slot.kind == EventKind::kSendrecv || coll) {
    // A collective on the world whose bytes are the same at the largest counts keeps them
    // (partners that coincide at small counts, as an MPI_Alltoallv's r+-1 and r+-3 mod P do
    // below 8 ranks); on a sub-communicator they may follow a grid's extents, equal over a
    // few counts (regression::Options::exact_tail_min_counts).
    const bool exact_tail = coll && !slot.sub_comm;
    slot.bytes = FitQuantity(bytes, what + "bytes sent", Precision::kExact, exact_tail);
    slot.recv_bytes =
        FitQuantity(recv_bytes, what + "bytes received", Precision::kExact, exact_tail);
    if (slot.kind == EventKind::kSendrecv) FitFaceBytes(&slot, bytes, recv_bytes);
  } else if (p2p) {
    slot.bytes = FitQuantity(bytes, what + "bytes per message");
    FitFaceBytes(&slot, bytes, {});
  }
  if (subtree) {
    *subtree = {};
    if (subtree_alike && !slot.wildcard && !slot.reply && slot.face_dim < 0 &&
        IsLowTreeLevel(slot.peer)) {
      // Per count: the bytes per rank of the subtree each message carries, counted from the
      // equation's root, when every message of the count gives the same.
      std::vector<SubtreeEvidence::Count> per_count;
      for (std::size_t ci = 0; ci < counts.size() && subtree_alike; ++ci) {
        const std::int64_t n = counts[ci];
        const std::int64_t root = slot.peer->root.At(n);
        double unit_low = 0, unit_high = 0, unit_sum = 0;
        std::int64_t size_low = 0, size_high = 0;
        int units = 0;
        for (const SubtreeMessage& m : subtree_msgs[ci]) {
          const std::int64_t size = SubtreeRanks(m.rank, m.partner, n, root);
          if (size <= 0) {
            subtree_alike = false;
            break;
          }
          const double unit = m.bytes / static_cast<double>(size);
          unit_low = units ? std::min(unit_low, unit) : unit;
          unit_high = units ? std::max(unit_high, unit) : unit;
          size_low = units ? std::min(size_low, size) : size;
          size_high = units ? std::max(size_high, size) : size;
          unit_sum += unit;
          ++units;
        }
        if (!subtree_alike || units == 0) continue;
        if (unit_high - unit_low > kSubtreeUnitTolerance * unit_high) {
          subtree_alike = false;
        } else {
          per_count.push_back({static_cast<double>(n), unit_sum / units, size_low, size_high});
        }
      }
      if (subtree_alike && per_count.size() == bytes.size()) subtree->counts = std::move(per_count);
    }
  }
  if (phase.block && p2p && slot.peer && !slot.wildcard && !slot.reply && !moving_root &&
      slot.face_dim < 0 && !(subtree && !subtree->counts.empty()) && slot.bytes.present &&
      bytes.size() >= kOccurrenceBytesCounts && bytes_occ.size() == bytes.size()) {
    // Per message or per occurrence: whichever predicts the left-out counts better, when the
    // partners' equation gives every count's messages per rank (then a message at N carries
    // the occurrence's bytes over the partners there).
    auto counted = [&messages_per_rank](const patterns::GeneralEquation& eq) {
      for (const auto& [p, messages] : messages_per_rank) {
        if (std::abs(MeanPartners(eq, std::llround(p)) - messages) > 1e-9 * messages) return false;
      }
      return true;
    };
    const bool sendrecv = slot.kind == EventKind::kSendrecv;
    const Quantity occ = FitQuantity(bytes_occ, what + "bytes sent over an occurrence");
    if (occ.present && counted(*slot.peer) && (!slot.recv_peer || counted(*slot.recv_peer)) &&
        occ.model.loo_error + kOccurrenceBytesGain < slot.bytes.model.loo_error) {
      slot.bytes_per_occurrence = true;
      slot.bytes = occ;
      if (sendrecv)
        slot.recv_bytes = FitQuantity(recv_occ, what + "bytes received over an occurrence");
    }
  }
  FitComponentBytes(&slot, what);
  if (rooted) {
    slot.root_bytes = FitQuantity(root_bytes, what + "bytes sent by the root");
    slot.root_recv_bytes = FitQuantity(root_recv, what + "bytes received by the root");
  }
  slot.cpu_ns = FitQuantity(cpu, what + "CPU time before the call (ns)", Precision::kMeasured);
  if (moving_root && slot.root_step != phases::RootStep::kSame) {
    slot.root_step = backwards > forwards ? phases::RootStep::kPrevious : phases::RootStep::kNext;
    *direction_unknown = backwards + forwards == 0;
  }
  if (moving_root) {
    slot.root_cpu_ns = FitQuantity(root_cpu, what + "CPU time the root adds before the call (ns)",
                                   Precision::kMeasured);
  }
  slot.instructions =
      FitQuantity(instr, what + "instructions before the call", Precision::kMeasured);
  if (phase.block && cpu_occ.size() == cpu.size() && cpu.size() >= 3) {
    // Per iteration or per occurrence: whichever predicts the left-out counts better.
    Quantity occ = FitQuantity(cpu_occ, what + "CPU time before the call over an occurrence (ns)",
                               Precision::kMeasured);
    if (occ.present && slot.cpu_ns.present && occ.model.loo_error < slot.cpu_ns.model.loo_error) {
      slot.cpu_per_occurrence = true;
      slot.cpu_ns = occ;
      // Spread of the per-occurrence totals: the iterations' bursts differ by position in
      // the block (the first stage computes, the others combine), which is no noise.
      slot.cpu_spread_between = median(occ_between);
      slot.cpu_spread_persistent = slot.cpu_spread_between;  // not separated per occurrence
      slot.cpu_spread_shared = median(occ_shared);
      slot.cpu_spread_within = occ_own.empty() ? 0.0 : occ_own.back();
      slot.cpu_noise_shape.clear();  // the shape of a sum of the iterations' bursts: not measured
      slot.instructions =
          FitQuantity(instr_occ, what + "instructions before the call over an occurrence",
                      Precision::kMeasured);
    }
  }
  // Per class of ranks (the calls of the phase they make).
  struct Acc {
    double cpu = 0, ins = 0;
    int n = 0, nins = 0;
  };
  std::map<std::string, std::map<int, Acc>> by_mask;  // mask -> count index -> sums
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    for (int r = 0; r < counts[ci]; ++r) {
      const phases::PhaseEvent* e = data[ci].event_of_rank[r];
      if (!e) continue;
      Acc& a = by_mask[masks[ci][r]][static_cast<int>(ci)];
      a.cpu += e->compute.cpu_ns.n > 0 ? e->compute.cpu_ns.mean : 0;
      ++a.n;
      if (e->compute.instructions.n > 0) {
        a.ins += e->compute.instructions.mean;
        ++a.nins;
      }
    }
  }
  if (by_mask.size() > 1 && !slot.cpu_per_occurrence) {  // classes: per-iteration values
    for (const auto& [mask, per_count] : by_mask) {
      std::vector<regression::Point> cp, ip;
      for (const auto& [ci, a] : per_count) {
        cp.push_back({double(counts[ci]), a.cpu / a.n});
        if (a.nins == a.n) ip.push_back({double(counts[ci]), a.ins / a.nins});
      }
      SlotModel::ClassCompute cc;
      cc.mask = mask;
      cc.cpu_ns = FitQuantity(cp, what + "CPU time before the call (ns), ranks " + mask,
                              Precision::kMeasured);
      cc.instructions = FitQuantity(ip, what + "instructions before the call, ranks " + mask,
                                    Precision::kMeasured);
      if (slot.cpu_ns.present) {
        const RelativeCpu rel = ClassRelativeCpu(slot.cpu_ns, cpu, cp);
        // Seen at fewer than 3 counts: no law of its own. Seen at more: the slot's law times
        // the class's ratio to it when that predicts the class's left-out counts better than
        // its own law, or when its own series follows no law (kNoLawLooError) but the slot's
        // does. A class left with the median of its traced values while the others follow
        // the slot's law would stand apart from them at the target by whatever the counts'
        // noise left in that median (a burst that moves between neighbouring calls from one
        // count to the next: PETSc's halo waits).
        const double own = std::max(cc.cpu_ns.model.loo_error, kMeasuredNoiseFloor);
        const bool no_law = cc.cpu_ns.model.loo_error > kNoLawLooError &&
                            slot.cpu_ns.model.loo_error <= kNoLawLooError;
        if (rel.ratio > 0 && (cp.size() < 3 || rel.loo_error < own || no_law)) {
          cc.cpu_relative = rel.ratio;
        }
      }
      if (auto it = class_own.find(mask); it != class_own.end()) cc.spread_within = it->second;
      slot.class_compute.push_back(std::move(cc));
    }
  }
  // Bursts that follow no law the traces support keep their median (not in repeated
  // blocks, whose per-iteration bursts differ by position, not by noise).
  if (!phase.block) {
    UnlessSupported(&slot.cpu_ns);
    UnlessSupported(&slot.instructions);
    for (auto& cc : slot.class_compute) {
      UnlessSupported(&cc.cpu_ns);
      UnlessSupported(&cc.instructions);
    }
  }

  if (IsCompletion(slot.kind)) {
    slot.polled = polled_events > 0 && tested / polled_events >= 0.5;
    slot.polls = polled_events > 0 ? polls / polled_events : 0;
    int best = 0;
    for (const auto& [k, times] : requests_seen) {
      if (times > best) {
        best = times;
        slot.requests = k;
      }
    }
  }
  if ((p2p || coll) && sized) slot.element_bytes = element;
  return slot;
}

// An equation of a grid family (a stencil, groups on the grid, a transpose).
bool OnGrid(const std::optional<patterns::GeneralEquation>& eq) {
  return eq &&
         (eq->family == patterns::Family::kStencil || eq->family == patterns::Family::kGroupAll ||
          eq->family == patterns::Family::kTranspose);
}

// Puts the grid-based equations `eqs` (each with its list of fits, `options`, in preference
// order) on one grid: the first (in the first equation's order) on which every one of them
// fits and `accept` takes each one's equation there (the first on that grid in its list).
// The other grids every one fits on and `accept` takes are kept as rivals (as FitTraced
// keeps them: the same family and as many offsets, at most 3). Returns that grid, or nothing
// (and changes nothing) when there is none.
using AcceptOnGrid = std::function<bool(std::size_t, const patterns::GeneralEquation&)>;
std::optional<patterns::GridRule> PutOnOneGrid(
    const std::vector<std::optional<patterns::GeneralEquation>*>& eqs,
    const std::vector<std::vector<patterns::GeneralEquation>>& options,
    const AcceptOnGrid& accept) {
  auto on_grid = [&](const patterns::GridRule& grid) {
    std::vector<const patterns::GeneralEquation*> pick;
    for (std::size_t i = 0; i < eqs.size(); ++i) {
      const patterns::GeneralEquation* found = nullptr;
      for (const auto& o : options[i]) {
        if (OnGrid(o) && o.grid == grid) {
          found = &o;
          break;
        }
      }
      if (!found || !accept(i, *found)) return std::vector<const patterns::GeneralEquation*>{};
      pick.push_back(found);
    }
    return pick;
  };
  std::vector<patterns::GridRule> seen;
  for (const auto& first : options[0]) {
    if (!OnGrid(first) || std::find(seen.begin(), seen.end(), first.grid) != seen.end()) {
      continue;
    }
    seen.push_back(first.grid);
    const std::vector<const patterns::GeneralEquation*> pick = on_grid(first.grid);
    if (pick.empty()) continue;
    for (std::size_t i = 0; i < eqs.size(); ++i) *eqs[i] = *pick[i];
    for (const auto& other : options[0]) {
      if (!OnGrid(other) || std::find(seen.begin(), seen.end(), other.grid) != seen.end()) {
        continue;
      }
      seen.push_back(other.grid);
      const std::vector<const patterns::GeneralEquation*> there = on_grid(other.grid);
      for (std::size_t i = 0; i < there.size(); ++i) {
        patterns::GeneralEquation& eq = **eqs[i];
        if (eq.rivals.size() >= 3 || there[i]->family != eq.family ||
            there[i]->offsets.size() != eq.offsets.size()) {
          continue;
        }
        patterns::GeneralEquation rival = *there[i];
        rival.alternatives.clear();
        rival.rivals.clear();
        eq.rivals.push_back(std::move(rival));
      }
    }
    return first.grid;
  }
  return std::nullopt;
}

// The slots of one phase live on one process grid. When the traced counts fit several grids
// (4, 9, 25 are squares and also MPI_Dims_create(P, 3) grids with one extent 1), each slot's
// own first choice may differ, and a halo exchange would extrapolate on two grids at once. So
// when the slots disagree, the first grid (in the first slot's preference order) on which
// every grid-based equation of the phase fits is used for all of them, and the other grids
// every one fits on are their rivals there, so that predict says where they part (HPCG traced
// at powers of two only fits MPI_Dims_create's grid and its own, which part at 12, 24, 96).
void HarmonizeGrids(PhaseModel* pm) {
  std::vector<std::optional<patterns::GeneralEquation>*> eqs;
  std::vector<const std::vector<patterns::CommMap>*> maps;
  for (SlotModel& s : pm->slots) {
    if (OnGrid(s.peer)) {
      eqs.push_back(&s.peer);
      maps.push_back(&s.maps);
    }
    if (OnGrid(s.recv_peer)) {
      eqs.push_back(&s.recv_peer);
      maps.push_back(&s.recv_maps);
    }
  }
  if (eqs.size() < 2) return;
  bool agree = true;
  for (const auto* eq : eqs) agree = agree && (*eq)->grid == (*eqs[0])->grid;
  if (agree) return;
  std::vector<std::vector<patterns::GeneralEquation>> options;
  for (const auto* m : maps) options.push_back(patterns::AllFittingEquations(*m));
  if (!PutOnOneGrid(eqs, options,
                    [](std::size_t, const patterns::GeneralEquation&) { return true; })) {
    return;
  }
  // A face is measured against the grid's dimensions: the equation changed, so does the
  // dimension a slot exchanges along (a 2-D fit's "dimension 1" is the 3-D grid's 2).
  for (SlotModel& s : pm->slots) RefitFaceBytes(&s);
}

// Whether a slot's face, edge or line law gave its traced counts different factors (the
// grid's extents it follows changed between them).
bool FaceFactorChanges(const SlotModel& s) {
  std::optional<double> first;
  for (const auto& pt : s.bytes.model.training) {
    const double f = FaceFactor(*s.peer, s.face_dim, static_cast<std::int64_t>(pt.p), s.face_line,
                                s.face_margin);
    if (!first) {
      first = f;
    } else if (f != *first) {
      return true;
    }
  }
  return false;
}

// The slot's bytes back to its law in P.
void DropFaceLaw(SlotModel* s) {
  s->face_dim = -1;
  s->face_line = false;
  s->face_bytes = s->face_recv_bytes = 0;
  s->face_margin = 0;
}

// A line law (bytes = c / the extent along the exchange's own dimension) whose extent was the
// same at every traced count fits as well as the constant the traces show: a 3-D halo's 64 B
// along a dimension that always had 2 ranks. It is kept only when a call of the application
// follows a line whose extent did change (a code that splits vectors along its rows, the
// same way along every dimension); else such slots use their law in P.
void DropUnsupportedLines(std::vector<PhaseModel>* phases) {
  auto line = [](const SlotModel& s) { return s.face_dim >= 0 && s.face_line && s.peer; };
  for (const PhaseModel& pm : *phases) {
    for (const SlotModel& s : pm.slots) {
      if (line(s) && FaceFactorChanges(s)) return;
    }
  }
  for (PhaseModel& pm : *phases) {
    for (SlotModel& s : pm.slots) {
      if (line(s)) DropFaceLaw(&s);
    }
  }
}

// An edge's law (a face law of a call crossing several dimensions, CrossedDims) whose factor
// was the same at every traced count fits as well as the constant the traces show: a
// 27-point halo traced at 8, 12 and 18 ranks has 2 ranks along x at each, and its edges
// across y and z send 1/2 of the block's x extent there, which a halo of fixed messages
// sends too. It is kept only when a face or edge of the application follows its grid where
// the factor did change (the halo's faces shrink with the block); else such slots use their
// law in P.
void DropUnsupportedEdges(std::vector<PhaseModel>* phases) {
  auto face = [](const SlotModel& s) { return s.face_dim >= 0 && !s.face_line && s.peer; };
  for (const PhaseModel& pm : *phases) {
    for (const SlotModel& s : pm.slots) {
      if (face(s) && FaceFactorChanges(s)) return;
    }
  }
  for (PhaseModel& pm : *phases) {
    for (SlotModel& s : pm.slots) {
      if (face(s) && CrossedDims(*s.peer).size() > 1) DropFaceLaw(&s);
    }
  }
}

// The first of the next 8 counts above the largest traced one (up to 8 x it) where both `eq`
// and `rule` exist at which `eq` sends outside the caller's group (ranks sampled as Disagree
// does); 0 if none.
std::int64_t FirstCountOutsideGroups(const patterns::GeneralEquation& eq,
                                     const patterns::CommunicatorRule& rule) {
  if (eq.traced_counts.empty()) return 0;
  const std::int64_t largest = *std::max_element(eq.traced_counts.begin(), eq.traced_counts.end());
  constexpr int kCounts = 8;  // the next counts where both exist, up to 8 x the largest
  int checked = 0;
  for (std::int64_t n = largest + 1; n <= 8 * largest && checked < kCounts; ++n) {
    if (!eq.IsValidCount(n) || !rule.valid.IsValid(n)) continue;
    ++checked;
    const auto at = eq.At(n);
    const auto groups = rule.At(n);
    const std::int64_t step = n <= patterns::kDisagreeRanks ? 1 : n / patterns::kDisagreeRanks;
    for (std::int64_t r = 0; r < n; r += step) {
      const std::int64_t g = groups.GroupIndex(r);
      if (g < 0) continue;
      for (std::int64_t d : at.Dests(r)) {
        if (groups.GroupIndex(d) != g) return n;
      }
    }
  }
  return 0;
}

// A collective of another phase of the run (ConfineToCommunicators' evidence when the phase
// has none of its own): its phase's index and the call.
struct OutsideCollective {
  int phase = -1;
  const SlotModel* slot = nullptr;
};

// A collective made on sub-communicators whose groups hold every traced pair of `maps`: at
// every count the caller and its partner are in one group, and there are two groups or
// more. A code that computes its partners in world ranks (each component of a coupled model
// its own neighbours) still keeps them in its component, and the component's own
// collectives (a norm, a residual) say which ranks those are. The phase's own collectives
// first, then those of the run's other phases (`outside`: a convergence check every few
// iterations is a phase of its own, apart from the exchanges it checks). {-1, nullptr} when
// none does; the phase is -1 for one of the phase's own.
OutsideCollective HoldingCollective(const PhaseModel& pm,
                                    const std::vector<patterns::CommMap>& maps,
                                    const std::vector<OutsideCollective>& outside) {
  auto holds = [&maps](const SlotModel& c) {
    if (!IsCollective(c.kind) || !c.sub_comm || !c.communicator ||
        c.layouts.size() != maps.size() || maps.empty()) {
      return false;
    }
    for (std::size_t i = 0; i < maps.size(); ++i) {
      const patterns::CommunicatorLayout& layout = c.layouts[i];
      const patterns::CommMap& map = maps[i];
      if (layout.nprocs != map.nprocs || layout.groups.size() < 2) return false;
      std::vector<int> group(static_cast<std::size_t>(map.nprocs), -1);
      for (std::size_t g = 0; g < layout.groups.size(); ++g) {
        for (int r : layout.groups[g]) {
          if (r >= 0 && r < map.nprocs) group[static_cast<std::size_t>(r)] = static_cast<int>(g);
        }
      }
      for (std::size_t src = 0; src < map.dests.size(); ++src) {
        for (int d : map.dests[src]) {
          if (d < 0 || d >= map.nprocs || group[src] < 0 ||
              group[src] != group[static_cast<std::size_t>(d)]) {
            return false;
          }
        }
      }
    }
    return true;
  };
  for (const SlotModel& c : pm.slots) {
    if (holds(c)) return {-1, &c};
  }
  for (const OutsideCollective& o : outside) {
    if (o.slot && o.phase != pm.index && holds(*o.slot)) return o;
  }
  return {};
}

// Point-to-point calls made on a sub-communicator have their partners in the caller's group.
// When the traced counts fit a phase's exchanges on several grids, that can tell them apart:
// a world split in two halves, each with a periodic MPI_Dims_create(P/2, 2) grid of its own
// ranks, is also an MPI_Dims_create(P, 3) grid at 4 to 16 ranks (the same extents), but at 24
// that grid has a plane that straddles the halves. The communicator's rule is fitted from its
// groups at the traced counts; a grid-based equation that sends outside the caller's group at
// one of the next counts where both exist is the wrong grid, and the first grid (in the first
// side's order of fits) on which every grid-based equation of the phase fits and stays inside
// its communicator is taken instead, and a warning says so. Calls made on the world take the
// groups of a collective of the phase, or else of another phase (`outside`), instead when
// those hold every traced pair (HoldingCollective). Nothing changes when no such grid exists,
// or when the calls are on the world (or a copy of it) with no such collective, or their
// communicators follow no rule.
void ConfineToCommunicators(PhaseModel* pm, const std::vector<OutsideCollective>& outside,
                            std::vector<std::string>* warnings) {
  std::vector<std::optional<patterns::GeneralEquation>*> eqs;
  std::vector<const std::vector<patterns::CommMap>*> maps;
  std::vector<std::optional<patterns::CommunicatorRule>> rules;  // per equation
  // Per equation: the collective whose communicators are the evidence (calls on the world),
  // or none (the calls' own communicators).
  std::vector<OutsideCollective> through;
  bool any_rule = false;
  for (SlotModel& s : pm->slots) {
    if (!OnGrid(s.peer) && !OnGrid(s.recv_peer)) continue;
    std::optional<patterns::CommunicatorRule> rule;
    OutsideCollective collective;
    if (!s.p2p_layouts.empty() && s.p2p_layouts.size() == s.maps.size()) {
      try {
        rule = patterns::FitCommunicators(s.p2p_layouts);
      } catch (const UserError&) {
        rule.reset();  // communicators that follow no rule say nothing about the grid
      }
    } else if (s.p2p_layouts.empty()) {
      collective = HoldingCollective(*pm, s.maps, outside);
      if (collective.slot) rule = *collective.slot->communicator;
    }
    any_rule = any_rule || rule.has_value();
    if (OnGrid(s.peer)) {
      eqs.push_back(&s.peer);
      maps.push_back(&s.maps);
      rules.push_back(rule);
      through.push_back(collective);
    }
    if (OnGrid(s.recv_peer)) {
      eqs.push_back(&s.recv_peer);
      maps.push_back(&s.recv_maps);
      rules.push_back(rule);
      through.push_back(collective);
    }
  }
  if (!any_rule) return;
  // The first equation that leaves its groups, and from which count.
  std::size_t leaving = eqs.size();
  std::int64_t leaves_at = 0;
  for (std::size_t i = 0; i < eqs.size() && leaving == eqs.size(); ++i) {
    if (!rules[i]) continue;
    leaves_at = FirstCountOutsideGroups(**eqs[i], *rules[i]);
    if (leaves_at > 0) leaving = i;
  }
  if (leaving == eqs.size()) return;
  const patterns::GridRule old_grid = (*eqs[leaving])->grid;
  std::vector<std::vector<patterns::GeneralEquation>> options;
  for (const auto* m : maps) options.push_back(patterns::AllFittingEquations(*m, true));
  const std::optional<patterns::GridRule> grid =
      PutOnOneGrid(eqs, options, [&](std::size_t i, const patterns::GeneralEquation& eq) {
        return !rules[i] || FirstCountOutsideGroups(eq, *rules[i]) == 0;
      });
  if (!grid) return;
  for (SlotModel& s : pm->slots) RefitFaceBytes(&s);
  const patterns::CommunicatorRule& rule = *rules[leaving];
  const std::string groups = rule.name.empty() ? rule.Describe() : rule.name;
  const OutsideCollective& by = through[leaving];
  const std::string whose = by.phase < 0 ? "its " : "phase " + std::to_string(by.phase) + "'s ";
  const std::string evidence =
      by.slot ? "are made on the world, but at every traced count each partner is in the "
                "caller's group of the sub-communicators " +
                    whose + std::string(EventKindName(by.slot->kind)) + " runs on (" + groups + ")"
              : "are made on sub-communicators (" + groups +
                    ") and their partners are members of the caller's";
  warnings->push_back("phase " + std::to_string(pm->index) + ": its point-to-point calls " +
                      evidence + "; the traced counts fit them as well on a " +
                      old_grid.Describe() + ", which would send outside them from " +
                      std::to_string(leaves_at) + " ranks, so the model takes a " +
                      grid->Describe() + ", on which they stay inside");
}

// A pairwise exchange (partner = rank XOR 2^b) in a phase whose other partners all lie on one
// grid, when it also fits a stencil on a grid every one of them fits too: a 3-D halo traced
// at 8, 12 and 18 ranks has 2 ranks along its fastest dimension at each, where the neighbour
// at +-1 is rank XOR 1. The exchange is the grid's (one call among the halo's 26); as XOR 1
// it would pair the wrong ranks at 27 (3 x 3 x 3). The phase's own grid is tried first; else
// the first grid (in the exchange's order of fits) on which every grid-based equation of the
// phase fits as well: PETSc's 3-D DMDA at 8, 12, 18 ranks (2 ranks along x at each) fitted a
// 2-D grid with neighbours at +-2 along its rows, and XOR 1 for x; on the 3-D grid every one
// of its neighbours is +-1 along a dimension, as at 27, where the 2-D fit had 26% of the
// peers right. Taken only when the phase has a grid (at least two grid-based equations, all
// on one).
void JoinPhaseGrid(PhaseModel* pm) {
  struct Side {
    std::optional<patterns::GeneralEquation>* eq;
    const std::vector<patterns::CommMap>* maps;
  };
  std::vector<Side> on_grid, xor_sides;
  for (SlotModel& s : pm->slots) {
    for (const Side side : {Side{&s.peer, &s.maps}, Side{&s.recv_peer, &s.recv_maps}}) {
      if (OnGrid(*side.eq)) {
        if (!on_grid.empty() && !((*side.eq)->grid == (*on_grid.front().eq)->grid)) return;
        on_grid.push_back(side);
      } else if (*side.eq && (*side.eq)->family == patterns::Family::kXorExchange &&
                 !side.maps->empty()) {
        xor_sides.push_back(side);
      }
    }
  }
  if (on_grid.size() < 2 || xor_sides.empty()) return;
  // Whether the phase's stencils wrap around along the dimensions they exchange along: all
  // (1), none (0) or some (-1). At 2 ranks along a dimension a torus +1 and an open mesh -1 /
  // +1 (each rank has one of the two there) are both rank XOR 1; the phase's other exchanges
  // say which: PETSc's DMDA is open, and its x exchanges are two calls, -x then +x, that the
  // ranks inside make both once there are 3 ranks along x.
  int wraps = -2;
  for (const Side& side : on_grid) {
    const patterns::GeneralEquation& eq = **side.eq;
    if (eq.family != patterns::Family::kStencil) continue;
    for (const auto& o : eq.offsets) {
      for (std::size_t d = 0; d < o.size() && d < eq.periodic.size(); ++d) {
        if (o[d] == 0) continue;
        const int w = eq.periodic[d] ? 1 : 0;
        wraps = wraps == -2 ? w : (wraps == w ? w : -1);
      }
    }
  }
  auto wraps_like_phase = [&](const patterns::GeneralEquation& o) {
    if (wraps < 0) return true;
    for (const auto& off : o.offsets) {
      for (std::size_t d = 0; d < off.size() && d < o.periodic.size(); ++d) {
        if (off[d] != 0 && (o.periodic[d] ? 1 : 0) != wraps) return false;
      }
    }
    return true;
  };
  // The stencil each XOR side fits on `grid` (one that wraps as the phase does first), or
  // nullopt.
  auto stencil_on =
      [&](const std::vector<patterns::GeneralEquation>& fits,
          const patterns::GridRule& grid) -> std::optional<patterns::GeneralEquation> {
    std::optional<patterns::GeneralEquation> any;
    for (const patterns::GeneralEquation& o : fits) {
      if (o.family != patterns::Family::kStencil || !(o.grid == grid)) continue;
      if (wraps_like_phase(o)) return o;
      if (!any) any = o;
    }
    return any;
  };
  std::vector<std::vector<patterns::GeneralEquation>> xor_fits;
  for (const Side& side : xor_sides) xor_fits.push_back(patterns::AllFittingEquations(*side.maps));
  std::vector<patterns::GridRule> grids = {(*on_grid.front().eq)->grid};
  for (const patterns::GeneralEquation& o : xor_fits.front()) {
    if (o.family == patterns::Family::kStencil &&
        std::find(grids.begin(), grids.end(), o.grid) == grids.end()) {
      grids.push_back(o.grid);
    }
  }
  // The grid-based sides' own fits, found once, when a grid other than the phase's is tried.
  std::vector<std::vector<patterns::GeneralEquation>> grid_fits;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    std::vector<patterns::GeneralEquation> moved_xor;
    for (const auto& fits : xor_fits) {
      if (auto o = stencil_on(fits, grids[g])) moved_xor.push_back(*o);
    }
    if (moved_xor.size() != xor_sides.size()) continue;
    std::vector<patterns::GeneralEquation> moved_grid;
    if (g > 0) {  // every grid-based equation of the phase moves along
      if (grid_fits.empty()) {
        for (const Side& side : on_grid) {
          grid_fits.push_back(patterns::AllFittingEquations(*side.maps));
        }
      }
      for (const auto& fits : grid_fits) {
        for (const patterns::GeneralEquation& o : fits) {
          if (OnGrid(o) && o.grid == grids[g]) {
            moved_grid.push_back(o);
            break;
          }
        }
      }
      if (moved_grid.size() != on_grid.size()) continue;
    }
    for (std::size_t i = 0; i < xor_sides.size(); ++i) *xor_sides[i].eq = moved_xor[i];
    for (std::size_t i = 0; i < moved_grid.size(); ++i) *on_grid[i].eq = moved_grid[i];
    for (SlotModel& s : pm->slots) RefitFaceBytes(&s);
    return;
  }
}

// One application, one process grid, also for its exchanges by bit: a pairwise exchange with
// rank XOR 2^b counted on the whole rank that is also bit b of the row (column) index, in
// phases whose other exchanges count their bits in the rows (NAS CG: its row reductions
// exchange with bit 0 of the rank, which is bit 0 of the column index at every count, and
// with the column index's bit 1 from 8 ranks on) counts it in the rows too. The partners are
// the same at every count; the row's extent is what its messages are a share of (a vector
// split over the ranks of a row: 8 N / 2^ceil(log2(P)/2) bytes), which the line law of
// FitFaceBytes needs. The field most exchanges of `phases` count in is taken; slots that
// move have their face or line law fitted again.
void JoinXorFields(const std::vector<PhaseModel*>& phases) {
  auto is_xor = [](const std::optional<patterns::GeneralEquation>& eq) {
    return eq && eq->family == patterns::Family::kXorExchange;
  };
  int rows = 0, columns = 0;
  for (const PhaseModel* pm : phases) {
    for (const SlotModel& s : pm->slots) {
      for (const auto* eq : {&s.peer, &s.recv_peer}) {
        if (!is_xor(*eq)) continue;
        rows += (*eq)->bit_field == patterns::BitField::kLowHalf;
        columns += (*eq)->bit_field == patterns::BitField::kHighHalf;
      }
    }
  }
  if (rows + columns == 0) return;
  const patterns::BitField field =
      rows >= columns ? patterns::BitField::kLowHalf : patterns::BitField::kHighHalf;
  for (PhaseModel* pm : phases) {
    for (SlotModel& s : pm->slots) {
      bool moved = false;
      for (const auto& [eq, maps] :
           {std::pair{&s.peer, &s.maps}, std::pair{&s.recv_peer, &s.recv_maps}}) {
        if (!is_xor(*eq) || (*eq)->bit_field != patterns::BitField::kRank || maps->empty()) {
          continue;
        }
        for (const patterns::GeneralEquation& o : patterns::AllFittingEquations(*maps)) {
          if (o.family == patterns::Family::kXorExchange && o.bit_field == field &&
              o.all_bits == (*eq)->all_bits && o.bits.size() == (*eq)->bits.size()) {
            *eq = o;
            moved = true;
            break;
          }
        }
      }
      if (moved) RefitFaceBytes(&s);
    }
  }
}

// One application, one process grid: a phase whose grid-based equations fit another grid
// than the one most of the application's grid-based equations use (a phase of a single
// irecv along the third dimension of LAMMPS's {d0, d1, 3} grid at 36, 45, 48 ranks also
// fits a 3 x (P/3) grid, whose valid counts, multiples of 3, then refused 64) is moved to
// that grid when every one of its grid-based equations fits it there too.
void HarmonizeGridsAcrossPhases(std::vector<PhaseModel>* phases) {
  std::vector<std::pair<patterns::GridRule, int>> votes;  // in the order first seen
  for (const PhaseModel& pm : *phases) {
    for (const SlotModel& s : pm.slots) {
      for (const auto* eq : {&s.peer, &s.recv_peer}) {
        if (!OnGrid(*eq)) continue;
        auto it = std::find_if(votes.begin(), votes.end(),
                               [&](const auto& v) { return v.first == (*eq)->grid; });
        if (it == votes.end()) {
          votes.emplace_back((*eq)->grid, 1);
        } else {
          ++it->second;
        }
      }
    }
  }
  if (votes.size() < 2) return;
  const auto top = std::max_element(
      votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const patterns::GridRule& grid = top->first;
  for (PhaseModel& pm : *phases) {
    std::vector<
        std::pair<std::optional<patterns::GeneralEquation>*, const std::vector<patterns::CommMap>*>>
        sides;
    bool elsewhere = false;
    for (SlotModel& s : pm.slots) {
      if (OnGrid(s.peer)) sides.emplace_back(&s.peer, &s.maps);
      if (OnGrid(s.recv_peer)) sides.emplace_back(&s.recv_peer, &s.recv_maps);
    }
    for (const auto& side : sides) elsewhere = elsewhere || !((*side.first)->grid == grid);
    if (!elsewhere) continue;
    std::vector<patterns::GeneralEquation> moved;
    for (const auto& side : sides) {
      for (const patterns::GeneralEquation& o : patterns::AllFittingEquations(*side.second)) {
        if (OnGrid(o) && o.grid == grid) {
          moved.push_back(o);
          break;
        }
      }
    }
    if (moved.size() != sides.size()) continue;
    for (std::size_t i = 0; i < sides.size(); ++i) *sides[i].first = moved[i];
    for (SlotModel& s : pm.slots) RefitFaceBytes(&s);
  }
}

// Pending requests before each slot of one rank's occurrence; decides "all pending".
void DecideCompletions(PhaseBuild* build, const std::vector<int>& counts) {
  auto& slots = build->model.slots;
  std::vector<bool> all_ok(slots.size(), true);
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    for (int r = 0; r < counts[ci]; ++r) {
      std::int64_t pending = 0;
      for (std::size_t s = 0; s < slots.size(); ++s) {
        const phases::PhaseEvent* e = build->data[s][ci].event_of_rank[r];
        if (!e) continue;
        if (CreatesRequest(e->kind)) ++pending;
        if (IsCompletion(e->kind)) {
          if (e->requests != pending) all_ok[s] = false;
          pending = std::max<std::int64_t>(0, pending - e->requests);
        }
      }
    }
  }
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (IsCompletion(slots[s].kind)) slots[s].all_pending = all_ok[s];
  }
  // A polled completion, or a waitsome (it returns however many requests have completed),
  // cuts the work around it where the messages happened to arrive: its burst and the next
  // one's vary from one occurrence to the next and from rank to rank by that cut, not by
  // the work (their sum is the same), and drawn as noise the cut made the synthesized ranks
  // wait for each other (a ring overlapped with polling: 24% slow; receives unpacked as
  // MPI_Waitsome returns them: 15%). The two bursts keep their means and draw no spread.
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].polled && slots[s].kind != EventKind::kWaitsome) continue;
    for (SlotModel* m : {&slots[s], &slots[(s + 1) % slots.size()]}) {
      m->cpu_spread_between = m->cpu_spread_within = m->cpu_spread_shared = 0;
      m->cpu_spread_persistent = 0;
      m->cpu_noise_shape.clear();
    }
  }
}

bool SameSets(const std::vector<bool>& a, const std::vector<bool>& b) { return a == b; }

// A point-to-point slot's tag is the one its calls carry most often, counted where the
// partner tells the calls apart: on a rank where another slot of the same kind has the same
// partner (the two neighbours along a grid dimension of 2 ranks are one rank), the
// alignment cannot tell which call is which and may put the other slot's call here, whose
// tag would then vote for the other slot's tag (and a send and its receive, each voting
// alone, would carry different tags at a count where they are told apart). Counted over
// every call when no rank tells them apart. Ties go to the smaller tag. Repeated blocks
// keep the tags BuildSlot voted over all their iterations.
void DecideTags(PhaseBuild* build, const std::vector<int>& counts) {
  auto& slots = build->model.slots;
  if (build->model.block) return;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (!IsPointToPoint(slots[s].kind)) continue;
    std::map<std::int32_t, int> apart, all;
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      for (int r = 0; r < counts[ci]; ++r) {
        const phases::PhaseEvent* e = build->data[s][ci].event_of_rank[r];
        if (!e) continue;
        ++all[e->tag];
        bool shared = false;
        for (std::size_t t = 0; t < slots.size() && !shared; ++t) {
          if (t == s || slots[t].kind != slots[s].kind) continue;
          const phases::PhaseEvent* o = build->data[t][ci].event_of_rank[r];
          shared = o != nullptr && o->peer == e->peer;
        }
        if (!shared) ++apart[e->tag];
      }
    }
    const auto& votes = apart.empty() ? all : apart;
    int most = 0;
    for (const auto& [tag, times] : votes) {
      if (times > most) {
        most = times;
        slots[s].tag = tag;
      }
    }
  }
}

// Chooses each slot's presence rule (see Presence) from the traced presence sets.
void DecidePresence(PhaseBuild* build, const std::vector<int>& counts) {
  auto& slots = build->model.slots;
  const std::size_t ns = slots.size();
  // Traced presence per slot and count.
  std::vector<std::vector<std::vector<bool>>> traced(ns);
  for (std::size_t s = 0; s < ns; ++s) {
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      traced[s].push_back(PresentSet(build->data[s][ci]));
    }
  }
  auto all_true = [](const std::vector<bool>& v) {
    return std::all_of(v.begin(), v.end(), [](bool b) { return b; });
  };
  auto matches = [&](std::size_t s, const std::function<std::vector<bool>(int)>& rule) {
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      if (!SameSets(traced[s][ci], rule(counts[ci]))) return false;
    }
    return true;
  };
  // First the slots whose rule does not depend on other slots.
  std::vector<bool> decided(ns, false);
  for (std::size_t s = 0; s < ns; ++s) {
    SlotModel& slot = slots[s];
    bool every = true;
    for (const auto& v : traced[s]) every = every && all_true(v);
    if (every) {
      slot.presence = Presence::kAll;
      decided[s] = true;
      continue;
    }
    if ((slot.peer || slot.recv_peer) && matches(s, [&](int n) { return PartnerSet(slot, n); })) {
      slot.presence = Presence::kHasPartner;
      decided[s] = true;
      continue;
    }
    if (slot.communicator && matches(s, [&](int n) { return MemberSet(slot, n); })) {
      slot.presence = Presence::kCommMember;
      decided[s] = true;
      continue;
    }
    auto only0 = [](int n) {
      std::vector<bool> v(n, false);
      v[0] = true;
      return v;
    };
    auto but0 = [](int n) {
      std::vector<bool> v(n, true);
      v[0] = false;
      return v;
    };
    if (matches(s, only0)) {
      slot.presence = Presence::kOnlyRank0;
      decided[s] = true;
    } else if (matches(s, but0)) {
      slot.presence = Presence::kAllButRank0;
      decided[s] = true;
    }
  }
  // Then "like other slots": a single decided slot, the request-creating slots before it,
  // or every partner slot.
  for (std::size_t s = 0; s < ns; ++s) {
    if (decided[s]) continue;
    auto union_of = [&](const std::vector<int>& like) {
      return [&, like](int n) {
        std::vector<bool> v(n, false);
        for (int k : like) {
          std::size_t ci = std::find(counts.begin(), counts.end(), n) - counts.begin();
          const auto& t = traced[k][ci];
          for (int r = 0; r < n; ++r) v[r] = v[r] || t[r];
        }
        return v;
      };
    };
    std::vector<std::vector<int>> candidates;
    for (std::size_t k = 0; k < ns; ++k) {
      if (k != s && decided[k]) candidates.push_back({static_cast<int>(k)});
    }
    std::vector<int> creators_before, partners;
    for (std::size_t k = 0; k < ns; ++k) {
      if (!decided[k] || k == s) continue;
      if (k < s && CreatesRequest(slots[k].kind)) creators_before.push_back(static_cast<int>(k));
      if (slots[k].presence == Presence::kHasPartner) partners.push_back(static_cast<int>(k));
    }
    if (!creators_before.empty()) candidates.push_back(creators_before);
    if (!partners.empty()) candidates.push_back(partners);
    bool found = false;
    for (const auto& like : candidates) {
      if (matches(s, union_of(like))) {
        slots[s].presence = Presence::kLikeSlots;
        slots[s].like_slots = like;
        found = true;
        break;
      }
    }
    if (!found) {
      std::string detail;
      for (std::size_t ci = 0; ci < counts.size(); ++ci) {
        std::size_t k = 0;
        for (bool b : traced[s][ci]) k += b;
        detail += (ci ? ", " : "") + std::to_string(k) + " of " + std::to_string(counts[ci]);
      }
      throw UserError(SlotLabel(build->model, s, slots[s]) +
                      ": cannot tell which ranks make this call at other counts (it is made by " +
                      detail +
                      " ranks, which matches neither every rank, the ranks with a partner, a "
                      "communicator, rank 0, nor the ranks of another call)");
    }
  }
  // A collective waits for every member of its communicator: made by some members of a
  // group and not by the others, the phase holds only part of it (the others' calls were
  // put in another phase), and a run synthesized from it would wait for ever.
  for (std::size_t s = 0; s < ns; ++s) {
    const SlotModel& slot = slots[s];
    if (!IsCollective(slot.kind) || slot.presence == Presence::kAll) continue;
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      const int n = counts[ci];
      std::map<std::int64_t, std::pair<int, int>> groups;  // group -> (members, making it)
      std::optional<patterns::CommunicatorRule::AtCount> at;
      if (slot.communicator) at = slot.communicator->At(n);
      for (int r = 0; r < n; ++r) {
        const std::int64_t g = at ? at->GroupIndex(r) : 0;
        if (g < 0) continue;
        ++groups[g].first;
        groups[g].second += traced[s][ci][static_cast<std::size_t>(r)] ? 1 : 0;
      }
      for (const auto& [g, made] : groups) {
        if (made.second == 0 || made.second == made.first) continue;
        throw UserError(SlotLabel(build->model, s, slot) + ": at " + std::to_string(n) +
                        " processes this collective is made by " + std::to_string(made.second) +
                        " of the " + std::to_string(made.first) + " members of its communicator" +
                        (at ? " (group " + std::to_string(g) + ")" : std::string(" (the world)")) +
                        " in this phase: the others' calls were found in another phase, and a run "
                        "synthesized from it would wait for ever");
      }
    }
  }
}

// Whether the most repetitions per count (`most[i]` at `counts[i]`) grow by a law of P: a
// line of positive slope in log2 P (rounded either way: butterfly stages), P (one exchange
// per other rank, per pair) or a root of P (a row or a column of a grid), exact within half
// a repetition at every count. The number of swaps of a halo exchange changes too when a grid
// dimension of extent 1 skips its swaps (4 = 1 x 2 x 2 ranks: 8 swaps, 8 = 2 x 2 x 2: 12,
// 12 and 16: 12), but by no law of P, and taking its calls for one block repeated would
// carry them to a target count by the wrong law.
bool RepeatsFollowALaw(const std::vector<int>& counts, const std::vector<double>& most) {
  using Law = double (*)(double);
  const Law laws[] = {
      [](double p) { return std::log2(p); },
      [](double p) { return std::ceil(std::log2(p) - 1e-9); },
      [](double p) { return std::floor(std::log2(p) + 1e-9); },
      [](double p) { return p; },
      [](double p) { return std::sqrt(p); },
      [](double p) { return std::cbrt(p); },
  };
  for (const Law law : laws) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const auto k = static_cast<double>(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const double x = law(counts[i]);
      sx += x;
      sy += most[i];
      sxx += x * x;
      sxy += x * most[i];
    }
    const double den = k * sxx - sx * sx;
    if (den <= 1e-12) continue;
    const double slope = (k * sxy - sx * sy) / den;
    const double intercept = (sy - slope * sx) / k;
    if (slope <= 1e-9) continue;
    bool exact = true;
    for (std::size_t i = 0; i < counts.size() && exact; ++i) {
      exact = std::fabs(intercept + slope * law(counts[i]) - most[i]) <= 0.5;
    }
    if (exact) return true;
  }
  return false;
}

// A phase whose every rank repeats one block of calls (the same calls, whatever the partners)
// a number of times that grows with the count by a law of P (log2 P butterfly stages, one
// exchange per other rank): the block's length; 0 when the phase is not such a block.
std::size_t BlockLength(const phases::PhaseGroup& group,
                        const std::vector<const phases::Signature*>& sigs,
                        const std::vector<int>& counts) {
  std::vector<Token> block;
  std::set<std::size_t> repeats;
  std::vector<std::size_t> once;               // lengths of the ranks' sequences that do not repeat
  std::vector<double> most(counts.size(), 1);  // the most repetitions of a rank, per count
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const phases::Phase* phase = sigs[ci]->FindPhase(group.phase_ids[ci]);
    if (!phase) return 0;
    const CommLookup comms(*sigs[ci]);
    for (const phases::RankPhase& rp : phase->ranks) {
      std::vector<Token> tokens;
      for (const auto& e : rp.events) tokens.push_back(TokenOf(e, comms));
      if (tokens.empty()) return 0;
      // The shortest period that tiles the whole sequence.
      std::size_t period = tokens.size();
      for (std::size_t len = 1; len < tokens.size(); ++len) {
        if (tokens.size() % len != 0) continue;
        bool tiles = true;
        for (std::size_t i = len; i < tokens.size() && tiles; ++i)
          tiles = tokens[i] == tokens[i - len];
        if (tiles) {
          period = len;
          break;
        }
      }
      const std::vector<Token> mine(tokens.begin(),
                                    tokens.begin() + static_cast<std::ptrdiff_t>(period));
      if (period == tokens.size()) {
        // No repetition on this rank: it may make calls of its own once (a worker's one
        // receive of the stop its master sends in a block of replies), if they are fewer
        // than a block; checked below.
        once.push_back(tokens.size());
        continue;
      }
      if (block.empty()) block = mine;
      if (mine != block) return 0;
      repeats.insert(tokens.size() / period);
      most[ci] = std::max(most[ci], static_cast<double>(tokens.size() / period));
    }
  }
  if (block.empty()) return 0;
  for (std::size_t len : once) {
    if (len > block.size()) return 0;
  }
  if (!once.empty()) repeats.insert(1);
  bool p2p = false;
  for (const Token& t : block) p2p = p2p || IsPointToPoint(t.kind);
  // Only when the repetitions differ (a fixed number of exchanges keeps a slot per exchange).
  if (!p2p || repeats.size() < 2) return 0;
  if (!RepeatsFollowALaw(counts, most)) return 0;
  return block.size();
}

// Whether, at every count, each message of one occurrence has its receive in the same
// occurrence: every rank's receives from p (irecv, recv, sendrecv's receive half) are as many
// as p's sends to it. Counting completions alone cannot tell: a phase that completes a
// receive the phase before it posted (a send along z, then its wait) and posts one the phase
// after it completes (an irecv along y) has as many requests pending at its end as at its
// start, and is "closed" by a rotation that moves that irecv to the front, where no rank
// sends what it waits for. Wildcard receives are taken as balanced.
bool PeersBalanced(const std::vector<std::vector<SlotCountData>>& data,
                   const std::vector<int>& counts) {
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t> owed;  // (from, to)
    for (const auto& slot : data) {
      for (int r = 0; r < counts[ci]; ++r) {
        const phases::PhaseEvent* e = slot[ci].event_of_rank[r];
        if (!e) continue;
        switch (e->kind) {
          case EventKind::kSend:
          case EventKind::kIsend:
            ++owed[{r, e->peer}];
            break;
          case EventKind::kRecv:
          case EventKind::kIrecv:
            if (e->peer < 0) return true;
            --owed[{e->peer, r}];
            break;
          case EventKind::kSendrecv:
            if (e->recv_peer < 0) return true;
            ++owed[{r, e->peer}];
            --owed[{e->recv_peer, r}];
            break;
          default:
            break;
        }
      }
    }
    for (const auto& [pair, n] : owed) {
      if (n != 0 && pair.second >= 0) return false;
    }
  }
  return true;
}

// The smallest rotation of the slots (a start index) at which every rank of every count
// completes, within one occurrence, every request it creates, and never completes more than
// it has pending; 0 when the phase is closed as it is or no rotation closes it.
bool ClosedFrom(const std::vector<std::vector<SlotCountData>>& data, const std::vector<int>& counts,
                std::size_t start) {
  const std::size_t ns = data.size();
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    for (int r = 0; r < counts[ci]; ++r) {
      std::int64_t pending = 0;
      for (std::size_t k = 0; k < ns; ++k) {
        const phases::PhaseEvent* e = data[(start + k) % ns][ci].event_of_rank[r];
        if (!e) continue;
        if (CreatesRequest(e->kind)) ++pending;
        if (IsCompletion(e->kind)) {
          if (e->requests > pending) return false;
          pending -= e->requests;
        }
      }
      if (pending != 0) return false;
    }
  }
  return true;
}

// The closing rotation that moves the fewest slots across the occurrence boundary (k slots
// from the front to the end, or ns - k from the end to the front; the first on ties): the
// program order of the other calls is kept. A loop whose phase starts after its receive is
// posted (send, wait, ..., the next iteration's irecv) starts again with that receive, as
// the program does, rather than with a later call.
std::size_t ClosedRotation(const std::vector<std::vector<SlotCountData>>& data,
                           const std::vector<int>& counts) {
  const std::size_t ns = data.size();
  if (ns == 0 || ClosedFrom(data, counts, 0)) return 0;
  for (std::size_t moved = 1; moved <= ns / 2; ++moved) {
    if (ClosedFrom(data, counts, moved)) return moved;
    if (ClosedFrom(data, counts, ns - moved)) return ns - moved;
  }
  return 0;
}

// Per slot: true when it creates a request that is still pending at the end of the
// occurrence on every rank of every count that makes it (completions take the oldest
// requests first).
std::vector<bool> DanglingSlots(const std::vector<std::vector<SlotCountData>>& data,
                                const std::vector<int>& counts) {
  const std::size_t ns = data.size();
  std::vector<int> made(ns, 0), left(ns, 0);
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    for (int r = 0; r < counts[ci]; ++r) {
      std::deque<std::size_t> fifo;
      for (std::size_t k = 0; k < ns; ++k) {
        const phases::PhaseEvent* e = data[k][ci].event_of_rank[r];
        if (!e) continue;
        if (CreatesRequest(e->kind)) {
          fifo.push_back(k);
          ++made[k];
        }
        if (IsCompletion(e->kind)) {
          for (std::int32_t q = 0; q < e->requests && !fifo.empty(); ++q) fifo.pop_front();
        }
      }
      for (std::size_t k : fifo) ++left[k];
    }
  }
  std::vector<bool> dangling(ns, false);
  for (std::size_t k = 0; k < ns; ++k) dangling[k] = made[k] > 0 && left[k] == made[k];
  return dangling;
}

// Per slot: true when, on every rank of every count that makes it, its call is one that the
// occurrence cannot keep balanced on its own: a completion that finds nothing pending, or a
// send whose receive is not in the occurrence. Of the messages from one rank to another with
// one tag, receives take the sends in order. Sends beyond the occurrence's receives fill
// receives posted before it (the first sends: a last phase that sends what the loop before it
// pre-posted). And a receive still pending at the end of the occurrence (never completed in
// it: DanglingSlots) takes a send of the occurrence when the receives before it do not take
// them all: the last sends (an exchange of irecv, send, wait cut after its send, the wait
// beginning the next phase: the partner's send is in the occurrence, and its first send is
// taken by the first receive, which is waited for). `before`: the slots of the first kind;
// `to_pending`: the sends of the second, which go where the pending receives go (carried
// across the boundary, or left out with them). A count where some rank receives from any
// source is not judged.
struct Orphans {
  std::vector<bool> before, to_pending;
};
Orphans OrphanSlots(const std::vector<std::vector<SlotCountData>>& data,
                    const std::vector<int>& counts) {
  const std::size_t ns = data.size();
  std::vector<int> made(ns, 0), orphan(ns, 0), to_pending(ns, 0);
  using Key = std::tuple<int, int, std::int32_t>;  // (source, destination, tag)
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const int n = counts[ci];
    bool wildcard = false;
    // Receives per key in the occurrence, and those of them still pending at its end.
    std::map<Key, int> receives, pending_at_end;
    for (std::size_t k = 0; k < ns; ++k) {
      for (int r = 0; r < n; ++r) {
        const phases::PhaseEvent* e = data[k][ci].event_of_rank[r];
        if (!e || (e->kind != EventKind::kRecv && e->kind != EventKind::kIrecv)) continue;
        if (e->peer < 0) wildcard = true;
        ++receives[{e->peer, r, e->tag}];
      }
    }
    if (wildcard) continue;
    for (int r = 0; r < n; ++r) {
      std::deque<const phases::PhaseEvent*> fifo;
      for (std::size_t k = 0; k < ns; ++k) {
        const phases::PhaseEvent* e = data[k][ci].event_of_rank[r];
        if (!e) continue;
        if (CreatesRequest(e->kind)) fifo.push_back(e);
        if (IsCompletion(e->kind)) {
          for (std::int32_t q = 0; q < e->requests && !fifo.empty(); ++q) fifo.pop_front();
        }
      }
      for (const phases::PhaseEvent* e : fifo) {
        if (e->kind == EventKind::kIrecv) ++pending_at_end[{e->peer, r, e->tag}];
      }
    }
    std::map<Key, int> sends;
    for (std::size_t k = 0; k < ns; ++k) {
      for (int r = 0; r < n; ++r) {
        const phases::PhaseEvent* e = data[k][ci].event_of_rank[r];
        if (!e || (e->kind != EventKind::kSend && e->kind != EventKind::kIsend)) continue;
        ++sends[{r, e->peer, e->tag}];
      }
    }
    std::map<Key, int> seen;
    for (int r = 0; r < n; ++r) {
      int pending = 0;
      for (std::size_t k = 0; k < ns; ++k) {
        const phases::PhaseEvent* e = data[k][ci].event_of_rank[r];
        if (!e) continue;
        if (e->kind == EventKind::kSend || e->kind == EventKind::kIsend) {
          const Key key{r, static_cast<int>(e->peer), e->tag};
          const int s = sends[key], m = receives[key], d = pending_at_end[key];
          // The first `before` sends fill receives posted before the occurrence; the last
          // `after` fill the pending receives that are left out.
          const int before = std::max(0, s - m);
          const int after = std::max(0, s - before - (m - d));
          const int i = seen[key]++;
          ++made[k];
          if (i < before) ++orphan[k];
          if (i >= s - after) ++to_pending[k];
        }
        if (CreatesRequest(e->kind)) ++pending;
        if (IsCompletion(e->kind)) {
          ++made[k];
          if (pending == 0) ++orphan[k];
          pending = std::max(0, pending - e->requests);
        }
      }
    }
  }
  Orphans out{std::vector<bool>(ns, false), std::vector<bool>(ns, false)};
  for (std::size_t k = 0; k < ns; ++k) {
    out.before[k] = made[k] > 0 && orphan[k] == made[k];
    out.to_pending[k] = made[k] > 0 && to_pending[k] == made[k];
  }
  return out;
}

// A stencil offset +o along a dimension whose extent divides 2o at every traced count
// cannot be told from -o (with at most 2 ranks along it, +1 and -1 are the one other rank;
// with 4, +2 and -2 are the rank opposite), so a send's and the matching receive's equations
// may each pick either sign, and at a count where they differ the messages would not meet
// (every rank waiting for a neighbour that sends elsewhere: a deadlock). A send and a receive
// of the same tag with one offset each on the same grid are made opposite along such
// dimensions (the receive's source is where the send's destination sends from), and a
// warning says that the direction there is a guess.
void PairAmbiguousDirections(PhaseModel* pm, std::vector<std::string>* warnings) {
  auto single_stencil = [](const std::optional<patterns::GeneralEquation>& eq) {
    return eq && eq->family == patterns::Family::kStencil && eq->offsets.size() == 1;
  };
  auto ambiguous_dims = [](const patterns::GeneralEquation& eq) {
    const std::vector<std::int64_t>& o = eq.offsets.front();
    std::vector<bool> dims(o.size(), !eq.traced_counts.empty());
    for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = dims[d] && o[d] != 0;
    for (const std::int64_t n : eq.traced_counts) {
      try {
        const auto at = eq.At(n);
        for (std::size_t d = 0; d < dims.size(); ++d) {
          const bool periodic = d < eq.periodic.size() && eq.periodic[d];
          dims[d] = dims[d] && d < at.extents().size() && at.extents()[d] > 0 &&
                    (at.extents()[d] <= 2 || (periodic && (2 * o[d]) % at.extents()[d] == 0));
        }
      } catch (const UserError&) {
        return std::vector<bool>(dims.size(), false);
      }
    }
    return dims;
  };
  std::set<std::size_t> warned;
  // Receives with two different tags along one such dimension are a halo exchange that
  // receives from both sides (NAS MG: from +1 with one tag, from -1 with the other), but the
  // equations cannot tell and name one side for both: the receives of the second tag are made
  // to come from the other side (the sends below then pair with them by tag).
  auto is_recv = [](const SlotModel& s) {
    return s.kind == EventKind::kRecv || s.kind == EventKind::kIrecv;
  };
  for (const SlotModel& first : pm->slots) {
    if (!is_recv(first) || !single_stencil(first.peer)) continue;
    const std::vector<bool> dims = ambiguous_dims(*first.peer);
    const std::vector<std::int64_t>& at = first.peer->offsets.front();
    for (std::size_t d = 0; d < dims.size() && d < at.size(); ++d) {
      if (!dims[d]) continue;
      // The receives along d only (every other component zero), on the same grid.
      auto along_d = [&](const SlotModel& s) {
        if (!is_recv(s) || !single_stencil(s.peer) || s.peer->grid != first.peer->grid)
          return false;
        const auto& o = s.peer->offsets.front();
        if (o.size() != at.size() || std::abs(o[d]) != std::abs(at[d])) return false;
        for (std::size_t i = 0; i < o.size(); ++i) {
          if (i != d && (o[i] != 0 || at[i] != 0)) return false;
        }
        return true;
      };
      std::set<std::int32_t> tags;
      std::set<std::int64_t> signs;
      for (const SlotModel& s : pm->slots) {
        if (!along_d(s)) continue;
        tags.insert(s.tag);
        signs.insert(s.peer->offsets.front()[d]);
      }
      if (tags.size() != 2 || signs.size() != 1) continue;
      for (SlotModel& s : pm->slots) {
        if (along_d(s) && s.tag != first.tag) s.peer->offsets.front()[d] = -at[d];
      }
    }
  }
  // Two calls of one kind (sends, or receives) whose offsets differ at most in the sign along
  // such a dimension (a 27-point halo's (dx, dy, -1) and (dx, dy, +1) on grids of extent 2
  // along z: the traces show both as the one other rank) take their signs in the order the
  // code visits the neighbours along the dimensions where the sign is known: when every such
  // pair there comes negative first (for dx in -1..1), or every one positive first, the
  // ambiguous pairs are made to come the same way. No known pair, or pairs both ways: left
  // as they are (and paired below).
  auto is_send = [](const SlotModel& s) {
    return s.kind == EventKind::kSend || s.kind == EventKind::kIsend;
  };
  for (const bool sends : {true, false}) {
    std::vector<SlotModel*> group;
    for (SlotModel& s : pm->slots) {
      if ((sends ? is_send(s) : is_recv(s)) && single_stencil(s.peer)) group.push_back(&s);
    }
    if (group.size() < 4) continue;
    // A dimension is ambiguous when a call of the group that goes along it cannot tell the
    // sign there (the first call alone goes along one dimension only in a 5-point halo).
    std::vector<bool> ambiguous = ambiguous_dims(*group.front()->peer);
    for (const SlotModel* s : group) {
      const std::vector<bool> own = ambiguous_dims(*s->peer);
      if (own.size() != ambiguous.size() || !(s->peer->grid == group.front()->peer->grid)) continue;
      for (std::size_t d = 0; d < own.size(); ++d) ambiguous[d] = ambiguous[d] || own[d];
    }
    // The pairs (i < j) whose offsets are equal but along d, where they are +-o (known
    // dimension) or the same nonzero value (ambiguous one).
    auto pairs_along = [&](std::size_t d, bool known) {
      std::vector<std::pair<std::size_t, std::size_t>> out;
      for (std::size_t i = 0; i < group.size(); ++i) {
        for (std::size_t j = i + 1; j < group.size(); ++j) {
          const auto& a = group[i]->peer->offsets.front();
          const auto& b = group[j]->peer->offsets.front();
          if (group[i]->peer->grid != group[j]->peer->grid || a.size() != b.size() ||
              d >= a.size() || a[d] == 0) {
            continue;
          }
          bool same_elsewhere = true;
          for (std::size_t k = 0; k < a.size(); ++k) {
            same_elsewhere = same_elsewhere && (k == d || a[k] == b[k]);
          }
          // Along an ambiguous dimension the traces show one value for both (the one other
          // rank); where it is periodic both neighbours are that rank at every traced count,
          // so two opposite signs the fitter chose are as much a guess. (Not where it is open:
          // there which ranks make the call tells the sign.)
          const bool periodic_both = d < group[i]->peer->periodic.size() &&
                                     d < group[j]->peer->periodic.size() &&
                                     group[i]->peer->periodic[d] && group[j]->peer->periodic[d];
          if (same_elsewhere &&
              (known ? b[d] == -a[d] : (b[d] == a[d] || (periodic_both && b[d] == -a[d])))) {
            out.emplace_back(i, j);
          }
        }
      }
      return out;
    };
    int negative_first = 0, positive_first = 0;
    for (std::size_t d = 0; d < ambiguous.size(); ++d) {
      if (ambiguous[d]) continue;
      for (const auto& [i, j] : pairs_along(d, true)) {
        (group[i]->peer->offsets.front()[d] < 0 ? negative_first : positive_first) += 1;
      }
    }
    if ((negative_first > 0) == (positive_first > 0)) continue;
    const std::int64_t first_sign = negative_first > 0 ? -1 : 1;
    for (std::size_t d = 0; d < ambiguous.size(); ++d) {
      if (!ambiguous[d]) continue;
      const auto pairs = pairs_along(d, false);
      std::set<std::size_t> used;
      bool clean = true;  // every call in at most one pair
      for (const auto& [i, j] : pairs)
        clean = clean && used.insert(i).second && used.insert(j).second;
      if (!clean) continue;
      for (const auto& [i, j] : pairs) {
        std::int64_t& a = group[i]->peer->offsets.front()[d];
        std::int64_t& b = group[j]->peer->offsets.front()[d];
        const std::int64_t o = std::abs(a);
        a = first_sign * o;
        b = -first_sign * o;
        if (warned.insert(d).second) {
          const std::string lo = "-" + std::to_string(o), hi = "+" + std::to_string(o);
          warnings->push_back(
              "phase " + std::to_string(pm->index) + ": along grid dimension " + std::to_string(d) +
              " (fastest first) every traced count has at most " + std::to_string(2 * o) +
              " ranks, so the traces cannot tell a neighbour at " + hi + " from one at " + lo +
              " there; the model takes the order the code's " +
              (sends ? "sends go to" : "receives come from") +
              " neighbours in along the other dimensions (" +
              (first_sign < 0 ? lo + " before " + hi : hi + " before " + lo) +
              "), which is a guess at counts with more ranks along it. Trace such a count to "
              "settle it");
        }
      }
    }
  }
  // Each send is paired with one receive of its tag on the same grid along the same
  // dimensions: the only one, or where several share the tag (a halo swapped swap by swap,
  // every swap with tag 0: irecv, send, wait per swap), the nearest one not yet paired that
  // comes before it in the phase (a swap posts its receive first), else after it.
  auto support = [](const std::vector<std::int64_t>& o) {
    std::vector<bool> nz;
    for (const std::int64_t v : o) nz.push_back(v != 0);
    return nz;
  };
  std::set<std::size_t> paired;
  for (std::size_t si = 0; si < pm->slots.size(); ++si) {
    SlotModel& send = pm->slots[si];
    if (!is_send(send) || !single_stencil(send.peer)) continue;
    std::vector<std::size_t> candidates;
    for (std::size_t ri = 0; ri < pm->slots.size(); ++ri) {
      const SlotModel& r = pm->slots[ri];
      if (is_recv(r) && r.tag == send.tag && single_stencil(r.peer) &&
          r.peer->grid == send.peer->grid &&
          r.peer->offsets.front().size() == send.peer->offsets.front().size() &&
          support(r.peer->offsets.front()) == support(send.peer->offsets.front())) {
        candidates.push_back(ri);
      }
    }
    std::size_t pick = pm->slots.size();
    if (candidates.size() == 1) {
      pick = candidates.front();
    } else {
      for (auto it = candidates.rbegin(); it != candidates.rend() && pick == pm->slots.size();
           ++it) {
        if (*it < si && !paired.count(*it)) pick = *it;
      }
      for (auto it = candidates.begin(); it != candidates.end() && pick == pm->slots.size(); ++it) {
        if (*it > si && !paired.count(*it)) pick = *it;
      }
    }
    if (pick == pm->slots.size()) continue;
    paired.insert(pick);
    SlotModel* recv = &pm->slots[pick];
    const std::vector<bool> dims = ambiguous_dims(*send.peer);
    std::vector<std::int64_t>& to = send.peer->offsets.front();
    const std::vector<std::int64_t>& from = recv->peer->offsets.front();
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d] || to[d] == -from[d] || std::abs(from[d]) != std::abs(to[d])) continue;
      to[d] = -from[d];
      if (warned.insert(d).second) {
        const std::int64_t o = std::abs(from[d]);
        warnings->push_back(
            "phase " + std::to_string(pm->index) + ": along grid dimension " + std::to_string(d) +
            " (fastest first) every traced count has at most " + std::to_string(2 * o) +
            " ranks, so the traces cannot tell a neighbour at +" + std::to_string(o) +
            " from one at -" + std::to_string(o) +
            " there; the model sends the opposite way from where it receives, but which way is "
            "a guess at counts with more ranks along it. Trace such a count to settle it");
      }
    }
  }
}

// SlotModel::cpu_ns_per_byte: for each slot whose burst has a law of P fitted at 3 counts or
// more, the burst as c x the bytes the call moves (PhaseModel::DataBytesAt, from the bytes
// laws, which know a grid's faces) or as c x those plus the bytes the call before it
// received, each alone or with a base that is not data's, a / P (the sweep over a
// strong-scaled block that a halo's first burst holds besides its packing); the bytes must
// differ between the counts by kDataBytesSpread at least. Fitted by
// relative least squares; the candidate that predicts the left-out counts best
// replaces the law of P when it predicts them better than that law does by kDataLawMargin,
// both floored at the measurement noise (kMeasuredNoiseFloor), and when it is a law the
// traces support
// (kNoLawLooError: a burst whose cost per byte depends on which face it packs, strided or
// not, follows neither, and keeps the median of its traced values). A base needs 4 counts
// (3 left to fit its 2 coefficients when one is out). Not for repeated blocks (a burst per
// occurrence) nor self-scheduled phases (a task's work is not its message). Runs once every
// bytes law is final (after the grids were joined across phases).
constexpr double kDataBytesSpread = 1.25;  // FitDataBoundCpu: the bytes must vary this much
// ... and the law must predict the left-out counts this much better than the law of P: it
// builds on the bytes laws, and takes their error at the target with it (a sparse
// all-to-all's bytes, 15% off at 24 ranks, made its burst 5% off with a law that had
// predicted the left-out counts 7% better than the law of P).
constexpr double kDataLawMargin = 1.25;

void FitDataBoundCpu(PhaseModel* pm) {
  for (SlotModel& slot : pm->slots) {
    slot.cpu_ns_per_byte = 0;
    slot.cpu_bytes_with_previous = false;
    slot.cpu_bytes_base = 0;
    slot.cpu_bytes_loo_error = 0;
  }
  if (pm->block || pm->scheduled) return;
  for (std::size_t s = 0; s < pm->slots.size(); ++s) {
    SlotModel& slot = pm->slots[s];
    if (!slot.cpu_ns.present || slot.cpu_per_occurrence) continue;
    const std::vector<regression::Point> pts = TrainingPoints(slot.cpu_ns);
    const std::size_t n = pts.size();
    if (n < 3) continue;
    bool positive = true;
    for (const regression::Point& pt : pts) positive = positive && pt.y > 0;
    if (!positive) continue;
    double best = std::max(slot.cpu_ns.model.loo_error, kMeasuredNoiseFloor);
    std::vector<double> own;
    for (const bool with_previous : {false, true}) {
      std::vector<double> x;
      for (const regression::Point& pt : pts) {
        const double b = pm->DataBytesAt(s, std::llround(pt.p), with_previous);
        if (!(b > 0)) break;
        x.push_back(b);
      }
      if (x.size() != n) continue;
      // Bytes that are the same at every count (a reduction's 8 B) make c x bytes a constant:
      // a law of P in disguise, not the data's.
      const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
      if (!(*hi > kDataBytesSpread * *lo)) continue;
      if (!with_previous) {
        own = x;
      } else if (x == own) {
        continue;  // the call before it received nothing
      }
      // With a base a / P or without. (A constant base is not tried: with the noise of the
      // traced bursts it fitted a few us of halo3d's face packing as overhead and the rest
      // per byte, and missed the held-out count by more than the median did.)
      for (const bool base : {false, true}) {
        if (base && n < 4) continue;
        // Coefficients {per byte, base} minimising sum ((fit - y) / y)^2 over the points but
        // `skip` (normal equations); false when they are not both >= 0 (a negative base or
        // cost per byte is no work).
        auto solve = [&](std::size_t skip, std::array<double, 2>* coef) {
          double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
          for (std::size_t k = 0; k < n; ++k) {
            if (k == skip) continue;
            const double u = x[k] / pts[k].y;
            const double v = base ? 1.0 / pts[k].p / pts[k].y : 0.0;
            s00 += u * u;
            s01 += u * v;
            s11 += v * v;
            r0 += u;
            r1 += v;
          }
          if (!base) {
            *coef = {s00 > 0 ? r0 / s00 : 0.0, 0.0};
          } else {
            const double det = s00 * s11 - s01 * s01;
            if (!(std::fabs(det) > 1e-12 * s00 * s11)) return false;
            *coef = {(r0 * s11 - r1 * s01) / det, (s00 * r1 - s01 * r0) / det};
          }
          const auto& c = *coef;
          return std::isfinite(c[0]) && c[0] > 0 && std::isfinite(c[1]) && c[1] >= 0;
        };
        auto value = [&](const std::array<double, 2>& c, std::size_t k) {
          return c[0] * x[k] + c[1] / pts[k].p;
        };
        std::array<double, 2> c{};
        if (!solve(n, &c)) continue;
        double sq = 0;
        bool ok = true;
        for (std::size_t k = 0; k < n && ok; ++k) {
          std::array<double, 2> ck{};
          ok = solve(k, &ck);
          const double e = (value(ck, k) - pts[k].y) / pts[k].y;
          sq += e * e;
        }
        if (!ok) continue;
        const double loo = std::sqrt(sq / static_cast<double>(n));
        if (loo <= kNoLawLooError && kDataLawMargin * std::max(loo, kMeasuredNoiseFloor) < best) {
          best = kDataLawMargin * std::max(loo, kMeasuredNoiseFloor);
          slot.cpu_ns_per_byte = c[0];
          slot.cpu_bytes_with_previous = with_previous;
          slot.cpu_bytes_base = c[1];
          slot.cpu_bytes_loo_error = loo;
        }
      }
    }
  }
}

// A phase's occurrences grow with P when its traced weight at the largest count is at least
// this many times the smallest count's (FitPhaseCpuTotal's work over the run).
constexpr double kRunWeightGrowth = 1.5;

// PhaseModel::cpu_total: the sum of the totalled slots' per-rank bursts at each traced count,
// fitted as one measured quantity, kept when its leave-one-out error is at most half the
// sum's of the slots' own models (each refitted without the left-out count, in its own
// form), both floored at the measurement noise: the regression's Occam factor, so that a
// few noisy points that one law happens to follow slightly better do not change the model. Not for
// repeated blocks (their slots mix per-iteration and per-occurrence bursts) nor self-scheduled
// phases (a task's compute is the workers').
//
// Where the phase's occurrences grow with P (its traced weights by kRunWeightGrowth or more
// from the smallest count to the largest), the same sum times the weight (a rank's work in
// the phase over the run) is fitted too, and taken (PhaseModel::cpu_total_per_run) when it
// predicts the left-out counts better than the per-occurrence models, as a repeated block's
// per-occurrence compute is (one slot is enough for it).
void FitPhaseCpuTotal(PhaseModel* pm, const std::vector<int>& counts) {
  pm->cpu_total = Quantity{};
  pm->cpu_total_per_run = false;
  if (pm->block || pm->scheduled || counts.size() < 3) return;
  std::vector<std::size_t> totalled;
  for (std::size_t s = 0; s < pm->slots.size(); ++s) {
    if (pm->TotalledSlot(s)) totalled.push_back(s);
  }
  // The traced weights at the counts, when the phase's occurrences grow with P.
  std::vector<double> weights;
  for (const int c : counts) {
    for (const regression::Point& w : pm->weight.model.training) {
      if (w.p == static_cast<double>(c) && w.y > 0) weights.push_back(w.y);
    }
  }
  const bool growing = pm->weight.present && !pm->weight.divided_by_p &&
                       weights.size() == counts.size() &&
                       weights.back() >= kRunWeightGrowth * weights.front();
  if (totalled.size() < 2 && !(growing && !totalled.empty())) return;
  std::vector<regression::Point> sums;
  for (int c : counts) sums.push_back({static_cast<double>(c), 0.0});
  for (std::size_t s : totalled) {
    const std::vector<regression::Point> pts = TrainingPoints(pm->slots[s].cpu_ns);
    for (std::size_t k = 0; k < pts.size(); ++k) sums[k].y += pts[k].y;
  }
  for (const auto& pt : sums) {
    if (!(pt.y > 0)) return;
  }
  // The sum of the slots' own models, each refitted without count k, at count k.
  const regression::Options options = FitOptions(Precision::kMeasured);
  double sq = 0, slots_last = 0;  // slots_last: the error at the largest count
  for (std::size_t k = 0; k < sums.size(); ++k) {
    double predicted = 0;
    for (std::size_t s : totalled) {
      const Quantity& q = pm->slots[s].cpu_ns;
      std::vector<regression::Point> rest;
      for (std::size_t i = 0; i < q.model.training.size(); ++i) {
        if (i != k) rest.push_back(q.model.training[i]);
      }
      regression::Curve refit;
      if (!regression::FitCurve(q.model.curve, rest, options, &refit)) return;
      double v = refit.Evaluate(sums[k].p);
      if (q.divided_by_p) v /= sums[k].p;
      predicted += std::max(0.0, v);
    }
    const double e = (predicted - sums[k].y) / sums[k].y;
    sq += e * e;
    slots_last = std::fabs(e);
  }
  const double slots_loo = std::sqrt(sq / static_cast<double>(sums.size()));
  double best = slots_loo;  // the per-occurrence models' leave-one-out error
  if (totalled.size() >= 2) {
    Quantity total = FitQuantity(
        sums,
        "phase " + std::to_string(pm->index) + ": CPU time per rank and occurrence, summed (ns)",
        Precision::kMeasured);
    // Or where the slots' laws extrapolate worst: the compute moves between the calls from
    // count to count (a halo overlapped by polling finds its messages after more or fewer
    // chunks of work), so each call's series is noisy while their sum is not. Left out,
    // the largest count is the one extrapolated to: the total must predict it Occam-better
    // than the slots' sum there, and the other counts no worse.
    const double floor = kMeasuredNoiseFloor;
    const auto total_last = [&]() {
      std::vector<regression::Point> rest = total.model.training;
      rest.pop_back();
      regression::Curve refit;
      if (!regression::FitCurve(total.model.curve, rest, options, &refit)) {
        return std::numeric_limits<double>::infinity();
      }
      const double p = total.model.training.back().p;
      const double v = refit.Evaluate(p) / (total.divided_by_p ? p : 1.0);
      return std::fabs(v - sums.back().y) / sums.back().y;
    };
    // (From at least 4 counts, as a block's bytes per occurrence: from 3, one count is left
    // to check the others' law on.)
    // The total must follow a law itself (kNoLawLooError): where the bursts are noise and
    // their sum too, neither extrapolates, and each burst keeps its median (NoLawModel).
    const bool extrapolates =
        counts.size() >= kOccurrenceBytesCounts && total.model.loo_error <= kNoLawLooError &&
        std::max(total.model.loo_error, floor) <= std::max(slots_loo, floor) &&
        std::max(total_last(), floor) * kOccamFactor <= slots_last;
    if (std::max(total.model.loo_error, kMeasuredNoiseFloor) * kOccamFactor <=
            std::max(slots_loo, kMeasuredNoiseFloor) ||
        (total.present && extrapolates)) {
      best = total.model.loo_error;
      pm->cpu_total = std::move(total);
    }
  }
  // (From at least 4 counts, as a block's bytes per occurrence: from 3 the choice is luck.)
  if (!growing || counts.size() < kOccurrenceBytesCounts) return;
  // The weights are exact: an error in the run's work at a count is the same error in its
  // occurrences' (the relative leave-one-out errors compare as they are).
  std::vector<regression::Point> run = sums;
  for (std::size_t k = 0; k < run.size(); ++k) run[k].y *= weights[k];
  Quantity over_run = FitQuantity(
      run, "phase " + std::to_string(pm->index) + ": CPU time per rank over the run, summed (ns)",
      Precision::kMeasured);
  if (over_run.present && over_run.model.loo_error < best) {
    pm->cpu_total = std::move(over_run);
    pm->cpu_total_per_run = true;
  }
}

// PhaseModel::rank_cpu_total and ClassCompute::cpu_of_rank_total: for the rank classes seen
// at fewer than 3 counts that take the slot's law times their ratio to it (cpu_relative),
// their burst as a share of the phase's mean CPU per rank instead, fitted as a law of P over
// every count (the mean over the ranks making any of the phase's calls of the sum of their
// bursts). Kept when that law is one the traces support (kNoLawLooError).
void FitClassesToRankTotal(PhaseModel* pm, const std::vector<std::vector<SlotCountData>>& data,
                           const std::vector<int>& counts,
                           const std::vector<std::vector<std::string>>& masks) {
  pm->rank_cpu_total = Quantity{};
  if (pm->block || pm->scheduled || counts.size() < 3) return;
  auto needs = [](const SlotModel::ClassCompute& cc) {
    return cc.cpu_relative > 0 && cc.cpu_ns.model.training.size() < 3;
  };
  auto slot_needs = [](const SlotModel& s) {
    return s.cpu_ns.present && !s.cpu_ns.model.training.empty() &&
           s.cpu_ns.model.training.size() < 3 && !(s.cpu_ns_per_byte > 0) && !s.cpu_per_occurrence;
  };
  bool any = false;
  for (const SlotModel& s : pm->slots) {
    any = any || slot_needs(s);
    for (const auto& cc : s.class_compute) any = any || needs(cc);
  }
  if (!any) return;
  std::vector<double> mean_total(counts.size(), 0.0);
  std::vector<regression::Point> pts;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    double sum = 0;
    int ranks = 0;
    for (int r = 0; r < counts[ci]; ++r) {
      double t = 0;
      bool makes = false;
      for (std::size_t s = 0; s < pm->slots.size(); ++s) {
        const phases::PhaseEvent* e = data[s][ci].event_of_rank[static_cast<std::size_t>(r)];
        if (!e) continue;
        makes = true;
        if (e->compute.cpu_ns.n > 0) t += e->compute.cpu_ns.mean;
      }
      if (makes) {
        sum += t;
        ++ranks;
      }
    }
    if (ranks == 0 || !(sum > 0)) return;
    mean_total[ci] = sum / ranks;
    pts.push_back({static_cast<double>(counts[ci]), mean_total[ci]});
  }
  Quantity total = FitQuantity(pts,
                               "phase " + std::to_string(pm->index) +
                                   ": CPU time per rank and occurrence, over all its calls (ns)",
                               Precision::kMeasured);
  if (!total.present || total.model.loo_error > kNoLawLooError) return;
  pm->rank_cpu_total = std::move(total);
  // The mean over the counts where slot `s` was made (by the ranks of `mask`, or by any) of
  // the mean burst before it over the phase's mean CPU per rank; 0 where it never was.
  auto share_of = [&](std::size_t s, const std::string* mask) {
    double share = 0;
    int seen = 0;
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      double b = 0;
      int n = 0;
      for (int r = 0; r < counts[ci]; ++r) {
        const phases::PhaseEvent* e = data[s][ci].event_of_rank[static_cast<std::size_t>(r)];
        if (!e || (mask && masks[ci][static_cast<std::size_t>(r)] != *mask)) continue;
        b += e->compute.cpu_ns.n > 0 ? e->compute.cpu_ns.mean : 0;
        ++n;
      }
      if (n == 0) continue;
      share += b / n / mean_total[ci];
      ++seen;
    }
    return seen > 0 ? share / seen : 0.0;
  };
  for (std::size_t s = 0; s < pm->slots.size(); ++s) {
    SlotModel& slot = pm->slots[s];
    if (slot_needs(slot)) slot.cpu_of_rank_total = share_of(s, nullptr);
    for (auto& cc : slot.class_compute) {
      if (needs(cc)) cc.cpu_of_rank_total = share_of(s, &cc.mask);
    }
  }
}

// `block_length`: BlockLength, or 0 to model the phase call by call.
// Ranks whose own order of the phase's calls is not the slots' order: a rotation of it (the
// alignment took their loop body from another call: a red-black exchange, where even ranks
// send and then receive and odd ranks receive and then send, is one body seen from two
// starts) or another permutation (AlignClasses: a checkerboard exchange, where in each
// direction the ranks with x + y even on the grid send first). Synthesized in one order for
// every rank, their blocking calls deadlock or serialize. Sets pm->reordered_ranks and
// own_order when those ranks keep one order - a rotation of the slots' when one holds every
// such rank's calls, else the merge of their orders - and are one RankSet at every traced
// count; a warning when they are no such set. A rank that makes only some of the calls (an
// end of a line that has no partner on one side) can fit both orders: it fits either.
// Ranks whose own order leaves a request pending across the occurrence keep the slots' order.
bool FindReorderedRanks(const std::vector<ClassRef>& classes,
                        const std::vector<std::vector<int>>& assignment,
                        const std::vector<int>& order, const std::vector<int>& counts,
                        const std::vector<std::vector<const phases::RankPhase*>>& rank_phases,
                        const std::string& label, PhaseModel* pm,
                        std::vector<std::string>* warnings) {
  const std::size_t n = order.size();
  std::vector<int> position(order.empty() ? 0 : *std::max_element(order.begin(), order.end()) + 1,
                            -1);
  for (std::size_t k = 0; k < n; ++k) position[order[k]] = static_cast<int>(k);
  // Per class: its slots' positions in its own order (empty: some call has no slot).
  std::vector<std::vector<int>> seq(classes.size());
  std::vector<std::size_t> reordered;  // the classes not in slot order
  bool any_in_slot_order = false;
  for (std::size_t c = 0; c < classes.size(); ++c) {
    std::vector<int> p;
    for (int id : assignment[c]) {
      p.push_back(id >= 0 && id < static_cast<int>(position.size()) ? position[id] : -1);
    }
    if (p.empty() || *std::min_element(p.begin(), p.end()) < 0) continue;
    if (std::is_sorted(p.begin(), p.end())) {
      any_in_slot_order = true;
    } else {
      // A request created in the rank's own order and completed after the occurrence ends:
      // reordered, the synthesized run would leave it pending.
      for (int r : classes[c].ranks) {
        std::int64_t pending = 0;
        for (const phases::PhaseEvent& e : rank_phases[classes[c].count_index][r]->events) {
          if (CreatesRequest(e.kind)) ++pending;
          if (IsCompletion(e.kind)) pending -= e.requests;
          if (pending < 0) break;
        }
        if (pending != 0) return false;
      }
      reordered.push_back(c);
    }
    seq[c] = std::move(p);
  }
  // No rank in slot order: every rank keeps one order (a loop rotated to close, BuildPhase),
  // and the slots' order is every rank's.
  if (reordered.empty() || !any_in_slot_order) return false;
  // Whether class `c`'s calls come in the order `at` gives (at[slot]: its place).
  auto follows = [&](std::size_t c, const std::vector<std::size_t>& at) {
    for (std::size_t i = 1; i < seq[c].size(); ++i) {
      if (at[static_cast<std::size_t>(seq[c][i])] <= at[static_cast<std::size_t>(seq[c][i - 1])])
        return false;
    }
    return true;
  };
  std::vector<std::size_t> own, at(n);
  for (std::size_t start = 1; start < n && own.empty(); ++start) {
    for (std::size_t k = 0; k < n; ++k) at[(start + k) % n] = k;
    if (std::all_of(reordered.begin(), reordered.end(),
                    [&](std::size_t c) { return follows(c, at); })) {
      for (std::size_t k = 0; k < n; ++k) own.push_back((start + k) % n);
    }
  }
  if (own.empty()) {
    // The merge of the reordered classes' orders: each of their calls after the one they
    // make before it, the others in slot order (Kahn's algorithm, the first slot first).
    std::vector<std::set<std::size_t>> after(n);
    std::vector<std::size_t> before(n, 0);
    for (std::size_t c : reordered) {
      for (std::size_t i = 1; i < seq[c].size(); ++i) {
        const auto from = static_cast<std::size_t>(seq[c][i - 1]);
        const auto to = static_cast<std::size_t>(seq[c][i]);
        if (after[from].insert(to).second) ++before[to];
      }
    }
    std::set<std::size_t> ready;
    for (std::size_t k = 0; k < n; ++k) {
      if (before[k] == 0) ready.insert(k);
    }
    while (!ready.empty()) {
      const std::size_t k = *ready.begin();
      ready.erase(ready.begin());
      own.push_back(k);
      for (std::size_t next : after[k]) {
        if (--before[next] == 0) ready.insert(next);
      }
    }
    if (own.size() != n) {
      warnings->push_back(label +
                          ": some ranks make its calls in orders of their own that no one "
                          "order holds; they are synthesized in the order of the others, which "
                          "can deadlock blocking calls");
      return false;
    }
    for (std::size_t k = 0; k < n; ++k) at[own[k]] = k;
  }
  // Per count, per rank: 1 in slot order only, 2 in the own order only, 3 either, 0 unknown.
  std::vector<std::vector<int>> fit(counts.size());
  for (std::size_t ci = 0; ci < counts.size(); ++ci) fit[ci].assign(counts[ci], 0);
  for (std::size_t c = 0; c < classes.size(); ++c) {
    if (seq[c].empty()) continue;
    const int f = (std::is_sorted(seq[c].begin(), seq[c].end()) ? 1 : 0) | (follows(c, at) ? 2 : 0);
    for (int r : classes[c].ranks) fit[classes[c].count_index][r] = f;
  }
  for (RankSet set : AllRankSets()) {
    bool fits = true;
    for (std::size_t ci = 0; ci < counts.size() && fits; ++ci) {
      for (int r = 0; r < counts[ci] && fits; ++r) {
        if (fit[ci][r] == 0) continue;
        fits = (fit[ci][r] & (InRankSet(set, r, counts[ci]) ? 2 : 1)) != 0;
      }
    }
    if (fits) {
      pm->reordered_ranks = set;
      pm->own_order = std::move(own);
      return false;
    }
  }
  std::string where;
  const std::size_t last = counts.size() - 1;
  int shown = 0, total = 0;
  for (int r = 0; r < counts[last]; ++r) {
    if (fit[last][r] != 2) continue;
    ++total;
    if (shown < 8) where += (shown++ ? ", " : "") + std::to_string(r);
  }
  if (total > shown) where += ", ...";
  warnings->push_back(label + ": ranks " + where + " of " + std::to_string(counts[last]) +
                      " make its calls in an order of their own, and they are neither the even "
                      "nor the odd ranks, rank 0, the last rank, all but rank 0, nor the ranks "
                      "of one parity on an MPI_Dims_create grid at every traced count; they are "
                      "synthesized in the order of the others, which can deadlock blocking calls");
  return true;
}

// When no relevant phase occurs at every count: the counts at which the relevant phase
// found at the most counts occurs (at least 3), as advice - a program whose communication
// depends on the kind of count (a recursive doubling that folds the ranks beyond the largest
// power of two, a grid that is square only at squares) is modelled from counts of one kind.
// Empty when no relevant phase occurs at 3 counts or its counts are not those of one kind.
std::string CountsThatCorrespond(const phases::Correspondence& corr,
                                 const std::vector<int>& counts) {
  const phases::PhaseGroup* best = nullptr;
  std::size_t most = 0;
  for (const phases::PhaseGroup& group : corr.groups) {
    if (!group.relevant) continue;
    std::size_t present = 0;
    for (int id : group.phase_ids) present += id >= 0;
    if (present > most) {
      most = present;
      best = &group;
    }
  }
  if (!best || most < 3) return "";
  std::vector<int> at;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    if (best->phase_ids[ci] >= 0) at.push_back(counts[ci]);
  }
  auto all = [&](auto&& pred) { return std::all_of(at.begin(), at.end(), pred); };
  auto root_is_integer = [](int n, int k) {
    const auto r = static_cast<int>(std::lround(std::pow(n, 1.0 / k)));
    int v = 1;
    for (int i = 0; i < k; ++i) v *= r;
    return v == n;
  };
  const std::vector<std::pair<std::string, std::function<bool(int)>>> kinds = {
      {"powers of two", [](int n) { return n > 0 && (n & (n - 1)) == 0; }},
      {"squares", [&](int n) { return root_is_integer(n, 2); }},
      {"cubes", [&](int n) { return root_is_integer(n, 3); }}};
  // Only a kind that tells the counts apart: every count where the phase occurs is of it,
  // every other count is not.
  std::string kind;
  for (const auto& [name, is] : kinds) {
    if (!all(is)) continue;
    bool others = false;
    for (int n : counts) {
      others = others || (is(n) && std::find(at.begin(), at.end(), n) == at.end());
    }
    if (!others) {
      kind = " (the " + name + ")";
      break;
    }
  }
  if (kind.empty()) return "";
  return "\nThe phase \"" + best->key + "\" occurs at " + JoinCounts(at) + kind +
         ": if the program communicates differently at other kinds of count, model it from the "
         "traces at those counts alone and predict counts of the same kind.";
}

// Which phases can come right after each phase of a run (a loop's last phase before its
// first, when it repeats), and right before; kRunEnd stands for the run's start and end.
constexpr int kRunEnd = -1;
struct Adjacency {
  std::map<int, std::set<int>> next, prev;
};
Adjacency RunAdjacency(const phases::Sequence& run) {
  Adjacency adj;
  auto link = [&](const std::set<int>& from, const std::set<int>& to) {
    for (int a : from) {
      for (int b : to) {
        adj.next[a].insert(b);
        adj.prev[b].insert(a);
      }
    }
  };
  // The first and last phases of a sequence; links inside it.
  // Totals count over every execution of the enclosing body (`executions` of them): an item
  // repeats within one when its total exceeds them.
  const auto walk = [&](const auto& self, const phases::Sequence& seq,
                        std::int64_t executions) -> std::pair<std::set<int>, std::set<int>> {
    std::set<int> first, last;
    bool empty = true;
    for (const phases::SequenceItem& item : seq) {
      std::set<int> f, l;
      if (item.is_loop()) {
        std::tie(f, l) = self(self, item.body, std::max<std::int64_t>(1, item.total));
      } else {
        f = l = {item.phase};
      }
      if (item.total > executions) link(l, f);
      if (f.empty()) continue;
      if (empty) {
        first = f;
      } else {
        link(last, f);
      }
      last = l;
      empty = false;
    }
    return {first, last};
  };
  const auto [first, last] = walk(walk, run, 1);
  link({kRunEnd}, first);
  link(last, {kRunEnd});
  return adj;
}

// Per rank, for one occurrence of a phase: requests it leaves pending at its end, and
// completions it makes with none of its own pending (of requests made before it).
struct RequestCarry {
  std::vector<int> left, owed;
};
RequestCarry CarryOf(const phases::Phase& ph, int nprocs) {
  RequestCarry c{std::vector<int>(static_cast<std::size_t>(nprocs), 0),
                 std::vector<int>(static_cast<std::size_t>(nprocs), 0)};
  for (const phases::RankPhase& rp : ph.ranks) {
    if (rp.rank < 0 || rp.rank >= nprocs) continue;
    int pending = 0, owed = 0;
    for (const phases::PhaseEvent& e : rp.events) {
      if (CreatesRequest(e.kind)) ++pending;
      if (IsCompletion(e.kind)) {
        const int own = std::min(pending, e.requests);
        pending -= own;
        owed += e.requests - own;
      }
    }
    c.left[static_cast<std::size_t>(rp.rank)] = pending;
    c.owed[static_cast<std::size_t>(rp.rank)] = owed;
  }
  return c;
}

// Per phase of one count's run, the requests it hands on across its boundaries as the model
// builds it. A phase that owes what it leaves (a loop body cut after its receive) either keeps
// its calls as traced and carries them, when every phase before and after it agrees (a chain
// of swaps cut by phase boundaries: LAMMPS's receive posted alone before a loop of exchange
// steps whose every step posts the next step's receive, and whose last hands it to the phase
// after the loop), or is closed by rotating it (ClosedRotation) and carries nothing. Starting
// from every such phase carrying, the ones that disagree with a neighbour are rotated until
// none does. `chained`: the phases that keep carrying. The others carry what they trace.
struct ChainCarry {
  std::map<int, RequestCarry> carry;  // modelled phases only
  std::set<int> chained;
};
bool AllZero(const std::vector<int>& v) {
  return std::all_of(v.begin(), v.end(), [](int x) { return x == 0; });
}
ChainCarry ChainCarries(const phases::Signature& sig, int nprocs, const std::set<int>& modelled,
                        const Adjacency& adj) {
  ChainCarry cc;
  for (int id : modelled) {
    const phases::Phase* ph = sig.FindPhase(id);
    if (!ph) continue;
    RequestCarry c = CarryOf(*ph, nprocs);
    if (c.left == c.owed && !AllZero(c.left)) cc.chained.insert(id);
    cc.carry.emplace(id, std::move(c));
  }
  const RequestCarry zero{std::vector<int>(static_cast<std::size_t>(nprocs), 0),
                          std::vector<int>(static_cast<std::size_t>(nprocs), 0)};
  auto effective = [&](int id) -> const RequestCarry* {
    auto it = cc.carry.find(id);
    if (it == cc.carry.end()) return nullptr;
    if (it->second.left == it->second.owed && !cc.chained.count(id)) return &zero;
    return &it->second;
  };
  // An edge a -> b agrees when both are modelled and b owes exactly what a leaves.
  auto agrees = [&](int a, int b) {
    const RequestCarry* ca = effective(a);
    const RequestCarry* cb = effective(b);
    return ca && cb && ca->left == cb->owed;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = cc.chained.begin(); it != cc.chained.end();) {
      const int id = *it;
      bool ok = adj.next.count(id) && adj.prev.count(id);
      for (int b : ok ? adj.next.at(id) : std::set<int>{}) ok = ok && agrees(id, b);
      for (int a : ok ? adj.prev.at(id) : std::set<int>{}) ok = ok && agrees(a, id);
      if (ok) {
        ++it;
      } else {
        it = cc.chained.erase(it);
        changed = true;
      }
    }
  }
  for (auto& [id, c] : cc.carry) {
    if (c.left == c.owed && !cc.chained.count(id)) c = zero;
  }
  return cc;
}

// One count's run as a phase's build sees it across the phase's boundaries, computed once
// for every phase from the phases the model builds (`modelled`): which phase can follow
// which, what each modelled phase carries across its boundaries (CarriedAcrossPhases), and
// whether the run is self-scheduled: some modelled phase replies to the latest wildcard
// source and some receives from any source. Then the master's MPI_ANY_SOURCE receives form a
// pool that its completions drain whichever phase posted them (the hand-out posts one per
// worker, each reply re-posts one, the last replies post none), and they stay as they are.
// Replies only in a phase left out drain nothing in the synthesized run.
struct RunCarries {
  Adjacency adj;
  ChainCarry chain;
  bool wildcard_pool = false;
};
// Whether the run is self-scheduled at some count (RunCarries::wildcard_pool).
bool WildcardPool(const std::vector<RunCarries>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const RunCarries& r) { return r.wildcard_pool; });
}
std::vector<RunCarries> RunCarriesOf(const std::vector<const phases::Signature*>& sigs,
                                     const std::vector<int>& counts,
                                     const std::vector<std::set<int>>& modelled) {
  std::vector<RunCarries> out(counts.size());
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    out[ci].adj = RunAdjacency(sigs[ci]->sequence);
    out[ci].chain = ChainCarries(*sigs[ci], counts[ci], modelled[ci], out[ci].adj);
    bool replies = false, wildcard = false;
    for (const phases::Phase& ph : sigs[ci]->phases) {
      if (!modelled[ci].count(ph.id)) continue;
      for (const phases::RankPhase& rp : ph.ranks) {
        for (const phases::PhaseEvent& e : rp.events) {
          replies = replies || e.reply;
          wildcard = wildcard || (e.kind == EventKind::kIrecv && e.peer == kAnySource);
        }
      }
    }
    out[ci].wildcard_pool = replies && wildcard;
  }
  return out;
}

// Whether the requests a phase leaves pending (`out`) or completes from before it (`in`) are
// those of the phases next to it in the run, at every count: a halo swap cut by a phase
// boundary (its receive posted at the end of one phase, its send and wait at the start of the
// next, as LAMMPS's swaps are where a loop of steps meets a re-neighbouring step). Then the
// calls stay, and the synthesized run carries the request from one phase to the next, as the
// program does; dropped, every such boundary lost a message. Every phase next to it must be
// modelled (`runs`: per count, built from the phase ids the model builds) and carry the same
// requests per rank, and so must the phases next to those (ChainCarries). `as_traced`: the
// phase owes what it leaves and carries both at every count, so it is not rotated.
struct Carried {
  bool out = false, in = false, as_traced = false;
  bool operator==(const Carried&) const = default;
};
Carried CarriedAcrossPhases(const phases::PhaseGroup& group, const std::vector<RunCarries>& runs) {
  bool out = true, in = true, as_traced = true;
  for (std::size_t ci = 0; ci < runs.size() && (out || in); ++ci) {
    const int id = group.phase_ids[ci];
    const Adjacency& adj = runs[ci].adj;
    const ChainCarry& chain = runs[ci].chain;
    auto carry_of = [&](int phase) -> const RequestCarry* {
      auto it = chain.carry.find(phase);
      return it == chain.carry.end() ? nullptr : &it->second;
    };
    const RequestCarry* own = carry_of(id);
    if (!own) return {};  // not among the phases the model builds
    const RequestCarry& mine = *own;
    as_traced = as_traced && chain.chained.count(id) > 0;
    // Every phase after `a` owes what `a` leaves, and every phase before each of those
    // leaves it.
    auto hands_on = [&](int a) {
      const RequestCarry* ca = carry_of(a);
      if (!ca || AllZero(ca->left) || !adj.next.count(a)) return false;
      for (int b : adj.next.at(a)) {
        const RequestCarry* cb = carry_of(b);
        if (!cb || cb->owed != ca->left || !adj.prev.count(b)) return false;
        for (int a2 : adj.prev.at(b)) {
          const RequestCarry* c2 = carry_of(a2);
          if (!c2 || c2->left != cb->owed) return false;
        }
      }
      return true;
    };
    out = out && hands_on(id);
    if (in) {
      bool all = !AllZero(mine.owed) && adj.prev.count(id);
      for (int a : all ? adj.prev.at(id) : std::set<int>{}) all = all && hands_on(a);
      in = all;
    }
  }
  return {out, in, as_traced && out && in};
}

// How a recursive doubling folds at counts that are not powers of two (BuildPhaseAs): onto
// the first P' = 2^floor(log2(P)) ranks (rank v >= P' with v - P', as written by hand), or in
// pairs (of the first 2(P - P') ranks the even ones onto rank + 1, as MPI libraries fold).
enum class FoldAlign { kNone, kOntoFirst, kPairs };

// Whether a message between `rank` and `peer` at `nprocs` ranks, not a power of two, is
// the fold of a recursive doubling folding as `fold` says.
bool Folds(FoldAlign fold, std::int64_t nprocs, std::int64_t rank, std::int64_t peer) {
  const auto n = static_cast<std::uint64_t>(nprocs);
  if (fold == FoldAlign::kNone || std::has_single_bit(n)) return false;
  const auto top = static_cast<std::int64_t>(std::bit_floor(n));
  if (fold == FoldAlign::kPairs) {
    return std::max(rank, peer) < 2 * (nprocs - top) && (rank ^ peer) == 1;
  }
  return std::max(rank, peer) >= top && std::abs(rank - peer) == top;
}

// The side of a fold `rank` is on: 1 for the rank that folds away (from P' up; in pairs, the
// even one), 0 for the one it folds onto.
std::int64_t FoldSide(FoldAlign fold, std::int64_t nprocs, std::int64_t rank) {
  if (fold == FoldAlign::kPairs) return (rank & 1) == 0;
  return rank >= static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(nprocs)));
}

// The rank a recursive doubling folded in pairs exchanges as, after the fold: rank / 2 below
// 2(P - P'), rank - (P - P') from there (the rank itself at a power of two).
std::int64_t RenumberedAfterPairFold(std::int64_t nprocs, std::int64_t rank) {
  const auto rem =
      nprocs - static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(nprocs)));
  return rank < 2 * rem ? rank / 2 : rank - rem;
}

PhaseBuild BuildPhaseAs(int index, const phases::PhaseGroup& group,
                        const std::vector<const phases::Signature*>& sigs,
                        const std::vector<int>& counts, const std::vector<RunCarries>& runs,
                        std::size_t block_length, bool strict_open_grids = false,
                        bool bit_sides = false, const std::vector<OutsideCollective>& outside = {},
                        FoldAlign fold = FoldAlign::kNone, bool dissemination = false) {
  PhaseBuild build;
  PhaseModel& pm = build.model;
  pm.index = index;
  pm.ids = group.phase_ids;
  pm.relevant = group.relevant;
  std::vector<std::vector<const phases::RankPhase*>> rank_phases(counts.size());
  std::vector<ClassRef> classes;
  pm.block = block_length > 0;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const phases::Phase* phase = sigs[ci]->FindPhase(group.phase_ids[ci]);
    if (!phase) {
      throw UserError("the signature at " + std::to_string(counts[ci]) +
                      " processes has no phase " + std::to_string(group.phase_ids[ci]));
    }
    pm.traced_time_s.push_back(phase->total_time_s);
    if (ci + 1 == counts.size()) pm.description = phase->description;
    const CommLookup comms(*sigs[ci]);
    rank_phases[ci].assign(counts[ci], nullptr);
    // Classes: the same calls at the same displacements (so ranks whose loop starts at a
    // different call, or whose neighbours wrap around, align on their own).
    std::map<std::pair<std::vector<Token>, std::vector<std::int64_t>>, std::vector<int>> by_tokens;
    for (const phases::RankPhase& rp : phase->ranks) {
      if (rp.rank < 0 || rp.rank >= counts[ci]) continue;
      rank_phases[ci][rp.rank] = &rp;
      std::vector<Token> tokens;
      std::vector<std::int64_t> disps;
      const std::size_t used =
          pm.block ? std::min(block_length, rp.events.size()) : rp.events.size();
      for (std::size_t i = 0; i < used; ++i) {
        tokens.push_back(TokenOf(rp.events[i], comms));
        disps.push_back(Displacement(rp.events[i], rp.rank));
      }
      by_tokens[{tokens, disps}].push_back(rp.rank);
    }
    for (auto& [key, ranks] : by_tokens) {
      classes.push_back(ClassRef{static_cast<int>(ci), key.first, ranks});
    }
  }
  // Largest count first, then the longest sequences, then the most ranks.
  std::stable_sort(classes.begin(), classes.end(), [](const ClassRef& a, const ClassRef& b) {
    if (a.count_index != b.count_index) return a.count_index > b.count_index;
    if (a.tokens.size() != b.tokens.size()) return a.tokens.size() > b.tokens.size();
    return a.ranks.size() > b.ranks.size();
  });
  // The directions calls go in: offsets on the process grid that the phase's point-to-point
  // pairs lie on (found from all of them, before any slot exists), and for collectives on a
  // sub-communicator the grid dimensions it spans (a row, a column) - or, without a grid, how
  // its members are spaced (consecutive ranks, a fixed stride, neither).
  std::vector<patterns::CommMap> pair_maps(counts.size());
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    pair_maps[ci].nprocs = counts[ci];
    pair_maps[ci].dests.assign(counts[ci], {});
    for (int r = 0; r < counts[ci]; ++r) {
      const phases::RankPhase* rp = rank_phases[ci][r];
      if (!rp) continue;
      auto& dests = pair_maps[ci].dests[r];
      for (const phases::PhaseEvent& e : rp->events) {
        if (!IsPointToPoint(e.kind)) continue;
        if (e.peer >= 0 && e.peer < counts[ci]) dests.push_back(e.peer);
        if (e.kind == EventKind::kSendrecv && e.recv_peer >= 0 && e.recv_peer < counts[ci]) {
          dests.push_back(e.recv_peer);
        }
      }
      std::sort(dests.begin(), dests.end());
      dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    }
  }
  std::vector<CommLookup> lookups;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) lookups.emplace_back(*sigs[ci]);
  // With dissemination: per count, the sign s for which every rank sends to ranks
  // (rank + s 2^b) mod P, and apart that of the ranks it receives from (a dissemination
  // sends to rank - 2^b and receives from rank + 2^b); 0 where no sign does. A call's
  // direction is then its bit b: (rank - 2^b) mod P is also (rank + 2^c) mod P where
  // 2^b + 2^c = P, so the bit alone does not say the sign.
  std::vector<std::array<std::int64_t, 2>> shift_sign(counts.size(), {0, 0});
  auto is_receive = [](EventKind k) { return k == EventKind::kRecv || k == EventKind::kIrecv; };
  auto shift_bit = [](std::int64_t sign, std::int64_t rank, std::int64_t peer,
                      std::int64_t n) -> int {
    const auto x = static_cast<std::uint64_t>(((sign * (peer - rank)) % n + n) % n);
    return std::has_single_bit(x) ? std::countr_zero(x) : -1;
  };
  if (dissemination) {
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      const std::int64_t n = counts[ci];
      for (const int side : {0, 1}) {
        for (const std::int64_t sign : {-1, +1}) {
          bool ok = true;
          for (int r = 0; r < counts[ci] && ok; ++r) {
            const phases::RankPhase* rp = rank_phases[ci][r];
            if (!rp) continue;
            for (const phases::PhaseEvent& e : rp->events) {
              if (!IsPointToPoint(e.kind)) continue;
              std::int64_t peer = -1;
              if (e.kind == EventKind::kSendrecv) {
                peer = side == 0 ? e.peer : e.recv_peer;
              } else if (is_receive(e.kind) == (side == 1)) {
                peer = e.peer;
              }
              if (peer < 0 || peer >= n) continue;
              if (shift_bit(sign, r, peer, n) < 0) {
                ok = false;
                break;
              }
            }
          }
          if (ok) {
            shift_sign[ci][static_cast<std::size_t>(side)] = sign;
            break;
          }
        }
      }
    }
  }
  // By bit and side, ranks are counted from the root of the tree the pairs form at every
  // count (rank 0, or one named from either end, as the last rank): a tree rooted at P - 1
  // pairs v = (rank + 1) mod P with v XOR 2^b, which rank XOR 2^b does not show.
  // The same root is each level's first choice when its slot is fitted: one level alone can
  // fit several roots at the traced counts (rank 2's and rank 0's level 0 at even counts),
  // which part at others.
  std::vector<std::int64_t> tree_root(counts.size(), 0);
  std::optional<patterns::IndexRule> tree_root_rule;
  if (bit_sides) {
    tree_root_rule = patterns::FindTreeRoot(pair_maps);
    if (tree_root_rule) {
      for (std::size_t ci = 0; ci < counts.size(); ++ci) {
        tree_root[ci] = tree_root_rule->At(counts[ci]);
      }
    }
  }
  // Folded in pairs, ranks are counted as the exchange renumbers them after the fold.
  auto from_root = [&tree_root, &counts, fold](int ci, std::int64_t rank) -> std::int64_t {
    const std::int64_t n = counts[static_cast<std::size_t>(ci)];
    if (fold == FoldAlign::kPairs) return RenumberedAfterPairFold(n, rank);
    return (rank - tree_root[static_cast<std::size_t>(ci)] + n) % n;
  };
  auto direction_on = [&](const patterns::GridFrame* frame) -> DirectionFn {
    return [&, frame](int ci, int rank, const phases::PhaseEvent& e) -> Direction {
      const std::int64_t n = counts[static_cast<std::size_t>(ci)];
      if ((bit_sides || fold != FoldAlign::kNone || dissemination) && IsCompletion(e.kind) &&
          e.requests == 1) {
        // By bit and side, a wait for one request goes the way of the call before it that
        // made a request (a tree's isend to its parent, irecv from a child): so a level's
        // waits stay with the level.
        const phases::RankPhase* rp =
            rank_phases[static_cast<std::size_t>(ci)][static_cast<std::size_t>(rank)];
        if (rp && !rp->events.empty() && &e >= rp->events.data() &&
            &e < rp->events.data() + rp->events.size()) {
          for (auto k = static_cast<std::size_t>(&e - rp->events.data()); k-- > 0;) {
            const phases::PhaseEvent& q = rp->events[k];
            if (!CreatesRequest(q.kind)) continue;
            if (q.peer < 0 || q.peer >= n) break;
            if (Folds(fold, n, rank, q.peer)) {
              return Direction{8, FoldSide(fold, n, rank), static_cast<std::int64_t>(q.kind)};
            }
            if (dissemination) {
              const std::int64_t sign =
                  shift_sign[static_cast<std::size_t>(ci)][is_receive(q.kind) ? 1 : 0];
              const int b = sign != 0 ? shift_bit(sign, rank, q.peer, n) : -1;
              if (b < 0) break;
              return Direction{10, b, static_cast<std::int64_t>(q.kind)};
            }
            const std::int64_t v = from_root(ci, rank);
            const std::uint64_t x = static_cast<std::uint64_t>(v ^ from_root(ci, q.peer));
            if (x == 0 || (x & (x - 1)) != 0) break;
            const int b = std::countr_zero(x);
            return Direction{6, b, bit_sides ? (v >> b) & 1 : -1,
                             static_cast<std::int64_t>(q.kind)};
          }
        }
        return {};
      }
      if (IsPointToPoint(e.kind)) {
        if (e.peer < 0 || e.peer >= n) return {};
        if (frame) {
          Direction d = frame->Offset(rank, e.peer, n);
          if (!d.empty()) {
            d.insert(d.begin(), 0);
            return d;
          }
        }
        // With a fold, a message between the ranks from P' = 2^floor(log2(P)) up and the
        // first ones (rank +- P'), or in pairs between ranks 2i and 2i + 1 below 2(P - P'),
        // is the fold of a recursive doubling: its own call, by side, whatever bit it is at
        // this count.
        if (Folds(fold, n, rank, e.peer)) return Direction{7, FoldSide(fold, n, rank)};
        // With dissemination, a message (rank + s 2^b) mod P (s the sign of its side at this
        // count) is the step of bit b.
        if (dissemination) {
          const std::int64_t sign =
              shift_sign[static_cast<std::size_t>(ci)][is_receive(e.kind) ? 1 : 0];
          const int b = sign != 0 ? shift_bit(sign, rank, e.peer, n) : -1;
          return b >= 0 ? Direction{9, b} : Direction{4};
        }
        // Off any grid, a single-bit exchange (rank XOR 2^b) keeps its bit from one count to
        // the next: a butterfly loop of log2 steps that has more steps at a larger count
        // aligns step for step on the bits both counts have, whichever end it starts from.
        const std::int64_t v = from_root(ci, rank);
        const std::uint64_t x = static_cast<std::uint64_t>(v ^ from_root(ci, e.peer));
        if (x != 0 && (x & (x - 1)) == 0) {
          // With bit_sides, which side of the pair the rank is on too (its bit b clear or
          // set): a binomial tree's receive from a child (rank + 2^b) and its receive from
          // its parent (rank - 2^b) are different calls.
          const int b = std::countr_zero(x);
          if (bit_sides) return Direction{3, b, (v >> b) & 1};
          return Direction{3, b};
        }
        // Without a grid, every other call (a transpose partner, a message to itself) is one
        // direction, so that it is not aligned with a butterfly step.
        if (!frame) return Direction{4};
        return {};
      }
      if (!IsCollective(e.kind)) return {};
      const std::vector<std::int32_t>* members =
          lookups[static_cast<std::size_t>(ci)].SubMembers(e.comm);
      if (!members || members->size() < 2) return {};
      if (frame) {
        const std::int64_t mask = frame->VaryingDims(*members, n);
        return mask < 0 ? Direction{} : Direction{1, mask};
      }
      const std::int64_t stride = (*members)[1] - (*members)[0];
      bool even = stride > 0;
      for (std::size_t k = 2; k < members->size() && even; ++k) {
        even = (*members)[k] - (*members)[k - 1] == stride;
      }
      return Direction{2, even ? (stride == 1 ? 1 : 2) : 3};
    };
  };
  // Several grids can explain the pairs about as well at the traced counts (a 3-D halo at 4,
  // 9, 25 ranks is also a square one; a periodic frame folds +1 and -1 on an extent of 2); on
  // the wrong one the same call goes different ways at different counts. The alignment on
  // each tells them apart: the grid whose slots each keep the fewest directions (then the
  // fewest slots), the one with the fewest offsets on ties; one whose every slot keeps one
  // direction ends the search.
  const std::vector<patterns::GridFrame> frames =
      patterns::FindGridFrames(pair_maps, strict_open_grids);
  constexpr std::size_t kMaxFrames = 24;
  std::vector<SlotAcc> accs;
  std::vector<int> order;
  std::vector<std::vector<int>> assignment;
  std::pair<std::size_t, std::size_t> best_cost{SIZE_MAX, SIZE_MAX};
  // When every grid leaves some slot with calls that go different ways, the alignment off
  // any grid is tried last: a butterfly along the rows of a power-of-two grid (rank XOR 2^b)
  // goes +1 on even and -1 on odd columns on every grid, but keeps its bit at every count.
  const std::size_t tries = std::max<std::size_t>(1, std::min(frames.size(), kMaxFrames));
  // With bit_sides only the alignment off any grid is tried, strictly.
  const bool off_grid = bit_sides || fold != FoldAlign::kNone || dissemination;
  for (std::size_t f = off_grid ? tries : 0; f <= tries; ++f) {
    if (f == tries && !off_grid && (frames.empty() || best_cost.first == 0)) break;
    std::vector<SlotAcc> a;
    std::vector<int> o;
    const patterns::GridFrame* frame = !off_grid && f < frames.size() ? &frames[f] : nullptr;
    const bool strict =
        off_grid ||
        (strict_open_grids && frame != nullptr && frame->grid.ndims >= 2 &&
         std::none_of(frame->periodic.begin(), frame->periodic.end(), [](bool p) { return p; }));
    auto asg = AlignClasses(classes, rank_phases, direction_on(frame), strict, &a, &o);
    if (strict && !off_grid) MergeSameDirectionSlots(&a, &asg, &o);
    std::size_t conflicts = 0;
    for (const SlotAcc& acc : a) {
      if (acc.directions.size() > 1) conflicts += acc.directions.size() - 1;
    }
    const std::pair<std::size_t, std::size_t> cost{conflicts, o.size()};
    if (cost < best_cost) {
      best_cost = cost;
      accs = std::move(a);
      order = std::move(o);
      assignment = std::move(asg);
    }
    // The first frame whose slots each keep one direction ends the search (on the second
    // try an open grid keeps one direction per slot by opening slots).
    if (conflicts == 0) break;
  }
  if (bit_sides) MirrorTopBitLevel(accs, assignment, &order);
  if (fold != FoldAlign::kNone) GatherBitSteps(accs, assignment, &order);
  auto place = [&]() {
    std::vector<int> position(accs.size(), -1);
    for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
    build.data.assign(order.size(), std::vector<SlotCountData>(counts.size()));
    for (std::size_t s = 0; s < order.size(); ++s) {
      for (std::size_t ci = 0; ci < counts.size(); ++ci) {
        build.data[s][ci].event_of_rank.assign(counts[ci], nullptr);
        if (pm.block) build.data[s][ci].more_of_rank.assign(counts[ci], {});
      }
    }
    for (std::size_t c = 0; c < classes.size(); ++c) {
      const ClassRef& cls = classes[c];
      for (int r : cls.ranks) {
        const phases::RankPhase* rp = rank_phases[cls.count_index][r];
        for (std::size_t i = 0; i < cls.tokens.size(); ++i) {
          const int at = position[assignment[c][i]];
          if (at < 0) continue;
          SlotCountData& d = build.data[at][cls.count_index];
          d.event_of_rank[r] = &rp->events[i];
          if (pm.block) {
            for (std::size_t k = i + block_length; k < rp->events.size(); k += block_length) {
              d.more_of_rank[r].push_back(&rp->events[k]);
            }
          }
        }
      }
    }
  };
  place();
  // In a self-scheduled run, the master's MPI_ANY_SOURCE receives stay as they are
  // (RunCarries::wildcard_pool).
  const bool wildcard_pool = WildcardPool(runs);
  // A phase found by the signature may start in the middle of the loop body (a receive that
  // is posted at the end of one iteration and completed in the next). Synthesizing it as is
  // leaves the last occurrence's request unmatched, so the slots are rotated to the first
  // start at which no rank has a request pending across the occurrence boundary.
  std::set<int> carried;  // calls (by index in accs) kept across the phase's boundary
  const Carried carried_across = CarriedAcrossPhases(group, runs);
  // A phase that needs a rotation to close and whose messages do not all have their receives
  // in the occurrence is not closed by it: it hands requests on to the phases around it
  // (PeersBalanced), as below.
  if (wildcard_pool) {
    // kept as traced
  } else if (const std::size_t k = ClosedRotation(build.data, counts);
             k > 0 && PeersBalanced(build.data, counts) && !carried_across.as_traced) {
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end());
    place();
  } else if (!ClosedFrom(build.data, counts, 0)) {
    // No rotation closes it (a start-up phase that pre-posts the first iteration's receive,
    // whose matching send is in a partial last iteration that is not modelled): requests
    // that no call of the occurrence completes, on every rank that makes them, are left out,
    // so that the synthesized run stays balanced.
    // Likewise the calls that belong to requests created before the phase: a last phase
    // that completes the receive the loop before it pre-posted, and sends the message that
    // receive takes (the loop is rotated to be closed, so nothing is pre-posted any more).
    // Unless the phases around it carry the same requests (CarriedAcrossPhases).
    const std::vector<bool> dangling = DanglingSlots(build.data, counts);
    const bool carry_out = carried_across.out, carry_in = carried_across.in;
    const Orphans orphans = OrphanSlots(build.data, counts);
    std::vector<int> kept;
    for (std::size_t s = 0; s < order.size(); ++s) {
      const bool out = dangling[s] || orphans.to_pending[s], in = orphans.before[s];
      if ((!out || carry_out) && (!in || carry_in)) kept.push_back(order[s]);
      if ((out && carry_out) || (in && carry_in)) carried.insert(order[s]);
    }
    // A phase that is nothing but such calls (a receive posted alone before a loop whose
    // phase is closed by rotation: LAMMPS's EAM run) is left with no calls at all.
    if (kept.size() != order.size()) {
      // What the left-out calls carry at the largest count, as shares of the phase's.
      const std::size_t last = counts.size() - 1;
      double bytes = 0, cpu = 0, dropped_bytes = 0, dropped_cpu = 0;
      std::vector<std::pair<std::size_t, EventKind>> dropped;
      for (std::size_t s = 0; s < order.size(); ++s) {
        const bool left_out = std::find(kept.begin(), kept.end(), order[s]) == kept.end();
        double b = 0, c = 0;
        EventKind kind = EventKind::kCompute;
        for (const phases::PhaseEvent* e : build.data[s][last].event_of_rank) {
          if (!e) continue;
          kind = e->kind;
          if (IsCollective(e->kind) || e->kind == EventKind::kSend ||
              e->kind == EventKind::kIsend || e->kind == EventKind::kSendrecv) {
            b += e->bytes.mean;
          }
          if (e->compute.cpu_ns.n > 0) c += e->compute.cpu_ns.mean;
        }
        bytes += b;
        cpu += c;
        if (left_out) {
          dropped_bytes += b;
          dropped_cpu += c;
          dropped.emplace_back(s, kind);
        }
      }
      // "1-17 (irecv), 18-34 (send)": runs of consecutive calls of one kind.
      std::string names;
      for (std::size_t i = 0; i < dropped.size();) {
        std::size_t j = i;
        while (j + 1 < dropped.size() && dropped[j + 1].first == dropped[j].first + 1 &&
               dropped[j + 1].second == dropped[i].second) {
          ++j;
        }
        names += std::string(names.empty() ? "" : ", ") + std::to_string(dropped[i].first) +
                 (j > i ? "-" + std::to_string(dropped[j].first) : "") + " (" +
                 std::string(EventKindName(dropped[i].second)) + ")";
        i = j + 1;
      }
      build.dropped_bytes_share = bytes > 0 ? dropped_bytes / bytes : 0;
      build.dropped_cpu_share = kept.empty() ? 1.0 : cpu > 0 ? dropped_cpu / cpu : 0;
      char share[160];
      std::snprintf(share, sizeof share,
                    "%.1f%% of its bytes sent and %.1f%% of its compute at %d processes",
                    100 * build.dropped_bytes_share, 100 * build.dropped_cpu_share, counts[last]);
      build.warnings.push_back(
          "phase " + std::to_string(index) + ": call" + (dropped.size() > 1 ? "s " : " ") + names +
          (dropped.size() > 1 ? " are" : " is") + " left out of the model, " + share +
          (dropped.size() > 1 ? ": their" : ": its") +
          " requests are completed outside the phase (or made before it), in an order the "
          "model cannot carry from one phase to the next; " +
          (dropped.size() > 1 ? "they count" : "it counts") +
          " as unmodelled (`validate` prints the remainder)");
      order = std::move(kept);
      place();
    }
  }
  if (!pm.block && !pm.scheduled && !wildcard_pool) {
    build.unordered_ranks =
        FindReorderedRanks(classes, assignment, order, counts, rank_phases,
                           "phase " + std::to_string(index), &pm, &build.warnings);
  }
  // Per rank: which slots it makes ('1') - its class for the compute models.
  std::vector<std::vector<std::string>> masks(counts.size());
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    masks[ci].assign(counts[ci], std::string(order.size(), '0'));
    for (std::size_t s = 0; s < order.size(); ++s) {
      for (int r = 0; r < counts[ci]; ++r) {
        if (build.data[s][ci].event_of_rank[r]) masks[ci][r][s] = '1';
      }
    }
  }
  if (!pm.scheduled && !pm.block) {
    std::vector<std::vector<bool>> roots;
    for (std::size_t ci = 0; ci < counts.size(); ++ci)
      roots.push_back(RootRanks(build.data, ci, counts[ci]));
    if (RootsComputeApart(build.data, counts, roots)) {
      // The roots of the phase's rooted collectives are a class of their own (one more mask
      // character, '1' for a root; SlotModel::ClassCompute): the work a root does alone (it
      // combines what it gathered, reads the input it broadcasts) is not averaged over P.
      for (std::size_t ci = 0; ci < counts.size(); ++ci) {
        for (int r = 0; r < counts[ci]; ++r)
          masks[ci][r].push_back(roots[ci][static_cast<std::size_t>(r)] ? '1' : '0');
      }
    }
  }
  if (pm.reordered_ranks != RankSet::kNone) {
    // The reordered ranks are a class of their own (one more mask character, after the roots'):
    // a burst before the same call is the loop's work on one side and a few instructions
    // on the other (the even ranks compute before their send, the odd ones before their
    // receive).
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      for (int r = 0; r < counts[ci]; ++r)
        masks[ci][r].push_back(InRankSet(pm.reordered_ranks, r, counts[ci]) ? '1' : '0');
    }
  }
  std::vector<SubtreeEvidence> subtrees(order.size());
  for (std::size_t s = 0; s < order.size(); ++s) {
    bool direction_unknown = false;
    pm.slots.push_back(BuildSlot(pm, s, accs[order[s]], build.data[s], counts, sigs, masks,
                                 &direction_unknown, &subtrees[s], bit_sides, tree_root_rule,
                                 fold == FoldAlign::kPairs, dissemination));
    pm.slots.back().carried = carried.count(order[s]) > 0;
    if (direction_unknown) {
      build.warnings.push_back(
          "phase " + std::to_string(pm.index) + " call " + std::to_string(s) + " (" +
          std::string(EventKindName(pm.slots.back().kind)) +
          "): its root moves on communicators of 2 ranks at every traced count, where the next "
          "rank is the previous one: taken as moving forwards; trace a count whose "
          "communicator has 3 ranks or more to tell");
    }
  }
  // A tree whose messages carry their subtrees (SlotModel::subtree_bytes): at every count,
  // the messages of all the tree's levels were the same bytes per rank of the subtree they
  // carry, and at some count the subtrees differed in size (levels 0, 1, 2 carrying 1, 2, 4
  // blocks, or a subtree cut at P). A tree that sends one buffer per message is not: its
  // bytes per subtree rank halve from one level to the next. (One level alone cannot tell:
  // at 12 and 16 ranks the top level's single message is one buffer, or 4 and 8 blocks.)
  struct AtCount {  // over the levels at one count
    double unit_low, unit_high;
    std::int64_t smallest, largest;
  };
  std::map<double, AtCount> at_count;
  std::size_t levels = 0;
  for (const SubtreeEvidence& e : subtrees) {
    if (e.counts.empty()) continue;
    ++levels;
    for (const SubtreeEvidence::Count& c : e.counts) {
      auto [it, fresh] = at_count.try_emplace(c.p, AtCount{c.unit, c.unit, c.smallest, c.largest});
      if (fresh) continue;
      AtCount& a = it->second;
      a = {std::min(a.unit_low, c.unit), std::max(a.unit_high, c.unit),
           std::min(a.smallest, c.smallest), std::max(a.largest, c.largest)};
    }
  }
  bool carried_whole = levels > 0, differed = false;
  for (const auto& [p, a] : at_count) {
    carried_whole =
        carried_whole && a.unit_high - a.unit_low <= kSubtreeUnitTolerance * a.unit_high;
    differed = differed || a.largest > a.smallest;
  }
  for (std::size_t s = 0; carried_whole && differed && s < pm.slots.size(); ++s) {
    if (subtrees[s].counts.empty()) continue;
    SlotModel& slot = pm.slots[s];
    std::vector<regression::Point> units;
    for (const SubtreeEvidence::Count& c : subtrees[s].counts) units.push_back({c.p, c.unit});
    slot.subtree_bytes = true;
    slot.bytes =
        FitQuantity(units, SlotLabel(pm, s, slot) + ": bytes per message per rank of the subtree");
  }
  FitClassesToRankTotal(&pm, build.data, counts, masks);
  HarmonizeGrids(&pm);
  JoinPhaseGrid(&pm);
  JoinXorFields({&pm});
  ConfineToCommunicators(&pm, outside, &build.warnings);
  // Tags first: the directions below are paired by tag.
  DecideTags(&build, counts);
  PairAmbiguousDirections(&pm, &build.warnings);
  DecideCompletions(&build, counts);
  DecidePresence(&build, counts);
  return build;
}

PhaseBuild BuildPhase(int index, const phases::PhaseGroup& group,
                      const std::vector<const phases::Signature*>& sigs,
                      const std::vector<int>& counts, const std::vector<RunCarries>& runs,
                      const std::vector<OutsideCollective>& outside = {}) {
  // A phase that repeats one block of calls a number of times that changes with the count is
  // modelled as a block when its calls are the stages of one exchange (butterfly stages, one
  // exchange per other rank): each block slot's partners over the iterations are one
  // pattern. A loop body that merely has that shape - NAS CG's row reductions, transpose
  // exchange and dot products are all irecv, send, wait - mixes different communications in
  // one slot (a partner twice, the rank itself, 8-byte and vector messages), which no family
  // reproduces; it is modelled call by call, each step aligned with its own across counts.
  if (const std::size_t block_length = BlockLength(group, sigs, counts); block_length > 0) {
    try {
      return BuildPhaseAs(index, group, sigs, counts, runs, block_length, false, false, outside);
    } catch (const patterns::PatternFitError&) {
      // modelled call by call below
    }
  }
  // The other tries, in order, after the first: each builds the phase or throws.
  struct Try {
    bool strict_open_grids, bit_sides;
    FoldAlign fold;
    bool dissemination;
  };
  // A second try, on open grids by exact direction: a 27-point halo traced where no rank has
  // neighbours both ways along some dimension (8, 12 and 18 ranks: an extent of 2 along z)
  // has ranks whose n-th calls go up on some ranks and down on others; matched call for
  // call, no family reproduces them. A third, off any grid by bit and side: a binomial tree
  // written by hand (a reduction to rank 0 and a broadcast back) receives from rank + 2^b (a
  // child) and from rank - 2^b (its parent) with the same bit b; aligned as one call, a
  // child's receive and a parent's go in one slot, which no family reproduces. A fourth, off
  // any grid with the folds of a recursive doubling apart (fold_sides): at counts that are
  // not powers of two the ranks from P' = 2^floor(log2(P)) up send to rank - P' and receive
  // from it at the end, the first ranks the other way round, at another bit at each count;
  // aligned by bit or on a grid, the fold and the unfold share slots.
  // A fifth, the same with the folds MPI libraries make (in pairs: of the first 2(P - P')
  // ranks the even ones onto rank + 1, the others renumbered), whose steps are one bit
  // apart only in the renumbered ranks.
  // A sixth, off any grid by dissemination step: a rank sends to (rank - 2^b) mod P for each
  // 2^b < P (Bruck's allgather, a dissemination barrier), one step more at some counts than
  // at others; aligned by displacement, the step of 4 at 6 ranks (rank + 2) joins that of 2.
  constexpr Try kTries[] = {{true, false, FoldAlign::kNone, false},
                            {false, true, FoldAlign::kNone, false},
                            {false, false, FoldAlign::kOntoFirst, false},
                            {false, false, FoldAlign::kPairs, false},
                            {false, false, FoldAlign::kNone, true}};
  auto build_as = [&](const Try& t) {
    return BuildPhaseAs(index, group, sigs, counts, runs, 0, t.strict_open_grids, t.bit_sides,
                        outside, t.fold, t.dissemination);
  };
  PhaseBuild first;
  try {
    first = BuildPhaseAs(index, group, sigs, counts, runs, 0, false, false, outside);
  } catch (const patterns::PatternFitError&) {
    // Only codes the first try refused take the others.
    for (const Try& t : kTries) {
      try {
        return build_as(t);
      } catch (const UserError&) {
        // the first try's error says more
      }
    }
    throw;
  }
  // A first try that leaves some ranks in an order of their own that no rank set names
  // (synthesized in the others' order, they can deadlock) gives way to the first other try
  // that leaves none: a recursive doubling's folds aligned on a grid that happened to hold
  // them.
  if (first.unordered_ranks) {
    for (const Try& t : kTries) {
      try {
        PhaseBuild other = build_as(t);
        if (!other.unordered_ranks) return other;
      } catch (const UserError&) {
        // the first try's model stands
      }
    }
  }
  return first;
}

}  // namespace

bool PhaseModel::TotalledSlot(std::size_t slot) const {
  const Quantity& q = slots[slot].cpu_ns;
  return q.present && q.model.training.size() == ids.size() && !(slots[slot].cpu_ns_per_byte > 0);
}

namespace {

// The share of the ranks at N that `eq` gives a partner (an open mesh's boundary ranks have
// none along its dimension), over at most 65536 ranks spread evenly across the count.
double ShareWithPartner(const patterns::GeneralEquation& eq, std::int64_t nprocs) {
  if (nprocs < 1) return 0;
  const patterns::GeneralEquation::AtCount at = eq.At(nprocs);
  const std::int64_t samples = std::min<std::int64_t>(nprocs, 65536);
  std::int64_t with = 0;
  for (std::int64_t i = 0; i < samples; ++i) {
    if (at.NumDests(i * nprocs / samples) > 0) ++with;
  }
  return static_cast<double>(with) / static_cast<double>(samples);
}

// What one call of `s` moves on a rank making it at N, on average: (bytes sent + received,
// received). Every rank of a sendrecv packs its send, whatever its partner (MPI_PROC_NULL
// too); it receives the send's size when its source equation gives it a source: the receive
// half's own law is a mean that counts a boundary rank's empty receive as 0 B, and as a face
// law it cannot follow the share of such ranks as P grows (1/2 of a grid side of 2, 6/7 of
// one of 7). A receive posted without waiting (irecv) moves nothing yet; a collective its
// send and receive buffers (not the root's).
std::pair<double, double> MovedBytesAt(const SlotModel& s, std::int64_t nprocs) {
  switch (s.kind) {
    case EventKind::kSendrecv: {
      const double out = s.BytesAt(nprocs);
      const double in =
          s.recv_peer ? out * ShareWithPartner(*s.recv_peer, nprocs) : s.RecvBytesAt(nprocs);
      return {out + in, in};
    }
    case EventKind::kSend:
    case EventKind::kIsend:
      return {s.BytesAt(nprocs), 0.0};
    case EventKind::kRecv: {
      const double in = s.BytesAt(nprocs);
      return {in, in};
    }
    default:
      break;
  }
  if (IsCollective(s.kind)) {
    const double p = static_cast<double>(nprocs);
    const double in = s.recv_bytes.At(p);
    return {s.bytes.At(p) + in, in};
  }
  return {0.0, 0.0};
}

}  // namespace

double PhaseModel::DataBytesAt(std::size_t slot, std::int64_t nprocs, bool with_previous) const {
  double b = MovedBytesAt(slots[slot], nprocs).first;
  if (with_previous && slot > 0) b += MovedBytesAt(slots[slot - 1], nprocs).second;
  return b;
}

double PhaseModel::SlotCpuBaseAt(std::size_t slot, double p) const {
  const SlotModel& s = slots[slot];
  if (!(s.cpu_ns_per_byte > 0) || !(p > 0)) return 0;
  return s.cpu_bytes_base / p;
}

double PhaseModel::SlotCpuAt(std::size_t slot, double p, int side) const {
  const SlotModel& s = slots[slot];
  if (s.cpu_of_rank_total > 0 && rank_cpu_total.present) {
    return s.cpu_of_rank_total * rank_cpu_total.At(p, side);
  }
  if (!(s.cpu_ns_per_byte > 0)) return s.cpu_ns.At(p, side);
  double v = SlotCpuBaseAt(slot, p) +
             s.cpu_ns_per_byte * DataBytesAt(slot, std::llround(p), s.cpu_bytes_with_previous);
  if (side != 0) v *= std::max(0.0, 1.0 + side * s.cpu_bytes_loo_error);
  return std::isfinite(v) ? std::max(0.0, v) : 0.0;
}

double PhaseModel::CpuScaleAt(double p, int side) const {
  if (!cpu_total.present) return 1;
  double sum = 0;
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (TotalledSlot(s)) sum += SlotCpuAt(s, p);
  }
  double total = cpu_total.At(p, side);
  if (cpu_total_per_run) {
    const double occurrences = weight.At(p);
    if (!(occurrences > 0)) return 1;
    total /= occurrences;
  }
  return sum > 0 ? total / sum : 1;
}

std::int64_t FieldBits(patterns::BitField field, std::int64_t nprocs) {
  const std::int64_t n = nprocs < 1 ? 0 : std::bit_width(static_cast<std::uint64_t>(nprocs)) - 1;
  switch (field) {
    case patterns::BitField::kLowHalf:
      return (n + 1) / 2;
    case patterns::BitField::kHighHalf:
      return n / 2;
    case patterns::BitField::kRank:
      break;
  }
  return n;
}

std::int64_t BitSteps::BitsAt(std::int64_t nprocs) const {
  if (ceil_bits && nprocs > 1) return std::bit_width(static_cast<std::uint64_t>(nprocs - 1));
  return FieldBits(field, nprocs);
}

namespace {

// The bit of a slot that exchanges with rank XOR 2^b, or with (rank +- 2^b) mod P (a
// dissemination step), for one bit b counted from the field's bottom (both halves of a
// sendrecv), or -1.
std::int64_t SingleBit(const SlotModel& s) {
  auto bit_of = [](const std::optional<patterns::GeneralEquation>& eq) -> std::int64_t {
    if (!eq ||
        (eq->family != patterns::Family::kXorExchange &&
         eq->family != patterns::Family::kDissemination) ||
        eq->all_bits || eq->bits.size() != 1 || eq->bits[0].from_end) {
      return -1;
    }
    return eq->bits[0].index;
  };
  if (!IsPointToPoint(s.kind) || s.wildcard || s.reply) return -1;
  const std::int64_t b = bit_of(s.peer);
  if (b < 0) return -1;
  if (s.kind == EventKind::kSendrecv && bit_of(s.recv_peer) != b) return -1;
  return b;
}

// Whether the slot had a partner on some rank at `nprocs` (its training maps).
bool TracedAt(const SlotModel& s, int nprocs) {
  for (const patterns::CommMap& m : s.maps) {
    if (m.nprocs != nprocs) continue;
    for (const auto& d : m.dests) {
      if (!d.empty()) return true;
    }
  }
  return false;
}

// Alike calls of two steps (a completion waits for its step's requests however it counts them).
bool SameCall(const SlotModel& a, const SlotModel& b) {
  return a.kind == b.kind && a.sub_comm == b.sub_comm;
}

// A quantity's traced values (per rank, whatever the model fits).
std::map<double, double> TracedValues(const Quantity& q) {
  std::map<double, double> v;
  if (!q.present) return v;
  for (const regression::Point& pt : q.model.training) {
    v[pt.p] = q.divided_by_p && pt.p > 0 ? pt.y / pt.p : pt.y;
  }
  return v;
}

}  // namespace

std::vector<BitSteps> FindBitSteps(const PhaseModel& phase, std::span<const int> counts) {
  std::vector<BitSteps> runs;
  if (phase.block || phase.scheduled) return runs;
  const auto& slots = phase.slots;
  // Groups: a step's calls with one bit and the completions after them.
  struct Group {
    std::size_t first, length;
    std::int64_t bit;
  };
  std::vector<Group> groups;
  for (std::size_t s = 0; s < slots.size();) {
    const std::int64_t b = SingleBit(slots[s]);
    if (b < 0) {
      ++s;
      continue;
    }
    std::size_t e = s + 1;
    while (true) {
      while (e < slots.size() && SingleBit(slots[e]) == b) ++e;
      std::size_t w = e;
      while (w < slots.size() && IsCompletion(slots[w].kind)) ++w;
      // Calls with the same bit after the completions are the same step (a tree level's
      // isend and wait, then its irecv and wait).
      const bool more = w > e && w < slots.size() && SingleBit(slots[w]) == b;
      e = w;
      if (!more) break;
    }
    groups.push_back({s, e - s, b});
    s = e;
  }
  auto alike = [&](const Group& a, const Group& b) {
    if (a.length != b.length || a.first + a.length != b.first) return false;
    for (std::size_t k = 0; k < a.length; ++k) {
      if (!SameCall(slots[a.first + k], slots[b.first + k])) return false;
    }
    return true;
  };
  // The end of an ascending run of steps followed at once by the start of a descending one,
  // or the other way round, is one group of calls with that bit: a tree's reduction up to
  // the root and its broadcast back down (the root receives from its top child and sends
  // straight back), a broadcast by doubling (each rank receives once, at its highest bit,
  // then sends at every bit above: the receives' bits descend, the sends' ascend, bit 0's
  // receive and send meet). Split into the step of each run when its calls are the two
  // steps' beside it.
  for (std::size_t g = 1; g + 1 < groups.size(); ++g) {
    const Group prev = groups[g - 1], peak = groups[g], next = groups[g + 1];
    if ((prev.bit - peak.bit != 1 && peak.bit - prev.bit != 1) || next.bit != prev.bit ||
        prev.length + next.length != peak.length || prev.first + prev.length != peak.first ||
        peak.first + peak.length != next.first) {
      continue;
    }
    const Group up{peak.first, prev.length, peak.bit};
    const Group down{peak.first + prev.length, next.length, peak.bit};
    const Group prev_at{up.first - prev.length, prev.length, prev.bit};
    const Group next_at{down.first + down.length, next.length, next.bit};
    if (!alike(prev_at, up) || !alike(down, next_at)) continue;
    groups[g] = up;
    groups.insert(groups.begin() + static_cast<std::ptrdiff_t>(g) + 1, down);
    ++g;
  }
  for (std::size_t g = 0; g < groups.size();) {
    std::size_t e = g + 1;
    int dir = 0;
    while (e < groups.size() && alike(groups[e - 1], groups[e])) {
      const std::int64_t d = groups[e].bit - groups[e - 1].bit;
      if ((d != 1 && d != -1) || (dir != 0 && d != dir)) break;
      dir = static_cast<int>(d);
      ++e;
    }
    if (e - g >= 2) {
      BitSteps run;
      run.first_slot = groups[g].first;
      run.step_slots = groups[g].length;
      run.steps = e - g;
      run.ascending = dir > 0;
      run.low_bit = std::min(groups[g].bit, groups[e - 1].bit);
      run.top_bit = std::max(groups[g].bit, groups[e - 1].bit);
      const Group& top = run.ascending ? groups[e - 1] : groups[g];
      for (std::size_t k = 0; k < top.length; ++k) {
        const SlotModel& s = slots[top.first + k];
        if (SingleBit(s) >= 0) run.field = s.peer->bit_field;
      }
      // Growing: at every traced count the steps present are the field's bits from low_bit
      // up to its top, and the field's size differs between counts.
      auto follow = [&](bool ceil_bits) {
        run.ceil_bits = ceil_bits;
        std::set<std::int64_t> sizes;
        bool follows = !counts.empty();
        for (const int c : counts) {
          const std::int64_t bits = run.BitsAt(c);
          sizes.insert(bits);
          for (std::size_t k = g; k < e && follows; ++k) {
            bool traced = false;
            for (std::size_t i = 0; i < groups[k].length; ++i) {
              const SlotModel& s = slots[groups[k].first + i];
              traced = traced || (SingleBit(s) >= 0 && TracedAt(s, c));
            }
            follows = traced == (groups[k].bit < bits);
          }
        }
        const int largest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
        return follows && sizes.size() >= 2 && run.top_bit + 1 == run.BitsAt(largest);
      };
      run.grows = follow(false);
      if (!run.grows && run.field == patterns::BitField::kRank) {
        run.grows = follow(true);
        run.ceil_bits = run.grows;
      }
      runs.push_back(run);
    }
    g = e;
  }
  return runs;
}

namespace {

// What a slot computes before its call (the models and their spread), from `from`.
void CopyCompute(const SlotModel& from, SlotModel* to) {
  to->cpu_ns = from.cpu_ns;
  to->instructions = from.instructions;
  to->class_compute = from.class_compute;
  to->cpu_spread_between = from.cpu_spread_between;
  to->cpu_spread_persistent = from.cpu_spread_persistent;
  to->cpu_spread_within = from.cpu_spread_within;
  to->cpu_spread_shared = from.cpu_spread_shared;
  to->cpu_noise_shape = from.cpu_noise_shape;
  to->cpu_per_occurrence = from.cpu_per_occurrence;
  to->cpu_ns_per_byte = from.cpu_ns_per_byte;
  to->cpu_bytes_with_previous = from.cpu_bytes_with_previous;
  to->cpu_bytes_base = from.cpu_bytes_base;
  to->cpu_bytes_loo_error = from.cpu_bytes_loo_error;
  to->cpu_of_rank_total = from.cpu_of_rank_total;
}

// Steps by bit whose messages have the same sizes at every count both were traced at are
// one law: each takes the bytes of a step traced at more counts (the step for a bit that only
// the largest count has would otherwise keep that one count's value at every N).
// Dissemination steps that carry blocks (SlotModel::step_blocks): in a run of steps, at
// every traced count, each step's bytes (and its sources', for a sendrecv) are the same per
// block, min(2^b, P - 2^b) blocks for the step of bit b, and at some count the steps carried
// different numbers of blocks. Then every step's bytes are one law per block, from all the
// steps' messages; the step a larger count adds carries its own blocks (the last steps of
// Bruck's allgather carry the most), where a copy of the top step's law of P would not.
void ShareDisseminationBlocks(PhaseModel* pm, std::span<const int> counts) {
  auto& slots = pm->slots;
  for (const BitSteps& run : FindBitSteps(*pm, counts)) {
    for (std::size_t i = 0; i < run.step_slots; ++i) {
      std::vector<SlotModel*> steps;
      for (std::size_t g = 0; g < run.steps; ++g) {
        SlotModel& s = slots[run.first_slot + g * run.step_slots + i];
        if (StepBlocks(s.peer, 2) < 0 || !s.bytes.present || s.subtree_bytes || s.face_dim >= 0 ||
            s.bytes_per_occurrence ||
            (s.kind == EventKind::kSendrecv && StepBlocks(s.recv_peer, 2) < 0)) {
          steps.clear();
          break;
        }
        steps.push_back(&s);
      }
      if (steps.size() < 2) continue;
      // Per count: the bytes per block of each step that moved something there.
      std::map<double, std::vector<double>> sent, received;
      bool differed = false;
      for (SlotModel* s : steps) {
        for (const auto& [p, y] : TracedValues(s->bytes)) {
          const std::int64_t blocks = StepBlocks(s->peer, static_cast<std::int64_t>(p));
          if (blocks > 0) sent[p].push_back(y / static_cast<double>(blocks));
        }
        if (s->kind != EventKind::kSendrecv) continue;
        for (const auto& [p, y] : TracedValues(s->recv_bytes)) {
          const std::int64_t blocks = StepBlocks(s->recv_peer, static_cast<std::int64_t>(p));
          if (blocks > 0) received[p].push_back(y / static_cast<double>(blocks));
        }
      }
      for (const int c : counts) {
        std::set<std::int64_t> blocks;
        for (const SlotModel* s : steps) {
          if (StepBlocks(s->peer, c) > 0) blocks.insert(StepBlocks(s->peer, c));
        }
        differed = differed || blocks.size() > 1;
      }
      auto one_law = [](const std::map<double, std::vector<double>>& units,
                        std::vector<regression::Point>* points) {
        for (const auto& [p, u] : units) {
          const auto [lo, hi] = std::minmax_element(u.begin(), u.end());
          if (*hi - *lo > 0.01 * std::max(*hi, 1.0)) return false;
          double sum = 0;
          for (const double v : u) sum += v;
          points->push_back({p, sum / static_cast<double>(u.size())});
        }
        return true;
      };
      std::vector<regression::Point> sent_units, received_units;
      if (!differed || !one_law(sent, &sent_units) || !one_law(received, &received_units) ||
          sent_units.size() < 3) {
        continue;
      }
      const std::string label = "phase " + std::to_string(pm->index) + " dissemination steps";
      const Quantity per_block = FitQuantity(sent_units, label + ": bytes per block");
      const Quantity recv_per_block =
          received_units.empty()
              ? Quantity{}
              : FitQuantity(received_units, label + ": bytes received per block");
      for (SlotModel* s : steps) {
        s->step_blocks = true;
        s->bytes = per_block;
        if (s->kind == EventKind::kSendrecv) s->recv_bytes = recv_per_block;
      }
    }
  }
}

void ShareBitStepBytes(PhaseModel* pm, std::span<const int> counts) {
  auto& slots = pm->slots;
  auto agree = [](const Quantity& a, const Quantity& b) {
    if (a.present != b.present) return false;
    const std::map<double, double> va = TracedValues(a), vb = TracedValues(b);
    for (const auto& [p, y] : va) {
      const auto it = vb.find(p);
      if (it == vb.end() || std::abs(y - it->second) > 0.01 * std::max(std::abs(y), 1.0)) {
        return false;
      }
    }
    return true;
  };
  for (const BitSteps& run : FindBitSteps(*pm, counts)) {
    for (std::size_t i = 0; i < run.step_slots; ++i) {
      std::vector<std::size_t> order;
      for (std::size_t g = 0; g < run.steps; ++g) {
        const SlotModel& s = slots[run.first_slot + g * run.step_slots + i];
        if (SingleBit(s) >= 0 && s.bytes.present) order.push_back(g);
      }
      for (const std::size_t g : order) {
        SlotModel& d = slots[run.first_slot + g * run.step_slots + i];
        // The step with the most traced counts among those that agree with it and have more:
        // one with a face or line law first (a law of the grid its bits count in, so only
        // from a step that counts them in the same field), a law of P from any; a step with
        // its own face or line law only takes another's.
        std::size_t best = run.steps, most = d.bytes.model.training.size();
        bool best_face = false;
        for (const std::size_t h : order) {
          const SlotModel& c = slots[run.first_slot + h * run.step_slots + i];
          const bool face = c.face_dim >= 0;
          const std::size_t points = c.bytes.model.training.size();
          if (h == g || c.subtree_bytes != d.subtree_bytes || c.step_blocks || d.step_blocks ||
              c.bytes_per_occurrence || d.bytes_per_occurrence ||
              (face && c.peer->bit_field != d.peer->bit_field) || (!face && d.face_dim >= 0) ||
              points <= d.bytes.model.training.size() || !agree(d.bytes, c.bytes) ||
              !agree(d.recv_bytes, c.recv_bytes)) {
            continue;
          }
          if (best == run.steps || (face && !best_face) || (face == best_face && points > most)) {
            best = h;
            most = points;
            best_face = face;
          }
        }
        if (best == run.steps) continue;
        const SlotModel& src = slots[run.first_slot + best * run.step_slots + i];
        d.bytes = src.bytes;
        d.recv_bytes = src.recv_bytes;
        d.face_dim = src.face_dim;
        d.face_line = src.face_line;
        d.face_bytes = src.face_bytes;
        d.face_recv_bytes = src.face_recv_bytes;
        d.face_margin = src.face_margin;
      }
    }
  }
}

// The compute of steps by bit, as ShareBitStepBytes shares their bytes, for a growing run
// (whose top step a larger count copies):
//  - A step traced at fewer counts (the top bit: at the largest count alone) takes the law
//    of the same call of a step traced at more, when their bursts agree at every count both
//    were traced at (within kStepCpuAgreement): a law of P in place of one count's value.
//  - A descending run's first step at each count may compute what the program does before
//    the run (a binomial broadcast's root works on what it reduced before it sends), the
//    others what a step does after a step; the first step is another bit at each count, so
//    each slot's traced bursts mix the two. Where they differ at some count, the top step
//    (the first at the largest count, and the one PhaseAt's new first steps copy) takes the
//    law of the first steps' bursts over every count, each other step the law of its bursts
//    where it was not the first; where they do not, the run shares laws as above.
constexpr double kStepCpuAgreement = 0.2;

void ShareBitStepCompute(PhaseModel* pm, std::span<const int> counts) {
  auto& slots = pm->slots;
  auto plain = [](const SlotModel& s) {
    return s.cpu_ns.present && !s.cpu_per_occurrence && !(s.cpu_ns_per_byte > 0);
  };
  auto differ = [](double a, double b) {
    return std::abs(a - b) > kStepCpuAgreement * std::max(std::abs(a), std::abs(b));
  };
  auto agree = [&](const Quantity& a, const Quantity& b) {
    const std::map<double, double> va = TracedValues(a), vb = TracedValues(b);
    std::size_t common = 0;
    for (const auto& [p, y] : va) {
      const auto it = vb.find(p);
      if (it == vb.end()) continue;
      ++common;
      if (differ(y, it->second)) return false;
    }
    return common > 0;
  };
  for (const BitSteps& run : FindBitSteps(*pm, counts)) {
    if (!run.grows) continue;
    auto slot_at = [&](std::size_t g, std::size_t i) -> SlotModel& {
      return slots[run.first_slot + g * run.step_slots + i];
    };
    // The step of each bit (steps are in program order: bits ascend or descend).
    auto step_of_bit = [&](std::int64_t bit) -> std::size_t {
      const std::int64_t g = run.ascending ? bit - run.low_bit : run.top_bit - bit;
      return g >= 0 && g < static_cast<std::int64_t>(run.steps) ? static_cast<std::size_t>(g)
                                                                : run.steps;
    };
    for (std::size_t i = 0; i < run.step_slots; ++i) {
      if (!run.ascending) {
        // First steps: the step of bit BitsAt(c) - 1 at each count c.
        std::map<std::size_t, std::set<double>> first_at;  // step -> counts it was first at
        std::vector<regression::Point> entry;
        std::map<double, double> entry_at;
        for (const int c : counts) {
          const std::size_t g = step_of_bit(run.BitsAt(c) - 1);
          if (g == run.steps || !plain(slot_at(g, i))) continue;
          const std::map<double, double> v = TracedValues(slot_at(g, i).cpu_ns);
          const auto it = v.find(static_cast<double>(c));
          if (it == v.end()) continue;
          entry.push_back({it->first, it->second});
          entry_at[it->first] = it->second;
          first_at[g].insert(it->first);
        }
        // Mixed where a later step's burst differs from the first step's at the same count
        // (not in a broadcast by doubling: every rank receives after the iteration's work).
        bool mixed = false;
        for (std::size_t g = 0; g < run.steps && !mixed; ++g) {
          if (!plain(slot_at(g, i))) continue;
          for (const auto& [p, y] : TracedValues(slot_at(g, i).cpu_ns)) {
            const auto it = entry_at.find(p);
            if (it == entry_at.end() || (first_at.count(g) && first_at[g].count(p))) continue;
            mixed = mixed || differ(y, it->second);
          }
        }
        if (mixed) {
          if (first_at.size() < 2) continue;  // the same step first everywhere
          const std::size_t begin = run.first_slot, end = begin + run.steps * run.step_slots;
          for (auto& [g, at] : first_at) {
            SlotModel& d = slot_at(g, i);
            d.cpu_of_rank_total = 0;  // the bursts are refitted as the step's own law
            if (g == 0) {
              d.cpu_ns = FitQuantity(entry, "CPU time before a run's first step (ns)",
                                     Precision::kMeasured);
              continue;
            }
            std::vector<regression::Point> later;
            for (const auto& [p, y] : TracedValues(d.cpu_ns)) {
              if (!at.count(p)) later.push_back({p, y});
            }
            if (!later.empty()) {
              d.cpu_ns = FitQuantity(later, "CPU time before a step (ns)", Precision::kMeasured);
            }
            // Nor do the rank classes that made it first (a root at a smaller count) stand
            // for the ranks that make it after a step: at a larger count the top step is.
            std::erase_if(d.class_compute, [&](const SlotModel::ClassCompute& cc) {
              if (cc.mask.size() < end) return false;
              const std::size_t first = cc.mask.find('1', begin);
              return first < end && (first - begin) / run.step_slots == g;
            });
          }
          continue;
        }
      }
      for (std::size_t g = 0; g < run.steps; ++g) {
        SlotModel& d = slot_at(g, i);
        if (!plain(d) || SingleBit(d) < 0) continue;
        std::size_t best = run.steps, most = d.cpu_ns.model.training.size();
        for (std::size_t h = 0; h < run.steps; ++h) {
          const SlotModel& c = slot_at(h, i);
          if (h == g || !plain(c) || c.cpu_ns.model.training.size() <= most ||
              !agree(d.cpu_ns, c.cpu_ns)) {
            continue;
          }
          best = h;
          most = c.cpu_ns.model.training.size();
        }
        if (best == run.steps) continue;
        d.cpu_ns = slot_at(best, i).cpu_ns;
        d.cpu_of_rank_total = slot_at(best, i).cpu_of_rank_total;
        if (slot_at(best, i).instructions.present) d.instructions = slot_at(best, i).instructions;
      }
    }
  }
}

// A step by bit that appears with the count (the field's top bit at the largest count, absent
// at a smaller one) outside a growing run of steps is not extended: said in a warning, as a
// count with more bits lacks the steps for them.
void WarnUnextendedBitSteps(const PhaseModel& pm, std::span<const int> counts,
                            std::vector<std::string>* warnings) {
  if (counts.empty() || pm.block || pm.scheduled) return;
  const int largest = *std::max_element(counts.begin(), counts.end());
  std::vector<bool> extended(pm.slots.size(), false);
  for (const BitSteps& run : FindBitSteps(pm, counts)) {
    if (!run.grows) continue;
    for (std::size_t k = 0; k < run.steps * run.step_slots; ++k)
      extended[run.first_slot + k] = true;
  }
  std::vector<std::string> calls;
  for (std::size_t s = 0; s < pm.slots.size(); ++s) {
    const SlotModel& slot = pm.slots[s];
    const std::int64_t b = SingleBit(slot);
    if (b < 0) continue;
    const bool top = b + 1 == FieldBits(slot.peer->bit_field, largest) ||
                     (slot.peer->bit_field == patterns::BitField::kRank && largest > 1 &&
                      b + 1 == std::bit_width(static_cast<unsigned>(largest - 1)));
    if (extended[s] || !top) continue;
    bool appears = false;
    for (const int c : counts) appears = appears || (c != largest && !TracedAt(slot, c));
    if (appears) calls.push_back(std::to_string(s) + " (bit " + std::to_string(b) + ")");
  }
  if (calls.empty()) return;
  std::string list;
  for (const auto& c : calls) list += (list.empty() ? "" : ", ") + c;
  warnings->push_back("phase " + std::to_string(pm.index) + ": calls " + list +
                      " exchange with rank XOR 2^b for the top bit of their field at " +
                      std::to_string(largest) +
                      " processes and are absent at smaller counts, but are not a run of alike "
                      "steps by bit: at a count with more bits, the steps for the further bits "
                      "are not modelled (missing from the prediction)");
}

}  // namespace

PhaseModel PhaseAt(const PhaseModel& phase, std::span<const int> counts, std::int64_t nprocs) {
  PhaseModel out = phase;
  const std::vector<BitSteps> runs = FindBitSteps(phase, counts);
  // The last run first: a run's new calls only move the slots after it.
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    const BitSteps& run = *it;
    const std::int64_t bits = run.BitsAt(nprocs);
    if (!run.grows || bits <= run.top_bit + 1) continue;
    auto& slots = out.slots;
    const std::size_t old_size = slots.size();
    const auto added = static_cast<std::size_t>(bits - 1 - run.top_bit);
    const std::size_t length = run.step_slots;
    const std::size_t end = run.first_slot + run.steps * length;
    const std::size_t top = run.ascending ? end - length : run.first_slot;
    const std::size_t at = run.ascending ? end : run.first_slot;
    // Descending, the new first step does what the program does before the run, and every
    // later one (the old first step too) what a step after a step does: the second's.
    const std::size_t later = run.first_slot + length;
    std::vector<SlotModel> copies;
    for (std::size_t k = 0; k < added; ++k) {
      const std::int64_t bit = run.ascending ? run.top_bit + 1 + static_cast<std::int64_t>(k)
                                             : run.top_bit + static_cast<std::int64_t>(added - k);
      for (std::size_t i = 0; i < length; ++i) {
        SlotModel c = slots[top + i];
        if (!run.ascending && k > 0) CopyCompute(slots[later + i], &c);
        if (SingleBit(c) >= 0) {
          c.peer->bits[0].index = bit;
          if (c.recv_peer) c.recv_peer->bits[0].index = bit;
        }
        copies.push_back(std::move(c));
      }
    }
    if (!run.ascending) {
      for (std::size_t i = 0; i < length; ++i) CopyCompute(slots[later + i], &slots[top + i]);
    }
    // The class masks (a character per slot, and one for the roots) get the top step's
    // characters for each copy.
    auto widen = [&](std::string* mask) {
      if (mask->size() < old_size) return;
      const std::string chars = mask->substr(top, length);
      std::string inserted;
      for (std::size_t k = 0; k < added; ++k) inserted += chars;
      mask->insert(at, inserted);
    };
    const std::size_t moved = added * length;
    for (SlotModel& s : slots) {
      for (int& k : s.like_slots) {
        if (static_cast<std::size_t>(k) >= at) k += static_cast<int>(moved);
      }
    }
    for (std::size_t c = 0; c < copies.size(); c += length) {
      std::vector<int> exchange;
      for (std::size_t i = 0; i < length; ++i) {
        if (SingleBit(copies[c + i]) >= 0) exchange.push_back(static_cast<int>(at + c + i));
      }
      for (std::size_t i = 0; i < length; ++i) {
        SlotModel& s = copies[c + i];
        if (s.presence != Presence::kLikeSlots) continue;
        if (SingleBit(s) >= 0) {
          s.presence = Presence::kHasPartner;
          s.like_slots.clear();
        } else {
          s.like_slots = exchange;
        }
      }
    }
    if (out.reordered_ranks != RankSet::kNone) {
      // The copies follow the slot before them in the reordered ranks' order too (the first
      // slot when they come first): a rotation stays one.
      std::vector<std::size_t> order;
      for (const std::size_t k : out.own_order) {
        if (at == 0 && k == 0) {
          for (std::size_t c = 0; c < copies.size(); ++c) order.push_back(c);
        }
        order.push_back(k >= at ? k + copies.size() : k);
        if (at > 0 && k == at - 1) {
          for (std::size_t c = 0; c < copies.size(); ++c) order.push_back(at + c);
        }
      }
      out.own_order = std::move(order);
    }
    slots.insert(slots.begin() + static_cast<std::ptrdiff_t>(at),
                 std::make_move_iterator(copies.begin()), std::make_move_iterator(copies.end()));
    for (SlotModel& s : slots) {
      for (auto& cc : s.class_compute) widen(&cc.mask);
    }
  }
  return out;
}

std::int64_t SubtreeRanks(std::int64_t rank, std::int64_t partner, std::int64_t nprocs,
                          std::int64_t root) {
  if (rank == partner || rank < 0 || partner < 0 || rank >= nprocs || partner >= nprocs ||
      root < 0 || root >= nprocs) {
    return 0;
  }
  const std::int64_t v = (rank - root + nprocs) % nprocs;
  const std::int64_t w = (partner - root + nprocs) % nprocs;
  const std::int64_t child = std::max(v, w);
  return std::min(child - std::min(v, w), nprocs - child);
}

SlotModel::ComponentsAt SlotModel::ComponentBytesAt(std::int64_t nprocs, int side,
                                                    bool recv) const {
  ComponentsAt out;
  if (component_bytes.empty() || !peer || peer->family != patterns::Family::kComponents) return out;
  const auto sizes = peer->ComponentSizesAt(nprocs);
  if (!sizes || sizes->size() != component_bytes.size() ||
      peer->terms.size() != component_bytes.size()) {
    return out;
  }
  for (std::size_t c = 0; c < component_bytes.size(); ++c) {
    const ComponentBytes& law = component_bytes[c];
    const std::int64_t size = (*sizes)[c];
    const double face = recv ? law.face_recv_bytes : law.face_bytes;
    if (law.face_dim >= 0 && face > 0) {
      out.bytes.push_back(
          face * FaceFactor(peer->terms[c], law.face_dim, size, law.face_line, law.face_margin));
    } else {
      const double x = static_cast<double>(law.own_ranks ? size : nprocs);
      out.bytes.push_back((recv ? law.recv_bytes : law.bytes).At(x, side));
    }
  }
  out.sizes = *sizes;
  return out;
}

namespace {

// The mean over the ranks of each component's bytes (SlotModel::ComponentBytesAt).
double RankMean(const SlotModel::ComponentsAt& at) {
  double sum = 0, ranks = 0;
  for (std::size_t c = 0; c < at.bytes.size(); ++c) {
    sum += at.bytes[c] * static_cast<double>(at.sizes[c]);
    ranks += static_cast<double>(at.sizes[c]);
  }
  return ranks > 0 ? sum / ranks : 0;
}

}  // namespace

double SlotModel::BytesAt(std::int64_t nprocs, int side) const {
  if (const ComponentsAt at = ComponentBytesAt(nprocs, side); !at.bytes.empty()) {
    return RankMean(at);
  }
  if (face_dim >= 0 && peer) {
    return face_bytes * FaceFactor(*peer, face_dim, nprocs, face_line, face_margin);
  }
  const double b = bytes.At(static_cast<double>(nprocs), side);
  if (subtree_bytes && peer && peer->bits.size() == 1) {
    const std::int64_t level = peer->bits[0].At(patterns::CeilLog2(nprocs));
    if (level < 0 || level >= 62) return 0;
    const std::int64_t step = std::int64_t{1} << level;
    return b * static_cast<double>(SubtreeRanks(0, step, nprocs));
  }
  if (step_blocks)
    return b * static_cast<double>(std::max<std::int64_t>(0, StepBlocks(peer, nprocs)));
  if (bytes_per_occurrence && peer) {
    const double partners = MeanPartners(*peer, nprocs);
    return partners > 0 ? b / partners : 0;
  }
  return b;
}

double SlotModel::RecvBytesAt(std::int64_t nprocs, int side) const {
  if (const ComponentsAt at = ComponentBytesAt(nprocs, side, true); !at.bytes.empty()) {
    return RankMean(at);
  }
  if (face_dim >= 0 && peer && face_recv_bytes > 0) {
    return face_recv_bytes * FaceFactor(*peer, face_dim, nprocs, face_line, face_margin);
  }
  const double b = recv_bytes.At(static_cast<double>(nprocs), side);
  if (step_blocks) {
    return b * static_cast<double>(std::max<std::int64_t>(0, StepBlocks(recv_peer, nprocs)));
  }
  if (bytes_per_occurrence && (recv_peer || peer)) {
    const double partners = MeanPartners(recv_peer ? *recv_peer : *peer, nprocs);
    return partners > 0 ? b / partners : 0;
  }
  return b;
}

std::string Quantity::Describe(const std::string& what) const {
  if (!divided_by_p) return model.Describe(what);
  return model.Describe("P x " + what);
}

double Quantity::At(double p, int side) const { return std::max(0.0, SignedAt(p, side)); }

double Quantity::SignedAt(double p, int side) const {
  if (!present) return 0;
  double v = model.Evaluate(p);
  if (side != 0) {
    const auto iv = model.Interval(p);
    v = side < 0 ? iv.low : iv.high;
  }
  if (divided_by_p) v /= p;
  return std::isfinite(v) ? v : 0;
}

double Quantity::UnroundedAt(double p) const {
  if (!present) return 0;
  double v = model.curve.EvaluateUnrounded(p);
  if (divided_by_p) v /= p;
  if (!std::isfinite(v) || v < 0) return 0;
  return v;
}

double AppModel::RemainderRatioAt(double p, int side) const {
  if (!(unmodelled_share < 1)) return 0;
  const double kept = unmodelled_share / (1 - unmodelled_share);
  if (side == 0 || !unmodelled_ratio.present) return kept;
  const double law = RemainderLawRatioAt(p), end = RemainderLawRatioAt(p, side);
  return side < 0 ? std::min({kept, law, end}) : std::max({kept, law, end});
}

double AppModel::RemainderLawRatioAt(double p, int side) const {
  if (!unmodelled_ratio.present || !(unmodelled_share < 1)) return RemainderRatioAt(p);
  const double modelled = 1 - unmodelled_share;
  return std::max(0.0, unmodelled_share - unmodelled_fitted_share) / modelled +
         unmodelled_ratio.At(p, side);
}

bool AppModel::HasInstructions() const {
  for (const auto& ph : phases) {
    for (const auto& s : ph.slots) {
      if (s.instructions.present) return true;
    }
  }
  return false;
}

namespace {

// The counts the model can run at: the intersection of every equation's and communicator
// rule's valid counts.
void AddValidCounts(AppModel* model) {
  for (const auto& p : model->phases) {
    for (const auto& s : p.slots) {
      if (s.peer) model->valid.Add(s.peer->valid);
      if (s.recv_peer) model->valid.Add(s.recv_peer->valid);
      if (s.communicator) model->valid.Add(s.communicator->valid);
    }
  }
}

}  // namespace

namespace {

// The tasks' costs of a self-scheduled phase. The mean task's CPU (PhaseModel::task_cpu_ns)
// when every count's signature has its tasks: their summed CPU over their number, as a
// function of P. The per-task cost profile (PhaseModel::task_profile) when, besides, every
// count ran the same number of tasks and each count's costs relative to its mean task agree
// task by task - their spread between the counts (mean variance) is at most a twentieth of
// the profile's own variance, so the order of costs is a property of the application, not
// of one run's timing. Costs drawn at random (data or timing dependent) fail that test and
// keep the per-task draws.
void DecideTaskCosts(PhaseModel* pm, const std::vector<const phases::Signature*>& sigs) {
  if (sigs.empty()) return;
  std::vector<regression::Point> means;
  for (const phases::Signature* s : sigs) {
    if (s->scheduled_tasks <= 0 || s->scheduled_task_cpu_sum_ns <= 0) return;
    means.push_back({double(s->nprocs), static_cast<double>(s->scheduled_task_cpu_sum_ns) /
                                            static_cast<double>(s->scheduled_tasks)});
  }
  pm->task_cpu_ns = FitQuantity(means, "phase " + std::to_string(pm->index) + " CPU ns per task");
  if (sigs.size() < 2) return;
  const std::size_t len = sigs.front()->scheduled_task_cpu_ns.size();
  if (len < 2) return;
  std::vector<std::vector<double>> rel;
  for (const phases::Signature* s : sigs) {
    if (s->scheduled_task_cpu_ns.size() != len) return;
    double sum = 0;
    for (std::int64_t c : s->scheduled_task_cpu_ns) sum += static_cast<double>(c);
    if (!(sum > 0)) return;
    const double mean = sum / static_cast<double>(len);
    std::vector<double> r(len);
    for (std::size_t i = 0; i < len; ++i) {
      r[i] = static_cast<double>(s->scheduled_task_cpu_ns[i]) / mean;
    }
    rel.push_back(std::move(r));
  }
  const double k = static_cast<double>(rel.size());
  std::vector<double> profile(len, 0.0);
  double within = 0;
  for (std::size_t i = 0; i < len; ++i) {
    double m = 0;
    for (const auto& r : rel) m += r[i];
    m /= k;
    double v = 0;
    for (const auto& r : rel) v += (r[i] - m) * (r[i] - m);
    within += v / k;
    profile[i] = m;
  }
  within /= static_cast<double>(len);
  double signal = 0;
  for (double m : profile) signal += (m - 1) * (m - 1);
  signal /= static_cast<double>(len);
  if (!(signal > 0) || within > signal / 20) return;
  // Four significant digits: the model file stays readable, and the traced costs are not
  // known better than that.
  for (double& m : profile) {
    m = m > 0 ? std::round(m * 1e4) / 1e4 : 0;
  }
  pm->task_profile = std::move(profile);
  pm->task_profile_spread = std::sqrt(within);
}

// A self-scheduled phase (PhaseModel::scheduled): at every count one rank replies to the
// latest wildcard source and the other ranks repeat their calls a number of times of their
// own. Fits the workers' summed occurrences (their tasks) as a function of P. Throws
// UserError when the master is not the same rank at every count.
void DecideScheduled(PhaseModel* pm, const phases::PhaseGroup& group,
                     const std::vector<const phases::Signature*>& sigs,
                     const std::vector<int>& counts) {
  std::vector<regression::Point> tasks, rounds;
  int master = -1;
  bool per_rank = false, several = false;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const phases::Phase* ph = sigs[ci]->FindPhase(group.phase_ids[ci]);
    if (!ph) return;
    int m = -1;
    for (const auto& rp : ph->ranks) {
      for (const auto& e : rp.events) {
        if (e.reply) m = rp.rank;
      }
    }
    if (m < 0) return;
    if (master >= 0 && m != master) {
      throw UserError("phase " + std::to_string(pm->index) + ": the rank that replies to whoever " +
                      "answered is " + std::to_string(master) + " at " +
                      std::to_string(counts.front()) + " processes but " + std::to_string(m) +
                      " at " + std::to_string(counts[ci]) +
                      ": a self-scheduled master must be the same rank at every count");
    }
    master = m;
    double sum = 0, master_weight = 0;
    for (const auto& rp : ph->ranks) {
      if (rp.rank == m) {
        master_weight = rp.weight;
      } else {
        sum += rp.weight;
      }
    }
    for (const auto& rp : ph->ranks) {
      if (rp.rank != m && std::fabs(rp.weight - master_weight) > 0.5) per_rank = true;
    }
    // A run of several rounds (its phases are one round's, pooled over the rounds): the
    // tasks of one round.
    const int r = std::max(1, sigs[ci]->scheduled_rounds);
    several = several || r > 1;
    tasks.push_back({double(counts[ci]), sum / r});
    rounds.push_back({double(counts[ci]), double(r)});
  }
  if (!per_rank) return;  // every rank repeats the phase equally: an ordinary phase
  pm->scheduled = true;
  pm->master = master;
  // Measured, not exact: the tasks are counted from the workers' phase weights, and on a
  // real trace the compressor now and then cuts a worker's task between two of its pieces
  // (181 tasks in 3 rounds of 60): a law fitted exactly through that one extra task gave 57.7
  // tasks per round at 8 ranks from 60, 60.3 and 60 at 3-5.
  pm->tasks = FitQuantity(tasks,
                          "phase " + std::to_string(pm->index) + " tasks of the workers" +
                              (several ? " per round" : ""),
                          Precision::kMeasured);
  if (several) pm->rounds = FitQuantity(rounds, "phase " + std::to_string(pm->index) + " rounds");
  DecideTaskCosts(pm, sigs);
}

}  // namespace

namespace {

// CPU over all ranks in one occurrence of `ph` (ns), and over the whole phase (ns).
double PhaseCpuPerOccurrence(const phases::Phase& ph) {
  double total = 0;
  for (const phases::RankPhase& rp : ph.ranks) {
    if (rp.compute.cpu_ns.n > 0) total += rp.compute.cpu_ns.mean;
  }
  return total;
}
double PhaseCpuTotal(const phases::Phase& ph) {
  double total = 0;
  for (const phases::RankPhase& rp : ph.ranks) {
    if (rp.compute.cpu_ns.n > 0) total += rp.weight * rp.compute.cpu_ns.mean;
  }
  return total;
}

// A training trace whose compute does not follow the other counts: a run disturbed by other
// jobs on its nodes or by ranks sharing cores computes more in every burst, and the fitted
// laws follow it to the target. The work of a phase over all ranks, W(P) = P x CPU per rank
// and occurrence, changes smoothly with P in real codes (constant under strong scaling,
// growing with P under weak scaling or replicated work, a step where the data starts to fit
// in cache), so on log P it lies near the line through its neighbours. With 4 or more
// counts, a count more than kDisturbedFactor off the others' trend (an interior count off its
// neighbours' line; the first or the last, more than kDisturbedEndFactor off the
// least-squares line of the rest, as work can turn smoothly there: high at the smallest
// counts, whose blocks miss the cache, then rising with P as halos grow) is named
// when the others, without it, are smooth (each interior one within kSmoothFactor of its
// neighbours' line) and no other count would do as well. Otherwise a count above or below
// both its neighbours by more than kDisturbedFactor of their line is a spike no smooth law
// makes, and the warning says the traces cannot tell which count is off (always so with 3).
// Phases with at least kDisturbedMinShare of the traced CPU only (a small phase's noise moves
// no prediction).
constexpr double kDisturbedFactor = 1.5;
constexpr double kDisturbedEndFactor = 2.5;
constexpr double kSmoothFactor = 1.25;
constexpr double kDisturbedMinShare = 0.10;

// log W at x predicted from the points `pts` other than `skip` (log P, log W; sorted by P):
// the line through the neighbours for an interior count, the least-squares line of the
// others for the first or the last. NaN when fewer than 2 other points.
double TrendAt(const std::vector<std::pair<double, double>>& pts, std::size_t skip) {
  if (pts.size() < 3) return std::nan("");
  const double x = pts[skip].first;
  if (skip > 0 && skip + 1 < pts.size()) {
    const auto& [x0, y0] = pts[skip - 1];
    const auto& [x1, y1] = pts[skip + 1];
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
  }
  const double others = static_cast<double>(pts.size() - 1);
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i != skip) mx += pts[i].first / others, my += pts[i].second / others;
  }
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i == skip) continue;
    sxy += (pts[i].first - mx) * (pts[i].second - my);
    sxx += (pts[i].first - mx) * (pts[i].first - mx);
  }
  return my + (sxx > 0 ? sxy / sxx : 0.0) * (x - mx);
}

// How far (as a factor >= 1) each interior count of `pts` lies off its neighbours' line,
// the largest; 1 when fewer than 3 points.
double Roughness(const std::vector<std::pair<double, double>>& pts) {
  double most = 0;
  for (std::size_t i = 1; i + 1 < pts.size(); ++i) {
    most = std::max(most, std::abs(pts[i].second - TrendAt(pts, i)));
  }
  return std::exp(most);
}

void WarnDisturbedCount(int index, const phases::PhaseGroup& group,
                        const std::vector<const phases::Signature*>& sigs,
                        const std::vector<int>& counts, const std::vector<double>& run_cpu,
                        std::vector<std::string>* warnings) {
  if (counts.size() < 3) return;
  std::vector<std::pair<double, double>> pts;  // (log P, log W)
  std::vector<double> work;
  double share = 0;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    const phases::Phase* ph = sigs[ci]->FindPhase(group.phase_ids[ci]);
    if (!ph || counts[ci] < 2) return;  // a run of one rank does the phase's work alone
    const double w = PhaseCpuPerOccurrence(*ph);
    if (!(w > 0) || !(run_cpu[ci] > 0)) return;
    share += PhaseCpuTotal(*ph) / run_cpu[ci];
    work.push_back(w);
    pts.emplace_back(std::log(static_cast<double>(counts[ci])), std::log(w));
  }
  if (share / static_cast<double>(counts.size()) < kDisturbedMinShare) return;
  // Spikes: off the neighbours' line by more than kDisturbedFactor, on the same side of both.
  std::size_t worst = pts.size();
  double worst_off = 0;
  for (std::size_t i = 1; i + 1 < pts.size(); ++i) {
    const double off = pts[i].second - TrendAt(pts, i);
    const bool spike =
        (pts[i].second - pts[i - 1].second) * (pts[i].second - pts[i + 1].second) > 0;
    if (spike && std::abs(off) > std::log(kDisturbedFactor) && std::abs(off) > worst_off) {
      worst = i;
      worst_off = std::abs(off);
    }
  }
  std::string values;
  for (std::size_t ci = 0; ci < counts.size(); ++ci) {
    values +=
        (ci ? ", " : "") + FormatSeconds(work[ci] / 1e9) + " at " + std::to_string(counts[ci]);
  }
  // Which count: the one whose removal leaves the rest smooth, and that is itself off the
  // rest's trend by more than kDisturbedFactor (kDisturbedEndFactor for the first or last).
  std::size_t culprit = pts.size();
  double culprit_factor = 1;
  if (pts.size() >= 4) {
    for (std::size_t i = 0; i < pts.size(); ++i) {
      std::vector<std::pair<double, double>> rest;
      for (std::size_t k = 0; k < pts.size(); ++k) {
        if (k != i) rest.push_back(pts[k]);
      }
      const double off = pts[i].second - TrendAt(pts, i);
      const bool end = i == 0 || i + 1 == pts.size();
      if (Roughness(rest) <= kSmoothFactor &&
          std::abs(off) > std::log(end ? kDisturbedEndFactor : kDisturbedFactor)) {
        if (culprit != pts.size()) {  // two counts would do: the traces cannot tell which
          culprit = pts.size();
          break;
        }
        culprit = i;
        culprit_factor = std::exp(off);
      }
    }
  }
  if (culprit == pts.size() && worst == pts.size()) return;
  char factor[32];
  const std::string phase = "phase " + std::to_string(index);
  const std::string advice =
      "; such a trace was probably disturbed (other jobs on its nodes, more ranks than cores, "
      "frequency changes), and the fitted compute follows it to the target";
  if (culprit != pts.size()) {
    std::snprintf(factor, sizeof factor, "%.2fx", culprit_factor);
    warnings->push_back(
        "at " + std::to_string(counts[culprit]) + " processes, " + phase + " computes " + factor +
        " what the other counts' trend gives there (CPU over all ranks per occurrence: " + values +
        ")" + advice + ": trace " + std::to_string(counts[culprit]) +
        " processes again, or leave that trace out");
    return;
  }
  const double off = pts[worst].second - TrendAt(pts, worst);
  std::snprintf(factor, sizeof factor, "%.2fx", std::exp(std::abs(off)));
  warnings->push_back(
      phase + "'s compute does not follow one trend across the counts (CPU over all ranks " +
      "per occurrence: " + values + "; " + std::to_string(counts[worst]) + " is " + factor +
      (off > 0 ? " above" : " below") +
      " the line through the counts beside it, which no smooth law of P does)" + advice +
      ": the traces cannot tell which count is off, so trace another count, or trace them again");
}

// AppModel::unmodelled_ratio and unmodelled_fitted_share from each traced count's seconds
// {unmodelled in the same phases at every count, modelled, total} (split_at(count index)).
// Fitted when every count has such a remainder (the rest of the remainder is in phases that
// some counts lack: a loop whose iterations fall into other phases from one count to the
// next, whose make-up changes with the count and whose ratio follows no law).
void FitRemainderRatio(AppModel* model,
                       const std::function<std::array<double, 3>(std::size_t)>& split_at) {
  std::vector<regression::Point> points;
  double share = 0;
  for (std::size_t ci = 0; ci < model->counts.size(); ++ci) {
    const auto [alike, modelled, total] = split_at(ci);
    if (!(alike > 0) || !(modelled > 0)) return;
    points.push_back({static_cast<double>(model->counts[ci]), alike / modelled});
    share = alike / total;
  }
  Quantity q = FitQuantity(points, "unmodelled over modelled time", Precision::kMeasured);
  UnlessSupported(&q);
  model->unmodelled_ratio = std::move(q);
  model->unmodelled_fitted_share = share;
}

// The model of exactly these counts. With `over_share` (TryBuildModel), a phase that no model
// fits and that is more than options.max_dropped_share of a run is left out too, and the
// first such phase's error, which BuildModel throws, is kept in *over_share.
AppModel BuildModelOfCounts(std::vector<phases::Signature> signatures, const ModelOptions& options,
                            std::exception_ptr* over_share) {
  const int threads = options.threads > 0 ? options.threads : DefaultThreads();
  std::sort(signatures.begin(), signatures.end(),
            [](const auto& a, const auto& b) { return a.nprocs < b.nprocs; });
  std::vector<int> counts;
  for (const auto& s : signatures) counts.push_back(s.nprocs);
  for (std::size_t i = 1; i < signatures.size(); ++i) {
    if (counts[i] == counts[i - 1]) {
      throw UserError("two traces have the same process count " + std::to_string(counts[i]) + " (" +
                      signatures[i - 1].trace + " and " + signatures[i].trace +
                      "): give one trace per count");
    }
  }
  // Different applications mixed.
  std::map<std::string, std::vector<int>> apps;
  for (const auto& s : signatures)
    apps[ApplicationBaseName(s.application, s.nprocs)].push_back(s.nprocs);
  if (apps.size() > 1) {
    std::string list;
    for (const auto& [app, c] : apps) {
      list += (list.empty() ? "" : " and ") + (app.empty() ? std::string("(unnamed)") : app) +
              " (" + JoinCounts(c) + ")";
    }
    throw UserError("the traces are of different applications: " + list +
                    "; a model describes one application: give the traces of one of them");
  }
  if (static_cast<int>(signatures.size()) < options.min_counts) {
    throw UserError("at least " + std::to_string(options.min_counts) +
                    " process counts are needed to fit how the application scales, got " +
                    std::to_string(signatures.size()) + " (" + JoinCounts(counts) +
                    "): trace the application at more counts (e.g. `pas2p trace -n ...`) and "
                    "give all the traces");
  }
  // A master that hands out its task pool in several rounds (once per time step) is
  // modelled as one round repeated when the analysis could tell the rounds apart on every
  // rank (Signature::rounds_separated: each round ends with the same collectives of all
  // ranks); otherwise its phases mix the rounds.
  for (const auto& s : signatures) {
    if (s.scheduled_rounds <= 1 || s.rounds_separated) continue;
    throw UserError(
        "at " + std::to_string(s.nprocs) + " processes (" + s.trace +
        ") the master hands out tasks to whichever worker answers in " +
        std::to_string(s.scheduled_rounds) +
        " separate rounds (e.g. one per time step), but no collective of all ranks ends "
        "every round (or the ranks' calls between rounds do not end with the same "
        "collectives), so the workers' calls cannot be told apart by round. pas2p models "
        "several rounds only when each ends with a collective of all ranks (e.g. a bcast or "
        "allreduce of the new state); trace a run of one round (e.g. one time step) and scale "
        "the prediction by the rounds");
  }
  AppModel model;
  model.application =
      ApplicationBaseName(signatures.front().application, signatures.front().nprocs);
  model.counts = counts;
  const phases::Correspondence corr = phases::CorrespondPhases(signatures);
  model.warnings = corr.warnings;
  for (const auto& s : signatures) {
    for (const auto& w : s.warnings) {
      if (w.starts_with(phases::kUntracedCallsWarning) ||
          w.starts_with(phases::kOversubscribedWarning)) {
        model.warnings.push_back("at " + std::to_string(s.nprocs) + " processes, " + w);
      }
    }
  }
  std::vector<const phases::Signature*> sigs;
  for (const auto& s : signatures) sigs.push_back(&s);

  const phases::Signature& largest = signatures.back();
  // model phase -> the shares of its bytes and compute whose calls the model left out
  // (PhaseBuild::dropped_bytes_share, dropped_cpu_share, at the largest count; taken for
  // every count)
  std::map<int, std::pair<double, double>> dropped_of_index;  // by model phase
  // Per count, the phase id in its signature -> model phase.
  std::vector<std::map<int, int>> group_of_id(counts.size());
  const std::map<int, int>& group_of_largest_id = group_of_id.back();
  // Per count, the ids of the phases that occur at every count but failed to fit.
  std::vector<std::set<int>> failed_ids(counts.size());
  std::vector<std::string> unmatched;
  // Per count, the phases the model builds (CarriedAcrossPhases). A phase that then fails to
  // fit is left out below, and the phases built on it being kept are built again.
  std::vector<std::set<int>> modelled(counts.size());
  for (const phases::PhaseGroup& group : corr.groups) {
    if (!group.complete || (!group.relevant && !options.keep_irrelevant)) continue;
    for (std::size_t ci = 0; ci < counts.size(); ++ci) modelled[ci].insert(group.phase_ids[ci]);
  }
  std::vector<RunCarries> runs = RunCarriesOf(sigs, counts, modelled);
  std::vector<double> run_cpu;  // per count, the CPU of every phase over all ranks (ns)
  for (const phases::Signature* sig : sigs) {
    double total = 0;
    for (const phases::Phase& ph : sig->phases) total += PhaseCpuTotal(ph);
    run_cpu.push_back(total);
  }
  // One phase's build and what follows it (its weight, the bit steps' shared laws, its
  // warnings), with the other phases' collectives as evidence (`outside`) or none.
  auto build_phase = [&](const phases::PhaseGroup& group, int index,
                         const std::vector<OutsideCollective>& outside) {
    PhaseBuild build = BuildPhase(index, group, sigs, counts, runs, outside);
    ShareDisseminationBlocks(&build.model, counts);
    ShareBitStepBytes(&build.model, counts);
    ShareBitStepCompute(&build.model, counts);
    WarnUnextendedBitSteps(build.model, counts, &build.warnings);
    std::vector<regression::Point> w;
    for (std::size_t ci = 0; ci < counts.size(); ++ci)
      w.push_back({double(counts[ci]), group.weights[ci]});
    build.model.weight = FitQuantity(w, "phase " + std::to_string(index) + " weight");
    DecideScheduled(&build.model, group, sigs, counts);
    WarnDisturbedCount(index, group, sigs, counts, run_cpu, &build.warnings);
    return build;
  };
  // The warnings in the order of the phases: each built phase's, or a phase left out.
  std::vector<std::vector<std::string>> blocks;
  std::map<int, std::size_t> phase_block;                 // phase index -> its block
  std::vector<const phases::PhaseGroup*> group_of_index;  // phase index -> its group
  // The groups the model builds, in order. Each is built with its index among the phases
  // built before it, which a phase that fails to fit does not take. They are built a few at a
  // time on threads, each with the index it has if every one before it in the batch builds,
  // and taken in order; after a failure, the rest of the batch is built again with their
  // indices (a failure is rare, and a build is a function of its inputs alone).
  std::vector<const phases::PhaseGroup*> to_build;
  for (const phases::PhaseGroup& group : corr.groups) {
    if (!group.complete) {
      if (group.relevant) {
        std::string where;
        for (std::size_t ci = 0; ci < counts.size(); ++ci) {
          where += (ci ? ", " : "") + std::to_string(counts[ci]) + ": " +
                   (group.phase_ids[ci] < 0 ? "missing"
                                            : "phase " + std::to_string(group.phase_ids[ci]));
        }
        unmatched.push_back("\"" + group.key + "\" (" + where + ")");
      }
      continue;
    }
    if (!group.relevant && !options.keep_irrelevant) continue;
    to_build.push_back(&group);
  }
  const auto batch = static_cast<std::size_t>(threads);
  for (std::size_t next = 0; next < to_build.size();) {
    const std::size_t first = next, n = std::min(batch, to_build.size() - first);
    const int first_index = static_cast<int>(model.phases.size());
    std::vector<Outcome<PhaseBuild>> builds =
        RunInParallel<PhaseBuild>(n, static_cast<int>(n), [&](std::size_t k) {
          return build_phase(*to_build[first + k], first_index + static_cast<int>(k), {});
        });
    for (std::size_t k = 0; k < n; ++k) {
      const phases::PhaseGroup& group = *to_build[first + k];
      const int index = static_cast<int>(model.phases.size());
      if (index != first_index + static_cast<int>(k)) break;  // built again in the next batch
      ++next;
      try {
        PhaseBuild build = std::move(builds[k].Get());
        phase_block[index] = blocks.size();
        blocks.push_back(std::move(build.warnings));
        model.phases.push_back(std::move(build.model));
        group_of_index.push_back(&group);
        for (std::size_t ci = 0; ci < counts.size(); ++ci) {
          group_of_id[ci][group.phase_ids[ci]] = index;
        }
        dropped_of_index[index] = {build.dropped_bytes_share, build.dropped_cpu_share};
      } catch (const UserError& e) {
        // A phase that cannot be fitted is left out when it is a small part of every run
        // (start-up, a loop's first or last partial iteration); otherwise the model would
        // miss real time, and that is an error.
        double share = 0;
        for (std::size_t ci = 0; ci < counts.size(); ++ci) {
          const phases::Phase* ph = sigs[ci]->FindPhase(group.phase_ids[ci]);
          if (ph) share = std::max(share, ph->share);
        }
        if (share > options.max_dropped_share) {
          if (!over_share) throw;
          if (!*over_share) *over_share = std::current_exception();
        }
        for (std::size_t ci = 0; ci < counts.size(); ++ci)
          failed_ids[ci].insert(group.phase_ids[ci]);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f%%", 100 * share);
        blocks.push_back(
            {"phase \"" + group.key + "\" (at most " + buf +
             " of a traced run) is left out and counted as remainder: " + FirstLine(e.what())});
      }
    }
  }
  // Phase i built again: its model, warnings and left-out shares.
  auto replace_phase = [&](std::size_t i, PhaseBuild build) {
    blocks[phase_block[static_cast<int>(i)]] = std::move(build.warnings);
    model.phases[i] = std::move(build.model);
    dropped_of_index[static_cast<int>(i)] = {build.dropped_bytes_share, build.dropped_cpu_share};
  };
  // The phases were built from the phases the model was to keep (`runs`). A phase left out
  // above changes that: a phase built to carry requests across its boundary into it, or
  // receives from any source kept as a self-scheduled master's pool whose replies are all in
  // phases left out (PETSc's scatter set-up: its any-source receives, posted in a phase of
  // their own, are answered in phases that no model fits), would be calls the synthesized run
  // never matches. Those phases are built again from the phases kept: the calls whose partners
  // are left out go with them (their share is in the phase's warning). Should such a build
  // fail, the phase stays as built, and the simulation reports what is unmatched.
  if (std::any_of(failed_ids.begin(), failed_ids.end(),
                  [](const std::set<int>& f) { return !f.empty(); })) {
    for (std::size_t ci = 0; ci < counts.size(); ++ci) {
      for (const int id : failed_ids[ci]) modelled[ci].erase(id);
    }
    std::vector<RunCarries> kept = RunCarriesOf(sigs, counts, modelled);
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < model.phases.size(); ++i) {
      if (WildcardPool(runs) != WildcardPool(kept) ||
          CarriedAcrossPhases(*group_of_index[i], runs) !=
              CarriedAcrossPhases(*group_of_index[i], kept)) {
        again.push_back(i);
      }
    }
    runs = std::move(kept);
    std::vector<Outcome<PhaseBuild>> builds =
        RunInParallel<PhaseBuild>(again.size(), threads, [&](std::size_t k) {
          return build_phase(*group_of_index[again[k]], static_cast<int>(again[k]), {});
        });
    for (std::size_t k = 0; k < again.size(); ++k) {
      try {
        replace_phase(again[k], std::move(builds[k].Get()));
      } catch (const UserError&) {
        // kept as built
      }
    }
  }
  // A phase whose point-to-point calls are made on the world, on a grid, with no collective
  // of its own on sub-communicators that hold its pairs, is built again with the other
  // phases' collectives as the evidence of which ranks its partners stay among
  // (ConfineToCommunicators): a convergence check every few iterations, a phase of its own,
  // reduces over the components that the exchanges stay in.
  std::vector<OutsideCollective> outside;
  for (const PhaseModel& pm : model.phases) {
    for (const SlotModel& c : pm.slots) {
      if (IsCollective(c.kind) && c.sub_comm && c.communicator) outside.push_back({pm.index, &c});
    }
  }
  std::vector<std::size_t> rebuild;
  for (std::size_t i = 0; i < model.phases.size() && !outside.empty(); ++i) {
    const PhaseModel& pm = model.phases[i];
    bool needs = false;
    for (const SlotModel& s : pm.slots) {
      if ((!OnGrid(s.peer) && !OnGrid(s.recv_peer)) || !s.p2p_layouts.empty()) continue;
      if (HoldingCollective(pm, s.maps, {}).slot) {
        needs = false;  // the phase's own collective decides, as it did
        break;
      }
      needs = needs || HoldingCollective(pm, s.maps, outside).slot != nullptr;
    }
    if (needs) rebuild.push_back(i);
  }
  std::vector<Outcome<PhaseBuild>> builds =
      RunInParallel<PhaseBuild>(rebuild.size(), threads, [&](std::size_t k) {
        return build_phase(*group_of_index[rebuild[k]], static_cast<int>(rebuild[k]), outside);
      });
  std::vector<std::pair<std::size_t, PhaseBuild>> rebuilt;
  for (std::size_t k = 0; k < rebuild.size(); ++k) {
    try {
      rebuilt.emplace_back(rebuild[k], std::move(builds[k].Get()));
    } catch (const UserError&) {
      // built without that evidence, as before
    }
  }
  for (auto& [i, build] : rebuilt) {  // after every rebuild: `outside` points into the phases
    replace_phase(i, std::move(build));
  }
  for (auto& block : blocks) {
    for (auto& w : block) model.warnings.push_back(std::move(w));
  }
  bool any_relevant = false;
  for (const auto& p : model.phases) any_relevant = any_relevant || p.relevant;
  if (!any_relevant) {
    std::string list;
    for (const auto& u : unmatched) list += "\n  " + u;
    throw PhasesDoNotCorrespond(
        "the phases of the traces do not correspond across the counts " + JoinCounts(counts) +
        ": no relevant phase occurs at every count" + list +
        "\nCheck that the traces are runs of the same program with the same input and options "
        "(only the process count may change), and that none was cut short." +
        CountsThatCorrespond(corr, counts));
  }
  for (const auto& u : unmatched) {
    model.warnings.push_back("relevant phase " + u +
                             " does not occur at every count; its time is counted as an "
                             "unmodelled remainder");
  }
  // Phases left out (start-up and shutdown phases that hold partial loop iterations, which
  // differ from rank to rank) are folded into the modelled phase whose calls they repeat:
  // k occurrences of it, k = their calls of its operations per rank over its calls per rank
  // (rounded; 0 = nothing to fold). What they hold beyond that is the unmodelled remainder.
  // Communication calls per rank, by operation (as phases::FunctionalKey names them).
  auto calls_by_op = [](const phases::Phase& ph) {
    std::map<std::string, double> calls;
    for (const auto& rp : ph.ranks) {
      for (const auto& e : rp.events) {
        if (!IsPointToPoint(e.kind) && !IsCollective(e.kind)) continue;
        std::string op(EventKindName(e.kind));
        if (IsCollective(e.kind)) op += e.comm == kCommWorld ? "@world" : "@sub";
        calls[op] += 1.0;
      }
    }
    for (auto& [op, n] : calls) n /= std::max<double>(1.0, static_cast<double>(ph.ranks.size()));
    return calls;
  };
  // A left-out phase is folded only when most of its calls (at least half, per rank) are
  // operations of the modelled phase, and each of those operations occurs in it: k is then
  // those calls over the modelled phase's. A phase that merely contains one of the modelled
  // phase's operations among many others (an allreduce amid a factorization's sends) is
  // no repetition of it, and stays a remainder.
  // unmodelled id -> (model phase, k), at each count.
  using Folds = std::map<int, std::pair<int, std::int64_t>>;
  // The most CPU any rank spends in one occurrence of a phase.
  auto busiest_rank_cpu_ns = [](const phases::Phase& ph) {
    double most = 0;
    for (const phases::RankPhase& rp : ph.ranks) {
      if (rp.compute.cpu_ns.n > 0) most = std::max(most, rp.compute.cpu_ns.mean);
    }
    return most;
  };
  // A phase that occurs at every count but failed to fit (`failed`) is no partial iteration
  // of another: its calls go elsewhere (an unstructured exchange beside a ring that makes
  // the same calls), and it stays a remainder, as its warning says.
  auto folds_of = [&](const phases::Signature& sig, const std::map<int, int>& groups,
                      const std::set<int>& failed) {
    Folds folded;
    for (const auto& p : sig.phases) {
      if (groups.count(p.id) || failed.count(p.id)) continue;
      const std::map<std::string, double> left = calls_by_op(p);
      double left_calls = 0;
      for (const auto& [op, n] : left) left_calls += n;
      int best = -1;
      const phases::Phase* best_phase = nullptr;
      double best_weight = 0, best_matching = 0, best_calls = 0;
      for (const auto& [id, index] : groups) {
        const phases::Phase* m = sig.FindPhase(id);
        if (!m || m->weight <= best_weight) continue;
        const std::map<std::string, double> ops = calls_by_op(*m);
        double calls = 0, matching = 0;
        bool subset = !ops.empty();
        for (const auto& [op, n] : ops) {
          calls += n;
          const auto it = left.find(op);
          subset = subset && it != left.end();
          if (it != left.end()) matching += it->second;
        }
        if (!subset || calls <= 0 || matching < 0.5 * left_calls) continue;
        best = index;
        best_phase = m;
        best_weight = m->weight;
        best_matching = matching;
        best_calls = calls;
      }
      if (best < 0) continue;
      const auto k = static_cast<std::int64_t>(std::llround(best_matching / best_calls));
      // Nor when k occurrences of the modelled phase would compute far more than the left-out
      // phase did on its busiest rank: the calls repeat, the work around them does not (a
      // set-up phase whose root reads the input before one broadcast, folded 70 times for a
      // run's small broadcasts, made the root compute 120 ms it never did).
      if (k >= 1 && static_cast<double>(k) * busiest_rank_cpu_ns(*best_phase) >
                        kFoldCpuFactor * busiest_rank_cpu_ns(p) + kFoldCpuSlackNs) {
        continue;
      }
      if (k >= 1) folded[p.id] = {best, k};
    }
    return folded;
  };
  const Folds folded = folds_of(largest, group_of_largest_id, failed_ids.back());
  // Bytes sent in a phase, over the ranks and its occurrences.
  auto bytes_of = [](const phases::Phase& p) {
    double bytes = 0;
    for (const phases::RankPhase& rp : p.ranks) {
      for (const phases::PhaseEvent& e : rp.events) {
        if (IsCollective(e.kind) || e.kind == EventKind::kSend || e.kind == EventKind::kIsend ||
            e.kind == EventKind::kSendrecv) {
          bytes += rp.weight * e.bytes.mean;
        }
      }
    }
    return bytes;
  };
  // What a traced run holds in all and what the model leaves out of it.
  struct Split {
    double total = 0, unmodelled = 0;  // seconds
    // The part of `unmodelled` in the same phases at every count: calls of modelled phases
    // left out, and phases that occur at every count but failed to fit. The rest is in
    // phases that some counts lack, whose make-up changes from count to count.
    double unmodelled_alike = 0;
    double total_bytes = 0, unmodelled_bytes = 0;
    // Per phase of the run: its time and bytes left out.
    std::map<int, std::pair<double, double>> left_out;
  };
  auto split_of = [&](std::size_t ci, const Folds& folds) {
    const phases::Signature& sig = *sigs[ci];
    const std::map<int, int>& groups = group_of_id[ci];
    Split out;
    for (const auto& p : sig.phases) {
      const double bytes = bytes_of(p);
      out.total += p.total_time_s;
      out.total_bytes += bytes;
      if (auto g = groups.find(p.id); g != groups.end()) {
        // A modelled phase's calls that the model left out: their bytes, and the share of
        // the phase's compute before them (all of its time when none of its calls is left).
        if (auto d = dropped_of_index.find(g->second); d != dropped_of_index.end()) {
          out.unmodelled += p.total_time_s * d->second.second;
          out.unmodelled_alike += p.total_time_s * d->second.second;
          out.unmodelled_bytes += bytes * d->second.first;
          out.left_out[p.id].first += p.total_time_s * d->second.second;
          out.left_out[p.id].second += bytes * d->second.first;
        }
        continue;
      }
      double rest = p.total_time_s, rest_bytes = bytes;
      // A folded phase makes k occurrences of its modelled phase's calls per occurrence:
      // what it takes and sends beyond those is not in the prediction.
      if (auto f = folds.find(p.id); f != folds.end()) {
        const phases::Phase* m = sig.FindPhase(model.phases[f->second.first].ids[ci]);
        if (m) rest -= static_cast<double>(f->second.second) * p.weight * m->time_s;
        if (m && m->weight > 0) {
          rest_bytes -= static_cast<double>(f->second.second) * p.weight * bytes_of(*m) / m->weight;
        }
      }
      out.unmodelled += std::max(0.0, rest);
      if (failed_ids[ci].count(p.id)) out.unmodelled_alike += std::max(0.0, rest);
      out.unmodelled_bytes += std::max(0.0, rest_bytes);
      out.left_out[p.id].first += std::max(0.0, rest);
      out.left_out[p.id].second += std::max(0.0, rest_bytes);
    }
    return out;
  };
  const Split split = split_of(counts.size() - 1, folded);
  const double total = split.total, total_bytes = split.total_bytes;
  const std::map<int, std::pair<double, double>>& left_out = split.left_out;
  model.unmodelled_bytes_share = total_bytes > 0 ? split.unmodelled_bytes / total_bytes : 0;
  model.unmodelled_share = total > 0 ? split.unmodelled / total : 0;
  FitRemainderRatio(&model, [&](std::size_t ci) {
    const Split at = ci + 1 == counts.size()
                         ? split
                         : split_of(ci, folds_of(*sigs[ci], group_of_id[ci], failed_ids[ci]));
    return std::array{at.unmodelled_alike, at.total - at.unmodelled, at.total};
  });
  // Where a tenth or more of the time or the bytes is left out, what it is: the phases of
  // the largest count that are not modelled, the largest first (a phase missing at some
  // count and too short to be relevant has no warning of its own).
  constexpr double kNamedRemainder = 0.1;
  if (model.unmodelled_share >= kNamedRemainder ||
      model.unmodelled_bytes_share >= kNamedRemainder) {
    struct Part {
      double time = 0, bytes = 0;
      const phases::Phase* phase = nullptr;
    };
    std::vector<Part> parts;
    for (const auto& [id, rest] : left_out) {
      const Part part{total > 0 ? rest.first / total : 0,
                      total_bytes > 0 ? rest.second / total_bytes : 0, largest.FindPhase(id)};
      if (part.phase && std::max(part.time, part.bytes) >= 0.0005) parts.push_back(part);
    }
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
      return std::max(a.time, a.bytes) > std::max(b.time, b.bytes);
    });
    auto pct = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
      return std::string(b);
    };
    std::string list;
    constexpr std::size_t kNamed = 3;
    for (std::size_t i = 0; i < parts.size() && i < kNamed; ++i) {
      const bool partly = group_of_largest_id.count(parts[i].phase->id) > 0;
      list += std::string(i ? "; " : "") + (partly ? "calls of phase " : "phase ") +
              std::to_string(parts[i].phase->id) + " (" + parts[i].phase->description +
              "): " + pct(parts[i].time) + " of the time, " + pct(parts[i].bytes) + " of the bytes";
    }
    if (parts.size() > kNamed) list += "; and " + std::to_string(parts.size() - kNamed) + " more";
    if (!list.empty()) {
      // First: it is what a refusal of such a model is about.
      model.warnings.insert(
          model.warnings.begin(),
          "at " + std::to_string(largest.nprocs) + " processes the model leaves out " +
              pct(model.unmodelled_share) + " of the time and " +
              pct(model.unmodelled_bytes_share) +
              " of the bytes (kept at their traced share in predictions); the largest phases of "
              "that run it leaves out (`pas2p analyze` numbering): " +
              list);
    }
  }
  // The largest count's order, phase ids renamed to phase indices (a folded phase: k
  // occurrences of its modelled phase); unmodelled phases are dropped (total 0).
  std::function<void(phases::Sequence*)> rename = [&](phases::Sequence* items) {
    for (phases::SequenceItem& item : *items) {
      if (item.is_loop()) {
        rename(&item.body);
      } else if (auto it = group_of_largest_id.find(item.phase); it != group_of_largest_id.end()) {
        item.phase = it->second;
      } else if (auto f = folded.find(item.phase); f != folded.end()) {
        item.phase = f->second.first;
        item.total *= f->second.second;
      } else {
        item = phases::SequenceItem::Loop(0, {});
      }
    }
  };
  model.sequence = largest.sequence;
  rename(&model.sequence);
  model.sequence = phases::SimplifySequence(std::move(model.sequence));
  HarmonizeGridsAcrossPhases(&model.phases);
  {
    std::vector<PhaseModel*> all;
    for (PhaseModel& pm : model.phases) all.push_back(&pm);
    JoinXorFields(all);
  }
  DropUnsupportedLines(&model.phases);
  DropUnsupportedEdges(&model.phases);
  for (PhaseModel& pm : model.phases) {
    FitDataBoundCpu(&pm);
    FitPhaseCpuTotal(&pm, model.counts);
  }
  AddValidCounts(&model);
  return model;
}

}  // namespace

namespace {

// BuildModel; with `over_share`, as BuildModelOfCounts says. When a build with it returns,
// *over_share holds what BuildModel would have thrown (or nothing: it would have returned the
// same model); when it throws with *over_share set, BuildModel would have thrown that and the
// lenient model is unknown.
AppModel BuildModelFrom(std::vector<phases::Signature> signatures, const ModelOptions& options,
                        std::exception_ptr* over_share) {
  std::sort(signatures.begin(), signatures.end(),
            [](const auto& a, const auto& b) { return a.nprocs < b.nprocs; });
  try {
    return BuildModelOfCounts(signatures, options, over_share);
  } catch (const PhasesDoNotCorrespond& all) {
    if (!options.drop_smallest_counts || (over_share && *over_share)) throw;
    // A loop whose iterations grow with P (a pipeline of sqrt(P) - 1 stages along a grid
    // line, as NAS BT's line solves) runs once or twice at the smallest counts: too short to
    // be a phase of its own, it is part of the phase around it (AnalyzeOptions::
    // unroll_iterations), while at the larger counts each such loop is a phase. The larger
    // counts then describe the run a larger target makes: the model is built from the
    // largest counts whose phases correspond (at least min_counts of them), and says so.
    const auto min_counts = static_cast<std::size_t>(std::max(options.min_counts, 1));
    for (std::size_t drop = 1; drop < signatures.size() && signatures.size() - drop >= min_counts;
         ++drop) {
      std::vector<phases::Signature> larger(signatures.begin() + static_cast<std::ptrdiff_t>(drop),
                                            signatures.end());
      std::vector<int> used, left_out;
      for (const auto& s : larger) used.push_back(s.nprocs);
      for (std::size_t i = 0; i < drop; ++i) left_out.push_back(signatures[i].nprocs);
      const auto unbuilt = [&](const std::string& why) {
        return UserError(std::string(all.what()) + "\n(the phases of " + JoinCounts(used) +
                         " alone do correspond, but no model builds from them: " + FirstLine(why) +
                         ")");
      };
      // A phase over the share in these counts' model: BuildModel throws it as theirs.
      const auto restated = [&] {
        if (!over_share || !*over_share) return false;
        *over_share = std::make_exception_ptr(unbuilt(WhatOf(*over_share)));
        return true;
      };
      AppModel model;
      try {
        model = BuildModelOfCounts(std::move(larger), options, over_share);
      } catch (const PhasesDoNotCorrespond&) {
        if (restated()) throw;
        continue;
      } catch (const UserError& e) {
        if (restated()) throw;
        throw unbuilt(e.what());
      }
      restated();
      model.warnings.insert(
          model.warnings.begin(),
          "the model is built from the counts " + JoinCounts(used) + " only: the phases of " +
              JoinCounts(left_out) + " do not correspond with theirs (" + FirstLine(all.what()) +
              "), so only counts from " + std::to_string(used.front()) +
              " on train this model (a typical cause: a loop whose iterations grow with P, "
              "such as a pipeline of sqrt(P) - 1 stages, is too short at the smallest counts "
              "to be a phase of its own; `pas2p analyze` each count to compare)");
      return model;
    }
    throw;
  }
}

}  // namespace

AppModel BuildModel(std::vector<phases::Signature> signatures, const ModelOptions& options) {
  return BuildModelFrom(std::move(signatures), options, nullptr);
}

ModelAttempt TryBuildModel(std::vector<phases::Signature> signatures, const ModelOptions& options) {
  ModelAttempt attempt;
  std::exception_ptr over_share;
  try {
    AppModel model = BuildModelFrom(std::move(signatures), options, &over_share);
    if (!over_share) {
      attempt.model = std::move(model);
    } else {
      attempt.error = over_share;
      attempt.leaving_out = std::move(model);
    }
  } catch (const UserError&) {
    attempt.error = over_share ? over_share : std::current_exception();
  }
  return attempt;
}

// ---------------------------------------------------------------------------------------
// Words.

namespace {

// A face law in words (SlotModel::face_dim and the rest): "bytes per message ≈ ...".
std::string FaceWords(const patterns::GeneralEquation& eq, int dim, bool line, double bytes,
                      double margin) {
  char buf[288];
  std::vector<int> crossed = CrossedDims(eq);
  if (!line && crossed.size() > 1 &&
      std::find(crossed.begin(), crossed.end(), dim) != crossed.end()) {
    std::string along;
    for (std::size_t i = 0; i < crossed.size(); ++i) {
      along += (i == 0                    ? ""
                : i + 1 == crossed.size() ? " and "
                                          : ", ") +
               std::to_string(crossed[i]);
    }
    if (margin > 0) {
      std::snprintf(buf, sizeof buf,
                    "bytes per message ≈ %.6g x the product of (1/extent + %.4g) over the "
                    "grid's dimensions but %s (an edge of the local block with a halo %.4g of "
                    "the domain wide; exchanged across dimensions %s)",
                    bytes, margin, along.c_str(), margin / 2, along.c_str());
    } else {
      std::snprintf(buf, sizeof buf,
                    "bytes per message ≈ %.6g x the product of 1/extent over the grid's "
                    "dimensions but %s (an edge of the local block; exchanged across "
                    "dimensions %s)",
                    bytes, along.c_str(), along.c_str());
    }
    return buf;
  }
  if (line) {
    std::snprintf(buf, sizeof buf,
                  "bytes per message ≈ %.6g / the grid's extent along dimension %d (a line of "
                  "the local block, exchanged along it)",
                  bytes, dim);
  } else if (margin > 0) {
    std::snprintf(buf, sizeof buf,
                  "bytes per message ≈ %.6g x the product of (1/extent + %.4g) over the grid's "
                  "other dimensions (a face of the local block with a halo %.4g of the domain "
                  "wide; exchanged along dimension %d)",
                  bytes, margin, margin / 2, dim);
  } else {
    std::snprintf(buf, sizeof buf,
                  "bytes per message ≈ %.6g x the product of 1/extent over the grid's other "
                  "dimensions (a face of the local block; exchanged along dimension %d)",
                  bytes, dim);
  }
  return buf;
}

}  // namespace

std::string SlotModel::Describe() const {
  std::ostringstream out;
  out << EventKindName(kind);
  if (IsPointToPoint(kind)) {
    if (wildcard) {
      out << " from any source";
    } else if (reply) {
      out << " to the source of the latest wildcard receive (self-scheduled)";
    } else if (peer) {
      out << ((kind == EventKind::kRecv || kind == EventKind::kIrecv) ? " from " : " to ")
          << peer->Describe();
      if (recv_peer) out << "; receives from " << recv_peer->Describe();
    } else {
      out << " to MPI_PROC_NULL";
    }
    if (tag == kNeighborTag) {
      out << " (part of a neighbourhood collective)";
    } else {
      out << " (tag " << tag << ")";
    }
  }
  if (IsCollective(kind)) {
    out << (communicator ? " on " + communicator->Describe() : std::string(" on the world"));
    if (root) out << ", root " << root->Describe("size");
    switch (root_step) {
      case phases::RootStep::kNext:
        out << ", root the next rank after the previous " << EventKindName(kind)
            << "'s (it moves round the communicator)";
        break;
      case phases::RootStep::kPrevious:
        out << ", root the rank before the previous " << EventKindName(kind)
            << "'s (it moves round the communicator)";
        break;
      case phases::RootStep::kSame:
        out << ", root the same as the previous " << EventKindName(kind) << "'s";
        break;
      case phases::RootStep::kFixed:
        break;
    }
  }
  if (IsCompletion(kind)) {
    out << (all_pending ? " of every pending request"
                        : " of " + std::to_string(requests) + " request(s)");
    if (polled) {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    ", found by polling (a test that completes, %.1f failed ones before it)",
                    polls);
      out << buf;
    }
  }
  if (presence != Presence::kAll) {
    out << " [made by: ";
    switch (presence) {
      case Presence::kHasPartner:
        out << "ranks with a partner";
        break;
      case Presence::kCommMember:
        out << "members of the communicator";
        break;
      case Presence::kOnlyRank0:
        out << "rank 0 only";
        break;
      case Presence::kAllButRank0:
        out << "every rank but 0";
        break;
      case Presence::kLikeSlots: {
        out << "ranks that make call";
        for (std::size_t i = 0; i < like_slots.size(); ++i)
          out << (i ? ", " : " ") << like_slots[i];
        break;
      }
      case Presence::kAll:
        break;
    }
    out << "]";
  }
  auto q = [&](const Quantity& qq, const char* what) {
    if (qq.present &&
        !(qq.model.curve.kind == regression::CurveKind::kConstant &&
          qq.model.curve.coefficients.size() == 1 && qq.model.curve.coefficients[0] == 0)) {
      out << "; " << qq.Describe(what);
    }
  };
  if (!component_bytes.empty()) {
    const bool two = kind == EventKind::kSendrecv;
    for (std::size_t c = 0; c < component_bytes.size(); ++c) {
      const ComponentBytes& law = component_bytes[c];
      out << "; in component " << c;
      if (law.face_dim >= 0 && peer && c < peer->terms.size()) {
        out << ", on its own grid: "
            << FaceWords(peer->terms[c], law.face_dim, law.face_line, law.face_bytes,
                         law.face_margin);
      } else {
        const std::string of = law.own_ranks ? " (P: the component's ranks)" : "";
        out << ": " << law.bytes.Describe((two ? "bytes sent" : "bytes per message") + of);
        if (two) out << "; " << law.recv_bytes.Describe("bytes received" + of);
      }
    }
  } else if (face_dim >= 0 && peer) {
    out << "; " << FaceWords(*peer, face_dim, face_line, face_bytes, face_margin);
  } else if (subtree_bytes) {
    q(bytes,
      "bytes per message per rank of the subtree it carries (x min(2^b, P - child): a binomial "
      "tree's gather or scatter)");
  } else if (step_blocks) {
    q(bytes, "bytes sent per block (x min(2^b, P - 2^b) blocks: a dissemination's step)");
    if (kind == EventKind::kSendrecv) q(recv_bytes, "bytes received per block");
  } else if (bytes_per_occurrence) {
    q(bytes, kind == EventKind::kRecv ? "bytes received over an occurrence, split over its messages"
                                      : "bytes sent over an occurrence, split over its messages");
    if (kind == EventKind::kSendrecv) {
      q(recv_bytes, "bytes received over an occurrence, split over its messages");
    }
  } else if (IsPointToPoint(kind) && kind != EventKind::kSendrecv) {
    q(bytes, "bytes per message");
  } else {
    q(bytes, "bytes sent");
    q(recv_bytes, "bytes received");
  }
  if (bytes_max_ratio != 1 || recv_bytes_max_ratio != 1) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "; uneven: the largest rank sends %.3g x and receives %.3g x the mean (one "
                  "member of each communicator does so at N, the others less)",
                  bytes_max_ratio, recv_bytes_max_ratio);
    out << buf;
  }
  q(root_bytes, "root bytes sent");
  q(root_recv_bytes, "root bytes received");
  if (cpu_ns_per_byte > 0) {
    char base[96] = "";
    if (cpu_bytes_base > 0) {
      std::snprintf(base, sizeof base, "%.4g·P^−1 + ", cpu_bytes_base);
    }
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "; CPU ns before ≈ %s%.4g x the bytes the call moves%s (packing and "
                  "unpacking), from %zu counts, LOO error %.2g%% (a law of P: %.2g%%)",
                  base, cpu_ns_per_byte,
                  cpu_bytes_with_previous ? " and the bytes the call before it received" : "",
                  cpu_ns.model.training.size(), 100 * cpu_bytes_loo_error,
                  100 * cpu_ns.model.loo_error);
    out << buf;
  } else {
    q(cpu_ns, cpu_per_occurrence ? "CPU ns before, summed over an occurrence's iterations"
                                 : "CPU ns before");
    if (cpu_of_rank_total > 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    " (not used: seen at fewer than 3 counts, it is taken as %.3g%% of the "
                    "phase's CPU per rank)",
                    100 * cpu_of_rank_total);
      out << buf;
    }
  }
  q(root_cpu_ns, "CPU ns the root adds before it");
  q(instructions, cpu_per_occurrence ? "instructions before, summed over an occurrence's iterations"
                                     : "instructions before");
  if (cpu_ns.present &&
      (cpu_spread_between > 0 || cpu_spread_shared > 0 || cpu_spread_within > 0)) {
    // The spread in words, standard deviation / mean, and the own part's tail: what its
    // slowest 1 / bins of bursts add to the mean (the top bin of the standardized shape).
    char buf[320];
    char persistent[64] = "";
    if (cpu_spread_persistent < cpu_spread_between - 5e-5) {
      std::snprintf(persistent, sizeof persistent, " (%.3g%% beyond what their own noise explains)",
                    100 * cpu_spread_persistent);
    }
    int n = std::snprintf(buf, sizeof buf,
                          "; noise (sd / mean): %.3g%% between ranks%s, %.3g%% shared per "
                          "occurrence, %.3g%% each rank's own",
                          100 * cpu_spread_between, persistent, 100 * cpu_spread_shared,
                          100 * cpu_spread_within);
    if (!cpu_noise_shape.empty() && cpu_spread_within > 0 && n > 0 &&
        static_cast<std::size_t>(n) < sizeof buf) {
      std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                    " (its slowest 1/%zu of bursts +%.3g%%, its fastest %.3g%%)",
                    cpu_noise_shape.size(), 100 * cpu_spread_within * cpu_noise_shape.back(),
                    100 * cpu_spread_within * cpu_noise_shape.front());
    }
    out << buf;
  }
  return out.str();
}

std::string FormatSeconds(double s) {
  char buf[64];
  if (s == 0) {
    std::snprintf(buf, sizeof buf, "0 s");
  } else if (std::fabs(s) >= 1) {
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  } else if (std::fabs(s) >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  }
  return buf;
}

std::string DescribeModel(const AppModel& model, std::int64_t target) {
  std::ostringstream out;
  out << "application " << (model.application.empty() ? "(unnamed)" : model.application)
      << ", traced at " << JoinCounts(model.counts) << " processes\n";
  out << "valid counts: " << model.valid.Describe() << "\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * model.unmodelled_share);
  out << "phases modelled: " << model.phases.size() << " (unmodelled remainder at "
      << model.largest_count() << ": " << buf << " of the traced time";
  if (model.unmodelled_bytes_share > 0) {
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * model.unmodelled_bytes_share);
    out << ", " << buf << " of the bytes";
  }
  out << ")\n";
  if (model.unmodelled_ratio.present) {
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * model.unmodelled_fitted_share);
    out << "  " << buf << " in phases every count has: "
        << model.unmodelled_ratio.Describe("their time over the modelled time");
    if (target > 0)
      out << "; at P = " << target << ": " << model.unmodelled_ratio.At(double(target));
    out << "\n";
  }
  for (const auto& p : model.phases) {
    out << "\nphase " << p.index << (p.relevant ? " (relevant)" : "") << ": " << p.description
        << "\n";
    out << "  " << p.weight.Describe("weight");
    if (target > 0) out << "; at P = " << target << ": " << p.weight.At(double(target));
    out << "\n";
    if (p.scheduled) {
      out << "  self-scheduled: rank " << p.master
          << " hands out tasks and replies to whichever worker answered; the others run "
             "their calls once per task. "
          << p.tasks.Describe(p.rounds.present ? "tasks of all workers per round"
                                               : "tasks of all workers");
      if (target > 0) out << "; at P = " << target << ": " << p.tasks.At(double(target));
      out << " (split over the workers by a list schedule at synthesis";
      if (p.rounds.present) out << ", one per round";
      out << ")\n";
      if (!p.task_profile.empty()) {
        double lo = p.task_profile.front(), hi = lo;
        for (double m : p.task_profile) {
          lo = std::min(lo, m);
          hi = std::max(hi, m);
        }
        char line[256];
        std::snprintf(line, sizeof line,
                      "  task costs: the same %zu tasks at every count, each costing the same "
                      "relative to the mean task (from %.3g to %.3g times it; the counts agree "
                      "to %.2g%% rms): the list schedule runs them in the traced hand-out "
                      "order\n",
                      p.task_profile.size(), lo, hi, 100 * p.task_profile_spread);
        out << line;
      }
      if (p.task_cpu_ns.present) {
        out << "  " << p.task_cpu_ns.Describe("CPU ns per task (mean over tasks)");
        if (target > 0) out << "; at P = " << target << ": " << p.task_cpu_ns.At(double(target));
        out << " (the workers' calls are scaled to it)\n";
      }
      if (p.rounds.present) {
        out << "  rounds: " << p.rounds.Describe("rounds (a new pool of tasks each)");
        if (target > 0) out << "; at P = " << target << ": " << p.rounds.At(double(target));
        out << "\n";
      }
    }
    if (p.reordered_ranks != RankSet::kNone && !p.own_order.empty()) {
      const std::size_t n = p.own_order.size(), first = p.own_order.front();
      bool rotation = true;
      for (std::size_t k = 0; k < n && rotation; ++k) rotation = p.own_order[k] == (first + k) % n;
      out << "  call order: " << RankSetWords(p.reordered_ranks);
      if (rotation) {
        out << " start at call " << first << " and make the calls before it last";
      } else {
        out << " make the calls in the order";
        constexpr std::size_t kShown = 24;
        for (std::size_t k = 0; k < n && k < kShown; ++k) {
          out << (k ? ", " : " ") << p.own_order[k];
        }
        if (n > kShown) out << ", ... (" << n << " calls)";
      }
      out << " (their own order at every traced count)\n";
    }
    if (p.rank_cpu_total.present) {
      out << "  compute per rank: "
          << p.rank_cpu_total.Describe("CPU ns per rank and occurrence, over all its calls");
      if (target > 0) out << "; at P = " << target << ": " << p.rank_cpu_total.At(double(target));
      out << " (rank classes and calls seen at fewer than 3 counts take their traced share of "
             "it)\n";
    }
    if (p.cpu_total.present && p.cpu_total_per_run) {
      out << "  compute: "
          << p.cpu_total.Describe(
                 "CPU ns per rank over the run (all the phase's occurrences), summed over the "
                 "calls");
      if (target > 0) {
        out << "; at P = " << target << ": " << p.cpu_total.At(double(target)) << ", "
            << p.cpu_total.At(double(target)) / std::max(1.0, p.weight.At(double(target)))
            << " per occurrence";
      }
      out << " (predicts the left-out counts better than a law per occurrence; the calls' own "
             "models are scaled to it keeping their shares)\n";
    } else if (p.cpu_total.present) {
      out << "  compute: "
          << p.cpu_total.Describe("CPU ns per rank and occurrence, summed over the calls");
      if (target > 0) out << "; at P = " << target << ": " << p.cpu_total.At(double(target));
      out << " (predicts the left-out counts better than the calls' own models, which are "
             "scaled to it keeping their shares)\n";
    }
    for (const BitSteps& run : FindBitSteps(p, model.counts)) {
      const char* field = run.field == patterns::BitField::kLowHalf    ? " of the column index"
                          : run.field == patterns::BitField::kHighHalf ? " of the row index"
                                                                       : " of the rank";
      out << "  calls " << run.first_slot << "-" << run.first_slot + run.steps * run.step_slots - 1
          << ": one step per bit" << field << " (bits " << run.low_bit << "-" << run.top_bit << ", "
          << (run.ascending ? "lowest" : "highest") << " first)";
      if (run.grows) {
        out << "; at a count with more bits, a step like bit " << run.top_bit
            << "'s for each further bit";
        if (target > 0) {
          const std::int64_t bits = run.BitsAt(target);
          out << " (at P = " << target << ": bits " << run.low_bit << "-"
              << std::max(run.top_bit, bits - 1) << ")";
        }
      }
      out << "\n";
    }
    for (std::size_t s = 0; s < p.slots.size(); ++s) {
      out << "  call " << s << ": " << p.slots[s].Describe();
      // The roots of the phase's rooted collectives, when they are a class of their own.
      for (const auto& cc : p.slots[s].class_compute) {
        const std::size_t roots_at = p.slots.size();  // the roots' character, if any
        const std::size_t rotated = p.reordered_ranks != RankSet::kNone ? 1 : 0;
        if (cc.mask.size() != roots_at + 1 + rotated || cc.mask[roots_at] != '1') continue;
        out << "; root ranks (a class of their own: they work alone): "
            << cc.cpu_ns.Describe("CPU ns before");
        break;
      }
      out << "\n";
    }
  }
  if (!model.warnings.empty()) {
    out << "\nwarnings:\n";
    for (const auto& w : model.warnings) out << "  " << w << "\n";
  }
  return out.str();
}

// ---------------------------------------------------------------------------------------
// JSON.

namespace {

json MapJson(const patterns::CommMap& m) { return json{{"nprocs", m.nprocs}, {"dests", m.dests}}; }
patterns::CommMap MapFromJson(const json& j) {
  patterns::CommMap m;
  m.nprocs = j.at("nprocs").get<int>();
  m.dests = j.at("dests").get<std::vector<std::vector<int>>>();
  return m;
}
json QuantityJson(const Quantity& q) {
  if (!q.present) return json(nullptr);
  return json{{"fit", q.model.ToJson()}, {"divided_by_p", q.divided_by_p}};
}
Quantity QuantityFromJson(const json& j) {
  Quantity q;
  if (j.is_null()) return q;
  q.present = true;
  q.model = regression::FittedModel::FromJson(j.at("fit"));
  q.divided_by_p = j.at("divided_by_p").get<bool>();
  return q;
}

}  // namespace

// Version 4: equations may name one side of a tree level ("tree_role"); a file without it
// is read as before. Version 5: a tree level counts its ranks from its equation's "root"
// (rank 0 before, and in every earlier file, which is what those files mean); an older
// pas2p would read a tree rooted elsewhere as rank 0's, so it refuses the file instead.
// Version 6: an exchange may be "folded" (recursive doubling among the first 2^floor(log2 P)
// ranks); an older pas2p would read it as an exchange among all ranks. Version 7: a slot
// seen at fewer than 3 counts may take a share of its phase's CPU per rank
// ("cpu_of_rank_total"); an older pas2p would use its own 2-count law instead. Version 8: a
// folded exchange may fold in pairs ("fold_pairs", as MPI libraries fold), a sendrecv's
// sources have an order of their own ("recv_order"), and an equation may be a dissemination
// ("shift_sign"); an older pas2p would read the first as the fold onto the first
// 2^floor(log2 P) ranks and take the sources in the sends' order. Version 9: a block's bytes
// may be per occurrence ("bytes_per_occurrence") and calls may be on components of unequal
// sizes (family "components", "block_sizes"). Version 10: a call on components may have a
// bytes law per component ("component_bytes"), and a phase's compute may be over the run
// ("cpu_total_per_run"); an older pas2p would give every rank the call's one law, and read
// the run's work as one occurrence's. Version 11: a collective's ranks may move uneven
// bytes ("bytes_max_ratio", "recv_bytes_max_ratio"); an older pas2p would give every rank the
// mean, and the collective would cost what its mean rank's bytes cost. Version 12: a
// stencil call crossing several grid dimensions (an edge of a 27-point halo) may have a face
// law ("face_dim" on an edge's equation): the product of 1/extent over the dimensions it
// does not cross; an older pas2p would take every dimension but "face_dim".
constexpr int kModelVersion = 12;

std::string ModelToJson(const AppModel& model) {
  json j;
  j["format"] = "pas2p-model";
  j["version"] = kModelVersion;
  j["application"] = model.application;
  j["counts"] = model.counts;
  j["valid_counts"] = model.valid.Describe();
  j["warnings"] = model.warnings;
  j["unmodelled_share"] = model.unmodelled_share;
  j["unmodelled_bytes_share"] = model.unmodelled_bytes_share;
  if (model.unmodelled_ratio.present) {
    j["unmodelled_ratio"] = QuantityJson(model.unmodelled_ratio);
    j["unmodelled_fitted_share"] = model.unmodelled_fitted_share;
  }
  j["sequence"] = json::parse(phases::SequenceToJsonText(model.sequence));
  json phases_j = json::array();
  for (const auto& p : model.phases) {
    json pj;
    pj["index"] = p.index;
    pj["ids"] = p.ids;
    pj["description"] = p.description;
    pj["relevant"] = p.relevant;
    pj["block"] = p.block;
    pj["weight"] = QuantityJson(p.weight);
    if (p.scheduled) {
      pj["scheduled"] = true;
      pj["master"] = p.master;
      pj["tasks"] = QuantityJson(p.tasks);
      if (p.rounds.present) pj["rounds"] = QuantityJson(p.rounds);
      if (p.task_cpu_ns.present) pj["task_cpu_ns"] = QuantityJson(p.task_cpu_ns);
      if (!p.task_profile.empty()) {
        pj["task_profile"] = p.task_profile;
        pj["task_profile_spread"] = p.task_profile_spread;
      }
    }
    if (p.reordered_ranks != RankSet::kNone) {
      pj["reordered_ranks"] = RankSetName(p.reordered_ranks);
      pj["own_order"] = p.own_order;
    }
    pj["traced_time_s"] = p.traced_time_s;
    if (p.cpu_total.present) pj["cpu_total"] = QuantityJson(p.cpu_total);
    if (p.cpu_total_per_run) pj["cpu_total_per_run"] = true;
    if (p.rank_cpu_total.present) pj["rank_cpu_total"] = QuantityJson(p.rank_cpu_total);
    json slots = json::array();
    for (const auto& s : p.slots) {
      json sj;
      sj["kind"] = std::string(EventKindName(s.kind));
      sj["tag"] = s.tag;
      sj["sub_comm"] = s.sub_comm;
      sj["presence"] = std::string(PresenceName(s.presence));
      sj["like_slots"] = s.like_slots;
      sj["wildcard"] = s.wildcard;
      if (s.reply) sj["reply"] = true;
      if (s.root_step != phases::RootStep::kFixed) {
        sj["root_step"] = std::string(phases::RootStepName(s.root_step));
        sj["root_cpu_ns"] = QuantityJson(s.root_cpu_ns);
      }
      sj["dest_order"] = std::string(DestOrderName(s.dest_order));
      sj["recv_order"] = std::string(DestOrderName(s.recv_order));
      sj["cpu_spread_between"] = s.cpu_spread_between;
      sj["cpu_spread_persistent"] = s.cpu_spread_persistent;
      sj["face_dim"] = s.face_dim;
      sj["face_bytes"] = s.face_bytes;
      sj["face_recv_bytes"] = s.face_recv_bytes;
      if (s.face_line) sj["face_line"] = true;
      if (s.face_margin > 0) sj["face_margin"] = s.face_margin;
      if (s.carried) sj["carried"] = true;
      if (s.subtree_bytes) sj["subtree_bytes"] = true;
      if (s.step_blocks) sj["step_blocks"] = true;
      if (s.bytes_per_occurrence) sj["bytes_per_occurrence"] = true;
      if (!s.component_bytes.empty()) {
        json laws = json::array();
        for (const ComponentBytes& law : s.component_bytes) {
          json lj{{"own_ranks", law.own_ranks}, {"bytes", QuantityJson(law.bytes)}};
          if (law.recv_bytes.present) lj["recv_bytes"] = QuantityJson(law.recv_bytes);
          if (law.face_dim >= 0) {
            lj["face_dim"] = law.face_dim;
            lj["face_bytes"] = law.face_bytes;
            if (law.face_recv_bytes > 0) lj["face_recv_bytes"] = law.face_recv_bytes;
            if (law.face_line) lj["face_line"] = true;
            if (law.face_margin > 0) lj["face_margin"] = law.face_margin;
          }
          laws.push_back(std::move(lj));
        }
        sj["component_bytes"] = std::move(laws);
      }
      if (s.element_bytes > 1) sj["element_bytes"] = s.element_bytes;
      sj["cpu_spread_within"] = s.cpu_spread_within;
      sj["cpu_spread_shared"] = s.cpu_spread_shared;
      if (!s.cpu_noise_shape.empty()) sj["cpu_noise_shape"] = s.cpu_noise_shape;
      if (s.cpu_per_occurrence) sj["cpu_per_occurrence"] = true;
      if (s.cpu_ns_per_byte > 0) {
        sj["cpu_ns_per_byte"] = s.cpu_ns_per_byte;
        sj["cpu_bytes_with_previous"] = s.cpu_bytes_with_previous;
        sj["cpu_bytes_base"] = s.cpu_bytes_base;
        sj["cpu_bytes_loo_error"] = s.cpu_bytes_loo_error;
      }
      if (s.cpu_of_rank_total > 0) sj["cpu_of_rank_total"] = s.cpu_of_rank_total;
      sj["all_pending"] = s.all_pending;
      sj["requests"] = s.requests;
      if (s.polled) {
        sj["polled"] = true;
        sj["polls"] = s.polls;
      }
      sj["equation"] = s.peer ? s.peer->Describe() : "";
      // The equations as the model holds them: the maps below are refitted on load, but the
      // phase's grids and directions are decided over all its slots after the fit
      // (HarmonizeGrids, PairAmbiguousDirections), which one slot's refit cannot redo.
      if (s.peer) sj["peer_fit"] = patterns::ToJson(*s.peer);
      if (s.recv_peer) sj["recv_peer_fit"] = patterns::ToJson(*s.recv_peer);
      sj["recv_equation"] = s.recv_peer ? s.recv_peer->Describe() : "";
      sj["communicator"] = s.communicator ? s.communicator->Describe() : "";
      json maps = json::array(), rmaps = json::array(), layouts = json::array();
      for (const auto& m : s.maps) maps.push_back(MapJson(m));
      for (const auto& m : s.recv_maps) rmaps.push_back(MapJson(m));
      for (const auto& l : s.layouts)
        layouts.push_back(json{{"nprocs", l.nprocs}, {"groups", l.groups}});
      if (!s.p2p_layouts.empty()) {
        json p2p_layouts = json::array();
        for (const auto& l : s.p2p_layouts)
          p2p_layouts.push_back(json{{"nprocs", l.nprocs}, {"groups", l.groups}});
        sj["p2p_layouts"] = p2p_layouts;
      }
      sj["maps"] = maps;
      sj["recv_maps"] = rmaps;
      sj["layouts"] = layouts;
      json roots = json::array();
      for (const auto& [size, idx] : s.root_points) roots.push_back(json::array({size, idx}));
      sj["root_points"] = roots;
      sj["bytes"] = QuantityJson(s.bytes);
      sj["recv_bytes"] = QuantityJson(s.recv_bytes);
      sj["root_bytes"] = QuantityJson(s.root_bytes);
      sj["root_recv_bytes"] = QuantityJson(s.root_recv_bytes);
      if (s.bytes_max_ratio != 1) sj["bytes_max_ratio"] = s.bytes_max_ratio;
      if (s.recv_bytes_max_ratio != 1) sj["recv_bytes_max_ratio"] = s.recv_bytes_max_ratio;
      sj["cpu_ns"] = QuantityJson(s.cpu_ns);
      sj["instructions"] = QuantityJson(s.instructions);
      json classes = json::array();
      for (const auto& cc : s.class_compute) {
        json c{{"mask", cc.mask},
               {"cpu_ns", QuantityJson(cc.cpu_ns)},
               {"instructions", QuantityJson(cc.instructions)}};
        if (cc.cpu_relative > 0) c["cpu_relative"] = cc.cpu_relative;
        if (cc.cpu_of_rank_total > 0) c["cpu_of_rank_total"] = cc.cpu_of_rank_total;
        if (cc.spread_within >= 0) c["spread_within"] = cc.spread_within;
        classes.push_back(std::move(c));
      }
      sj["class_compute"] = classes;
      slots.push_back(sj);
    }
    pj["slots"] = slots;
    phases_j.push_back(pj);
  }
  j["phases"] = phases_j;
  return j.dump(1) + "\n";
}

AppModel ModelFromJson(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const std::exception& e) {
    throw UserError(origin + ": not a pas2p model (JSON parse error: " + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", "") != "pas2p-model") {
    throw UserError(origin +
                    ": not a pas2p model (expected \"format\": \"pas2p-model\"; write "
                    "one with `pas2p model TRACES --out FILE`)");
  }
  if (j.contains("version") && j.at("version").is_number_integer() &&
      j.at("version").get<int>() > kModelVersion) {
    throw UserError(origin + ": a model file of version " +
                    std::to_string(j.at("version").get<int>()) + ", newer than this pas2p reads (" +
                    std::to_string(kModelVersion) +
                    "): build it again with this pas2p (`pas2p model TRACES --out FILE`)");
  }
  AppModel model;
  try {
    model.application = j.at("application").get<std::string>();
    model.counts = j.at("counts").get<std::vector<int>>();
    model.warnings = j.at("warnings").get<std::vector<std::string>>();
    model.unmodelled_share = j.at("unmodelled_share").get<double>();
    model.unmodelled_bytes_share = j.value("unmodelled_bytes_share", 0.0);
    if (j.contains("unmodelled_ratio")) {
      model.unmodelled_ratio = QuantityFromJson(j.at("unmodelled_ratio"));
      model.unmodelled_fitted_share = j.at("unmodelled_fitted_share").get<double>();
    }
    // Version 1's flat [[index, repetitions], ...] reads as a sequence without loops.
    try {
      model.sequence = phases::SequenceFromJsonText(j.at("sequence").dump(), origin);
    } catch (const TraceError& e) {
      throw UserError(e.what());
    }
    for (const int index : phases::SequencePhases(model.sequence)) {
      if (index < 0 || static_cast<std::size_t>(index) >= j.at("phases").size()) {
        throw UserError(origin + ": the sequence names phase " + std::to_string(index) +
                        ", which the model does not have");
      }
    }
    for (const auto& pj : j.at("phases")) {
      PhaseModel p;
      p.index = pj.at("index").get<int>();
      p.ids = pj.at("ids").get<std::vector<int>>();
      p.description = pj.at("description").get<std::string>();
      p.relevant = pj.at("relevant").get<bool>();
      p.block = pj.value("block", false);
      p.weight = QuantityFromJson(pj.at("weight"));
      p.scheduled = pj.value("scheduled", false);
      if (p.scheduled) {
        p.master = pj.at("master").get<int>();
        p.tasks = QuantityFromJson(pj.at("tasks"));
        if (pj.contains("rounds")) p.rounds = QuantityFromJson(pj.at("rounds"));
        if (pj.contains("task_cpu_ns")) p.task_cpu_ns = QuantityFromJson(pj.at("task_cpu_ns"));
        if (pj.contains("task_profile")) {
          p.task_profile = pj.at("task_profile").get<std::vector<double>>();
          p.task_profile_spread = pj.value("task_profile_spread", 0.0);
          for (double m : p.task_profile) {
            if (!(m >= 0) || !std::isfinite(m)) {
              throw UserError(origin + ": phase " + std::to_string(p.index) +
                              ": task_profile holds " + std::to_string(m) +
                              ", expected costs >= 0 relative to the mean task");
            }
          }
        }
      }
      // Version 2 wrote a rotation: "rotated_ranks" and "rotated_start".
      const bool rotation = pj.contains("rotated_ranks");
      std::size_t rotated_start = 0;
      if (rotation || pj.contains("reordered_ranks")) {
        const char* key = rotation ? "rotated_ranks" : "reordered_ranks";
        const std::string name = pj.at(key).get<std::string>();
        for (RankSet set : AllRankSets()) {
          if (RankSetName(set) == name) p.reordered_ranks = set;
        }
        if (p.reordered_ranks == RankSet::kNone) {
          throw UserError(origin + ": phase " + std::to_string(p.index) + ": unknown " + key +
                          " \"" + name + "\"");
        }
        if (rotation) {
          rotated_start = pj.at("rotated_start").get<std::size_t>();
        } else {
          p.own_order = pj.at("own_order").get<std::vector<std::size_t>>();
        }
      }
      p.traced_time_s = pj.at("traced_time_s").get<std::vector<double>>();
      if (pj.contains("cpu_total")) p.cpu_total = QuantityFromJson(pj.at("cpu_total"));
      p.cpu_total_per_run = pj.value("cpu_total_per_run", false);
      if (p.cpu_total_per_run && (!p.cpu_total.present || !p.weight.present)) {
        throw UserError(origin + ": phase " + std::to_string(p.index) +
                        ": cpu_total_per_run needs \"cpu_total\" and \"weight\"");
      }
      if (pj.contains("rank_cpu_total")) {
        p.rank_cpu_total = QuantityFromJson(pj.at("rank_cpu_total"));
      }
      for (const auto& sj : pj.at("slots")) {
        SlotModel s;
        if (!ParseEventKind(sj.at("kind").get<std::string>(), &s.kind)) {
          throw UserError("unknown call kind " + sj.at("kind").dump());
        }
        s.tag = sj.at("tag").get<std::int32_t>();
        s.sub_comm = sj.at("sub_comm").get<bool>();
        s.presence = PresenceFromName(sj.at("presence").get<std::string>(), origin);
        s.like_slots = sj.at("like_slots").get<std::vector<int>>();
        s.wildcard = sj.at("wildcard").get<bool>();
        s.reply = sj.contains("reply") && sj.at("reply").get<bool>();
        if (sj.contains("root_step")) {
          const auto name = sj.at("root_step").get<std::string>();
          if (!phases::ParseRootStep(name, &s.root_step)) {
            throw UserError(origin + ": unknown root_step \"" + name +
                            "\" (expected fixed, next, previous or same)");
          }
          s.root_cpu_ns = QuantityFromJson(sj.at("root_cpu_ns"));
        }
        s.dest_order = DestOrderFromName(sj.value("dest_order", "ascending"), origin);
        // Files written before it: the sources in the sends' order.
        s.recv_order = sj.contains("recv_order")
                           ? DestOrderFromName(sj.at("recv_order").get<std::string>(), origin)
                           : s.dest_order;
        s.cpu_spread_between = sj.value("cpu_spread_between", 0.0);
        s.cpu_spread_persistent = sj.value("cpu_spread_persistent", s.cpu_spread_between);
        s.face_dim = sj.value("face_dim", -1);
        s.face_bytes = sj.value("face_bytes", 0.0);
        s.face_recv_bytes = sj.value("face_recv_bytes", 0.0);
        s.face_line = sj.value("face_line", false);
        s.face_margin = sj.value("face_margin", 0.0);
        s.carried = sj.value("carried", false);
        s.cpu_spread_within = sj.value("cpu_spread_within", 0.0);
        s.cpu_spread_shared = sj.value("cpu_spread_shared", 0.0);
        if (sj.contains("cpu_noise_shape")) {
          s.cpu_noise_shape = sj.at("cpu_noise_shape").get<std::vector<double>>();
          if (s.cpu_noise_shape.size() < 2) {
            throw UserError(origin + ": phase " + std::to_string(p.index) +
                            ": cpu_noise_shape needs at least 2 values");
          }
        }
        s.cpu_per_occurrence = sj.value("cpu_per_occurrence", false);
        s.cpu_ns_per_byte = sj.value("cpu_ns_per_byte", 0.0);
        s.cpu_bytes_with_previous = sj.value("cpu_bytes_with_previous", false);
        s.cpu_bytes_base = sj.value("cpu_bytes_base", 0.0);
        s.cpu_bytes_loo_error = sj.value("cpu_bytes_loo_error", 0.0);
        s.cpu_of_rank_total = sj.value("cpu_of_rank_total", 0.0);
        s.all_pending = sj.at("all_pending").get<bool>();
        s.requests = sj.at("requests").get<std::int32_t>();
        s.polled = sj.value("polled", false);
        s.polls = sj.value("polls", 0.0);
        for (const auto& m : sj.at("maps")) s.maps.push_back(MapFromJson(m));
        for (const auto& m : sj.at("recv_maps")) s.recv_maps.push_back(MapFromJson(m));
        auto layout_of = [](const json& l) {
          patterns::CommunicatorLayout layout;
          layout.nprocs = l.at("nprocs").get<int>();
          layout.groups = l.at("groups").get<std::vector<std::vector<int>>>();
          return layout;
        };
        for (const auto& l : sj.at("layouts")) s.layouts.push_back(layout_of(l));
        // Absent in files written before components of unequal sizes were fitted.
        if (sj.contains("p2p_layouts")) {
          for (const auto& l : sj.at("p2p_layouts")) s.p2p_layouts.push_back(layout_of(l));
        }
        for (const auto& r : sj.at("root_points")) {
          s.root_points.emplace_back(r.at(0).get<std::int64_t>(), r.at(1).get<std::int64_t>());
        }
        s.bytes = QuantityFromJson(sj.at("bytes"));
        s.recv_bytes = QuantityFromJson(sj.at("recv_bytes"));
        s.root_bytes = QuantityFromJson(sj.at("root_bytes"));
        s.root_recv_bytes = QuantityFromJson(sj.at("root_recv_bytes"));
        for (auto [key, out] : {std::pair{"bytes_max_ratio", &s.bytes_max_ratio},
                                std::pair{"recv_bytes_max_ratio", &s.recv_bytes_max_ratio}}) {
          *out = sj.value(key, 1.0);
          if (!std::isfinite(*out) || *out < 1) {
            throw UserError(origin + ": phase " + std::to_string(p.index) + ": " + key +
                            " must be a number >= 1 (or absent)");
          }
        }
        s.cpu_ns = QuantityFromJson(sj.at("cpu_ns"));
        s.instructions = QuantityFromJson(sj.at("instructions"));
        for (const auto& cj : sj.at("class_compute")) {
          SlotModel::ClassCompute cc;
          cc.mask = cj.at("mask").get<std::string>();
          cc.cpu_ns = QuantityFromJson(cj.at("cpu_ns"));
          cc.instructions = QuantityFromJson(cj.at("instructions"));
          cc.cpu_relative = cj.value("cpu_relative", 0.0);
          cc.cpu_of_rank_total = cj.value("cpu_of_rank_total", 0.0);
          cc.spread_within = cj.value("spread_within", -1.0);
          if (!std::isfinite(cc.spread_within) ||
              (cc.spread_within < 0 && cc.spread_within != -1)) {
            throw UserError(origin + ": phase " + std::to_string(p.index) +
                            ": class_compute spread_within must be a number >= 0 (or absent)");
          }
          if (!(cc.cpu_relative >= 0) || !std::isfinite(cc.cpu_relative)) {
            throw UserError(origin + ": phase " + std::to_string(p.index) +
                            ": class_compute cpu_relative must be a number >= 0");
          }
          s.class_compute.push_back(std::move(cc));
        }
        FitSlotEquations(&s, SlotLabel(p, p.slots.size(), s));
        if (sj.contains("peer_fit")) {
          s.peer = patterns::GeneralEquationFromJson(sj.at("peer_fit"), origin);
        }
        if (sj.contains("recv_peer_fit")) {
          s.recv_peer = patterns::GeneralEquationFromJson(sj.at("recv_peer_fit"), origin);
        }
        s.subtree_bytes = sj.value("subtree_bytes", false);
        s.step_blocks = sj.value("step_blocks", false);
        if (s.step_blocks && (StepBlocks(s.peer, 2) < 0 ||
                              (s.kind == EventKind::kSendrecv && StepBlocks(s.recv_peer, 2) < 0))) {
          throw UserError(origin + ": phase " + std::to_string(p.index) + " call " +
                          std::to_string(p.slots.size()) +
                          ": step_blocks needs a dissemination step of one bit (family "
                          "\"dissemination\", one entry in \"bits\") on each side");
        }
        s.bytes_per_occurrence = sj.value("bytes_per_occurrence", false);
        if (s.bytes_per_occurrence && (!p.block || !s.peer || s.step_blocks || s.subtree_bytes)) {
          throw UserError(origin + ": phase " + std::to_string(p.index) + " call " +
                          std::to_string(p.slots.size()) +
                          ": bytes_per_occurrence needs a repeated block (\"block\": true) and "
                          "a call with partners, without step_blocks or subtree_bytes");
        }
        if (sj.contains("component_bytes")) {
          const std::string call = origin + ": phase " + std::to_string(p.index) + " call " +
                                   std::to_string(p.slots.size()) + ": component_bytes";
          const json& laws = sj.at("component_bytes");
          if (!laws.is_array() || !s.peer || s.peer->family != patterns::Family::kComponents ||
              laws.size() != s.peer->terms.size() || s.face_dim >= 0 || s.step_blocks ||
              s.subtree_bytes || s.bytes_per_occurrence) {
            throw UserError(call + " needs a call on components (family \"components\") and " +
                            "one law per component (" +
                            std::to_string(s.peer ? s.peer->terms.size() : 0) +
                            " here), without a face, step_blocks, subtree_bytes or "
                            "bytes_per_occurrence");
          }
          for (const json& lj : laws) {
            ComponentBytes law;
            law.own_ranks = lj.at("own_ranks").get<bool>();
            law.bytes = QuantityFromJson(lj.at("bytes"));
            if (lj.contains("recv_bytes")) law.recv_bytes = QuantityFromJson(lj.at("recv_bytes"));
            law.face_dim = lj.value("face_dim", -1);
            law.face_bytes = lj.value("face_bytes", 0.0);
            law.face_recv_bytes = lj.value("face_recv_bytes", 0.0);
            law.face_line = lj.value("face_line", false);
            law.face_margin = lj.value("face_margin", 0.0);
            if (law.face_dim >= 0 &&
                (!law.own_ranks || !(law.face_bytes > 0) || !(law.face_margin >= 0) ||
                 !std::isfinite(law.face_bytes) || !std::isfinite(law.face_margin))) {
              throw UserError(call + ": a component's face needs \"own_ranks\": true, " +
                              "\"face_bytes\" > 0 and \"face_margin\" >= 0");
            }
            s.component_bytes.push_back(std::move(law));
          }
        }
        s.element_bytes = sj.value("element_bytes", std::int64_t{1});
        if (s.element_bytes < 1 || s.element_bytes > kLargestElementBytes ||
            (s.element_bytes & (s.element_bytes - 1)) != 0) {
          throw UserError(origin + ": phase " + std::to_string(p.index) + " call " +
                          std::to_string(p.slots.size()) + ": \"element_bytes\" is " +
                          std::to_string(s.element_bytes) + "; expected 1, 2, 4 or 8");
        }
        if (s.subtree_bytes && (!IsLowTreeLevel(s.peer) || s.kind == EventKind::kSendrecv)) {
          throw UserError(origin + ": phase " + std::to_string(p.index) + " call " +
                          std::to_string(p.slots.size()) +
                          ": subtree_bytes needs a send or receive on one level of a binomial "
                          "tree rooted at rank 0 (a peer of tree role low parent or low child)");
        }
        p.slots.push_back(std::move(s));
      }
      if (p.reordered_ranks != RankSet::kNone) {
        const std::size_t n = p.slots.size();
        if (rotation) {
          for (std::size_t k = 0; k < n; ++k) p.own_order.push_back((rotated_start + k) % n);
        }
        std::vector<std::size_t> sorted = p.own_order;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k) {
          if (sorted.size() != n || sorted[k] != k) {
            throw UserError(origin + ": phase " + std::to_string(p.index) +
                            ": own_order must list each of its " + std::to_string(n) +
                            " slots once");
          }
        }
        if (n == 0) p.reordered_ranks = RankSet::kNone;
      }
      model.phases.push_back(std::move(p));
    }
  } catch (const UserError& e) {
    throw UserError(origin + ": " + e.what());
  } catch (const std::exception& e) {
    throw UserError(origin + ": malformed pas2p model: " + e.what());
  }
  AddValidCounts(&model);
  return model;
}

void SaveModel(const AppModel& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UserError("cannot write the model file " + path);
  out << ModelToJson(model);
  if (!out) throw UserError("cannot write the model file " + path);
}

AppModel LoadModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot read the model file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ModelFromJson(ss.str(), path);
}

}  // namespace pas2p::synthesis
