#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "../src/stream_format.h"  // the layout itself, to write streams of older versions
#include "pas2p/core/trace.h"

namespace pas2p {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("pas2p_core_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A varied stream: every field of the model appears somewhere.
std::vector<Event> SampleEvents(int rank, int n) {
  std::vector<Event> events;
  std::int64_t t = 0;
  std::mt19937_64 rng(42 + rank);
  auto stamp = [&](Event e, std::int64_t duration) {
    e.wall_start_ns = t;
    t += duration;
    e.wall_end_ns = t;
    return e;
  };
  Event init;
  init.kind = EventKind::kInit;
  init.value = 3;
  init.wall_start_ns = -5000;
  events.push_back(init);
  Event split;
  split.kind = EventKind::kCommCreate;
  split.new_comm = 0xdeadbeefcafe1234ull;
  split.members = {0, 2, 5, 3};
  split.value = static_cast<int>(CommOrigin::kSplit);
  events.push_back(stamp(split, 900));
  for (int i = 0; i < n; ++i) {
    events.push_back(stamp(MakeCompute(1000 + static_cast<std::int64_t>(rng() % 5000),
                                       i % 3 ? kNotMeasured : 123456, 99),
                           2000 + static_cast<std::int64_t>(rng() % 100)));
    switch (i % 6) {
      case 0:
        events.push_back(stamp(MakeIsend((rank + 1) % 4, 5, 4096, 2 * i + 1), 300));
        break;
      case 1: {
        events.push_back(stamp(MakeIrecv(kAnySource, kAnyTag, 4096, 2 * i + 2), 200));
        Event w;
        w.kind = EventKind::kWaitany;
        w.requests = {static_cast<RequestId>(2 * i + 2), 7};
        w.completed = {{static_cast<RequestId>(2 * i + 2), 3, 5, 4000}};
        events.push_back(stamp(w, 700));
        break;
      }
      case 2: {
        Event test;
        test.kind = EventKind::kTest;
        test.requests = {9};
        events.push_back(stamp(test, 50));  // a failed test
        break;
      }
      case 3: {
        Event v = MakeCollective(EventKind::kAlltoallv, 60, 70, kNoRank, split.new_comm);
        v.send_counts = {10, 20, 30, 0};
        v.recv_counts = {0, 30, 20, 20};
        events.push_back(stamp(v, 4000));
        break;
      }
      case 4: {
        Event sr;
        sr.kind = EventKind::kSendrecv;
        sr.peer = 1;
        sr.tag = -1;
        sr.bytes = 1ull << 40;
        sr.recv_peer = 2;
        sr.recv_tag = 77;
        sr.recv_bytes = 3;
        sr.sync = true;
        events.push_back(stamp(sr, 100));
        break;
      }
      default:
        events.push_back(stamp(MakeCollective(EventKind::kBcast, 0, 800, 2), 900));
    }
  }
  Event fin;
  fin.kind = EventKind::kFinalize;
  events.push_back(stamp(fin, 10));
  return events;
}

TEST(Stream, RoundTripIsExact) {
  fs::path dir = TempDir("roundtrip");
  TraceData data;
  data.metadata.application = "sample";
  data.metadata.command = {"./sample", "--size", "10"};
  data.metadata.counters = {"PAPI_TOT_INS"};
  for (int r = 0; r < 3; ++r) data.ranks.push_back(SampleEvents(r, 5000));
  WriteTrace(dir, data);
  TraceDirectory trace(dir);
  EXPECT_EQ(trace.nprocs(), 3);
  EXPECT_TRUE(trace.metadata().HasInstructions());
  EXPECT_FALSE(trace.metadata().HasCycles());
  TraceData back = ReadTraceAsRecorded(trace);
  ASSERT_EQ(back.ranks.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(back.ranks[r].size(), data.ranks[r].size());
    for (std::size_t i = 0; i < data.ranks[r].size(); ++i)
      ASSERT_EQ(back.ranks[r][i], data.ranks[r][i])
          << "rank " << r << " event " << i << ": " << FormatEvent(back.ranks[r][i]);
  }
  EXPECT_EQ(back.metadata.command, data.metadata.command);
  fs::remove_all(dir);
}

TEST(Stream, WritingTwiceGivesIdenticalBytes) {
  fs::path a = TempDir("det_a"), b = TempDir("det_b");
  TraceData data;
  data.ranks.push_back(SampleEvents(0, 3000));
  WriteTrace(a, data);
  WriteTrace(b, data);
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(slurp(RankStreamPath(a, 0)), slurp(RankStreamPath(b, 0)));
  fs::remove_all(a);
  fs::remove_all(b);
}

// Writes one rank with small blocks and returns the byte offsets where blocks end.
std::vector<std::uintmax_t> WriteSmallBlocks(const fs::path& dir, const std::vector<Event>& ev) {
  TraceMetadata meta;
  meta.nprocs = 1;
  WriteMetadata(dir, meta);
  RankStreamWriter writer;
  RankStreamWriter::Options options;
  options.block_bytes = 512;
  EXPECT_TRUE(writer.Open(RankStreamPath(dir, 0), 0, options));
  std::vector<std::uintmax_t> ends;
  std::uint64_t last = writer.bytes_written();
  for (const Event& e : ev) {
    EXPECT_TRUE(writer.Append(e));
    if (writer.bytes_written() != last) {
      last = writer.bytes_written();
      ends.push_back(last);
    }
  }
  EXPECT_TRUE(writer.Close());
  return ends;
}

TEST(Stream, CutAtEveryBlockBoundaryReadsBackItsPrefix) {
  fs::path dir = TempDir("cut");
  std::vector<Event> events = SampleEvents(0, 400);
  std::vector<std::uintmax_t> ends = WriteSmallBlocks(dir, events);
  ASSERT_GT(ends.size(), 5u);
  std::string full;
  {
    std::ifstream in(RankStreamPath(dir, 0), std::ios::binary);
    full.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::vector<std::uintmax_t> cuts = {16};
  cuts.insert(cuts.end(), ends.begin(), ends.end());
  std::uint64_t previous_count = 0;
  for (std::uintmax_t cut : cuts) {
    {
      std::ofstream out(RankStreamPath(dir, 0), std::ios::binary | std::ios::trunc);
      out.write(full.data(), static_cast<std::streamsize>(cut));
    }
    RankStreamReader reader(RankStreamPath(dir, 0), 0);
    Event e;
    std::uint64_t n = 0;
    while (reader.Next(&e)) {
      ASSERT_EQ(e, events[n]) << "cut at " << cut;
      ++n;
    }
    EXPECT_EQ(reader.status(), StreamStatus::kTruncated) << "cut at " << cut;
    EXPECT_NE(reader.message().find("rank 0"), std::string::npos);
    EXPECT_NE(reader.message().find("without its footer"), std::string::npos) << reader.message();
    EXPECT_GE(n, previous_count);
    previous_count = n;
    // Cut inside the next block too: same prefix, a message about the truncated block.
    if (cut + 30 < full.size()) {
      std::ofstream out(RankStreamPath(dir, 0), std::ios::binary | std::ios::trunc);
      out.write(full.data(), static_cast<std::streamsize>(cut + 30));
      out.close();
      RankStreamReader mid(RankStreamPath(dir, 0), 0);
      std::uint64_t m = 0;
      while (mid.Next(&e)) ++m;
      EXPECT_EQ(m, n);
      EXPECT_EQ(mid.status(), StreamStatus::kTruncated);
      EXPECT_NE(mid.message().find("truncated"), std::string::npos) << mid.message();
    }
  }
  EXPECT_LT(previous_count, events.size());
  // And the whole file is complete.
  {
    std::ofstream out(RankStreamPath(dir, 0), std::ios::binary | std::ios::trunc);
    out.write(full.data(), static_cast<std::streamsize>(full.size()));
  }
  TraceDirectory trace(dir);
  EXPECT_EQ(ReadTrace(trace).ranks[0].size(), events.size());
  fs::remove_all(dir);
}

TEST(Stream, RandomCorruptionIsReportedNeverCrashes) {
  fs::path dir = TempDir("corrupt");
  std::vector<Event> events = SampleEvents(0, 300);
  WriteSmallBlocks(dir, events);
  std::string full;
  {
    std::ifstream in(RankStreamPath(dir, 0), std::ios::binary);
    full.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::mt19937 rng(7);
  int detected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = full;
    int flips = 1 + trial % 4;
    for (int f = 0; f < flips; ++f) {
      std::size_t at = 16 + rng() % (damaged.size() - 16);
      damaged[at] = static_cast<char>(damaged[at] ^ (1 + rng() % 255));
    }
    {
      std::ofstream out(RankStreamPath(dir, 0), std::ios::binary | std::ios::trunc);
      out.write(damaged.data(), static_cast<std::streamsize>(damaged.size()));
    }
    RankStreamReader reader(RankStreamPath(dir, 0), 0);
    Event e;
    std::size_t n = 0;
    bool prefix_ok = true;
    while (reader.Next(&e)) {
      if (n < events.size() && !(e == events[n])) prefix_ok = false;
      ++n;
    }
    if (reader.status() != StreamStatus::kComplete) {
      ++detected;
      EXPECT_FALSE(reader.message().empty());
      EXPECT_NE(reader.message().find("block"), std::string::npos) << reader.message();
    }
    EXPECT_TRUE(prefix_ok || reader.status() != StreamStatus::kComplete) << "trial " << trial;
  }
  EXPECT_EQ(detected, 300);
  fs::remove_all(dir);
}

// A stream of format `version` (2 or 3) written block by block with the codec alone, raw
// blocks of `per_block` events, footer included.
std::vector<std::uint8_t> StreamBytes(std::uint32_t version, int rank,
                                      const std::vector<Event>& events, std::size_t per_block) {
  using namespace internal;
  std::vector<std::uint8_t> out(kStreamHeaderBytes);
  std::memcpy(out.data(), kStreamMagic, 8);
  PutU32(out.data() + 8, version);
  PutU32(out.data() + 12, static_cast<std::uint32_t>(rank));
  auto block = [&out](const std::vector<std::uint8_t>& payload, std::uint8_t flags,
                      std::uint32_t count) {
    BlockHeader h;
    h.flags = flags;
    h.raw_bytes = h.stored_bytes = static_cast<std::uint32_t>(payload.size());
    h.event_count = count;
    h.checksum = Checksum(payload.data(), payload.size());
    std::uint8_t header[kBlockHeaderBytes];
    EncodeBlockHeader(h, header);
    out.insert(out.end(), header, header + kBlockHeaderBytes);
    out.insert(out.end(), payload.begin(), payload.end());
  };
  for (std::size_t first = 0; first < events.size(); first += per_block) {
    const std::size_t n = std::min(per_block, events.size() - first);
    CodecState state;
    std::vector<std::uint8_t> structure, times, payload;
    for (std::size_t i = first; i < first + n; ++i) {
      EncodeEvent(events[i], version, &state, &structure, &times);
    }
    PutVarint(structure.size(), &payload);
    payload.insert(payload.end(), structure.begin(), structure.end());
    payload.insert(payload.end(), times.begin(), times.end());
    block(payload, kBlockRaw, static_cast<std::uint32_t>(n));
  }
  std::vector<std::uint8_t> footer(8);
  PutU32(footer.data(), static_cast<std::uint32_t>(events.size()));
  block(footer, kBlockRaw | kBlockFooter, 0);
  return out;
}

std::vector<Event> ReadStream(const fs::path& path, int rank) {
  RankStreamReader reader(path, rank);
  std::vector<Event> events;
  Event e;
  while (reader.Next(&e)) events.push_back(e);
  EXPECT_EQ(reader.status(), StreamStatus::kComplete) << reader.message();
  return events;
}

// Traces written before format 3 (request ids as is), e.g. the bundle of session 1, still
// read back exactly.
TEST(Stream, ReadsFormatTwoStreams) {
  fs::path dir = TempDir("v2");
  const std::vector<Event> events = SampleEvents(1, 700);
  const auto bytes = StreamBytes(2, 1, events, 256);
  {
    std::ofstream out(RankStreamPath(dir, 1), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  EXPECT_EQ(ReadStream(RankStreamPath(dir, 1), 1), events);
  // The same events in format 3 differ on disk (request ids as deltas) but read alike.
  const auto v3 = StreamBytes(3, 1, events, 256);
  EXPECT_NE(v3, bytes);
  {
    std::ofstream out(RankStreamPath(dir, 1), std::ios::binary);
    out.write(reinterpret_cast<const char*>(v3.data()), static_cast<std::streamsize>(v3.size()));
  }
  EXPECT_EQ(ReadStream(RankStreamPath(dir, 1), 1), events);
  fs::remove_all(dir);
}

// Request ids of every shape: ids far apart and at the ends of the range, completions of
// requests not in the call's list, the same id listed twice, blocks starting mid-pattern.
TEST(Stream, RequestIdsOfEveryShapeRoundTrip) {
  fs::path dir = TempDir("requests");
  std::vector<Event> events;
  const std::vector<RequestId> ids = {1, 2, 0, ~0ull, 1ull << 63, 5, 4, 3, 1000000007, 2};
  for (int round = 0; round < 40; ++round) {
    for (RequestId id : ids)
      events.push_back(MakeIsend(1, 0, 8, id + static_cast<RequestId>(round)));
    Event w;
    w.kind = EventKind::kWaitsome;
    w.requests = {ids[round % ids.size()], 7, ~0ull, 7, 0};
    w.completed = {{7, 1, 2, 3}, {~0ull - 1, 2, 3, 4}, {0, kNoRank, kAnyTag, 0}, {7, 1, 2, 3}};
    events.push_back(w);
    Event t;
    t.kind = EventKind::kTestany;
    t.completed = {{static_cast<RequestId>(round) * 977, 0, 0, 0}};  // no list at all
    events.push_back(t);
  }
  for (std::size_t per_block : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
    const auto bytes = StreamBytes(internal::kStreamVersion, 0, events, per_block);
    std::ofstream(RankStreamPath(dir, 0), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    EXPECT_EQ(ReadStream(RankStreamPath(dir, 0), 0), events) << per_block << " events per block";
  }
  fs::remove_all(dir);
}

// A newer format than this reader knows is refused with the file, rank and what to do.
TEST(Stream, NewerFormatIsRefusedClearly) {
  fs::path dir = TempDir("newer");
  auto bytes = StreamBytes(internal::kStreamVersion, 0, {MakeCompute(5)}, 1);
  internal::PutU32(bytes.data() + 8, internal::kStreamVersion + 1);
  std::ofstream(RankStreamPath(dir, 0), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  try {
    RankStreamReader reader(RankStreamPath(dir, 0), 0);
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank-0.p2t: rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("upgrade pas2p"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(Stream, BadHeaderAndMissingFilesNameTheFile) {
  fs::path dir = TempDir("bad");
  {
    std::ofstream out(RankStreamPath(dir, 0), std::ios::binary);
    out << "not a trace at all";
  }
  try {
    RankStreamReader reader(RankStreamPath(dir, 0), 0);
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("rank-0.p2t"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TraceDirectory(dir / "nope"), TraceError);
  try {
    TraceDirectory t(dir);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("trace.json"), std::string::npos) << e.what();
  }
  TraceMetadata meta;
  meta.nprocs = 2;
  WriteMetadata(dir, meta);
  TraceDirectory trace(dir);
  EXPECT_THROW(trace.OpenRank(1), TraceError);  // stream missing
  EXPECT_THROW(trace.OpenRank(5), TraceError);  // out of range
  fs::remove_all(dir);
}

TEST(Metadata, JsonRoundTripAndErrors) {
  TraceMetadata m;
  m.application = "app";
  m.command = {"./app", "x"};
  m.nprocs = 16;
  m.counters = {"PAPI_TOT_INS", "PAPI_TOT_CYC"};
  m.status = "incomplete";
  m.status_reason = "killed by signal 9";
  TraceMetadata back = MetadataFromJson(MetadataToJson(m), "x.json");
  EXPECT_EQ(back.command, m.command);
  EXPECT_EQ(back.nprocs, 16);
  EXPECT_FALSE(back.IsComplete());
  EXPECT_EQ(back.status_reason, m.status_reason);
  EXPECT_THROW(MetadataFromJson("{", "x.json"), TraceError);
  EXPECT_THROW(MetadataFromJson(R"({"format":"pas2p-trace","format_version":1})", "x.json"),
               TraceError);
  EXPECT_THROW(
      MetadataFromJson(R"({"format":"pas2p-trace","format_version":1,"nprocs":0})", "x.json"),
      TraceError);
}

// trace.json "hosts": round trip, its description, and files without it (written before the
// tracer recorded it) still load with the placement unknown.
TEST(Metadata, HostPlacementRoundTripsAndOldFilesLoad) {
  TraceMetadata m;
  m.nprocs = 49;
  m.hosts = {{"vm", 49, 2}};
  const std::string json = MetadataToJson(m);
  EXPECT_NE(json.find("\"hosts\""), std::string::npos) << json;
  const TraceMetadata back = MetadataFromJson(json, "x.json");
  EXPECT_EQ(back.hosts, m.hosts);
  EXPECT_TRUE(back.IsOversubscribed());
  EXPECT_EQ(back.DescribePlacement(),
            "49 ranks on 1 host (vm: 49 ranks on 2 cores, 24.5 per core)");

  TraceMetadata two;
  two.nprocs = 8;
  two.hosts = {{"n1", 4, 16}, {"n2", 4, 4}};
  const TraceMetadata two_back = MetadataFromJson(MetadataToJson(two), "x.json");
  EXPECT_EQ(two_back.hosts, two.hosts);       // order kept
  EXPECT_FALSE(two_back.IsOversubscribed());  // 4 ranks on 4 cores is not more than cores
  EXPECT_EQ(two_back.DescribePlacement(),
            "8 ranks on 2 hosts (n1: 4 ranks on 16 cores, 0.25 per core; n2: 4 ranks on 4 cores, "
            "1 per core)");

  // A file of the bundle's era: no "hosts" key.
  const std::string old = R"({"format":"pas2p-trace","format_version":1,"application":"a",
      "nprocs":49,"host":"vm","status":"complete"})";
  const TraceMetadata old_back = MetadataFromJson(old, "old.json");
  EXPECT_TRUE(old_back.hosts.empty());
  EXPECT_FALSE(old_back.IsOversubscribed());
  EXPECT_EQ(old_back.DescribePlacement().rfind("unknown (", 0), 0u);
  // And writing it back does not invent a placement.
  EXPECT_EQ(MetadataToJson(old_back).find("\"hosts\""), std::string::npos);

  // WriteTrace keeps a placement that fits its ranks and drops one that does not.
  const fs::path dir = TempDir("placement");
  TraceData data;
  data.metadata.hosts = {{"vm", 2, 2}};
  data.ranks.resize(2);
  WriteTrace(dir, data);
  EXPECT_EQ(ReadMetadata(dir).hosts, data.metadata.hosts);
  data.ranks.resize(3);
  WriteTrace(dir, data);
  EXPECT_TRUE(ReadMetadata(dir).hosts.empty());
  fs::remove_all(dir);

  // Unknown cores (0) are never oversubscribed.
  TraceMetadata unknown;
  unknown.nprocs = 4;
  unknown.hosts = {{"h", 4, 0}};
  EXPECT_FALSE(unknown.IsOversubscribed());
  EXPECT_EQ(unknown.DescribePlacement(), "4 ranks on 1 host (h: 4 ranks, cores unknown)");

  // Malformed placements name the file and the entry.
  auto error_of = [](const std::string& hosts) {
    try {
      MetadataFromJson(
          R"({"format":"pas2p-trace","format_version":1,"nprocs":4,"hosts":)" + hosts + "}",
          "t/trace.json");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(
      error_of(R"([{"host":"h","ranks":3,"cores":2}])").find("places 3 ranks, but nprocs is 4"),
      std::string::npos);
  EXPECT_NE(error_of(R"([{"host":"h","ranks":0,"cores":2},{"host":"g","ranks":4,"cores":2}])")
                .find("t/trace.json: hosts[0] (h)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"host":"h"})").find("\"hosts\" must be an array"), std::string::npos);
  EXPECT_NE(error_of(R"([{"ranks":4}])").find("t/trace.json"), std::string::npos);
}

TEST(Wildcards, ResolvedFromCompletion) {
  std::vector<Event> ev = {MakeIrecv(kAnySource, kAnyTag, 10, 4)};
  Event w;
  w.kind = EventKind::kWaitany;
  w.requests = {4};
  w.completed = {{4, 6, 3, 10}};
  ev.push_back(w);
  ResolveWildcards(&ev);
  EXPECT_EQ(ev[0].peer, 6);
  EXPECT_EQ(ev[0].tag, 3);
}

// A receive from any source that was cancelled is left out by every reader: the irecv, its
// place in the waitall that also completed another request, and the polls (tests that found
// nothing) that named only it; a wildcard receive that did get a message, and a named
// receive, stay. As recorded, the stream is untouched.
TEST(Wildcards, CancelledReceivesAreLeftOut) {
  TraceData data;
  auto& ev = data.ranks.emplace_back();
  ev.push_back(MakeIrecv(kAnySource, 7, 64, 1));  // cancelled
  ev.push_back(MakeIrecv(kAnySource, 7, 64, 2));  // gets a message from 0
  ev.push_back(MakeIrecv(0, 1, 32, 3));
  Event poll;
  poll.kind = EventKind::kTest;
  poll.requests = {1};
  ev.push_back(poll);
  ev.push_back(MakeCompute(100));
  Event all = MakeWaitall({1, 2, 3});
  all.completed = {{1, kCancelled, kAnyTag, 0}, {2, 0, 7, 64}, {3, 0, 1, 32}};
  ev.push_back(all);
  ev.push_back(MakeIrecv(kAnySource, 7, 64, 4));  // cancelled, waited for alone
  Event wait;
  wait.kind = EventKind::kWait;
  wait.requests = {4};
  wait.completed = {{4, kCancelled, kAnyTag, 0}};
  ev.push_back(wait);
  ev.push_back(MakeCompute(200));
  MemoryTrace trace(data);
  std::vector<Event> read;
  auto reader = trace.OpenRank(0);
  for (Event e; reader->Next(&e);) read.push_back(e);
  ASSERT_EQ(read.size(), 5u);
  EXPECT_EQ(read[0].request, 2u);
  EXPECT_EQ(read[1].request, 3u);
  EXPECT_EQ(read[2].kind, EventKind::kCompute);
  EXPECT_EQ(read[3].requests, (std::vector<RequestId>{2, 3}));
  ASSERT_EQ(read[3].completed.size(), 2u);
  EXPECT_EQ(read[3].completed[0].request, 2u);
  EXPECT_EQ(read[4].cpu_ns, 200);
  std::size_t recorded = 0;
  auto as_recorded = trace.OpenRankAsRecorded(0);
  for (Event e; as_recorded->Next(&e);) ++recorded;
  EXPECT_EQ(recorded, ev.size());
  // A completion further than the look-ahead leaves the receive as recorded.
  auto short_sight = ReceivesAsCompleted(trace.OpenRankAsRecorded(0), 2);
  Event first;
  ASSERT_TRUE(short_sight->Next(&first));
  EXPECT_EQ(first.request, 1u);
}

// An irecv reads as the bytes that arrived, whatever buffer was posted: a receive posted for
// 5184 B that got 2048 B moves 2048 B, in a wait right after it or one far behind other
// calls; a receive whose completion is beyond the look-ahead keeps its posted count, and the
// stream as recorded keeps every posted count.
TEST(Receives, IrecvBytesAreTheBytesThatArrived) {
  TraceData data;
  auto& ev = data.ranks.emplace_back();
  ev.push_back(MakeIrecv(1, 1100, 5184, 1));
  ev.push_back(MakeIrecv(2, 1300, 5184, 2));
  ev.push_back(MakeSend(1, 1300, 2048));
  Event first;
  first.kind = EventKind::kWait;
  first.requests = {1};
  first.completed = {{1, 1, 1100, 2048}};
  ev.push_back(first);
  for (int i = 0; i < 3; ++i) ev.push_back(MakeCompute(100 + i));
  Event second;
  second.kind = EventKind::kWait;
  second.requests = {2};
  second.completed = {{2, 2, 1300, 512}};
  ev.push_back(second);
  MemoryTrace trace(data);
  std::vector<Event> read;
  auto reader = trace.OpenRank(0);
  for (Event e; reader->Next(&e);) read.push_back(e);
  ASSERT_EQ(read.size(), ev.size());
  EXPECT_EQ(read[0].bytes, 2048u);
  EXPECT_EQ(read[1].bytes, 512u);
  EXPECT_EQ(read[2].bytes, 2048u);  // the send as recorded
  EXPECT_EQ(read[3].completed[0].bytes, 2048u);
  auto as_recorded = trace.OpenRankAsRecorded(0);
  Event e;
  ASSERT_TRUE(as_recorded->Next(&e));
  EXPECT_EQ(e.bytes, 5184u);
  // Look-ahead 3: the first receive's wait is in reach, the second's (6 events on) is not.
  auto short_sight = ReceivesAsCompleted(trace.OpenRankAsRecorded(0), 3);
  ASSERT_TRUE(short_sight->Next(&e));
  EXPECT_EQ(e.bytes, 2048u);
  ASSERT_TRUE(short_sight->Next(&e));
  EXPECT_EQ(e.bytes, 5184u);
}

TEST(CommTable, MembersAndConflicts) {
  CommTable table(6);
  Event c;
  c.kind = EventKind::kCommCreate;
  c.new_comm = 77;
  c.members = {1, 3, 5};
  table.Add(c, 1);
  table.Add(c, 3);
  EXPECT_TRUE(table.Has(77));
  EXPECT_FALSE(table.Has(78));
  EXPECT_EQ(table.Members(77, 1), (std::vector<std::int32_t>{1, 3, 5}));
  EXPECT_EQ(table.Size(kCommWorld), 6);
  EXPECT_EQ(table.Members(kCommSelf, 4), (std::vector<std::int32_t>{4}));
  c.members = {1, 3};
  EXPECT_THROW(table.Add(c, 5), TraceError);
  EXPECT_THROW(table.Members(99, 0), TraceError);
}

}  // namespace
}  // namespace pas2p
