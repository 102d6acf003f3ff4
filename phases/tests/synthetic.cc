#include "synthetic.h"

#include <algorithm>
#include <numeric>

namespace pas2p::phases::testing {

Gen::Gen(int nprocs, std::string application)
    : clock_(static_cast<std::size_t>(nprocs), 0),
      next_request_(static_cast<std::size_t>(nprocs), 0) {
  data_.metadata.application = std::move(application);
  data_.metadata.nprocs = nprocs;
  data_.metadata.source = "generator";
  data_.ranks.resize(static_cast<std::size_t>(nprocs));
}

double Gen::Noise() {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return static_cast<double>(rng_ % 2000001) / 1000000.0 - 1.0;
}

void Gen::Init() {
  for (int r = 0; r < nprocs(); ++r) {
    Event e;
    e.kind = EventKind::kInit;
    e.wall_start_ns = -1000000;
    e.wall_end_ns = 0;
    data_.ranks[r].push_back(e);
    clock_[r] = 0;
  }
}

void Gen::Compute(int rank, std::int64_t cpu_ns) {
  Event e = MakeCompute(cpu_ns);
  e.wall_start_ns = clock_[rank];
  e.wall_end_ns = clock_[rank] + cpu_ns;
  clock_[rank] = e.wall_end_ns;
  data_.ranks[rank].push_back(e);
}

void Gen::Local(int rank, Event event, std::int64_t duration_ns) {
  event.wall_start_ns = clock_[rank];
  event.wall_end_ns = clock_[rank] + duration_ns;
  clock_[rank] = event.wall_end_ns;
  data_.ranks[rank].push_back(std::move(event));
}

void Gen::Blocking(int rank, Event event, std::int64_t ready_ns, std::int64_t duration_ns) {
  event.wall_start_ns = clock_[rank];
  event.wall_end_ns = std::max(clock_[rank], ready_ns) + duration_ns;
  clock_[rank] = event.wall_end_ns;
  data_.ranks[rank].push_back(std::move(event));
}

std::int64_t Gen::MaxClock(const std::vector<int>& ranks) const {
  std::int64_t t = 0;
  for (int r : ranks) t = std::max(t, clock_[r]);
  return t;
}

std::int64_t Gen::MaxClock() const { return *std::max_element(clock_.begin(), clock_.end()); }

void Gen::Collective(const std::vector<int>& members, EventKind kind, std::uint64_t bytes, int root,
                     CommId comm) {
  const std::int64_t ready = MaxClock(members) + 2000;
  for (int r : members) Blocking(r, MakeCollective(kind, bytes, bytes, root, comm), ready);
}

void Gen::Finalize() {
  for (int r = 0; r < nprocs(); ++r) {
    Event e;
    e.kind = EventKind::kFinalize;
    e.wall_start_ns = clock_[r];
    e.wall_end_ns = clock_[r] + 100000;
    data_.ranks[r].push_back(e);
  }
}

TraceData Gen::Take() { return std::move(data_); }

namespace {
std::vector<int> AllRanks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// One halo exchange: irecv from every neighbour, isend to every neighbour, compute,
// waitall. `neighbours[r]` lists the peers of r.
void Halo(Gen& g, const std::vector<std::vector<int>>& neighbours, std::uint64_t bytes,
          const std::vector<std::int64_t>& cpu_ns, int tag) {
  const int n = g.nprocs();
  std::vector<std::vector<RequestId>> reqs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    for (int p : neighbours[r]) {
      RequestId q = g.NewRequest(r);
      g.Local(r, MakeIrecv(p, tag, bytes, q));
      reqs[r].push_back(q);
    }
    for (int p : neighbours[r]) {
      RequestId q = g.NewRequest(r);
      g.Local(r, MakeIsend(p, tag, bytes, q), 1500);
      reqs[r].push_back(q);
    }
    g.Compute(r, cpu_ns[r]);
  }
  std::vector<std::int64_t> ready(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    ready[r] = g.MaxClock(neighbours[r]) + 3000;
  }
  for (int r = 0; r < n; ++r) {
    g.Blocking(r, MakeWaitall(reqs[r]), ready[r]);
  }
}
}  // namespace

