// pas2p-characterize: measures what a pas2p machine file needs, under mpirun.
//
//   mpirun -np 2 pas2p-characterize --out machine.toml          # one node
//   mpirun -np 3 --host a:2,b:1 pas2p-characterize --out m.toml  # one node + two nodes
//
// Rank 0 ping-pongs with the first rank on its own node (intra-node parameters) and with
// the first rank on another node, if any (inter-node parameters). Each message size is
// timed with the mixed median-of-means method of Demaine's network evaluator (paper 002):
// a batch times several round trips together (the clock is read twice per batch, not per
// message), and the median of the batch means discards batches hit by outliers. L and B
// are fitted by least squares, piecewise where the MPI library changes protocol
// (machine_fit.h). A small compute kernel measures the flop rate of one core. The result is
// written as a machine file whose comments give the measured points and the fit quality.
// `pas2p characterize` is the usual way to run this.
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pas2p/core/error.h"
#include "pas2p/simulator/machine.h"
#include "pas2p/simulator/machine_file.h"
#include "pas2p/simulator/machine_fit.h"

namespace {

using pas2p::sim::PingPongPoint;

constexpr int kTagPingPong = 1;
constexpr int kTagControl = 2;

struct Options {
  std::string out;
  std::string sizes = "1:4194304";
  int reps = 0;  // round trips per batch; 0 = auto (batches of about batch_s)
  double batch_s = 1e-3;
  int batches = 15;
  int retries = 3;          // extra attempts for a disturbed size
  double max_spread = 1.5;  // disturbed: median batch > max_spread x fastest batch
  std::string base;
  double cpu_seconds = 0.2;
};

// "1:4194304" (powers of two from..to), "1,8,1K,64K,1M" (K/M/G = 2^10/2^20/2^30), or a mix.
std::vector<std::uint64_t> ParseSizes(const std::string& spec) {
  auto number = [&spec](std::string t) -> std::uint64_t {
    std::uint64_t mult = 1;
    if (!t.empty()) {
      const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
      if (last == 'K') mult = 1ull << 10;
      if (last == 'M') mult = 1ull << 20;
      if (last == 'G') mult = 1ull << 30;
      if (mult != 1) t.pop_back();
    }
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (t.empty() || used != t.size())
      throw pas2p::UserError("--sizes '" + spec +
                             "': expected sizes in bytes such as 1,64K,4M or a "
                             "power-of-two range such as 1:4M, got '" +
                             t + "'");
    return v * mult;
  };
  std::vector<std::uint64_t> sizes;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      sizes.push_back(number(item));
      continue;
    }
    std::uint64_t lo = number(item.substr(0, colon)), hi = number(item.substr(colon + 1));
    if (lo == 0 || lo > hi)
      throw pas2p::UserError("--sizes '" + spec + "': a range needs 1 <= from <= to, got '" + item +
                             "'");
    for (std::uint64_t s = lo; s <= hi; s *= 2) sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() < 2)
    throw pas2p::UserError("--sizes '" + spec + "': need at least 2 distinct sizes to fit L and B");
  return sizes;
}

struct Measured {
  std::uint64_t bytes;
  double one_way_s;  // median of batch means
  double min_batch_s, max_batch_s;
  int reps;      // round trips per batch
  int attempts;  // measurements of this size (see Options::retries)
};

// One ping-pong pair. The leader (rank 0) drives: Measure(bytes) tells the partner, which
// sits in Serve(), what to measure next; Stop() releases it. Buffers hold `max_bytes`.
class PingPongPair {
 public:
  PingPongPair(bool leader, int peer, std::uint64_t max_bytes, const Options& o)
      : leader_(leader), peer_(peer), o_(o), buf_(std::max<std::uint64_t>(max_bytes, 1)) {
    std::fill(buf_.begin(), buf_.end(), static_cast<char>(leader ? 1 : 2));  // touch pages
  }

