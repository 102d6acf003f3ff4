// phases_bench: how long `AnalyzeTrace` takes on a trace of about a million events, and how
// much memory it needs. Run it with bench/phases_bench.sh (one command: generates the
// traces, then analyses each in a fresh process so the peak RSS is the analysis's own).
//
//   phases_bench generate DIR EVENTS [NPROCS]  writes a 2-D stencil trace of ~EVENTS events
//   phases_bench analyze DIR                    analyses it; prints events, phases, seconds,
//                                               peak RSS (MiB)
//
// The generated run: NPROCS ranks on a periodic grid, start-up (bcast), iterations of
// {4 irecv, 4 isend, compute, waitall} with an allreduce every 10 iterations, shutdown.
// Streams are written rank by rank, so generating needs no more memory than analysing.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"

namespace {

using namespace pas2p;

int Usage() {
  std::fprintf(stderr,
               "usage: phases_bench generate DIR EVENTS [NPROCS]\n"
               "       phases_bench analyze DIR\n");
  return 2;
}

int Generate(const std::string& dir, long long events, int nprocs) {
  int px = static_cast<int>(std::sqrt(static_cast<double>(nprocs)));
  while (nprocs % px) --px;
  const int py = nprocs / px;
  // Per iteration and rank: 4 irecv + 4 isend + compute + waitall = 10 events, plus an
  // allreduce (and its compute) every 10 iterations.
  const long long per_iteration = 10 * nprocs;
  const long long iterations = std::max(1LL, events / per_iteration);
  std::filesystem::create_directories(dir);
  for (int r = 0; r < nprocs; ++r) {
    RankStreamWriter w;
    if (!w.Open(RankStreamPath(dir, r), r)) {
      std::fprintf(stderr, "cannot write %s: %s\n", RankStreamPath(dir, r).c_str(),
                   w.error().c_str());
      return 1;
    }
    std::int64_t t = 0;
    auto at = [&](Event e, std::int64_t duration) {
      e.wall_start_ns = t;
      t += duration;
      e.wall_end_ns = t;
      w.Append(e);
    };
    Event init;
    init.kind = EventKind::kInit;
    init.wall_start_ns = -1000000;
    w.Append(init);
    at(MakeCollective(EventKind::kBcast, 64, 64, 0), 5000);
    const int x = r % px, y = r / px;
    const int nb[4] = {y * px + (x + px - 1) % px, y * px + (x + 1) % px,
                       ((y + py - 1) % py) * px + x, ((y + 1) % py) * px + x};
    RequestId next = 0;
    std::uint64_t rng = 0x9E3779B97F4A7C15ULL ^ static_cast<std::uint64_t>(r);
    for (long long it = 0; it < iterations; ++it) {
      std::vector<RequestId> reqs;
      for (int p : nb) {
        reqs.push_back(++next);
        at(MakeIrecv(p, 0, 8192, next), 300);
      }
      for (int p : nb) {
        reqs.push_back(++next);
        at(MakeIsend(p, 0, 8192, next), 800);
      }
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      const std::int64_t cpu = 200000 + static_cast<std::int64_t>(rng % 20000);
      at(MakeCompute(cpu), cpu);
      at(MakeWaitall(reqs), 15000);
      if ((it + 1) % 10 == 0) {
        at(MakeCompute(10000), 10000);
        at(MakeCollective(EventKind::kAllreduce, 8, 8), 8000);
      }
    }
    at(MakeCollective(EventKind::kReduce, 8, 8, 0), 5000);
    Event fin;
    fin.kind = EventKind::kFinalize;
    at(fin, 1000);
    if (!w.Close()) {
      std::fprintf(stderr, "cannot write rank %d: %s\n", r, w.error().c_str());
      return 1;
    }
  }
  TraceMetadata meta;
  meta.application = "bench_stencil";
  meta.nprocs = nprocs;
  meta.source = "generator";
  WriteMetadata(dir, meta);
  return 0;
}

int Analyze(const std::string& dir) {
  TraceDirectory trace(dir);
  const auto start = std::chrono::steady_clock::now();
  phases::Signature sig = phases::AnalyzeTrace(trace);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long long events = 0;
  for (const auto& p : sig.phases) {
    for (const auto& rp : p.ranks) events += static_cast<long long>(rp.weight * rp.events.size());
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "{\"trace\": \"%s\", \"nprocs\": %d, \"mpi_calls\": %lld, \"phases\": %zu, "
      "\"seconds\": %.3f, \"peak_rss_mib\": %.1f, \"pet_error\": %.5f}\n",
      dir.c_str(), sig.nprocs, events, sig.phases.size(), seconds,
      static_cast<double>(usage.ru_maxrss) / 1024.0, sig.pet_error);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return Usage();
  const std::string mode = argv[1];
  try {
    if (mode == "generate" && argc >= 4) {
      return Generate(argv[2], std::atoll(argv[3]), argc >= 5 ? std::atoi(argv[4]) : 16);
    }
    if (mode == "analyze") return Analyze(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "phases_bench: %s\n", e.what());
    return 1;
  }
  return Usage();
}