TraceData MakeStencil(const StencilSpec& s) {
  const int n = s.px * s.py;
  Gen g(n, "stencil");
  g.Init();
  g.Collective(AllRanks(n), EventKind::kBcast, 64, 0);
  std::vector<std::vector<int>> nb(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int x = r % s.px, y = r / s.px;
    nb[r] = {y * s.px + (x + s.px - 1) % s.px, y * s.px + (x + 1) % s.px,
             ((y + s.py - 1) % s.py) * s.px + x, ((y + 1) % s.py) * s.px + x};
  }
  for (int it = 0; it < s.iterations; ++it) {
    std::vector<std::int64_t> cpu(static_cast<std::size_t>(n));
    const double shared = s.shared_noise > 0 ? 1 + s.shared_noise * g.Noise() : 1;
    for (int r = 0; r < n; ++r) {
      const double base = static_cast<double>(s.cpu_ns) * (1 + s.drift * it) * shared;
      cpu[r] = static_cast<std::int64_t>(base * (1 + s.noise * g.Noise()));
    }
    Halo(g, nb, s.bytes, cpu, 10);
    if (s.allreduce_every > 0 && (it + 1) % s.allreduce_every == 0) {
      for (int r = 0; r < n; ++r) g.Compute(r, 5000);
      g.Collective(AllRanks(n), EventKind::kAllreduce, 8);
    }
  }
  for (int r = 0; r < n; ++r) g.Compute(r, 300000);
  g.Collective(AllRanks(n), EventKind::kReduce, 8, 0);
  g.Finalize();
  return g.Take();
}

TraceData MakeNested(int nprocs, int outer, int inner) {
  return MakeNested(nprocs, std::vector<int>(static_cast<std::size_t>(outer), inner));
}

TraceData MakeNested(int nprocs, const std::vector<int>& inner) {
  Gen g(nprocs, "nested");
  g.Init();
  std::vector<std::vector<int>> nb(static_cast<std::size_t>(nprocs));
  for (int r = 0; r < nprocs; ++r) nb[r] = {(r + nprocs - 1) % nprocs, (r + 1) % nprocs};
  for (const int halos : inner) {
    for (int i = 0; i < halos; ++i) {
      std::vector<std::int64_t> cpu(static_cast<std::size_t>(nprocs));
      for (int r = 0; r < nprocs; ++r)
        cpu[r] = static_cast<std::int64_t>(100000 * (1 + 0.05 * g.Noise()));
      Halo(g, nb, 4096, cpu, 1);
    }
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 400000);
    g.Collective(AllRanks(nprocs), EventKind::kAllreduce, 16);
  }
  g.Finalize();
  return g.Take();
}

TraceData MakeTaggedHalo(int px, int py, int steps) {
  const int n = px * py;
  Gen g(n, "taggedhalo");
  g.Init();
  g.Collective(AllRanks(n), EventKind::kBcast, 64, 0);
  const auto neighbour = [px, py](int r, int dim, int dir) {
    int x = r % px, y = r / px;
    if (dim == 0) x = (x + dir + px) % px;
    if (dim == 1) y = (y + dir + py) % py;
    return y * px + x;
  };
  for (int step = 0; step < steps; ++step) {
    for (int dim = 0; dim < 2; ++dim) {
      const std::int32_t from_plus = 100 * (10 * dim + 11), from_minus = 100 * (10 * dim + 13);
      const std::uint64_t bytes = 2048 + 1024 * static_cast<std::uint64_t>(dim);
      std::vector<RequestId> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        a[r] = g.NewRequest(r);
        b[r] = g.NewRequest(r);
        g.Compute(r, 3000);
        g.Local(r, MakeIrecv(neighbour(r, dim, +1), from_plus, bytes, a[r]));
        g.Local(r, MakeIrecv(neighbour(r, dim, -1), from_minus, bytes, b[r]));
        g.Compute(r, 1000);
        g.Local(r, MakeSend(neighbour(r, dim, +1), from_minus, bytes), 1500);
        g.Local(r, MakeSend(neighbour(r, dim, -1), from_plus, bytes), 1500);
      }
      std::vector<std::int64_t> ready(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        ready[r] = std::max(g.clock(neighbour(r, dim, +1)), g.clock(neighbour(r, dim, -1))) + 2000;
      }
      for (int r = 0; r < n; ++r) {
        for (const RequestId q : {a[r], b[r]}) {
          Event wait = MakeWaitall({q});
          wait.kind = EventKind::kWait;
          g.Blocking(r, wait, ready[r]);
        }
      }
    }
    for (int r = 0; r < n; ++r)
      g.Compute(r, static_cast<std::int64_t>(300000 * (1 + 0.05 * g.Noise())));
    g.Collective(AllRanks(n), EventKind::kAllreduce, 8);
  }
  g.Collective(AllRanks(n), EventKind::kReduce, 8, 0);
  g.Finalize();
  return g.Take();
}

