#include "server/agent/xid_events.h"

#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/agent/test_paths.h"

namespace wsched::agent {
namespace {

using testing::ScratchDir;

TEST(ParseXidLineTest, KmsgRecord) {
  std::optional<XidEvent> event = ParseXidLine(
      "4,1234,5678901234,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=2201, name=python3, GPU has "
      "fallen off the bus.");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->pci_address, "0000:3b:00.0");
  EXPECT_EQ(event->xid, 79);
  EXPECT_EQ(event->text, "pid=2201, name=python3, GPU has fallen off the bus.");
  EXPECT_EQ(event->since_boot, absl::Microseconds(5678901234));
}

TEST(ParseXidLineTest, DmesgAndJournalLines) {
  std::optional<XidEvent> dmesg =
      ParseXidLine("[ 5678.500000] NVRM: Xid (PCI:0000:B5:00): 48, pid=1, name=x, DBE (double bit error)");
  ASSERT_TRUE(dmesg.has_value());
  EXPECT_EQ(dmesg->pci_address, "0000:b5:00.0");
  EXPECT_EQ(dmesg->xid, 48);
  EXPECT_EQ(dmesg->since_boot, absl::Milliseconds(5678500));
  std::optional<XidEvent> journal = ParseXidLine(
      "Jan 12 10:00:00 node-1 kernel: NVRM: Xid (PCI:0000:18:00): 94, pid='<unknown>', "
      "name=<unknown>, Contained: CE User Channel (0x9).");
  ASSERT_TRUE(journal.has_value());
  EXPECT_EQ(journal->xid, 94);
  EXPECT_EQ(journal->since_boot, std::nullopt);
}

TEST(ParseXidLineTest, OtherLinesAreNotEvents) {
  EXPECT_EQ(ParseXidLine(""), std::nullopt);
  EXPECT_EQ(ParseXidLine("6,99,100,-;nvme0n1: p1 p2"), std::nullopt);
  EXPECT_EQ(ParseXidLine(" SUBSYSTEM=pci"), std::nullopt);  // kmsg continuation.
  EXPECT_EQ(ParseXidLine("NVRM: Xid (PCI:0000:3b:00): abc, pid=1"), std::nullopt);
  EXPECT_EQ(ParseXidLine("NVRM: Xid (PCI:zz): 79, pid=1"), std::nullopt);
  EXPECT_EQ(ParseXidLine("NVRM: Xid (PCI:0000:3b:00) 79"), std::nullopt);
}

TEST(ParseUptimeTest, FirstNumber) {
  EXPECT_EQ(ParseUptime("12345.50 45678.90\n"), absl::Milliseconds(12345500));
  EXPECT_EQ(ParseUptime(""), std::nullopt);
  EXPECT_EQ(ParseUptime("x y"), std::nullopt);
}

const absl::Time kNow = absl::FromUnixSeconds(1700000000);

XidEvent Event(int xid, std::optional<absl::Duration> since_boot = std::nullopt) {
  return {"0000:3b:00.0", xid, "", since_boot};
}

TEST(XidTrackerTest, UnhealthyXidCountsForTheHold) {
  XidTracker tracker(absl::Minutes(5));
  ASSERT_NE(tracker.Add(Event(79), kNow, std::nullopt), nullptr);
  EXPECT_EQ(tracker.Unhealthy(kNow)["0000:3b:00.0"], "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(tracker.Unhealthy(kNow + absl::Minutes(5) - absl::Seconds(1)).size(), 1u);
  EXPECT_TRUE(tracker.Unhealthy(kNow + absl::Minutes(5)).empty());
}

TEST(XidTrackerTest, ApplicationAndUnknownXidsChangeNothing) {
  XidTracker tracker(absl::Minutes(5));
  for (int xid : {13, 31, 43, 45}) {
    const XidRule* rule = tracker.Add(Event(xid), kNow, std::nullopt);
    ASSERT_NE(rule, nullptr);
    EXPECT_FALSE(rule->unhealthy);
  }
  EXPECT_EQ(tracker.Add(Event(999), kNow, std::nullopt), nullptr);
  EXPECT_TRUE(tracker.Unhealthy(kNow).empty());
}

TEST(XidTrackerTest, OldKmsgRecordsAreDatedByUptime) {
  XidTracker tracker(absl::Minutes(5));
  // Read at 1 h uptime: an XID at 10 min is long past, one at 58 min is not.
  tracker.Add(Event(48, absl::Minutes(10)), kNow, absl::Hours(1));
  EXPECT_TRUE(tracker.Unhealthy(kNow).empty());
  tracker.Add(Event(92, absl::Minutes(58)), kNow, absl::Hours(1));
  EXPECT_EQ(tracker.Unhealthy(kNow)["0000:3b:00.0"], "XID 92: high single-bit ECC error rate");
  EXPECT_TRUE(tracker.Unhealthy(kNow + absl::Minutes(3)).empty());
}

TEST(KernelLogReaderTest, ReadsOnlyWhatWasAppended) {
  ScratchDir dir;
  std::string path = (dir.path() / "kmsg").string();
  std::ofstream(path) << "line one\nline two\npartial";
  auto reader = KernelLogReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->ReadNew().value(), ::testing::ElementsAre("line one", "line two"));
  EXPECT_TRUE((*reader)->ReadNew().value().empty());
  std::ofstream(path, std::ios::app) << " line\nline four\n";
  EXPECT_THAT((*reader)->ReadNew().value(), ::testing::ElementsAre("partial line", "line four"));
}

TEST(KernelLogReaderTest, MissingFileIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(KernelLogReader::Open("/nonexistent/kmsg").status()));
}

}  // namespace
}  // namespace wsched::agent
