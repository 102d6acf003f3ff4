#include "pas2p/core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace pas2p {
namespace {

// Small blocks come from the heap, 64-byte aligned; large ones are their own mapping,
// aligned to a huge page (2 MiB), whatever the kernel then grants. Both hold what is written.
TEST(HugePages, SmallAndLargeBlocksAreAlignedAndHoldTheirBytes) {
  for (const std::size_t bytes : {std::size_t{1}, std::size_t{4096}, kHugePagesFrom - 1,
                                  kHugePagesFrom, kHugePagesFrom + 12345, 3 * kHugePagesFrom}) {
    void* p = AllocateLarge(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    EXPECT_EQ(address % 64, 0u) << bytes;
    if (bytes >= kHugePagesFrom) {
      EXPECT_EQ(address % (std::size_t{2} << 20), 0u) << bytes;
    }
    auto* c = static_cast<unsigned char*>(p);
    std::memset(c, 0xa5, bytes);
    EXPECT_EQ(c[0], 0xa5);
    EXPECT_EQ(c[bytes - 1], 0xa5);
    FreeLarge(p, bytes);
  }
  FreeLarge(nullptr, kHugePagesFrom);  // like delete of a null pointer
}

// A large block given back is kept and handed out again for the same size (its pages are
// resident, its bytes whatever they were); another size gets a mapping of its own. What the
// cache keeps is bounded, and ReleaseLargeBlocks gives it all back.
TEST(HugePages, LargeBlocksGivenBackAreReusedForTheSameSize) {
  ReleaseLargeBlocks();
  ASSERT_EQ(LargeBlocksKept(), 0u);
  const std::size_t bytes = kHugePagesFrom + 1000;
  void* a = AllocateLarge(bytes);
  std::memset(a, 0x5a, bytes);
  FreeLarge(a, bytes);
  EXPECT_EQ(LargeBlocksKept(), std::size_t{6} << 20);  // whole huge pages
  void* other = AllocateLarge(2 * kHugePagesFrom);     // another size: not the kept block
  EXPECT_NE(other, a);
  void* b = AllocateLarge(bytes);  // rounded to the same huge pages: the kept block
  EXPECT_EQ(b, a);
  EXPECT_EQ(LargeBlocksKept(), 0u);
  EXPECT_EQ(static_cast<unsigned char*>(b)[bytes - 1], 0x5a);
  FreeLarge(b, bytes);
  FreeLarge(other, 2 * kHugePagesFrom);
  EXPECT_EQ(LargeBlocksKept(), (std::size_t{6} << 20) + (std::size_t{8} << 20));  // in huge pages
  ReleaseLargeBlocks();
  EXPECT_EQ(LargeBlocksKept(), 0u);
  // Small blocks come from the heap and are never kept.
  void* small = AllocateLarge(4096);
  FreeLarge(small, 4096);
  EXPECT_EQ(LargeBlocksKept(), 0u);
}

TEST(HugePages, TheCacheKeepsAtMostItsBoundDroppingTheOldestFirst) {
  ReleaseLargeBlocks();
  // Blocks of a quarter of the bound: the fifth given back drops the first.
  const std::size_t quarter = kLargeCacheBytes / 4;
  std::vector<void*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(AllocateLarge(quarter));
  for (void* p : blocks) FreeLarge(p, quarter);
  EXPECT_EQ(LargeBlocksKept(), kLargeCacheBytes);
  // A block larger than the bound is unmapped at once.
  void* huge = AllocateLarge(kLargeCacheBytes + 1);
  FreeLarge(huge, kLargeCacheBytes + 1);
  EXPECT_EQ(LargeBlocksKept(), kLargeCacheBytes);
  // The newest kept are handed out first; the first block was dropped.
  for (int i = 4; i >= 1; --i) {
    void* p = AllocateLarge(quarter);
    EXPECT_EQ(p, blocks[static_cast<std::size_t>(i)]) << i;
    blocks[static_cast<std::size_t>(i)] = p;
  }
  EXPECT_EQ(LargeBlocksKept(), 0u);
  for (int i = 1; i <= 4; ++i) FreeLarge(blocks[static_cast<std::size_t>(i)], quarter);
  ReleaseLargeBlocks();
}

}  // namespace
}  // namespace pas2p
