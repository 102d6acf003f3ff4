#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "pas2p/core/trace.h"
#include "stream_format.h"

namespace pas2p {

using namespace internal;

RankStreamWriter::~RankStreamWriter() {
  if (fd_ >= 0) {
    Flush();
    ::close(fd_);  // no footer: an unclosed stream reads as cut
  }
}

bool RankStreamWriter::WriteAll(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error_.empty()) error_ = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    file_bytes_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool RankStreamWriter::Open(const std::filesystem::path& path, int rank, const Options& options) {
  options_ = options;
  rank_ = rank;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = path.string() + ": cannot create: " + std::strerror(errno);
    return false;
  }
  buffer_.reserve(options_.block_bytes + 4096);
  compressed_.resize(ZSTD_compressBound(options_.block_bytes + 4096));
  std::uint8_t header[kStreamHeaderBytes];
  std::memcpy(header, kStreamMagic, 8);
  PutU32(header + 8, kStreamVersion);
  PutU32(header + 12, static_cast<std::uint32_t>(rank));
  return WriteAll(header, sizeof header);
}

bool RankStreamWriter::Append(const Event& event) {
  if (fd_ < 0 || !error_.empty()) return false;
  CodecState state{last_wall_ns_, last_request_};
  EncodeEvent(event, kStreamVersion, &state, &buffer_, &times_);
  last_wall_ns_ = state.last_wall_ns;
  last_request_ = state.last_request;
  ++block_events_;
  ++events_;
  if (buffer_.size() + times_.size() >= options_.block_bytes) return Flush();
  return true;
}

bool RankStreamWriter::Flush(bool raw) {
  if (fd_ < 0 || !error_.empty()) return false;
  if (block_events_ == 0) return true;
  staging_.clear();
  PutVarint(buffer_.size(), &staging_);
  staging_.insert(staging_.end(), buffer_.begin(), buffer_.end());
  staging_.insert(staging_.end(), times_.begin(), times_.end());
  BlockHeader h;
  h.raw_bytes = static_cast<std::uint32_t>(staging_.size());
  h.event_count = block_events_;
  const std::uint8_t* payload = staging_.data();
  std::size_t stored = staging_.size();
  if (!raw) {
    if (compressed_.size() < ZSTD_compressBound(staging_.size()))
      compressed_.resize(ZSTD_compressBound(staging_.size()));
    std::size_t n = ZSTD_compress(compressed_.data(), compressed_.size(), staging_.data(),
                                  staging_.size(), options_.zstd_level);
    if (!ZSTD_isError(n) && n < staging_.size()) {
      payload = compressed_.data();
      stored = n;
    } else {
      raw = true;
    }
  }
  h.flags = raw ? kBlockRaw : 0;
  h.stored_bytes = static_cast<std::uint32_t>(stored);
  h.checksum = Checksum(payload, stored);
  std::uint8_t header[kBlockHeaderBytes];
  EncodeBlockHeader(h, header);
  bool ok = WriteAll(header, sizeof header) && WriteAll(payload, stored);
  buffer_.clear();
  times_.clear();
  block_events_ = 0;
  last_wall_ns_ = 0;
  last_request_ = 0;
  ++blocks_;
  return ok;
}

void RankStreamWriter::EmergencyFlush() {
  // No allocation here (signal context): the column length prefix is built on the stack
  // and the checksum is chained over the three pieces.
  if (fd_ < 0 || block_events_ == 0) return;
  std::uint8_t prefix[10];
  std::size_t prefix_bytes = 0;
  for (std::uint64_t v = buffer_.size();; v >>= 7) {
    prefix[prefix_bytes++] = static_cast<std::uint8_t>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  BlockHeader h;
  h.flags = kBlockRaw;
  h.raw_bytes = h.stored_bytes =
      static_cast<std::uint32_t>(prefix_bytes + buffer_.size() + times_.size());
  h.event_count = block_events_;
  h.checksum =
      ChecksumContinue(ChecksumContinue(ChecksumContinue(kChecksumSeed, prefix, prefix_bytes),
                                        buffer_.data(), buffer_.size()),
                       times_.data(), times_.size());
  std::uint8_t header[kBlockHeaderBytes];
  EncodeBlockHeader(h, header);
  WriteAll(header, sizeof header);
  WriteAll(prefix, prefix_bytes);
  WriteAll(buffer_.data(), buffer_.size());
  WriteAll(times_.data(), times_.size());
  block_events_ = 0;
  buffer_.clear();
  times_.clear();
  last_wall_ns_ = 0;
  last_request_ = 0;
}

bool RankStreamWriter::Close() {
  if (fd_ < 0) return false;
  bool ok = Flush();
  if (ok) {
    BlockHeader h;
    h.flags = kBlockFooter | kBlockRaw;
    std::uint8_t payload[8];
    PutU32(payload, static_cast<std::uint32_t>(events_));
    PutU32(payload + 4, static_cast<std::uint32_t>(events_ >> 32));
    h.raw_bytes = h.stored_bytes = sizeof payload;
    h.checksum = Checksum(payload, sizeof payload);
    std::uint8_t header[kBlockHeaderBytes];
    EncodeBlockHeader(h, header);
    ok = WriteAll(header, sizeof header) && WriteAll(payload, sizeof payload);
  }
  if (::close(fd_) != 0 && ok) {
    error_ = std::string("close failed: ") + std::strerror(errno);
    ok = false;
  }
  fd_ = -1;
  return ok;
}

}  // namespace pas2p
