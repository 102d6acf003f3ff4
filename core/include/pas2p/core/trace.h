// A trace of one run: a directory with `trace.json` (metadata) and one binary event
// stream per rank (`rank-<N>.p2t`). Streams are written in zstd-compressed blocks through a
// bounded buffer; every block is written as soon as it is full, so a run that is killed
// leaves a readable prefix. A stream that ends without its footer is *cut*; readers hand
// out the prefix and then say where and why the stream ended.
//
// Consumers read traces through TraceSource / RankEventSource, which never hold a whole
// trace in memory. Other formats (SimGrid time-independent traces, synthesized logical
// traces) implement the same interfaces, so every later stage reads them all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "pas2p/core/event.h"

namespace pas2p {

// Any problem with trace input. The message names the file, the rank, the record and
// what was expected, e.g. "traces/a/rank-3.p2t: rank 3: block 7 (byte offset 40960):
// truncated block payload: expected 1834 bytes, found 112".
class TraceError : public std::runtime_error {
 public:
  explicit TraceError(const std::string& message) : std::runtime_error(message) {}
};

inline constexpr int kTraceFormatVersion = 1;
inline constexpr const char* kMetadataFileName = "trace.json";

// Where a traced run's ranks ran: one host, how many ranks it had and how many cores they
// could use. A trace taken with more ranks than cores measured its compute under contention
// (time slicing, shared caches), and that contention grows with the count.
struct HostPlacement {
  std::string host;  // gethostname() of the ranks on it
  int ranks = 0;     // ranks of MPI_COMM_WORLD on this host
  // Logical CPUs the job's ranks on this host may run on: the union of their affinity masks
  // (sched_getaffinity), which is what cgroups/cpusets and mpirun's binding leave them.
  // 0 = unknown.
  int cores = 0;

  double RanksPerCore() const { return cores > 0 ? static_cast<double>(ranks) / cores : 0.0; }
  bool Oversubscribed() const { return cores > 0 && ranks > cores; }
  bool operator==(const HostPlacement&) const = default;
};

// Run-level facts, stored as JSON in trace.json.
// The application's name without the process count that a program built for one count
// carries (the NAS Parallel Benchmarks' bin/cg.S.16, lu_64, app-8.x): a token equal to
// `nprocs`, delimited by '.', '_', '-' or the ends of the name, is removed with one
// delimiter next to it ("cg.S.16" at 16 -> "cg.S", "lu_64" at 64 -> "lu"). Other names are
// returned unchanged ("stencil2d" at 2, "cg.S.16" at 8). Traces of one application at
// several counts compare these names.
std::string ApplicationBaseName(const std::string& name, int nprocs);

struct TraceMetadata {
  int format_version = kTraceFormatVersion;
  std::string application;              // program name (basename of argv[0])
  std::vector<std::string> command;     // full command line of the application
  int nprocs = 0;                       // MPI_COMM_WORLD size
  std::string host;                     // host of rank 0
  std::string mpi_library;              // MPI_Get_library_version, first line
  std::string tracer_version;           // pas2p version that wrote it
  std::vector<std::string> counters;    // hardware counters measured, e.g. "PAPI_TOT_INS"
  std::string counters_note;            // why counters are missing, if they are
  std::string source = "pas2p-tracer";  // or "simgrid-ti", "synthesized", "generator"
  std::string status = "complete";      // "complete", "incomplete", "running"
  std::string status_reason;            // for "incomplete": what happened
  std::string started;                  // ISO-8601 UTC of MPI_Init on rank 0 (informational)
  // MPI calls the tracer counted but does not trace (one-sided, MPI-IO, neighbourhood
  // collectives), summed over the ranks: their time is inside the compute bursts. JSON key
  // "untraced_calls", absent when empty.
  std::map<std::string, std::uint64_t> untraced_calls;
  // The hosts of the run in the order of their lowest rank (JSON key "hosts": [{"host",
  // "ranks", "cores"}], absent when unknown: traces written before the tracer recorded it,
  // and traces of other sources). The ranks add up to nprocs.
  std::vector<HostPlacement> hosts;

  bool HasInstructions() const;
  // True when some host ran more ranks than it had cores (false when unknown).
  bool IsOversubscribed() const;
  // E.g. "49 ranks on 1 host (vm: 49 ranks on 2 cores, 24.5 per core)", or "unknown (...)"
  // when `hosts` is empty.
  std::string DescribePlacement() const;
  bool HasCycles() const;
  bool IsComplete() const { return status == "complete"; }
};

std::string MetadataToJson(const TraceMetadata& metadata);  // pretty, stable key order
// Throws TraceError naming `origin` (a file name) on malformed JSON or missing fields.
TraceMetadata MetadataFromJson(const std::string& json, const std::string& origin);

std::filesystem::path RankStreamPath(const std::filesystem::path& dir, int rank);
void WriteMetadata(const std::filesystem::path& dir, const TraceMetadata& metadata);
TraceMetadata ReadMetadata(const std::filesystem::path& dir);  // throws TraceError

// ---------------------------------------------------------------------------------------
// Writing one rank's stream. Never throws: it is used inside the user's application by the
// tracer. After an I/O error it stops writing and ok() is false; error() says why.
class RankStreamWriter {
 public:
  struct Options {
    std::size_t block_bytes = 64 * 1024;  // raw bytes buffered before a block is written
    int zstd_level = 3;
  };

