#include "pas2p/core/huge_pages.h"

#include <sanitizer/asan_interface.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

namespace pas2p {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t Mapping(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

// Mapped blocks given back and kept for the next request of the same size. A prediction
// runs many simulations of one count one after another (each phase alone, its steady
// occurrences, the interval ends); each allocates the same arrays of its ranks again, and a
// fresh mapping is cleared by the kernel page by page on first touch (18% of a profile of the
// bundled stencil's prediction at 262144 ranks, where the cache saves about 5% of the wall
// time; at a million ranks the engine's own memory stalls dominate and no gain shows). A kept
// block is reused as it is: its pages are resident already. At most kLargeCacheBytes are
// kept; the oldest block goes first. Under AddressSanitizer a kept block is poisoned until it
// is handed out again.
class LargeCache {
 public:
  void* Take(std::size_t size) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].size != size) continue;
      void* p = blocks_[i].p;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      kept_ -= size;
      ASAN_UNPOISON_MEMORY_REGION(p, size);
      return p;
    }
    return nullptr;
  }
  // Keeps the block (unmapping the oldest kept while more than the cache holds), or unmaps
  // it when it alone is more.
  void Give(void* p, std::size_t size) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    try {
      if (size > kLargeCacheBytes) throw std::bad_alloc();
      blocks_.push_back(Block{p, size});
    } catch (const std::bad_alloc&) {
      munmap(p, size);  // too large, or no room to remember it
      return;
    }
    kept_ += size;
    ASAN_POISON_MEMORY_REGION(p, size);  // a use after FreeLarge is still an error
    std::size_t drop = 0;
    for (; kept_ > kLargeCacheBytes; ++drop) {
      kept_ -= blocks_[drop].size;
      Unmap(blocks_[drop]);
    }
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  std::size_t Kept() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return kept_;
  }
  void Release() noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Block& b : blocks_) Unmap(b);
    blocks_.clear();
    kept_ = 0;
  }

 private:
  struct Block {
    void* p;
    std::size_t size;
  };
  static void Unmap(const Block& b) noexcept {
    ASAN_UNPOISON_MEMORY_REGION(b.p, b.size);
    munmap(b.p, b.size);
  }
  std::mutex mutex_;
  std::vector<Block> blocks_;  // oldest first
  std::size_t kept_ = 0;
};

LargeCache& Cache() {
  static LargeCache* cache = new LargeCache;  // never destroyed: blocks may be freed at exit
  return *cache;
}

}  // namespace

void* AllocateLarge(std::size_t bytes) {
  if (bytes < kHugePagesFrom) {
    void* p = ::operator new(bytes, std::align_val_t(64));
    return p;
  }
  if (bytes > SIZE_MAX - 2 * kHugePage) throw std::bad_alloc();
  const std::size_t size = Mapping(bytes);
  if (void* kept = Cache().Take(size)) return kept;
  // One huge page more than needed, then the unaligned head and tail are given back.
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto begin = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (begin + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > begin) munmap(raw, aligned - begin);
  const std::uintptr_t end = begin + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, size, MADV_HUGEPAGE);  // advice only: a refusal leaves ordinary pages
  return p;
}

void FreeLarge(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePagesFrom) {
    ::operator delete(p, std::align_val_t(64));
    return;
  }
  Cache().Give(p, Mapping(bytes));
}

std::size_t LargeBlocksKept() { return Cache().Kept(); }

void ReleaseLargeBlocks() noexcept { Cache().Release(); }

}  // namespace pas2p
