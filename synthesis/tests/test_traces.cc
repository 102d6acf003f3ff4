#include "test_traces.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "pas2p/patterns/grid.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/synthesis/synthesize.h"

namespace pas2p::synthesis::testing {

void SetWallTimes(TraceData* d) {
  for (auto& r : d->ranks) {
    std::int64_t t = 0;
    for (Event& e : r) {
      e.wall_start_ns = t;
      t += e.kind == EventKind::kCompute ? e.cpu_ns : 1000;
      e.wall_end_ns = t;
    }
  }
}

namespace {

int Side(int nprocs) { return static_cast<int>(std::lround(std::sqrt(nprocs))); }

TraceData Begin(const std::string& app, int nprocs) {
  TraceData d;
  d.metadata.application = app;
  d.metadata.nprocs = nprocs;
  d.metadata.source = "generator";
  d.ranks.resize(nprocs);
  for (auto& r : d.ranks) {
    Event init;
    init.kind = EventKind::kInit;
    r.push_back(init);
  }
  return d;
}

void End(TraceData* d) {
  for (auto& r : d->ranks) {
    r.push_back(MakeCompute(1000));
    r.push_back(MakeCollective(EventKind::kAllreduce, 16, 16));
    Event fin;
    fin.kind = EventKind::kFinalize;
    r.push_back(fin);
  }
  SetWallTimes(d);
}

// One ring exchange of rank r: irecv from r-1, send to r+1, wait (1 ms of compute before).
void RingExchange(std::vector<Event>* ev, int r, int nprocs, std::uint64_t bytes, RequestId* next) {
  ev->push_back(MakeCompute(1000000));
  const RequestId req = (*next)++;
  ev->push_back(MakeIrecv((r + nprocs - 1) % nprocs, 0, bytes, req));
  ev->push_back(MakeSend((r + 1) % nprocs, 0, bytes));
  ev->push_back(MakeWaitall({req}));
}

void TorusHalo(TraceData* d, int r, std::uint64_t bytes, RequestId* next,
               std::int64_t before_wait_ns = 0) {
  const int n = static_cast<int>(d->ranks.size());
  const int q = Side(n);
  const int row = r / q, col = r % q;
  const int north = ((row - 1 + q) % q) * q + col, south = ((row + 1) % q) * q + col;
  const int west = row * q + (col - 1 + q) % q, east = row * q + (col + 1) % q;
  auto& ev = d->ranks[r];
  std::vector<RequestId> reqs;
  const int peers[4] = {north, south, west, east};
  // Tags name the direction a message travels (10 north, 11 south, 12 west, 13 east): the
  // message from the north neighbour travels south.
  const int recv_tags[4] = {11, 10, 13, 12};
  for (int k = 0; k < 4; ++k) {
    reqs.push_back((*next)++);
    ev.push_back(MakeIrecv(peers[k], recv_tags[k], bytes, reqs.back()));
  }
  const int send_tags[4] = {10, 11, 12, 13};
  for (int k = 0; k < 4; ++k) {
    reqs.push_back((*next)++);
    ev.push_back(MakeIsend(peers[k], send_tags[k], bytes, reqs.back()));
  }
  if (before_wait_ns > 0) ev.push_back(MakeCompute(before_wait_ns));
  ev.push_back(MakeWaitall(reqs));
}

// A ring halo's posts: irecv from `left` (tag 1) and `right` (tag 2), isend to `right`
// (tag 1) and `left` (tag 2); returns their requests in that order.
std::array<RequestId, 4> PostRingHalo(std::vector<Event>* ev, int left, int right,
                                      std::uint64_t bytes, RequestId* next) {
  const std::array<RequestId, 4> q = {(*next)++, (*next)++, (*next)++, (*next)++};
  ev->push_back(MakeIrecv(left, 1, bytes, q[0]));
  ev->push_back(MakeIrecv(right, 2, bytes, q[1]));
  ev->push_back(MakeIsend(right, 1, bytes, q[2]));
  ev->push_back(MakeIsend(left, 2, bytes, q[3]));
  return q;
}

}  // namespace

TraceData TorusStencil(int nprocs, const AppParams& p) {
  TraceData d = Begin("torus_stencil", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const double jump = p.split_jump > 0 && nprocs == p.split_jump_at ? p.split_jump : 0.0;
  const auto at_wait = static_cast<std::int64_t>(
      p.split_wobble > 0 || p.split_jump > 0
          ? static_cast<double>(cpu) * (0.5 + p.split_wobble * std::sin(nprocs) + jump)
          : 0.0);
  for (int r = 0; r < nprocs; ++r) {
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu - at_wait));
      TorusHalo(&d, r, bytes, &next, at_wait);
      if (p.check_every > 0 && (it + 1) % p.check_every == 0) {
        d.ranks[r].push_back(MakeCompute(cpu / 10));
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

TraceData EastShift(int nprocs, double phase_kb, int iterations) {
  TraceData d = Begin("bt_east", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(std::llround(phase_kb * 1024.0 / nprocs));
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    const int east = row * q + (col + 1) % q, west = row * q + (col - 1 + q) % q;
    RequestId next = 1;
    for (int it = 0; it < iterations; ++it) {
      auto& ev = d.ranks[r];
      ev.push_back(MakeCompute(2000000));
      const RequestId a = next++, b = next++;
      ev.push_back(MakeIrecv(west, 1, bytes, a));
      ev.push_back(MakeIsend(east, 1, bytes, b));
      ev.push_back(MakeWaitall({a, b}));
    }
  }
  End(&d);
  return d;
}

namespace {
// `iterations` of a ring exchange on rank r of nprocs (RingThenScattered's): compute, irecv
// from the west, isend to the east, waitall.
void RingIterations(std::vector<Event>* ev, int r, int nprocs, std::uint64_t bytes,
                    std::int64_t cpu, int iterations, RequestId* next) {
  const int east = (r + 1) % nprocs, west = (r - 1 + nprocs) % nprocs;
  for (int it = 0; it < iterations; ++it) {
    ev->push_back(MakeCompute(cpu));
    const RequestId a = (*next)++, b = (*next)++;
    ev->push_back(MakeIrecv(west, 1, bytes, a));
    ev->push_back(MakeIsend(east, 1, bytes, b));
    ev->push_back(MakeWaitall({a, b}));
  }
}
}  // namespace

TraceData RingThenScattered(int nprocs, const AppParams& p, int scattered) {
  if (scattered < 0) scattered = p.iterations;
  TraceData d = Begin("ring_then_scattered", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  auto dest = [&](int r) { return static_cast<int>((std::int64_t{r} * r + 1) % nprocs); };
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    RequestId next = 1;
    RingIterations(&ev, r, nprocs, bytes, cpu, p.iterations, &next);
    for (int it = 0; it < scattered; ++it) {
      ev.push_back(MakeCompute(cpu));
      std::vector<RequestId> reqs;
      for (int s = 0; s < nprocs; ++s) {
        if (dest(s) != r) continue;
        reqs.push_back(next++);
        ev.push_back(MakeIrecv(s, 2, bytes, reqs.back()));
      }
      reqs.push_back(next++);
      ev.push_back(MakeIsend(dest(r), 2, bytes, reqs.back()));
      ev.push_back(MakeWaitall(reqs));
    }
  }
  End(&d);
  return d;
}

TraceData RingThenWildcardSetup(int nprocs, const AppParams& p) {
  TraceData d = Begin("ring_then_wildcard_setup", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const int master = nprocs - 1;
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    RequestId next = 1;
    RingIterations(&ev, r, nprocs, bytes, cpu, p.iterations, &next);
    // Every other rank asks the last one, which answers whoever asked.
    ev.push_back(MakeCompute(cpu / 10));
    if (r == master) {
      for (int w = 0; w < master; ++w) {
        Event ask = MakeRecv(w, 3, 8);
        ask.recv_peer = kAnySource;
        ev.push_back(ask);
        ev.push_back(MakeCompute(cpu / 100));
        ev.push_back(MakeSend(w, 4, 8));
      }
    } else {
      ev.push_back(MakeSend(master, 3, 8));
      ev.push_back(MakeRecv(master, 4, 8));
    }
    // One receive from any source per other rank, posted alone, then the sends to every
    // other rank in an order of the rank's own (no pattern family reproduces it), then one
    // wait for all.
    std::vector<RequestId> reqs;
    for (int k = 1; k < nprocs; ++k) {
      reqs.push_back(next++);
      ev.push_back(MakeIrecv(kAnySource, 9, 4, reqs.back()));
      ev.push_back(MakeCompute(cpu / 100));
    }
    std::vector<int> to;
    for (int s = 0; s < nprocs; ++s) {
      if (s != r) to.push_back(s);
    }
    std::sort(to.begin(), to.end(), [&](int a, int b) {
      auto key = [&](int s) {
        return (static_cast<std::uint64_t>(s) * 2654435761U +
                static_cast<std::uint64_t>(r) * 40503U) %
               97U;
      };
      return std::pair(key(a), a) < std::pair(key(b), b);
    });
    for (const int s : to) {
      ev.push_back(MakeCompute(cpu / 100));
      reqs.push_back(next++);
      ev.push_back(MakeIsend(s, 9, 4, reqs.back()));
    }
    ev.push_back(MakeCompute(cpu / 10));
    Event all = MakeWaitall(reqs);
    // The receives take the sends in rank order.
    int k = 0;
    for (int s = 0; s < nprocs; ++s) {
      if (s == r) continue;
      all.completed[static_cast<std::size_t>(k)].peer = s;
      all.completed[static_cast<std::size_t>(k)].tag = 9;
      all.completed[static_cast<std::size_t>(k)].bytes = 4;
      ++k;
    }
    ev.push_back(all);
  }
  End(&d);
  return d;
}

TraceData MeshWavefront(int nprocs, const AppParams& p) {
  TraceData d = Begin("mesh_wavefront", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      if (row > 0) ev.push_back(MakeRecv(r - q, 1, bytes));
      if (col > 0) ev.push_back(MakeRecv(r - 1, 1, bytes));
      ev.push_back(MakeCompute(cpu));
      if (row < q - 1) ev.push_back(MakeSend(r + q, 1, bytes));
      if (col < q - 1) ev.push_back(MakeSend(r + 1, 1, bytes));
    }
  }
  End(&d);
  return d;
}

TraceData KbaSweeps(int nprocs, const AppParams& p) {
  TraceData d = Begin("kba_sweeps", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs / 16);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    auto& ev = d.ranks[r];
    auto at = [&](int c, int w) { return c >= 0 && c < q && w >= 0 && w < q ? w * q + c : -1; };
    for (int it = 0; it < p.iterations; ++it) {
      for (int o = 0; o < 4; ++o) {
        const int dx = o % 2 == 0 ? 1 : -1, dy = o < 2 ? 1 : -1;
        const int up_x = at(col - dx, row), up_y = at(col, row - dy);
        const int down_x = at(col + dx, row), down_y = at(col, row + dy);
        for (int block = 0; block < 4; ++block) {
          if (up_x >= 0) ev.push_back(MakeRecv(up_x, 20 + o, bytes));
          if (up_y >= 0) ev.push_back(MakeRecv(up_y, 30 + o, bytes));
          ev.push_back(MakeCompute(cpu));
          if (down_x >= 0) ev.push_back(MakeSend(down_x, 20 + o, bytes));
          if (down_y >= 0) ev.push_back(MakeSend(down_y, 30 + o, bytes));
        }
      }
    }
  }
  End(&d);
  return d;
}

TraceData ChainSweeps(int nprocs, const AppParams& p) {
  TraceData d = Begin("chain_sweeps", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      if (r > 0) ev.push_back(MakeRecv(r - 1, 1, bytes));
      ev.push_back(MakeCompute(cpu));
      if (r < nprocs - 1) ev.push_back(MakeSend(r + 1, 1, bytes));
      if (r < nprocs - 1) ev.push_back(MakeRecv(r + 1, 2, bytes));
      ev.push_back(MakeCompute(cpu));
      if (r > 0) ev.push_back(MakeSend(r - 1, 2, bytes));
    }
  }
  End(&d);
  return d;
}