  RankStreamWriter() = default;
  ~RankStreamWriter();
  RankStreamWriter(const RankStreamWriter&) = delete;
  RankStreamWriter& operator=(const RankStreamWriter&) = delete;

  // Creates (truncates) the file and writes the stream header.
  bool Open(const std::filesystem::path& path, int rank, const Options& options);
  bool Open(const std::filesystem::path& path, int rank) { return Open(path, rank, Options{}); }
  bool Append(const Event& event);
  // Writes the buffered events as a block now (compressed unless `raw`; raw blocks need no
  // allocation and are what a crash handler writes).
  bool Flush(bool raw = false);
  // Flushes and writes the footer: the stream is complete.
  bool Close();
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::uint64_t events_written() const { return events_; }
  std::uint64_t bytes_written() const { return file_bytes_; }
  bool is_open() const { return fd_ >= 0; }
  // For async-signal context: writes whatever is buffered as a raw block, no footer.
  void EmergencyFlush();

 private:
  bool WriteAll(const void* data, std::size_t size);
  int fd_ = -1;
  int rank_ = 0;
  Options options_;
  std::vector<std::uint8_t> buffer_;   // structure column of the current block
  std::vector<std::uint8_t> times_;    // time column of the current block
  std::vector<std::uint8_t> staging_;  // the block's raw payload, before compression
  std::vector<std::uint8_t> compressed_;
  std::uint32_t block_events_ = 0;
  std::int64_t last_wall_ns_ = 0;   // delta base inside the current block
  std::uint64_t last_request_ = 0;  // request-id delta base inside the current block
  std::uint64_t events_ = 0;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t blocks_ = 0;
  std::string error_;
};

// ---------------------------------------------------------------------------------------
// Reading.

// How a stream (or a whole trace) ended.
enum class StreamStatus {
  kReading,    // not at the end yet
  kComplete,   // footer seen: every event the writer wrote is here
  kTruncated,  // ended early (run killed or file cut): the events read are a valid prefix
  kCorrupt,    // a damaged block: the events before it are valid
};

class RankEventSource {
 public:
  virtual ~RankEventSource() = default;
  // Next event in program order; false at the end of the stream (see status()).
  virtual bool Next(Event* event) = 0;
  virtual StreamStatus status() const = 0;
  // For kTruncated/kCorrupt: what went wrong, naming file, rank, record and expectation.
  virtual const std::string& message() const = 0;
  virtual int rank() const = 0;
};

class TraceSource {
 public:
  virtual ~TraceSource() = default;
  virtual const TraceMetadata& metadata() const = 0;
  int nprocs() const { return metadata().nprocs; }
  // A fresh reader of one rank's events (may be called again to re-read), without the
  // receives that were cancelled and irecvs with the bytes that arrived (ReceivesAsCompleted).
  virtual std::unique_ptr<RankEventSource> OpenRank(int rank) const = 0;
  // The events as recorded, cancelled receives included (what `pas2p dump` shows).
  virtual std::unique_ptr<RankEventSource> OpenRankAsRecorded(int rank) const {
    return OpenRank(rank);
  }
  // Where it came from, for messages.
  virtual std::string description() const = 0;
};

// `inner` with its receives as they completed. An irecv's bytes are the bytes that
// arrived (its completion's), not the count posted: codes post a buffer for the largest
// message they may get (a multigrid posts its finest level's size at every level), and what
// a phase moves is what was sent. A receive posted with MPI_ANY_SOURCE whose completion (a
// wait or test later in the stream) says kCancelled never communicated (MPI_Cancel took it
// back before a message matched it, as codes do with a receive that listens for messages
// which may not come): the irecv and its request's place in that completion are left out,
// and so is a completion call left with no request (its time joins the compute around it).
// Every reader of a trace sees it so (analysis, simulation, conversion); `pas2p dump` shows
// the stream as recorded. To find the completion the reader reads ahead at most
// `max_lookahead` events; a receive whose completion is further (or never comes:
// MPI_Request_free) is passed on as recorded.
std::unique_ptr<RankEventSource> ReceivesAsCompleted(std::unique_ptr<RankEventSource> inner,
                                                     std::size_t max_lookahead = 1 << 16);

// Reads our binary stream of one rank.
class RankStreamReader : public RankEventSource {
 public:
  // Throws TraceError if the file cannot be opened or its header is wrong.
  RankStreamReader(const std::filesystem::path& path, int expected_rank);
  ~RankStreamReader() override;
  bool Next(Event* event) override;
  StreamStatus status() const override { return status_; }
  const std::string& message() const override { return message_; }
  int rank() const override { return rank_; }
  std::uint64_t events_read() const { return events_; }

