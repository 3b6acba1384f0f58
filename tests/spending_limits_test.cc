// Spending limits through the real server and PostgreSQL (docs/billing.md
// "Spending limits"): limits are set with the settings' version guard, a
// project's must fit inside its org's, and the group commit refuses a GPU
// placement that would take the org or the project past its limit with
// BUDGET_EXHAUSTED, the period's reset in RetryInfo and the limit named in
// QuotaFailure; once the spending belongs to an earlier period the next
// placement is admitted again.
//
// Time is not waited for. The ledger counts by the database's clock, so a
// workspace that has "run for a while" is one whose placed_at the test moved
// back, and "a month later" is the usage record moved back a month: to the
// period arithmetic that is the clock moving forward, and nothing sleeps.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/rpc_details.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

// The GPU-hours of `gpu_seconds` GPU-seconds.
double GpuHours(double gpu_seconds) { return gpu_seconds / 3600; }

v1::SpendingLimit MonthlyLimit(double gpu_hours, const std::string& time_zone = "UTC") {
  v1::SpendingLimit limit;
  limit.set_gpu_hours(gpu_hours);
  limit.mutable_period()->mutable_calendar_month()->set_time_zone(time_zone);
  limit.add_warn_at_percent(80);
  limit.add_warn_at_percent(100);
  return limit;
}

class SpendingLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
    // A placement commits to 2 GPU-seconds: limits of a few GPU-seconds.
    config.extra_flags = {"--budget_interval=2s"};
    config.metrics = true;
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
    settings_ = v1::SettingsService::NewStub(server_->channel());
    testing::RegisterNode(server_->channel(), testing::FakeGpuNode("n1", "gpu-h100"));
  }

  std::unique_ptr<grpc::ClientContext> Admin() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    testing::Authorize(*context, testing::kAdminToken);
    return context;
  }

  grpc::Status SetOrgLimit(const std::optional<v1::SpendingLimit>& limit,
                           int64_t expected_version = 0, v1::OrgSettings* out = nullptr) {
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(-1);
    if (limit) *request.mutable_settings()->mutable_spending_limit() = *limit;
    request.set_expected_version(expected_version);
    v1::OrgSettings response;
    return settings_->SetOrgSettings(Admin().get(), request, out ? out : &response);
  }

  grpc::Status SetProjectLimit(const std::optional<v1::SpendingLimit>& limit) {
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_project_id("p-1");
    if (limit) *request.mutable_settings()->mutable_spending_limit() = *limit;
    v1::ProjectSettings response;
    return settings_->SetProjectSettings(Admin().get(), request, &response);
  }

  grpc::Status Place(const std::string& id, const std::string& class_id = "gpu-1x") {
    v1::Workspace out;
    return testing::PlaceAs(server_->channel(), id, class_id, &out);
  }

  // As if `id` had been running for `seconds` more.
  void RunFor(const std::string& id, int seconds) {
    db_.Query("UPDATE workspaces SET placed_at = placed_at - interval '" + std::to_string(seconds) +
              " seconds' WHERE id = '" + id + "' RETURNING id");
  }

  // A ledger record of `org`'s one GPU from `started` to `ended` (SQL
  // expressions of timestamptz).
  void Record(const std::string& org, const std::string& id, const std::string& started,
              const std::string& ended) {
    db_.Query(
        "INSERT INTO usage_records (started_at, workspace_id, ended_at, end_reason, org_id, "
        "project_id, user_id, class_id, pool, node_name, gpu_count, cpu_millis, memory_bytes) "
        "VALUES (" +
        started + ", '" + id + "', " + ended + ", 'stopped', '" + org +
        "', 'p-1', 'u-1', 'gpu-1x', 'gpu-h100', 'n1', 1, 1000, 1000000) RETURNING workspace_id");
  }

  v1::GetSpendingForecastResponse Forecast(const std::string& org) {
    v1::GetSpendingForecastRequest request;
    request.set_org_id(org);
    v1::GetSpendingForecastResponse forecast;
    grpc::Status read = v1::UsageService::NewStub(server_->channel())
                            ->GetSpendingForecast(Admin().get(), request, &forecast);
    EXPECT_TRUE(read.ok()) << read.error_message();
    return forecast;
  }

  // The start of the next calendar month in UTC by the database's clock.
  std::string NextUtcMonth() {
    return db_.Query(
        "SELECT to_char((date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month'), "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')");
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::unique_ptr<v1::SettingsService::Stub> settings_;
};

TEST_F(SpendingLimitsTest, LimitIsStoredAndReadBackWithTheVersionGuard) {
  v1::OrgSettings first;
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(120, "Europe/Berlin"), 0, &first).ok());
  v1::GetOrgSettingsRequest get;
  get.set_org_id("o-1");
  v1::OrgSettings read;
  ASSERT_TRUE(settings_->GetOrgSettings(Admin().get(), get, &read).ok());
  ASSERT_TRUE(read.has_spending_limit());
  EXPECT_EQ(read.spending_limit().gpu_hours(), 120);
  EXPECT_EQ(read.spending_limit().period().calendar_month().time_zone(), "Europe/Berlin");
  EXPECT_THAT(read.spending_limit().warn_at_percent(), ::testing::ElementsAre(80, 100));
  EXPECT_EQ(read.spending_limit().action(), v1::SPENDING_ACTION_BLOCK_NEW);

  // A writer that read an older version changes nothing.
  grpc::Status stale = SetOrgLimit(MonthlyLimit(500), first.version() - 1);
  EXPECT_EQ(stale.error_code(), grpc::StatusCode::ABORTED) << stale.error_message();
  ASSERT_TRUE(settings_->GetOrgSettings(Admin().get(), get, &read).ok());
  EXPECT_EQ(read.spending_limit().gpu_hours(), 120);
  // Removing the limit is a change like any other.
  ASSERT_TRUE(SetOrgLimit(std::nullopt, first.version()).ok());
  ASSERT_TRUE(settings_->GetOrgSettings(Admin().get(), get, &read).ok());
  EXPECT_FALSE(read.has_spending_limit());
}

