#include "test_util.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace pas2p::testing {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(PAS2P_BINARY_DIR) / "signature" / "test-output" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string Quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

static std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult Run(const std::string& command_line) {
  static int counter = 0;
  const fs::path base = fs::temp_directory_path() / ("pas2p-test-" + std::to_string(::getpid()) +
                                                     "-" + std::to_string(counter++));
  const std::string out = base.string() + ".out", err = base.string() + ".err";
  const int status =
      std::system((command_line + " > " + out + " 2> " + err + " < /dev/null").c_str());
  CommandResult result;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  result.out = Slurp(out);
  result.err = Slurp(err);
  fs::remove(out);
  fs::remove(err);
  return result;
}

std::string Program(const std::string& name) {
  return std::string(PAS2P_TEST_PROGRAMS) + "/" + name;
}

CommandResult RunMpi(int np, const std::string& program, const std::vector<std::string>& args,
                     const std::string& trace_dir) {
  std::string cmd =
      Quote(PAS2P_MPIEXEC) + " -np " + std::to_string(np) + " --oversubscribe --allow-run-as-root";
  if (!trace_dir.empty()) {
    cmd += " -x LD_PRELOAD=" + Quote(PAS2P_TRACER_PATH) + " -x PAS2P_TRACE_DIR=" + Quote(trace_dir);
  }
  cmd += " " + Quote(program);
  for (const auto& a : args) cmd += " " + Quote(a);
  return Run(cmd);
}

std::vector<Event> CallEvents(const std::vector<Event>& events) {
  std::vector<Event> out;
  for (const auto& e : events) {
    if (e.kind != EventKind::kCompute) out.push_back(e);
  }
  return out;
}

}  // namespace pas2p::testing