 private:
  bool LoadBlock();
  void Fail(StreamStatus status, const std::string& what);
  std::filesystem::path path_;
  int rank_ = 0;
  std::FILE* file_ = nullptr;
  std::uint64_t offset_ = 0;  // byte offset of the next block header
  std::uint64_t block_index_ = 0;
  std::vector<std::uint8_t> raw_;
  std::vector<std::uint8_t> compressed_;
  std::uint32_t version_ = 0;
  std::size_t structure_begin_ = 0;  // column bounds inside raw_
  std::size_t structure_end_ = 0;
  std::size_t pos_ = 0;       // read position in the structure column
  std::size_t time_pos_ = 0;  // read position in the time column
  std::uint32_t block_stored_bytes_ = 0;
  std::uint32_t block_events_left_ = 0;
  std::int64_t last_wall_ns_ = 0;
  std::uint64_t last_request_ = 0;  // request-id delta base inside the current block
  std::uint64_t events_ = 0;
  StreamStatus status_ = StreamStatus::kReading;
  std::string message_;
};

// A trace directory written by the tracer (or by WriteTrace).
class TraceDirectory : public TraceSource {
 public:
  explicit TraceDirectory(std::filesystem::path dir);  // throws TraceError
  const TraceMetadata& metadata() const override { return metadata_; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override;
  std::unique_ptr<RankEventSource> OpenRankAsRecorded(int rank) const override;
  std::string description() const override { return dir_.string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  TraceMetadata metadata_;
};

// Opens a trace of any supported format: our trace directory, or a SimGrid
// time-independent trace (the list file given to `smpirun -replay`, or a directory holding
// one). Throws TraceError saying what was found instead.
std::unique_ptr<TraceSource> OpenTrace(const std::filesystem::path& path);

// ---------------------------------------------------------------------------------------
// Whole traces in memory: for tests, small traces and generators.
struct TraceData {
  TraceMetadata metadata;
  std::vector<std::vector<Event>> ranks;  // ranks[r] = events of rank r in program order
};

// A whole trace held in memory, read through the TraceSource interface (tests, generators,
// small imported traces). nprocs follows the number of ranks.
class MemoryTrace : public TraceSource {
 public:
  explicit MemoryTrace(TraceData data);
  explicit MemoryTrace(int nprocs);
  void Resize(int nprocs);
  std::vector<Event>& rank(int r) { return data_.ranks.at(static_cast<std::size_t>(r)); }
  const TraceMetadata& metadata() const override { return data_.metadata; }
  std::unique_ptr<RankEventSource> OpenRank(int rank) const override;
  std::unique_ptr<RankEventSource> OpenRankAsRecorded(int rank) const override;
  std::string description() const override { return "memory:" + data_.metadata.application; }
  TraceData& data() { return data_; }
  const TraceData& data() const { return data_; }

 private:
  TraceData data_;
};

// Reads every event of every rank. With `require_complete`, a cut or corrupt stream is a
// TraceError; without it the prefixes are returned and `warnings` (if given) gets one
// message per damaged rank.
TraceData ReadTrace(const TraceSource& source, bool require_complete = true,
                    std::vector<std::string>* warnings = nullptr);
// Every event as recorded (TraceSource::OpenRankAsRecorded: cancelled receives and posted
// counts kept), for checking what a trace holds; a cut or corrupt stream is a TraceError.
TraceData ReadTraceAsRecorded(const TraceSource& source);
// Writes `data` as a trace directory (metadata nprocs is set from data.ranks.size()).
void WriteTrace(const std::filesystem::path& dir, const TraceData& data);

// Replaces the posted peer/tag of wildcard receives (kIrecv with kAnySource/kAnyTag) with
// the actual source and tag from their completion. Needs the whole rank in memory.
void ResolveWildcards(std::vector<Event>* events);

// Maps communicator ids to their members (world ranks), from kCommCreate events.
// kCommWorld has all ranks; kCommSelf is {rank} of whoever uses it.
class CommTable {
 public:
  explicit CommTable(int nprocs);
  // Records the communicator of a kCommCreate event; throws TraceError if the same id is
  // defined twice with different members.
  void Add(const Event& comm_create, int rank);
  bool Has(CommId comm) const;
  // Members of `comm` in comm-rank order; `rank` is needed only for kCommSelf.
  std::vector<std::int32_t> Members(CommId comm, int rank) const;
  int Size(CommId comm) const;

 private:
  int nprocs_;
  std::vector<std::pair<CommId, std::vector<std::int32_t>>> comms_;  // sorted by id
};

}  // namespace pas2p