TEST_F(SpendingLimitsTest, BadLimitsAreRefusedAtTheirField) {
  v1::SpendingLimit limit = MonthlyLimit(10, "CET");
  grpc::Status status = SetOrgLimit(limit);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("settings.spending_limit.period.calendar_month.time_zone"));
  limit = MonthlyLimit(0);
  status = SetOrgLimit(limit);
  EXPECT_THAT(status.error_message(), HasSubstr("settings.spending_limit.gpu_hours"));
  limit = MonthlyLimit(10);
  limit.mutable_stop_warning()->set_seconds(60);  // Nothing to warn of with block_new.
  status = SetOrgLimit(limit);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("settings.spending_limit.stop_warning"));
  limit.set_action(v1::SPENDING_ACTION_BLOCK_AND_STOP);
  limit.mutable_stop_warning()->set_seconds(25 * 3600);
  status = SetOrgLimit(limit);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("settings.spending_limit.stop_warning"));
  limit.mutable_stop_warning()->set_seconds(90);
  v1::OrgSettings stored;
  status = SetOrgLimit(limit, 0, &stored);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(stored.spending_limit().action(), v1::SPENDING_ACTION_BLOCK_AND_STOP);
  EXPECT_EQ(stored.spending_limit().stop_warning().seconds(), 90);
  limit = MonthlyLimit(10);
  limit.clear_period();
  EXPECT_THAT(SetOrgLimit(limit).error_message(), HasSubstr("settings.spending_limit.period"));
}

