// Memory for large arrays that are touched in no order (a million ranks' state in a
// simulation): with 4 KiB pages nearly every access to them also misses the TLB. A block of
// at least kHugePagesFrom bytes is mapped on its own, 2 MiB-aligned, and advised as
// transparent huge pages; the kernel grants them where /sys/kernel/mm/transparent_hugepage/
// enabled is "madvise" or "always" (elsewhere the advice is ignored: ordinary pages, the
// same results). Smaller blocks come from the heap.
//
// A large block given back is kept (up to kLargeCacheBytes in all, the oldest dropped first)
// and handed out again for a request of the same size: successive simulations of one count
// then reuse resident pages instead of having the kernel clear new ones. A block handed out
// holds whatever it held before (like operator new, never zeroed).
#pragma once

#include <cstddef>

namespace pas2p {

inline constexpr std::size_t kHugePagesFrom = std::size_t{4} << 20;
inline constexpr std::size_t kLargeCacheBytes = std::size_t{2} << 30;

// `bytes` of memory aligned to at least 64 bytes; throws std::bad_alloc.
void* AllocateLarge(std::size_t bytes);
// Returns a block from AllocateLarge of the same `bytes`.
void FreeLarge(void* p, std::size_t bytes) noexcept;
// Bytes of large blocks given back and kept for reuse.
std::size_t LargeBlocksKept();
// Unmaps every kept block.
void ReleaseLargeBlocks() noexcept;

}  // namespace pas2p
