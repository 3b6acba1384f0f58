// The idle-GPU policy on one replica against a fake mirror and clock: what
// it marks, clears and stops, and when it leaves a record alone.
#include "server/idle/idle_monitor.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::idle {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

// The mirror and the database in one: marks land on `records` at once.
class FakeActions : public IdleMonitor::Actions {
 public:
  std::shared_ptr<const core::Catalog> Catalog() const override { return catalog; }
  absl::flat_hash_map<std::string, Known> KnownOf(const std::vector<std::string>& ids) override {
    absl::flat_hash_map<std::string, Known> out;
    for (const std::string& id : ids) {
      if (auto it = records.find(id); it != records.end()) out[id] = it->second;
    }
    return out;
  }
  absl::StatusOr<int64_t> Mark(const std::string& workspace, int64_t version,
                               const std::optional<core::IdleMark>& mark) override {
    auto it = records.find(workspace);
    if (it == records.end() || it->second.version != version) return absl::AbortedError("moved on");
    it->second.mark = mark;
    it->second.version = ++next_version;
    marks.push_back(mark);
    return it->second.version;
  }
  absl::Status StopIdle(const std::string& workspace, int64_t version) override {
    auto it = records.find(workspace);
    if (it == records.end() || it->second.version != version) return absl::AbortedError("moved on");
    stops.push_back(workspace);
    records.erase(it);
    return absl::OkStatus();
  }

  std::shared_ptr<const core::Catalog> catalog;
  absl::flat_hash_map<std::string, Known> records;
  int64_t next_version = 100;
  std::vector<std::optional<core::IdleMark>> marks;  // Each Mark call, in order.
  std::vector<std::string> stops;
};

core::Catalog CatalogWith(const core::IdlePolicy& idle) {
  core::Catalog catalog;
  core::WorkspaceClass cls;
  cls.id = "gpu-1x";
  cls.gpu.count = 2;
  cls.idle = idle;
  catalog.classes.push_back(cls);
  core::WorkspaceClass plain;
  plain.id = "gpu-plain";
  plain.gpu.count = 1;
  catalog.classes.push_back(plain);
  return catalog;
}

class IdleMonitorTest : public ::testing::Test {
 protected:
  IdleMonitorTest() { UsePolicy(Notify()); }

  static core::IdlePolicy Notify() {
    return {5, absl::Minutes(2), core::IdleAction::kNotify, absl::ZeroDuration()};
  }
  static core::IdlePolicy Stop() {
    return {5, absl::Minutes(2), core::IdleAction::kStop, absl::Seconds(30)};
  }
  void UsePolicy(const core::IdlePolicy& idle) {
    actions_.catalog = std::make_shared<const core::Catalog>(CatalogWith(idle));
  }

  // ws-1 of gpu-1x holds GPU-a and GPU-b of node n1 at `version`.
  void Place(int64_t version = 7) {
    actions_.records["ws-1"] = {version, std::nullopt};
    holders_ = {{"GPU-a", {"ws-1", "gpu-1x", version}}, {"GPU-b", {"ws-1", "gpu-1x", version}}};
  }
  // One heartbeat now with these utilisations of GPU-a and GPU-b.
  void Beat(std::vector<usage::GpuUsage> samples) {
    monitor_.Observe({node_, pool_, samples, holders_, now_});
  }
  // A heartbeat every 10 s for `span` with both GPUs at `percent`, a tick after each.
  void IdleFor(absl::Duration span, int percent = 0) {
    for (absl::Duration t; t < span; t += absl::Seconds(10)) {
      Beat({{"GPU-a", percent, 0}, {"GPU-b", percent, 0}});
      monitor_.Tick();
      now_ += absl::Seconds(10);
    }
  }
  // Keeps the holders in step with the record (what the mirror does).
  void Mirror() {
    for (auto& [uuid, holder] : holders_) holder.version = actions_.records["ws-1"].version;
  }

  FakeActions actions_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  IdleMonitor monitor_{&actions_, {absl::Seconds(30), absl::Seconds(1)}, [this] { return now_; }};
  std::string node_ = "n1", pool_ = "gpu-h100";
  usage::GpuHolders holders_;
};

