// `pas2p trace`: see trace_runner.h.
#include "pas2p/signature/trace_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

#include "pas2p/core/error.h"
#include "pas2p/core/trace.h"

namespace pas2p::signature {

namespace fs = std::filesystem;

namespace {

bool IsExecutableFile(const fs::path& path) {
  struct stat st;
  // Mode bits too: access(X_OK) succeeds for root on any file with one execute bit.
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0 && ::access(path.c_str(), X_OK) == 0;
}

// A program name as execvp would find it: paths as given, bare names on PATH.
fs::path Resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::path(program);
  const char* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env != nullptr ? path_env : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return {};
}

struct ChildResult {
  bool started = false;
  int status = 0;  // as from waitpid
  std::string output;
  std::string error;
};

// Runs argv (no shell); captures stdout if `capture`, else the child shares our stdout.
ChildResult RunChild(const std::vector<std::string>& argv, bool capture) {
  ChildResult result;
  int pipe_fds[2] = {-1, -1};
  if (capture && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::strerror(errno);
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    if (capture) {
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      const int devnull = ::open("/dev/null", O_WRONLY);
      if (devnull >= 0) ::dup2(devnull, STDERR_FILENO);
    }
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "pas2p trace: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  result.started = true;
  if (capture) {
    ::close(pipe_fds[1]);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0)
      result.output.append(buf, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
  }
  while (::waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
  }
  return result;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "mpirun exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "mpirun was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "mpirun ended abnormally";
}

// What the tracer's crash markers (rank-<N>.signal) say, e.g. "rank 3: signal 11
// (Segmentation fault); rank 1: MPI_Abort(errorcode=2)".
std::string DescribeMarkers(const fs::path& dir) {
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("rank-", 0) != 0 || entry.path().extension() != ".signal") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::getline(in, line);
    int value = 0, rank = -1;
    char what[64] = {0};
    if (std::sscanf(line.c_str(), "%63[^=]=%d rank=%d", what, &value, &rank) != 3) continue;
    std::string text;
    if (std::strcmp(what, "signal") == 0) {
      // SIGTERM on the other ranks is mpirun cleaning up after the first failure.
      text = "signal " + std::to_string(value) + " (" + strsignal(value) + ")";
    } else if (std::strcmp(what, "abort") == 0) {
      text = "MPI_Abort(errorcode=" + std::to_string(value) + ")";
    } else {
      text = "exited without MPI_Finalize";
    }
    found.emplace_back(rank, text);
  }
  std::sort(found.begin(), found.end());
  // Most informative first: crashes and aborts before the SIGTERMs of cleanup.
  std::stable_partition(found.begin(), found.end(),
                        [](const auto& f) { return f.second.rfind("signal 15 ", 0) != 0; });
  std::string out;
  std::size_t shown = 0;
  for (const auto& [rank, text] : found) {
    if (shown == 4) {
      out += "; ... (" + std::to_string(found.size() - shown) + " more ranks)";
      break;
    }
    out += (out.empty() ? "" : "; ") + ("rank " + std::to_string(rank) + ": " + text);
    ++shown;
  }
  return out;
}

std::uint64_t CountEvents(const fs::path& dir, int nprocs) {
  std::uint64_t events = 0;
  for (int rank = 0; rank < nprocs; ++rank) {
    try {
      RankStreamReader reader(RankStreamPath(dir, rank), rank);
      Event event;
      while (reader.Next(&event)) ++events;
    } catch (const std::exception&) {
      // A rank that wrote nothing: counted as zero; the failure is reported elsewhere.
    }
  }
  return events;
}

void MarkIncomplete(const fs::path& dir, const TraceRunOptions& options, int count,
                    const std::string& reason) {
  TraceMetadata md;
  try {
    md = ReadMetadata(dir);
  } catch (const std::exception&) {
    md.command = CommandForCount(options.command, count);
    md.application = fs::path(md.command.front()).filename().string();
    md.nprocs = count;
    md.source = "pas2p-tracer";
  }
  md.status = "incomplete";
  md.status_reason = reason;
  WriteMetadata(dir, md);
}

// Removes the files of an earlier trace in `dir` (only ours: a stale rank stream from a
// previous run would otherwise look like part of this one).
void ClearTraceFiles(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = name == kMetadataFileName ||
                      (name.rfind("rank-", 0) == 0 && (entry.path().extension() == ".p2t" ||
                                                       entry.path().extension() == ".signal"));
    if (ours) fs::remove(entry.path(), ec);
  }
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