TraceData AnySourceRing(int nprocs, const AppParams& p) {
  TraceData d = Begin("any_source_ring", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    const int right = (r + 1) % nprocs, left = (r + nprocs - 1) % nprocs;
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      const RequestId a = next++, b = next++, c = next++, e = next++;
      ev.push_back(MakeIrecv(kAnySource, 7, bytes, a));
      ev.push_back(MakeIrecv(kAnySource, 8, bytes, b));
      ev.push_back(MakeIsend(left, 8, bytes, c));
      ev.push_back(MakeIsend(right, 7, bytes, e));
      Event all = MakeWaitall({a, b, c, e});
      if (it % 2 == 1) std::swap(all.completed[0], all.completed[1]);  // b arrived first
      for (Completion& done : all.completed) {
        if (done.request == a) done.peer = left, done.tag = 7, done.bytes = bytes;
        if (done.request == b) done.peer = right, done.tag = 8, done.bytes = bytes;
      }
      ev.push_back(all);
      ev.push_back(MakeCompute(cpu));
    }
  }
  End(&d);
  return d;
}

TraceData WaitsomeRing(int nprocs, const AppParams& p) {
  TraceData d = Begin("waitsome_ring", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    const int right = (r + 1) % nprocs, left = (r + nprocs - 1) % nprocs;
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      const auto [a, b, c, e] = PostRingHalo(&ev, left, right, bytes, &next);
      auto some = [&](std::vector<RequestId> passed, std::vector<RequestId> done) {
        Event w = MakeWaitall(passed);
        w.kind = EventKind::kWaitsome;
        w.completed.clear();
        for (RequestId q : done) {
          Completion k;
          k.request = q;
          k.peer = q == a ? left : right;
          k.tag = q == a ? 1 : 2;
          k.bytes = bytes;
          w.completed.push_back(k);
        }
        return w;
      };
      if (r % 2 == 1 && it % 3 == 0) {
        ev.push_back(some({a, b}, {a}));
        ev.push_back(MakeCompute(20000));
        ev.push_back(some({b}, {b}));
      } else {
        ev.push_back(some({a, b}, {a, b}));
      }
      ev.push_back(MakeWaitall({c, e}));
      ev.push_back(MakeCompute(cpu));
    }
  }
  End(&d);
  return d;
}

TraceData RedBlackRing(int nprocs, const AppParams& p) {
  TraceData d = Begin("red_black_ring", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    const int right = (r + 1) % nprocs, left = (r + nprocs - 1) % nprocs;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      Event send = MakeSend(right, 5, bytes);
      send.sync = true;
      const Event recv = MakeRecv(left, 5, bytes);
      ev.push_back(r % 2 == 0 ? send : recv);
      ev.push_back(MakeCompute(3000));
      ev.push_back(r % 2 == 0 ? recv : send);
    }
  }
  End(&d);
  return d;
}

TraceData Checkerboard(int nprocs, const AppParams& p) {
  TraceData d = Begin("checkerboard", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 2);
  const int w = static_cast<int>(dims[1]), h = static_cast<int>(dims[0]);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    const int x = r % w, y = r / w;
    const bool red = (x + y) % 2 == 0;
    auto rank_at = [&](int cx, int cy) {
      return cx >= 0 && cx < w && cy >= 0 && cy < h ? cy * w + cx : kProcNull;
    };
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int dir = 0; dir < 4; ++dir) {
        const int dx = dir == 0 ? 1 : dir == 1 ? -1 : 0, dy = dir == 2 ? 1 : dir == 3 ? -1 : 0;
        const int to = rank_at(x + dx, y + dy), from = rank_at(x - dx, y - dy);
        Event send = MakeSend(to, 40 + dir, bytes);
        send.sync = true;
        const Event recv = MakeRecv(from, 40 + dir, from == kProcNull ? 0 : bytes);
        ev.push_back(red ? send : recv);
        ev.push_back(MakeCompute(2000));
        ev.push_back(red ? recv : send);
        ev.push_back(MakeCompute(2000));
      }
    }
  }
  End(&d);
  return d;
}

TraceData BinomialTree(int nprocs, const AppParams& p, bool nonblocking, bool gather, int root) {
  TraceData d = Begin(gather ? "binomial_gather" : "binomial_tree", nprocs);
  const int base = root >= 0 ? root : nprocs + root;  // the root's world rank
  auto world = [&](int v) { return (v + base) % nprocs; };
  const auto block = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const std::uint64_t unit = block / 4;
  // The bytes between `v` and `peer` at level k (counted from the root): the child's
  // subtree's blocks, or one block.
  auto bytes_of = [&](int v, int peer, int k) {
    const int child = std::max(v, peer);
    return gather ? unit * static_cast<std::uint64_t>(std::min(k, nprocs - child)) : block;
  };
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  int top = 1;
  while (top < nprocs) top *= 2;
  for (int v = 0; v < nprocs; ++v) {  // ranks counted from the root
    auto& ev = d.ranks[static_cast<std::size_t>(world(v))];
    RequestId next_request = 1;
    auto call = [&](bool send, int to, int tag, int k) {
      const std::uint64_t bytes = bytes_of(v, to, k);
      const int peer = world(to);
      if (!nonblocking) {
        ev.push_back(send ? MakeSend(peer, tag, bytes) : MakeRecv(peer, tag, bytes));
        return;
      }
      const RequestId req = next_request++;
      ev.push_back(send ? MakeIsend(peer, tag, bytes, req) : MakeIrecv(peer, tag, bytes, req));
      ev.push_back(MakeCompute(500));
      Event w = MakeWaitall({req});
      w.kind = EventKind::kWait;
      ev.push_back(w);
    };
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 1; k < nprocs; k *= 2) {
        if (v % (2 * k) == k) {
          call(true, v - k, 9, k);
          ev.push_back(MakeCompute(1000));
          break;
        }
        if (v + k < nprocs) {
          call(false, v + k, 9, k);
          ev.push_back(MakeCompute(cpu / 20));
        }
      }
      for (int k = top / 2; k >= 1; k /= 2) {
        if (v % (2 * k) == k) {
          call(false, v - k, 10, k);
          ev.push_back(MakeCompute(1000));
        } else if (v % (2 * k) == 0 && v + k < nprocs) {
          call(true, v + k, 10, k);
          ev.push_back(MakeCompute(1000));
        }
      }
    }
  }
  End(&d);
  return d;
}

TraceData DoublingBroadcast(int nprocs, const AppParams& p, int root) {
  TraceData d = Begin("doubling_broadcast", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const int base = root >= 0 ? root : nprocs + root;  // the root's world rank
  auto world = [&](int v) { return (v + base) % nprocs; };
  for (int r = 0; r < nprocs; ++r) {  // r: the rank counted from the root
    auto& ev = d.ranks[static_cast<std::size_t>(world(r))];
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 1; k < nprocs; k *= 2) {
        if (r < k && r + k < nprocs) {
          ev.push_back(MakeSend(world(r + k), 7, bytes));
          ev.push_back(MakeCompute(1000));
        } else if (r >= k && r < 2 * k) {
          ev.push_back(MakeRecv(world(r - k), 7, bytes));
          ev.push_back(MakeCompute(1000));
        }
      }
    }
  }
  End(&d);
  return d;
}