TEST_F(IdleMonitorTest, NotifyMarksTheRecordAfterForAndCountsTheGpus) {
  Place();
  const absl::Time start = now_;
  IdleFor(absl::Minutes(2));  // Samples at 0 s .. 110 s: 110 s idle.
  EXPECT_THAT(actions_.marks, IsEmpty());
  EXPECT_THAT(monitor_.IdleGpus(), ElementsAre(Pair(usage::PoolClass("gpu-h100", "gpu-1x"), 0)));
  Beat({{"GPU-a", 1, 0}, {"GPU-b", 4, 0}});  // 120 s: idle for the whole `for`.
  monitor_.Tick();
  ASSERT_EQ(actions_.marks.size(), 1u);
  EXPECT_EQ(actions_.marks[0], (core::IdleMark{start, std::nullopt}));
  EXPECT_THAT(monitor_.IdleGpus(), ElementsAre(Pair(usage::PoolClass("gpu-h100", "gpu-1x"), 2)));
  // Marked once: later ticks find the mark on the record and leave it.
  Mirror();
  now_ += absl::Seconds(10);
  IdleFor(absl::Minutes(5));
  EXPECT_EQ(actions_.marks.size(), 1u);
  EXPECT_THAT(actions_.stops, IsEmpty());  // Notify never stops.
}

TEST_F(IdleMonitorTest, OneBusyGpuClearsTheMarkAndStartsTheClockAgain) {
  Place();
  IdleFor(absl::Minutes(2) + absl::Seconds(10));
  ASSERT_EQ(actions_.marks.size(), 1u);
  Mirror();
  Beat({{"GPU-a", 0, 0}, {"GPU-b", 60, 0}});
  monitor_.Tick();
  ASSERT_EQ(actions_.marks.size(), 2u);
  EXPECT_EQ(actions_.marks[1], std::nullopt);
  EXPECT_EQ(actions_.records["ws-1"].mark, std::nullopt);
  EXPECT_THAT(monitor_.IdleGpus(), ElementsAre(Pair(usage::PoolClass("gpu-h100", "gpu-1x"), 0)));
  Mirror();
  now_ += absl::Seconds(10);
  IdleFor(absl::Minutes(1));
  EXPECT_EQ(actions_.marks.size(), 2u);  // Counting again from the busy sample.
}

TEST_F(IdleMonitorTest, StopWarnsWarnBeforeAheadThenStopsTheMarkedRecord) {
  UsePolicy(Stop());
  Place();
  const absl::Time start = now_;
  IdleFor(absl::Seconds(90));  // 0 s .. 80 s.
  EXPECT_THAT(actions_.marks, IsEmpty());
  Beat({{"GPU-a", 0, 0}, {"GPU-b", 0, 0}});  // 90 s = for - warn_before.
  monitor_.Tick();
  ASSERT_EQ(actions_.marks.size(), 1u);
  EXPECT_EQ(actions_.marks[0], (core::IdleMark{start, start + absl::Minutes(2)}));
  EXPECT_THAT(actions_.stops, IsEmpty());
  Mirror();
  now_ += absl::Seconds(10);
  IdleFor(absl::Seconds(20));  // 100 s, 110 s: warned, not yet due.
  EXPECT_THAT(actions_.stops, IsEmpty());
  Beat({{"GPU-a", 0, 0}, {"GPU-b", 0, 0}});  // 120 s: due.
  monitor_.Tick();
  EXPECT_THAT(actions_.stops, ElementsAre("ws-1"));
  EXPECT_EQ(actions_.marks.size(), 1u);
  EXPECT_THAT(monitor_.IdleStops(), ElementsAre(Pair(usage::PoolClass("gpu-h100", "gpu-1x"), 1)));
}