std::vector<int> ParseCounts(const std::string& text) {
  std::vector<int> counts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno != 0 || value <= 0 || value > 1000000) {
      throw UserError("invalid process count '" + item + "' in '" + text +
                      "': expected positive integers separated by commas, e.g. -n 4,9,16");
    }
    if (std::find(counts.begin(), counts.end(), value) != counts.end()) {
      throw UserError("process count " + item + " is given twice in '" + text +
                      "': each count is traced once, into its own directory");
    }
    counts.push_back(static_cast<int>(value));
  }
  if (counts.empty()) throw UserError("no process count given: use e.g. -n 4,9,16");
  return counts;
}

std::vector<std::string> SplitArguments(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw UserError("unbalanced quote in launcher arguments: " + text);
  if (in_word) words.push_back(word);
  return words;
}

std::vector<std::string> CommandForCount(const std::vector<std::string>& command, int count) {
  static const std::string kPlaceholder = "{n}";
  const std::string value = std::to_string(count);
  std::vector<std::string> out = command;
  for (std::string& word : out) {
    for (std::size_t pos = word.find(kPlaceholder); pos != std::string::npos;
         pos = word.find(kPlaceholder, pos + value.size())) {
      word.replace(pos, kPlaceholder.size(), value);
    }
  }
  return out;
}

std::string ApplicationName(const std::vector<std::string>& command) {
  if (command.empty()) return "app";
  std::string name = fs::path(command.front()).filename().string();
  const auto is_delim = [](char c) { return c == '.' || c == '_' || c == '-'; };
  for (std::size_t pos = name.find("{n}"); pos != std::string::npos; pos = name.find("{n}")) {
    std::size_t begin = pos;
    std::size_t end = pos + 3;
    if (begin > 0 && is_delim(name[begin - 1])) {
      --begin;
    } else if (end < name.size() && is_delim(name[end])) {
      ++end;
    }
    name.erase(begin, end - begin);
  }
  return name.empty() ? "app" : name;
}

fs::path TraceDirFor(const fs::path& out_dir, const std::string& app, int count) {
  return out_dir / (app + "." + std::to_string(count));
}

