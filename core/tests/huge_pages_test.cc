#include "pas2p/core/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

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

}  // namespace
}  // namespace pas2p
