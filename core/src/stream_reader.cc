#include <zstd.h>

#include <cstdio>
#include <cstring>

#include "pas2p/core/trace.h"
#include "stream_format.h"

namespace pas2p {

using namespace internal;

RankStreamReader::RankStreamReader(const std::filesystem::path& path, int expected_rank)
    : path_(path), rank_(expected_rank) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) {
    throw TraceError(path.string() + ": rank " + std::to_string(expected_rank) +
                     ": cannot open the event stream: " + std::strerror(errno));
  }
  std::uint8_t header[kStreamHeaderBytes];
  std::size_t n = std::fread(header, 1, sizeof header, file_);
  std::string where = path.string() + ": rank " + std::to_string(expected_rank) + ": ";
  if (n < sizeof header) {
    std::fclose(file_);
    file_ = nullptr;
    throw TraceError(where + "stream header truncated: expected " +
                     std::to_string(kStreamHeaderBytes) + " bytes, found " + std::to_string(n) +
                     " (the rank did not get past MPI_Init, or the file was cut)");
  }
  if (std::memcmp(header, kStreamMagic, 8) != 0) {
    std::fclose(file_);
    file_ = nullptr;
    throw TraceError(where + "not a pas2p event stream (bad magic at byte 0)");
  }
  std::uint32_t version = GetU32(header + 8);
  auto rank = static_cast<std::int32_t>(GetU32(header + 12));
  if (version < kStreamVersionOldest || version > kStreamVersion) {
    std::fclose(file_);
    file_ = nullptr;
    throw TraceError(where + "stream format version " + std::to_string(version) +
                     ", this pas2p reads versions " + std::to_string(kStreamVersionOldest) +
                     " to " + std::to_string(kStreamVersion) +
                     (version > kStreamVersion ? " (upgrade pas2p)" : ""));
  }
  version_ = version;
  if (rank != expected_rank) {
    std::fclose(file_);
    file_ = nullptr;
    throw TraceError(where + "stream header says rank " + std::to_string(rank) + ", expected " +
                     std::to_string(expected_rank));
  }
  offset_ = kStreamHeaderBytes;
}

RankStreamReader::~RankStreamReader() {
  if (file_) std::fclose(file_);
}

void RankStreamReader::Fail(StreamStatus status, const std::string& what) {
  status_ = status;
  message_ = path_.string() + ": rank " + std::to_string(rank_) + ": block " +
             std::to_string(block_index_) + " (byte offset " + std::to_string(offset_) +
             "): " + what + "; " + std::to_string(events_) + " events read before it" +
             (status == StreamStatus::kTruncated ? " (the run was cut or the file truncated)" : "");
}