TEST_F(SpendingLimitsTest, ProjectLimitMustFitInsideTheOrgs) {
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(100)).ok());
  grpc::Status more = SetProjectLimit(MonthlyLimit(101));
  EXPECT_EQ(more.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(more.error_message(), HasSubstr("settings.spending_limit.gpu_hours"));
  grpc::Status other_period = SetProjectLimit(MonthlyLimit(50, "Europe/Berlin"));
  EXPECT_EQ(other_period.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(other_period.error_message(), HasSubstr("settings.spending_limit.period"));
  ASSERT_TRUE(SetProjectLimit(MonthlyLimit(50)).ok());
  // Nor may the org's limit shrink below a project's.
  grpc::Status shrink = SetOrgLimit(MonthlyLimit(40));
  EXPECT_EQ(shrink.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(shrink.error_message(), HasSubstr("project p-1"));
  EXPECT_TRUE(SetOrgLimit(MonthlyLimit(50)).ok());
}

TEST_F(SpendingLimitsTest, OnlyAnAdminChangesAProjectsLimit) {
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(100)).ok());
  auto as_owner = [&](const std::optional<v1::SpendingLimit>& limit) {
    v1::SetProjectSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_project_id("p-42");  // The owner token's project.
    request.mutable_settings()->set_default_class("small");
    if (limit) *request.mutable_settings()->mutable_spending_limit() = *limit;
    grpc::ClientContext context;
    testing::Authorize(context, testing::kOwnerToken);
    v1::ProjectSettings response;
    return settings_->SetProjectSettings(&context, request, &response);
  };
  grpc::Status owner = as_owner(MonthlyLimit(10));
  EXPECT_EQ(owner.error_code(), grpc::StatusCode::PERMISSION_DENIED) << owner.error_message();
  EXPECT_THAT(owner.error_message(), HasSubstr("settings.spending_limit"));

  // An admin sets it; the owner may change other settings keeping it, not
  // drop it.
  v1::SetProjectSettingsRequest request;
  request.mutable_settings()->set_org_id("o-1");
  request.mutable_settings()->set_project_id("p-42");
  *request.mutable_settings()->mutable_spending_limit() = MonthlyLimit(10);
  v1::ProjectSettings response;
  ASSERT_TRUE(settings_->SetProjectSettings(Admin().get(), request, &response).ok());
  grpc::Status kept = as_owner(MonthlyLimit(10));
  EXPECT_TRUE(kept.ok()) << kept.error_message();
  EXPECT_EQ(as_owner(std::nullopt).error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(SpendingLimitsTest, ExhaustedOrgLimitRefusesNewGpuPlacementsUntilTheNextPeriod) {
  // 10 GPU-seconds a month; each placement commits to 2.
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(GpuHours(10))).ok());
  ASSERT_TRUE(Place("w1").ok());
  RunFor("w1", 9);  // About 9 of the 10 spent; 2 more do not fit.

  grpc::Status refused = Place("w2");
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  EXPECT_THAT(refused.error_message(), HasSubstr("org o-1 has spent"));
  auto info = testing::DetailOf<google::rpc::ErrorInfo>(refused);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason(), "BUDGET_EXHAUSTED");
  EXPECT_EQ(info->metadata().at("scope"), "org");
  EXPECT_EQ(info->metadata().at("limit_gpu_seconds"), "10.000000");
  EXPECT_EQ(info->metadata().at("committed_gpu_seconds"), "2.000000");
  EXPECT_GE(std::stod(info->metadata().at("spent_gpu_seconds")), 9.0);
  EXPECT_EQ(info->metadata().at("resets_at"), NextUtcMonth());
  auto quota = testing::DetailOf<google::rpc::QuotaFailure>(refused);
  ASSERT_TRUE(quota.has_value());
  ASSERT_EQ(quota->violations_size(), 1);
  EXPECT_EQ(quota->violations(0).subject(), "org:o-1/spending_limit");
  auto retry = testing::DetailOf<google::rpc::RetryInfo>(refused);
  ASSERT_TRUE(retry.has_value());
  EXPECT_GT(retry->retry_delay().seconds(), 0);
  EXPECT_LE(retry->retry_delay().seconds(), 31 * 24 * 3600);
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE id = 'w2' AND state = 'placed'"), "0");

  // The forecast sees the same: spent, running, every threshold crossed,
  // the limit reached now; the refusal is counted.
  v1::GetSpendingForecastRequest forecast_request;
  forecast_request.set_org_id("o-1");
  v1::GetSpendingForecastResponse forecast;
  grpc::Status read = v1::UsageService::NewStub(server_->channel())
                          ->GetSpendingForecast(Admin().get(), forecast_request, &forecast);
  ASSERT_TRUE(read.ok()) << read.error_message();
  EXPECT_EQ(forecast.limit_gpu_seconds(), "10.000000");
  const double spent = std::stod(forecast.spent_gpu_seconds());
  EXPECT_GE(spent, 9.0);
  EXPECT_EQ(forecast.running_gpus(), 1.0);
  // All of it in the last hour.
  EXPECT_NEAR(forecast.rate_gpu_seconds_per_hour(), spent, 1e-6);
  if (spent < 10) {
    EXPECT_THAT(forecast.crossed_percents(), ::testing::ElementsAre(80));
    // About 1 of 10 left at ~9 an hour: minutes from now, unless the month ends first.
    if (forecast.has_limit_reached_time()) {
      EXPECT_GT(forecast.limit_reached_time().seconds(), forecast.now().seconds());
      EXPECT_LT(forecast.limit_reached_time().seconds(), forecast.period_end_time().seconds());
    }
  } else {
    EXPECT_THAT(forecast.crossed_percents(), ::testing::ElementsAre(80, 100));
    EXPECT_EQ(forecast.limit_reached_time().seconds(), forecast.now().seconds());
  }
  EXPECT_EQ(forecast.period_end_time().seconds(),
            std::stoll(db_.Query("SELECT extract(epoch FROM date_trunc('month', now() AT TIME ZONE "
                                 "'UTC') + interval '1 month')::bigint")));
  EXPECT_EQ(testing::MetricValue(testing::HttpGet(server_->metrics_port(), "/metrics"),
                                 "wsched_budget_refusals_total", {"scope=\"org\""}),
            1.0);

  // A workspace without GPUs spends nothing of a GPU-hour limit.
  testing::RegisterNode(server_->channel(), testing::FakeCpuNode("c1", "general"));
  grpc::Status cpu = Place("cpu", "small");
  EXPECT_TRUE(cpu.ok()) << cpu.error_message();

  // The running workspace keeps spending into the next period; stopped, its
  // usage is a record, and a month later that record is last period's.
  v1::Workspace stopped;
  ASSERT_TRUE(testing::StopAs(server_->channel(), "w1", &stopped).ok());
  EXPECT_EQ(Place("w3").error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  db_.Query(
      "UPDATE usage_records SET started_at = started_at - interval '1 month', "
      "ended_at = ended_at - interval '1 month' WHERE workspace_id = 'w1' RETURNING workspace_id");
  grpc::Status reopened = Place("w3");
  EXPECT_TRUE(reopened.ok()) << reopened.error_message();
}

