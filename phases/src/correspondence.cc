#include "pas2p/phases/correspondence.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"

namespace pas2p::phases {

std::string FunctionalKey(const Phase& phase, int nprocs) {
  std::set<std::string> ops;
  // A repeated phase is described by the ranks that repeat it: a rank that found no loop
  // at all (a worker that got too few tasks) is matched into the phase as a whole stream,
  // init to finalize, which says nothing about the phase's kind of communication.
  bool any_repeating = false;
  for (const RankPhase& rp : phase.ranks) any_repeating = any_repeating || rp.weight > 1.5;
  const bool only_repeating = phase.weight > 1.5 && any_repeating;
  for (const RankPhase& rp : phase.ranks) {
    if (only_repeating && rp.weight <= 1.5) continue;
    for (const PhaseEvent& e : rp.events) {
      std::string op(EventKindName(e.kind));
      if (IsCollective(e.kind)) op += e.comm == kCommWorld ? "@world" : "@sub";
      ops.insert(op);
    }
  }
  (void)nprocs;
  std::string key;
  for (const std::string& op : ops) key += (key.empty() ? "" : ",") + op;
  return key.empty() ? "(empty)" : key;
}

namespace {

struct Item {
  int id;
  std::string key;
  bool relevant;
  double weight;
  std::string key_alone;  // the key without point-to-point calls
  bool alone = false;     // a run of one rank
};

// The operations of a functional key that are point-to-point calls (`p2p`) or the others.
std::vector<std::string> KeyOps(const std::string& key, bool p2p) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= key.size()) {
    std::size_t end = key.find(',', start);
    if (end == std::string::npos) end = key.size();
    std::string op = key.substr(start, end - start);
    bool is_p2p = false;
    for (EventKind k : {EventKind::kSend, EventKind::kIsend, EventKind::kRecv, EventKind::kIrecv,
                        EventKind::kSendrecv}) {
      is_p2p = is_p2p || op == EventKindName(k);
    }
    if (is_p2p == p2p && !op.empty()) out.push_back(std::move(op));
    start = end + 1;
  }
  return out;
}

// The functional key without point-to-point operations: what a phase of the same code does
// on one rank, which has no partner to talk to (a halo exchange whose neighbours all lie
// outside a 1 x 1 x 1 grid makes no call but its completion).
std::string KeyAlone(const std::string& key) {
  std::string out;
  for (const std::string& op : KeyOps(key, false)) out += (out.empty() ? "" : ",") + op;
  return out;
}

std::vector<Item> Items(const Signature& sig) {
  std::vector<Item> items;
  for (const Phase& p : sig.phases) {
    const std::string key = FunctionalKey(p, sig.nprocs);
    items.push_back(Item{p.id, key, p.relevant, p.weight, KeyAlone(key), sig.nprocs == 1});
  }
  // Run order: by first logical step, then id.
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sig.phases[a].first_step < sig.phases[b].first_step;
  });
  std::vector<Item> sorted;
  for (std::size_t i : order) sorted.push_back(items[i]);
  return sorted;
}

