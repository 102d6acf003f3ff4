// MPI_Init / MPI_Finalize / MPI_Abort hooks, hardware counters, and what happens when the
// application crashes or exits without MPI_Finalize.
#include <fcntl.h>
#include <papi.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hooks.h"
#include "pas2p/core/version.h"

namespace pas2p::tracer {

void MarkOwnerThread() noexcept;  // runtime.cc

namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGTERM};
struct sigaction g_old_actions[NSIG];
volatile std::sig_atomic_t g_in_handler = 0;

bool EnvFlag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 || std::strcmp(v, "off") == 0);
}

// The command line from /proc/self/cmdline (works for C and Fortran programs alike).
std::vector<std::string> CommandLine() {
  std::vector<std::string> args;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t start = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      args.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < all.size()) args.push_back(all.substr(start));
  return args;
}

std::string IsoNowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The PAPI events measured into Event::instructions and Event::cycles: PAPI_TOT_INS and
// PAPI_TOT_CYC, or the two names of PAS2P_COUNTER_EVENTS="INS,CYC" (for machines whose
// presets are missing but native events exist, e.g. "perf::INSTRUCTIONS,perf::CYCLES"; an
// empty name measures nothing in that slot). trace.json lists the names measured.
void CounterEventNames(std::string* ins, std::string* cyc) {
  *ins = "PAPI_TOT_INS";
  *cyc = "PAPI_TOT_CYC";
  const char* env = std::getenv("PAS2P_COUNTER_EVENTS");
  if (env == nullptr) return;
  const std::string names = env;
  const std::size_t comma = names.find(',');
  *ins = names.substr(0, comma);
  *cyc = comma == std::string::npos ? "" : names.substr(comma + 1);
}

// Adds the instruction and cycle events where the machine has them. On a machine without
// hardware counters (most VMs) this fails and the note says why.
void StartCounters(Runtime& rt) {
  rt.metadata.counters.clear();
  if (!EnvFlag("PAS2P_COUNTERS", true)) {
    rt.metadata.counters_note = "hardware counters disabled by PAS2P_COUNTERS=0";
    return;
  }
  const int version = PAPI_library_init(PAPI_VER_CURRENT);
  if (version != PAPI_VER_CURRENT) {
    rt.metadata.counters_note = std::string("PAPI_library_init failed: ") +
                                (version > 0 ? "PAPI version mismatch" : PAPI_strerror(version));
    return;
  }
  int eventset = PAPI_NULL;
  int status = PAPI_create_eventset(&eventset);
  if (status != PAPI_OK) {
    rt.metadata.counters_note =
        std::string("PAPI_create_eventset failed: ") + PAPI_strerror(status);
    return;
  }
  std::string note;
  int slot = 0;
  std::string names[2];
  CounterEventNames(&names[0], &names[1]);
  for (int which = 0; which < 2; ++which) {
    std::string& name = names[which];
    if (name.empty()) continue;
    int code = 0;
    status = PAPI_event_name_to_code(name.data(), &code);
    if (status == PAPI_OK) status = PAPI_add_event(eventset, code);
    if (status != PAPI_OK) {
      note +=
          std::string(note.empty() ? "" : "; ") + name + " not available: " + PAPI_strerror(status);
      continue;
    }
    (which == 0 ? rt.ins_slot : rt.cyc_slot) = slot++;
    rt.metadata.counters.push_back(name);
  }
  if (slot > 0) {
    status = PAPI_start(eventset);
    if (status != PAPI_OK) {
      note = std::string("PAPI_start failed: ") + PAPI_strerror(status);
      rt.metadata.counters.clear();
      rt.ins_slot = rt.cyc_slot = -1;
      slot = 0;
    }
  }
  if (slot == 0) {
    PAPI_cleanup_eventset(eventset);
    PAPI_destroy_eventset(&eventset);
    rt.metadata.counters_note = note + " (thread CPU time is recorded instead)";
    return;
  }
  rt.papi_eventset = eventset;
  rt.metadata.counters_note = note;
}

