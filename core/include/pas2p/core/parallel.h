// Independent work items run on a few threads, with their results (or what they threw)
// handed back in the items' order: a caller that then goes through them in order behaves as
// if it had run them one after another, except for the time taken.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

namespace pas2p {

// The threads to use by default: the machine's hardware threads, at most 4.
inline int DefaultThreads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 4u));
}

// One item's outcome: its value, or the exception it threw.
template <typename T>
struct Outcome {
  std::optional<T> value;
  std::exception_ptr error;
  // The value, or rethrows what the item threw.
  T& Get() {
    if (error) std::rethrow_exception(error);
    return *value;
  }
};

// Runs fn(0) .. fn(n - 1) on up to `threads` threads (this one among them); returns each
// item's outcome, in order. fn must be safe to call from several threads at once.
template <typename T, typename Fn>
std::vector<Outcome<T>> RunInParallel(std::size_t n, int threads, Fn fn) {
  std::vector<Outcome<T>> out(n);
  std::atomic<std::size_t> next{0};
  auto work = [&]() {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        out[i].value.emplace(fn(i));
      } catch (...) {
        out[i].error = std::current_exception();
      }
    }
  };
  const std::size_t helpers =
      n == 0 ? 0 : std::min<std::size_t>(n, static_cast<std::size_t>(std::max(threads, 1))) - 1;
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

}  // namespace pas2p