// A Berlin month counts from Berlin's local midnight of the 1st (the
// database's calendar, computed apart from the server's), a placement
// across it only from there; a rolling hour only the last hour.
TEST_F(SpendingLimitsTest, PeriodsCountFromTheirTimeZonesMidnightAndTheirWindow) {
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(1, "Europe/Berlin")).ok());
  const std::string month_start =
      "(date_trunc('month', now() AT TIME ZONE 'Europe/Berlin') AT TIME ZONE 'Europe/Berlin')";
  Record("o-1", "last-month", month_start + " - interval '1000 seconds'",
         month_start + " - interval '1 second'");
  Record("o-1", "across", month_start + " - interval '50 seconds'",
         month_start + " + interval '48 seconds'");
  v1::GetSpendingForecastResponse month = Forecast("o-1");
  EXPECT_EQ(month.spent_gpu_seconds(), "48.000000");
  EXPECT_EQ(month.period_start_time().seconds(),
            std::stoll(db_.Query("SELECT extract(epoch FROM " + month_start + ")::bigint")));

  v1::SetOrgSettingsRequest request;
  request.mutable_settings()->set_org_id("o-2");
  request.mutable_settings()->set_gpu_quota(-1);
  v1::SpendingLimit hourly;
  hourly.set_gpu_hours(1);
  hourly.mutable_period()->mutable_rolling()->set_seconds(3600);
  *request.mutable_settings()->mutable_spending_limit() = hourly;
  v1::OrgSettings response;
  ASSERT_TRUE(settings_->SetOrgSettings(Admin().get(), request, &response).ok());
  Record("o-2", "two-hours-ago", "now() - interval '2 hours'", "now() - interval '61 minutes'");
  Record("o-2", "half-in", "now() - interval '90 minutes'", "now() - interval '30 minutes'");
  v1::GetSpendingForecastResponse window = Forecast("o-2");
  // 30 minutes of one GPU, less the moment between the insert and the read.
  EXPECT_NEAR(std::stod(window.spent_gpu_seconds()), 1800, 10);
  EXPECT_LE(std::stod(window.spent_gpu_seconds()), 1800);
  EXPECT_EQ(window.period_end_time().seconds() - window.now().seconds(), 3600);
}

