#include "pas2p/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pas2p {
namespace {

// Every item runs once, and its value lands at its own place, whatever the threads.
TEST(RunInParallel, EachItemRunsOnceAndItsValueIsAtItsPlace) {
  for (const int threads : {1, 2, 3, 8}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{57}}) {
      std::vector<std::atomic<int>> runs(n);
      auto out = RunInParallel<std::string>(n, threads, [&](std::size_t i) {
        ++runs[i];
        return "item " + std::to_string(i);
      });
      ASSERT_EQ(out.size(), n);
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(runs[i].load(), 1) << threads << " threads, item " << i;
        EXPECT_EQ(out[i].Get(), "item " + std::to_string(i));
      }
    }
  }
}

// What an item throws is kept for it alone: the others still give their values, and Get
// rethrows it where the caller takes that item, so a caller going in order stops at the
// first failure as it would have without threads.
TEST(RunInParallel, WhatAnItemThrowsIsRethrownWhereItIsTaken) {
  auto out = RunInParallel<int>(6, 2, [](std::size_t i) -> int {
    if (i == 2 || i == 4) throw std::runtime_error("item " + std::to_string(i) + " failed");
    return static_cast<int>(10 * i);
  });
  EXPECT_EQ(out[0].Get(), 0);
  EXPECT_EQ(out[1].Get(), 10);
  try {
    out[2].Get();
    FAIL() << "item 2 should rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 2 failed");
  }
  EXPECT_EQ(out[3].Get(), 30);
  EXPECT_THROW(out[4].Get(), std::runtime_error);
  EXPECT_EQ(out[5].Get(), 50);
}

// With more than one thread the items do run at once: two items that each wait for the
// other to start both finish.
TEST(RunInParallel, ItemsRunAtOnceOnSeveralThreads) {
  std::atomic<int> started{0};
  auto out = RunInParallel<bool>(2, 2, [&](std::size_t) {
    ++started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (started.load() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    return started.load() == 2;
  });
  EXPECT_TRUE(out[0].Get());
  EXPECT_TRUE(out[1].Get());
}

TEST(RunInParallel, DefaultThreadsAreTheHardwareThreadsUpToFour) {
  const int threads = DefaultThreads();
  EXPECT_GE(threads, 1);
  EXPECT_LE(threads, 4);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_EQ(threads, static_cast<int>(std::min(std::thread::hardware_concurrency(), 4u)));
  }
}

}  // namespace
}  // namespace pas2p