TraceData OddEvenSort(int nprocs, const AppParams& p) {
  TraceData d = Begin("odd_even_sort", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 0; k < nprocs; ++k) {
        const int partner = (k + r) % 2 == 0 ? r + 1 : r - 1;
        if (partner < 0 || partner >= nprocs) continue;
        ev.push_back(MakeSendrecv(partner, partner, 3, bytes, bytes));
        ev.push_back(MakeCompute(cpu / 8));
      }
    }
  }
  End(&d);
  return d;
}

TraceData RampAlltoall(int nprocs, const AppParams& p) {
  TraceData d = Begin("ramp_alltoall", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs * 2 * (r + 1) / (nprocs + 1));
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      d.ranks[r].push_back(MakeCollective(EventKind::kAlltoall, bytes * nprocs, bytes * nprocs));
    }
  }
  End(&d);
  return d;
}

TraceData UnevenAlltoallv(int nprocs, const AppParams& p, bool by_half) {
  TraceData d = Begin("uneven_alltoallv", nprocs);
  const auto part = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int half = r < nprocs / 2 ? 0 : 1;
    if (by_half) {
      Event split;
      split.kind = EventKind::kCommCreate;
      split.comm = kCommWorld;
      split.new_comm = 100 + static_cast<CommId>(half);
      split.value = static_cast<std::int64_t>(CommOrigin::kSplit);
      for (int m = half * nprocs / 2; m < (half + 1) * nprocs / 2; ++m) split.members.push_back(m);
      d.ranks[r].push_back(split);
    }
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      if (by_half) {
        const std::uint64_t b = part * (1 + 2 * half);
        d.ranks[r].push_back(
            MakeCollective(EventKind::kAlltoallv, b, b, kNoRank, 100 + static_cast<CommId>(half)));
      } else {
        d.ranks[r].push_back(MakeCollective(EventKind::kAlltoallv, part * (1 + r % 3), 2 * part));
      }
    }
  }
  End(&d);
  return d;
}

TraceData PolledRing(int nprocs, const AppParams& p) {
  TraceData d = Begin("polled_ring", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto chunk = static_cast<std::int64_t>(p.compute_ns / nprocs / 8);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    const int right = (r + 1) % nprocs, left = (r + nprocs - 1) % nprocs;
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      const auto [a, b, c, e] = PostRingHalo(&ev, left, right, bytes, &next);
      const int found = 1 + (7 * r + 3 * it) % 6;
      for (int j = 1; j <= 8; ++j) {
        ev.push_back(MakeCompute(chunk));
        if (j > found) continue;
        Event test = MakeWaitall({a, b, c, e});
        test.kind = EventKind::kTestall;
        if (j < found) {
          test.completed.clear();
        } else {
          test.completed[0].peer = left;
          test.completed[0].tag = 1;
          test.completed[0].bytes = bytes;
          test.completed[1].peer = right;
          test.completed[1].tag = 2;
          test.completed[1].bytes = bytes;
        }
        ev.push_back(test);
      }
      ev.push_back(MakeCompute(chunk));
    }
  }
  End(&d);
  return d;
}

TraceData RowAllreduce(int nprocs, const AppParams& p) {
  TraceData d = Begin("row_allreduce", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q;
    Event split;
    split.kind = EventKind::kCommCreate;
    split.comm = kCommWorld;
    split.new_comm = 100 + static_cast<CommId>(row);
    split.value = static_cast<std::int64_t>(CommOrigin::kSplit);
    for (int c = 0; c < q; ++c) split.members.push_back(row * q + c);
    d.ranks[r].push_back(split);
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      TorusHalo(&d, r, bytes, &next);
      d.ranks[r].push_back(MakeCompute(cpu / 20));
      d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 64, 64, kNoRank, 100 + row));
    }
  }
  End(&d);
  return d;
}

TraceData PanelBroadcast(int nprocs, const AppParams& p) {
  TraceData d = Begin("panel_broadcast", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto panel =
      static_cast<std::int64_t>(p.root_compute_ns >= 0 ? p.root_compute_ns : p.compute_ns / 4);
  for (int r = 0; r < nprocs; ++r) {
    for (int k = 0; k < p.iterations; ++k) {
      const int root = k % nprocs;
      if (r == root) d.ranks[r].push_back(MakeCompute(panel));
      d.ranks[r].push_back(
          MakeCollective(EventKind::kBcast, r == root ? bytes : 0, r == root ? 0 : bytes, root));
      d.ranks[r].push_back(
          MakeCollective(EventKind::kBcast, r == root ? 32 : 0, r == root ? 0 : 32, root));
      const double left = static_cast<double>(p.iterations - k) / p.iterations;
      d.ranks[r].push_back(MakeCompute(static_cast<std::int64_t>(p.compute_ns / nprocs * left)));
    }
  }
  End(&d);
  return d;
}

TraceData SummaBroadcasts(int nprocs, const AppParams& p) {
  TraceData d = Begin("summa", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    Event split;
    split.kind = EventKind::kCommCreate;
    split.comm = kCommWorld;
    split.value = static_cast<std::int64_t>(CommOrigin::kSplit);
    split.new_comm = 100 + static_cast<CommId>(row);
    for (int c = 0; c < q; ++c) split.members.push_back(row * q + c);
    d.ranks[r].push_back(split);
    split.new_comm = 200 + static_cast<CommId>(col);
    split.members.clear();
    for (int w = 0; w < q; ++w) split.members.push_back(w * q + col);
    d.ranks[r].push_back(split);
    for (int k = 0; k < p.iterations; ++k) {
      const int a_root = k % q, b_root = ((-k - 1) % q + q) % q;
      d.ranks[r].push_back(MakeCollective(EventKind::kBcast, col == a_root ? bytes : 0,
                                          col == a_root ? 0 : bytes, row * q + a_root, 100 + row));
      d.ranks[r].push_back(MakeCollective(EventKind::kBcast, row == b_root ? bytes : 0,
                                          row == b_root ? 0 : bytes, b_root * q + col, 200 + col));
      d.ranks[r].push_back(MakeCompute(cpu));
    }
  }
  End(&d);
  return d;
}

TraceData PaddedTranspose(int nprocs, const AppParams& p) {
  TraceData d = Begin("padded_transpose", nprocs);
  const auto n = static_cast<std::uint64_t>(p.domain);
  const std::uint64_t procs = static_cast<std::uint64_t>(nprocs);
  const std::uint64_t b = (n + procs - 1) / procs;
  const std::uint64_t bytes = 8 * procs * b * b;
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      d.ranks[r].push_back(MakeCollective(EventKind::kAlltoall, bytes, bytes));
    }
  }
  End(&d);
  return d;
}

TraceData GroupLeaders(int nprocs, const AppParams& p) {
  TraceData d = Begin("group_leaders", nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const int groups = (nprocs + 3) / 4;
  const CommId leaders = 900;
  for (int r = 0; r < nprocs; ++r) {
    const int g = r / 4;
    Event split;
    split.kind = EventKind::kCommCreate;
    split.comm = kCommWorld;
    split.new_comm = 100 + static_cast<CommId>(g);
    split.value = static_cast<std::int64_t>(CommOrigin::kSplit);
    for (int m = 4 * g; m < std::min(nprocs, 4 * g + 4); ++m) split.members.push_back(m);
    d.ranks[r].push_back(split);
    if (r % 4 == 0) {
      Event lead = split;
      lead.new_comm = leaders;
      lead.members.clear();
      for (int k = 0; k < groups; ++k) lead.members.push_back(4 * k);
      d.ranks[r].push_back(lead);
    }
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, 100 + g));
      if (r % 4 == 0) {
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, leaders));
      }
      d.ranks[r].push_back(MakeCollective(EventKind::kBcast, r % 4 == 0 ? 8 : 0, r % 4 == 0 ? 0 : 8,
                                          r - r % 4, 100 + g));
    }
  }
  End(&d);
  return d;
}

TraceData GatherWorkBcast(int nprocs, const AppParams& p) {
  TraceData d = Begin("gather_work_bcast", nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const auto root_cpu =
      static_cast<std::int64_t>(p.root_compute_ns >= 0 ? p.root_compute_ns : p.compute_ns / 8);
  for (int r = 0; r < nprocs; ++r) {
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      d.ranks[r].push_back(MakeCollective(
          EventKind::kGather, 128, r == 0 ? 128 * static_cast<std::uint64_t>(nprocs) : 0, 0));
      d.ranks[r].push_back(MakeCompute(r == 0 ? root_cpu : 2000));
      d.ranks[r].push_back(
          MakeCollective(EventKind::kBcast, r == 0 ? 128 : 0, r == 0 ? 0 : 128, 0));
    }
  }
  End(&d);
  return d;
}

TraceData OwnCommunicators(int nprocs, const AppParams& p) {
  TraceData d = Begin("own_communicators", nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  auto split = [](CommId parent, CommId made, int member) {
    return MakeCommCreate(parent, made, CommOrigin::kSplit, {member});
  };
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    ev.push_back(MakeCompute(20000));
    ev.push_back(split(kCommWorld, 200 + static_cast<CommId>(r), r));
    ev.push_back(MakeCompute(3000));
    ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
    for (int i = 0; i < 3 && r == 0; ++i) {
      ev.push_back(MakeCompute(5000));
      ev.push_back(split(200, 300 + static_cast<CommId>(i), 0));
    }
    for (int b = 0; b < 2; ++b) {
      ev.push_back(MakeCompute(2000));
      ev.push_back(MakeCollective(EventKind::kBarrier, 0, 0));
    }
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      RingExchange(&ev, r, nprocs, 8192, &next);
      ev.push_back(MakeCollective(EventKind::kAllreduce, 64, 64));
    }
  }
  End(&d);
  return d;
}

