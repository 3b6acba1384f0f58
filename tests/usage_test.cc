// The usage ledger through the real server and PostgreSQL: a placement's
// record carries exactly the database's placed_at and stopped_at, across a
// server restart and when one replica places and another stops (both list
// the same record); a node marked lost ends its placements as "lost" and
// nothing after writes a second record; ListUsage pages every record once;
// SummarizeUsage splits a DST day of Europe/Berlin into its 25 hours and
// refuses a time zone the database does not know and the abbreviations it
// reads without summer time; owners read only their
// own projects; the ledger outlives the workspace rows' retention and has
// its own; and what the GPU-seconds metric charges each class equals the
// ledger's GPU-seconds.
//
// The real paths take start and end from the database's now(), so the
// exact-seconds cases compare the ledger with the workspace rows the same
// transactions wrote. The calendar cases need known times instead: they
// write usage_records rows with fixed timestamps by SQL (the shape the
// ledger writes) and sum those.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/metrics_text.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/usage.grpc.pb.h"

namespace wsched {
namespace {

using google::protobuf::util::TimeUtil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  testing::Authorize(*context, token);
  return context;
}

google::protobuf::Timestamp At(const std::string& rfc3339) {
  google::protobuf::Timestamp t;
  EXPECT_TRUE(TimeUtil::FromString(rfc3339, &t)) << rfc3339;
  return t;
}

class UsageTest : public ::testing::Test {
 protected:
  std::unique_ptr<testing::ServerProcess> Start(std::vector<std::string> flags = {}) {
    auto server = std::make_unique<testing::ServerProcess>(
        testing::ServerConfig{db_.url(), testing::SourcePath("classes/saas.yaml"), std::move(flags)});
    EXPECT_TRUE(server->started());
    return server;
  }

  v1::ListUsageResponse List(const testing::ServerProcess& server, v1::ListUsageRequest request,
                             const std::string& token = testing::kAdminToken) {
    v1::ListUsageResponse response;
    grpc::Status status =
        v1::UsageService::NewStub(server.channel())->ListUsage(As(token).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message() << "\n" << server.Log();
    return response;
  }

  grpc::Status Summarize(const testing::ServerProcess& server, const v1::SummarizeUsageRequest& request,
                         v1::SummarizeUsageResponse* response,
                         const std::string& token = testing::kAdminToken) {
    return v1::UsageService::NewStub(server.channel())
        ->SummarizeUsage(As(token).get(), request, response);
  }

  // The row's own times, in microseconds, as the database holds them.
  std::string RowMicros(const std::string& column, const std::string& workspace) {
    return db_.Query(absl::StrCat("SELECT (extract(epoch FROM ", column,
                                  ") * 1000000)::bigint FROM workspaces WHERE id = '", workspace,
                                  "'"));
  }

  // A record with known times, as the ledger writes them (see the top).
  void InsertRecord(const std::string& workspace, const std::string& started,
                    const std::string& ended, int gpus, const std::string& project = "p-1") {
    db_.Query(absl::StrCat(
        "INSERT INTO usage_records (started_at, workspace_id, ended_at, end_reason, org_id, "
        "project_id, user_id, class_id, pool, node_name, gpu_count, cpu_millis, memory_bytes) "
        "VALUES ('", started, "', '", workspace, "', '", ended, "', 'stopped', 'o-1', '", project,
        "', 'u-1', 'gpu-1x', 'gpu-h100', 'n-1', ", gpus, ", 1000, 1000000) RETURNING workspace_id"));
  }

  // The record of `workspace` matches its row: started at placed_at, ended
  // at stopped_at, its figures those of exactly that interval.
  void ExpectRecordOfRow(const v1::UsageRecord& record, const std::string& workspace) {
    SCOPED_TRACE(workspace);
    EXPECT_EQ(record.workspace_id(), workspace);
    const int64_t placed = std::stoll(RowMicros("placed_at", workspace));
    const int64_t stopped = std::stoll(RowMicros("stopped_at", workspace));
    EXPECT_EQ(TimeUtil::TimestampToMicroseconds(record.start_time()), placed);
    EXPECT_EQ(TimeUtil::TimestampToMicroseconds(record.end_time()), stopped);
    EXPECT_EQ(record.figures().duration_micros(), stopped - placed);
    EXPECT_EQ(record.gpu_count(), 1);
    EXPECT_THAT(record.gpu_models(), ElementsAre("H100"));
    const int64_t micros = stopped - placed;
    EXPECT_EQ(record.figures().gpu_seconds(),
              absl::StrFormat("%d.%06d", micros / 1'000'000, micros % 1'000'000));
    EXPECT_EQ(record.end_reason(), v1::USAGE_END_REASON_STOPPED);
  }

  testing::TestDatabase db_;
};

TEST_F(UsageTest, ARecordKeepsTheDatabasesExactTimesAcrossARestart) {
  auto server = Start();
  testing::RegisterNode(server->channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(server->channel(), "before-restart", "gpu-1x", &out).ok());
  v1::ListUsageResponse open = List(*server, {});
  ASSERT_EQ(open.records_size(), 1);
  EXPECT_FALSE(open.records(0).has_end_time()) << "placed: counted up to now";
  EXPECT_EQ(open.records(0).end_reason(), v1::USAGE_END_REASON_UNSPECIFIED);

  server.reset();
  server = Start();
  ASSERT_TRUE(testing::StopAs(server->channel(), "before-restart", &out).ok());
  v1::ListUsageResponse listed = List(*server, {});
  ASSERT_EQ(listed.records_size(), 1);
  ExpectRecordOfRow(listed.records(0), "before-restart");
  EXPECT_EQ(listed.records(0).org_id(), "o-1");
  EXPECT_EQ(listed.records(0).project_id(), "p-1");
  EXPECT_EQ(listed.records(0).user_id(), "u-1");
  EXPECT_EQ(listed.records(0).class_id(), "gpu-1x");
  EXPECT_EQ(listed.records(0).node_name(), "n-1");
  EXPECT_EQ(listed.records(0).pool(), "gpu-h100");

  // And after another restart the record is the same.
  server.reset();
  server = Start();
  v1::ListUsageResponse again = List(*server, {});
  ASSERT_EQ(again.records_size(), 1);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again.records(0), listed.records(0)));
}

