// Spending limits acting on running workspaces, through the real server and
// PostgreSQL (docs/billing.md "Spending limits"): a block_and_stop limit
// reached warns each running workspace on its watch stream, stops it at
// stops_at with end reason "budget" in the usage ledger, and withdraws the
// warning when the limit is raised first; a threshold of warn_at_percent is
// told once per period.
//
// Time is not waited for. The ledger and the budget pass count by the
// database's clock, so a workspace that has "run for a while" is one whose
// placed_at the test moved back, and "the warning period is over" is its
// stops_at moved back; the scaling leader's pass runs every 100 ms and the
// test awaits what it writes on the watch stream.
#include <google/protobuf/util/time_util.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using Event = v1::WorkspaceEvent;

absl::Time TimeOf(const google::protobuf::Timestamp& t) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(t));
}

// `gpu_seconds` GPU-seconds a UTC month, thresholds at 50% and 80%.
v1::SpendingLimit Limit(double gpu_seconds, v1::SpendingAction action) {
  v1::SpendingLimit limit;
  limit.set_gpu_hours(gpu_seconds / 3600);
  limit.mutable_period()->mutable_calendar_month()->set_time_zone("UTC");
  limit.add_warn_at_percent(50);
  limit.add_warn_at_percent(80);
  limit.set_action(action);
  if (action == v1::SPENDING_ACTION_BLOCK_AND_STOP) limit.mutable_stop_warning()->set_seconds(3600);
  return limit;
}

// One WatchWorkspace stream, read message by message.
class Watch {
 public:
  Watch(const std::shared_ptr<grpc::Channel>& channel, const std::string& id)
      : stub_(v1::PlacementService::NewStub(channel)) {
    testing::Authorize(context_, testing::kControlPlaneToken);
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::WatchWorkspaceRequest request;
    request.set_workspace_id(id);
    reader_ = stub_->WatchWorkspace(&context_, request);
  }
  ~Watch() { context_.TryCancel(); }

  // The next message that satisfies `done`; fails the test when the stream
  // ends first.
  template <typename Done>
  v1::Workspace Await(Done done, const std::string& what) {
    v1::Workspace update;
    while (reader_->Read(&update)) {
      seen_.push_back(update);
      if (done(update)) return update;
    }
    ADD_FAILURE() << "the watch ended before " << what << "; last: " << update.DebugString();
    return update;
  }
  const std::vector<v1::Workspace>& seen() const { return seen_; }

 private:
  std::unique_ptr<v1::PlacementService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::Workspace>> reader_;
  std::vector<v1::Workspace> seen_;
};

bool Placed(const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_PLACED; }
bool Warned(const v1::Workspace& w) {
  return Placed(w) && w.event().kind() == Event::KIND_BUDGET_WARNING;
}

class BudgetStopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    config.extra_flags = {"--budget_interval=2s", "--budget_enforce_interval=100ms"};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  }

  grpc::Status SetOrgLimit(const v1::SpendingLimit& limit) {
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(-1);
    *request.mutable_settings()->mutable_spending_limit() = limit;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    testing::Authorize(context, testing::kAdminToken);
    v1::OrgSettings response;
    return settings_->SetOrgSettings(&context, request, &response);
  }

  void Place(const std::string& id) {
    v1::Workspace out;
    grpc::Status placed = testing::PlaceAs(server_->channel(), id, "gpu-1x", &out);
    ASSERT_TRUE(placed.ok()) << placed.error_message();
    ASSERT_TRUE(Placed(out));
  }

  // As if `id` had been running for `seconds` more.
  void RunFor(const std::string& id, int seconds) {
    db_.Query(absl::StrCat("UPDATE workspaces SET placed_at = placed_at - interval '", seconds,
                           " seconds' WHERE id = '", id, "' RETURNING id"));
  }

  absl::Time DatabaseNow() {
    return absl::FromUnixMicros(
        std::stoll(db_.Query("SELECT (extract(epoch FROM now()) * 1000000)::bigint")));
  }

  std::optional<double> Metric(const std::string& name, const std::vector<std::string>& labels) {
    return testing::MetricValue(testing::HttpGet(server_->metrics_port(), "/metrics"), name,
                                labels);
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
};