TraceData Halo27(int nprocs, const AppParams& p) {
  TraceData d = Begin("halo27", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // row-major
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  auto rank_of = [&](const std::int64_t c[3]) {
    return static_cast<std::int32_t>((c[0] * dims[1] + c[1]) * dims[2] + c[2]);
  };
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t me[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      std::vector<RequestId> reqs;
      for (int t = 0; t < 27; ++t) {
        const int dir[3] = {t / 9 - 1, (t / 3) % 3 - 1, t % 3 - 1};
        if (t == 13) continue;  // (0, 0, 0)
        std::int64_t to[3], from[3];
        for (int k = 0; k < 3; ++k) {
          to[k] = (me[k] + dir[k] + dims[k]) % dims[k];
          from[k] = (me[k] - dir[k] + dims[k]) % dims[k];
        }
        reqs.push_back(next++);
        d.ranks[r].push_back(MakeIrecv(rank_of(from), t, 64, reqs.back()));
        reqs.push_back(next++);
        d.ranks[r].push_back(MakeIsend(rank_of(to), t, 64, reqs.back()));
      }
      d.ranks[r].push_back(MakeWaitall(reqs));
    }
  }
  End(&d);
  return d;
}

TraceData OpenHalo27(int nprocs, const AppParams& p) {
  TraceData d = Begin("open_halo27", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // row-major
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t me[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    // The neighbours that exist, in direction order, with the points their message carries.
    std::vector<std::pair<std::int32_t, int>> near;  // (rank, direction t)
    for (int t = 0; t < 27; ++t) {
      const int dir[3] = {t / 9 - 1, (t / 3) % 3 - 1, t % 3 - 1};
      if (t == 13) continue;  // (0, 0, 0)
      std::int64_t c[3];
      bool inside = true;
      for (int k = 0; k < 3; ++k) {
        c[k] = me[k] + dir[k];
        inside = inside && c[k] >= 0 && c[k] < dims[k];
      }
      if (inside)
        near.emplace_back(static_cast<std::int32_t>((c[0] * dims[1] + c[1]) * dims[2] + c[2]), t);
    }
    auto bytes = [&](int t) {
      const int dir[3] = {t / 9 - 1, (t / 3) % 3 - 1, t % 3 - 1};
      double points = 1;
      for (int k = 0; k < 3; ++k) {
        if (dir[k] == 0) points *= p.domain / static_cast<double>(dims[k]);
      }
      return static_cast<std::uint64_t>(8 * points);
    };
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      std::vector<RequestId> reqs;
      for (const auto& [q, t] : near) {
        reqs.push_back(next++);
        d.ranks[r].push_back(MakeIrecv(q, 26 - t, bytes(t), reqs.back()));
      }
      for (const auto& [q, t] : near) {
        reqs.push_back(next++);
        d.ranks[r].push_back(MakeIsend(q, t, bytes(t), reqs.back()));
      }
      d.ranks[r].push_back(MakeWaitall(reqs));
      if (p.check_every > 0 && (it + 1) % p.check_every == 0) {
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

TraceData HpcgHalo(int nprocs, const AppParams& p) {
  TraceData d = Begin("hpcg_halo", nprocs);
  const std::vector<std::int64_t> e = patterns::OptimalShapeXYZ(nprocs);  // x fastest
  const auto cpu = static_cast<std::int64_t>(p.compute_ns);
  constexpr double kSide = 16;
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t me[3] = {r % e[0], (r / e[0]) % e[1], r / (e[0] * e[1])};
    std::vector<std::pair<std::int32_t, std::uint64_t>> near;  // (rank, bytes), ascending rank
    for (int dz = -1; dz <= 1; ++dz) {
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          const std::int64_t c[3] = {me[0] + dx, me[1] + dy, me[2] + dz};
          if ((dx == 0 && dy == 0 && dz == 0) || c[0] < 0 || c[0] >= e[0] || c[1] < 0 ||
              c[1] >= e[1] || c[2] < 0 || c[2] >= e[2]) {
            continue;
          }
          double points = 1;
          for (int dir : {dx, dy, dz}) points *= dir == 0 ? kSide : 1;
          near.emplace_back(static_cast<std::int32_t>(c[0] + e[0] * (c[1] + e[1] * c[2])),
                            static_cast<std::uint64_t>(8 * points));
        }
      }
    }
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      double level = 1;  // the iteration's share of level 0's work
      if (p.level_cycle > 1) {
        const int period = 2 * p.level_cycle - 2, at = it % period;
        level = std::pow(8.0, -(at < p.level_cycle ? at : period - at));
      }
      auto scaled = [level](double ns) { return std::llround(ns * level); };
      d.ranks[r].push_back(MakeCompute(scaled(static_cast<double>(cpu))));
      std::vector<RequestId> reqs;
      for (const auto& [q, bytes] : near) {
        reqs.push_back(next++);
        d.ranks[r].push_back(MakeIrecv(q, 99, bytes, reqs.back()));
      }
      for (const auto& [q, bytes] : near) {
        if (p.level_cycle > 1) d.ranks[r].push_back(MakeCompute(scaled(p.compute_ns / 64)));
        d.ranks[r].push_back(MakeSend(q, 99, bytes));
      }
      for (std::size_t k = 0; k < near.size(); ++k) {
        d.ranks[r].push_back(MakeCompute(it == 0 && r == 1 && k == 2 ? 60000 : scaled(200)));
        Event w = MakeWaitall({reqs[k]});
        w.kind = EventKind::kWait;
        w.completed.front().peer = near[k].first;
        w.completed.front().tag = 99;
        w.completed.front().bytes = near[k].second;
        d.ranks[r].push_back(w);
      }
      if (p.check_every > 0 && (it + 1) % p.check_every == 0) {
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

namespace {

// A periodic 2-D halo on the row-major grid `dims` whose local rank l is the world rank base +
// stride x l, as MPI_Cart_shift gives them to local rank `local`: -1 and +1 along dimension
// 0, then along dimension 1.
std::array<std::int32_t, 4> CartNeighbours(const std::vector<std::int64_t>& dims,
                                           std::int64_t local, std::int64_t base,
                                           std::int64_t stride = 1) {
  const std::int64_t me[2] = {local / dims[1], local % dims[1]};
  std::array<std::int32_t, 4> nb{};
  for (int k = 0; k < 4; ++k) {
    std::int64_t c[2] = {me[0], me[1]};
    const int dim = k / 2;
    c[dim] = (c[dim] + (k % 2 ? 1 : -1) + dims[dim]) % dims[dim];
    nb[static_cast<std::size_t>(k)] =
        static_cast<std::int32_t>(base + stride * (c[0] * dims[1] + c[1]));
  }
  return nb;
}

// One exchange of that halo on `comm`: irecv from each neighbour k (tag k ^ 1, the direction
// its message travels), isend to each (tag k), waitall; a face of the local block each (8 x
// domain / the other dimension's extent).
void CartExchange(std::vector<Event>* ev, const std::array<std::int32_t, 4>& nb,
                  const std::vector<std::int64_t>& dims, const AppParams& p, RequestId* next,
                  CommId comm = kCommWorld) {
  auto bytes = [&](int k) {
    return static_cast<std::uint64_t>(8 * p.domain / static_cast<double>(dims[1 - k / 2]));
  };
  std::vector<RequestId> reqs;
  for (int k = 0; k < 4; ++k) {
    reqs.push_back((*next)++);
    ev->push_back(MakeIrecv(nb[static_cast<std::size_t>(k)], k ^ 1, bytes(k), reqs.back(), comm));
  }
  for (int k = 0; k < 4; ++k) {
    reqs.push_back((*next)++);
    ev->push_back(MakeIsend(nb[static_cast<std::size_t>(k)], k, bytes(k), reqs.back(), comm));
  }
  ev->push_back(MakeWaitall(reqs));
}

}  // namespace

TraceData CartHalo2D(int nprocs, const AppParams& p) {
  TraceData d = Begin("cart_halo2d", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 2);  // row-major
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const std::array<std::int32_t, 4> nb = CartNeighbours(dims, r, 0);
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      CartExchange(&d.ranks[r], nb, dims, p, &next);
    }
  }
  End(&d);
  return d;
}

TraceData CoupledHalves(int nprocs, const AppParams& p, bool on_world, bool interleaved,
                        int first) {
  TraceData d = Begin(std::string(interleaved ? "coupled_interleaved" : "coupled_halves") +
                          (on_world ? "_world" : ""),
                      nprocs);
  if (first <= 0) first = nprocs / 2;
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int part = interleaved ? r % 2 : (r < first ? 0 : 1);
    const int size = interleaved ? nprocs / 2 : (part == 0 ? first : nprocs - first);
    const std::vector<std::int64_t> dims = patterns::DimsCreate(size, 2);  // row-major
    const int base = interleaved ? part : part * first;  // world rank of the part's rank 0
    const int stride = interleaved ? 2 : 1;
    const int local = (r - base) / stride;
    std::vector<std::int32_t> members;
    for (int m = 0; m < size; ++m) members.push_back(base + stride * m);
    const CommId comm = on_world ? kCommWorld : 100 + static_cast<CommId>(part);
    d.ranks[r].push_back(MakeCompute(10000));
    d.ranks[r].push_back(
        MakeCommCreate(kCommWorld, 100 + static_cast<CommId>(part), CommOrigin::kSplit, members));
    const std::array<std::int32_t, 4> nb = CartNeighbours(dims, local, base, stride);
    AppParams own = p;  // the part's own domain
    if (part == 1 && p.second_domain > 0) own.domain = p.second_domain;
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      CartExchange(&d.ranks[r], nb, dims, own, &next, comm);
      const bool check = p.check_every > 0 && (it + 1) % p.check_every == 0;
      if (p.part_norm || (p.part_norm_at_check && check)) {
        d.ranks[r].push_back(MakeCompute(500));
        d.ranks[r].push_back(
            MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, 100 + static_cast<CommId>(part)));
      }
      if (check) {
        d.ranks[r].push_back(MakeCompute(1000));
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

TraceData RingAllreduceByHand(int nprocs, const AppParams& p) {
  TraceData d = Begin("ring_allreduce", nprocs);
  const auto step = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const auto chunk = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(10 * step));
      for (int s = 0; s < 2 * (nprocs - 1); ++s) {
        d.ranks[r].push_back(
            MakeSendrecv((r + 1) % nprocs, (r + nprocs - 1) % nprocs, 8, chunk, chunk));
        d.ranks[r].push_back(MakeCompute(step));
      }
    }
  }
  End(&d);
  return d;
}