// Weighted longest common subsequence on equal keys; relevant phases weigh more.
std::vector<std::pair<int, int>> AlignItems(const std::vector<Item>& a,
                                            const std::vector<Item>& b) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::vector<double>> dp(n + 1, std::vector<double>(m + 1, 0));
  auto score = [&](std::size_t i, std::size_t j) -> double {
    const bool alone = a[i].alone != b[j].alone;  // one side is a run of one rank
    if (alone ? (a[i].key_alone.empty() || a[i].key_alone != b[j].key_alone)
              : a[i].key != b[j].key) {
      return -1;
    }
    return 1 + (a[i].relevant ? 10 : 0) + (b[j].relevant ? 10 : 0);
  };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      double best = std::max(dp[i + 1][j], dp[i][j + 1]);
      const double s = score(i, j);
      if (s > 0) best = std::max(best, dp[i + 1][j + 1] + s);
      dp[i][j] = best;
    }
  }
  std::vector<std::pair<int, int>> pairs;
  std::size_t i = 0, j = 0;
  while (i < n && j < m) {
    const double s = score(i, j);
    if (s > 0 && dp[i][j] == dp[i + 1][j + 1] + s) {
      pairs.emplace_back(static_cast<int>(i), static_cast<int>(j));
      ++i;
      ++j;
    } else if (dp[i][j] == dp[i + 1][j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return pairs;
}

// Whether two relevant phases left unmatched between the same matched neighbours are one
// phase of the code whose point-to-point calls differ with the count: the same collectives
// and completions, and point-to-point calls of one kind in common (a recursive doubling
// that folds the ranks beyond the largest power of two sends and receives at 6 and 12 ranks
// besides the sendrecv it makes at 4, 8 and 16).
bool AlikeButForPointToPoint(const Item& a, const Item& b) {
  if (a.alone || b.alone || !a.relevant || !b.relevant || a.key_alone != b.key_alone) return false;
  const std::vector<std::string> pa = KeyOps(a.key, true), pb = KeyOps(b.key, true);
  return std::any_of(pa.begin(), pa.end(), [&](const std::string& op) {
    return std::find(pb.begin(), pb.end(), op) != pb.end();
  });
}

// AlignItems, then in each gap between matched phases, the one relevant phase left on each
// side when the two are AlikeButForPointToPoint.
std::vector<std::pair<int, int>> AlignItemsRelaxed(const std::vector<Item>& a,
                                                   const std::vector<Item>& b) {
  std::vector<std::pair<int, int>> exact = AlignItems(a, b);
  std::vector<std::pair<int, int>> out;
  int last_i = -1, last_j = -1;
  auto gap = [&](int end_i, int end_j) {
    int only_i = -1, only_j = -1, relevant_i = 0, relevant_j = 0;
    for (int i = last_i + 1; i < end_i; ++i) {
      if (a[static_cast<std::size_t>(i)].relevant) {
        ++relevant_i;
        only_i = i;
      }
    }
    for (int j = last_j + 1; j < end_j; ++j) {
      if (b[static_cast<std::size_t>(j)].relevant) {
        ++relevant_j;
        only_j = j;
      }
    }
    if (relevant_i == 1 && relevant_j == 1 &&
        AlikeButForPointToPoint(a[static_cast<std::size_t>(only_i)],
                                b[static_cast<std::size_t>(only_j)])) {
      out.emplace_back(only_i, only_j);
    }
  };
  for (const auto& [i, j] : exact) {
    gap(i, j);
    out.emplace_back(i, j);
    last_i = i;
    last_j = j;
  }
  gap(static_cast<int>(a.size()), static_cast<int>(b.size()));
  return out;
}

}  // namespace

Correspondence CorrespondPhases(const std::vector<Signature>& signatures) {
  if (signatures.empty()) throw UserError("no signatures to relate");
  for (const Signature& s : signatures) {
    if (ApplicationBaseName(s.application, s.nprocs) !=
        ApplicationBaseName(signatures.front().application, signatures.front().nprocs)) {
      throw UserError("the traces are of different applications (\"" +
                      signatures.front().application + "\" in " + signatures.front().trace +
                      ", \"" + s.application + "\" in " + s.trace +
                      "); give traces of one application at several process counts");
    }
  }
  Correspondence out;
  const std::size_t ns = signatures.size();
  for (const Signature& s : signatures) out.nprocs.push_back(s.nprocs);
  // Reference: the smallest count (ties: first given) of more than one rank, if any: a run
  // of one rank lacks the point-to-point calls, and the groups are named by what the phase
  // does with partners.
  std::size_t ref = 0;
  auto smaller = [&](std::size_t x, std::size_t y) {
    const bool x1 = signatures[x].nprocs == 1, y1 = signatures[y].nprocs == 1;
    if (x1 != y1) return y1;
    return signatures[x].nprocs < signatures[y].nprocs;
  };
  for (std::size_t s = 1; s < ns; ++s) {
    if (smaller(s, ref)) ref = s;
  }
  std::vector<std::vector<Item>> items;
  for (const Signature& s : signatures) items.push_back(Items(s));

  auto new_group = [&](const Item& item) {
    PhaseGroup g;
    g.key = item.key;
    g.phase_ids.assign(ns, -1);
    g.weights.assign(ns, 0);
    return g;
  };
  for (const Item& item : items[ref]) {
    PhaseGroup g = new_group(item);
    g.phase_ids[ref] = item.id;
    g.weights[ref] = item.weight;
    g.relevant = item.relevant;
    out.groups.push_back(std::move(g));
  }
  for (std::size_t s = 0; s < ns; ++s) {
    if (s == ref) continue;
    std::vector<bool> used(items[s].size(), false);
    for (const auto& [i, j] : AlignItemsRelaxed(items[ref], items[s])) {
      PhaseGroup& g = out.groups[static_cast<std::size_t>(i)];
      g.phase_ids[s] = items[s][j].id;
      g.weights[s] = items[s][j].weight;
      g.relevant = g.relevant || items[s][j].relevant;
      used[static_cast<std::size_t>(j)] = true;
    }
    for (std::size_t j = 0; j < items[s].size(); ++j) {
      if (used[j]) continue;
      PhaseGroup g = new_group(items[s][j]);
      g.phase_ids[s] = items[s][j].id;
      g.weights[s] = items[s][j].weight;
      g.relevant = items[s][j].relevant;
      out.groups.push_back(std::move(g));
    }
  }
  for (PhaseGroup& g : out.groups) {
    g.complete =
        std::all_of(g.phase_ids.begin(), g.phase_ids.end(), [](int id) { return id >= 0; });
    if (g.relevant && !g.complete) {
      std::string counts;
      for (std::size_t s = 0; s < ns; ++s) {
        if (g.phase_ids[s] < 0)
          counts += (counts.empty() ? "" : ", ") + std::to_string(out.nprocs[s]);
      }
      out.warnings.push_back("a relevant phase (" + g.key + ") has no counterpart at " + counts +
                             " processes");
    }
  }
  return out;
}

std::string FormatCorrespondence(const Correspondence& c) {
  std::ostringstream out;
  out << "Phases across process counts (P =";
  for (int p : c.nprocs) out << ' ' << p;
  out << "):\n";
  for (const PhaseGroup& g : c.groups) {
    out << (g.complete ? "  same phase" : "  partial   ")
        << (g.relevant ? " [relevant]" : "           ") << "  ids";
    for (int id : g.phase_ids) out << ' ' << (id >= 0 ? std::to_string(id) : std::string("-"));
    out << "  weights";
    for (double w : g.weights) out << ' ' << w;
    out << "  (" << g.key << ")\n";
  }
  for (const std::string& w : c.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace pas2p::phases