TraceData MakeSwaps(int px, int py, int steps, int allreduce_every) {
  const int n = px * py;
  Gen g(n, "swaps");
  g.Init();
  g.Collective(AllRanks(n), EventKind::kBcast, 64, 0);
  // Swap k: dimension k / 2, direction -1 (even k) or +1; the rank sends to the neighbour in
  // that direction and receives from the opposite one.
  const auto neighbour = [px, py](int r, int dim, int dir) {
    int x = r % px, y = r / px;
    if (dim == 0) x = (x + dir + px) % px;
    if (dim == 1) y = (y + dir + py) % py;
    return y * px + x;
  };
  const auto swap = [&](int k, bool reverse, std::uint64_t bytes) {
    const int dim = k / 2;
    const int dir = (k % 2 == 0 ? -1 : 1) * (reverse ? -1 : 1);
    std::vector<RequestId> req(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      req[r] = g.NewRequest(r);
      g.Compute(r, 2000);
      g.Local(r, MakeIrecv(neighbour(r, dim, -dir), 0, bytes, req[r]));
      g.Compute(r, 300);
      g.Local(r, MakeSend(neighbour(r, dim, dir), 0, bytes), 1500);
    }
    std::vector<std::int64_t> ready(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) ready[r] = g.clock(neighbour(r, dim, -dir)) + 3000;
    for (int r = 0; r < n; ++r) {
      Event wait = MakeWaitall({req[r]});
      wait.kind = EventKind::kWait;
      g.Blocking(r, wait, ready[r]);
    }
  };
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < 4; ++k) swap(k, false, 4800 + 1200 * static_cast<std::uint64_t>(k / 2));
    for (int r = 0; r < n; ++r)
      g.Compute(r, static_cast<std::int64_t>(400000 * (1 + 0.05 * g.Noise())));
    for (int k = 3; k >= 0; --k) swap(k, true, 4800 + 1200 * static_cast<std::uint64_t>(k / 2));
    for (int r = 0; r < n; ++r) g.Compute(r, 50000);
    if (allreduce_every > 0 && (step + 1) % allreduce_every == 0)
      g.Collective(AllRanks(n), EventKind::kAllreduce, 8);
  }
  g.Finalize();
  return g.Take();
}

TraceData MakeSweeps(int nprocs, const std::vector<int>& stages) {
  Gen g(nprocs, "sweeps");
  g.Init();
  g.Collective(AllRanks(nprocs), EventKind::kBarrier, 0);
  auto stage = [&](int tag, bool forward) {
    for (int k = 0; k < nprocs; ++k) {
      const int r = forward ? k : nprocs - 1 - k;
      const int from = forward ? r - 1 : r + 1;
      const int to = forward ? r + 1 : r - 1;
      if (from >= 0 && from < nprocs) {
        g.Blocking(r, MakeRecv(from, tag, 8192), g.clock(from) + 2000);
      }
      g.Compute(r, static_cast<std::int64_t>(200000 * (1 + 0.05 * g.Noise())));
      if (to >= 0 && to < nprocs) g.Local(r, MakeSend(to, tag, 8192), 1500);
    }
  };
  for (int n : stages) {
    for (int s = 0; s < n; ++s) stage(1, true);
    for (int s = 0; s < n; ++s) stage(2, false);
  }
  g.Collective(AllRanks(nprocs), EventKind::kAllreduce, 16);
  g.Finalize();
  return g.Take();
}

