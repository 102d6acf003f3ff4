// The run's phase order in the model and in the synthesized trace: nested loops replayed in
// order at the target count, loop counts scaled by the rule of synthesize.h, the model's
// JSON (version 2, and version 1's flat sequence).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pas2p/synthesis/model.h"
#include "pas2p/synthesis/synthesize.h"
#include "test_traces.h"

namespace pas2p::synthesis {
namespace {

using Item = phases::SequenceItem;

// The modelled phase whose slots include a call of `kind` (-1: none).
int PhaseWith(const AppModel& m, EventKind kind) {
  for (const auto& p : m.phases) {
    for (const auto& s : p.slots) {
      if (s.kind == kind) return p.index;
    }
  }
  return -1;
}

// The loop of the sequence (the first one at the top level).
const Item* TopLoop(const phases::Sequence& seq) {
  for (const Item& item : seq) {
    if (item.is_loop()) return &item;
  }
  return nullptr;
}

TEST(SynthesisOrder, AllreduceEveryTenHaloIterationsAtTheTarget) {
  testing::AppParams params;  // 40 iterations, an allreduce every 10
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(testing::TorusStencil(n, params)));
  const AppModel m = BuildModel(sigs);
  const int halo = PhaseWith(m, EventKind::kWaitall);
  const int reduce = PhaseWith(m, EventKind::kAllreduce);
  ASSERT_GE(halo, 0);
  ASSERT_GE(reduce, 0);
  ASSERT_NE(halo, reduce);
  const Item* loop = TopLoop(m.sequence);
  ASSERT_NE(loop, nullptr) << phases::FormatSequence(m.sequence);
  EXPECT_EQ(*loop, Item::Loop(4, {Item::Run(halo, 40), Item::Run(reduce, 4)}))
      << phases::FormatSequence(m.sequence);

  SynthesizedTrace trace(m, 49);
  EXPECT_EQ(phases::FormatSequence(trace.sequence()), phases::FormatSequence(m.sequence));
  for (int r : {0, 24, 48}) {
    auto src = trace.OpenRank(r);
    Event e;
    std::vector<int> halos_between;  // halo exchanges before each allreduce
    int halos = 0;
    std::uint64_t events = 0;
    while (src->Next(&e)) {
      ++events;
      if (e.kind == EventKind::kWaitall) ++halos;
      if (e.kind == EventKind::kAllreduce) {
        halos_between.push_back(halos);
        halos = 0;
      }
    }
    // Ten halo exchanges before each of the loop's 4 allreduces, then the shutdown's one.
    EXPECT_EQ(halos_between, (std::vector<int>{10, 10, 10, 10, 0})) << "rank " << r;
    EXPECT_LE(events, trace.MaxEventsPerRank()) << "rank " << r;
  }
}

TEST(SynthesisOrder, ForwardAndBackwardSweepsAlternateAtTheTarget) {
  testing::AppParams params;
  params.iterations = 6;
  params.stages = 4;
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25}) sigs.push_back(testing::Analyze(testing::MeshSweeps(n, params)));
  const AppModel m = BuildModel(sigs);
  const Item* loop = TopLoop(m.sequence);
  ASSERT_NE(loop, nullptr) << phases::FormatSequence(m.sequence);
  ASSERT_EQ(loop->total, 6) << phases::FormatSequence(m.sequence);
  ASSERT_EQ(loop->body.size(), 2u) << phases::FormatSequence(m.sequence);
  EXPECT_EQ(loop->body[0].total, 24) << phases::FormatSequence(m.sequence);
  EXPECT_EQ(loop->body[1].total, 24) << phases::FormatSequence(m.sequence);

  // At 36 (6 x 6), the north-west corner sends in the forward sweeps (tag 1) and receives
  // in the backward ones (tag 2): 4 stages x 2 neighbours each way, 6 times.
  SynthesizedTrace trace(m, 36);
  auto src = trace.OpenRank(0);
  Event e;
  std::string tags;
  std::uint64_t events = 0;
  while (src->Next(&e)) {
    ++events;
    if (e.kind == EventKind::kSend) tags += 's';
    if (e.kind == EventKind::kRecv) tags += 'r';
  }
  std::string want;
  for (int it = 0; it < 6; ++it) want += std::string(8, 's') + std::string(8, 'r');
  EXPECT_EQ(tags, want);
  EXPECT_LE(events, trace.MaxEventsPerRank());
}