TraceData CartHalo3D(int nprocs, const AppParams& p) {
  TraceData d = Begin("cart_halo3d", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // row-major
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t me[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    auto shifted = [&](int dim, int by) -> std::int32_t {
      std::int64_t c[3] = {me[0], me[1], me[2]};
      c[dim] += by;
      if (c[dim] < 0 || c[dim] >= dims[dim]) return kProcNull;
      return static_cast<std::int32_t>((c[0] * dims[1] + c[1]) * dims[2] + c[2]);
    };
    for (int it = 0; it < p.iterations; ++it) {
      if (!(p.pack_ns_per_byte > 0)) d.ranks[r].push_back(MakeCompute(cpu));
      for (int dim = 0; dim < 3; ++dim) {
        const auto face = static_cast<std::uint64_t>(
            8 * p.domain * p.domain /
            static_cast<double>(dims[(dim + 1) % 3] * dims[(dim + 2) % 3]));
        const std::int32_t lo = shifted(dim, -1), hi = shifted(dim, +1);
        for (int way = 0; way < 2; ++way) {
          if (p.pack_ns_per_byte > 0) {
            const bool receives = (way == 0 ? lo : hi) != kProcNull;
            const double packed = static_cast<double>(face) * (receives ? 2 : 1);
            d.ranks[r].push_back(
                MakeCompute((dim == 0 && way == 0 ? cpu : 0) +
                            static_cast<std::int64_t>(std::llround(p.pack_ns_per_byte * packed))));
          }
          const std::int32_t from = way == 0 ? lo : hi;
          d.ranks[r].push_back(MakeSendrecv(way == 0 ? hi : lo, from, 3 * way + dim, face,
                                            from == kProcNull ? 0 : face));
        }
      }
    }
  }
  End(&d);
  return d;
}

TraceData NeighbourWaits(int nprocs, const AppParams& p) {
  TraceData d = Begin("neighbour_waits", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[static_cast<std::size_t>(r)];
    std::vector<int> near;
    for (int o : {-2, -1, 1, 2}) near.push_back((r + o + nprocs) % nprocs);
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      std::vector<RequestId> posted;
      for (int q : near) {
        posted.push_back(next);
        ev.push_back(MakeIrecv(q, 99, bytes, next++));
      }
      for (int q : near) ev.push_back(MakeSend(q, 99, bytes));
      for (std::size_t k = 0; k < near.size(); ++k) {
        if (k > 0) ev.push_back(MakeCompute(50000));  // unpacks what arrived
        Event w = MakeWaitall({posted[k]});
        w.kind = EventKind::kWait;
        w.completed.front().peer = near[k];
        w.completed.front().tag = 99;
        w.completed.front().bytes = bytes;
        ev.push_back(w);
      }
    }
  }
  End(&d);
  return d;
}

TraceData MgHalo(int nprocs, const AppParams& p) {
  auto Wait = [](RequestId request) {
    Event e = MakeWaitall({request});
    e.kind = EventKind::kWait;
    return e;
  };
  TraceData d = Begin("mghalo", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // row-major
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  auto rank_of = [&](const std::int64_t c[3]) {
    return static_cast<std::int32_t>((c[0] * dims[1] + c[1]) * dims[2] + c[2]);
  };
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t me[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    auto neighbour = [&](int k, int dir) {
      std::int64_t c[3] = {me[0], me[1], me[2]};
      c[k] = (c[k] + dir + dims[static_cast<std::size_t>(k)]) % dims[static_cast<std::size_t>(k)];
      return rank_of(c);
    };
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      for (int k = 2; k >= 0; --k) {
        const std::int32_t from_plus = 100 * (10 * (3 - k) + 1);
        const std::int32_t from_minus = from_plus + 200;
        const RequestId a = next++, b = next++;
        d.ranks[r].push_back(MakeIrecv(neighbour(k, +1), from_plus, 2048, a));
        d.ranks[r].push_back(MakeIrecv(neighbour(k, -1), from_minus, 2048, b));
        d.ranks[r].push_back(MakeSend(neighbour(k, +1), from_minus, 2048));
        d.ranks[r].push_back(MakeSend(neighbour(k, -1), from_plus, 2048));
        d.ranks[r].push_back(Wait(a));
        d.ranks[r].push_back(Wait(b));
      }
      d.ranks[r].push_back(MakeCompute(cpu));
      if (p.check_every > 0 && (it + 1) % p.check_every == 0) {
        d.ranks[r].push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

namespace {

// The rank `by` steps from `rank` along dimension `dim` (periodic) of a 3-D grid whose ranks go
// d0 fastest, then d2, then d1 (as LAMMPS lays out its processor grid).
std::int32_t SwapNeighbour(const std::vector<std::int64_t>& dims, int rank, int dim, int by) {
  std::int64_t c[3] = {rank % dims[0], rank / (dims[0] * dims[2]), (rank / dims[0]) % dims[2]};
  c[dim] = (c[dim] + by + dims[dim]) % dims[dim];
  return static_cast<std::int32_t>(c[0] + dims[0] * (c[2] + dims[2] * c[1]));
}

}  // namespace

TraceData SwapHalo3D(int nprocs, const AppParams& p) {
  TraceData d = Begin("swap_halo3d", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto shifted = [&](int dim, int by) { return SwapNeighbour(dims, r, dim, by); };
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      for (int dim = 0; dim < 3; ++dim) {
        const auto side = [&](int k) {
          return p.domain / static_cast<double>(dims[static_cast<std::size_t>(k % 3)]) + 2 * p.halo;
        };
        const auto face = static_cast<std::uint64_t>(8 * side(dim + 1) * side(dim + 2));
        for (const int way : {+1, -1}) {
          const RequestId req = next++;
          d.ranks[r].push_back(MakeIrecv(shifted(dim, -way), 0, face, req));
          d.ranks[r].push_back(MakeSend(shifted(dim, way), 0, face));
          d.ranks[r].push_back(MakeWaitall({req}));
        }
      }
    }
  }
  End(&d);
  return d;
}

TraceData SetupAndStepReductions(int nprocs, const AppParams& p) {
  TraceData d = Begin("setup_step_reductions", nprocs);
  const auto setup = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  // MPI_Reduce to rank 0 (End's allreduce is then not the same call as the steps' last).
  const auto reduce = [](int r) {
    return MakeCollective(EventKind::kReduce, 8, r == 0 ? 8 : 0, 0);
  };
  for (int r = 0; r < nprocs; ++r) {
    for (int k = 0; k < 4; ++k) {
      d.ranks[r].push_back(MakeCompute(setup));
      d.ranks[r].push_back(reduce(r));
    }
    d.ranks[r].push_back(MakeCompute(1000000));
    d.ranks[r].push_back(MakeCollective(EventKind::kBcast, r == 0 ? 64 : 0, r == 0 ? 0 : 64, 0));
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      for (int k = 0; k < 10; ++k) RingExchange(&d.ranks[r], r, nprocs, bytes, &next);
      for (int k = 0; k < 3; ++k) {
        d.ranks[r].push_back(MakeCompute(30000000));
        d.ranks[r].push_back(reduce(r));
      }
    }
  }
  End(&d);
  return d;
}

TraceData TwoPairsOfRuns(int nprocs, const AppParams& p, double x_ns, double y_ns, double z_ns,
                         double w_ns) {
  TraceData d = Begin("two_pairs_of_runs", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    RequestId next = 1;
    const auto ring = [&] {
      for (int k = 0; k < 5; ++k) RingExchange(&d.ranks[r], r, nprocs, bytes, &next);
    };
    const auto reduce = [&](double ns) {
      d.ranks[r].push_back(MakeCompute(static_cast<std::int64_t>(ns)));
      d.ranks[r].push_back(MakeCollective(EventKind::kReduce, 8, r == 0 ? 8 : 0, 0));
    };
    const auto bcast = [&](double ns) {
      d.ranks[r].push_back(MakeCompute(static_cast<std::int64_t>(ns)));
      d.ranks[r].push_back(MakeCollective(EventKind::kBcast, r == 0 ? 64 : 0, r == 0 ? 0 : 64, 0));
    };
    // A barrier between the two halves, so that they do not fold into one loop.
    for (int it = 0; it < p.iterations; ++it) ring();
    reduce(x_ns);
    for (int it = 0; it < p.iterations; ++it) ring();
    bcast(z_ns);
    for (int it = 0; it < p.iterations; ++it) ring();
    d.ranks[r].push_back(MakeCompute(1000));
    d.ranks[r].push_back(MakeCollective(EventKind::kBarrier, 0, 0));
    for (int it = 0; it < p.iterations; ++it) ring();
    reduce(y_ns);
    for (int it = 0; it < p.iterations; ++it) ring();
    bcast(w_ns);
    for (int it = 0; it < p.iterations; ++it) ring();
  }
  End(&d);
  return d;
}

TraceData SwapFar2D(int nprocs, const AppParams& p) {
  TraceData d = Begin("swap_far2d", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 2);  // {y, x}, x fastest
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const auto face = static_cast<std::uint64_t>(8 * p.domain / static_cast<double>(dims[1]));
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t x = r % dims[1], y = r / dims[1];
    auto at = [&](std::int64_t by) {
      return static_cast<std::int32_t>(x + dims[1] * ((y + by + dims[0]) % dims[0]));
    };
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      d.ranks[r].push_back(MakeCompute(cpu));
      for (const int way : {+2, -2}) {
        const RequestId req = next++;
        d.ranks[r].push_back(MakeIrecv(at(-way), 0, face, req));
        d.ranks[r].push_back(MakeSend(at(way), 0, face));
        d.ranks[r].push_back(MakeWaitall({req}));
      }
    }
  }
  End(&d);
  return d;
}

