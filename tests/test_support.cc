#include "test_support.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace pas2p::testing {

namespace fs = std::filesystem;

RunResult RunCommand(const std::vector<std::string>& argv, int timeout_s,
                     const std::vector<std::string>& extra_env) {
  RunResult result;
  int out_pipe[2], err_pipe[2];
  if (argv.empty() || pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    result.err = "cannot start: " + std::string(std::strerror(errno));
    return result;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // Own process group, so a timeout kills mpirun and everything it started.
    setpgid(0, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    for (const auto& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool timed_out = false;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[65536];
        const ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          sinks[i]->append(buf, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        }
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) {
    result.exit_code = 128 + SIGKILL;
    result.err += "\n[test harness: killed after " + std::to_string(timeout_s) + " s]";
  } else if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

TempDir::TempDir() {
  std::string templ = (fs::temp_directory_path() / "pas2p-test-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << templ << "): " << std::strerror(errno);
  }
  path_ = templ;
}

TempDir::~TempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info != nullptr && info->result()->Failed()) {
    std::fprintf(stderr, "keeping %s for inspection\n", path_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path SourceDir() { return PAS2P_SOURCE_DIR; }
fs::path BinaryDir() { return PAS2P_BINARY_DIR; }

fs::path Binary(const std::string& name) {
  const fs::path path = BinaryDir() / "bin" / name;
  EXPECT_TRUE(fs::exists(path)) << path << " is not built (cmake --build <build> --target " << name
                                << ")";
  return path;
}

std::vector<std::string> MpirunPrefix(int nprocs) {
  std::vector<std::string> cmd = {"mpirun", "--oversubscribe"};
  if (geteuid() == 0) cmd.push_back("--allow-run-as-root");
  cmd.insert(cmd.end(), {"-np", std::to_string(nprocs)});
  return cmd;
}

TracedRun TraceApp(const std::string& app, int nprocs, const std::vector<std::string>& args,
                   const fs::path& out_dir) {
  TracedRun traced;
  std::vector<std::string> cmd = {Binary("pas2p").string(),
                                  "trace",
                                  "-n",
                                  std::to_string(nprocs),
                                  "--out",
                                  out_dir.string(),
                                  "--",
                                  Binary(app).string()};
  cmd.insert(cmd.end(), args.begin(), args.end());
  traced.run = RunCommand(cmd);
  std::string joined;
  for (const auto& c : cmd) joined += c + " ";
  EXPECT_EQ(traced.run.exit_code, 0) << joined << "\nstdout:\n"
                                     << traced.run.out << "\nstderr:\n"
                                     << traced.run.err;
  // The trace directory is the one directory below out_dir holding trace metadata.
  std::vector<fs::path> found;
  if (fs::is_directory(out_dir)) {
    for (const auto& entry : fs::recursive_directory_iterator(out_dir)) {
      if (entry.is_regular_file() && entry.path().filename() == kMetadataFileName) {
        found.push_back(entry.path().parent_path());
      }
    }
  }
  EXPECT_EQ(found.size(), 1u) << joined << ": expected one trace directory under " << out_dir;
  if (found.size() == 1) traced.trace_dir = found[0];
  return traced;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string ChecksumLine(const std::string& app, const std::string& out) {
  for (const auto& line : Lines(out)) {
    if (line.rfind(app + " nprocs=", 0) == 0 && line.find(" checksum=") != std::string::npos) {
      return line;
    }
  }
  return "";
}

double ChecksumValue(const std::string& line) {
  const auto at = line.find("checksum=");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(line.c_str() + at + 9, nullptr);
}

std::vector<std::vector<Event>> MpiEvents(const TraceData& data) {
  std::vector<std::vector<Event>> ranks(data.ranks.size());
  for (std::size_t r = 0; r < data.ranks.size(); ++r) {
    for (const auto& e : data.ranks[r]) {
      if (e.kind != EventKind::kCompute) ranks[r].push_back(e);
    }
  }
  return ranks;
}

}  // namespace pas2p::testing

namespace pas2p::testing {

std::string CheckPointToPointMatching(const TraceData& data) {
  // (src, dst, tag, comm) -> sent byte sizes in order, received buffer sizes in order.
  using Key = std::tuple<int, int, int, CommId>;
  std::map<Key, std::vector<std::uint64_t>> sent, received;
  for (std::size_t r = 0; r < data.ranks.size(); ++r) {
    std::vector<Event> events = data.ranks[r];
    ResolveWildcards(&events);
    const int me = static_cast<int>(r);
    for (const auto& e : events) {
      switch (e.kind) {
        case EventKind::kSend:
        case EventKind::kIsend:
          if (e.peer >= 0) sent[{me, e.peer, e.tag, e.comm}].push_back(e.bytes);
          break;
        case EventKind::kRecv:
        case EventKind::kIrecv:
          if (e.peer >= 0) received[{e.peer, me, e.tag, e.comm}].push_back(e.bytes);
          break;
        case EventKind::kSendrecv:
          if (e.peer >= 0) sent[{me, e.peer, e.tag, e.comm}].push_back(e.bytes);
          if (e.recv_peer >= 0)
            received[{e.recv_peer, me, e.recv_tag, e.comm}].push_back(e.recv_bytes);
          break;
        default:
          break;
      }
    }
  }
  std::ostringstream problems;
  std::set<Key> keys;
  for (const auto& [k, v] : sent) keys.insert(k);
  for (const auto& [k, v] : received) keys.insert(k);
  for (const auto& key : keys) {
    const auto& s = sent[key];
    const auto& r = received[key];
    const auto& [src, dst, tag, comm] = key;
    if (s.size() != r.size()) {
      problems << src << " -> " << dst << " tag " << tag << " comm " << comm << ": " << s.size()
               << " sent, " << r.size() << " received\n";
      continue;
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (r[i] < s[i]) {
        problems << src << " -> " << dst << " tag " << tag << " message " << i << ": " << s[i]
                 << " bytes sent into a " << r[i] << "-byte receive\n";
        break;
      }
    }
  }
  return problems.str();
}

std::string DescribeSequences(const std::vector<Event>& got, const std::vector<Event>& want) {
  // A window around the first difference of kinds.
  const std::size_t n = std::max(got.size(), want.size());
  std::size_t first = 0;
  while (first < std::min(got.size(), want.size()) && got[first].kind == want[first].kind) {
    ++first;
  }
  std::ostringstream out;
  out << "first difference at event " << first << " (traced " << got.size() << " events, expected "
      << want.size() << ")\n  #     traced          expected\n";
  const std::size_t from = first > 5 ? first - 5 : 0;
  for (std::size_t i = from; i < n && i < from + 15; ++i) {
    const std::string g = i < got.size() ? std::string(EventKindName(got[i].kind)) : "-";
    const std::string w = i < want.size() ? std::string(EventKindName(want[i].kind)) : "-";
    out << "  " << i << "\t" << g << std::string(g.size() < 16 ? 16 - g.size() : 1, ' ') << w
        << (g != w ? "   <--" : "") << "\n";
  }
  return out.str();
}

}  // namespace pas2p::testing