// Async-signal-safe: writes "signal=<N> rank=<R>\n" to the marker file.
void WriteMarker(const char* path, const char* what, int value, int rank) {
  if (path == nullptr || *path == '\0') return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char buf[96];
  std::size_t n = 0;
  auto put = [&](const char* s) {
    while (*s != '\0' && n < sizeof buf - 1) buf[n++] = *s++;
  };
  auto put_int = [&](int v) {
    char digits[16];
    int k = 0;
    unsigned u = v < 0 ? static_cast<unsigned>(-v) : static_cast<unsigned>(v);
    do {
      digits[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0 && k < 15);
    if (v < 0 && n < sizeof buf - 1) buf[n++] = '-';
    while (k > 0 && n < sizeof buf - 1) buf[n++] = digits[--k];
  };
  put(what);
  put("=");
  put_int(value);
  put(" rank=");
  put_int(rank);
  put("\n");
  ssize_t ignored = write(fd, buf, n);
  (void)ignored;
  close(fd);
}

void OnCrashSignal(int sig, siginfo_t*, void*) {
  Runtime& rt = GetRuntime();
  if (!g_in_handler) {
    g_in_handler = 1;
    // A crash inside Append would find the buffer half-written: keep the blocks already on
    // disk rather than write a damaged one.
    if (rt.writer.is_open() && !rt.in_writer) rt.writer.EmergencyFlush();
    WriteMarker(rt.marker_path.c_str(), "signal", sig, rt.rank);
  }
  sigaction(sig, &g_old_actions[sig], nullptr);
  raise(sig);
}

void InstallCrashHandlers() {
  for (int sig : kCrashSignals) {
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_sigaction = OnCrashSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(sig, &action, &g_old_actions[sig]);
  }
}

// What each rank sends rank 0 at MPI_Init: its host name (truncated to a fixed size, so one
// PMPI_Gather of fixed records suffices: O(P) bytes at rank 0, one collective), the id of
// the running kernel (two nodes of a container cluster may share a host name, never a boot
// id), and the CPUs its affinity mask allows.
constexpr std::size_t kHostNameBytes = 72;  // HOST_NAME_MAX (64) + NUL, rounded up
constexpr std::size_t kBootIdBytes = 40;    // a UUID (36) + NUL, rounded up
struct PlacementRecord {
  char host[kHostNameBytes];
  char boot_id[kBootIdBytes];
  unsigned char cpus[sizeof(cpu_set_t)];
};

void LocalPlacement(PlacementRecord* record) {
  std::memset(record, 0, sizeof *record);
  gethostname(record->host, kHostNameBytes - 1);
  if (const int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC); fd >= 0) {
    const ssize_t n = read(fd, record->boot_id, kBootIdBytes - 1);
    close(fd);
    for (ssize_t i = 0; i < n; ++i) {
      if (record->boot_id[i] == '\n') record->boot_id[i] = '\0';
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    // More CPUs than a cpu_set_t holds (or no affinity support): every online CPU.
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    for (long cpu = 0; cpu < online && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &set);
  }
  std::memcpy(record->cpus, &set, sizeof set);
}

// Collective over MPI_COMM_WORLD (every rank calls it). Rank 0 gets the hosts (ranks with the
// same host name and boot id) in the order of their lowest rank, each with its rank count
// and the union of its ranks' affinity masks (ranks bound one per core count each core once;
// unbound ranks share the whole mask).
std::vector<HostPlacement> GatherPlacement(int rank, int nprocs) {
  PlacementRecord mine;
  LocalPlacement(&mine);
  std::vector<PlacementRecord> all(rank == 0 ? static_cast<std::size_t>(nprocs) : 0);
  PMPI_Gather(&mine, static_cast<int>(sizeof mine), MPI_BYTE, all.data(),
              static_cast<int>(sizeof mine), MPI_BYTE, 0, MPI_COMM_WORLD);
  std::vector<HostPlacement> hosts;
  if (rank != 0) return hosts;
  std::vector<cpu_set_t> masks;
  std::map<std::string, std::size_t> index;
  for (const PlacementRecord& record : all) {
    const std::string name(record.host, strnlen(record.host, kHostNameBytes));
    const std::string boot(record.boot_id, strnlen(record.boot_id, kBootIdBytes));
    auto [it, added] = index.emplace(name + '\n' + boot, hosts.size());
    if (added) {
      hosts.push_back(HostPlacement{name, 0, 0});
      masks.emplace_back();
      CPU_ZERO(&masks.back());
    }
    cpu_set_t set;
    std::memcpy(&set, record.cpus, sizeof set);
    hosts[it->second].ranks += 1;
    CPU_OR(&masks[it->second], &masks[it->second], &set);
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) hosts[i].cores = CPU_COUNT(&masks[i]);
  return hosts;
}

void Start(CallScope& scope, int rc, int thread_level) {
  Runtime& rt = GetRuntime();
  if (rc != MPI_SUCCESS) return;
  if (!EnvFlag("PAS2P_TRACE", true)) return;  // PAS2P_TRACE=0: preloaded but off
  rt.verbose = EnvFlag("PAS2P_VERBOSE", false);
  PMPI_Comm_rank(MPI_COMM_WORLD, &rt.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &rt.nprocs);
  PMPI_Comm_group(MPI_COMM_WORLD, &rt.world_group);
  // Before anything that can fail on one rank only: every rank must reach the gather.
  rt.metadata.hosts = GatherPlacement(rt.rank, rt.nprocs);

  const std::vector<std::string> command = CommandLine();
  std::string app = command.empty() ? "app" : std::filesystem::path(command[0]).filename().string();
  if (app.empty()) app = "app";
  const char* dir_env = std::getenv("PAS2P_TRACE_DIR");
  rt.dir = (dir_env != nullptr && *dir_env != '\0')
               ? std::string(dir_env)
               : "pas2p-trace-" + app + "-" + std::to_string(rt.nprocs);
  std::error_code ec;
  std::filesystem::create_directories(rt.dir, ec);
  if (ec && !std::filesystem::is_directory(rt.dir)) {
    rt.Fail(("cannot create trace directory " + rt.dir + ": " + ec.message()).c_str());
    return;
  }
  if (const char* min_burst = std::getenv("PAS2P_MIN_BURST_NS")) {
    rt.min_burst_ns = std::strtoll(min_burst, nullptr, 10);
  }
  const std::filesystem::path stream = RankStreamPath(rt.dir, rt.rank);
  if (!rt.writer.Open(stream, rt.rank)) {
    rt.Fail(("cannot open " + stream.string() + ": " + rt.writer.error()).c_str());
    return;
  }
  rt.marker_path =
      (std::filesystem::path(rt.dir) / ("rank-" + std::to_string(rt.rank) + ".signal")).string();
  std::filesystem::remove(rt.marker_path, ec);

  TraceMetadata& md = rt.metadata;
  md.application = app;
  md.command = command;
  md.nprocs = rt.nprocs;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  md.host = host;
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
  int length = 0;
  PMPI_Get_library_version(library, &length);
  std::string lib(library, static_cast<std::size_t>(length > 0 ? length : 0));
  md.mpi_library = lib.substr(0, lib.find_first_of("\n,"));
  md.tracer_version = kVersion;
  md.source = "pas2p-tracer";
  md.status = "running";
  md.started = IsoNowUtc();
  StartCounters(rt);
  if (rt.rank == 0) {
    try {
      WriteMetadata(rt.dir, md);
    } catch (const std::exception& e) {
      rt.Fail((std::string("cannot write trace metadata: ") + e.what()).c_str());
      return;
    }
  }

  rt.world.id = kCommWorld;
  rt.world.is_world = true;
  rt.world.my_rank = rt.rank;
  rt.world.members.resize(static_cast<std::size_t>(rt.nprocs));
  for (int r = 0; r < rt.nprocs; ++r) rt.world.members[static_cast<std::size_t>(r)] = r;
  rt.world.peers = rt.world.members;
  rt.self.id = kCommSelf;
  rt.self.members = rt.self.peers = {rt.rank};
  rt.self.my_rank = 0;
  rt.requests.reserve(1024);

  InstallCrashHandlers();
  MarkOwnerThread();

  // The origin of wall times is the end of MPI_Init.
  rt.origin_ns = MonotonicNs();
  rt.enabled = true;
  Event& init = scope.event();
  init.kind = EventKind::kInit;
  init.wall_start_ns = scope.start_ns() - rt.origin_ns;
  init.wall_end_ns = 0;
  init.value = thread_level;
  rt.Append(init);
  rt.last_exit_wall_ns = rt.origin_ns;
  if (rt.verbose) {
    std::fprintf(stderr, "pas2p-trace: rank %d: tracing to %s (counters: %s)\n", rt.rank,
                 stream.c_str(), md.counters.empty() ? md.counters_note.c_str() : "PAPI");
  }
}

// Marks the run incomplete in trace.json (any rank may call it: MPI_Abort).
void MarkIncomplete(Runtime& rt, const std::string& reason) {
  try {
    TraceMetadata md;
    try {
      md = ReadMetadata(rt.dir);
    } catch (...) {
      md = rt.metadata;
    }
    md.status = "incomplete";
    md.status_reason = reason;
    WriteMetadata(rt.dir, md);
  } catch (...) {
  }
}

}  // namespace

