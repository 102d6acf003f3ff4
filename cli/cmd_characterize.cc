// pas2p characterize: run the pas2p-characterize MPI program under mpirun to measure a
// machine (ping-pong latency/bandwidth, protocol threshold, CPU rate) into a machine file.
// Wiring only: the measurement lives in simulator/characterize/, the fits in
// pas2p/simulator/machine_fit.h.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "command.h"
#include "pas2p/core/error.h"
#include "pas2p/simulator/machine_file.h"

namespace pas2p::cli {
namespace {

struct CharacterizeOptions {
  int np = 0;  // 0 = 2, or 3 with two hosts
  std::string hosts;
  std::string out = "machine.toml";
  std::string sizes;
  int reps = -1;
  int batches = -1;
  int retries = -1;
  std::string base;
  std::string mpirun = "mpirun";
  std::vector<std::string> mpi_args;
  bool dry_run = false;
};

// pas2p-characterize next to this executable, else $PAS2P_CHARACTERIZE, else PATH.
std::string FindCharacterizeProgram() {
  if (const char* env = std::getenv("PAS2P_CHARACTERIZE"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "pas2p-characterize";
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return "pas2p-characterize";
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::string> BuildCommand(const CharacterizeOptions& o) {
  const std::vector<std::string> hosts = Split(o.hosts, ',');
  if (hosts.size() > 2)
    throw UserError("--hosts " + o.hosts +
                    ": give one host (intra-node only) or two (intra- "
                    "and inter-node), got " +
                    std::to_string(hosts.size()));
  const int np = o.np > 0 ? o.np : (hosts.size() == 2 ? 3 : 2);
  if (np < 2) throw UserError("--np " + std::to_string(np) + ": the ping-pong needs 2 ranks");
  if (hosts.size() == 2 && np < 3)
    throw UserError("--np " + std::to_string(np) + " with two hosts: need 3 ranks (two on " +
                    hosts[0] + " for the intra-node ping-pong, one on " + hosts[1] + ")");
  std::vector<std::string> cmd = {o.mpirun};
  if (geteuid() == 0) cmd.push_back("--allow-run-as-root");
  cmd.push_back("--oversubscribe");
  cmd.insert(cmd.end(), {"-np", std::to_string(np)});
  if (hosts.size() == 1) cmd.insert(cmd.end(), {"--host", hosts[0] + ":" + std::to_string(np)});
  if (hosts.size() == 2)
    cmd.insert(cmd.end(),
               {"--host", hosts[0] + ":" + std::to_string(np - 1) + "," + hosts[1] + ":1"});
  cmd.insert(cmd.end(), o.mpi_args.begin(), o.mpi_args.end());
  cmd.push_back(FindCharacterizeProgram());
  // Absolute: rank 0 writes it, from mpirun's working directory (shared file systems).
  cmd.insert(cmd.end(), {"--out", std::filesystem::absolute(o.out).string()});
  if (!o.sizes.empty()) cmd.insert(cmd.end(), {"--sizes", o.sizes});
  if (o.reps >= 0) cmd.insert(cmd.end(), {"--reps", std::to_string(o.reps)});
  if (o.batches > 0) cmd.insert(cmd.end(), {"--batches", std::to_string(o.batches)});
  if (o.retries >= 0) cmd.insert(cmd.end(), {"--retries", std::to_string(o.retries)});
  if (!o.base.empty()) cmd.insert(cmd.end(), {"--base", o.base});
  return cmd;
}

void RunCharacterize(const CharacterizeOptions& o) {
  const std::vector<std::string> cmd = BuildCommand(o);
  std::string line;
  for (const auto& a : cmd) line += (line.empty() ? "" : " ") + a;
  if (o.dry_run) {
    std::printf("%s\n", line.c_str());
    return;
  }
  std::fprintf(stderr, "pas2p characterize: %s\n", line.c_str());
  std::fflush(nullptr);
  std::vector<char*> argv;
  for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw UserError(std::string("cannot start mpirun: ") + std::strerror(errno));
  if (pid == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "pas2p characterize: cannot run '%s': %s\n", argv[0],
                 std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw UserError(std::string("waitpid: ") + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw UserError("the measurement failed (" + o.mpirun + " " +
                    (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                       : std::string("was killed")) +
                    "); see its messages above");
  // Read the result back: a file that does not load is a bug worth reporting now.
  const sim::Machine m = sim::LoadMachineFile(o.out);
  std::printf(
      "machine '%s': intra-node L = %.3g s, B = %.4g B/s; inter-node L = %.3g s, B = "
      "%.4g B/s; eager threshold %llu B\n",
      m.name.c_str(), m.intra_latency_s, m.intra_bandwidth_Bps, m.inter_latency_s,
      m.inter_bandwidth_Bps, static_cast<unsigned long long>(m.eager_threshold_bytes));
}

void SetupCharacterize(CLI::App& root) {
  auto o = std::make_shared<CharacterizeOptions>();
  CLI::App* cmd =
      root.add_subcommand("characterize",
                          "Measure this machine (ping-pong L/B, protocol switch, CPU rate) into a "
                          "machine file");
  cmd->footer(
      "Runs the MPI program pas2p-characterize under mpirun. Rank 0 ping-pongs with a rank\n"
      "on its own node (intra-node parameters) and, with --hosts A,B, with a rank on the\n"
      "second host (inter-node parameters; 3 ranks: two on A, one on B). Every message size\n"
      "is timed as in Demaine's network evaluator: batches of round trips timed together,\n"
      "the median of the batch means kept (a size whose median batch is over 1.5x its\n"
      "fastest is measured again, --retries times). T = L + S/B is fitted by least squares\n"
      "on relative residuals, in two segments when the MPI library switches protocol (the\n"
      "split is kept only if it lowers the residual 4x; eager_threshold_bytes = the largest\n"
      "eager size), leaving out sizes still disturbed (at most 20%). The machine file gets\n"
      "the eager latency and the rendezvous bandwidth, cpu_ratio 1 and the measured\n"
      "flops_per_second; its comments list every measured point, the fit and its residuals.\n"
      "What is not measured (inter-node without a second host, buses, links, topology)\n"
      "comes from --base or pas2p's defaults. Run it on a quiet machine: other processes\n"
      "on the same cores show up as outliers. A default run takes a few seconds.\n"
      "Example: pas2p characterize --hosts node1,node2 --out cluster.toml");
  cmd->add_option("--np", o->np, "MPI ranks (default 2; 3 with two hosts)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--hosts", o->hosts, "A or A,B: host(s) to run on (mpirun --host)");
  cmd->add_option("-o,--out", o->out, "Machine file to write (default machine.toml)");
  cmd->add_option("--sizes", o->sizes,
                  "Message sizes: a power-of-two range 1:4M (default) or a list 1,64K,1M");
  cmd->add_option("--reps", o->reps, "Round trips per timed batch (default: ~1 ms batches)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--batches", o->batches, "Timed batches per size (default 15)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--retries", o->retries, "Extra measurements of a disturbed size (default 3)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--base", o->base,
                  "Machine file (TOML) supplying what is not measured (nodes, buses, ...)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--mpirun", o->mpirun, "mpirun to use (default mpirun)");
  cmd->add_option("--mpi-arg", o->mpi_args,
                  "Extra argument for mpirun (repeat), e.g. --mpi-arg=--mca --mpi-arg=btl "
                  "--mpi-arg=self,vader");
  cmd->add_flag("--dry-run", o->dry_run, "Print the mpirun command and exit");
  cmd->callback([o]() { RunCharacterize(*o); });
}

PAS2P_REGISTER_COMMAND(70, SetupCharacterize);

}  // namespace
}  // namespace pas2p::cli