TEST_F(IdleMonitorTest, ActivityAfterTheWarningCancelsTheStop) {
  UsePolicy(Stop());
  Place();
  IdleFor(absl::Seconds(100));
  ASSERT_EQ(actions_.marks.size(), 1u);
  Mirror();
  IdleFor(absl::Seconds(10), /*percent=*/30);
  ASSERT_EQ(actions_.marks.size(), 2u);
  EXPECT_EQ(actions_.marks[1], std::nullopt);
  Mirror();
  IdleFor(absl::Minutes(1));
  EXPECT_THAT(actions_.stops, IsEmpty());
}

TEST_F(IdleMonitorTest, WithoutWarnBeforeTheWarningStillComesFirstThenTheStop) {
  UsePolicy({5, absl::Minutes(1), core::IdleAction::kStop, absl::ZeroDuration()});
  Place();
  IdleFor(absl::Minutes(1));
  Beat({{"GPU-a", 0, 0}, {"GPU-b", 0, 0}});
  monitor_.Tick();
  ASSERT_EQ(actions_.marks.size(), 1u);  // The tick that finds it due marks it first ...
  EXPECT_THAT(actions_.stops, IsEmpty());
  Mirror();
  monitor_.Tick();  // ... and the next stops it.
  EXPECT_THAT(actions_.stops, ElementsAre("ws-1"));
}

TEST_F(IdleMonitorTest, AGpuWithoutSamplesIsNeverIdleAndAQuietNodeIsDropped) {
  Place();
  for (int i = 0; i < 30; ++i) {
    Beat({{"GPU-a", 0, 0}});  // GPU-b unreported.
    monitor_.Tick();
    now_ += absl::Seconds(10);
  }
  EXPECT_THAT(actions_.marks, IsEmpty());
  // No heartbeat at all: after stale_after the workspace is not judged here.
  now_ += absl::Minutes(1);
  monitor_.Tick();
  EXPECT_THAT(monitor_.IdleGpus(), IsEmpty());
}

TEST_F(IdleMonitorTest, ANewerRecordIsJudgedAfreshAndAStaleVersionIsNotWritten) {
  Place(7);
  IdleFor(absl::Minutes(1));
  // Restarted elsewhere and back on the same GPUs: a newer record.
  Place(9);
  IdleFor(absl::Minutes(1) + absl::Seconds(30));
  EXPECT_THAT(actions_.marks, IsEmpty());  // 2m30s of samples, only 1m30s of this record.
  IdleFor(absl::Seconds(40));
  ASSERT_EQ(actions_.marks.size(), 1u) << "marked at version 9";
  // Another write (another replica cleared the mark) that this replica's
  // heartbeats have not shown yet: the monitor's version is not the record's.
  actions_.records["ws-1"] = {150, std::nullopt};
  monitor_.Tick();
  EXPECT_EQ(actions_.marks.size(), 1u);
  // The next heartbeat brings version 150: judged afresh, from this sample.
  Mirror();
  IdleFor(absl::Minutes(1));
  EXPECT_EQ(actions_.marks.size(), 1u);
}

TEST_F(IdleMonitorTest, AnotherReplicasMarkStaysWithoutEvidenceOfUse) {
  Place();
  actions_.records["ws-1"].mark = core::IdleMark{now_ - absl::Hours(1), std::nullopt};
  IdleFor(absl::Minutes(1));  // Idle, not long enough here to say so.
  EXPECT_THAT(actions_.marks, IsEmpty());
  IdleFor(absl::Seconds(10), /*percent=*/50);  // In use: that clears it.
  ASSERT_EQ(actions_.marks.size(), 1u);
  EXPECT_EQ(actions_.marks[0], std::nullopt);
}

TEST_F(IdleMonitorTest, AClassWithoutAPolicyIsNotJudgedAndLosesAMark) {
  Place();
  for (auto& [uuid, holder] : holders_) holder.class_id = "gpu-plain";
  actions_.records["ws-1"].mark = core::IdleMark{now_, std::nullopt};
  IdleFor(absl::Minutes(5));
  ASSERT_EQ(actions_.marks.size(), 1u);
  EXPECT_EQ(actions_.marks[0], std::nullopt);
  EXPECT_THAT(monitor_.IdleGpus(), IsEmpty());
}

}  // namespace
}  // namespace wsched::idle