TEST_F(BudgetStopTest, BlockAndStopWarnsThenStopsWithEndReasonBudget) {
  ASSERT_TRUE(SetOrgLimit(Limit(10, v1::SPENDING_ACTION_BLOCK_AND_STOP)).ok());
  Place("w1");
  Watch watch(server_->channel(), "w1");
  watch.Await(Placed, "the current state");
  const absl::Time before = DatabaseNow();
  RunFor("w1", 11);  // 11 of 10 GPU-seconds spent.

  const v1::Workspace warned = watch.Await(Warned, "the warning");
  const Event& event = warned.event();
  EXPECT_EQ(event.budget_scope(), "org:o-1");
  EXPECT_EQ(event.limit_gpu_seconds(), "10.000000");
  EXPECT_GE(std::stod(event.spent_gpu_seconds()), 11.0);
  // The limit's warning period, counted from the pass that saw the limit.
  const absl::Time stops_at = TimeOf(event.stops_at());
  EXPECT_GE(stops_at, before + absl::Hours(1));
  EXPECT_LE(stops_at, DatabaseNow() + absl::Hours(1));
  EXPECT_GT(TimeOf(event.period_end()), DatabaseNow());

  // The warning period is over.
  db_.Query(
      "UPDATE workspaces SET budget_mark = jsonb_set(budget_mark, '{stops_at}', "
      "to_jsonb((extract(epoch FROM now()) * 1000000)::bigint - 1000000)) "
      "WHERE id = 'w1' RETURNING id");
  const v1::Workspace stopped = watch.Await(
      [](const v1::Workspace& w) { return w.state() == v1::WORKSPACE_STATE_STOPPED; }, "the stop");
  EXPECT_EQ(db_.Query("SELECT string_agg(end_reason, ',') FROM usage_records "
                      "WHERE workspace_id = 'w1'"),
            "budget");
  // Counted after the write the stream announced: polled, no event says so.
  EXPECT_TRUE(testing::Eventually(
      [&] { return Metric("wsched_budget_stops_total", {"scope=\"org\""}) == 1.0; }));
  EXPECT_EQ(Metric("wsched_budget_warnings_total", {"scope=\"org\""}), 1.0);
  EXPECT_GE(Metric("wsched_budget_used_ratio", {"scope=\"org\"", "id=\"o-1\""}).value_or(0), 1.1);
  // Every message between the warning and the stop said the same stops_at.
  for (const v1::Workspace& w : watch.seen()) {
    if (Warned(w)) {
      EXPECT_EQ(TimeOf(w.event().stops_at()), stops_at);
    }
  }
}

TEST_F(BudgetStopTest, RaisingTheLimitDuringTheWarningWithdrawsIt) {
  ASSERT_TRUE(SetOrgLimit(Limit(10, v1::SPENDING_ACTION_BLOCK_AND_STOP)).ok());
  Place("w1");
  Watch watch(server_->channel(), "w1");
  watch.Await(Placed, "the current state");
  RunFor("w1", 11);
  watch.Await(Warned, "the warning");

  ASSERT_TRUE(SetOrgLimit(Limit(100, v1::SPENDING_ACTION_BLOCK_AND_STOP)).ok());
  const v1::Workspace withdrawn =
      watch.Await([](const v1::Workspace& w) { return !Warned(w); }, "the warning withdrawn");
  EXPECT_TRUE(Placed(withdrawn));
  EXPECT_NE(withdrawn.event().kind(), Event::KIND_BUDGET_WARNING);
  // Nothing is left that would stop it: no warning on the record, no
  // ledger record, and it still runs.
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE id = 'w1' "
                      "AND budget_mark->>'kind' = 'warning'"),
            "0");
  EXPECT_EQ(db_.Query("SELECT count(*) FROM usage_records WHERE workspace_id = 'w1'"), "0");
  v1::Workspace read;
  ASSERT_TRUE(testing::GetAs(server_->channel(), "w1", &read).ok());
  EXPECT_TRUE(Placed(read));
}

TEST_F(BudgetStopTest, EachThresholdIsToldOncePerPeriod) {
  ASSERT_TRUE(SetOrgLimit(Limit(100, v1::SPENDING_ACTION_BLOCK_NEW)).ok());
  Place("w1");
  Watch watch(server_->channel(), "w1");
  watch.Await(Placed, "the current state");
  auto threshold = [](int percent) {
    return [percent](const v1::Workspace& w) {
      return w.event().kind() == Event::KIND_BUDGET_THRESHOLD && w.event().percent() == percent;
    };
  };

  RunFor("w1", 55);
  const v1::Workspace half = watch.Await(threshold(50), "the 50% threshold");
  EXPECT_EQ(half.event().budget_scope(), "org:o-1");
  EXPECT_EQ(half.event().limit_gpu_seconds(), "100.000000");
  EXPECT_GE(std::stod(half.event().spent_gpu_seconds()), 55.0);
  EXPECT_TRUE(Placed(half)) << "block_new stops nothing";

  // Many passes later, the next threshold; 50% was not told again between.
  RunFor("w1", 30);
  watch.Await(threshold(80), "the 80% threshold");
  int told_half = 0;
  for (const v1::Workspace& w : watch.seen()) told_half += threshold(50)(w) ? 1 : 0;
  EXPECT_EQ(told_half, 1);
  EXPECT_EQ(db_.Query("SELECT string_agg(percent::text, ',' ORDER BY percent) "
                      "FROM budget_thresholds_told WHERE scope = 'org:o-1'"),
            "50,80");
  EXPECT_TRUE(testing::Eventually([&] {
    return Metric("wsched_budget_used_ratio", {"scope=\"org\"", "id=\"o-1\""}).value_or(0) >= 0.85;
  }));
}

}  // namespace
}  // namespace wsched