TraceData MakeLinePipelines(int nprocs, int steps, std::int64_t warmup_lead_in_ns) {
  Gen g(nprocs, "line_pipelines");
  g.Init();
  g.Collective(AllRanks(nprocs), EventKind::kBcast, 64, 0);
  const auto ring = [nprocs](int r, int d) { return (r + d + nprocs) % nprocs; };
  // The face exchange: both receives, both sends, one waitall.
  const auto faces = [&]() {
    for (int r = 0; r < nprocs; ++r) {
      std::vector<RequestId> req;
      for (int dir : {1, -1}) {
        req.push_back(g.NewRequest(r));
        g.Local(r, MakeIrecv(ring(r, -dir), 1, 8192, req.back()));
      }
      for (int dir : {1, -1}) {
        req.push_back(g.NewRequest(r));
        g.Local(r, MakeIsend(ring(r, dir), 1, 8192, req.back()), 1000);
      }
      g.Blocking(r, MakeWaitall(req), g.clock(r) + 3000);
    }
  };
  const auto stage = [&](int dir, std::uint64_t bytes, int tag) {
    std::vector<RequestId> send(static_cast<std::size_t>(nprocs)), recv(send.size());
    for (int r = 0; r < nprocs; ++r) {
      send[r] = g.NewRequest(r);
      g.Local(r, MakeIsend(ring(r, dir), tag, bytes, send[r]), 1000);
      recv[r] = g.NewRequest(r);
      g.Local(r, MakeIrecv(ring(r, -dir), tag, bytes, recv[r]));
    }
    std::vector<std::int64_t> ready(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r) ready[r] = g.clock(ring(r, -dir)) + 3000;
    for (int r = 0; r < nprocs; ++r) {
      for (RequestId q : {send[r], recv[r]}) {
        Event wait = MakeWaitall({q});
        wait.kind = EventKind::kWait;
        g.Blocking(r, wait, ready[r]);
      }
      g.Compute(r, static_cast<std::int64_t>(30000 * (1 + 0.05 * g.Noise())));
    }
  };
  const auto step = [&](std::int64_t lead_in_ns) {
    for (int r = 0; r < nprocs; ++r)
      g.Compute(
          r, static_cast<std::int64_t>(static_cast<double>(lead_in_ns) * (1 + 0.05 * g.Noise())));
    faces();
    for (int s = 1; s < nprocs; ++s) stage(1, 4096, 2);
    for (int s = 1; s < nprocs; ++s) stage(-1, 1024, 3);
  };
  if (warmup_lead_in_ns > 0) {
    // More parameters (a loop of broadcasts, as BT's), so that the warm-up step is a run of
    // calls of its own, not one with the start-up's.
    for (int k = 0; k < 4; ++k) g.Collective(AllRanks(nprocs), EventKind::kBcast, 64, 0);
    step(warmup_lead_in_ns);
    g.Collective(AllRanks(nprocs), EventKind::kBarrier, 0);
  }
  for (int s = 0; s < steps; ++s) step(300000);
  g.Collective(AllRanks(nprocs), EventKind::kAllreduce, 8);
  g.Finalize();
  return g.Take();
}

TraceData MakeMasterWorker(int nprocs, int iterations) {
  Gen g(nprocs, "masterworker");
  g.Init();
  const int workers = nprocs - 1;
  for (int it = 0; it < iterations; ++it) {
    // Master: send one task to each worker, post a receive for each result.
    std::vector<RequestId> sends, recvs;
    for (int w = 1; w <= workers; ++w) {
      RequestId q = g.NewRequest(0);
      g.Local(0, MakeIsend(w, 1, 1024, q));
      sends.push_back(q);
    }
    for (int w = 1; w <= workers; ++w) {
      RequestId q = g.NewRequest(0);
      g.Local(0, MakeIrecv(kAnySource, 2, 256, q));
      recvs.push_back(q);
    }
    g.Blocking(0, MakeWaitall(sends), g.clock(0));
    // Workers: receive the task, compute (a different amount each time), send the result.
    std::vector<std::int64_t> done(static_cast<std::size_t>(nprocs), 0);
    for (int w = 1; w <= workers; ++w) {
      g.Blocking(w, MakeRecv(0, 1, 1024), g.clock(0));
      g.Compute(w, static_cast<std::int64_t>(300000 * (1 + 0.2 * g.Noise())));
      g.Local(w, MakeSend(0, 2, 256));
      done[w] = g.clock(w);
    }
    // Master: Waitany in completion order, acknowledging each worker as its result lands.
    std::vector<int> order(static_cast<std::size_t>(workers));
    std::iota(order.begin(), order.end(), 1);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return std::tie(done[a], a) < std::tie(done[b], b); });
    std::vector<RequestId> pending = recvs;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const int w = order[k];
      Event e;
      e.kind = EventKind::kWaitany;
      e.requests = pending;
      const RequestId q = recvs[k];  // any pending request: they are all ANY_SOURCE
      e.completed.push_back(Completion{q, w, 2, 256});
      pending.erase(std::find(pending.begin(), pending.end(), q));
      g.Blocking(0, e, done[w] + 2000);
      g.Compute(0, 20000);
      g.Local(0, MakeSend(w, 3, 64));
      g.Blocking(w, MakeRecv(0, 3, 64), g.clock(0));
    }
  }
  for (int r = 0; r < nprocs; ++r) g.Compute(r, 1000000);
  g.Collective(AllRanks(nprocs), EventKind::kBarrier, 0);
  g.Finalize();
  return g.Take();
}

