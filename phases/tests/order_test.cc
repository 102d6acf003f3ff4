// The run's phase order (Signature::sequence): nested loops kept in order, counts that vary
// between executions, the JSON form and reading version 1 signatures.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pas2p/core/trace.h"
#include "pas2p/phases/analyze.h"
#include "pas2p/phases/signature.h"
#include "synthetic.h"

namespace pas2p::phases {
namespace {

using Item = SequenceItem;

// The phase of the largest weight, and among the others the one of weight `weight`.
int PhaseOfWeight(const Signature& sig, double weight, int other_than = -1) {
  for (const Phase& p : sig.phases) {
    if (p.weight == weight && p.id != other_than) return p.id;
  }
  return -1;
}

// The totals of the sequence are the phase weights (every rank runs the same program).
void ExpectTotalsAreWeights(const Signature& sig) {
  for (const auto& [id, total] : SequencePhaseTotals(sig.sequence)) {
    const Phase* p = sig.FindPhase(id);
    ASSERT_NE(p, nullptr) << "phase " << id;
    EXPECT_EQ(static_cast<double>(total), p->weight) << "phase " << id;
  }
  EXPECT_EQ(SequencePhaseTotals(sig.sequence).size(), sig.phases.size());
}

TEST(Order, HaloLoopWithAnAllreduceEveryTenIterations) {
  testing::StencilSpec spec;
  spec.px = 4;
  spec.py = 4;
  spec.iterations = 50;
  spec.allreduce_every = 10;
  testing::MemoryTrace trace(testing::MakeStencil(spec));
  const Signature sig = AnalyzeTrace(trace);
  const int halo = PhaseOfWeight(sig, 50);
  const int reduce = PhaseOfWeight(sig, 5);
  ASSERT_GE(halo, 0) << FormatSignatureTable(sig);
  ASSERT_GE(reduce, 0) << FormatSignatureTable(sig);
  ASSERT_EQ(sig.phases.size(), 4u) << FormatSignatureTable(sig);
  const int first = sig.phases.front().id;
  const int last = sig.phases.back().id;
  const Sequence expected = {Item::Run(first, 1),
                             Item::Loop(5, {Item::Run(halo, 50), Item::Run(reduce, 5)}),
                             Item::Run(last, 1)};
  EXPECT_EQ(sig.sequence, expected) << FormatSequence(sig.sequence);
  EXPECT_EQ(FormatSequence(sig.sequence), std::to_string(first) + ", (" + std::to_string(halo) +
                                              " x10, " + std::to_string(reduce) + ") x5, " +
                                              std::to_string(last));
  ExpectTotalsAreWeights(sig);
  // Occurrence by occurrence: ten halo exchanges, then the reduction, five times.
  std::vector<int> run = {first};
  for (int o = 0; o < 5; ++o) {
    for (int i = 0; i < 10; ++i) run.push_back(halo);
    run.push_back(reduce);
  }
  run.push_back(last);
  EXPECT_EQ(ExpandSequence(sig.sequence, 1000), run);
  EXPECT_NE(FormatSignatureTable(sig).find("run (phase ids in order, (...) xN a loop): " +
                                           FormatSequence(sig.sequence)),
            std::string::npos);
}

TEST(Order, ForwardAndBackwardSweepsAlternate) {
  testing::MemoryTrace trace(testing::MakeSweeps(4, std::vector<int>(8, 8)));
  const Signature sig = AnalyzeTrace(trace);
  ASSERT_EQ(sig.phases.size(), 4u) << FormatSignatureTable(sig);
  const int forward = PhaseOfWeight(sig, 64);
  const int backward = PhaseOfWeight(sig, 64, forward);
  ASSERT_GE(forward, 0) << FormatSignatureTable(sig);
  ASSERT_GE(backward, 0) << FormatSignatureTable(sig);
  const int first = sig.phases.front().id;
  const int last = sig.phases.back().id;
  const Sequence expected = {Item::Run(first, 1),
                             Item::Loop(8, {Item::Run(forward, 64), Item::Run(backward, 64)}),
                             Item::Run(last, 1)};
  EXPECT_EQ(sig.sequence, expected) << FormatSequence(sig.sequence);
  ExpectTotalsAreWeights(sig);
  const std::vector<int> run = ExpandSequence(sig.sequence, 1000);
  ASSERT_EQ(run.size(), 130u);
  for (int it = 0; it < 8; ++it) {
    for (int s = 0; s < 16; ++s) {
      EXPECT_EQ(run[1 + 16 * it + s], s < 8 ? forward : backward) << "iteration " << it;
    }
  }
}

TEST(Order, InnerCountsThatVaryAreKeptAsTotalsSpreadEvenly) {
  // 8, 9, 8, 9 stages: one outer loop whose inner loops run 34 times over 4 iterations.
  testing::MemoryTrace trace(testing::MakeSweeps(4, {8, 9, 8, 9}));
  const Signature sig = AnalyzeTrace(trace);
  const int forward = PhaseOfWeight(sig, 34);
  const int backward = PhaseOfWeight(sig, 34, forward);
  ASSERT_GE(forward, 0) << FormatSignatureTable(sig);
  ASSERT_GE(backward, 0) << FormatSignatureTable(sig);
  ExpectTotalsAreWeights(sig);
  std::vector<int> run = {sig.phases.front().id};
  for (int n : {8, 9, 8, 9}) {
    for (int s = 0; s < n; ++s) run.push_back(forward);
    for (int s = 0; s < n; ++s) run.push_back(backward);
  }
  run.push_back(sig.phases.back().id);
  EXPECT_EQ(ExpandSequence(sig.sequence, 1000), run) << FormatSequence(sig.sequence);
  EXPECT_NE(FormatSequence(sig.sequence).find("x8.5"), std::string::npos)
      << FormatSequence(sig.sequence);
}

TEST(Order, CountAtSpreadsTheTotalEvenlyInOrder) {
  std::vector<std::int64_t> counts;
  std::int64_t sum = 0;
  for (int k = 0; k < 4; ++k) {
    counts.push_back(SequenceCountAt(34, 4, k));
    sum += counts.back();
    EXPECT_EQ(SequenceFirstAt(34, 4, k + 1), sum);
  }
  EXPECT_EQ(counts, (std::vector<std::int64_t>{8, 9, 8, 9}));
  EXPECT_EQ(SequenceCountAt(7, 1, 0), 7);
  // No overflow for a million-iteration loop inside another.
  EXPECT_EQ(SequenceCountAt(std::int64_t{1000000} * 3000000, 3000000, 2999999), 1000000);
}

// An inner loop whose first execution ran another count than the later ones (a first
// stretch of steps before the first re-neighbouring, a loop cut short where the enclosing
// one starts): 3 stages, then 9, 9 and 9. Spread evenly, its 30 were 7, 8, 7, 8, and every
// later call was out of place; the first execution's count is now kept (SequenceItem::first).
TEST(Order, AFirstExecutionThatRanAnotherCountIsKept) {
  testing::MemoryTrace trace(testing::MakeSweeps(4, {3, 9, 9, 9}));
  const Signature sig = AnalyzeTrace(trace);
  const int forward = PhaseOfWeight(sig, 30);
  const int backward = PhaseOfWeight(sig, 30, forward);
  ASSERT_GE(forward, 0) << FormatSignatureTable(sig);
  ASSERT_GE(backward, 0) << FormatSignatureTable(sig);
  std::vector<int> run = {sig.phases.front().id};
  for (int n : {3, 9, 9, 9}) {
    for (int s = 0; s < n; ++s) run.push_back(forward);
    for (int s = 0; s < n; ++s) run.push_back(backward);
  }
  run.push_back(sig.phases.back().id);
  EXPECT_EQ(ExpandSequence(sig.sequence, 1000), run) << FormatSequence(sig.sequence);
  // It survives the signature file.
  EXPECT_EQ(SignatureFromJson(SignatureToJson(sig), "t").sequence, sig.sequence);
}

// A short inner loop whose first execution ran one more iteration than the others (LAMMPS's
// EAM run: one time step with an extra block of swaps, {3, 2, 2}): unrolled at the rounded
// mean (2 per execution) the first execution's third iteration was lost, and the signature
// held 73 calls fewer than the rank made. Its counts now vary, so it stays a loop.
TEST(Order, AShortLoopWhoseFirstExecutionRanMoreIsNotUnrolledShort) {
  const TraceData data = testing::MakeNested(4, {3, 2, 2});
  testing::MemoryTrace trace(data);
  const Signature sig = AnalyzeTrace(trace);
  for (int r = 0; r < 4; ++r) {
    const auto rank = static_cast<std::size_t>(r);
    double calls = 0;
    for (const Event& e : data.ranks[rank]) calls += e.kind != EventKind::kCompute;
    double held = 0;
    for (const Phase& p : sig.phases) {
      held += p.ranks[rank].weight * static_cast<double>(p.ranks[rank].events.size());
    }
    EXPECT_EQ(held, calls) << "rank " << r << "\n" << FormatSignatureTable(sig);
  }
  const int halo = PhaseOfWeight(sig, 7);
  ASSERT_GE(halo, 0) << FormatSignatureTable(sig);
  EXPECT_NE(FormatSequence(sig.sequence).find("x2.33 {3, 2, 2}"), std::string::npos)
      << FormatSequence(sig.sequence);
  ExpectTotalsAreWeights(sig);
}

TEST(Order, CountAtKeepsAFirstCountAndSpreadsTheRest) {
  std::vector<std::int64_t> counts;
  for (int k = 0; k < 4; ++k) counts.push_back(SequenceCountAt(30, 4, k, {3}));
  EXPECT_EQ(counts, (std::vector<std::int64_t>{3, 9, 9, 9}));
  EXPECT_EQ(SequenceFirstAt(30, 4, 4, {3}), 30);
  EXPECT_EQ(SequenceCountAt(19, 2, 0, {10}), 10);  // 10 then 9, where spreading gives 9 then 10
  EXPECT_EQ(SequenceCountAt(19, 2, 1, {10}), 9);
  using Counts = std::vector<std::int64_t>;
  EXPECT_EQ(SequenceCountsFor(30, 4, {3}), Counts{3});
  EXPECT_EQ(SequenceCountsFor(30, 4, {3, 9, 9, 9}), Counts{3});  // the rest is the spread
  EXPECT_EQ(SequenceCountsFor(34, 4, {8}), Counts{});  // what the even spread gives anyway
  EXPECT_EQ(SequenceCountsFor(34, 4, {8, 9, 8, 9}), Counts{});
  EXPECT_EQ(SequenceCountsFor(30, 4, {31}), Counts{});          // more than the total: not a count
  EXPECT_EQ(SequenceCountsFor(30, 4, {3, 9, 9, 8}), Counts{});  // every one, another sum
  EXPECT_EQ(SequenceCountsFor(30, 4, {3, 9, 9, 9, 0}), Counts{});  // more than executions
  EXPECT_EQ(SequenceCountsFor(30, 1, {3}), Counts{});
}

// Executions that differ among themselves, not only the first: the steps between two
// re-neighbourings of a molecular-dynamics code cut by the enclosing loop's iterations at
// other places (18, 1, 18, 1). The first count alone spreads the other 20 as 6, 7, 7, and
// every call after the second execution's was out of place.
TEST(Order, CountsThatDifferAmongTheLaterExecutionsAreKept) {
  using Counts = std::vector<std::int64_t>;
  EXPECT_EQ(SequenceCountsFor(38, 4, {18, 1, 18, 1}), (Counts{18, 1, 18}));
  std::vector<std::int64_t> counts;
  for (int k = 0; k < 4; ++k) counts.push_back(SequenceCountAt(38, 4, k, {18, 1, 18}));
  EXPECT_EQ(counts, (Counts{18, 1, 18, 1}));
  // A list cut short: the first ones kept, the rest spread evenly over the executions after.
  EXPECT_EQ(SequenceCountsFor(100, 10, {1, 2}), (Counts{1, 2}));
  EXPECT_EQ(SequenceCountAt(100, 10, 2, {1, 2}), 12);
  EXPECT_EQ(SequenceFirstAt(100, 10, 10, {1, 2}), 100);

  // Whatever the counts, the listed prefix reproduces every one of them through CountAt
  // (300 executions of irregular counts: the first 256 listed, the rest spread).
  std::uint64_t state = 12345;
  std::vector<std::int64_t> made;
  std::int64_t sum = 0;
  for (int k = 0; k < 300; ++k) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    made.push_back(static_cast<std::int64_t>((state >> 33) % 20));
    sum += made.back();
  }
  const Counts listed = SequenceCountsFor(sum, 300, made);
  EXPECT_EQ(listed.size(), SequenceItem::kMaxListedCounts);
  for (std::size_t k = 0; k < listed.size(); ++k) {
    EXPECT_EQ(SequenceCountAt(sum, 300, static_cast<std::int64_t>(k), listed), made[k]) << k;
  }
  EXPECT_EQ(SequenceFirstAt(sum, 300, 300, listed), sum);
  // Regular after a few odd ones: only those are listed.
  EXPECT_EQ(SequenceCountsFor(3 + 0 + 7 * 10, 12, {3, 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}),
            (Counts{3, 0}));