TEST_F(SpendingLimitsTest, ProjectLimitIsEnforcedInsideALargerOrgLimit) {
  ASSERT_TRUE(SetOrgLimit(MonthlyLimit(GpuHours(100))).ok());
  ASSERT_TRUE(SetProjectLimit(MonthlyLimit(GpuHours(5))).ok());
  // Two GPUs commit to 4 GPU-seconds: within 5; another 2 are not.
  ASSERT_TRUE(Place("p1", "gpu-2x").ok());
  grpc::Status refused = Place("p2");
  ASSERT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  auto quota = testing::DetailOf<google::rpc::QuotaFailure>(refused);
  ASSERT_TRUE(quota.has_value());
  EXPECT_EQ(quota->violations(0).subject(), "project:p-1/spending_limit");
  // Another project of the org has only the org's limit to keep.
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id("other");
  request.set_org_id("o-1");
  request.set_project_id("p-2");
  request.set_user_id("u-1");
  request.set_class_id("gpu-1x");
  grpc::ClientContext context;
  testing::Authorize(context, testing::kControlPlaneToken);
  v1::Workspace out;
  grpc::Status other =
      v1::PlacementService::NewStub(server_->channel())->PlaceWorkspace(&context, request, &out);
  EXPECT_TRUE(other.ok()) << other.error_message();
}

// Three replicas and 64 clients place one-GPU workspaces at once against a
// limit of 10 GPU-seconds, each placement committing to 2: whatever replica
// takes which request, at most five are admitted (each admitted one counts
// at least its 2 GPU-seconds under the org's lock), and every other answer
// is BUDGET_EXHAUSTED. GPUs are plenty, so the limit is the only refusal.
TEST(SpendingLimitsRace, ThreeReplicasNeverAdmitPastTheLimit) {
  testing::TestDatabase db;
  std::vector<std::unique_ptr<testing::ServerProcess>> replicas;
  for (int r = 0; r < 3; ++r) {
    testing::ServerConfig config{db.url(), testing::SourcePath("classes/saas.yaml")};
    // All 64 calls of the one control-plane principal may be in flight.
    config.extra_flags = {"--budget_interval=2s", "--max_concurrent_calls_per_principal=256"};
    replicas.push_back(std::make_unique<testing::ServerProcess>(config));
    ASSERT_TRUE(replicas.back()->started());
  }
  for (int n = 0; n < 8; ++n) {
    testing::RegisterNode(replicas[0]->channel(),
                          testing::FakeGpuNode("race-" + std::to_string(n), "gpu-h100"));
  }
  {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::SetOrgSettingsRequest request;
    request.mutable_settings()->set_org_id("o-1");
    request.mutable_settings()->set_gpu_quota(-1);
    *request.mutable_settings()->mutable_spending_limit() = MonthlyLimit(GpuHours(10));
    v1::OrgSettings response;
    ASSERT_TRUE(v1::SettingsService::NewStub(replicas[0]->channel())
                    ->SetOrgSettings(&context, request, &response)
                    .ok());
  }

  constexpr int kClients = 64;
  std::atomic<int> admitted{0}, exhausted{0};
  // Replicas racing at the commit: what the API says to retry is retried.
  std::atomic<int> retried{0};
  std::vector<std::string> other_errors(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      v1::Workspace out;
      grpc::Status status = testing::PlaceRetryingAs(
          replicas[c % 3]->channel(), "race-ws-" + std::to_string(c), "gpu-1x", &out, &retried);
      if (status.ok() && out.state() == v1::WORKSPACE_STATE_PLACED) {
        admitted++;
        return;
      }
      auto info = testing::DetailOf<google::rpc::ErrorInfo>(status);
      if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED && info &&
          info->reason() == "BUDGET_EXHAUSTED") {
        exhausted++;
        return;
      }
      other_errors[c] =
          status.ok() ? "answered " + v1::WorkspaceState_Name(out.state()) : status.error_message();
    });
  }
  for (auto& client : clients) client.join();
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(other_errors[c], "") << "client " << c;
  RecordProperty("admitted", admitted.load());
  RecordProperty("retried", retried.load());
  EXPECT_GE(admitted.load(), 1);
  EXPECT_LE(admitted.load(), 5);
  EXPECT_EQ(admitted.load() + exhausted.load(), kClients);
  EXPECT_EQ(db.Query("SELECT count(*) FROM workspaces WHERE state = 'placed'"),
            std::to_string(admitted.load()));
}

}  // namespace
}  // namespace wsched