TraceData SwapHaloSteps(int nprocs, const AppParams& p) {
  TraceData d = Begin("swap_halo_steps", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto shifted = [&](int dim, int by) { return SwapNeighbour(dims, r, dim, by); };
    // The swaps of one forward communication: (dimension, way), way +1 sends to +1.
    std::vector<std::pair<int, int>> swaps;
    for (int dim = 0; dim < 3; ++dim) {
      if (dims[static_cast<std::size_t>(dim)] < 2) continue;
      swaps.emplace_back(dim, +1);
      swaps.emplace_back(dim, -1);
    }
    auto face = [&](int dim) {
      return static_cast<std::uint64_t>(
          8 * p.domain * p.domain /
          static_cast<double>(dims[static_cast<std::size_t>((dim + 1) % 3)] *
                              dims[static_cast<std::size_t>((dim + 2) % 3)]));
    };
    RequestId next = 1;
    auto& ev = d.ranks[r];
    auto swap = [&](int dim, int from, int to) {
      const RequestId req = next++;
      ev.push_back(MakeIrecv(shifted(dim, from), 0, face(dim), req));
      ev.push_back(MakeSend(shifted(dim, to), 0, face(dim)));
      ev.push_back(MakeWaitall({req}));
    };
    ev.push_back(MakeCollective(EventKind::kBarrier, 0, 0));
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu / 10));
      if (p.reneighbor_every > 0 && it % p.reneighbor_every == 0) {
        for (std::size_t k = 0; k < swaps.size(); k += 2) {
          const int dim = swaps[k].first;
          for (const int way : {+1, -1}) {
            Event counts = MakeSend(shifted(dim, way), 0, 4);
            counts.kind = EventKind::kSendrecv;
            counts.recv_peer = shifted(dim, -way);
            counts.recv_tag = 0;
            counts.recv_bytes = 4;
            ev.push_back(counts);
          }
          for (const int way : {+1, -1}) {
            const RequestId req = next++;
            ev.push_back(MakeIrecv(shifted(dim, -way), 0, face(dim) / 2, req));
            ev.push_back(MakeSend(shifted(dim, way), 0, face(dim) / 2));
            ev.push_back(MakeWaitall({req}));
          }
        }
        for (std::size_t k = 0; p.borders && k < swaps.size(); k += 2) {
          const int dim = swaps[k].first;
          for (const int way : {+1, -1}) {
            Event counts = MakeSend(shifted(dim, way), 0, 4);
            counts.kind = EventKind::kSendrecv;
            counts.recv_peer = shifted(dim, -way);
            counts.recv_tag = 0;
            counts.recv_bytes = 4;
            ev.push_back(counts);
            const RequestId req = next++;
            ev.push_back(MakeIrecv(shifted(dim, -way), 0, face(dim) / 4, req));
            ev.push_back(MakeSend(shifted(dim, way), 0, face(dim) / 4));
            ev.push_back(MakeWaitall({req}));
          }
        }
      } else {
        for (const auto& [dim, way] : swaps) swap(dim, -way, way);
      }
      ev.push_back(MakeCompute(cpu));
      for (auto s = swaps.rbegin(); s != swaps.rend(); ++s) swap(s->first, s->second, -s->second);
      if (p.check_every > 0 && (it + 1) % p.check_every == 0) {
        ev.push_back(MakeCompute(cpu / 10));
        ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      }
    }
  }
  End(&d);
  return d;
}

TraceData FirstFactorFastestHalo3D(int nprocs, const AppParams& p) {
  TraceData d = Begin("first_factor_fastest", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // fastest first
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t c[3] = {r % dims[0], (r / dims[0]) % dims[1], r / (dims[0] * dims[1])};
    auto shifted = [&](int dim, std::int64_t by) {
      std::int64_t k[3] = {c[0], c[1], c[2]};
      k[dim] =
          (k[dim] + by + dims[static_cast<std::size_t>(dim)]) % dims[static_cast<std::size_t>(dim)];
      return static_cast<int>(k[0] + dims[0] * (k[1] + dims[1] * k[2]));
    };
    auto& ev = d.ranks[r];
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      std::vector<RequestId> reqs;
      for (int dim = 0; dim < 3; ++dim) {
        const auto bytes = static_cast<std::uint64_t>(
            8 * p.domain / static_cast<double>(dims[static_cast<std::size_t>(dim)]));
        for (int way : {-1, 1}) {
          reqs.push_back(next++);
          ev.push_back(MakeIrecv(shifted(dim, way), 2 * dim + (way > 0), bytes, reqs.back()));
        }
        for (int way : {1, -1}) {
          reqs.push_back(next++);
          ev.push_back(MakeIsend(shifted(dim, way), 2 * dim + (way < 0), bytes, reqs.back()));
        }
      }
      ev.push_back(MakeWaitall(reqs));
      ev.push_back(MakeCompute(cpu));
    }
  }
  End(&d);
  return d;
}

TraceData HaloThenSwapAlongZ(int nprocs, const AppParams& p) {
  TraceData d = FirstFactorFastestHalo3D(nprocs, p);
  d.metadata.application = "halo_then_swap_along_z";
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // fastest first
  const std::int64_t plane = dims[0] * dims[1];
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / static_cast<double>(dims[2]));
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    ev.resize(ev.size() - 3);  // End's compute, allreduce and finalize: added again below
    ev.push_back(MakeCompute(1000));
    ev.push_back(MakeCollective(EventKind::kBarrier, 0, 0));
    const int up = static_cast<int>((r + plane) % nprocs);
    const int down = static_cast<int>((r - plane + nprocs) % nprocs);
    RequestId next = 100000;
    for (int it = 0; it < p.iterations; ++it) {
      const RequestId req = next++;
      ev.push_back(MakeIrecv(up, 7, bytes, req));
      ev.push_back(MakeSend(down, 7, bytes));
      ev.push_back(MakeWaitall({req}));
      ev.push_back(MakeCompute(cpu));
    }
  }
  End(&d);
  return d;
}

double SynthesizedCpu(const AppModel& model, std::int64_t nprocs, int rank) {
  const SynthesizedTrace t(model, nprocs);
  auto s = t.OpenRank(rank);
  Event e;
  double cpu = 0;
  while (s->Next(&e)) cpu += e.kind == EventKind::kCompute ? static_cast<double>(e.cpu_ns) : 0;
  return cpu;
}

double TracedCpu(const TraceData& data, int rank) {
  double cpu = 0;
  for (const Event& e : data.ranks[static_cast<std::size_t>(rank)]) {
    if (e.kind == EventKind::kCompute) cpu += static_cast<double>(e.cpu_ns);
  }
  return cpu;
}

Validation QuickValidate(const std::vector<phases::Signature>& training, const TraceData& real) {
  PredictOptions quick;
  quick.noise_draws = 0;
  quick.intervals = false;
  const MemoryTrace trace(real);
  return ValidateAgainst(training, trace, TestMachine(), quick);
}

sim::Machine TestMachine() {
  sim::Machine m;
  m.name = "test";
  m.nodes = 0;
  m.cpus_per_node = 4;
  m.inter_latency_s = 2e-6;
  m.inter_bandwidth_Bps = 5e9;
  return m;
}

AppParams SmallOpenHalo27() {
  AppParams p;
  p.iterations = 6;
  p.check_every = 3;
  p.domain = 96;
  return p;
}

std::vector<phases::Signature> AnalyzeOpenHalo27(const std::vector<int>& counts) {
  std::vector<phases::Signature> sigs;
  for (int n : counts) sigs.push_back(Analyze(OpenHalo27(n, SmallOpenHalo27())));
  return sigs;
}

AppParams SmallHpcgHalo() {
  AppParams p;
  p.iterations = 6;
  p.check_every = 3;
  p.compute_ns = 2e6;
  return p;
}

std::vector<phases::Signature> AnalyzeHpcgHalo(const std::vector<int>& counts) {
  std::vector<phases::Signature> sigs;
  for (int n : counts) sigs.push_back(Analyze(HpcgHalo(n, SmallHpcgHalo())));
  return sigs;
}

