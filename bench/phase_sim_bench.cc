// Where the time of a large prediction goes: one phase of a model synthesized at a target
// count with K occurrences (what `pas2p predict` simulates for a repeated phase's steady
// cost), timed twice: (1) generating every rank's event stream, nothing simulated, and
// (2) the simulation of the same synthesized trace (generation included). The difference
// is the engine's own share. Run by bench/phase_sim_bench.sh.
//
//   phase_sim_bench TARGET OCCURRENCES TRACES...
//
// The phase taken is the one with the largest weight at TARGET (the one a prediction
// simulates longest).

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pas2p/core/event.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/synthesize.h"

namespace {
double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}
double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}
}  // namespace

int main(int argc, char** argv) {
  using namespace pas2p;
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s TARGET OCCURRENCES TRACES...\n", argv[0]);
    return 2;
  }
  const std::int64_t n = std::atoll(argv[1]);
  const std::int64_t k = std::atoll(argv[2]);
  const std::vector<std::string> args(argv + 3, argv + argc);
  try {
    const synthesis::AppModel model = synthesis::ModelFromArgs(args);
    std::string used;
    const sim::Machine machine = synthesis::LoadMachineOrDefault("", &used);
    // The phase that weighs most at the target.
    int phase = 0;
    double best = -1;
    for (std::size_t i = 0; i < model.phases.size(); ++i) {
      const double w = model.phases[i].weight.At(static_cast<double>(n));
      if (w > best) {
        best = w;
        phase = static_cast<int>(i);
      }
    }
    synthesis::SynthOptions o;
    o.only_phase = phase;
    o.repetitions = k;
    std::printf("target %lld, phase %d (weight %.1f), %lld occurrences\n",
                static_cast<long long>(n), phase, best, static_cast<long long>(k));
    {
      const synthesis::SynthesizedTrace trace(model, n, o);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = CpuSeconds();
      std::uint64_t events = 0;
      Event e;
      for (int r = 0; r < trace.nprocs(); ++r) {
        auto src = trace.OpenRank(r);
        while (src->Next(&e)) ++events;
      }
      const double wall = Seconds(t0), cpu = CpuSeconds() - c0;
      std::printf("%-26s %12llu events %8.2f s wall %8.2f s cpu %8.3f M events/s\n",
                  "synthesis only", static_cast<unsigned long long>(events), wall, cpu,
                  1e-6 * static_cast<double>(events) / cpu);
    }
    {
      const synthesis::SynthesizedTrace trace(model, n, o);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = CpuSeconds();
      const sim::SimResult res = sim::Simulate(trace, machine, {});
      const double wall = Seconds(t0), cpu = CpuSeconds() - c0;
      std::printf("%-26s %12llu events %8.2f s wall %8.2f s cpu %8.3f M events/s  (time %.9g s)\n",
                  "synthesis + simulation", static_cast<unsigned long long>(res.events), wall, cpu,
                  1e-6 * static_cast<double>(res.events) / cpu, res.predicted_time_s);
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "phase_sim_bench: %s\n", ex.what());
    return 1;
  }
  return 0;
}