  Measured Measure(std::uint64_t bytes) {
    std::uint64_t command = bytes;
    MPI_Send(&command, 1, MPI_UINT64_T, peer_, kTagControl, MPI_COMM_WORLD);
    return Run(bytes);
  }
  void Stop() {
    std::uint64_t command = 0;
    MPI_Send(&command, 1, MPI_UINT64_T, peer_, kTagControl, MPI_COMM_WORLD);
  }
  void Serve() {
    while (true) {
      std::uint64_t bytes = 0;
      MPI_Recv(&bytes, 1, MPI_UINT64_T, peer_, kTagControl, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (bytes == 0) return;
      Run(bytes);
    }
  }

 private:
  void RoundTrip(std::uint64_t bytes) {
    const int n = static_cast<int>(bytes);
    if (leader_) {
      MPI_Send(buf_.data(), n, MPI_BYTE, peer_, kTagPingPong, MPI_COMM_WORLD);
      MPI_Recv(buf_.data(), n, MPI_BYTE, peer_, kTagPingPong, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf_.data(), n, MPI_BYTE, peer_, kTagPingPong, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf_.data(), n, MPI_BYTE, peer_, kTagPingPong, MPI_COMM_WORLD);
    }
  }

  // Both sides: warm-up, then attempts of o.batches timed batches. The leader sends the
  // round trips per batch (> 0) to start an attempt, 0 to stop. A size whose median batch
  // is far above its fastest batch was disturbed (another process took the core) and is
  // measured again, up to o.retries times; the attempt with the lowest median is kept.
  Measured Run(std::uint64_t bytes) {
    constexpr int kWarmup = 4;  // connection set-up, page faults; estimates the round trip
    const double w0 = MPI_Wtime();
    for (int i = 0; i < kWarmup; ++i) RoundTrip(bytes);
    const double rtt_estimate = (MPI_Wtime() - w0) / kWarmup;
    const int reps =
        o_.reps > 0
            ? o_.reps
            : static_cast<int>(std::clamp(o_.batch_s / std::max(rtt_estimate, 1e-9), 1.0, 2000.0));
    Measured best{bytes, 0.0, 0.0, 0.0, 0, 0};
    double attempt_s = 0.0;
    for (int attempt = 0;; ++attempt) {
      int go = reps;
      if (leader_) {
        // Retry while disturbed, but not sizes whose attempts take long (large messages on
        // a busy machine would otherwise stretch the run well past its usual few seconds).
        const bool done = attempt > o_.retries ||
                          (attempt > 0 && best.one_way_s <= o_.max_spread * best.min_batch_s) ||
                          attempt_s > 0.15;
        if (done) go = 0;
        MPI_Send(&go, 1, MPI_INT, peer_, kTagControl, MPI_COMM_WORLD);
      } else {
        MPI_Recv(&go, 1, MPI_INT, peer_, kTagControl, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      if (go == 0) break;
      std::vector<double> means;
      const double attempt_start = MPI_Wtime();
      for (int b = 0; b < o_.batches; ++b) {
        const double t0 = MPI_Wtime();
        for (int r = 0; r < go; ++r) RoundTrip(bytes);
        means.push_back((MPI_Wtime() - t0) / go / 2.0);
      }
      attempt_s = MPI_Wtime() - attempt_start;
      if (leader_) {
        const auto [mn, mx] = std::minmax_element(means.begin(), means.end());
        const double median = pas2p::sim::MedianOfMeans(means);
        if (attempt == 0 || median < best.one_way_s) best = {bytes, median, *mn, *mx, go, 0};
        best.attempts = attempt + 1;
      }
    }
    return best;
  }

  bool leader_;
  int peer_;
  const Options& o_;
  std::vector<char> buf_;
};

// The 1-minute load average per core of this node (Linux /proc/loadavg); < 0 if unknown.
double LoadPerCore() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return -1.0;
  double load = -1.0;
  if (std::fscanf(f, "%lf", &load) != 1) load = -1.0;
  std::fclose(f);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return load < 0 ? -1.0 : load / cores;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Flop rate of one core on a simple kernel: 8 independent multiply-add chains on data in
// registers/L1 (2 flops per element update). Timed with the thread's CPU time, so another
// process sharing the core does not lower the figure; the best of 3 runs is kept.
double MeasureFlopsPerSecond(double seconds) {
  constexpr int kChains = 8;
  double x[kChains];
  for (int j = 0; j < kChains; ++j) x[j] = 1.0 + 1e-3 * j;
  const double a = 0.999999, c = 1e-7;
  double best = 0.0;
  for (int run = 0; run < 3; ++run) {
    std::uint64_t iters = 0;
    const double t0 = ThreadCpuSeconds();
    double t1 = t0;
    while (t1 - t0 < seconds / 3) {
      for (int i = 0; i < 100000; ++i)
        for (int j = 0; j < kChains; ++j) x[j] = x[j] * a + c;
      iters += 100000;
      t1 = ThreadCpuSeconds();
    }
    best = std::max(best, 2.0 * kChains * static_cast<double>(iters) / (t1 - t0));
  }
  volatile double sink = 0;
  for (double v : x) sink = sink + v;
  return best;
}

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string PointsComment(const Options& o, const std::string& what, const std::vector<Measured>& m,
                          const pas2p::sim::ProtocolFit& fit) {
  std::string out =
      what + " ping-pong, one-way time = round trip / 2 (median of " + "batch means):\n";
  out += "      bytes   reps tries   measured_us      fit_us  residual   batch min..max us\n";
  for (const auto& p : m) {
    const bool eager = !fit.split || p.bytes <= fit.eager_threshold_bytes;
    const double f = (eager ? fit.eager : fit.rendezvous).Predict(p.bytes);
    char buf[200];
    std::snprintf(buf, sizeof buf, "%11llu %6d %5d %13.3f %11.3f %8.2f%%   %.3f..%.3f\n",
                  static_cast<unsigned long long>(p.bytes), p.reps, p.attempts, p.one_way_s * 1e6,
                  f * 1e6, 100.0 * (f - p.one_way_s) / p.one_way_s, p.min_batch_s * 1e6,
                  p.max_batch_s * 1e6);
    out += buf;
    if (p.one_way_s > o.max_spread * p.min_batch_s)
      out.insert(out.size() - 1,
                 "  (disturbed: median > " + Fmt("%.1f", o.max_spread) + "x fastest batch)");
    for (const auto& q : fit.outliers)
      if (q.bytes == p.bytes) out.insert(out.size() - 1, "  (outlier, not fitted)");
  }
  out += "Disturbed sizes are left out of the fit (unless fewer than 6 sizes are clean).\n";
  out += fit.Report();
  return out;
}

// A size whose median batch stayed over max_spread x its fastest batch after the retries
// was disturbed in most batches: the median-of-means estimate is then not trustworthy.
bool Disturbed(const Measured& p, const Options& o) {
  return p.one_way_s > o.max_spread * p.min_batch_s;
}

pas2p::sim::ProtocolFit Fit(const std::vector<Measured>& m, const Options& o) {
  std::vector<PingPongPoint> points, all;
  for (const auto& p : m) {
    all.push_back({p.bytes, p.one_way_s});
    if (!Disturbed(p, o)) points.push_back({p.bytes, p.one_way_s});
  }
  if (points.size() < 6) points = all;  // too few clean sizes: fit everything
  pas2p::sim::ProtocolFitOptions options;
  options.max_outlier_fraction = 0.2;  // sizes still off the line
  return pas2p::sim::FitProtocols(points, options);
}

// What was measured between rank 0 and one partner.
struct Link {
  bool measured = false;
  std::vector<Measured> points;  // the --sizes
  pas2p::sim::ProtocolFit fit;
  std::vector<Measured> bisection;    // sizes measured to place the protocol switch
  std::uint64_t threshold_bytes = 0;  // the largest size found eager
};

// The fit put the protocol switch between two measured sizes a < b. Bisect [a, b]: a size
// whose time the eager line predicts better than the rendezvous line is eager. Stops at a
// resolution of 1/64 of the size (or 1 byte) or after 8 steps.
std::uint64_t Bisect(PingPongPair& pair, Link& link, const std::vector<std::uint64_t>& sizes,
                     const Options& o) {
  std::uint64_t lo = link.fit.eager_threshold_bytes;
  const auto next = std::upper_bound(sizes.begin(), sizes.end(), lo);
  if (next == sizes.end()) return lo;
  std::uint64_t hi = *next;
  for (int step = 0; step < 8 && hi - lo > std::max<std::uint64_t>(1, hi / 64); ++step) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    const Measured m = pair.Measure(mid);
    link.bisection.push_back(m);
    // A disturbed size is classified by its fastest batch, a lower bound that stays close to
    // the undisturbed time while the median does not.
    const double t = Disturbed(m, o) ? m.min_batch_s : m.one_way_s;
    const double eager_error = std::abs(link.fit.eager.Predict(mid) - t);
    const double rendezvous_error = std::abs(link.fit.rendezvous.Predict(mid) - t);
    (eager_error <= rendezvous_error ? lo : hi) = mid;
  }
  return lo;
}

std::string LinkComment(const Options& o, const std::string& what, const Link& link) {
  std::string out = PointsComment(o, what, link.points, link.fit);
  if (link.fit.split) {
    out += "protocol switch: bisection between " + std::to_string(link.fit.eager_threshold_bytes) +
           " and the next size (eager if the eager line predicts the time better):\n";
    for (const auto& b : link.bisection) {
      const bool eager = b.bytes <= link.threshold_bytes;
      out += "  " + std::to_string(b.bytes) + " B: " + Fmt("%.3f", b.one_way_s * 1e6) + " us" +
             (Disturbed(b, o)
                  ? ", disturbed, fastest batch " + Fmt("%.3f", b.min_batch_s * 1e6) + " us"
                  : std::string()) +
             " (" + (eager ? "eager" : "rendezvous") + ")\n";
    }
    out += "eager_threshold_bytes = " + std::to_string(link.threshold_bytes) + "\n";
  }
  return out;
}

int Run(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options o;
  CLI::App app{
      "pas2p-characterize: measure latency, bandwidth and CPU rate for a pas2p "
      "machine file (run under mpirun; see `pas2p characterize --help`)",
      "pas2p-characterize"};
  app.add_option("--out", o.out, "machine file to write (TOML)")->required();
  app.add_option("--sizes", o.sizes, "message sizes: 1:4M (powers of two) or 1,64K,1M")
      ->capture_default_str();
  app.add_option("--reps", o.reps, "round trips per timed batch (0 = auto, ~1 ms per batch)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batches", o.batches, "timed batches per size (median taken)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--retries", o.retries,
                 "extra measurements of a size whose median batch is over 1.5x its fastest")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--base", o.base, "machine file giving what is not measured")
      ->check(CLI::ExistingFile);
  app.add_option("--cpu-seconds", o.cpu_seconds, "duration of the CPU benchmark")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  if (size < 2) {
    if (rank == 0)
      std::fprintf(stderr, "pas2p-characterize: needs at least 2 ranks (mpirun -np 2 ...)\n");
    return 2;
  }
  const std::vector<std::uint64_t> sizes = ParseSizes(o.sizes);
  if (sizes.back() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw pas2p::UserError("--sizes: the largest size must fit an MPI count (< 2 GiB)");

  // Where is everybody? Rank 0 picks one partner on its node and one on another node.
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::vector<char> hosts(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
             0, MPI_COMM_WORLD);
  int partners[2] = {-1, -1};  // intra, inter
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      const bool same = std::strncmp(&hosts[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME],
                                     host, MPI_MAX_PROCESSOR_NAME) == 0;
      int& slot = partners[same ? 0 : 1];
      if (slot < 0) slot = r;
    }
  }
  MPI_Bcast(partners, 2, MPI_INT, 0, MPI_COMM_WORLD);

  // Paper 002's evaluator must run on a dedicated machine; say so when this one is busy.
  const double load_before = rank == 0 ? LoadPerCore() : 0.0;
  if (load_before > 1.0)
    std::fprintf(stderr,
                 "pas2p-characterize: warning: load average %.1f per core on %s; other "
                 "processes will disturb the timings (see the outliers in the output)\n",
                 load_before, host);
  const auto start = std::chrono::steady_clock::now();
  // Per pair: every size, the fit, then a bisection between the last eager size and the
  // first rendezvous size to place the protocol switch more precisely.
  Link links[2];
  for (int which = 0; which < 2; ++which) {
    const int peer = partners[which];
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer < 0) continue;
    if (rank == peer) PingPongPair(false, 0, sizes.back(), o).Serve();
    if (rank != 0) continue;
    PingPongPair pair(true, peer, sizes.back(), o);
    Link& link = links[which];
    for (std::uint64_t bytes : sizes) link.points.push_back(pair.Measure(bytes));
    link.fit = Fit(link.points, o);
    if (link.fit.split) link.threshold_bytes = Bisect(pair, link, sizes, o);
    pair.Stop();
    link.measured = true;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double flops = 0.0;
  if (rank == 0) flops = MeasureFlopsPerSecond(o.cpu_seconds);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) return 0;