phases::Signature Analyze(const TraceData& data) {
  MemoryTrace trace(data);
  return phases::AnalyzeTrace(trace);
}

phases::Signature AnalyzeSizesSplit(const TraceData& data) {
  MemoryTrace trace(data);
  phases::AnalyzeOptions options;
  options.bytes_tolerance = 0.10;
  return phases::AnalyzeTrace(trace, options);
}

}  // namespace pas2p::synthesis::testing

namespace pas2p::synthesis::testing {

namespace {
Event Wait(RequestId request) {
  Event e = MakeWaitall({request});
  e.kind = EventKind::kWait;
  return e;
}
}  // namespace

TraceData Butterfly(int nprocs, const AppParams& p) {
  TraceData d = Begin("butterfly", nprocs);
  int stages = 0;
  while ((1 << stages) < nprocs) ++stages;
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    RequestId next = 1;
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      for (int k = 0; k < stages; ++k) {
        const int partner = r ^ (1 << k);
        const bool combine = p.stage_compute_ns >= 0 && k > 0;
        ev.push_back(MakeCompute(combine ? static_cast<std::int64_t>(p.stage_compute_ns) : cpu));
        const RequestId req = next++;
        ev.push_back(MakeIrecv(partner, k, bytes, req));
        ev.push_back(MakeSend(partner, k, bytes));
        ev.push_back(Wait(req));
      }
    }
  }
  End(&d);
  return d;
}

TraceData RowReductions(int nprocs, const AppParams& p) {
  TraceData d = Begin("row_reductions", nprocs);
  int n = 0;
  while ((1 << n) < nprocs) ++n;
  const int cols = 1 << ((n + 1) / 2);
  int steps = 0;
  while ((1 << steps) < cols) ++steps;
  const auto vector_bytes = static_cast<std::uint64_t>(8 * p.domain * cols / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    RequestId next = 1;
    auto& ev = d.ranks[r];
    auto exchange = [&](int partner, int tag, std::uint64_t bytes) {
      const RequestId req = next++;
      ev.push_back(MakeIrecv(partner, tag, bytes, req));
      ev.push_back(MakeSend(partner, tag, bytes));
      ev.push_back(Wait(req));
    };
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int i = 1; i <= steps; ++i) exchange(r ^ (cols >> i), i, vector_bytes);
    }
  }
  End(&d);
  return d;
}

TraceData CgIterations(int nprocs, const AppParams& p) {
  TraceData d = Begin("cg_iterations", nprocs);
  int n = 0;
  while ((1 << n) < nprocs) ++n;
  const int npcols = 1 << ((n + 1) / 2), nprows = nprocs / npcols;
  int steps = 0;
  while ((1 << steps) < npcols) ++steps;
  const auto vector_bytes =
      static_cast<std::uint64_t>(8 * p.domain / (p.row_split_vector ? npcols : nprows));
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    // NAS CG's setup_submatrix_info: the transpose partner.
    const int exch = npcols == nprows
                         ? (r % nprows) * nprows + r / nprows
                         : 2 * (((r / 2) % nprows) * nprows + (r / 2) / nprows) + r % 2;
    RequestId next = 1;
    auto& ev = d.ranks[r];
    auto exchange = [&](int partner, int tag, std::uint64_t bytes) {
      const RequestId req = next++;
      ev.push_back(MakeIrecv(partner, tag, bytes, req));
      ev.push_back(MakeSend(partner, tag, bytes));
      ev.push_back(Wait(req));
    };
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int i = steps; i >= 1; --i) exchange(r ^ (npcols >> i), i, vector_bytes);
      exchange(exch, 1, vector_bytes);
      for (int dot = 0; dot < 2; ++dot) {
        ev.push_back(MakeCompute(cpu / 8));
        for (int i = 1; i <= steps; ++i) exchange(r ^ (npcols >> i), i, 8);
      }
    }
  }
  End(&d);
  return d;
}

TraceData PairExchange(int nprocs, const AppParams& p) {
  TraceData d = Begin("pair_exchange", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 0; k < p.stages; ++k) {
        const RequestId req = next++;
        ev.push_back(MakeIrecv(r ^ (1 << k), 3 + k, bytes, req));
        ev.push_back(MakeSend(r ^ (1 << k), 3 + k, bytes));
        ev.push_back(Wait(req));
      }
    }
  }
  End(&d);
  return d;
}

TraceData PowerOfTwoButterfly(int nprocs, const AppParams& p) {
  TraceData d = Begin("p2_butterfly", nprocs);
  int p2 = 1;
  while (p2 * 2 <= nprocs) p2 *= 2;
  const auto bytes = static_cast<std::uint64_t>(p.domain);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    RequestId next = 1;
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 0; r < p2 && (1 << k) < p2; ++k) {
        const int partner = r ^ (1 << k);
        const RequestId req = next++;
        ev.push_back(MakeIrecv(partner, k, bytes, req));
        ev.push_back(MakeSend(partner, k, bytes));
        ev.push_back(Wait(req));
      }
      ev.push_back(MakeCollective(EventKind::kBcast, r == 0 ? 8 : 0, r == 0 ? 0 : 8, 0));
    }
  }
  End(&d);
  return d;
}

TraceData FoldedDoubling(int nprocs, const AppParams& p) {
  TraceData d = Begin("folded_doubling", nprocs);
  int p2 = 1;
  while (p2 * 2 <= nprocs) p2 *= 2;
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      if (r >= p2) {
        ev.push_back(MakeSend(r - p2, 1, bytes));
        ev.push_back(MakeRecv(r - p2, 3, bytes));
        continue;
      }
      if (r + p2 < nprocs) ev.push_back(MakeRecv(r + p2, 1, bytes));
      for (int mask = 1; mask < p2; mask <<= 1) {
        const RequestId req = next++;
        ev.push_back(MakeIrecv(r ^ mask, 2, bytes, req));
        ev.push_back(MakeSend(r ^ mask, 2, bytes));
        ev.push_back(Wait(req));
      }
      if (r + p2 < nprocs) ev.push_back(MakeSend(r + p2, 3, bytes));
    }
  }
  End(&d);
  return d;
}

TraceData PairFoldedDoubling(int nprocs, const AppParams& p) {
  TraceData d = Begin("pair_folded_doubling", nprocs);
  int p2 = 1;
  while (p2 * 2 <= nprocs) p2 *= 2;
  const int rem = nprocs - p2;
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      if (r < 2 * rem && r % 2 == 0) {  // folds onto r + 1, gets the result back
        ev.push_back(MakeSend(r + 1, 1, bytes));
        ev.push_back(MakeRecv(r + 1, 3, bytes));
        continue;
      }
      if (r < 2 * rem) ev.push_back(MakeRecv(r - 1, 1, bytes));
      const int v = r < 2 * rem ? r / 2 : r - rem;
      for (int mask = 1; mask < p2; mask <<= 1) {
        const int w = v ^ mask;
        const int partner = w < rem ? 2 * w + 1 : w + rem;
        const RequestId req = next++;
        ev.push_back(MakeIrecv(partner, 2, bytes, req));
        ev.push_back(MakeSend(partner, 2, bytes));
        ev.push_back(Wait(req));
      }
      if (r < 2 * rem) ev.push_back(MakeSend(r - 1, 3, bytes));
    }
  }
  End(&d);
  return d;
}

TraceData PairwiseExchange(int nprocs, const AppParams& p) {
  TraceData d = Begin("pairwise_exchange", nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int i = 1; i < nprocs; ++i) {
        ev.push_back(MakeSendrecv((r + i) % nprocs, (r - i + nprocs) % nprocs, 5, bytes, bytes));
      }
    }
  }
  End(&d);
  return d;
}

TraceData Dissemination(int nprocs, const AppParams& p) {
  TraceData d = Begin("dissemination", nprocs);
  const auto block = static_cast<std::uint64_t>(8 * p.domain / nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      for (int k = 1; k < nprocs; k *= 2) {
        const std::uint64_t bytes = block * static_cast<std::uint64_t>(std::min(k, nprocs - k));
        ev.push_back(MakeSendrecv((r - k + nprocs) % nprocs, (r + k) % nprocs, 6, bytes, bytes));
      }
      if (p.check_every == 1) ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
    }
  }
  End(&d);
  return d;
}

TraceData PrePostedStencil(int nprocs, const AppParams& p) {
  TraceData d = Begin("preposted_stencil", nprocs);
  const int q = Side(nprocs);
  const auto bytes = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    const int north = ((row - 1 + q) % q) * q + col, south = ((row + 1) % q) * q + col;
    auto& ev = d.ranks[r];
    RequestId next = 1;
    RequestId early = next++;
    ev.push_back(MakeIrecv(north, 11, bytes, early));  // the first iteration's, pre-posted
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      const RequestId a = next++, b = next++;
      ev.push_back(MakeIrecv(south, 10, bytes, a));
      ev.push_back(MakeIsend(north, 10, bytes, b));
      const RequestId c = next++;
      ev.push_back(MakeIsend(south, 11, bytes, c));
      ev.push_back(MakeWaitall({early, a, b, c}));
      if (it + 1 < p.iterations) {
        early = next++;
        ev.push_back(MakeIrecv(north, 11, bytes, early));  // the next iteration's
      }
    }
  }
  End(&d);
  return d;
}

}  // namespace pas2p::synthesis::testing