fs::path FindTracer(const fs::path& executable) {
  if (const char* env = std::getenv("PAS2P_TRACER"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path exe = fs::canonical(executable, ec);
  if (ec) exe = executable;
  return exe.parent_path().parent_path() / "lib" / "libpas2p-trace.so";
}

fs::path CheckMpiProgram(const std::string& program) {
  const fs::path path = Resolve(program);
  if (path.empty()) {
    throw UserError("program '" + program + "' not found on PATH (give a path, e.g. ./" + program +
                    ")");
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) throw UserError("program " + path.string() + " does not exist");
  if (!IsExecutableFile(path)) {
    throw UserError("program " + path.string() + " is not an executable file");
  }
  // A script (a launcher wrapper that writes the count's input file, say) names its program
  // only when it runs: it is run as it is, and a run that writes no trace says so then.
  {
    std::ifstream head(path, std::ios::binary);
    char magic[2] = {0, 0};
    if (head.read(magic, 2) && magic[0] == '#' && magic[1] == '!') return path;
  }
  const ChildResult ldd = RunChild({"ldd", path.string()}, true);
  if (!ldd.started)
    throw UserError("cannot run ldd to inspect " + path.string() + ": " + ldd.error);
  if (ldd.output.find("libmpi") == std::string::npos) {
    throw UserError("program " + path.string() +
                    " is not an MPI program: its dynamic dependencies do not include libmpi "
                    "(the tracer needs a dynamically linked Open MPI program)");
  }
  return path;
}

bool TraceRunOptions::IsValid(std::string* error) const {
  try {
    if (counts.empty()) throw UserError("no process count given: use e.g. -n 4,9,16");
    for (int c : counts) {
      if (c <= 0) throw UserError("process counts must be positive, got " + std::to_string(c));
    }
    if (command.empty()) throw UserError("no program given: use pas2p trace -n 4 -- ./app args");
    // Each count's program ("{n}" replaced) must exist: say so before the first run.
    for (int c : counts) CheckMpiProgram(CommandForCount(command, c).front());
    if (Resolve(mpirun).empty() || !IsExecutableFile(Resolve(mpirun))) {
      throw UserError("MPI launcher '" + mpirun + "' not found (set --mpirun PATH)");
    }
    if (!IsExecutableFile(tracer) && !fs::is_regular_file(tracer)) {
      throw UserError("tracer library " + tracer.string() +
                      " not found (build target pas2p_trace, or set PAS2P_TRACER)");
    }
    const fs::path out = out_dir.empty() ? fs::path("traces") / ApplicationName(command) : out_dir;
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec || !fs::is_directory(out)) {
      throw UserError("cannot create output directory " + out.string() + ": " +
                      (ec ? ec.message() : "not a directory"));
    }
    const fs::path probe = out / ".pas2p-write-test";
    {
      std::ofstream test(probe);
      if (!test) throw UserError("output directory " + out.string() + " is not writable");
    }
    fs::remove(probe, ec);
  } catch (const UserError& e) {
    if (error != nullptr) *error = e.what();
    return false;
  }
  return true;
}

TraceRunSummary RunTraces(const TraceRunOptions& options) {
  std::string error;
  if (!options.IsValid(&error)) throw UserError(error);
  const std::string app = ApplicationName(options.command);
  const fs::path out = options.out_dir.empty() ? fs::path("traces") / app : options.out_dir;
  const fs::path tracer = fs::absolute(options.tracer);
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());

  TraceRunSummary summary;
  const std::size_t total = options.counts.size();
  for (std::size_t i = 0; i < total; ++i) {
    const int count = options.counts[i];
    TraceRunResult run;
    run.count = count;
    run.dir = fs::absolute(TraceDirFor(out, app, count));
    std::error_code ec;
    fs::create_directories(run.dir, ec);
    if (ec) throw UserError("cannot create " + run.dir.string() + ": " + ec.message());
    ClearTraceFiles(run.dir);

    std::vector<std::string> argv = {options.mpirun, "-np", std::to_string(count)};
    if (static_cast<unsigned>(count) > cores) argv.push_back("--oversubscribe");
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
    argv.insert(argv.end(), {"-x", "LD_PRELOAD=" + tracer.string(), "-x",
                             "PAS2P_TRACE_DIR=" + run.dir.string()});
    argv.insert(argv.end(), options.mpirun_args.begin(), options.mpirun_args.end());
    const std::vector<std::string> command = CommandForCount(options.command, count);
    argv.insert(argv.end(), command.begin(), command.end());

    if (options.progress != nullptr) {
      *options.progress << "[" << (i + 1) << "/" << total << "] tracing " << count << " ranks ... "
                        << std::flush;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const ChildResult child = RunChild(argv, false);
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    run.events = CountEvents(run.dir, count);

    std::string reason;
    std::string crowded;  // for the progress line: the run had more ranks than cores
    if (!child.started) {
      reason = "cannot start " + options.mpirun + ": " + child.error;
    } else if (!(WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0)) {
      reason = DescribeStatus(child.status);
      const std::string markers = DescribeMarkers(run.dir);
      if (!markers.empty()) reason += " (" + markers + ")";
    } else {
      try {
        const TraceMetadata md = ReadMetadata(run.dir);
        if (md.IsOversubscribed()) {
          crowded = "; " + md.DescribePlacement() +
                    ": more ranks than cores, compute measured under contention";
        }
        if (md.status != "complete") {
          reason = "the trace is '" + md.status + "'" +
                   (md.status_reason.empty() ? "" : ": " + md.status_reason);
        }
      } catch (const std::exception&) {
        reason = "the program ran but wrote no trace (did it call MPI_Init? is " + tracer.string() +
                 " loadable?)";
      }
    }
    run.ok = reason.empty();
    if (options.progress != nullptr) {
      *options.progress << FormatSeconds(run.wall_s) << ", " << run.events << " events"
                        << (run.ok ? "" : " (FAILED)") << crowded << "\n";
    }
    if (!run.ok) {
      run.failure = reason;
      try {
        MarkIncomplete(run.dir, options, count, reason);
      } catch (const std::exception&) {
      }
      summary.ok = false;
      summary.failure = "the application failed at " + std::to_string(count) + " ranks: " + reason +
                        "; kept what was traced in " + run.dir.string() + " (marked incomplete)";
      summary.runs.push_back(run);
      return summary;
    }
    summary.runs.push_back(run);
  }
  return summary;
}

}  // namespace pas2p::signature
