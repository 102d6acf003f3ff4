// The binary layout of one rank's event stream (private to core).
//
//   file   := header block* footer?
//   header := "P2PTRACE" u32 format_version i32 rank                       (16 bytes)
//   block  := u32 magic 'BLK1' u8 flags u8[3] 0 u32 raw_bytes u32 stored_bytes
//             u32 event_count u32 checksum(stored payload)  payload        (24 + stored)
//   flags  := bit 0 raw (payload not compressed), bit 1 footer (payload: u64 total events)
//
// A block's payload (versions 2 and 3) is two columns: varint(length of the structure column),
// the structure column, then the time column. Each record puts
//   u8 kind, varint field mask, then every non-time field that differs from Event{}
// in the structure column, and its times (wall_start as a delta from the previous record's
// wall_end in the block, the wall duration - for compute bursts minus the CPU time, which
// it nearly equals - and cpu_ns) in the time column. Keeping the repetitive structure apart
// from the noisy clock values is what lets zstd compress the structure to almost nothing.
// Version 3 (current) also codes request ids as deltas, so that the same communication
// pattern gives the same bytes in every iteration (ids grow by one per request): a record's
// `request` as its difference from the previous `request` in the block; the `requests`
// list of a completion as (previous request id - first), then (id before - id) for the
// others; each `completed` request as its position in `requests` + 1, or 0 followed by
// (previous request id - id) when it is not listed.
// Version 2 streams (request ids as is) and version 1 streams (one column, wall duration
// stored as is) are still read.
// Signed values are zig-zag varints; each block decodes on its own. Little-endian.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pas2p/core/event.h"

namespace pas2p::internal {

inline constexpr char kStreamMagic[8] = {'P', '2', 'P', 'T', 'R', 'A', 'C', 'E'};
inline constexpr std::size_t kStreamHeaderBytes = 16;
inline constexpr std::uint32_t kBlockMagic = 0x314B4C42;  // "BLK1"
inline constexpr std::size_t kBlockHeaderBytes = 24;
inline constexpr std::uint8_t kBlockRaw = 1;
inline constexpr std::uint8_t kBlockFooter = 2;
inline constexpr std::uint32_t kMaxBlockBytes = 64u << 20;  // sanity bound for readers

struct BlockHeader {
  std::uint32_t magic = kBlockMagic;
  std::uint8_t flags = 0;
  std::uint32_t raw_bytes = 0;
  std::uint32_t stored_bytes = 0;
  std::uint32_t event_count = 0;
  std::uint32_t checksum = 0;
  std::uint32_t reserved = 0;  // bytes 5..7, always 0 (checked: a header has no slack)
};

inline void PutU32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline std::uint32_t GetU32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

inline void EncodeBlockHeader(const BlockHeader& h, std::uint8_t out[kBlockHeaderBytes]) {
  std::memset(out, 0, kBlockHeaderBytes);
  PutU32(out, h.magic);
  out[4] = h.flags;
  PutU32(out + 8, h.raw_bytes);
  PutU32(out + 12, h.stored_bytes);
  PutU32(out + 16, h.event_count);
  PutU32(out + 20, h.checksum);
}
inline BlockHeader DecodeBlockHeader(const std::uint8_t in[kBlockHeaderBytes]) {
  BlockHeader h;
  h.magic = GetU32(in);
  h.flags = in[4];
  h.reserved = static_cast<std::uint32_t>(in[5]) | static_cast<std::uint32_t>(in[6]) << 8 |
               static_cast<std::uint32_t>(in[7]) << 16;
  h.raw_bytes = GetU32(in + 8);
  h.stored_bytes = GetU32(in + 12);
  h.event_count = GetU32(in + 16);
  h.checksum = GetU32(in + 20);
  return h;
}

// FNV-1a, 32 bit: cheap, allocation free (usable from a signal handler), and catches the
// random damage a checksum here is for.
inline constexpr std::uint32_t kChecksumSeed = 2166136261u;
inline std::uint32_t ChecksumContinue(std::uint32_t h, const std::uint8_t* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 16777619u;
  }
  return h;
}
inline std::uint32_t Checksum(const std::uint8_t* data, std::size_t size) {
  return ChecksumContinue(kChecksumSeed, data, size);
}

inline constexpr std::uint32_t kStreamVersionOneColumn = 1;
inline constexpr std::uint32_t kStreamVersionAbsoluteRequests = 2;
inline constexpr std::uint32_t kStreamVersion = 3;
inline constexpr std::uint32_t kStreamVersionOldest = kStreamVersionOneColumn;

// The delta bases inside one block (reset at every block start, so blocks decode alone).
struct CodecState {
  std::int64_t last_wall_ns = 0;   // wall_end_ns of the previous record
  std::uint64_t last_request = 0;  // the previous record's `request` field (version >= 3)
};

// Appends `event` in stream format `version` (2 or 3; 3 is what writers write, 2 stays for
// the tests of the reader's compatibility): structure fields to `structure`, clock values
// to `times`. Updates `state`.
void EncodeEvent(const Event& event, std::uint32_t version, CodecState* state,
                 std::vector<std::uint8_t>* structure, std::vector<std::uint8_t>* times);

// A cursor over one block's columns. For version 1 both columns are the same bytes.
struct BlockCursor {
  const std::uint8_t* structure = nullptr;
  std::size_t structure_size = 0;
  std::size_t structure_pos = 0;
  const std::uint8_t* times = nullptr;
  std::size_t times_size = 0;
  std::size_t times_pos = 0;
  std::uint32_t version = kStreamVersion;  // 1: one column, times inline, wall duration as is
};

// Decodes one record; false with `error` set if the record is malformed.
bool DecodeEvent(BlockCursor* cursor, CodecState* state, Event* event, std::string* error);

void PutVarint(std::uint64_t v, std::vector<std::uint8_t>* out);

}  // namespace pas2p::internal