bool RankStreamReader::LoadBlock() {
  std::uint8_t header[kBlockHeaderBytes];
  std::size_t n = std::fread(header, 1, sizeof header, file_);
  if (n == 0) {
    Fail(StreamStatus::kTruncated, "stream ends without its footer");
    return false;
  }
  if (n < sizeof header) {
    Fail(StreamStatus::kTruncated, "block header truncated: expected " +
                                       std::to_string(kBlockHeaderBytes) + " bytes, found " +
                                       std::to_string(n));
    return false;
  }
  BlockHeader h = DecodeBlockHeader(header);
  if (h.magic != kBlockMagic || h.reserved != 0 || (h.flags & ~(kBlockRaw | kBlockFooter))) {
    Fail(StreamStatus::kCorrupt, "bad block magic (expected a block header)");
    return false;
  }
  if (h.stored_bytes > kMaxBlockBytes || h.raw_bytes > kMaxBlockBytes) {
    Fail(StreamStatus::kCorrupt, "implausible block size " + std::to_string(h.stored_bytes));
    return false;
  }
  compressed_.resize(h.stored_bytes);
  n = std::fread(compressed_.data(), 1, h.stored_bytes, file_);
  if (n < h.stored_bytes) {
    Fail(StreamStatus::kTruncated, "block payload truncated: expected " +
                                       std::to_string(h.stored_bytes) + " bytes, found " +
                                       std::to_string(n));
    return false;
  }
  if (Checksum(compressed_.data(), h.stored_bytes) != h.checksum) {
    Fail(StreamStatus::kCorrupt, "checksum mismatch (the block is damaged)");
    return false;
  }
  if (h.flags & kBlockFooter) {
    if (h.stored_bytes != 8) {
      Fail(StreamStatus::kCorrupt,
           "footer of " + std::to_string(h.stored_bytes) + " bytes, expected 8");
      return false;
    }
    std::uint64_t total = GetU32(compressed_.data()) |
                          static_cast<std::uint64_t>(GetU32(compressed_.data() + 4)) << 32;
    if (total != events_) {
      Fail(StreamStatus::kCorrupt, "footer counts " + std::to_string(total) +
                                       " events but the blocks held " + std::to_string(events_));
      return false;
    }
    status_ = StreamStatus::kComplete;
    return false;
  }
  if (h.flags & kBlockRaw) {
    if (h.raw_bytes != h.stored_bytes) {
      Fail(StreamStatus::kCorrupt, "raw block with different raw and stored sizes");
      return false;
    }
    raw_.swap(compressed_);
  } else {
    raw_.resize(h.raw_bytes);
    std::size_t got = ZSTD_decompress(raw_.data(), raw_.size(), compressed_.data(), h.stored_bytes);
    if (ZSTD_isError(got) || got != h.raw_bytes) {
      Fail(StreamStatus::kCorrupt,
           std::string("cannot decompress: ") +
               (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size differs from the header"));
      return false;
    }
  }
  if (h.event_count == 0) {
    Fail(StreamStatus::kCorrupt, "block with no events");
    return false;
  }
  pos_ = time_pos_ = structure_begin_ = 0;
  structure_end_ = raw_.size();
  if (version_ != kStreamVersionOneColumn) {
    std::uint64_t length = 0;
    std::size_t i = 0;
    for (int shift = 0; i < raw_.size() && shift < 35; shift += 7) {
      length |= static_cast<std::uint64_t>(raw_[i] & 0x7f) << shift;
      if (!(raw_[i++] & 0x80)) break;
    }
    if (i == 0 || length > raw_.size() - i) {
      Fail(StreamStatus::kCorrupt, "bad column length in the block payload");
      return false;
    }
    structure_begin_ = i;
    structure_end_ = i + static_cast<std::size_t>(length);
    time_pos_ = structure_end_;
  }
  block_stored_bytes_ = h.stored_bytes;
  block_events_left_ = h.event_count;
  last_wall_ns_ = 0;
  last_request_ = 0;
  return true;
}

bool RankStreamReader::Next(Event* event) {
  if (status_ != StreamStatus::kReading) return false;
  while (block_events_left_ == 0) {
    if (!LoadBlock()) return false;
  }
  std::string error;
  BlockCursor cursor;
  cursor.version = version_;
  cursor.structure = raw_.data() + structure_begin_;
  cursor.structure_size = structure_end_ - structure_begin_;
  cursor.structure_pos = pos_;
  cursor.times = raw_.data() + structure_end_;
  cursor.times_size = raw_.size() - structure_end_;
  cursor.times_pos = time_pos_ - structure_end_;
  CodecState state{last_wall_ns_, last_request_};
  if (!DecodeEvent(&cursor, &state, event, &error)) {
    Fail(StreamStatus::kCorrupt, "record " + std::to_string(events_) + ": " + error);
    return false;
  }
  last_wall_ns_ = state.last_wall_ns;
  last_request_ = state.last_request;
  const bool one_column = version_ == kStreamVersionOneColumn;
  pos_ = cursor.structure_pos;
  if (!one_column) time_pos_ = structure_end_ + cursor.times_pos;
  ++events_;
  if (--block_events_left_ == 0) {
    std::size_t left = (cursor.structure_size - pos_) + (one_column ? 0 : raw_.size() - time_pos_);
    if (left != 0) {
      Fail(StreamStatus::kCorrupt,
           std::to_string(left) + " bytes left after the block's last record");
      return false;
    }
    offset_ += kBlockHeaderBytes + block_stored_bytes_;
    ++block_index_;
  }
  return true;
}

}  // namespace pas2p