TEST(SynthesisOrder, LoopCountScalesWhenEveryPhaseInItScalesAlike) {
  // 10 sqrt(P) iterations with an allreduce every 10: both weights grow as sqrt(P), so at 36
  // the outer loop runs 6 times and keeps 10 halo exchanges per allreduce.
  std::vector<phases::Signature> sigs;
  for (int n : {4, 9, 16, 25}) {
    testing::AppParams params;
    params.iterations = 10 * static_cast<int>(std::lround(std::sqrt(n)));
    sigs.push_back(testing::Analyze(testing::TorusStencil(n, params)));
  }
  const AppModel m = BuildModel(sigs);
  const int halo = PhaseWith(m, EventKind::kWaitall);
  const int reduce = PhaseWith(m, EventKind::kAllreduce);
  ASSERT_GE(halo, 0);
  ASSERT_GE(reduce, 0);
  ASSERT_NEAR(SynthesizedTrace(m, 36).PhaseWeight(halo), 60, 0.01);
  ASSERT_NEAR(SynthesizedTrace(m, 36).PhaseWeight(reduce), 6, 0.01);
  SynthesizedTrace trace(m, 36);
  const Item* loop = TopLoop(trace.sequence());
  ASSERT_NE(loop, nullptr) << phases::FormatSequence(trace.sequence());
  EXPECT_EQ(*loop, Item::Loop(6, {Item::Run(halo, 60), Item::Run(reduce, 6)}))
      << phases::FormatSequence(trace.sequence());
}

TEST(SynthesisOrder, ModelJsonKeepsTheNestedOrderAndReadsVersionOne) {
  std::vector<phases::Signature> sigs;
  for (int n : {9, 16, 25, 36}) sigs.push_back(testing::Analyze(testing::TorusStencil(n)));
  const AppModel m = BuildModel(sigs);
  const std::string text = ModelToJson(m);
  EXPECT_NE(text.find("\"version\": 12"), std::string::npos);
  const AppModel back = ModelFromJson(text, "m.json");
  EXPECT_EQ(back.sequence, m.sequence);
  // Version 1: the same model with a flat run-length sequence.
  const std::vector<std::pair<int, std::int64_t>> totals = phases::SequencePhaseTotals(m.sequence);
  std::string flat = "[";
  for (const auto& [ph, reps] : totals) {
    flat +=
        (flat.size() > 1 ? ", [" : "[") + std::to_string(ph) + ", " + std::to_string(reps) + "]";
  }
  flat += "]";
  std::string v1 = text;
  const std::size_t at = v1.find("\"sequence\": ");
  ASSERT_NE(at, std::string::npos);
  std::size_t end = at + 12;
  int depth = 0;
  do {
    if (v1[end] == '[') ++depth;
    if (v1[end] == ']') --depth;
    ++end;
  } while (depth > 0);
  v1.replace(at + 12, end - at - 12, flat);
  v1.replace(v1.find("\"version\": 12"), 13, "\"version\": 1");
  const AppModel old = ModelFromJson(v1, "old.json");
  EXPECT_EQ(phases::SequencePhaseTotals(old.sequence), totals);
  EXPECT_EQ(TopLoop(old.sequence), nullptr);
  // A file newer than this build reads is refused, not read in part.
  std::string v13 = text;
  v13.replace(v13.find("\"version\": 12"), 13, "\"version\": 13");
  try {
    ModelFromJson(v13, "new.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("new.json: a model file of version 13, newer than"),
              std::string::npos)
        << e.what();
  }
  // A sequence that names a phase the model does not have is an error naming the file.
  std::string bad = text;
  bad.replace(at + 12, end - at - 12, "[[99, 1]]");
  try {
    ModelFromJson(bad, "bad.json");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pas2p::synthesis