TraceData MakeSelfScheduled(int nprocs, int tasks, MasterShape shape, std::int64_t unit_ns,
                            bool skewed, int rounds, std::uint64_t round_bcast_bytes) {
  Gen g(nprocs, shape == MasterShape::kWaitany     ? "selfsched"
                : shape == MasterShape::kIrecvWait ? "selfsched_wait"
                                                   : "selfsched_recv");
  g.Init();
  g.Collective(AllRanks(nprocs), EventKind::kBarrier, 0);
  const int workers = nprocs - 1;
  constexpr std::int64_t kLatency = 3000;
  auto cost = [&](int t) { return unit_ns * (1 + (t * 7) % 13); };
  auto task_bytes = [](int t) { return static_cast<std::uint64_t>(16 + 64 * ((t * 7) % 13)); };
  std::vector<std::int64_t> done(static_cast<std::size_t>(nprocs), 0);  // result sent at
  std::vector<RequestId> slot(static_cast<std::size_t>(nprocs), 0);     // kWaitany: per worker
  std::vector<std::int64_t> sent_at(static_cast<std::size_t>(nprocs), 0);
  int next = 0;
  int first = 0;  // the round's first task number (its costs and bytes)
  // The worker side of one task (or the stop) handed out by the master now.
  auto run = [&](int w, int t) {
    g.Blocking(w, MakeRecv(0, t < 0 ? 2 : 1, t < 0 ? 0 : task_bytes(t)), sent_at[w] + kLatency);
    if (t < 0) return;
    g.Compute(w, cost(t));
    g.Local(w, MakeSend(0, 3, 48));
    done[w] = g.clock(w);
  };
  auto hand = [&](int w) {
    const int t = next < tasks ? first + next++ : -1;
    g.Compute(0, 4000);
    g.Local(0, MakeSend(w, t < 0 ? 2 : 1, t < 0 ? 0 : task_bytes(t)));
    sent_at[w] = g.clock(0);
    return t;
  };
  for (int round = 0; round < rounds; ++round) {
    if (round > 0) g.Collective(AllRanks(nprocs), EventKind::kBcast, round_bcast_bytes, 0);
    next = 0;
    first = round * tasks;
    std::vector<int> busy;
    for (int w = 1; w <= workers; ++w) {
      const int t = hand(w);
      if (t >= 0) {
        busy.push_back(w);
        if (shape == MasterShape::kWaitany) {
          slot[w] = g.NewRequest(0);
          g.Local(0, MakeIrecv(kAnySource, 3, 48, slot[w]));
        }
      }
      run(w, t);
    }
    while (!busy.empty()) {
      // The result that arrives first (ties: the lower rank).
      auto it =
          skewed ? busy.begin() : std::min_element(busy.begin(), busy.end(), [&](int a, int b) {
            return std::tie(done[a], a) < std::tie(done[b], b);
          });
      const int w = *it;
      Event e;
      if (shape == MasterShape::kWaitany) {
        e.kind = EventKind::kWaitany;
        for (int b : busy) e.requests.push_back(slot[b]);
        std::sort(e.requests.begin(), e.requests.end());
        e.completed.push_back(Completion{slot[w], w, 3, 48});
      } else if (shape == MasterShape::kBlockingRecv) {
        e = MakeRecv(w, 3, 48);
        e.recv_peer = kAnySource;
      } else {
        const RequestId q = g.NewRequest(0);
        g.Local(0, MakeIrecv(kAnySource, 3, 48, q));
        e.kind = EventKind::kWait;
        e.requests = {q};
        e.completed.push_back(Completion{q, w, 3, 48});
      }
      g.Blocking(0, e, done[w] + kLatency);
      const int t = hand(w);
      if (t >= 0 && shape == MasterShape::kWaitany) {
        slot[w] = g.NewRequest(0);
        g.Local(0, MakeIrecv(kAnySource, 3, 48, slot[w]));
      }
      if (t < 0) busy.erase(it);
      run(w, t);
    }
  }
  g.Collective(AllRanks(nprocs), EventKind::kBcast, 8, 0);
  g.Finalize();
  return g.Take();
}