  testing::MemoryTrace trace(testing::MakeSweeps(4, {18, 2, 18, 2}));
  const Signature sig = AnalyzeTrace(trace);
  const int forward = PhaseOfWeight(sig, 40);
  const int backward = PhaseOfWeight(sig, 40, forward);
  ASSERT_GE(forward, 0) << FormatSignatureTable(sig);
  ASSERT_GE(backward, 0) << FormatSignatureTable(sig);
  std::vector<int> run = {sig.phases.front().id};
  for (int n : {18, 2, 18, 2}) {
    for (int s = 0; s < n; ++s) run.push_back(forward);
    for (int s = 0; s < n; ++s) run.push_back(backward);
  }
  run.push_back(sig.phases.back().id);
  EXPECT_EQ(ExpandSequence(sig.sequence, 1000), run) << FormatSequence(sig.sequence);
  EXPECT_NE(FormatSequence(sig.sequence).find("x10 {18, 2, 18, 2}"), std::string::npos)
      << FormatSequence(sig.sequence);
  EXPECT_EQ(SignatureFromJson(SignatureToJson(sig), "t").sequence, sig.sequence);
}

TEST(Order, SimplifySplicesFoldsAndJoins) {
  // A loop of one iteration per execution is its body; a loop around one evenly repeated
  // run is that run; adjacent runs of one phase and loops with the same body join.
  const Sequence raw = {
      Item::Loop(1, {Item::Run(0, 1)}),
      Item::Loop(3, {Item::Loop(6, {Item::Run(1, 6)})}),
      Item::Run(1, 2),
      Item::Loop(2, {Item::Run(2, 2), Item::Run(3, 2)}),
      Item::Loop(3, {Item::Run(2, 3), Item::Run(3, 3)}),
      Item::Loop(0, {Item::Run(4, 1)}),
      Item::Loop(2, {}),
  };
  const Sequence expected = {Item::Run(0, 1), Item::Run(1, 8),
                             Item::Loop(5, {Item::Run(2, 5), Item::Run(3, 5)})};
  EXPECT_EQ(SimplifySequence(raw), expected) << FormatSequence(SimplifySequence(raw));
  // Uneven counts are not joined (that would move iterations between executions).
  const Sequence uneven = {
      Item::Loop(2, {Item::Loop(3, {Item::Run(0, 3)}), Item::Run(1, 2), Item::Run(1, 3)})};
  const Sequence simple = SimplifySequence(uneven);
  EXPECT_EQ(ExpandSequence(simple, 100), ExpandSequence(uneven, 100)) << FormatSequence(simple);
}

TEST(Order, JsonRoundTripWithNestedAndUnevenCounts) {
  const Sequence seq = {
      Item::Run(0, 1),
      Item::Loop(4, {Item::Loop(34, {Item::Run(1, 34)}), Item::Run(2, 34), Item::Run(3, 4)}),
      Item::Run(4, 1)};
  const std::string text = SequenceToJsonText(seq);
  EXPECT_EQ(text, R"([[0,1],{"loop":4,"body":[{"loop":8,"total":34,"body":[[1,1]]},[2,8,34],)"
                  R"([3,1]]},[4,1]])");
  EXPECT_EQ(SequenceFromJsonText(text, "x.json"), seq);
  EXPECT_THROW(SequenceFromJsonText(R"([{"loop": 2}])", "x.json"), TraceError);
  EXPECT_THROW(SequenceFromJsonText(R"([[1, 2, 7]])", "x.json"), TraceError);
  // A first execution's count: kept, and one larger than the total refused.
  const Sequence first = {Item::Loop(4, {Item::Loop(30, {Item::Run(1, 30)})})};
  Sequence with_first = first;
  with_first.front().body.front().counts = {3};
  const std::string first_text = SequenceToJsonText(with_first);
  EXPECT_NE(first_text.find(R"("counts":[3])"), std::string::npos) << first_text;
  // Older files give one first count.
  EXPECT_EQ(
      SequenceFromJsonText(
          R"([{"loop": 4, "body": [{"loop": 7, "total": 30, "first": 3, "body": [[1, 1]]}]}])",
          "x.json"),
      with_first);
  EXPECT_EQ(SequenceFromJsonText(first_text, "x.json"), with_first);
  EXPECT_EQ(SequenceFromJsonText(SequenceToJsonText(first), "x.json"), first);
  // An even total whose first execution ran another count (18 then 2) keeps it in the file,
  // and is not simplified as if every execution made 10.
  Sequence eighteen = {Item::Loop(2, {Item::Run(0, 2), Item::Loop(20, {Item::Run(1, 20)})})};
  eighteen.front().body.back().counts = {18};
  EXPECT_EQ(SequenceFromJsonText(SequenceToJsonText(eighteen), "x.json"), eighteen);
  std::vector<int> expected = {0};
  expected.insert(expected.end(), 18, 1);
  expected.push_back(0);
  expected.insert(expected.end(), 2, 1);
  EXPECT_EQ(ExpandSequence(SimplifySequence(eighteen), 100), expected)
      << FormatSequence(SimplifySequence(eighteen));
  EXPECT_THROW(
      SequenceFromJsonText(R"([{"loop": 4, "body": [{"loop": 7, "total": 30, "first": 31, )"
                           R"("body": [[1, 1]]}]}])",
                           "x.json"),
      TraceError);
  EXPECT_THROW(SequenceFromJsonText(R"([{"loop": 1000000000000, "body": []}])", "x.json"),
               TraceError);
  try {
    SequenceFromJsonText(R"([[1, -2]])", "bad.json");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

// The shape names phases by first occurrence and leaves loops and counts out: two runs of
// one code at different counts (other ids, other loop counts) have one shape, and a run
// that merged two of the other's phases has another.
TEST(Order, TheShapeOfARunLeavesIdsAndCountsOut) {
  const Sequence a = {Item::Run(0, 1), Item::Run(7, 4),
                      Item::Loop(6, {Item::Run(3, 60), Item::Run(5, 18)}), Item::Run(9, 1)};
  const Sequence b = {Item::Run(0, 1), Item::Run(2, 4),
                      Item::Loop(9, {Item::Run(1, 90), Item::Run(4, 27)}), Item::Run(3, 1)};
  const Sequence merged = {Item::Run(0, 1), Item::Run(2, 4),
                           Item::Loop(9, {Item::Run(1, 90), Item::Run(2, 27)}), Item::Run(3, 1)};
  EXPECT_EQ(SequenceShape(a), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(SequenceShape(a), SequenceShape(b));
  EXPECT_EQ(SequenceShape(merged), (std::vector<int>{0, 1, 2, 1, 3}));
}

TEST(Order, SignatureVersionOneWithAFlatSequenceStillReads) {
  testing::MemoryTrace trace(testing::MakeNested(4, 5, 10));
  const Signature sig = AnalyzeTrace(trace);
  std::string json = SignatureToJson(sig);
  ASSERT_NE(json.find("\"version\": 2"), std::string::npos);
  const std::size_t at = json.find("\"sequence\"");
  const std::size_t end = json.find("\"phases\"");
  ASSERT_NE(at, std::string::npos);
  // Version 1: the same file with a flat run-length sequence.
  std::string v1 =
      json.substr(0, at) + "\"sequence\": [[0, 1], [1, 50], [2, 5], [3, 1]],\n " + json.substr(end);
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  const Signature old = SignatureFromJson(v1, "old.json");
  const Sequence flat = {Item::Run(0, 1), Item::Run(1, 50), Item::Run(2, 5), Item::Run(3, 1)};
  EXPECT_EQ(old.sequence, flat);
  EXPECT_EQ(old.phases, sig.phases);
  std::string v3 = json;
  v3.replace(v3.find("\"version\": 2"), 12, "\"version\": 3");
  EXPECT_THROW(SignatureFromJson(v3, "new.json"), TraceError);
}

TEST(Order, NestedLoopsOfTheSyntheticNestedProgram) {
  testing::MemoryTrace trace(testing::MakeNested(4, 5, 10));
  const Signature sig = AnalyzeTrace(trace);
  const int halo = PhaseOfWeight(sig, 50);
  const int reduce = PhaseOfWeight(sig, 5);
  ASSERT_GE(halo, 0) << FormatSignatureTable(sig);
  ASSERT_GE(reduce, 0) << FormatSignatureTable(sig);
  bool found = false;
  for (const Item& item : sig.sequence) {
    found = found || item == Item::Loop(5, {Item::Run(halo, 50), Item::Run(reduce, 5)});
  }
  EXPECT_TRUE(found) << FormatSequence(sig.sequence);
  ExpectTotalsAreWeights(sig);
}

}  // namespace
}  // namespace pas2p::phases
