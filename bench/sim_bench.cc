// sim_bench: replay speed of the simulator on a synthetic trace, and the same trace written
// as SimGrid TI for `smpirun -replay` (bench/sim_bench.sh runs both and prints the ratio).
//
// The trace (generated lazily, rank by rank, never held in memory): every rank runs K
// iterations of { compute; isend to rank+1; irecv from rank-1; waitall } and an allreduce
// every A iterations, between init and finalize.
//
//   sim_bench --ranks 4096 --iterations 200 [--allreduce-every 10] [--bytes 65536]
//             [--repeat 3] [--export-ti DIR]
// prints one JSON object per run: ranks, iterations, events, seconds (wall), cpu_seconds
// (this process's CPU time: what counts on a shared machine), events_per_s (wall),
// events_per_cpu_s, ns_per_event_cpu, peak_rss_mb, predicted_time_s. With --export-ti it writes
// DIR/traces.list
// (+ one file per rank), DIR/platform.xml (a crossbar cluster with the same latency and
// bandwidth) and DIR/hostfile, and does not simulate.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "pas2p/core/simgrid_ti.h"
#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"

namespace {

using namespace pas2p;

struct Params {
  int ranks = 256;
  int iterations = 100;
  int allreduce_every = 10;
  std::uint64_t bytes = 64 * 1024;
  std::int64_t compute_ns = 200'000;
};

class RingAllreduceTrace : public TraceSource {
 public:
  explicit RingAllreduceTrace(const Params& p) : p_(p) {
    metadata_.nprocs = p.ranks;
    metadata_.application = "sim_bench ring+allreduce";
    metadata_.source = "generator";
  }
  const TraceMetadata& metadata() const override { return metadata_; }
  std::string description() const override { return "sim_bench generator"; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override {
    return std::make_unique<Reader>(p_, rank);
  }

 private:
  class Reader : public RankEventSource {
   public:
    Reader(const Params& p, int rank) : p_(p), rank_(rank) {}
    bool Next(Event* e) override {
      e->Clear();
      switch (step_) {
        case 0:  // init
          e->kind = EventKind::kInit;
          step_ = 1;
          return true;
        case 1:
          if (iter_ == p_.iterations) {
            e->kind = EventKind::kFinalize;
            step_ = 6;
            return true;
          }
          e->kind = EventKind::kCompute;
          // A deterministic imbalance of up to 25% so that ranks do wait for each other.
          e->cpu_ns = p_.compute_ns + (p_.compute_ns / 4) * ((rank_ * 7 + iter_ * 13) % 5) / 4;
          step_ = 2;
          return true;
        case 2:
          e->kind = EventKind::kIsend;
          e->peer = (rank_ + 1) % p_.ranks;
          e->bytes = p_.bytes;
          e->request = next_id_;
          step_ = 3;
          return true;
        case 3:
          e->kind = EventKind::kIrecv;
          e->peer = (rank_ + p_.ranks - 1) % p_.ranks;
          e->bytes = p_.bytes;
          e->request = next_id_ + 1;
          step_ = 4;
          return true;
        case 4:
          e->kind = EventKind::kWaitall;
          e->requests.assign({next_id_, next_id_ + 1});
          e->completed.resize(2);
          e->completed[0] = Completion{next_id_, kNoRank, kAnyTag, 0};
          e->completed[1] =
              Completion{next_id_ + 1, (rank_ + p_.ranks - 1) % p_.ranks, 0, p_.bytes};
          next_id_ += 2;
          ++iter_;
          step_ = (p_.allreduce_every > 0 && iter_ % p_.allreduce_every == 0) ? 5 : 1;
          return true;
        case 5:
          e->kind = EventKind::kAllreduce;
          e->send_bytes = e->recv_bytes = 8;
          step_ = 1;
          return true;
        default:
          status_ = StreamStatus::kComplete;
          return false;
      }
    }
    StreamStatus status() const override { return status_; }
    const std::string& message() const override { return message_; }
    int rank() const override { return rank_; }

   private:
    const Params& p_;
    int rank_;
    int step_ = 0;
    int iter_ = 0;
    RequestId next_id_ = 1;
    StreamStatus status_ = StreamStatus::kReading;
    std::string message_;
  };
  Params p_;
  TraceMetadata metadata_;
};

// The machine both simulators see: one rank per node, L = 5 us and B = 10 GB/s between
// nodes, full-duplex links, no bus limit.
sim::Machine BenchMachine() {
  sim::Machine m;
  m.name = "sim_bench";
  m.nodes = 0;
  m.cpus_per_node = 1;
  m.inter_latency_s = 5e-6;
  m.inter_bandwidth_Bps = 10e9;
  m.buses = 0;
  m.input_links = m.output_links = 1;
  return m;
}

void ExportTi(const RingAllreduceTrace& trace, const Params& p, const std::string& dir) {
  std::filesystem::create_directories(dir);
  TiOptions ti;
  ti.flops_per_second = 1e9;
  ExportSimgridTi(trace, dir, ti);
  const sim::Machine m = BenchMachine();
  // A <cluster> route crosses two private links: each gets half the latency.
  std::ofstream xml(dir + "/platform.xml");
  xml << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<platform version=\"4.1\">\n"
         "  <cluster id=\"bench\" prefix=\"node-\" suffix=\"\" radical=\"0-"
      << (p.ranks - 1) << "\" speed=\"1Gf\" bw=\"" << m.inter_bandwidth_Bps << "Bps\" lat=\""
      << m.inter_latency_s / 2 << "s\" sharing_policy=\"SPLITDUPLEX\"/>\n"
      << "</platform>\n";
  std::ofstream hosts(dir + "/hostfile");
  for (int r = 0; r < p.ranks; ++r) hosts << "node-" << r << "\n";
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int Usage() {
  std::fprintf(stderr,
               "usage: sim_bench [--ranks N] [--iterations K] [--allreduce-every A] "
               "[--bytes B] [--repeat R] [--export-ti DIR]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Params p;
  int repeat = 1;
  std::string export_dir;
  for (int i = 1; i < argc; ++i) {
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) std::exit(Usage());
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--ranks"))
      p.ranks = std::atoi(value());
    else if (!std::strcmp(argv[i], "--iterations"))
      p.iterations = std::atoi(value());
    else if (!std::strcmp(argv[i], "--allreduce-every"))
      p.allreduce_every = std::atoi(value());
    else if (!std::strcmp(argv[i], "--bytes"))
      p.bytes = std::strtoull(value(), nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::atoi(value());
    else if (!std::strcmp(argv[i], "--export-ti"))
      export_dir = value();
    else
      return Usage();
  }
  if (p.ranks < 2 || p.iterations < 1 || repeat < 1) return Usage();
  RingAllreduceTrace trace(p);
  if (!export_dir.empty()) {
    ExportTi(trace, p, export_dir);
    return 0;
  }
  const sim::Machine machine = BenchMachine();
  for (int run = 0; run < repeat; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = CpuSeconds();
    const sim::SimResult r = sim::Simulate(trace, machine);
    const double cpu = CpuSeconds() - c0;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double n = static_cast<double>(r.events);
    std::printf(
        "{\"ranks\": %d, \"iterations\": %d, \"events\": %llu, \"seconds\": %.6f, "
        "\"cpu_seconds\": %.6f, \"events_per_s\": %.0f, \"events_per_cpu_s\": %.0f, "
        "\"ns_per_event_cpu\": %.2f, \"peak_rss_mb\": %.1f, \"predicted_time_s\": %.9f}\n",
        p.ranks, p.iterations, static_cast<unsigned long long>(r.events), s, cpu, n / s, n / cpu,
        cpu * 1e9 / n, PeakRssKb() / 1024.0, r.predicted_time_s);
    std::fflush(stdout);
  }
  return 0;
}