namespace pas2p::synthesis::testing {

namespace {

// A rank's place on the MPI_Dims_create(P, 2) grid {rows, cols}, row-major, and its
// neighbours (-1 on the edge).
struct MeshPlace {
  int rows = 1, cols = 1, row = 0, col = 0;
  int north = -1, south = -1, west = -1, east = -1;
};

MeshPlace PlaceOnMesh(int nprocs, int r) {
  const auto dims = patterns::DimsCreate(nprocs, 2);
  MeshPlace m;
  m.rows = static_cast<int>(dims[0]);
  m.cols = static_cast<int>(dims[1]);
  m.row = r / m.cols;
  m.col = r % m.cols;
  if (m.row > 0) m.north = r - m.cols;
  if (m.row < m.rows - 1) m.south = r + m.cols;
  if (m.col > 0) m.west = r - 1;
  if (m.col < m.cols - 1) m.east = r + 1;
  return m;
}

Event SplitEvent(CommId id, std::vector<std::int32_t> members) {
  Event split;
  split.kind = EventKind::kCommCreate;
  split.comm = kCommWorld;
  split.new_comm = id;
  split.value = static_cast<std::int64_t>(CommOrigin::kSplit);
  split.members = std::move(members);
  return split;
}

}  // namespace

TraceData MeshHalo(int nprocs, const AppParams& p) {
  TraceData d = Begin("mesh_halo", nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const MeshPlace m = PlaceOnMesh(nprocs, r);
    // North/south carry the block's width, west/east its height.
    const auto ns_bytes = static_cast<std::uint64_t>(8 * p.domain / m.cols);
    const auto we_bytes = static_cast<std::uint64_t>(8 * p.domain / m.rows);
    auto& ev = d.ranks[r];
    const CommId row_comm = 1000 + m.row, col_comm = 2000 + m.col;
    std::vector<std::int32_t> row_members, col_members;
    for (int c = 0; c < m.cols; ++c) row_members.push_back(m.row * m.cols + c);
    for (int q = 0; q < m.rows; ++q) col_members.push_back(q * m.cols + m.col);
    ev.push_back(SplitEvent(row_comm, row_members));
    ev.push_back(SplitEvent(col_comm, col_members));
    const int peers[4] = {m.north, m.south, m.west, m.east};
    const std::uint64_t bytes[4] = {ns_bytes, ns_bytes, we_bytes, we_bytes};
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      std::vector<RequestId> reqs;
      for (int k = 0; k < 4; ++k) {
        if (peers[k] < 0) continue;
        reqs.push_back(next++);
        ev.push_back(MakeIrecv(peers[k], 7, bytes[k], reqs.back()));
      }
      for (int k = 0; k < 4; ++k) {
        if (peers[k] < 0) continue;
        reqs.push_back(next++);
        ev.push_back(MakeIsend(peers[k], 7, bytes[k], reqs.back()));
      }
      ev.push_back(MakeWaitall(reqs));
      ev.push_back(MakeCompute(cpu / 4));
      ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8));
      ev.push_back(MakeCompute(cpu / 4));
      ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, row_comm));
      ev.push_back(MakeCollective(EventKind::kAllreduce, 8, 8, kNoRank, col_comm));
    }
  }
  End(&d);
  return d;
}

TraceData DmdaHalo3D(int nprocs, const AppParams& p) {
  TraceData d = Begin("dmda_halo3d", nprocs);
  const std::vector<std::int64_t> dims = patterns::DimsCreate(nprocs, 3);  // row-major: z, y, x
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const std::int64_t c[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
    // -z, -y, -x, +x, +y, +z: dimension k (0 = z, 2 = x), direction s.
    std::vector<std::pair<std::int32_t, std::uint64_t>> nbrs;
    for (const auto& [k, step] :
         std::vector<std::pair<int, int>>{{0, -1}, {1, -1}, {2, -1}, {2, +1}, {1, +1}, {0, +1}}) {
      std::int64_t q[3] = {c[0], c[1], c[2]};
      q[k] += step;
      if (q[k] < 0 || q[k] >= dims[static_cast<std::size_t>(k)]) continue;
      double others = 1;
      for (int o = 0; o < 3; ++o) {
        if (o != k) others *= static_cast<double>(dims[static_cast<std::size_t>(o)]);
      }
      nbrs.emplace_back(static_cast<std::int32_t>((q[0] * dims[1] + q[1]) * dims[2] + q[2]),
                        static_cast<std::uint64_t>(8 * p.domain * p.domain / others));
    }
    auto& ev = d.ranks[r];
    RequestId next = 1;
    for (int it = 0; it < p.iterations; ++it) {
      ev.push_back(MakeCompute(cpu));
      std::vector<RequestId> reqs;
      for (const auto& [peer, bytes] : nbrs) {
        reqs.push_back(next++);
        ev.push_back(MakeIrecv(peer, 5, bytes, reqs.back()));
      }
      for (const auto& [peer, bytes] : nbrs) {
        reqs.push_back(next++);
        ev.push_back(MakeIsend(peer, 5, bytes, reqs.back()));
      }
      ev.push_back(MakeWaitall(reqs));
    }
  }
  End(&d);
  return d;
}

TraceData MeshSweeps(int nprocs, const AppParams& p) {
  TraceData d = Begin("mesh_sweeps", nprocs);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const MeshPlace m = PlaceOnMesh(nprocs, r);
    const auto ns_bytes = static_cast<std::uint64_t>(8 * p.domain / m.cols);
    const auto we_bytes = static_cast<std::uint64_t>(8 * p.domain / m.rows);
    auto& ev = d.ranks[r];
    for (int it = 0; it < p.iterations; ++it) {
      for (int s = 0; s < p.stages; ++s) {
        if (m.north >= 0) ev.push_back(MakeRecv(m.north, 1, ns_bytes));
        if (m.west >= 0) ev.push_back(MakeRecv(m.west, 1, we_bytes));
        ev.push_back(MakeCompute(cpu));
        if (m.south >= 0) ev.push_back(MakeSend(m.south, 1, ns_bytes));
        if (m.east >= 0) ev.push_back(MakeSend(m.east, 1, we_bytes));
      }
      for (int s = 0; s < p.stages; ++s) {
        if (m.south >= 0) ev.push_back(MakeRecv(m.south, 2, ns_bytes));
        if (m.east >= 0) ev.push_back(MakeRecv(m.east, 2, we_bytes));
        ev.push_back(MakeCompute(cpu));
        if (m.north >= 0) ev.push_back(MakeSend(m.north, 2, ns_bytes));
        if (m.west >= 0) ev.push_back(MakeSend(m.west, 2, we_bytes));
      }
    }
  }
  End(&d);
  return d;
}

TraceData TorusLineSolve(int nprocs, const AppParams& p) {
  TraceData d = Begin("torus_line_solve", nprocs);
  const int q = Side(nprocs);
  const auto face = static_cast<std::uint64_t>(8 * p.domain / q);
  const auto forward_bytes = static_cast<std::uint64_t>(30 * p.domain / q);
  const auto backward_bytes = static_cast<std::uint64_t>(5 * p.domain / q);
  const auto cpu = static_cast<std::int64_t>(p.compute_ns / nprocs);
  for (int r = 0; r < nprocs; ++r) {
    const int row = r / q, col = r % q;
    // Per dimension: the successor along the line and the predecessor.
    const int next_rank[2] = {row * q + (col + 1) % q, ((row + 1) % q) * q + col};
    const int prev_rank[2] = {row * q + (col - 1 + q) % q, ((row - 1 + q) % q) * q + col};
    auto& ev = d.ranks[r];
    RequestId next = 1;
    if (p.setup_compute_ns > 0) {  // the set-up's parameters, as BT's bcasts
      for (int k = 0; k < 4; ++k) {
        ev.push_back(MakeCollective(EventKind::kBcast, r == 0 ? 8 : 0, r == 0 ? 0 : 8, 0));
      }
    }
    for (int it = 0; it < p.iterations; ++it) {
      if (it == 1 && p.setup_compute_ns > 0) {
        ev.push_back(MakeCompute(1000));
        ev.push_back(MakeCollective(EventKind::kBarrier, 0, 0));
      }
      const bool warm_up = it == 0 && p.setup_compute_ns > 0;
      ev.push_back(
          MakeCompute(cpu + (warm_up ? static_cast<std::int64_t>(p.setup_compute_ns) : 0)));
      TorusHalo(&d, r, face, &next);
      for (int dim = 0; dim < 2; ++dim) {
        RequestId send = 0;
        // Forward elimination, cell by cell: the first stage only sends.
        for (int stage = 1; stage <= q; ++stage) {
          if (stage > 1) {
            const RequestId recv = next++;
            ev.push_back(MakeIrecv(prev_rank[dim], 20 + dim, forward_bytes, recv));
            ev.push_back(Wait(send));
            ev.push_back(Wait(recv));
          }
          ev.push_back(MakeCompute(cpu / q));
          if (stage < q) {
            send = next++;
            ev.push_back(MakeIsend(next_rank[dim], 20 + dim, forward_bytes, send));
          }
        }
        // Back substitution in the reverse direction: the last stage only sends.
        for (int stage = q; stage >= 1; --stage) {
          if (stage < q) {
            const RequestId recv = next++;
            ev.push_back(MakeIrecv(next_rank[dim], 30 + dim, backward_bytes, recv));
            ev.push_back(Wait(send));
            ev.push_back(Wait(recv));
          }
          ev.push_back(MakeCompute(cpu / (2 * q)));
          if (stage > 1) {
            send = next++;
            ev.push_back(MakeIsend(prev_rank[dim], 30 + dim, backward_bytes, send));
          }
        }
      }
    }
  }
  End(&d);
  return d;
}

}  // namespace pas2p::synthesis::testing
