#include "pas2p/core/event.h"

#include <gtest/gtest.h>

namespace pas2p {
namespace {

TEST(EventKind, NamesRoundTripForEveryKind) {
  for (int i = 0; i < kEventKindCount; ++i) {
    auto kind = static_cast<EventKind>(i);
    EventKind parsed;
    ASSERT_TRUE(ParseEventKind(EventKindName(kind), &parsed)) << i;
    EXPECT_EQ(parsed, kind);
  }
  EventKind k;
  EXPECT_FALSE(ParseEventKind("sendd", &k));
}

TEST(EventKind, Classification) {
  EXPECT_TRUE(IsPointToPoint(EventKind::kIrecv));
  EXPECT_FALSE(IsPointToPoint(EventKind::kWait));
  EXPECT_TRUE(IsCompletion(EventKind::kTestsome));
  EXPECT_TRUE(IsCollective(EventKind::kExscan));
  EXPECT_FALSE(IsCollective(EventKind::kCommCreate));
  EXPECT_TRUE(IsRooted(EventKind::kScatterv));
  EXPECT_FALSE(IsRooted(EventKind::kAllreduce));
}

TEST(Event, BytesMovedBySide) {
  EXPECT_EQ(MakeSend(1, 0, 100).SentBytes(), 100u);
  EXPECT_EQ(MakeSend(1, 0, 100).ReceivedBytes(), 0u);
  EXPECT_EQ(MakeRecv(1, 0, 64).ReceivedBytes(), 64u);
  Event a = MakeCollective(EventKind::kAllreduce, 8, 8);
  EXPECT_EQ(a.SentBytes(), 8u);
  EXPECT_EQ(a.ReceivedBytes(), 8u);
  Event w;
  w.kind = EventKind::kWaitall;
  w.completed = {{1, 3, 7, 40}, {2, kNoRank, kAnyTag, 0}};
  EXPECT_EQ(w.ReceivedBytes(), 40u);
}

TEST(Event, ClearGivesAFreshEventAndKeepsListCapacity) {
  Event e;
  e.kind = EventKind::kWaitall;
  e.wall_start_ns = 5;
  e.wall_end_ns = 9;
  e.cpu_ns = 7;
  e.instructions = e.cycles = 3;
  e.comm = 12;
  e.peer = e.recv_peer = 4;
  e.tag = e.recv_tag = 2;
  e.bytes = e.send_bytes = e.recv_bytes = 64;
  e.request = 8;
  e.sync = true;
  e.send_counts = e.recv_counts = {1, 2};
  e.requests = {1, 2, 3, 4};
  e.completed = {Completion{}};
  e.new_comm = 6;
  e.members = {0, 1};
  e.value = 1;
  const std::size_t capacity = e.requests.capacity();
  e.Clear();
  EXPECT_EQ(e, Event{});
  EXPECT_EQ(e.requests.capacity(), capacity);
}

TEST(Event, FormatNamesTheFields) {
  Event e = MakeIsend(3, 7, 8192, 12);
  e.wall_start_ns = 10;
  e.wall_end_ns = 25;
  EXPECT_EQ(FormatEvent(e), "isend peer=3 tag=7 comm=0 bytes=8192 request=12 t=[10,25]");
  Event w;
  w.kind = EventKind::kTest;
  w.requests = {12};
  EXPECT_EQ(FormatEvent(w), "test requests=12 completed=none t=[0,0]");
}

}  // namespace
}  // namespace pas2p