TEST_F(UsageTest, OneReplicaPlacesTheOtherStopsAndBothListTheSameRecord) {
  auto a = Start();
  auto b = Start();
  testing::RegisterNode(a->channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(a->channel(), "across", "gpu-1x", &out).ok());
  ASSERT_TRUE(testing::StopAs(b->channel(), "across", &out).ok());
  ASSERT_EQ(out.state(), v1::WORKSPACE_STATE_STOPPED);
  v1::ListUsageResponse on_a = List(*a, {});
  v1::ListUsageResponse on_b = List(*b, {});
  ASSERT_EQ(on_a.records_size(), 1);
  ExpectRecordOfRow(on_a.records(0), "across");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(on_a, on_b));
  // A second stop, from either, changes nothing.
  ASSERT_TRUE(testing::StopAs(a->channel(), "across", &out).ok());
  EXPECT_EQ(db_.Query("SELECT count(*) FROM usage_records"), "1");
}

TEST_F(UsageTest, ALostNodeEndsItsPlacementAsLostAndNothingLaterAddsARecord) {
  auto server = Start({"--heartbeat_interval=1s", "--node_lost_after=2s"});
  testing::RegisterNode(server->channel(), testing::FakeGpuNode("gone-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(server->channel(), "on-gone", "gpu-1x", &out).ok());
  // No heartbeat comes: the watch tells when the workspace is lost.
  auto context = As(testing::kControlPlaneToken);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::WatchWorkspaceRequest watch;
  watch.set_workspace_id("on-gone");
  auto stream = v1::PlacementService::NewStub(server->channel())->WatchWorkspace(context.get(), watch);
  v1::Workspace seen;
  while (stream->Read(&seen) && seen.state() != v1::WORKSPACE_STATE_LOST) {
  }
  ASSERT_EQ(seen.state(), v1::WORKSPACE_STATE_LOST);
  context->TryCancel();

  v1::ListUsageResponse listed = List(*server, {});
  ASSERT_EQ(listed.records_size(), 1);
  const v1::UsageRecord lost = listed.records(0);
  EXPECT_EQ(lost.end_reason(), v1::USAGE_END_REASON_LOST);
  EXPECT_EQ(TimeUtil::TimestampToMicroseconds(lost.start_time()),
            std::stoll(RowMicros("placed_at", "on-gone")));
  const int64_t last_heartbeat = std::stoll(db_.Query(
      "SELECT (extract(epoch FROM last_heartbeat) * 1000000)::bigint FROM node_liveness "
      "WHERE name = 'gone-1'"));
  EXPECT_GE(TimeUtil::TimestampToMicroseconds(lost.end_time()), last_heartbeat + 2'000'000)
      << "ended when the node was marked lost, --node_lost_after after its last heartbeat";
  EXPECT_EQ(lost.figures().duration_micros(),
            TimeUtil::TimestampToMicroseconds(lost.end_time()) -
                TimeUtil::TimestampToMicroseconds(lost.start_time()));

  // Stopping the lost workspace, then removing its node: still one record.
  ASSERT_TRUE(testing::StopAs(server->channel(), "on-gone", &out).ok());
  v1::NodeNameRequest remove;
  remove.set_node_name("gone-1");
  v1::Empty removed;
  ASSERT_TRUE(v1::InventoryService::NewStub(server->channel())
                  ->RemoveNode(As(testing::kAdminToken).get(), remove, &removed)
                  .ok());
  v1::ListUsageResponse after = List(*server, {});
  ASSERT_EQ(after.records_size(), 1);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(after.records(0), lost));
}

TEST_F(UsageTest, ARemovedNodeEndsItsPlacementsAsNodeRemoved) {
  auto server = Start();
  testing::RegisterNode(server->channel(), testing::FakeGpuNode("n-1", "gpu-h100"));
  v1::Workspace out;
  ASSERT_TRUE(testing::PlaceAs(server->channel(), "on-removed", "gpu-1x", &out).ok());
  v1::NodeNameRequest remove;
  remove.set_node_name("n-1");
  v1::Empty removed;
  ASSERT_TRUE(v1::InventoryService::NewStub(server->channel())
                  ->RemoveNode(As(testing::kAdminToken).get(), remove, &removed)
                  .ok());
  v1::ListUsageResponse listed = List(*server, {});
  ASSERT_EQ(listed.records_size(), 1);
  EXPECT_EQ(listed.records(0).end_reason(), v1::USAGE_END_REASON_NODE_REMOVED);
  EXPECT_EQ(TimeUtil::TimestampToMicroseconds(listed.records(0).end_time()),
            std::stoll(RowMicros("stopped_at", "on-removed")));
}

TEST_F(UsageTest, ListingPagesEveryRecordOnceOldestFirst) {
  auto server = Start();
  testing::RegisterNode(server->channel(), testing::FakeCpuNode("c-1", "general"));
  std::vector<std::string> placed;
  for (int i = 0; i < 5; ++i) {
    const std::string id = absl::StrCat("ws-", i);
    v1::Workspace out;
    ASSERT_TRUE(testing::PlaceAs(server->channel(), id, "standard", &out).ok());
    if (i < 4) {
      ASSERT_TRUE(testing::StopAs(server->channel(), id, &out).ok());
    }
    placed.push_back(id);
  }
  v1::ListUsageRequest request;
  request.set_page_size(2);
  std::vector<std::string> ids;
  int pages = 0;
  do {
    v1::ListUsageResponse page = List(*server, request);
    for (const auto& record : page.records()) ids.push_back(record.workspace_id());
    request.set_page_token(page.next_page_token());
    ++pages;
  } while (!request.page_token().empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(ids, placed) << "four ended and one open, by start";

  // A token continues only the listing it came from.
  v1::ListUsageRequest other;
  other.set_class_id("standard");
  other.set_page_token(List(*server, [] {
                         v1::ListUsageRequest first;
                         first.set_page_size(1);
                         return first;
                       }()).next_page_token());
  v1::ListUsageResponse response;
  EXPECT_EQ(v1::UsageService::NewStub(server->channel())
                ->ListUsage(As(testing::kAdminToken).get(), other, &response)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(UsageTest, ADstDayOfBerlinHasTwentyFiveHoursAndBadZonesAreRefused) {
  auto server = Start();
  // One GPU from local midnight of 2026-10-24 (CEST) to local noon of the
  // 26th (CET): Berlin leaves summer time on the 25th at 03:00.
  InsertRecord("dst", "2026-10-23T22:00:00Z", "2026-10-26T11:00:00Z", 1);
  v1::SummarizeUsageRequest request;
  *request.mutable_start_time() = At("2026-10-23T22:00:00Z");
  *request.mutable_end_time() = At("2026-10-26T23:00:00Z");
  request.set_bucket(v1::USAGE_BUCKET_DAY);
  request.set_time_zone("Europe/Berlin");
  request.add_group_by(v1::USAGE_GROUP_BY_ORG);
  v1::SummarizeUsageResponse response;
  grpc::Status status = Summarize(*server, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.rows_size(), 3);
  const v1::UsageSummaryRow& dst_day = response.rows(1);
  EXPECT_EQ(TimeUtil::ToString(dst_day.bucket_start_time()), "2026-10-24T22:00:00Z");
  EXPECT_EQ(TimeUtil::ToString(dst_day.bucket_end_time()), "2026-10-25T23:00:00Z");
  EXPECT_EQ(dst_day.figures().gpu_seconds(), "90000.000000") << "25 hours";
  EXPECT_EQ(dst_day.org_id(), "o-1");
  EXPECT_EQ(dst_day.workspace_count(), 1);
  EXPECT_EQ(response.rows(0).figures().gpu_seconds(), "86400.000000");
  EXPECT_EQ(response.rows(2).figures().gpu_seconds(), "43200.000000");

  request.set_time_zone("Europe/Atlantis");
  status = Summarize(*server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("time_zone"));
  // The database knows these, but as fixed offsets or POSIX rules without
  // the zone's summer time (docs/billing.md).
  for (const char* zone : {"CET", "EST", "EST5EDT"}) {
    request.set_time_zone(zone);
    status = Summarize(*server, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << zone;
    EXPECT_THAT(status.error_message(), HasSubstr("time_zone: \"" + std::string(zone)));
    EXPECT_THAT(status.error_message(), HasSubstr("Area/Location")) << zone;
  }
  request.set_time_zone("Europe/Berlin");
  request.clear_end_time();
  status = Summarize(*server, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("end_time"));
}

TEST_F(UsageTest, OwnersReadOnlyTheirProjectsAndAgentsNothing) {
  auto server = Start();
  InsertRecord("mine", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", 1, "p-42");
  InsertRecord("theirs", "2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", 1, "p-1");
  v1::ListUsageResponse owner = List(*server, {}, testing::kOwnerToken);
  ASSERT_EQ(owner.records_size(), 1);
  EXPECT_EQ(owner.records(0).workspace_id(), "mine");
  EXPECT_EQ(List(*server, {}, testing::kControlPlaneToken).records_size(), 2);

  v1::ListUsageRequest other;
  other.set_project_id("p-1");
  v1::ListUsageResponse response;
  EXPECT_EQ(v1::UsageService::NewStub(server->channel())
                ->ListUsage(As(testing::kOwnerToken).get(), other, &response)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(v1::UsageService::NewStub(server->channel())
                ->ListUsage(As(testing::kAgentToken).get(), {}, &response)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(UsageTest, TheLedgerOutlivesTheWorkspaceRowsAndHasItsOwnRetention) {
  {
    auto server = Start();
    testing::RegisterNode(server->channel(), testing::FakeCpuNode("c-1", "general"));
    v1::Workspace out;
    for (const char* id : {"old", "recent"}) {
      ASSERT_TRUE(testing::PlaceAs(server->channel(), id, "standard", &out).ok());
      ASSERT_TRUE(testing::StopAs(server->channel(), id, &out).ok());
    }
  }
  // Both rows stopped two hours ago; the old record ended two days ago.
  db_.Query("UPDATE workspaces SET stopped_at = now() - interval '2 hours' RETURNING id");
  db_.Query("UPDATE usage_records SET started_at = now() - interval '3 days', "
            "ended_at = now() - interval '2 days' WHERE workspace_id = 'old' RETURNING 1");
  auto server = Start({"--stopped_workspace_retention=1h", "--usage_retention=24h",
                       "--stopped_workspace_sweep_interval=50ms"});
  ASSERT_TRUE(server->WaitForLog("deleted usage records past the retention", absl::Seconds(15)))
      << server->Log();
  ASSERT_TRUE(server->WaitForLog("deleted stopped workspaces past the retention", absl::Seconds(15)));
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces"), "0");
  EXPECT_EQ(db_.Query("SELECT string_agg(workspace_id, ',') FROM usage_records"), "recent");
}

// One heartbeat of `node` with every GPU 50% busy, as its agent would send.
void Beat(const testing::ServerProcess& server, const v1::NodeInfo& node) {
  v1::HeartbeatRequest request;
  request.set_node_name(node.name());
  request.set_kernel_version(node.kernel_version());
  request.set_driver_version(node.driver_version());
  for (const auto& gpu : node.gpus()) {
    v1::GpuUsage* usage = request.add_gpu_usage();
    usage->set_uuid(gpu.uuid());
    usage->set_utilization_percent(50);
  }
  v1::HeartbeatResponse response;
  grpc::Status status = v1::InventoryService::NewStub(server.channel())
                            ->Heartbeat(As(testing::kAgentToken).get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
}

// wsched_gpu_held_seconds_total charges each placement from its placed_at
// to its end on the replica that samples its node (usage_accounting.h), so
// it agrees with the ledger; sampled from heartbeat to heartbeat instead it
// would be off by the seconds between a placement and the heartbeat before
// it, and between the last heartbeat and the stop. Heartbeats come seconds
// apart here, placements and stops in between; the agent's cadence is what
// the sleeps stand for.
TEST_F(UsageTest, TheLedgerAndTheHeldGpuSecondsMetricAgreeToTheSecond) {
  testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
  config.metrics = true;
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  const v1::NodeInfo node = testing::FakeGpuNode("n-1", "gpu-h100");
  testing::RegisterNode(server.channel(), node);
  auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1500)); };
  v1::Workspace out;
  // "one" is placed 1.5 s after a heartbeat and stopped just after one;
  // "two" the other way round. Sampling would charge one 1.5 s too much
  // and two 2 x 1.5 s too little.
  Beat(server, node);
  pause();
  ASSERT_TRUE(testing::PlaceAs(server.channel(), "one", "gpu-1x", &out).ok());
  pause();
  Beat(server, node);
  ASSERT_TRUE(testing::PlaceAs(server.channel(), "two", "gpu-2x", &out).ok());
  pause();
  Beat(server, node);
  ASSERT_TRUE(testing::StopAs(server.channel(), "one", &out).ok());
  pause();
  ASSERT_TRUE(testing::StopAs(server.channel(), "two", &out).ok());
  Beat(server, node);  // Holds nothing any more: charges nothing.

  v1::SummarizeUsageRequest request;
  *request.mutable_start_time() = At("2020-01-01T00:00:00Z");
  *request.mutable_end_time() = At("2100-01-01T00:00:00Z");
  request.add_group_by(v1::USAGE_GROUP_BY_CLASS);
  v1::SummarizeUsageResponse ledger;
  grpc::Status status = Summarize(server, request, &ledger);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(ledger.rows_size(), 2);
  const std::string metrics = testing::HttpGet(server.metrics_port(), "/metrics");
  for (const auto& row : ledger.rows()) {
    SCOPED_TRACE(row.class_id());
    const double ledger_seconds = std::stod(row.figures().gpu_seconds());
    std::optional<double> metric = testing::MetricValue(
        metrics, "wsched_gpu_held_seconds_total",
        {"pool=\"gpu-h100\"", absl::StrCat("class=\"", row.class_id(), "\"")});
    ASSERT_TRUE(metric.has_value()) << metrics;
    std::printf("%s: ledger %.6f GPU-seconds, metric %.6f (%+.3f s)\n", row.class_id().c_str(),
                ledger_seconds, *metric, *metric - ledger_seconds);
    // The metric ends a placement when this replica applies the stop, a
    // commit after the ledger's now(): milliseconds, far below the 1.5 s
    // between heartbeats that sampling would miss or add.
    EXPECT_NEAR(*metric, ledger_seconds, 0.5);
  }
  EXPECT_GT(std::stod(ledger.rows(1).figures().gpu_seconds()), 2 * 3.0) << "two GPUs, 3 s or more";
}

}  // namespace
}  // namespace wsched