  pas2p::sim::Machine m;
  if (!o.base.empty()) {
    m = pas2p::sim::LoadMachineFile(o.base);
  } else {
    m.name = std::string("characterized-") + host;
    m.nodes = 0;
    m.cpus_per_node = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  std::string comment = "Written by pas2p-characterize on " + std::string(host) + ", " +
                        std::to_string(size) + " ranks, " + std::to_string(o.batches) +
                        " batches per size.\n";
  {
    const std::time_t now = std::time(nullptr);
    char date[64];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
    comment += std::string("Measured ") + date + ".\n";
  }
  comment +=
      "Model per link: T = latency_s + bytes / bandwidth_Bps, with the latency of the\n"
      "eager segment and the bandwidth of the rendezvous segment when the fit finds a\n"
      "protocol change (eager_threshold_bytes = the largest size found eager).\n\n";
  const char* kWhat[2] = {"Intra-node", "Inter-node"};
  for (int which = 0; which < 2; ++which) {
    const Link& link = links[which];
    const std::string from = o.base.empty() ? std::string("pas2p's built-in defaults") : o.base;
    if (!link.measured) {
      comment += std::string(kWhat[which]) + ": not measured (" +
                 (which == 0 ? "no second rank on rank 0's node"
                             : "all ranks on one node; give two hosts to measure it") +
                 "); values from " + from + ".\n\n";
      continue;
    }
    double& latency = which == 0 ? m.intra_latency_s : m.inter_latency_s;
    double& bandwidth = which == 0 ? m.intra_bandwidth_Bps : m.inter_bandwidth_Bps;
    latency = link.fit.model_latency_s();
    bandwidth = link.fit.model_bandwidth_Bps();
    // Inter-node is handled second: the network's protocol switch matters more than
    // shared memory's for a cluster run, so it wins when both are measured.
    if (link.fit.split) m.eager_threshold_bytes = link.threshold_bytes;
    comment += LinkComment(o,
                           std::string(kWhat[which]) + " (rank 0 <-> rank " +
                               std::to_string(partners[which]) + ")",
                           link) +
               "\n";
    std::string summary = std::string(kWhat[which]) + ": L = " + Fmt("%.3f", latency * 1e6) +
                          " us, B = " + Fmt("%.3f", bandwidth / 1e9) + " GB/s";
    if (link.fit.split) summary += ", eager up to " + std::to_string(link.threshold_bytes) + " B";
    std::printf("%s\n", summary.c_str());
  }
  m.cpu_ratio = 1.0;  // traced CPU times taken on this machine replay unchanged
  m.flops_per_second = flops;
  comment +=
      "CPU: cpu_ratio = 1 (this machine relative to itself). instructions_per_second is\n"
      "not measured (needs hardware counters). flops_per_second: one core, 8 independent\n"
      "multiply-add chains, best of 3 runs of " +
      Fmt("%.2f", o.cpu_seconds / 3) + " s CPU time: " + Fmt("%.4g", flops) + " flop/s.\n";
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  comment +=
      "Measurement took " + Fmt("%.1f", elapsed) +
      " s; load average per core before: " + Fmt("%.2f", load_before) +
      ", after: " + Fmt("%.2f", LoadPerCore()) +
      (load_before > 1.0 ? " (BUSY machine: timings disturbed, measure again when quiet)." : ".");
  std::string error;
  if (!m.IsValid(&error)) throw pas2p::UserError("measured machine is not valid: " + error);
  pas2p::sim::SaveMachineFile(m, o.out, comment);
  std::printf("cpu: %.3g flop/s per core\nwrote %s (%.1f s)\n", flops, o.out.c_str(), elapsed);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = 0;
  try {
    rc = Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pas2p-characterize (rank %d): error: %s\n", rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rc != 0) {
    // A usage error is found by every rank alike; leave together.
    MPI_Finalize();
    return rc;
  }
  MPI_Finalize();
  return 0;
}
