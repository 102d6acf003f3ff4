// Traces datasets/apps/masterworker under a real mpirun and checks that the master's
// MPI_Waitany/MPI_Testany completions match its requests: every completed request was
// posted and completes once, MPI_ANY_SOURCE receives are recorded with the actual worker,
// and every task is answered exactly once (the traced messages agree with the app's
// deterministic task and result sizes).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "test_support.h"

namespace pas2p::testing {
namespace {

// The app's task and result sizes (masterworker.c), in bytes.
std::uint64_t TaskBytes(long t) { return 8 * (2 + 8 * (1 + (t * 7) % 13)); }
std::uint64_t ResultBytes(long t) { return 8 * (2 + 4 * (t % 5)); }
constexpr std::uint64_t kResultBufferBytes = 8 * (2 + 4 * 4);
constexpr int kTagTask = 1, kTagStop = 2, kTagResult = 3;

TEST(MasterWorkerTrace, WaitanyCompletionsMatchRequestsAndEveryTaskIsAnsweredOnce) {
  const int nprocs = 5, workers = nprocs - 1;
  const long ntasks = 37;
  TempDir tmp;
  auto traced =
      TraceApp("masterworker", nprocs, {"--size", std::to_string(ntasks), "--unit", "3000"},
               tmp.path() / "traces");
  ASSERT_FALSE(traced.trace_dir.empty());
  TraceDirectory trace(traced.trace_dir);
  ASSERT_EQ(trace.nprocs(), nprocs);
  const TraceData data = ReadTraceAsRecorded(trace);  // the posted counts too
  const auto mpi = MpiEvents(data);

  // --- Master: requests posted, completed, and what completed them.
  std::map<RequestId, const Event*> posted;  // irecv by request id
  std::set<RequestId> outstanding, done;
  std::map<int, std::vector<std::uint64_t>> result_bytes_from;  // worker -> sizes, in order
  std::map<int, int> tasks_to, stops_to;
  std::multiset<std::uint64_t> task_bytes_sent;
  int waitany = 0, testany = 0, testany_hits = 0;
  for (const Event& e : mpi[0]) {
    SCOPED_TRACE("rank 0: " + FormatEvent(e));
    switch (e.kind) {
      case EventKind::kIrecv:
        EXPECT_EQ(e.peer, kAnySource) << "posted as MPI_ANY_SOURCE";
        EXPECT_EQ(e.tag, kTagResult);
        EXPECT_EQ(e.bytes, kResultBufferBytes);
        EXPECT_TRUE(posted.emplace(e.request, &e).second) << "request id reused";
        outstanding.insert(e.request);
        break;
      case EventKind::kSend:
        ASSERT_GE(e.peer, 1);
        ASSERT_LT(e.peer, nprocs);
        if (e.tag == kTagTask) {
          ++tasks_to[e.peer];
          task_bytes_sent.insert(e.bytes);
        } else {
          EXPECT_EQ(e.tag, kTagStop);
          EXPECT_EQ(e.bytes, 0u);
          ++stops_to[e.peer];
        }
        break;
      case EventKind::kWaitany:
      case EventKind::kTestany: {
        const bool is_wait = e.kind == EventKind::kWaitany;
        (is_wait ? waitany : testany)++;
        // The requests passed are exactly the receives still outstanding (the app passes
        // MPI_REQUEST_NULL for finished slots, which the trace drops).
        EXPECT_EQ(std::set<RequestId>(e.requests.begin(), e.requests.end()), outstanding);
        EXPECT_EQ(e.requests.size(), outstanding.size());
        if (is_wait) {
          ASSERT_EQ(e.completed.size(), 1u) << "a waitany completes exactly one request";
        } else {
          ASSERT_LE(e.completed.size(), 1u);
          if (e.completed.empty()) break;  // a failed test: nothing completed
          ++testany_hits;
        }
        const Completion& c = e.completed[0];
        ASSERT_TRUE(posted.count(c.request)) << "request " << c.request << " was never posted";
        EXPECT_TRUE(outstanding.count(c.request)) << "request " << c.request << " completed twice";
        EXPECT_TRUE(std::find(e.requests.begin(), e.requests.end(), c.request) != e.requests.end())
            << "completed a request that was not passed";
        EXPECT_GE(c.peer, 1) << "actual source must be a worker";
        EXPECT_LT(c.peer, nprocs) << "actual source must be a worker";
        EXPECT_EQ(c.tag, kTagResult);
        outstanding.erase(c.request);
        done.insert(c.request);
        result_bytes_from[c.peer].push_back(c.bytes);
        break;
      }
      default:
        break;
    }
  }
  EXPECT_TRUE(outstanding.empty()) << outstanding.size() << " receives never completed";
  EXPECT_EQ(done.size(), posted.size());
  EXPECT_EQ(static_cast<long>(done.size()), ntasks) << "one result per task";
  // The app polls with MPI_Testany before every 4th wait: ceil(T / 4) tests, and every
  // result is completed by exactly one waitany or successful testany.
  EXPECT_EQ(testany, (ntasks + 3) / 4);
  EXPECT_EQ(waitany + testany_hits, ntasks);
  // Tasks: the master sent every task once (its sizes are the app's cost formula) and
  // exactly one stop message to each worker.
  std::multiset<std::uint64_t> expected_task_bytes;
  for (long t = 0; t < ntasks; ++t) expected_task_bytes.insert(TaskBytes(t));
  EXPECT_EQ(task_bytes_sent, expected_task_bytes);
  for (int w = 1; w < nprocs; ++w) EXPECT_EQ(stops_to[w], 1) << "worker " << w;

  // --- Workers: what they received and sent agrees with the master's view.
  std::multiset<std::uint64_t> all_result_bytes;
  long tasks_done = 0;
  for (int w = 1; w <= workers; ++w) {
    std::vector<std::uint64_t> task_sizes, result_sizes;
    int stops = 0;
    for (const Event& e : mpi[w]) {
      SCOPED_TRACE("rank " + std::to_string(w) + ": " + FormatEvent(e));
      if (e.kind == EventKind::kRecv) {
        EXPECT_EQ(e.peer, 0);
        // Posted with MPI_ANY_TAG: the trace holds the actual tag.
        ASSERT_TRUE(e.tag == kTagTask || e.tag == kTagStop) << "tag " << e.tag;
        if (e.tag == kTagStop) {
          ++stops;
          EXPECT_EQ(e.bytes, 0u) << "the stop message is empty";
        } else {
          EXPECT_TRUE(expected_task_bytes.count(e.bytes)) << "not a task size";
          task_sizes.push_back(e.bytes);
        }
      } else if (e.kind == EventKind::kSend) {
        EXPECT_EQ(e.peer, 0);
        EXPECT_EQ(e.tag, kTagResult);
        result_sizes.push_back(e.bytes);
        all_result_bytes.insert(e.bytes);
      }
    }
    EXPECT_EQ(stops, 1) << "worker " << w;
    EXPECT_EQ(static_cast<int>(task_sizes.size()), tasks_to[w]) << "worker " << w;
    EXPECT_EQ(result_sizes.size(), task_sizes.size()) << "worker " << w << " answers each task";
    // Messages from one worker are matched in order; the master saw the same sizes.
    EXPECT_EQ(result_bytes_from[w], result_sizes) << "worker " << w;
    tasks_done += static_cast<long>(task_sizes.size());
  }
  EXPECT_EQ(tasks_done, ntasks);
  std::multiset<std::uint64_t> expected_result_bytes;
  for (long t = 0; t < ntasks; ++t) expected_result_bytes.insert(ResultBytes(t));
  EXPECT_EQ(all_result_bytes, expected_result_bytes);
  EXPECT_EQ(CheckPointToPointMatching(data), "");
}

}  // namespace
}  // namespace pas2p::testing