TraceData MakeCgLike(int nprocs, int dots, int halos) {
  Gen g(nprocs, "cglike");
  g.Init();
  g.Collective(AllRanks(nprocs), EventKind::kBcast, 128, 0);
  for (int it = 0; it < dots; ++it) {
    for (int k = 0; k < 3; ++k) {
      for (int r = 0; r < nprocs; ++r)
        g.Compute(r, static_cast<std::int64_t>(80000 * (1 + 0.05 * g.Noise())));
      g.Collective(AllRanks(nprocs), EventKind::kAllreduce, 8);
    }
  }
  for (int it = 0; it < halos; ++it) {
    for (int r = 0; r < nprocs; ++r)
      g.Compute(r, static_cast<std::int64_t>(500000 * (1 + 0.05 * g.Noise())));
    for (int dir : {1, -1}) {
      std::vector<std::int64_t> ready(static_cast<std::size_t>(nprocs));
      for (int r = 0; r < nprocs; ++r) {
        ready[r] = std::max(g.clock((r + 1) % nprocs), g.clock((r + nprocs - 1) % nprocs));
      }
      for (int r = 0; r < nprocs; ++r) {
        g.Blocking(
            r,
            MakeSendrecv((r + dir + nprocs) % nprocs, (r - dir + nprocs) % nprocs, 7, 65536, 65536),
            ready[r] + 5000);
      }
    }
    for (int r = 0; r < nprocs; ++r) g.Compute(r, 20000);
    g.Collective(AllRanks(nprocs), EventKind::kAllreduce, 8);
  }
  g.Finalize();
  return g.Take();
}

TraceData MakeRowDots(int nprocs, int iterations) {
  int n = 0;
  while ((1 << n) < nprocs) ++n;
  const int cols = 1 << ((n + 1) / 2);
  std::vector<int> bits;  // the row's bits, lowest first
  for (int b = 1; b < cols; b <<= 1) bits.push_back(b);
  Gen g(nprocs, "rowdots");
  g.Init();
  g.Collective(AllRanks(nprocs), EventKind::kBcast, 64, 0);
  const auto step = [&](int bit, int tag, std::uint64_t bytes) {
    std::vector<RequestId> req(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r) {
      req[r] = g.NewRequest(r);
      g.Local(r, MakeIrecv(r ^ bit, tag, bytes, req[r]));
      g.Local(r, MakeSend(r ^ bit, tag, bytes), 1500);
    }
    std::vector<std::int64_t> ready(static_cast<std::size_t>(nprocs));
    for (int r = 0; r < nprocs; ++r) ready[r] = g.clock(r ^ bit) + 3000;
    for (int r = 0; r < nprocs; ++r) {
      Event wait = MakeWaitall({req[r]});
      wait.kind = EventKind::kWait;
      g.Blocking(r, wait, ready[r]);
    }
  };
  for (int it = 0; it < iterations; ++it) {
    for (int r = 0; r < nprocs; ++r)
      g.Compute(r, static_cast<std::int64_t>(300000 * (1 + 0.05 * g.Noise())));
    for (std::size_t i = 0; i < bits.size(); ++i) step(bits[i], static_cast<int>(i) + 1, 16384);
    for (int dot = 0; dot < 2; ++dot) {
      for (int r = 0; r < nprocs; ++r) g.Compute(r, 20000);
      for (std::size_t i = bits.size(); i-- > 0;) step(bits[i], static_cast<int>(i) + 1, 8);
    }
  }
  g.Finalize();
  return g.Take();
}

TraceData MakeNoRepetition(int messages) {
  Gen g(2, "norepeat");
  g.Init();
  // Sizes from 2 KiB up, doubling: with AnalyzeOptions::bytes_tolerance > 0 every message
  // is a different size class (messages below bytes_floor count as one size).
  std::uint64_t bytes = 2048;
  for (int i = 0; i < messages; ++i) {
    g.Compute(0, 10000 * (i + 1));
    g.Local(0, MakeSend(1, i, bytes));
    g.Compute(1, 5000);
    g.Blocking(1, MakeRecv(0, i, bytes), g.clock(0));
    bytes *= 2;
  }
  g.Finalize();
  return g.Take();
}

}  // namespace pas2p::phases::testing
