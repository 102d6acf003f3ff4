#include "pas2p/core/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace pas2p {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t Mapping(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

}  // namespace

void* AllocateLarge(std::size_t bytes) {
  if (bytes < kHugePagesFrom) {
    void* p = ::operator new(bytes, std::align_val_t(64));
    return p;
  }
  if (bytes > SIZE_MAX - 2 * kHugePage) throw std::bad_alloc();
  const std::size_t size = Mapping(bytes);
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
  munmap(p, Mapping(bytes));
}

}  // namespace pas2p
