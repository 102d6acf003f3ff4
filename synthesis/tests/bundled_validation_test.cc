// The validation table of issue 5 over the bundled traces, as a guard: for every mini-app in
// datasets/traces, `pas2p validate` (train on all counts but the largest, predict it) and the
// held-out check (train on every bundled count, predict datasets/heldout/<app>/<app>.<N>) on
// the default machine. Each row asserts the targets that row meets today, so a change that
// loses one fails here; rows that do not meet a target yet say so in `kNotYet` (and the
// closing note of the issue gives the figures). bench/validate_table.sh prints the table.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/simulator/engine.h"
#include "pas2p/synthesis/inputs.h"
#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/predict.h"
#include "pas2p/synthesis/synthesize.h"

namespace pas2p::synthesis {
namespace {

namespace fs = std::filesystem;

struct Row {
  std::string app;
  bool held_out = false;
};

void PrintTo(const Row& row, std::ostream* os) {
  *os << row.app << (row.held_out ? " held-out" : " leave-largest-out");
}

std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  return info.param.app + (info.param.held_out ? "_heldout" : "_largest");
}

// Targets not met yet, as "<app>/<check>/<target>" (check: largest or heldout; target:
// peers, bytes). Everything else must meet peers 100% and bytes within 2%.
const std::set<std::string> kNotYet = {
    // Self-scheduled: which worker gets how many tasks turns on near-ties between workers;
    // the real trace replayed with its compute noise shuffled matches its own partners no
    // better (Validation::scheduled_match_floor, about 94% and 93% here).
    "masterworker/largest/peers",
    "masterworker/heldout/peers",
};

bool NotYet(const Row& row, const std::string& target) {
  return kNotYet.count(row.app + "/" + (row.held_out ? "heldout" : "largest") + "/" + target) > 0;
}

fs::path Datasets() { return fs::path(PAS2P_SOURCE_DIR) / "datasets"; }

std::vector<Row> Rows() {
  std::vector<Row> rows;
  std::vector<std::string> apps;
  if (fs::is_directory(Datasets() / "traces")) {
    for (const auto& e : fs::directory_iterator(Datasets() / "traces")) {
      if (e.is_directory()) apps.push_back(e.path().filename().string());
    }
  }
  std::sort(apps.begin(), apps.end());
  for (const auto& app : apps) {
    rows.push_back({app, false});
    if (fs::is_directory(Datasets() / "heldout" / app)) rows.push_back({app, true});
  }
  return rows;
}

class BundledValidation : public ::testing::TestWithParam<Row> {};

TEST_P(BundledValidation, MeetsTheTargetsItMet) {
  const Row& row = GetParam();
  const auto inputs = ExpandTraceArgs({(Datasets() / "traces" / row.app).string()});
  const auto sigs = LoadSignatures(inputs);
  std::string used;
  const sim::Machine machine = LoadMachineOrDefault("", &used);
  Validation v;
  auto run = [&] {
    if (row.held_out) {
      std::vector<fs::path> held;
      for (const auto& e : fs::directory_iterator(Datasets() / "heldout" / row.app)) {
        held.push_back(e.path());
      }
      ASSERT_EQ(held.size(), 1u) << "one held-out run per app";
      auto real = OpenTrace(held.front());
      v = ValidateAgainst(sigs, *real, machine);
    } else {
      std::size_t largest = 0;
      for (std::size_t i = 1; i < sigs.size(); ++i) {
        if (sigs[i].nprocs > sigs[largest].nprocs) largest = i;
      }
      auto real = OpenTrace(inputs[largest].path);
      v = Validate(sigs, *real, machine);
    }
  };
  if (NotYet(row, "runs")) {
    EXPECT_ANY_THROW(run()) << "now runs: take it out of kNotYet";
    return;
  }
  ASSERT_NO_FATAL_FAILURE(run());
  EXPECT_GT(v.real_bytes, 0u);
  if (!NotYet(row, "peers")) {
    EXPECT_EQ(v.pattern_match, 1.0) << "share of messages with the right peer";
  } else {
    EXPECT_LT(v.pattern_match, 1.0) << "now 100%: take it out of kNotYet";
  }
  if (!NotYet(row, "bytes")) {
    EXPECT_LE(v.bytes_error, 0.02)
        << "bytes: predicted " << v.predicted_bytes << ", real " << v.real_bytes;
  }
  // Time and compute are reported, not asserted: see bench/validate_table.sh.
  EXPECT_GT(v.predicted_time_s, 0);
  EXPECT_GT(v.real_simulated_time_s, 0);
}

INSTANTIATE_TEST_SUITE_P(Bundle, BundledValidation, ::testing::ValuesIn(Rows()), RowName);

// Far beyond the traced counts the compute stays the traced runs' kind: every bundled app
// splits a fixed problem, so the CPU of all ranks at 1024 may grow with the halos and stages
// that more ranks add, but not by the 25 and 29 times the largest traced run's that cg and
// transpose were predicted when a law fitted to a falling burst turned and grew back beyond
// the traced counts (regression::Options::no_turn_beyond).
TEST(BundledExtrapolation, TheComputeAt1024StaysWithinAFewTimesTheTracedRuns) {
  std::vector<std::string> apps;
  for (const Row& row : Rows()) {
    if (!row.held_out) apps.push_back(row.app);
  }
  ASSERT_FALSE(apps.empty());
  for (const std::string& app : apps) {
    SCOPED_TRACE(app);
    const auto inputs = ExpandTraceArgs({(Datasets() / "traces" / app).string()});
    const auto sigs = LoadSignatures(inputs);
    std::size_t largest = 0;
    for (std::size_t i = 1; i < sigs.size(); ++i) {
      if (sigs[i].nprocs > sigs[largest].nprocs) largest = i;
    }
    double traced_ns = 0;
    {
      auto real = OpenTrace(inputs[largest].path);
      for (int r = 0; r < sigs[largest].nprocs; ++r) {
        auto stream = real->OpenRank(r);
        Event e;
        while (stream->Next(&e)) {
          if (e.kind == EventKind::kCompute) traced_ns += static_cast<double>(e.cpu_ns);
        }
      }
    }
    const SynthesizedTrace at(BuildModel(sigs), 1024);
    double predicted_ns = 0;
    for (int r = 0; r < 1024; ++r) {
      auto stream = at.OpenRank(r);
      Event e;
      while (stream->Next(&e)) {
        if (e.kind == EventKind::kCompute) predicted_ns += static_cast<double>(e.cpu_ns);
      }
    }
    EXPECT_GT(predicted_ns, 0);
    EXPECT_LT(predicted_ns, 5 * traced_ns)
        << "CPU of all ranks: " << predicted_ns * 1e-9 << " s at 1024, " << traced_ns * 1e-9
        << " s at " << sigs[largest].nprocs;
  }
}

// A synthesized MPI_Sendrecv receives the message its partner's call sends: in every channel
// (source, destination, tag) the receive halves record the sizes the send halves sent, in
// order, as the tracer records a real run's (the bytes received). The receive half's fitted
// mean counts a mesh's open boundary as 0 and is below a face (halo3d at 49: 17.7 KB
// received of 29.3 KB sent), which in MPI would be a truncated receive.
TEST(BundledExtrapolation, ASendrecvReceivesWhatItsPartnerSends) {
  int checked = 0;
  for (const Row& row : Rows()) {
    if (!row.held_out) continue;
    SCOPED_TRACE(row.app);
    const auto sigs = LoadSignatures(ExpandTraceArgs({(Datasets() / "traces" / row.app).string()}));
    const AppModel model = BuildModel(sigs);
    const std::int64_t n = 49;
    if (!model.valid.IsValid(n)) continue;
    const SynthesizedTrace at(model, n);
    std::map<std::tuple<int, int, int>, std::vector<std::uint64_t>> sent, received;
    for (int r = 0; r < n; ++r) {
      auto stream = at.OpenRank(r);
      Event e;
      while (stream->Next(&e)) {
        if (e.kind != EventKind::kSendrecv) continue;
        if (e.peer >= 0) sent[{r, e.peer, e.tag}].push_back(e.bytes);
        if (e.recv_peer >= 0) received[{e.recv_peer, r, e.recv_tag}].push_back(e.recv_bytes);
        if (e.recv_peer == kProcNull) {
          EXPECT_EQ(e.recv_bytes, 0u) << "rank " << r;
        }
      }
    }
    EXPECT_EQ(sent.size(), received.size());
    for (const auto& [channel, sizes] : sent) {
      const auto it = received.find(channel);
      ASSERT_NE(it, received.end()) << "nothing received from rank " << std::get<0>(channel)
                                    << " by rank " << std::get<1>(channel);
      EXPECT_EQ(it->second, sizes) << "from rank " << std::get<0>(channel) << " to rank "
                                   << std::get<1>(channel) << ", tag " << std::get<2>(channel);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "no bundled application exchanges with MPI_Sendrecv";
}

// No synthesized receive is smaller than the message it gets (sim::SimResult::
// truncated_receives), at 49 and at 1024: the sizes of a send and of its receive are fitted
// apart, and a receive's law a few bytes under its send's is a truncated receive in MPI.
TEST(BundledExtrapolation, NoSynthesizedReceiveIsSmallerThanItsMessage) {
  std::string used;
  const sim::Machine machine = LoadMachineOrDefault("", &used);
  for (const Row& row : Rows()) {
    if (row.held_out) continue;
    SCOPED_TRACE(row.app);
    const AppModel model =
        BuildModel(LoadSignatures(ExpandTraceArgs({(Datasets() / "traces" / row.app).string()})));
    for (const std::int64_t n : {49, 1024}) {
      if (!model.valid.IsValid(n)) continue;
      const SynthesizedTrace at(model, n);
      const sim::SimResult r = sim::Simulate(at, machine);
      EXPECT_EQ(r.truncated_receives, 0u) << "at " << n << ": " << r.first_truncated_receive;
    }
  }
}

}  // namespace
}  // namespace pas2p::synthesis