void OnInit(CallScope& scope, int rc, int*, char***) {
  int provided = MPI_THREAD_SINGLE;
  if (rc == MPI_SUCCESS) PMPI_Query_thread(&provided);
  Start(scope, rc, provided);
}

void OnInitThread(CallScope& scope, int rc, int*, char***, int, int* provided) {
  Start(scope, rc, provided != nullptr ? *provided : MPI_THREAD_SINGLE);
}

void PreFinalize(CallScope& scope) {
  Runtime& rt = GetRuntime();
  // Non-blocking collectives never completed (nor freed) still took place: recorded here,
  // in the order they started.
  std::vector<std::pair<std::uint64_t, MPI_Request>> started;
  for (const auto& [handle, c] : rt.collectives) started.emplace_back(c.order, handle);
  std::sort(started.begin(), started.end());
  rt.completion_start_ns = scope.start_ns();
  for (const auto& [order, handle] : started) rt.EmitCollective(handle);
  Event& e = scope.event();
  e.kind = EventKind::kFinalize;
  e.wall_start_ns = scope.start_ns() - rt.origin_ns;
  e.wall_end_ns = MonotonicNs() - rt.origin_ns;
  rt.Append(e);
  rt.writer.Close();
  const bool ok = rt.writer.ok() && !rt.failed;
  rt.enabled = false;
  rt.finished = true;
  // Every rank has closed its stream when rank 0 learns the outcome.
  int failed_local = ok ? 0 : 1;
  int failed_total = 0;
  int first_failed = ok ? rt.nprocs : rt.rank;
  int first_failed_min = rt.nprocs;
  PMPI_Allreduce(&failed_local, &failed_total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(&first_failed, &first_failed_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  std::vector<unsigned long long> untraced(static_cast<std::size_t>(kUntracedCount), 0);
  std::vector<unsigned long long> untraced_total(untraced.size(), 0);
  for (int i = 0; i < kUntracedCount && i < kMaxUntraced; ++i) untraced[i] = UntracedCounts()[i];
  if (!untraced.empty()) {
    PMPI_Reduce(untraced.data(), untraced_total.data(), kUntracedCount, MPI_UNSIGNED_LONG_LONG,
                MPI_SUM, 0, MPI_COMM_WORLD);
  }
  if (rt.rank == 0) {
    TraceMetadata md = rt.metadata;
    for (std::size_t i = 0; i < untraced_total.size(); ++i) {
      if (untraced_total[i] > 0) md.untraced_calls[kUntracedNames[i]] = untraced_total[i];
    }
    if (failed_total == 0) {
      md.status = "complete";
    } else {
      md.status = "incomplete";
      md.status_reason = std::to_string(failed_total) + " rank(s) could not write their " +
                         "stream completely (first: rank " + std::to_string(first_failed_min) + ")";
    }
    try {
      WriteMetadata(rt.dir, md);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "pas2p-trace: rank 0: cannot write %s/trace.json: %s\n", rt.dir.c_str(),
                   ex.what());
    }
  }
  if (!rt.writer.ok()) {
    std::fprintf(stderr, "pas2p-trace: rank %d: trace stream incomplete: %s\n", rt.rank,
                 rt.writer.error().c_str());
  }
}

void OnFinalize(CallScope&, int) {}

void PreAbort(CallScope& scope, MPI_Comm, int errorcode) {
  Runtime& rt = GetRuntime();
  Event& e = scope.event();
  e.kind = EventKind::kAbort;
  e.value = errorcode;
  e.wall_start_ns = scope.start_ns() - rt.origin_ns;
  e.wall_end_ns = e.wall_start_ns;
  rt.Append(e);
  // No footer: the run was cut here; readers hand out the prefix and say so.
  rt.writer.Flush();
  rt.enabled = false;
  rt.finished = true;
  MarkIncomplete(rt, "MPI_Abort(errorcode=" + std::to_string(errorcode) + ") called by rank " +
                         std::to_string(rt.rank));
  WriteMarker(rt.marker_path.c_str(), "abort", errorcode, rt.rank);
}

void OnAbort(CallScope&, int, MPI_Comm, int) {}

namespace {
// An application that exits without MPI_Finalize (exit(1) after an error) still leaves
// what it traced, as a cut stream.
__attribute__((destructor)) void FlushAtExit() {
  Runtime& rt = GetRuntime();
  if (!rt.enabled || !rt.writer.is_open()) return;
  rt.enabled = false;
  rt.writer.Flush();
  WriteMarker(rt.marker_path.c_str(), "exit-without-finalize", 0, rt.rank);
}
}  // namespace

}  // namespace pas2p::tracer
